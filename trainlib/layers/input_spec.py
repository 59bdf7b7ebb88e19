"""`InputSpec`: what a layer accepts as its first argument (rank, dtype, shape, fixed axes),
and `assert_input_compatibility`, the check `Layer.__call__` runs against it.

Owns: Keras 3's InputSpec arguments, config and errors. A layer sets `self.input_spec`
(one spec, or a list: one per input tensor); `__call__` checks the inputs before
building and again after (build may set the spec), as Keras does.
"""
from ..graph import dtypes as _dt
from ..graph.nest import flatten

__all__ = ["InputSpec", "assert_input_compatibility"]


class InputSpec:
    """The rank, dtype and shape a layer expects of an input (None entries: any size).

    Args:
        dtype: the expected dtype name.
        shape: the expected shape, batch included (None dims match anything).
        ndim: the expected rank.
        max_ndim, min_ndim: bounds on the rank.
        axes: {axis: size} that given axes must have.
        allow_last_axis_squeeze: a last axis of 1 may be absent (or extra).
        name: the input's name (dict inputs are matched by it).
        optional: the input may be None.

    Example:
        >>> spec = tl.keras.layers.InputSpec(ndim=2, axes={-1: 3})
        >>> spec
        InputSpec(ndim=2, axes={-1: 3})
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = _dt.as_dtype(dtype).name if dtype is not None else None
        if shape is not None:
            self.shape = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(self.shape)
        else:
            self.ndim, self.shape = ndim, None
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.name, self.optional = name, optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: "
                            f"axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            top = (self.ndim if self.ndim else self.max_ndim) - 1
            if max(self.axes) > top:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed "
                                 f"value: {top}")

    def __repr__(self):
        parts = [f"{key}={value}" for key, value in (
            ("dtype", self.dtype), ("shape", self.shape), ("ndim", self.ndim),
            ("max_ndim", self.max_ndim), ("min_ndim", self.min_ndim), ("axes", self.axes))
            if value]
        return f"InputSpec({', '.join(parts)})"

    def get_config(self):
        """The spec's arguments (Keras's keys)."""
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes,
                "optional": self.optional}

    @classmethod
    def from_config(cls, config):
        """A spec from `get_config`'s dict."""
        return cls(**config)


def _incompatible(index, spec, layer_name, what):
    named = f" with name '{spec.name}'" if spec.name else ""
    return ValueError(f"Input {index}{named} of layer \"{layer_name}\" is "
                      f"incompatible with the layer: {what}")


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raises Keras's ValueError where `inputs` (a tensor or a structure of them) break
    `input_spec` (an InputSpec, a structure of them, or None)."""
    if not input_spec:
        return
    specs = flatten(input_spec)
    if isinstance(inputs, dict):
        names = [spec.name for spec in specs]
        if all(names):
            for name in names:
                if name not in inputs:
                    raise ValueError(f'Missing data for input "{name}". You passed a data '
                                     f"dictionary with keys {list(inputs)}. Expected the "
                                     f"following keys: {names}")
            inputs = [inputs[name] for name in names]
    inputs = flatten(inputs)
    if len(inputs) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
                         f"{len(inputs)} input tensors. Inputs received: {inputs}")
    for index, (x, spec) in enumerate(zip(inputs, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise ValueError(f"Inputs to a layer should be tensors. Got '{x}' (of type "
                             f"{type(x)}) as input for layer '{layer_name}'.")
        shape = tuple(None if d is None else int(d) for d in x.shape)
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise _incompatible(index, spec, layer_name,
                                f"expected ndim={spec.ndim}, found ndim={ndim}. Full shape "
                                f"received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise _incompatible(index, spec, layer_name,
                                f"expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise _incompatible(index, spec, layer_name,
                                f"expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full "
                                f"shape received: {shape}")
        if spec.dtype is not None:
            dtype = _dt.as_dtype(x.dtype).name
            if dtype != spec.dtype:
                raise _incompatible(index, spec, layer_name,
                                    f"expected dtype={spec.dtype}, found dtype={dtype}")
        for axis, value in spec.axes.items():
            if value is not None and shape[axis] not in (value, None):
                raise _incompatible(index, spec, layer_name,
                                    f"expected axis {axis} of input shape to have value "
                                    f"{value}, but received input with shape {shape}")
        if spec.shape is not None:
            spec_shape, seen = spec.shape, shape
            if spec.allow_last_axis_squeeze:
                seen = seen[:-1] if seen and seen[-1] == 1 else seen
                spec_shape = spec_shape[:-1] if spec_shape and spec_shape[-1] == 1 else spec_shape
            for want, dim in zip(spec_shape, seen):
                if want is not None and dim is not None and want != dim:
                    raise _incompatible(index, spec, layer_name,
                                        f"expected shape={spec.shape}, found shape={seen}")
