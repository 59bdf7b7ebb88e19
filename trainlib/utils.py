"""`tl.utils`: helpers around the library that are not ops: drawing graphs (`plot_graph`).

Owns: turning what a user holds (a Function, a ConcreteFunction or a Graph)
into a picture file. The DOT text comes from `Graph.to_dot()`; rendering
needs the optional `graphviz` Python package and the Graphviz `dot` program,
and their absence is a clear error naming both installs, raised before
anything is written. `.dot`/`.gv` paths need neither: the text is written as is.
"""
import importlib.util
from pathlib import Path

from .graph.function import ConcreteFunction, Function
from .graph.ir import Graph
from .graph.ops import random as tl_random
from .data import text_dataset_from_directory  # noqa: F401 -- keras.utils names it

__all__ = ["plot_graph", "to_categorical", "set_random_seed", "text_dataset_from_directory"]

_TEXT_FORMATS = ("dot", "gv")
_INSTALL = ("pip install graphviz (the Python package) and the Graphviz programs from your OS "
            "package manager (e.g. apt-get install graphviz, brew install graphviz, "
            "conda install graphviz)")


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
    text = _graph_of(fn_or_graph).to_dot()
    if fmt in _TEXT_FORMATS:
        path.write_text(text)
        return path
    if fmt not in ("svg", "png", "pdf"):
        raise ValueError(f"plot_graph: cannot tell the format of {str(path)!r}; expected a path "
                         "ending in .svg, .png, .pdf, .dot or .gv")
    if importlib.util.find_spec("graphviz") is None:
        raise ImportError(f"plot_graph needs the graphviz Python package to write {fmt.upper()}, "
                          f"which is not installed: {_INSTALL}. Or write the DOT text: "
                          "plot_graph(fn, 'graph.dot').")
    import graphviz  # noqa: PLC0415 -- optional dependency
    try:
        image = graphviz.Source(text).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise ImportError(f"plot_graph needs the Graphviz `dot` program to write {fmt.upper()}, "
                          f"which was not found on PATH: {_INSTALL}.") from None
    path.write_bytes(image)
    return path


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
