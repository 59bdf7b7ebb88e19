"""`keras.backend` (not the array module: that is `graph/backend.py`): Keras 3's global settings (floatx, epsilon, image data format, session
clearing, uids) and the tf.keras 2 helpers its programs still call (`get_value`, `set_value`,
`function`, `int_shape`, `count_params`...).

Owns: the process-wide floatx / epsilon / image data format values and `clear_session`.
Invariant: `floatx()` is the dtype Keras-level layers and `keras.ops` default to reading
(float32 unless set; trainlib's layers still build in their dtype policy's dtype, so
`set_floatx` changes what this module reports and what `keras.ops` creation functions use
only where they consult it).
"""
import numpy as np

from .graph import dtypes as _dt
from .graph.op import convert_to_tensor
from .graph.variables import Variable
from .keras.ops._convert import result_type as _keras_result_type
from .layers import base as _layer_base
from .naming import reset_names

__all__ = ["floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
           "set_image_data_format", "clear_session", "get_uid", "is_keras_tensor",
           "standardize_dtype", "result_type", "is_float_dtype", "is_int_dtype",
           "get_value", "set_value", "batch_get_value", "batch_set_value", "function",
           "int_shape", "count_params", "eval", "variable", "constant", "backend"]

_SETTINGS = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last"}
_UIDS = {}


def floatx():
    """The default float dtype's name ("float32")."""
    return _SETTINGS["floatx"]


def set_floatx(value):
    """Sets the default float dtype ("float16", "bfloat16", "float32" or "float64")."""
    if value not in ("float16", "bfloat16", "float32", "float64"):
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of "
                         "{'float16', 'bfloat16', 'float32', 'float64'}")
    _SETTINGS["floatx"] = str(value)


def epsilon():
    """The fuzz factor Keras adds to denominators (1e-7)."""
    return _SETTINGS["epsilon"]


def set_epsilon(value):
    """Sets the fuzz factor `epsilon()` returns."""
    _SETTINGS["epsilon"] = float(value)


def image_data_format():
    """"channels_last" (the default) or "channels_first"."""
    return _SETTINGS["image_data_format"]


def set_image_data_format(data_format):
    """Sets the default image data format ("channels_last" or "channels_first")."""
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    _SETTINGS["image_data_format"] = data_format


def clear_session(free_memory=True):
    """Resets Keras's global state: default layer names start again at `dense`, `dense_1`...,
    and the uid counters are cleared."""
    reset_names()
    _UIDS.clear()


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

