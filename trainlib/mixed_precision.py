"""`tl.mixed_precision` (Keras 3's `keras.mixed_precision`): dtype policies.

Owns: DTypePolicy (a name giving a compute dtype and a variable dtype: "float32",
"float64", "mixed_float16" = float16 math over float32 weights, "mixed_bfloat16" is
refused as trainlib has no bfloat16), the global policy that layers made without
`dtype=` take (`set_global_policy`, also `keras.config.set_dtype_policy`), and
`get`, which turns what a layer's `dtype=` accepts (None, a name, a policy, a
serialized policy, a DType) into a policy. `LossScaleOptimizer` lives in `optim`;
`trainlib.keras.mixed_precision` shows both, as Keras does.
Invariant: a policy is immutable; layers read the global one only when made.
"""
from .graph import dtypes as _dt
from .graph.properties import read_only
from .settings import floatx

__all__ = ["DTypePolicy", "Policy", "set_global_policy", "global_policy", "set_dtype_policy",
           "dtype_policy"]


class DTypePolicy:
    """A layer's compute dtype and variable dtype, named as Keras names them.

    Args:
        name: "float32", "float16", "float64", or "mixed_float16" (compute float16,
            variables float32). None: the global policy's name.

    Example:
        >>> policy = tl.keras.mixed_precision.Policy("mixed_float16")
        >>> policy.compute_dtype, policy.variable_dtype
        ('float16', 'float32')
    """

    def __init__(self, name=None):
        if name is None:
            name = global_policy().name
        if not isinstance(name, str):
            raise TypeError("'name' must be a string, such as 'mixed_float16'. Received: "
                            f"name={name} (of type {type(name)})")
        self._name = name
        if name == "mixed_float16":
            self._compute, self._variable = "float16", "float32"
        elif name == "mixed_bfloat16":
            raise NotImplementedError("mixed_bfloat16 is not supported by trainlib (it has no "
                                      "bfloat16 dtype); use 'mixed_float16'")
        else:
            try:
                dtype = _dt.as_dtype(name).name
            except (TypeError, ValueError):
                raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. "
                                 "Valid policies include 'mixed_float16', 'mixed_bfloat16', and "
                                 "the name of any float dtype such as 'float32'.") from None
            self._compute = self._variable = dtype
        # the DTypes themselves, for layers' per-call checks
        self._compute_dt, self._variable_dt = _dt.as_dtype(self._compute), _dt.as_dtype(self._variable)

    name = read_only("_name", "The policy's name.")
    compute_dtype = read_only("_compute", "The dtype of a layer's math and outputs (a string).")
    variable_dtype = read_only("_variable", "The dtype of a layer's weights (a string).")

    @property
    def quantization_mode(self):
        return None

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return type(other) is type(self) and other._name == self._name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy
_global = [None]


def set_global_policy(policy):
    """Sets the policy that layers made from now on without `dtype=` use.

    Args:
        policy: a DTypePolicy or its name ("mixed_float16", "float32", ...); None resets
            it to `floatx()`'s.

    Raises:
        ValueError: for a policy whose compute dtype is not floating.
    """
    if policy is None:
        _global[0] = None
        return
    policy = policy if isinstance(policy, DTypePolicy) else DTypePolicy(str(policy))
    if not _dt.as_dtype(policy.compute_dtype).is_floating:
        raise ValueError("set_global_policy can only be used to set the global policy to floating-"
                         f"point policies, such as 'float32' and 'mixed_float16', but got policy: "
                         f"{policy.name}")
    _global[0] = policy


def global_policy():
    """The global policy: the one `set_global_policy` set, else, as Keras, `floatx()`'s
    ("float32" by default), fixed at this first read until `keras.utils.clear_session()`."""
    if _global[0] is None:
        _global[0] = DTypePolicy(floatx())
    return _global[0]


set_dtype_policy, dtype_policy = set_global_policy, global_policy


def get(identifier):
    """The policy a layer's `dtype=` argument names (None: the global policy)."""
    if identifier is None:
        return global_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):  # Keras 3's serialized DTypePolicy
        return DTypePolicy(identifier.get("config", {}).get("name"))
    if isinstance(identifier, _dt.DType):
        return DTypePolicy(identifier.name)
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    return DTypePolicy(_dt.as_dtype(identifier).name)
