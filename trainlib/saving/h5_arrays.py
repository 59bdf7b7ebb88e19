"""What both HDF5 weight layouts share (Keras 3's `.weights.h5`, keras_h5.py, and tf.keras 2's,
legacy_h5.py): opening h5py, reading one numeric dataset within the load budget, and
checking arrays against the variables they are meant for.

Invariant: a dataset is read only after its kind was checked (numeric, no objects) and its
declared size charged to the budget; nothing is assigned here.
"""
import numpy as np

from ..graph.serialization import LoadError

__all__ = ["h5py_module", "open_plain", "read_dataset", "check_arrays", "declared_bytes"]


def h5py_module():
    """h5py (a dependency; imported when an HDF5 file is first touched)."""
    try:
        import h5py  # noqa: PLC0415 -- only the HDF5 formats need it
    except ImportError:  # pragma: no cover - h5py is a dependency
        raise ImportError("'.h5' files need h5py: pip install h5py") from None
    return h5py


def open_plain(f):
    """`h5py.File(f, "r")` once every object in it was checked to be plain: hard links only
    (no soft or external links: they would read another path of this file or another file)
    and datasets stored in the file (no external storage: it reads any local file, and a FIFO
    blocks; no virtual datasets: they read other files or fill with zeros). Keras refuses
    the same files.

    Raises:
        LoadError: naming the first object that is not plain.
        OSError: (h5py's) for bytes that are not HDF5.
    """
    h5py = h5py_module()
    h5 = h5py.File(f, "r")
    try:
        _check_plain(h5py, h5)
    except BaseException:
        h5.close()
        raise
    return h5


def _check_plain(h5py, group):
    kinds = {h5py.SoftLink: "a soft link", h5py.ExternalLink: "an external link"}
    for name in group:
        link = group.get(name, getlink=True)
        where = f"{group.name.rstrip('/')}/{name}"
        if not isinstance(link, h5py.HardLink):
            raise LoadError(f"'{where}' is {kinds.get(type(link), 'not a hard link')}; a weights "
                            "file holds its objects itself (links are refused)")
        obj = group.get(name)
        if isinstance(obj, h5py.Group):
            _check_plain(h5py, obj)
        elif isinstance(obj, h5py.Dataset):
            if obj.external:
                raise LoadError(f"'{where}' uses external storage (it would read "
                                f"{obj.external[0][0]!r}); refused")
            if obj.is_virtual:
                raise LoadError(f"'{where}' is a virtual dataset (it reads other files); "
                                "refused")


def read_dataset(group, name, where, budget, missing):
    """The numeric array `group[name]`, its kind checked and its declared size charged to
    `budget` before it is read; LoadError(`missing`) when there is no such dataset."""
    ds = group.get(name)
    if not isinstance(ds, h5py_module().Dataset):
        raise LoadError(missing)
    if ds.dtype.kind not in "biuf" or ds.dtype.hasobject:
        raise LoadError(f"{where}/{name} has dtype {ds.dtype}, expected a numeric array")
    shape = tuple(int(d) for d in ds.shape)
    budget.take(int(np.prod(shape, dtype=np.int64)) * ds.dtype.itemsize, f"{where}/{name}")
    return np.asarray(ds[()])


def check_arrays(where, variables, arrays, what, same_kind=False):
    """Raises LoadError unless `arrays` fit `variables` (count, shape; dtype exactly, or with
    `same_kind` the same kind of number, which the caller casts)."""
    if len(arrays) != len(variables):
        raise LoadError(f"{where} holds {len(arrays)} weights, {what} has {len(variables)}")
    for i, (v, a) in enumerate(zip(variables, arrays)):
        label = f"{where}/{i} ('{v.name.split(':')[0]}' of {what})"
        if tuple(a.shape) != tuple(v.shape):
            raise LoadError(f"{label} has shape {tuple(a.shape)} in the file, the model expects "
                            f"{tuple(v.shape)}")
        expected = v.dtype.np
        if a.dtype != expected and not (same_kind and a.dtype.kind == expected.kind or
                                        same_kind and {a.dtype.kind, expected.kind} <= set("iu")):
            raise LoadError(f"{label} has dtype {a.dtype} in the file, the model expects "
                            f"{v.dtype.name}")


def declared_bytes(variables):
    """The bytes `variables` hold (what a load of them is sized to)."""
    return sum(int(np.prod(v.shape, dtype=np.int64)) * v.dtype.np.itemsize for v in variables)
