"""String ops: `tl.strings.*` (case, strip, length, substr, regex, join, split,
number conversion, unicode, hashing, ngrams), with TensorFlow's op type names.

Owns: the string OpDefs and their public functions. Invariants: string tensors
hold `bytes` in numpy object arrays on the host (strings never live on a GPU);
kernels map Python's own bytes/str functions over the elements; no string op is
differentiable. Ops whose result is ragged (split, decode) return flat values
and row splits, which the public function wraps in a `RaggedTensor`.
"""
import re as _re

import numpy as np

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, UnimplementedError
from ..op import apply, broadcast_shapes, convert_to_tensor, defop, spec
from ..tensor import TensorShape
from .farmhash import fingerprint64, siphash24
from .ragged import RaggedTensor

__all__ = ["lower", "upper", "strip", "length", "substr", "regex_replace", "regex_full_match",
           "to_number", "as_string", "join", "reduce_join", "split", "bytes_split",
           "unicode_split", "unicode_decode", "unicode_encode", "unicode_transcode",
           "to_hash_bucket_fast", "to_hash_bucket_strong", "ngrams", "format", "decode_csv"]


def _strings(op_name, x):
    x = convert_to_tensor(x, dtype=_dt.string) if not hasattr(x, "dtype") else convert_to_tensor(x)
    if x.dtype is not _dt.string:
        raise TypeError(f"{op_name}: expected a string tensor, got {x.dtype.name}")
    return x


def _map(xp, fn, x, out_dtype=object):
    """`fn` over every element of the object array `x`, into a new array of `out_dtype`."""
    out = xp.empty(x.shape, dtype=out_dtype)
    flat = out.reshape(-1)
    for i, v in enumerate(x.reshape(-1)):
        flat[i] = fn(v)
    return out


def _same(name, out_dtype=None):
    def infer(x, **_):
        if x.dtype is not _dt.string:
            raise TypeError(f"{name} expects a string tensor, got {x.dtype.name}")
        return spec(x.shape, out_dtype or x.dtype)
    return infer


def _ragged_infer(values_dtype):
    def infer(x, **_):
        if x.dtype is not _dt.string:
            raise TypeError(f"expected a string tensor, got {x.dtype.name}")
        if x.shape.rank not in (None, 0, 1):
            raise ValueError(f"expected a scalar or vector of strings, got shape {x.shape}")
        return spec([None], values_dtype), spec([None], _dt.int64)
    return infer


def _ragged(xp, x, pieces_of, dtype=object):
    """(flat values, row_splits) of `pieces_of(element)` for each element of a 0-d/1-d `x`."""
    rows = [pieces_of(v) for v in x.reshape(-1)]
    splits = xp.zeros(len(rows) + 1, dtype="int64")
    values = [p for r in rows for p in r]
    for i, r in enumerate(rows):
        splits[i + 1] = splits[i] + len(r)
    out = xp.empty(len(values), dtype=dtype)
    out[:] = values
    return out, splits


def _wrap_ragged(x, values, splits):
    if x.shape.rank == 0:
        return values
    return RaggedTensor.from_row_splits(values, splits)


