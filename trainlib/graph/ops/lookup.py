"""Hash-table resources and their ops: `LookupTableFindV2`, `LookupTableSizeV2`,
`LookupTableExportV2`, `LookupTableInsertV2`, `LookupTableRemoveV2` (TensorFlow's op names).

Owns: `HashTableResource`, the host-side state behind `tl.lookup`'s tables (a dict from a key,
`bytes` for string keys or a Python int, to a value array of the table's value shape), and
the ops that read and change it. A table reaches an op as a resource tensor (the handle), so
tables work eagerly, inside `tl.function` and in `Dataset.map` (a traced function captures the
handle). All five ops are stateful: reads stay ordered after the inserts and removes before
them. They run on the host (string keys live there).
Invariants: lookup output = keys' shape + the table's value shape, in the table's value
dtype; missing keys take the default value; export returns keys and values in insertion order.
"""
import numpy as np

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, op_error
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import Tensor

__all__ = ["HashTableResource", "table_find", "table_size", "table_export", "table_insert",
           "table_remove"]


class HashTableResource:
    """The state of one hash table: `key_dtype`, `value_dtype`, `value_shape` and the entries."""

    def __init__(self, key_dtype, value_dtype, value_shape=(), name="hash_table"):
        self.key_dtype = _dt.as_dtype(key_dtype)
        self.value_dtype = _dt.as_dtype(value_dtype)
        self.value_shape = tuple(value_shape)
        self.name = name
        self.entries = {}
        self.handle = Tensor(self, _dt.resource)

    def key_of(self, k):
        """The dict key of one array element."""
        return bytes(k) if self.key_dtype is _dt.string else int(k)


def _find_infer(handle, keys, default_value, *, value_shape):
    return spec(list(keys.shape) + list(value_shape), default_value.dtype)


@defop("LookupTableFindV2", infer=_find_infer, stateful=True, differentiable=False, host=True)
def _find(xp, table, keys, default_value, *, value_shape):
    default_value, keys = np.asarray(default_value), np.asarray(keys)
    per_key = default_value.shape == keys.shape + table.value_shape   # dynamic defaults
    if default_value.shape != table.value_shape and not per_key:
        raise op_error(InvalidArgumentError, "LookupTableFindV2",
                       f"the default value must have the table's value shape "
                       f"{list(table.value_shape)} (or keys.shape + that shape), got "
                       f"{list(default_value.shape)}")
    out = np.empty(keys.shape + table.value_shape, dtype=table.value_dtype.np)
    flat = out.reshape((-1,) + table.value_shape)
    defaults = default_value.reshape((-1,) + table.value_shape) if per_key else None
    for i, k in enumerate(keys.reshape(-1)):
        found = table.entries.get(table.key_of(k))
        flat[i] = found if found is not None else \
            (defaults[i] if per_key else default_value)
    return out


@defop("LookupTableSizeV2", infer=lambda handle: spec([], _dt.int64), stateful=True,
       differentiable=False, host=True)
def _size(xp, table):
    return np.asarray(len(table.entries), dtype=np.int64)


def _export_infer(handle, *, key_dtype, value_dtype, value_shape):
    return spec([None], key_dtype), spec([None] + list(value_shape), value_dtype)


@defop("LookupTableExportV2", infer=_export_infer, stateful=True, differentiable=False,
       host=True, num_outputs=2)
def _export(xp, table, key_dtype, value_dtype, value_shape):
    keys = list(table.entries)
    k = np.empty(len(keys), dtype=object) if table.key_dtype is _dt.string else \
        np.asarray(keys, dtype=table.key_dtype.np).reshape(-1)
    if table.key_dtype is _dt.string:
        k[:] = keys
    v = np.asarray([table.entries[key] for key in keys], dtype=table.value_dtype.np)
    return k, v.reshape((len(keys),) + table.value_shape)


@defop("LookupTableInsertV2", infer=lambda handle, keys, values: None, stateful=True,
       differentiable=False, host=True, num_outputs=0)
def _insert(xp, table, keys, values):
    keys = np.asarray(keys).reshape(-1)
    values = np.asarray(values, dtype=table.value_dtype.np)
    if values.shape != (len(keys),) + table.value_shape and \
            values.shape != np.asarray(keys).shape + table.value_shape:
        raise op_error(InvalidArgumentError, "LookupTableInsertV2",
                       f"expected values of shape keys.shape + {list(table.value_shape)}, got "
                       f"{list(values.shape)} for {len(keys)} keys")
    values = values.reshape((len(keys),) + table.value_shape)
    for k, v in zip(keys, values):
        table.entries[table.key_of(k)] = v.copy()
    return None


@defop("LookupTableRemoveV2", infer=lambda handle, keys: None, stateful=True,
       differentiable=False, host=True, num_outputs=0)
def _remove(xp, table, keys):
    for k in np.asarray(keys).reshape(-1):
        table.entries.pop(table.key_of(k), None)
    return None


def _keys(table, keys, op_name):
    keys = convert_to_tensor(keys, dtype=table.key_dtype) if not hasattr(keys, "dtype") \
        else convert_to_tensor(keys)
    if keys.dtype is not table.key_dtype:
        raise TypeError(f"{op_name}: the table's keys are {table.key_dtype.name}, got keys of "
                        f"dtype {keys.dtype.name}")
    return keys


def table_find(table, keys, default_value):
    """Values of `keys` in `table`; where missing, `default_value` (of the value shape, or
    of keys.shape + the value shape: one default per key)."""
    return apply("LookupTableFindV2", table.handle, _keys(table, keys, "LookupTableFindV2"),
                 convert_to_tensor(default_value, dtype=table.value_dtype),
                 value_shape=table.value_shape)


def table_size(table):
    """The number of entries (int64 scalar)."""
    return apply("LookupTableSizeV2", table.handle)


def table_export(table):
    """(keys, values) of all entries."""
    return apply("LookupTableExportV2", table.handle, key_dtype=table.key_dtype,
                 value_dtype=table.value_dtype, value_shape=table.value_shape)


def table_insert(table, keys, values):
    """Sets `table[k] = v` for the pairs of `keys` and `values`."""
    return apply("LookupTableInsertV2", table.handle, _keys(table, keys, "LookupTableInsertV2"),
                 convert_to_tensor(values, dtype=table.value_dtype))


def table_remove(table, keys):
    """Removes `keys` (missing ones are ignored)."""
    return apply("LookupTableRemoveV2", table.handle, _keys(table, keys, "LookupTableRemoveV2"))
