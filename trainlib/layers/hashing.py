"""The hashing preprocessing layers, as Keras 3's: `Hashing` (values, strings or integers and
floats through their decimal text, hashed into `num_bins` bins) and `HashedCrossing` (two or
more integer/string features crossed into one hashed bin, `SparseCrossHashed`).

Owns: the layer. The hashes are the string ops' (`tl.strings.to_hash_bucket_fast`, FarmHash
Fingerprint64, or with a `salt` `to_hash_bucket_strong`, SipHash-2-4), so the bins equal
Keras's on TensorFlow for every input; the encodings other than "int" are CategoryEncoding's.
"""
import numbers

from ..graph import dtypes as _dt
from ..graph.op import convert_to_tensor
from ..graph.ops import array as _array, math as _math, sparse as _sparse, strings as _strings
from ..graph.ops.ragged import RaggedTensor
from .base import Layer, register
from .preprocessing import CategoryEncoding

_MODES = ("int", "one_hot", "multi_hot", "count")


@register
class Hashing(Layer):
    """Hashes each value into one of `num_bins` bins (FarmHash; SipHash with a `salt`).

    Args:
        num_bins: the number of bins (with `mask_value`, one of them is the mask's, bin 0).
        mask_value: a value that goes to bin 0 (others then hash into bins 1..num_bins-1).
        salt: an int or two ints: use the keyed (strong) hash with this key.
        output_mode: "int" (default), "one_hot", "multi_hot" or "count".

    Example:
        >>> tl.layers.Hashing(num_bins=3)(tl.constant([["A"], ["B"], ["C"], ["D"], ["E"]])).numpy().ravel().tolist()
        [1, 0, 1, 1, 2]
    """

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False,
                 **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or not isinstance(num_bins, numbers.Integral) or num_bins <= 0:
            raise ValueError("The `num_bins` for `Hashing` cannot be `None` or non-positive "
                             f"values. Received: num_bins={num_bins}.")
        if output_mode not in _MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of {_MODES}."
                             f" Received: output_mode={output_mode}")
        if output_mode == "int" and _dt.as_dtype(self.compute_dtype) not in (_dt.int32, _dt.int64):
            raise ValueError('When `output_mode="int"`, `dtype` should be an integer type, '
                             f"'int32' or 'int64'. Received: dtype={kwargs['dtype']}")
        if sparse:
            raise NotImplementedError("Hashing(sparse=True) is not supported")
        if salt is not None and not (isinstance(salt, numbers.Integral) or (
                isinstance(salt, (tuple, list)) and len(salt) == 2)):
            raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size 2 "
                             f"integers, or a single integer. Received: salt={salt}.")
        self.num_bins, self.mask_value, self.output_mode, self.sparse = \
            int(num_bins), mask_value, output_mode, False
        self.salt = None if salt is None else \
            [int(salt), int(salt)] if isinstance(salt, numbers.Integral) else [int(s) for s in salt]
        self.strong_hash = self.salt is not None
        self.autocast = False

    def _bins(self, values):
        """The bin of every value of a tensor."""
        bins, mask = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = _math.equal(values, convert_to_tensor(self.mask_value, dtype=values.dtype))
        if values.dtype.is_floating:
            values = _math.cast(values, _dt.int64)
        if values.dtype is not _dt.string:
            values = _strings.as_string(values)
        if self.strong_hash:
            out = _strings.to_hash_bucket_strong(values, bins, self.salt)
        else:
            out = _strings.to_hash_bucket_fast(values, bins)
        if mask is not None:
            out = _math.where(mask, _array.zeros_like(out), out + 1)
        return out

    def call(self, inputs):
        if isinstance(inputs, RaggedTensor):
            if self.output_mode != "int":
                raise ValueError("Hashing: ragged inputs take output_mode='int' only")
            return inputs.with_flat_values(self._cast(self._bins(inputs.flat_values)))
        x = convert_to_tensor(inputs)
        if self.output_mode == "one_hot" and x.shape.rank and x.shape[-1] == 1:
            x = _array.squeeze(x, [-1])
        indices = self._bins(x)
        if self.output_mode == "int":
            return self._cast(indices)
        return CategoryEncoding(self.num_bins, self.output_mode, dtype=self.dtype_policy)(indices)

    def _cast(self, indices):
        dtype = _dt.as_dtype(self.compute_dtype)
        return indices if dtype is _dt.int64 else _math.cast(indices, dtype)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_bins,)
        return tuple(input_shape[:-1]) + (self.num_bins,)

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode,
                "sparse": self.sparse}


@register
class HashedCrossing(Layer):
    """Crosses two or more integer or string features into one hashed feature, as Keras 3's
    (TensorFlow's `sparse.cross_hashed`: FingerprintCat64 over the features, modulo
    `num_bins`).

    Args:
        num_bins: the number of hash bins.
        output_mode: "int" (default: the bin, int64) or "one_hot" (float32 unless `dtype`).
        sparse: not supported (dense outputs only).

    Inputs are a list or tuple of tensors of one shape: `()`, `(batch,)` or `(batch, 1)`.

    Example:
        >>> layer = tl.keras.layers.HashedCrossing(num_bins=5)
        >>> layer((tl.constant([1, 2]), tl.constant(["a", "b"]))).shape
        TensorShape([2])
    """

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None,
                 **kwargs):
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse:
            raise NotImplementedError("HashedCrossing(sparse=True) is not supported")
        if output_mode not in ("int", "one_hot"):
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"('int', 'one_hot'). Received: output_mode={output_mode}")
        self.num_bins, self.output_mode, self.sparse = num_bins, output_mode, sparse
        self.autocast = False

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("`HashedCrossing` should be called on a list or tuple of inputs. "
                             f"Received: inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError("`HashedCrossing` should be called on at least two inputs. "
                             f"Received: inputs={inputs}")
        inputs = [convert_to_tensor(x) for x in inputs]
        shape = tuple(inputs[0].shape)
        if len(shape) > 2 or (len(shape) == 2 and shape[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, `(batch_size)` "
                             f"or `(batch_size, 1)`. Received: inputs={inputs}")
        if not all(tuple(x.shape) == shape for x in inputs[1:]):
            raise ValueError("All `HashedCrossing` inputs should have equal shape. Received: "
                             f"inputs={inputs}")
        if not all(x.dtype.is_integer or x.dtype is _dt.string for x in inputs):
            raise ValueError("All `HashedCrossing` inputs should have an integer or string "
                             f"dtype. Received: inputs={inputs}")
        out = _sparse.cross_hashed_dense(inputs, self.num_bins)
        if self.output_mode == "one_hot":
            if out.shape.rank == 0:    # as Keras's encoding: one scalar is a batch of one
                out = _array.expand_dims(out, 0)
            elif out.shape[-1] == 1:
                out = _array.squeeze(out, [-1])
            return _array.one_hot(out, self.num_bins, dtype=_dt.as_dtype(self.compute_dtype))
        dtype = _dt.as_dtype(self.compute_dtype)
        return out if dtype is _dt.int64 else _math.cast(out, dtype)

    def compute_output_shape(self, input_shape):
        if len(input_shape) != 2 or not all(isinstance(s, tuple) for s in input_shape):
            raise ValueError("Expected as input a list/tuple of 2 tensors. Received "
                             f"input_shape={input_shape}")
        first = tuple(input_shape[0])
        if self.output_mode == "int":
            return first
        if not first:
            return (self.num_bins,)
        return (first if first[-1] != 1 else first[:-1]) + (self.num_bins,)

    def get_config(self):
        return {"num_bins": self.num_bins, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}