def _ragged_elementwise(fn):
    """`fn` (an elementwise function of its first argument) also maps the flat values of a
    RaggedTensor, keeping its rows, as TensorFlow dispatches those functions."""
    def wrapper(input, *args, **kwargs):  # noqa: A002
        if isinstance(input, RaggedTensor):
            return input.with_flat_values(fn(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)
    wrapper.__name__, wrapper.__qualname__ = fn.__name__, fn.__qualname__
    wrapper.__doc__, wrapper.__module__, wrapper.__wrapped__ = fn.__doc__, fn.__module__, fn
    return wrapper


# ------------------------------------------------------------------ elementwise


@defop("StringLower", infer=_same("StringLower"), differentiable=False, host=True)
def _lower(xp, x, encoding=""):
    if encoding == "utf-8":
        return _map(xp, lambda s: s.decode("utf-8").lower().encode("utf-8"), x)
    return _map(xp, bytes.lower, x)


@defop("StringUpper", infer=_same("StringUpper"), differentiable=False, host=True)
def _upper(xp, x, encoding=""):
    if encoding == "utf-8":
        return _map(xp, lambda s: s.decode("utf-8").upper().encode("utf-8"), x)
    return _map(xp, bytes.upper, x)


@defop("StringStrip", infer=_same("StringStrip"), differentiable=False, host=True)
def _strip(xp, x):
    return _map(xp, lambda s: s.strip(b" \t\n\v\f\r"), x)


def _utf8_chars(s):
    return sum(1 for b in s if b & 0xC0 != 0x80)


@defop("StringLength", infer=_same("StringLength", _dt.int32), differentiable=False, host=True)
def _length(xp, x, unit="BYTE"):
    return _map(xp, len if unit == "BYTE" else _utf8_chars, x, "int32")


@_ragged_elementwise
def lower(input, encoding="", name=None):  # noqa: A002 -- TensorFlow's argument name
    """Lowercases ASCII letters (all letters with `encoding="utf-8"`).

    Example:
        >>> tl.strings.lower(["Hello"]).numpy()
        array([b'hello'], dtype=object)
    """
    return apply("StringLower", _strings("StringLower", input), encoding=encoding.lower())


@_ragged_elementwise
def upper(input, encoding="", name=None):  # noqa: A002
    """Uppercases ASCII letters (all letters with `encoding="utf-8"`)."""
    return apply("StringUpper", _strings("StringUpper", input), encoding=encoding.lower())


@_ragged_elementwise
def strip(input, name=None):  # noqa: A002
    """Removes leading and trailing whitespace."""
    return apply("StringStrip", _strings("StringStrip", input))


@_ragged_elementwise
def length(input, unit="BYTE", name=None):  # noqa: A002
    """The length of each string, in bytes (`unit="BYTE"`) or UTF-8 characters (`"UTF8_CHAR"`).

    Example:
        >>> tl.strings.length("héllo", unit="UTF8_CHAR").numpy()
        5
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return apply("StringLength", _strings("StringLength", input), unit=unit)


def _substr_infer(x, pos, len_, unit="BYTE"):
    return spec(x.shape, _dt.string)


def _utf8_offsets(s):
    return [i for i, b in enumerate(s) if b & 0xC0 != 0x80] + [len(s)]


def _substr_one(s, p, n, unit):
    offsets = _utf8_offsets(s) if unit == "UTF8_CHAR" else None
    size = len(offsets) - 1 if offsets else len(s)
    if p < 0:
        p += size
    if p < 0 or p > size:
        raise ValueError(f"position {p} is out of range for a string of length {size}")
    end = min(size, p + n)
    if offsets:
        return s[offsets[p]:offsets[end]]
    return s[p:end]


@defop("Substr", infer=_substr_infer, differentiable=False, host=True)
def _substr(xp, x, pos, len_, unit="BYTE"):
    x, pos, len_ = xp.broadcast_arrays(x, pos, len_)
    out = xp.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (s, p, n) in enumerate(zip(x.reshape(-1), pos.reshape(-1), len_.reshape(-1))):
        flat[i] = _substr_one(s, int(p), int(n), unit)
    return out


@_ragged_elementwise
def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002
    """Substrings starting at `pos` (negative counts from the end), `len` long, in bytes or
    UTF-8 characters; a position past the end is an InvalidArgumentError, as TensorFlow.

    Example:
        >>> tl.strings.substr("hello", 1, 3).numpy()
        b'ell'
    """
    x = _strings("Substr", input)
    return apply("Substr", x, convert_to_tensor(pos, dtype_hint=_dt.int32),
                 convert_to_tensor(len, dtype_hint=_dt.int32), unit=unit)


def _regex(pattern):
    return _re.compile(pattern.encode("utf-8") if isinstance(pattern, str) else pattern)


def _re2_rewrite(rewrite):
    """TensorFlow's RE2 rewrite (`\\1`) as Python's replacement (`\\g<1>`)."""
    if isinstance(rewrite, str):
        rewrite = rewrite.encode("utf-8")
    return _re.sub(rb"\\(\d)", rb"\\g<\1>", rewrite.replace(b"\\\\", b"\\\\\\\\"))


@defop("StaticRegexReplace", infer=_same("StaticRegexReplace"), differentiable=False, host=True)
def _regex_replace(xp, x, pattern, rewrite, replace_global=True):
    r = _regex(pattern)
    rw = _re2_rewrite(rewrite)
    return _map(xp, lambda s: r.sub(rw, s, count=0 if replace_global else 1), x)


@defop("StaticRegexFullMatch", infer=_same("StaticRegexFullMatch", _dt.bool), differentiable=False, host=True)
def _regex_full_match(xp, x, pattern):
    r = _regex(pattern)
    return _map(xp, lambda s: r.fullmatch(s) is not None, x, bool)


@_ragged_elementwise
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Replaces matches of the regular expression `pattern` with `rewrite` (`\\1` groups).

    Example:
        >>> tl.strings.regex_replace("a1b22", "[0-9]+", "#").numpy()
        b'a#b#'
    """
    return apply("StaticRegexReplace", _strings("StaticRegexReplace", input), pattern=pattern,
                 rewrite=rewrite, replace_global=replace_global)


@_ragged_elementwise
def regex_full_match(input, pattern, name=None):  # noqa: A002
    """True where the whole string matches `pattern`."""
    return apply("StaticRegexFullMatch", _strings("StaticRegexFullMatch", input), pattern=pattern)


def _to_number_infer(x, out_type):
    return spec(x.shape, out_type)


def _parse(s, out_type):
    text = s.decode("utf-8").strip()
    try:
        if out_type.is_integer:
            v = int(text)
            if not out_type.min <= v <= out_type.max:
                raise ValueError
            return v
        return float(text)
    except ValueError:
        raise ValueError(f"StringToNumberOp could not correctly convert string: {text}") from None


@defop("StringToNumber", infer=_to_number_infer, differentiable=False, host=True)
def _to_number(xp, x, out_type):
    return _map(xp, lambda s: _parse(s, out_type), x, out_type.np)


@_ragged_elementwise
def to_number(input, out_type=_dt.float32, name=None):  # noqa: A002
    """Parses each string as a number of `out_type`; an unparsable string is an
    InvalidArgumentError.

    Example:
        >>> tl.strings.to_number(["1.5", "2"]).numpy()
        array([1.5, 2. ], dtype=float32)
    """
    return apply("StringToNumber", _strings("StringToNumber", input), out_type=_dt.as_dtype(out_type))


def _as_string_infer(x, **_):
    if x.dtype is _dt.string:
        raise TypeError("AsString takes numbers and bools, not strings")
    return spec(x.shape, _dt.string)


def _format_number(v, precision, scientific, shortest, width, fill):
    if isinstance(v, (bool,)) or str(type(v)) == "<class 'numpy.bool'>" or type(v).__name__ == "bool_":
        text = "true" if v else "false"
    elif hasattr(v, "is_integer") and not isinstance(v, int) and type(v).__name__.startswith("float"):
        if shortest:
            text = f"{v:g}"
        elif scientific:
            text = f"{v:.{precision if precision >= 0 else 6}e}"
        else:
            text = f"{v:.{precision if precision >= 0 else 6}f}"
    else:
        text = str(int(v))
    if width > 0:
        text = text.rjust(width, fill or " ")
    return text.encode("ascii")


@defop("AsString", infer=_as_string_infer, differentiable=False, host=True)
def _as_string(xp, x, precision=-1, scientific=False, shortest=False, width=-1, fill=""):
    return _map(xp, lambda v: _format_number(v, precision, scientific, shortest, width, fill), x)


@_ragged_elementwise
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="",  # noqa: A002
              name=None):
    """Formats each number as a string (floats with 6 decimals unless told, as TensorFlow).

    Example:
        >>> tl.strings.as_string([1, 2]).numpy()
        array([b'1', b'2'], dtype=object)
    """
    return apply("AsString", convert_to_tensor(input), precision=precision, scientific=scientific,
                 shortest=shortest, width=width, fill=fill)


