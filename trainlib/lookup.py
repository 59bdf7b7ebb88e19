"""`tl.lookup`: TensorFlow's lookup tables (tf.lookup) on trainlib's hash-table resources.

Owns: the initializers (`KeyValueTensorInitializer`, `TextFileInitializer`, `TextFileIndex`),
`StaticHashTable`, `StaticVocabularyTable` and `experimental.MutableHashTable`. The state and
its ops live in `graph/ops/lookup.py`; tables here fill it at construction (static tables) or
through `insert`/`remove` (mutable ones). Lookups accept dense, sparse and ragged keys and
return the same kind. A StaticVocabularyTable sends out-of-vocabulary keys to bucket
`vocab_size + Fingerprint64(str(key)) % num_oov_buckets`, TensorFlow's ids exactly.
"""
import types as _types

import numpy as np

from .file_io import open_regular
from .graph import dtypes as _dt
from .graph.op import convert_to_tensor
from .graph.ops import lookup as _ops
from .graph.ops.math import add, cast, not_equal, where
from .graph.ops.ragged import RaggedTensor
from .graph.ops.sparse import SparseTensor
from .graph.ops.strings import as_string, to_hash_bucket_fast
from .graph.ops.tf_array import get_static_value

__all__ = ["KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex",
           "StaticHashTable", "StaticVocabularyTable", "experimental"]


class KeyValueTensorInitializer:
    """Initializes a table from a tensor of keys and a tensor of values (the same length)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        k = convert_to_tensor(keys, dtype=key_dtype) if key_dtype is not None or \
            not hasattr(keys, "dtype") else convert_to_tensor(keys)
        v = convert_to_tensor(values, dtype=value_dtype) if value_dtype is not None or \
            not hasattr(values, "dtype") else convert_to_tensor(values)
        if key_dtype is not None and k.dtype is not _dt.as_dtype(key_dtype):
            k = cast(k, key_dtype)
        if value_dtype is not None and v.dtype is not _dt.as_dtype(value_dtype):
            v = cast(v, value_dtype)
        if k.shape.rank != 1 or v.shape.rank != 1 or k.shape[0] != v.shape[0]:
            raise ValueError(f"KeyValueTensorInitializer: expected keys and values as vectors of "
                             f"the same length, got shapes {k.shape} and {v.shape}")
        self.key_dtype, self.value_dtype = k.dtype, v.dtype
        self._keys, self._values = k, v

    def _fill(self, table):
        keys, values = get_static_value(self._keys), get_static_value(self._values)
        if keys is None or values is None:
            raise ValueError("KeyValueTensorInitializer: the keys and values must be known when "
                             "the table is built (constants, or tensors made outside "
                             "tl.function); build the table outside the function")
        table.entries.clear()
        for key, value in zip(keys, values):
            table.entries[table.key_of(key)] = np.asarray(value)


class TextFileIndex:
    """Special column indices of a TextFileInitializer: the whole line, or its line number."""
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer:
    """Initializes a table from a text file: one entry per line, key and value taken from the
    `delimiter`-separated columns `key_index` and `value_index` (or TextFileIndex's specials)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None,
                 delimiter="\t", name=None, value_index_offset=0):
        self.key_dtype, self.value_dtype = _dt.as_dtype(key_dtype), _dt.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, self.key_dtype),
                                   ("value", value_index, self.value_dtype)):
            if index < TextFileIndex.WHOLE_LINE:
                raise ValueError(f"TextFileInitializer: invalid {what}_index {index}")
            if index == TextFileIndex.LINE_NUMBER and dtype is not _dt.int64:
                raise ValueError(f"TextFileInitializer: the {what} of a LINE_NUMBER index must be "
                                 f"int64, got {dtype.name}")
            if index == TextFileIndex.WHOLE_LINE and not (dtype is _dt.string or dtype.is_integer):
                raise ValueError(f"TextFileInitializer: the {what} of a WHOLE_LINE index must be "
                                 f"string or integer, got {dtype.name}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"TextFileInitializer: vocab_size must be > 0, got {vocab_size}")
        self._filename = filename.numpy().decode() if hasattr(filename, "numpy") else \
            (filename.decode() if isinstance(filename, bytes) else str(filename))
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter = vocab_size, delimiter
        self._offset = value_index_offset

    def _column(self, line, number, index, dtype):
        if index == TextFileIndex.LINE_NUMBER:
            return number + (self._offset if dtype is self.value_dtype else 0)
        text = line if index == TextFileIndex.WHOLE_LINE else None
        if text is None:
            cols = line.split(self._delimiter.encode()) if self._delimiter else line.split()
            if index >= len(cols):
                raise _invalid(f"Invalid number of columns in {self._filename} line {number} "
                               f"({line!r}) : expected {index + 1} got {len(cols)}")
            text = cols[index]
        if dtype is _dt.string:
            return text
        try:
            return int(text) if dtype.is_integer else float(text)
        except ValueError:
            raise _invalid(f"Field {text!r} in {self._filename} line {number} is not a valid "
                           f"{dtype.name}") from None

    def _fill(self, table):
        f, _ = open_regular(self._filename, follow_symlinks=True)   # a FIFO never blocks
        with f:
            lines = f.read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise _invalid(f"Invalid vocab_size in {self._filename}: expected "
                               f"{self._vocab_size} lines, got {len(lines)}")
            lines = lines[:self._vocab_size]
        table.entries.clear()
        for number, line in enumerate(lines):
            line = line.rstrip(b"\r")
            key = self._column(line, number, self._key_index, self.key_dtype)
            value = np.asarray(self._column(line, number, self._value_index, self.value_dtype),
                               dtype=self.value_dtype.np)
            known = table.entries.get(table.key_of(key))
            if known is not None and not np.array_equal(known, value):  # TF: same pair is fine
                raise _invalid(f"HashTable has different value for same key. Key {key!r} has "
                               f"{known} and trying to add value {value}")
            table.entries[table.key_of(key)] = value


def _invalid(message):
    from .graph.errors import InvalidArgumentError
    return InvalidArgumentError(message)


def _map_keys(keys, fn):
    """fn over the values of dense, sparse or ragged keys; the result in the same kind."""
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, fn(keys.values), keys.dense_shape)
    if isinstance(keys, RaggedTensor):
        return keys.with_flat_values(fn(keys.flat_values))
    return fn(keys)


