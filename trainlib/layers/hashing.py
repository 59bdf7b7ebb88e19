"""The `Hashing` preprocessing layer, as Keras 3's: values (strings, or integers and floats
through their decimal text) hashed into `num_bins` bins.

Owns: the layer. The hashes are the string ops' (`tl.strings.to_hash_bucket_fast`, FarmHash
Fingerprint64, or with a `salt` `to_hash_bucket_strong`, SipHash-2-4), so the bins equal
Keras's on TensorFlow for every input; the encodings other than "int" are CategoryEncoding's.
"""
import numbers

from ..graph import dtypes as _dt
from ..graph.op import convert_to_tensor
from ..graph.ops import array as _array, math as _math, strings as _strings
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