# ------------------------------------------------------------------ joining


def _join_infer(*xs, separator=""):
    shape = TensorShape(())
    for x in xs:
        if x.dtype is not _dt.string:
            raise TypeError(f"StringJoin takes string tensors, got {x.dtype.name}")
        shape = broadcast_shapes(shape, x.shape)
    return spec(shape, _dt.string)


@defop("StringJoin", infer=_join_infer, differentiable=False, host=True)
def _join(xp, *xs, separator=""):
    sep = separator.encode("utf-8")
    arrays = xp.broadcast_arrays(*xs)
    out = xp.empty(arrays[0].shape, dtype=object)
    flat = out.reshape(-1)
    for i, parts in enumerate(zip(*(a.reshape(-1) for a in arrays))):
        flat[i] = sep.join(parts)
    return out


def join(inputs, separator="", name=None):
    """Joins string tensors elementwise (broadcasting), `separator` between them.

    Example:
        >>> tl.strings.join(["a", "b"], separator="-").numpy()
        b'a-b'
    """
    return apply("StringJoin", *[_strings("StringJoin", x) for x in inputs], separator=separator)


def _reduce_join_infer(x, axis, keepdims, separator):
    rank = x.shape.rank
    if rank is None:
        return spec(None, _dt.string)
    axes = range(rank) if axis is None else [a % rank for a in axis]
    dims = [1 if i in axes else d for i, d in enumerate(x.shape.as_list())] if keepdims else \
        [d for i, d in enumerate(x.shape.as_list()) if i not in axes]
    return spec(dims, _dt.string)


