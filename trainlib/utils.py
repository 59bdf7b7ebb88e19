"""`tl.utils`: helpers around the library that are not ops: drawing graphs (`plot_graph`),
and Keras's `keras.utils` names (the data utilities live in data_utils.py).

Owns: turning what a user holds (a Function, a ConcreteFunction or a Graph)
into a picture file. The DOT text comes from `Graph.to_dot()`; rendering
needs the optional `graphviz` Python package and the Graphviz `dot` program,
and their absence is a clear error naming both installs, raised before
anything is written. `.dot`/`.gv` paths need neither: the text is written as is.
"""
from pathlib import Path

from .graph.function import ConcreteFunction, Function
from .graph.ir import Graph
from .graph.visualize import TEXT_FORMATS, render_dot
from .graph.ops import random as tl_random
from .data_utils import text_dataset_from_directory  # noqa: F401 -- keras.utils names it
from .models.data_adapter import PyDataset, unpack_x_y_sample_weight  # noqa: F401 -- keras.utils
from .data_utils import (image_dataset_from_directory, split_dataset,  # noqa: F401
                         timeseries_dataset_from_array)
from .downloads import get_file  # noqa: F401
from .image_generator import array_to_img, img_to_array, load_img, save_img  # noqa: F401
from .backend import clear_session, is_keras_tensor, standardize_dtype  # noqa: F401
from .models.functional import get_source_inputs  # noqa: F401
from .models.plot import model_to_dot, plot_model  # noqa: F401
from .progbar import Progbar  # noqa: F401
from .saving.object_registration import (CustomObjectScope, custom_object_scope,  # noqa: F401
                                         get_custom_objects, get_registered_name,
                                         get_registered_object, register_keras_serializable)
from .saving.serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: F401
from .settings import (disable_interactive_logging, enable_interactive_logging,  # noqa: F401
                       is_interactive_logging_enabled)

__all__ = ["plot_graph", "to_categorical", "set_random_seed", "text_dataset_from_directory",
           "PyDataset", "Sequence", "pad_sequences", "normalize", "pack_x_y_sample_weight",
           "unpack_x_y_sample_weight", "timeseries_dataset_from_array", "split_dataset",
           "get_file", "load_img", "img_to_array", "array_to_img", "save_img",
           "image_dataset_from_directory", "Config", "clear_session", "is_keras_tensor",
           "standardize_dtype", "get_source_inputs", "CustomObjectScope", "custom_object_scope",
           "get_custom_objects", "get_registered_name", "get_registered_object",
           "register_keras_serializable", "serialize_keras_object", "deserialize_keras_object",
           "disable_interactive_logging", "enable_interactive_logging",
           "is_interactive_logging_enabled", "Progbar", "model_to_dot", "plot_model"]

Sequence = PyDataset  # tf.keras 2's name of it



def _graph_of(fn_or_graph):
    if isinstance(fn_or_graph, Graph):
        return fn_or_graph
    if isinstance(fn_or_graph, ConcreteFunction):
        return fn_or_graph.graph
    if isinstance(fn_or_graph, Function):
        concretes = fn_or_graph._concrete_functions()
        if len(concretes) != 1:
            what = "has not been traced yet" if not concretes else \
                f"has {len(concretes)} traced concrete functions"
            raise ValueError(
                f"plot_graph: the Function {fn_or_graph._name!r} {what}; pass one graph: "
                "fn.get_concrete_function(*args) (or its .graph)")
        return concretes[0].graph
    raise TypeError("plot_graph expects a tl.function Function, a ConcreteFunction or a Graph, "
                    f"got {type(fn_or_graph).__name__}")