def _check_key_dtype(keys, key_dtype):
    if not hasattr(keys, "dtype"):
        keys = convert_to_tensor(keys, dtype=key_dtype)
    if keys.dtype is not key_dtype:
        raise TypeError(f"Dtype of argument `keys` must be {key_dtype.name}, received: "
                        f"{keys.dtype.name}")
    return keys


class _Table:
    """What every table answers: its key and value dtypes, `lookup`, `[]`, `size`."""

    def __getitem__(self, keys):
        return self.lookup(keys)

    @property
    def key_dtype(self):
        """The dtype of the keys."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The dtype of the values."""
        return self._value_dtype

    @property
    def resource_handle(self):
        """The table's resource tensor."""
        return self._resource.handle


class StaticHashTable(_Table):
    """A table filled once from `initializer`; keys not in it look up as `default_value`.

    Example:
        >>> init = tl.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2], value_dtype=tl.int64)
        >>> table = tl.lookup.StaticHashTable(init, default_value=-1)
        >>> table.lookup(tl.constant(["b", "z"])).numpy()
        array([ 2, -1])
    """

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        self._key_dtype, self._value_dtype = initializer.key_dtype, initializer.value_dtype
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._name = name or "hash_table"
        self._resource = _ops.HashTableResource(self._key_dtype, self._value_dtype,
                                                tuple(self._default_value.shape), self._name)
        initializer._fill(self._resource)

    @property
    def name(self):
        """The table's name."""
        return self._name

    @property
    def default_value(self):
        """The value of keys not in the table."""
        return self._default_value

    def lookup(self, keys, name=None):
        """The values of `keys` (dense, sparse or ragged; the result is the same kind)."""
        keys = _check_key_dtype(keys, self._key_dtype) if not isinstance(
            keys, (SparseTensor, RaggedTensor)) else keys
        _check_key_dtype(keys.values if isinstance(keys, SparseTensor) else
                         keys.flat_values if isinstance(keys, RaggedTensor) else keys,
                         self._key_dtype)
        return _map_keys(keys, lambda k: _ops.table_find(self._resource, k, self._default_value))

    def size(self, name=None):
        """The number of entries (int64 scalar)."""
        return _ops.table_size(self._resource)

    def export(self, name=None):
        """(keys, values) of all entries."""
        return _ops.table_export(self._resource)