@defop("ReduceJoin", infer=_reduce_join_infer, differentiable=False, host=True)
def _reduce_join(xp, x, axis, keepdims, separator):
    sep = separator.encode("utf-8")
    axes = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in axis)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = xp.transpose(x, kept + list(axes)).reshape([x.shape[i] for i in kept] + [-1])
    out = _map(xp, lambda row: None, moved[..., 0] if moved.shape[-1] else
               xp.empty(moved.shape[:-1], dtype=object))
    flat, rows = out.reshape(-1), moved.reshape(-1, moved.shape[-1])
    for i in range(flat.size):
        flat[i] = sep.join(rows[i])
    if keepdims:
        out = out.reshape([1 if i in axes else d for i, d in enumerate(x.shape)])
    return out


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins the strings along `axis` (all axes when None).

    Example:
        >>> tl.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1).numpy()
        array([b'ab', b'cd'], dtype=object)
    """
    if axis is not None:
        axis = [int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    return apply("ReduceJoin", _strings("ReduceJoin", inputs), axis=axis, keepdims=keepdims,
                 separator=separator)


# ------------------------------------------------------------------ splitting (ragged results)


@defop("StringSplitV2", infer=_ragged_infer(_dt.string), differentiable=False, host=True, num_outputs=2)
def _split(xp, x, sep, maxsplit):
    sep = None if sep is None else sep.encode("utf-8")
    if sep is None:
        return _ragged(xp, x, lambda s: s.split(None, maxsplit) if maxsplit >= 0 else s.split())
    return _ragged(xp, x, lambda s: s.split(sep, maxsplit))


def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """Splits each string of a vector at `sep` (runs of whitespace when None) into a
    RaggedTensor of rows; a scalar gives a vector.

    Example:
        >>> tl.strings.split(["a b", "c"]).to_list()
        [[b'a', b'b'], [b'c']]
    """
    x = _strings("StringSplitV2", input)
    if isinstance(sep, bytes):
        sep = sep.decode("utf-8")
    if sep == "":
        raise ValueError("split: sep must not be empty; use tl.strings.bytes_split")
    values, splits = apply("StringSplitV2", x, sep=sep, maxsplit=maxsplit)
    return _wrap_ragged(x, values, splits)


def _utf8_pieces(s):
    offsets = _utf8_offsets(s)
    return [s[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


@defop("StringCharSplit", infer=_ragged_infer(_dt.string), differentiable=False, host=True, num_outputs=2)
def _char_split(xp, x, unit, errors="replace", replacement_char=65533):
    if unit == "BYTE":
        return _ragged(xp, x, lambda s: [bytes([b]) for b in s])
    return _ragged(xp, x, lambda s: [chr(c).encode("utf-8") for c in _code_points(
        s, "utf-8", errors, replacement_char, "unicode_split")])


def bytes_split(input, name=None):  # noqa: A002
    """Splits each string into its bytes (ragged for a vector)."""
    x = _strings("StringCharSplit", input)
    return _wrap_ragged(x, *apply("StringCharSplit", x, unit="BYTE"))


def unicode_split(input, input_encoding="UTF-8", errors="replace", replacement_char=65533,  # noqa: A002
                  name=None):
    """Splits each UTF-8 string into its characters (ragged for a vector)."""
    x = _strings("StringCharSplit", input)
    _check_errors(errors)
    return _wrap_ragged(x, *apply("StringCharSplit", x, unit="UTF8_CHAR", errors=errors,
                                  replacement_char=int(replacement_char)))


def _codec(encoding):
    return {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}[encoding.upper()]


def _check_errors(errors):
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"errors must be 'strict', 'replace' or 'ignore', got {errors!r}")


def _code_points(s, codec, errors, replacement_char, op):
    """The code points of the bytes `s`: an invalid sequence is an InvalidArgumentError
    (strict), `replacement_char` (replace) or dropped (ignore), as TensorFlow's ops."""
    out = []
    at = 0
    while True:
        try:
            text = s[at:].decode(codec)
        except UnicodeDecodeError as e:
            if errors == "strict":
                raise InvalidArgumentError(f"{op}: invalid {codec.upper()} at byte "
                                           f"{at + e.start}: {s[at + e.start:at + e.end]!r}"
                                           ) from None
            out.extend(ord(c) for c in s[at:at + e.start].decode(codec))
            if errors == "replace":
                out.append(replacement_char)
            at += e.end
            continue
        out.extend(ord(c) for c in text)
        return out


