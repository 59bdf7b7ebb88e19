"""`keras.dtype_policies`: Keras 3's names for dtype policies, over `tl.mixed_precision`.

Owns only `DTypePolicyMap` (policies by layer path: an exact path first, else the one
key that matches the path as a regular expression, else the default policy, as Keras)
and the `get` / `serialize` / `deserialize` trio; `DTypePolicy` is trainlib's one policy
class (`FloatDTypePolicy` is the same class, as in Keras 3). Keras's quantized policies
(int8, int4, float8, GPTQ, AWQ) are not provided: trainlib has no quantized kernels.
"""
import collections.abc
import re

from ..mixed_precision import DTypePolicy, get as _get, global_policy

__all__ = ["DTypePolicy", "FloatDTypePolicy", "DTypePolicyMap", "get", "serialize",
           "deserialize"]

FloatDTypePolicy = DTypePolicy


class DTypePolicyMap(DTypePolicy, collections.abc.MutableMapping):
    """Dtype policies by layer path, with a default (the global policy when None).

    Example:
        >>> policies = tl.keras.dtype_policies.DTypePolicyMap()
        >>> policies["encoder/.*"] = "float16"
        >>> policies["encoder/dense"].name, policies["decoder"].name
        ('float16', 'float32')
    """

    def __init__(self, default_policy=None, policy_map=None):
        if isinstance(default_policy, DTypePolicyMap):
            raise ValueError("`default_policy` cannot be a `DTypePolicyMap`.")
        if policy_map is not None and not isinstance(policy_map, dict):
            raise TypeError(f"If specified, `policy_map` must be a dict. Received: "
                            f"policy_map={policy_map} of type {type(policy_map)}")
        self._default_policy_arg = default_policy
        self._default = _get(default_policy)
        super().__init__(self._default.name)
        self._policy_map = {}
        for key, policy in (policy_map or {}).items():
            self[key] = policy

    @property
    def default_policy(self):
        """The policy of paths no key matches (the global policy when none was given)."""
        return _get(self._default_policy_arg) if self._default_policy_arg is not None \
            else global_policy()

    def __getitem__(self, key):
        if key in self._policy_map:
            return self._policy_map[key]
        matching = [pattern for pattern in self._policy_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Path '{key}' matches multiple dtype policy specification keys: "
                             f"{matching}. Please make sure each path only matches at most one "
                             "dtype policy specification key in the DTypePolicyMap.")
        return self._policy_map[matching[0]] if matching else self.default_policy

    def __setitem__(self, key, policy):
        if key in self._policy_map:
            raise ValueError(f"{key} already exist in the DTypePolicyMap with value "
                             f"{self._policy_map[key]}. Please make sure to not use duplicated "
                             "keys.")
        self._policy_map[key] = _get(policy)

    def __delitem__(self, key):
        del self._policy_map[key]

    def __iter__(self):
        return iter(self._policy_map)

    def __len__(self):
        return len(self._policy_map)

    def __eq__(self, other):
        return isinstance(other, DTypePolicyMap) and other._policy_map == self._policy_map \
            and other.default_policy == self.default_policy

    __hash__ = None

    def __repr__(self):
        return f"<DTypePolicyMap at {hex(id(self))}>"

    def get_config(self):
        return {"default_policy": None if self._default_policy_arg is None
                else serialize(_get(self._default_policy_arg)),
                "policy_map": {k: serialize(v) for k, v in self._policy_map.items()}}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        default = config.get("default_policy")
        policies = {k: deserialize(v) for k, v in (config.get("policy_map") or {}).items()}
        return cls(None if default is None else deserialize(default), policies)


def serialize(dtype_policy):
    """Keras 3's config of a policy: {"module", "class_name", "config", "registered_name"}."""
    class_name = "DTypePolicyMap" if isinstance(dtype_policy, DTypePolicyMap) else "DTypePolicy"
    return {"module": "keras", "class_name": class_name, "config": dtype_policy.get_config(),
            "registered_name": None}


def deserialize(config, custom_objects=None):
    """The policy `config` (from `serialize`) describes."""
    if isinstance(config, dict) and config.get("class_name") == "DTypePolicyMap":
        return DTypePolicyMap.from_config(config["config"])
    if isinstance(config, dict) and config.get("class_name") not in (None, "DTypePolicy",
                                                                      "FloatDTypePolicy"):
        raise ValueError(f"Unknown dtype policy class {config.get('class_name')!r}: trainlib has "
                         "DTypePolicy and DTypePolicyMap (no quantized policies)")
    return _get(config)


def get(identifier):
    """A policy from a name, a config, a DType or a policy (as a layer's `dtype=` argument)."""
    if isinstance(identifier, dict):
        return deserialize(identifier)
    return _get(identifier)