class StaticVocabularyTable(_Table):
    """A string (or integer) to int64 id table whose out-of-vocabulary keys hash into
    `num_oov_buckets` ids after the vocabulary (TensorFlow's FarmHash buckets).

    Example:
        >>> init = tl.lookup.KeyValueTensorInitializer(["a", "b"], tl.constant([0, 1], tl.int64))
        >>> table = tl.lookup.StaticVocabularyTable(init, num_oov_buckets=3)
        >>> table.lookup(tl.constant(["b", "zzz"])).numpy()
        array([1, 2])
    """

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        self._table = None
        if initializer is not None:
            lookup_key_dtype = _dt.as_dtype(lookup_key_dtype or initializer.key_dtype)
            if initializer.key_dtype not in (_dt.int64, _dt.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (int64, string), but got "
                                f"{initializer.key_dtype.name}.")
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                raise TypeError(f"Invalid `key_dtype`, expected "
                                f"{'integer' if lookup_key_dtype.is_integer else 'non-integer'} "
                                f"but got {initializer.key_dtype.name}.")
            if initializer.value_dtype is not _dt.int64:
                raise TypeError(f"Invalid `value_dtype`, expected int64 but got "
                                f"{initializer.value_dtype.name}.")
            self._table = StaticHashTable(initializer, default_value=-1)
        else:
            lookup_key_dtype = _dt.string
        lookup_key_dtype = _dt.as_dtype(lookup_key_dtype)
        if not lookup_key_dtype.is_integer and lookup_key_dtype is not _dt.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got "
                            f"{lookup_key_dtype.name}")
        self._num_oov_buckets = int(num_oov_buckets)
        self._key_dtype, self._value_dtype = lookup_key_dtype, _dt.int64
        self._name = (name or "hash_bucket").rstrip("/").split("/")[-1]

    @property
    def name(self):
        """The table's name."""
        return self._name

    @property
    def resource_handle(self):
        """The resource tensor of the vocabulary table (None without one)."""
        return None if self._table is None else self._table.resource_handle

    def size(self, name=None):
        """Vocabulary size plus the number of OOV buckets (int64 scalar)."""
        base = self._table.size() if self._table is not None else \
            convert_to_tensor(0, dtype=_dt.int64)
        return base + self._num_oov_buckets

    def lookup(self, keys, name=None):
        """int64 ids of `keys`: vocabulary ids, or a hash bucket after the vocabulary."""
        values = keys.values if isinstance(keys, SparseTensor) else \
            keys.flat_values if isinstance(keys, RaggedTensor) else keys
        _check_key_dtype(values, self._key_dtype)
        return _map_keys(keys, self._ids)

    def _ids(self, values):
        values = _check_key_dtype(values, self._key_dtype)
        if self._table is not None and self._table.key_dtype is _dt.int64:
            values = cast(values, _dt.int64)
        text = values if values.dtype is _dt.string else as_string(values)
        buckets = to_hash_bucket_fast(text, self._num_oov_buckets)
        if self._table is None:
            return buckets
        ids = self._table.lookup(values)
        buckets = add(buckets, self._table.size())
        return where(not_equal(ids, self._table.default_value), ids, buckets)


class MutableHashTable(_Table):
    """A table changed by `insert` and `remove`; missing keys look up as `default_value`
    (whose shape is the value shape).

    Example:
        >>> table = tl.lookup.experimental.MutableHashTable(tl.string, tl.int64, default_value=-1)
        >>> table.insert(tl.constant(["a"]), tl.constant([7], tl.int64))
        >>> table.lookup(tl.constant(["a", "b"])).numpy()
        array([ 7, -1])
    """

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True, experimental_is_anonymous=False):
        self._key_dtype, self._value_dtype = _dt.as_dtype(key_dtype), _dt.as_dtype(value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._value_shape = tuple(self._default_value.shape)
        self._name = name
        self._resource = _ops.HashTableResource(self._key_dtype, self._value_dtype,
                                                self._value_shape, name)

    @property
    def name(self):
        """The table's name."""
        return self._name

    def size(self, name=None):
        """The number of entries (int64 scalar)."""
        return _ops.table_size(self._resource)

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """The values of `keys`; where missing, `default_value` or the matching entry of
        `dynamic_default_values` (of shape keys.shape + the value shape)."""
        keys = _check_key_dtype(keys, self._key_dtype)
        default = self._default_value if dynamic_default_values is None else \
            dynamic_default_values
        return _ops.table_find(self._resource, keys, default)

    def insert(self, keys, values, name=None):
        """Sets the values of `keys` (inserting the new ones)."""
        return _ops.table_insert(self._resource, _check_key_dtype(keys, self._key_dtype), values)

    def remove(self, keys, name=None):
        """Removes `keys` (those not present are ignored)."""
        return _ops.table_remove(self._resource, _check_key_dtype(keys, self._key_dtype))

    def export(self, name=None):
        """(keys, values) of all entries."""
        return _ops.table_export(self._resource)


experimental = _types.SimpleNamespace(MutableHashTable=MutableHashTable)