@defop("UnicodeDecode", infer=_ragged_infer(_dt.int32), differentiable=False, host=True, num_outputs=2)
def _unicode_decode(xp, x, input_encoding, errors, replacement_char):
    codec = _codec(input_encoding)
    return _ragged(xp, x, lambda s: _code_points(s, codec, errors, replacement_char,
                                                 "unicode_decode"), "int32")


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """The code points of each string (ragged int32 for a vector).

    Example:
        >>> tl.strings.unicode_decode("hé", "UTF-8").numpy()
        array([104, 233], dtype=int32)
    """
    x = _strings("UnicodeDecode", input)
    return _wrap_ragged(x, *apply("UnicodeDecode", x, input_encoding=input_encoding, errors=errors,
                                  replacement_char=replacement_char))


def _encode_infer(values, splits, output_encoding):
    return spec([None if splits.shape[0] is None else splits.shape[0] - 1], _dt.string)


@defop("UnicodeEncode", infer=_encode_infer, differentiable=False, host=True)
def _unicode_encode(xp, values, splits, output_encoding, errors="replace",
                    replacement_char=65533):
    codec = _codec(output_encoding)

    def char(c):
        if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF:
            return chr(c)
        if errors == "strict":
            raise InvalidArgumentError(f"unicode_encode: {c} is not a valid code point")
        return "" if errors == "ignore" else chr(replacement_char)
    out = xp.empty(len(splits) - 1, dtype=object)
    for i in range(len(out)):
        out[i] = "".join(char(int(c)) for c in values[splits[i]:splits[i + 1]]).encode(codec)
    return out


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   name=None):
    """Encodes code points (a vector, or rows of a RaggedTensor/matrix) as strings; an
    invalid code point is an error (strict), `replacement_char` (replace) or dropped."""
    _check_errors(errors)
    attrs = dict(output_encoding=output_encoding, errors=errors,
                 replacement_char=int(replacement_char))
    if isinstance(input, RaggedTensor):
        return apply("UnicodeEncode", input.values, input.row_splits, **attrs)
    x = convert_to_tensor(input, dtype_hint=_dt.int32)
    if x.shape.rank == 1:
        splits = convert_to_tensor(np.array([0, x.shape[0]], dtype=np.int64))
        return apply("UnicodeEncode", x, splits, **attrs)[0]
    return unicode_encode(RaggedTensor.from_tensor(x), output_encoding, errors, replacement_char)


@defop("UnicodeTranscode", infer=_same("UnicodeTranscode"), differentiable=False, host=True)
def _transcode(xp, x, input_encoding, output_encoding, errors, replacement_char):
    def one(s):
        text = s.decode(_codec(input_encoding), errors="strict" if errors == "strict" else "replace")
        text = text.replace("\ufffd", chr(replacement_char))
        return text.encode(_codec(output_encoding))
    return _map(xp, one, x)


