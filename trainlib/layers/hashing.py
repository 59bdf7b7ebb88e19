"""`Hashing`: values (integers or strings) into `num_bins` buckets, as Keras 3 hashes them.

Owns: Keras's arguments, the mask bucket and the output encodings. The hash is
TensorFlow's: numbers are first written as decimal strings (`tl.strings.as_string`;
floats are truncated to int64 first), then bucketed by FarmHash Fingerprint64
(`tl.strings.to_hash_bucket_fast`), so buckets equal Keras's on the TensorFlow backend.
Invariant: `call` is public ops only (a model, `tl.function`, `Dataset.map`).
"""
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, strings as _strings

from .base import Layer, register
from .preprocessing import _ENCODE_MODES, CategoryEncoding

__all__ = ["Hashing"]


@register
class Hashing(Layer):
    """Hashes values into `num_bins` buckets (FarmHash Fingerprint64 of their decimal text).

    Args:
        num_bins: the number of buckets, the mask bucket included.
        mask_value: a value that maps to bucket 0 (the others to 1..num_bins-1).
        salt: a keyed (SipHash) hash: not supported by trainlib.
        output_mode: "int" (default, int64 buckets), "one_hot", "multi_hot" or "count".

    Example:
        >>> tl.layers.Hashing(num_bins=3)(tl.constant([[1], [2], [3]])).numpy().ravel().tolist()
        [0, 1, 0]
    """

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False,
                 **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError("The `num_bins` for `Hashing` cannot be `None` or non-positive "
                             f"values. Received: num_bins={num_bins}.")
        if output_mode == "int" and self.dtype_policy.name not in ("int32", "int64"):
            raise ValueError('When `output_mode="int"`, `dtype` should be an integer type, '
                             f"'int32' or 'in64'. Received: dtype={kwargs['dtype']}")
        if output_mode not in ("int",) + _ENCODE_MODES:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{('int',) + _ENCODE_MODES}. Received: output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("Hashing(sparse=True) is not supported by trainlib")
        if salt is not None:
            if not (isinstance(salt, (tuple, list)) and len(salt) == 2 or isinstance(salt, int)):
                raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size 2 "
                                 f"integers, or a single integer. Received: salt={salt}.")
            raise NotImplementedError("Hashing(salt=...) (TensorFlow's keyed SipHash) is not "
                                      "supported by trainlib; use salt=None")
        self.num_bins, self.mask_value, self.salt = int(num_bins), mask_value, None
        self.output_mode, self.sparse = output_mode, False
        self.autocast = False

    def call(self, inputs):
        if self.output_mode == "one_hot" and inputs.shape.rank and inputs.shape[-1] == 1:
            inputs = _array.squeeze(inputs, [-1])
        bins = self.num_bins
        mask = None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = _math.equal(inputs, _math.cast(self.mask_value, inputs.dtype))
        values = inputs
        if values.dtype.is_floating:
            values = _math.cast(values, _dt.int64)
        if values.dtype is not _dt.string:
            values = _strings.as_string(values)
        out = _strings.to_hash_bucket_fast(values, bins)
        if mask is not None:
            out = _math.where(mask, _array.zeros_like(out), out + 1)
        if self.output_mode == "int":
            return _math.cast(out, self.compute_dtype) if out.dtype.name != self.compute_dtype \
                else out
        return CategoryEncoding(self.num_bins, self.output_mode, dtype=self.dtype_policy)(out)

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode,
                "sparse": self.sparse}