def plot_graph(fn_or_graph, path):
    """Draws a traced graph to an image file (SVG, PNG or PDF, by the file's extension).

    Args:
        fn_or_graph: a `Graph`, a `ConcreteFunction`, or a `tl.function` Function that has
            exactly one traced concrete function.
        path: where to write; `.svg`, `.png` and `.pdf` need the `graphviz` Python package and
            the Graphviz `dot` program; `.dot`/`.gv` writes the DOT text and needs nothing.

    Returns:
        The path written, as a `pathlib.Path`.

    Raises:
        ImportError: the `graphviz` package or the `dot` program is missing (the message
            says what to install).
        ValueError: an unknown extension, or a Function with zero or several traces.
        TypeError: `fn_or_graph` is none of the above.

    Example:
        >>> @tl.function
        ... def f(x):
        ...     return tl.tanh(x) * 2.0
        >>> f(tl.constant([1.0]))
        >>> tl.utils.plot_graph(f, "f.dot")   # "f.svg" with graphviz installed
        PosixPath('f.dot')
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in TEXT_FORMATS + ("svg", "png", "pdf"):
        raise ValueError(f"plot_graph: cannot tell the format of {str(path)!r}; expected a path "
                         "ending in .svg, .png, .pdf, .dot or .gv")
    return render_dot(_graph_of(fn_or_graph).to_dot(), path, "plot_graph")


def to_categorical(x, num_classes=None):
    """One-hot rows of integer class labels, as `keras.utils.to_categorical` (numpy in, numpy out).

    Args:
        x: integer labels (any shape; a trailing dim of size 1 is dropped, as Keras does).
        num_classes: the number of classes (default: max label + 1).

    Returns:
        A float64 numpy array of shape x.shape + (num_classes,) (Keras 3 returns float64 too).

    Raises:
        ValueError: for negative labels or labels >= num_classes.

    Example:
        >>> tl.utils.to_categorical([0, 2], num_classes=3)
        array([[1., 0., 0.],
               [0., 0., 1.]])
    """
    import numpy as np  # noqa: PLC0415 -- a host-side data utility, as Keras's
    labels = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if labels.dtype.kind not in "iub":
        if labels.dtype.kind == "f" and np.all(np.mod(labels, 1) == 0):
            labels = labels.astype(np.int64)
        else:
            raise ValueError(f"to_categorical needs integer labels, got dtype {labels.dtype}")
    if labels.ndim > 1 and labels.shape[-1] == 1:
        labels = labels.reshape(labels.shape[:-1])
    labels = labels.astype(np.int64)
    if labels.size and labels.min() < 0:
        raise ValueError(f"to_categorical got a negative label ({labels.min()})")
    n = int(num_classes) if num_classes is not None else (int(labels.max()) + 1 if labels.size else 0)
    if labels.size and labels.max() >= n:
        raise ValueError(f"to_categorical got label {labels.max()} for num_classes={n}")
    return np.eye(n)[labels]


def set_random_seed(seed):
    """Seeds Python's `random`, numpy's global generator and `tl.random`, as
    `keras.utils.set_random_seed` does, so a whole script is reproducible."""
    import random  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    random.seed(seed)
    np.random.seed(seed)
    tl_random.set_seed(seed)


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """Lists of ids as one [num_sequences, maxlen] numpy array, padded with `value` and cut to
    maxlen at the start ("pre") or end ("post"), as Keras's.

    Example:
        >>> pad_sequences([[1, 2], [3]], maxlen=3).tolist()
        [[0, 1, 2], [0, 0, 3]]
    """
    import numpy as np  # noqa: PLC0415 -- host-side data preparation
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(f'padding and truncating must be "pre" or "post", got {padding!r} and '
                         f'{truncating!r}')
    lengths = [len(s) for s in sequences]
    maxlen = max(lengths, default=0) if maxlen is None else int(maxlen)
    out = np.full((len(sequences), maxlen), value, dtype=dtype)
    for i, seq in enumerate(sequences):
        seq = np.asarray(seq, dtype=dtype)
        if not len(seq) or not maxlen:
            continue
        seq = seq[-maxlen:] if truncating == "pre" else seq[:maxlen]
        if padding == "post":
            out[i, :len(seq)] = seq
        else:
            out[i, -len(seq):] = seq
    return out


def normalize(x, axis=-1, order=2):
    """`x` divided by its `order`-norm along `axis` (zero norms left as 1), as Keras's
    `keras.utils.normalize`; numpy in, numpy out (tensors give tensors).

    Example:
        >>> normalize(np.array([[3.0, 4.0]])).tolist()
        [[0.6, 0.8]]
    """
    import numpy as np  # noqa: PLC0415 -- host-side helper
    from .graph.ops import linalg as linalg_ops  # noqa: PLC0415
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        return x / np.expand_dims(norm, axis or -1)
    return linalg_ops.l2_normalize(x, axis) if order == 2 else \
        x / linalg_ops.norm(x, ord=order, axis=axis, keepdims=True)


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """The batch Keras's data adapters expect: x (a tuple or list x as (x,)), (x, y) or
    (x, y, sample_weight)."""
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


class Config:
    """A dict-like container of named values, read and written as attributes or items, that
    can be frozen and written as JSON (Keras's `keras.utils.Config`).

    Iterating gives the keys sorted; `keys()`, `values()`, `items()` keep insertion order.

    Raises:
        ValueError: on any change while frozen.
        AttributeError: reading an unknown name (with the closest known one, if any).

    Example:
        >>> config = keras.utils.Config(learning_rate=0.1)
        >>> config.seed = 123
        >>> config["seed"], config.learning_rate
        (123, 0.1)
        >>> config.freeze(); config.frozen
        True
    """

    __attrs__ = None

    def __init__(self, **kwargs):
        self._config = kwargs
        self._frozen = False
        self.__attrs__ = set(dir(self))

    @property
    def frozen(self):
        """Whether the config refuses changes."""
        return self._frozen

    def freeze(self):
        """Refuses any further change (until `unfreeze`)."""
        self._frozen = True

    def unfreeze(self):
        """Allows changes again."""
        self._frozen = False

    def _check_mutable(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self):
        """A shallow copy of the values, as a dict."""
        return dict(self._config)

    def to_json(self):
        """The values as a JSON string."""
        import json  # noqa: PLC0415
        return json.dumps(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def get(self, keyname, value=None):
        return self._config.get(keyname, value)

    def pop(self, *args):
        self._check_mutable()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._check_mutable()
        return self._config.update(*args, **kwargs)

    def __setattr__(self, name, value):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            object.__setattr__(self, name, value)
            return
        self._check_mutable()
        self._config[name] = value

    def __getattr__(self, name):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            return object.__getattribute__(self, name)
        config = object.__getattribute__(self, "_config")
        if name in config:
            return config[name]
        import difflib  # noqa: PLC0415
        close = difflib.get_close_matches(name, config.keys(), n=1, cutoff=0.7)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise AttributeError(f"Unknown attribute: '{name}'.{hint}")

    def __setitem__(self, key, item):
        self._check_mutable()
        self._config[key] = item

    def __getitem__(self, key):
        return self._config[key]

    def __delitem__(self, key):
        self._check_mutable()
        del self._config[key]

    def __contains__(self, item):
        return item in self._config

    def __iter__(self):
        return iter(sorted(self._config))

    def __len__(self):
        return len(self._config)

    def __repr__(self):
        return f"<Config {self._config}>"