@_ragged_elementwise
def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Re-encodes each string from `input_encoding` to `output_encoding`."""
    return apply("UnicodeTranscode", _strings("UnicodeTranscode", input),
                 input_encoding=input_encoding, output_encoding=output_encoding, errors=errors,
                 replacement_char=replacement_char)


# ------------------------------------------------------------------ hashing


@defop("StringToHashBucketFast", infer=_same("StringToHashBucketFast", _dt.int64),
       differentiable=False, host=True)
def _hash_fast(xp, x, num_buckets):
    return _map(xp, lambda s: fingerprint64(s) % num_buckets, x, "int64")


@_ragged_elementwise
def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """Each string's FarmHash Fingerprint64 modulo `num_buckets`: the same buckets as
    TensorFlow's.

    Example:
        >>> int(tl.strings.to_hash_bucket_fast("hello", 10))
        3
    """
    if num_buckets < 1:
        raise ValueError(f"num_buckets must be >= 1, got {num_buckets}")
    return apply("StringToHashBucketFast", _strings("StringToHashBucketFast", input),
                 num_buckets=int(num_buckets))


@defop("StringToHashBucketStrong", infer=_same("StringToHashBucketStrong", _dt.int64),
       differentiable=False, host=True)
def _hash_strong(xp, x, num_buckets, key):
    return _map(xp, lambda s: siphash24(key[0], key[1], s) % num_buckets, x, "int64")


@_ragged_elementwise
def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """Each string's SipHash-2-4 under `key` (two integers) modulo `num_buckets`: the same
    buckets as TensorFlow's; slower than `to_hash_bucket_fast`, but an adversary who does not
    know the key cannot choose strings that collide.

    Example:
        >>> int(tl.strings.to_hash_bucket_strong("hello", 10, [1, 2]))
        2
    """
    if num_buckets < 1:
        raise ValueError(f"num_buckets must be >= 1, got {num_buckets}")
    key = [int(k) for k in key]
    if len(key) != 2 or not all(-2 ** 63 <= k < 2 ** 63 for k in key):
        raise ValueError(f"to_hash_bucket_strong: key must be two int64 integers, got {key}")
    return apply("StringToHashBucketStrong", _strings("StringToHashBucketStrong", input),
                 num_buckets=int(num_buckets), key=key)


# ------------------------------------------------------------------ ngrams


def _ngrams_infer(values, splits, widths, separator, pad):
    return spec([None], _dt.string), spec([None], _dt.int64)


@defop("StringNGrams", infer=_ngrams_infer, differentiable=False, host=True, num_outputs=2)
def _ngrams(xp, values, splits, widths, separator, pad):
    sep = separator.encode("utf-8")
    rows = []
    for i in range(len(splits) - 1):
        grams = []
        for width in widths:
            row = list(values[splits[i]:splits[i + 1]])
            if pad is not None:
                row = [pad[0].encode()] * (width - 1) + row + [pad[1].encode()] * (width - 1)
            grams += [sep.join(row[j:j + width]) for j in range(len(row) - width + 1)]
        rows.append(grams)
    counts = [len(r) for r in rows]
    out_splits = xp.zeros(len(rows) + 1, dtype="int64")
    out_splits[1:] = xp.cumsum(counts) if counts else []
    out = xp.empty(int(out_splits[-1]), dtype=object)
    out[:] = [g for r in rows for g in r]
    return out, out_splits


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """Joins each run of `ngram_width` neighbouring strings of the last axis (rows of a
    RaggedTensor or a matrix; a vector is one row); a tuple of widths gives all of them,
    width by width.

    Example:
        >>> tl.strings.ngrams(["a", "b", "c"], 2).numpy()
        array([b'a b', b'b c'], dtype=object)
    """
    if isinstance(pad_values, (str, bytes)):
        pad_values = (pad_values, pad_values)
    pad = None if pad_values is None else tuple(p.decode() if isinstance(p, bytes) else p
                                                for p in pad_values)
    widths = tuple(int(w) for w in ngram_width) if isinstance(ngram_width, (list, tuple)) \
        else (int(ngram_width),)
    if isinstance(data, RaggedTensor):
        values, splits = apply("StringNGrams", data.values, data.row_splits, widths=widths,
                               separator=separator, pad=pad)
        return RaggedTensor.from_row_splits(values, splits)
    x = _strings("StringNGrams", data)
    if x.shape.rank == 1:
        splits = convert_to_tensor(np.array([0, x.shape[0]], dtype=np.int64))
        return apply("StringNGrams", x, splits, widths=widths, separator=separator, pad=pad)[0]
    return ngrams(RaggedTensor.from_tensor(x), ngram_width, separator, pad_values).to_tensor()


# ------------------------------------------------------------------ format


def _format_infer(*xs, template, placeholder):
    return spec([], _dt.string)


def _summarize(a):
    if a.dtype == object:
        a = np.vectorize(lambda b: b.decode("utf-8", "replace"), otypes=[object])(a) if a.size else a
        text = np.array2string(a, separator=" ", formatter={"all": lambda v: f'"{v}"'})
    else:
        text = np.array2string(a, separator=" ") if a.ndim else str(a.item())
    return text


@defop("StringFormat", infer=_format_infer, differentiable=False, host=True)
def _format(xp, *xs, template, placeholder):
    parts = template.split(placeholder)
    text = parts[0] + "".join(_summarize(x) + p for x, p in zip(xs, parts[1:]))
    out = xp.empty((), dtype=object)
    out[()] = text.encode("utf-8")
    return out


def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    """A scalar string: `template` with each `placeholder` replaced by an input's value.

    Example:
        >>> tl.strings.format("x = {}", [tl.constant(3)]).numpy()
        b'x = 3'
    """
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"format: the template has {template.count(placeholder)} placeholders "
                         f"but {len(inputs)} inputs came")
    return apply("StringFormat", *[convert_to_tensor(x) for x in inputs], template=template,
                 placeholder=placeholder)


# ------------------------------------------------------------------ vocabulary lookups


_TABLES = {}  # id(vocabulary tuple) -> (the tuple, token -> index): built once per vocabulary


def _table(vocabulary, first_index):
    found = _TABLES.get(id(vocabulary))
    if found is None or found[0] is not vocabulary:
        if len(_TABLES) > 64:
            _TABLES.clear()
        index = {t.encode("utf-8"): first_index + i for i, t in enumerate(vocabulary)}
        found = _TABLES[id(vocabulary)] = (vocabulary, index)
    return found[1]


# ------------------------------------------------------------------ CSV records (tl.io.decode_csv)

_CSV_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.int64, _dt.string)
_CSV_INT = _re.compile(rb"[+-]?[0-9]+")


def _decode_csv_infer(records, *defaults, field_delim, use_quote_delim, na_value, select_cols):
    if records.dtype is not _dt.string:
        raise TypeError(f"DecodeCSV: records must be strings, got {records.dtype.name}")
    for i, d in enumerate(defaults):
        if d.dtype not in _CSV_TYPES:
            raise TypeError(f"DecodeCSV: record_defaults[{i}] has dtype {d.dtype.name}; expected "
                            "one of float32, float64, int32, int64, string")
        if d.shape.rank not in (None, 0, 1) or (d.shape.rank == 1 and d.shape[0] not in (None, 0, 1)):
            raise ValueError(f"DecodeCSV: record_defaults[{i}] must hold one value or none, "
                             f"got shape {d.shape}")
    return tuple(spec(records.shape, d.dtype) for d in defaults)


def _csv_fields(line, delim, quoted, record):
    """The fields of one record (bytes), quotes resolved as TensorFlow's DecodeCSV does."""
    fields, i, n = [], 0, len(line)
    while True:
        if quoted and i < n and line[i:i + 1] == b'"':
            out, i = bytearray(), i + 1
            while True:
                if i >= n:
                    raise InvalidArgumentError(
                        f"Quoted field has to end with quote followed by delim or end "
                        f"(record {record})", op="DecodeCSV")
                if line[i:i + 1] == b'"':
                    if line[i + 1:i + 2] == b'"':
                        out += b'"'
                        i += 2
                        continue
                    i += 1
                    break
                out += line[i:i + 1]
                i += 1
            if i < n and line[i:i + 1] != delim:
                raise InvalidArgumentError(
                    f"Quoted field has to end with quote followed by delim or end (record {record})",
                    op="DecodeCSV")
            fields.append(bytes(out))
        else:
            j = line.find(delim, i)
            j = n if j < 0 else j
            field = line[i:j]
            if quoted and b'"' in field:
                raise InvalidArgumentError(f"Unquoted fields cannot have quotes inside (record "
                                           f"{record}): {field!r}", op="DecodeCSV")
            fields.append(field)
            i = j
        if i >= n:
            return fields
        i += 1  # past the delimiter
        if i == n:
            fields.append(b"")
            return fields


