"""`keras.backend` (not the array module: that is `graph/backend.py`): Keras 3's global settings (floatx, epsilon, image data format, session
clearing, uids) and the tf.keras 2 helpers its programs still call (`get_value`, `set_value`,
`function`, `int_shape`, `count_params`...).

Owns: `clear_session` and the uid counters; floatx / epsilon / image data format are
re-exported from settings.py, where they live. Invariant: `floatx()` is the dtype layers made
without `dtype=` take, through the default dtype policy (fixed on first use, as Keras's, until
`clear_session`).
"""
import numpy as np

from .graph import dtypes as _dt
from .graph.op import convert_to_tensor
from .graph.variables import Variable
from .keras.ops._convert import result_type as _keras_result_type
from .layers import base as _layer_base
from .mixed_precision import set_global_policy as _set_global_policy
from .naming import reset_names
from .settings import (epsilon, floatx, image_data_format, reset_session_state,  # noqa: F401
                       set_epsilon, set_floatx, set_image_data_format)

__all__ = ["floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
           "set_image_data_format", "clear_session", "get_uid", "is_keras_tensor",
           "standardize_dtype", "result_type", "is_float_dtype", "is_int_dtype",
           "get_value", "set_value", "batch_get_value", "batch_set_value", "function",
           "int_shape", "count_params", "eval", "variable", "constant", "backend"]
# set_backend is keras.config's, not keras.backend's

_UIDS = {}


def clear_session(free_memory=True):
    """Resets Keras's global state, as Keras 3 does: default layer names start again at
    `dense`, `dense_1`..., the uid counters are cleared, the default dtype policy is read
    again from `floatx()` (or a later `set_dtype_policy`), and the `keras.config` switches
    (interactive logging, unsafe deserialization, traceback filtering, flash attention)
    return to their defaults.

    Args:
        free_memory: also run Python's garbage collector (as Keras).

    Example:
        >>> keras.layers.Dense(1).name, keras.layers.Dense(1).name
        ('dense', 'dense_1')
        >>> keras.utils.clear_session()
        >>> keras.layers.Dense(1).name
        'dense'
    """
    reset_names()
    _UIDS.clear()
    _set_global_policy(None)
    reset_session_state()
    if free_memory:
        import gc  # noqa: PLC0415
        gc.collect()


def get_uid(prefix=""):
    """1, 2, 3... per prefix (Keras's unique ids for default names)."""
    _UIDS[prefix] = _UIDS.get(prefix, 0) + 1
    return _UIDS[prefix]


def is_keras_tensor(x):
    """Whether `x` is a symbolic functional-API value (`keras.Input(...)` and what follows)."""
    return isinstance(x, _layer_base.KerasTensor)


def standardize_dtype(dtype):
    """A dtype's canonical name ("float32"; None gives floatx())."""
    if dtype is None:
        return floatx()
    return _dt.as_dtype(getattr(dtype, "name", dtype)).name


def result_type(*dtypes):
    """The dtype Keras promotes `dtypes` to, as a name (floatx() for none): the promotion
    `keras.ops` uses ("int32" with "float32" is "float32", not NumPy's "float64")."""
    if not dtypes:
        return floatx()
    return _keras_result_type(*[_dt.as_dtype(standardize_dtype(d)) for d in dtypes]).name


def is_float_dtype(dtype):
    """Whether `dtype` is a floating dtype."""
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype):
    """Whether `dtype` is an integer dtype."""
    return standardize_dtype(dtype).startswith(("int", "uint"))


# ------------------------------------------------------------------ tf.keras 2 helpers

def get_value(x):
    """The numpy value of a Variable, tensor or number (tf.keras 2's `K.get_value`).

    Example:
        >>> float(keras.backend.get_value(tl.Variable(2.0)))
        2.0
    """
    if hasattr(x, "numpy"):
        return x.numpy()
    return np.asarray(x)


def set_value(x, value):
    """Assigns `value` to the Variable `x` (tf.keras 2's `K.set_value`, e.g. of
    `optimizer.learning_rate`)."""
    if not isinstance(x, Variable):
        raise TypeError(f"set_value needs a Variable, got {type(x).__name__}; set an "
                        "optimizer's rate with `optimizer.learning_rate = value`")
    x.assign(np.asarray(value, dtype=x.dtype.np))


def batch_get_value(tensors):
    """`get_value` of each."""
    return [get_value(t) for t in tensors]


def batch_set_value(tuples):
    """`set_value` of each (variable, value) pair."""
    for x, value in tuples:
        set_value(x, value)


def function(inputs, outputs, updates=None, name=None, **kwargs):
    """tf.keras 2's `K.function`: a callable mapping values for the functional-API `inputs` to
    numpy values of `outputs` (a sub-model evaluated in inference mode).

    Example:
        >>> inp = keras.Input((2,)); out = keras.layers.Dense(1)(inp)
        >>> keras.backend.function([inp], [out])([np.ones((3, 2))])[0].shape
        (3, 1)
    """
    from .models.functional import Functional  # noqa: PLC0415 -- models sit beside this module
    if updates:
        raise ValueError("keras.backend.function(updates=...) is not supported: apply updates "
                         "in a train step or a tl.function")
    single = not isinstance(outputs, (list, tuple))
    model = Functional(inputs, outputs)

    def call(values):
        if isinstance(values, dict):
            values = [values[t.name] for t in model.inputs]
        values = values if isinstance(values, (list, tuple)) else [values]
        feeds = [convert_to_tensor(np.asarray(v)) for v in values]
        result = model(feeds if len(feeds) > 1 else feeds[0], training=False)
        result = result if isinstance(result, (list, tuple)) else [result]
        arrays = [np.asarray(r) for r in result]
        return arrays[0] if single else arrays

    return call


def int_shape(x):
    """The static shape of `x` as a tuple (None for unknown dims)."""
    shape = x.shape
    return tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape)


def count_params(x):
    """The number of elements of a Variable or tensor."""
    return int(np.prod(int_shape(x)))


def eval(x):  # noqa: A001 -- tf.keras 2's name
    """The numpy value of `x` (`get_value`)."""
    return get_value(x)


def variable(value, dtype=None, name=None, constraint=None):
    """A Variable holding `value` (tf.keras 2's `K.variable`; `constraint` is not supported)."""
    if constraint is not None:
        raise ValueError("keras.backend.variable(constraint=...) is not supported")
    return Variable(np.asarray(value, dtype=dtype or floatx()), name=name)


def constant(value, dtype=None, shape=None, name=None):
    """A constant tensor (tf.keras 2's `K.constant`)."""
    array = np.asarray(value, dtype=dtype or floatx())
    if shape is not None:
        array = np.broadcast_to(array, shape)
    return convert_to_tensor(array)


def backend():
    """The backend's name, as Keras reports it ("tensorflow": trainlib follows its API)."""
    return "tensorflow"


def set_backend(backend_name):
    """Keras's `keras.config.set_backend`: trainlib has one backend, so only its own name
    ("tensorflow", what `backend()` reports) is accepted, and nothing changes.

    Raises:
        ValueError: for any other backend ("jax", "torch", "numpy"...).
    """
    if backend_name != backend():
        raise ValueError(f"set_backend({backend_name!r}): trainlib runs on one backend, reported "
                         f"as {backend()!r}; run the program with Keras itself for another")