def _csv_value(field, dtype, column, record):
    text = field.strip()
    try:
        if dtype.is_integer:
            if not _CSV_INT.fullmatch(text):
                raise ValueError
            v = int(text)
            if not dtype.min <= v <= dtype.max:
                raise ValueError
            return v
        if b"_" in text:
            raise ValueError
        return float(text)
    except ValueError:
        raise InvalidArgumentError(f"Field {column} in record {record} is not a valid "
                                   f"{dtype.name}: {field.decode('utf-8', 'replace')}",
                                   op="DecodeCSV") from None


@defop("DecodeCSV", infer=_decode_csv_infer, differentiable=False, host=True, num_outputs=None)
def _decode_csv(xp, records, *defaults, field_delim, use_quote_delim, na_value, select_cols):
    delim, na = field_delim.encode("utf-8"), na_value.encode("utf-8")
    dtypes = [_dt.from_numpy(d.dtype) if d.dtype != object else _dt.string for d in defaults]
    outs = [xp.empty(records.shape, dtype=object if t is _dt.string else t.np) for t in dtypes]
    flats = [o.reshape(-1) for o in outs]
    for r, line in enumerate(records.reshape(-1)):
        fields = _csv_fields(line, delim, use_quote_delim, r)
        if select_cols is not None:
            if select_cols and select_cols[-1] >= len(fields):
                raise InvalidArgumentError(f"Expect {select_cols[-1] + 1} fields but have "
                                           f"{len(fields)} in record {r}", op="DecodeCSV")
            fields = [fields[c] for c in select_cols]
        elif len(fields) != len(defaults):
            raise InvalidArgumentError(f"Expect {len(defaults)} fields but have {len(fields)} in "
                                       f"record {r}", op="DecodeCSV")
        for c, (field, default, t) in enumerate(zip(fields, defaults, dtypes)):
            if field == b"" or (na and field == na):
                if default.size == 0:
                    raise InvalidArgumentError(f"Field {c} is required but missing in record "
                                               f"{r}!", op="DecodeCSV")
                flats[c][r] = default.reshape(-1)[0]
            else:
                flats[c][r] = field if t is _dt.string else _csv_value(field, t, c, r)
    return tuple(outs)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Parses CSV `records` (a string tensor, one record per element) into one tensor per
    column, shaped as `records`, with the dtype of that column's `record_defaults` entry (a
    one-value default fills empty fields; an empty one makes the field required).

    Example:
        >>> n, x, s = tl.io.decode_csv(["1,2.5,a", "3,,b"], [[0], [0.0], [""]])
        >>> x.numpy()
        array([2.5, 0. ], dtype=float32)
    """
    x = _strings("DecodeCSV", records)
    if len(field_delim) != 1:
        raise ValueError(f"decode_csv: field_delim must be one character, got {field_delim!r}")
    defaults = [d if hasattr(d, "dtype") and not isinstance(d, np.ndarray) else
                convert_to_tensor(d if not isinstance(d, (list, tuple)) or d else
                                  np.zeros(0, np.float32))
                for d in record_defaults]
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if any(b <= a for a, b in zip(select_cols, select_cols[1:])) or \
                (select_cols and select_cols[0] < 0):
            raise ValueError("decode_csv: select_cols must be non-negative and strictly increasing")
        if len(select_cols) != len(defaults):
            raise ValueError(f"decode_csv: {len(select_cols)} select_cols but "
                             f"{len(defaults)} record_defaults")
    out = apply("DecodeCSV", x, *[convert_to_tensor(d) for d in defaults],
                field_delim=field_delim, use_quote_delim=bool(use_quote_delim),
                na_value=na_value, select_cols=select_cols)
    return list(out)


def _lookup_infer(x, vocabulary, num_oov, mask_token):
    if x.dtype is not _dt.string:
        raise TypeError(f"LookupTableFind takes strings, got {x.dtype.name}")
    return spec(x.shape, _dt.int64)


@defop("LookupTableFind", infer=_lookup_infer, differentiable=False, host=True)
def _lookup(xp, x, vocabulary, num_oov, mask_token):
    first_oov = 0 if mask_token is None else 1
    index = _table(vocabulary, first_oov + num_oov)
    mask = None if mask_token is None else mask_token.encode("utf-8")

    def one(s):
        if s == mask:
            return 0
        found = index.get(s)
        if found is not None:
            return found
        return first_oov + (fingerprint64(s) % num_oov if num_oov > 1 else 0)
    return _map(xp, one, x, "int64")


def lookup(x, vocabulary, num_oov=1, mask_token=None):
    """int64 indices of the strings `x` in `vocabulary` (a tuple of str): the mask token (if
    any) is 0, then `num_oov` indices that out-of-vocabulary strings hash into (FarmHash, as
    Keras), then the vocabulary in order."""
    return apply("LookupTableFind", _strings("LookupTableFind", x), vocabulary=tuple(vocabulary),
                 num_oov=int(num_oov), mask_token=mask_token)


def _token_counts_infer(values, splits, depth):
    rows = None if splits.shape[0] is None else splits.shape[0] - 1
    return spec([rows, depth], _dt.float32)


@defop("TokenCounts", infer=_token_counts_infer, differentiable=False, host=True)
def _token_counts(xp, values, splits, depth):
    rows = len(splits) - 1
    out = xp.zeros((rows, depth), dtype="float32")
    row_of = xp.repeat(xp.arange(rows), xp.diff(splits))
    keep = values < depth
    xp.add.at(out, (row_of[keep], values[keep]), 1.0)
    return out


def token_counts(values, row_splits, depth):
    """float32 [rows, depth]: how often each index in `values` occurs in each row."""
    return apply("TokenCounts", values, row_splits, depth=int(depth))
