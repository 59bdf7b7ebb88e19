"""Parsing serialized `tf.train.Example`s: `tl.io.parse_example`, `parse_single_example` and
their feature configurations (`FixedLenFeature`, `VarLenFeature`, `FixedLenSequenceFeature`);
the byte-level decoders of `tl.io`: `decode_raw`, `encode_base64`, `decode_base64`; and
`serialize_tensor` / `parse_tensor` (TensorFlow's TensorProto bytes).

Owns: the `ParseExample` op (host only, not differentiable): one scalar or vector of serialized
Examples in, and for every feature its outputs: a dense tensor shaped batch + shape (batch +
[longest] + shape for a sequence feature, padded with its default), or the indices, values and
dense shape of a SparseTensor (for a VarLenFeature). The Examples are decoded with the protocol
buffer classes of trainlib/graph/example_proto.py.
Invariant: the same rules as TensorFlow's ParseExampleV2: a missing required feature, a feature
of another kind than asked, or a value count that does not fit the shape raise
InvalidArgumentError naming the op, the key and the example's index.
"""
import base64
import collections
import re

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, op_error
from ..example_proto import DATA_TYPES, message_class
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import TensorShape
from .sparse import SparseTensor

__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "parse_example",
           "parse_single_example", "decode_raw", "encode_base64", "decode_base64", "serialize_tensor", "parse_tensor"]


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature with a fixed number of values, parsed into a dense tensor of `shape`.

    Args:
        shape: the shape of the feature in one example.
        dtype: tl.float32, tl.int64 or tl.string.
        default_value: used where an example lacks the feature (reshaped to `shape`); None
            makes the feature required.
    """

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values, parsed into a tl.sparse.SparseTensor."""


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature holding a sequence of items of `shape`, parsed into a dense tensor of
    [longest sequence] + shape, shorter ones padded with `default_value` (0 or b"").

    Only `allow_missing=True` is supported in Examples (as TensorFlow).
    """

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


_WEB_SAFE = re.compile(rb"[A-Za-z0-9_-]*={0,2}")
_KINDS = {_dt.float32: "float_list", _dt.int64: "int64_list", _dt.string: "bytes_list"}
_TYPE_NAMES = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _parse_infer(serialized, *defaults, keys, kinds, dtypes, shapes):
    if serialized.dtype is not _dt.string:
        raise TypeError(f"ParseExample: serialized must be strings, got {serialized.dtype.name}")
    if serialized.shape.rank not in (None, 0, 1):
        raise ValueError(f"ParseExample: serialized must be a scalar or a vector, got shape "
                         f"{serialized.shape}")
    batch = [] if serialized.shape.rank == 0 else [serialized.shape[0] if
                                                   serialized.shape.rank else None]
    outs = []
    for kind, dtype, shape in zip(kinds, dtypes, shapes):
        if kind == "var":
            rank = len(batch) + 1
            outs += [spec([None, rank], _dt.int64), spec([None], dtype), spec([rank], _dt.int64)]
        else:
            outs.append(spec(batch + ([None] if kind == "seq" else []) + list(shape), dtype))
    return tuple(outs)


def _values(feature, key, dtype, index):
    kind = feature.WhichOneof("kind")
    want = _KINDS[dtype]
    if kind is None:
        return []
    if kind != want:
        raise InvalidArgumentError(
            f"Name: <unknown>, Key: {key}, Index: {index}.  Data types don't match. Data type: "
            f"{_TYPE_NAMES[kind]} but expected type: {_TYPE_NAMES[want]}", op="ParseExample")
    return list(getattr(feature, kind).value)


@defop("ParseExample", infer=_parse_infer, differentiable=False, host=True, num_outputs=None)
def _parse_example(xp, serialized, *defaults, keys, kinds, dtypes, shapes):
    example_class = message_class("Example")
    records = serialized.reshape(-1)
    examples = []
    for i, raw in enumerate(records):
        try:
            examples.append(example_class.FromString(bytes(raw)).features.feature)
        except Exception:  # noqa: BLE001 - protobuf's DecodeError and kin
            raise InvalidArgumentError(f"Could not parse example input, value: {bytes(raw)[:40]!r}"
                                       f" (index {i})", op="ParseExample") from None
    batch = list(serialized.shape)
    outs, d = [], 0
    for key, kind, dtype, shape in zip(keys, kinds, dtypes, shapes):
        np_type = object if dtype is _dt.string else dtype.np
        found = [_values(f[key], key, dtype, i) if key in f else None
                 for i, f in enumerate(examples)]
        if kind == "var":
            lists = [v or [] for v in found]
            longest = max((len(v) for v in lists), default=0)
            rows = [(i, j) for i, v in enumerate(lists) for j in range(len(v))]
            index = xp.asarray([(r[1],) if not batch else r for r in rows],
                               dtype=xp.int64).reshape(len(rows), len(batch) + 1)
            values = xp.empty(len(rows), dtype=np_type)
            values[...] = [x for v in lists for x in v] if rows else values
            outs += [index, values, xp.asarray(batch + [longest], dtype=xp.int64)]
            continue
        default = defaults[d]
        d += 1
        item = _size(shape)
        if kind == "fixed":
            out = xp.empty((len(examples), item), dtype=np_type)
            for i, v in enumerate(found):
                if not v and v is not None and item != 0:
                    v = None  # a Feature with no values counts as missing
                if v is None:
                    if default.size == 0 and item != 0:
                        raise InvalidArgumentError(
                            f"Name: <unknown>, Feature: {key} (data type: "
                            f"{_TYPE_NAMES[_KINDS[dtype]]}) is required but could not be found "
                            f"(example {i})", op="ParseExample")
                    out[i] = default.reshape(-1)
                elif len(v) != item:
                    raise InvalidArgumentError(
                        f"Name: <unknown>, Key: {key}, Index: {i}.  Number of "
                        f"{_TYPE_NAMES[_KINDS[dtype]]} values != expected.  Values size: {len(v)} "
                        f"but output shape: {list(shape)}", op="ParseExample")
                else:
                    out[i] = v
            outs.append(out.reshape(batch + list(shape)))
            continue
        lists = [v or [] for v in found]     # "seq": allow_missing sequences, padded
        for i, v in enumerate(lists):
            if item and len(v) % item:
                raise InvalidArgumentError(
                    f"Name: <unknown>, Key: {key}, Index: {i}.  Number of "
                    f"{_TYPE_NAMES[_KINDS[dtype]]} values is not a multiple of stride length. "
                    f"Saw {len(v)} values but output shape is: {list(shape)}", op="ParseExample")
        longest = max((len(v) // item for v in lists), default=0) if item else 0
        out = xp.empty((len(examples), longest * item), dtype=np_type)
        out[...] = default.reshape(-1)[0] if default.size else (b"" if np_type is object else 0)
        for i, v in enumerate(lists):
            out[i, :len(v)] = v
        outs.append(out.reshape(batch + [longest] + list(shape)))
    return tuple(outs)


def _config(key, feature):
    where = f"parse_example: feature {key!r}"
    if not isinstance(key, str):
        raise TypeError(f"parse_example: feature keys must be strings, got {key!r}")
    if not isinstance(feature, (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature)):
        raise TypeError(f"{where}: expected a FixedLenFeature, VarLenFeature or "
                        f"FixedLenSequenceFeature, got {type(feature).__name__}")
    dtype = _dt.as_dtype(feature.dtype)
    if dtype not in _KINDS:
        raise ValueError(f"{where}: unsupported dtype {dtype.name}; expected float32, int64 or "
                         "string")
    if isinstance(feature, VarLenFeature):
        return "var", dtype, (), None
    shape = TensorShape(feature.shape)
    if shape.rank is None or any(d is None for d in shape.as_list()):
        raise ValueError(f"{where}: the shape must be fully defined, got {shape}")
    if isinstance(feature, FixedLenSequenceFeature):
        if not feature.allow_missing:
            raise ValueError(f"{where}: a FixedLenSequenceFeature in an Example needs "
                             "allow_missing=True")
        kind = "seq"
    else:
        kind = "fixed"
    shape = tuple(shape.as_list())
    if feature.default_value is None:
        default = convert_to_tensor([], dtype=dtype)
    else:
        default = convert_to_tensor(feature.default_value, dtype=dtype)
        want = _size(shape) if kind == "fixed" else None
        if want is not None and default.shape.num_elements() != want:
            raise ValueError(f"{where}: default_value has {default.shape.num_elements()} values, "
                             f"the shape {list(shape)} needs {want}")
        if kind == "seq" and default.shape.num_elements() != 1:
            raise ValueError(f"{where}: a FixedLenSequenceFeature's default_value must be one "
                             "value")
    return kind, dtype, shape, default


def parse_example(serialized, features, example_names=None, name=None):
    """Parses serialized `tl.train.Example`s (a string vector, or a scalar) into a dict: for
    each key of `features`, a dense tensor (FixedLenFeature: batch + shape;
    FixedLenSequenceFeature: batch + [longest] + shape) or a tl.sparse.SparseTensor
    (VarLenFeature: indices [N, 2], dense shape [batch, longest]).

    Example:
        >>> tl.io.parse_example(records, {"x": tl.io.FixedLenFeature([2], tl.float32)})["x"].shape
        TensorShape([3, 2])

    Raises:
        InvalidArgumentError: for a missing required feature, a feature of another kind, or a
            value count that does not fit its shape (naming the key and example).
        ValueError / TypeError: for a bad `features` configuration.
    """
    if not features:
        raise ValueError("parse_example: features must be a non-empty dict")
    x = convert_to_tensor(serialized, dtype=_dt.string) if not hasattr(serialized, "dtype") \
        else convert_to_tensor(serialized)
    if x.dtype is not _dt.string:
        raise op_error(TypeError, "ParseExample", f"serialized must be strings, got {x.dtype.name}")
    keys = sorted(features)
    configs = [_config(k, features[k]) for k in keys]
    outs = apply("ParseExample", x, *[c[3] for c in configs if c[0] != "var"],
                 keys=tuple(keys), kinds=tuple(c[0] for c in configs),
                 dtypes=tuple(c[1] for c in configs), shapes=tuple(c[2] for c in configs))
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    result = {}
    for key, (kind, *_rest) in zip(keys, configs):
        if kind == "var":
            result[key] = SparseTensor(*outs[:3])
            del outs[:3]
        else:
            result[key] = outs.pop(0)
    return result


def parse_single_example(serialized, features, example_names=None, name=None):
    """Parses one serialized `tl.train.Example` (a string scalar): as `parse_example` without
    the batch dimension (a VarLenFeature's indices are [N, 1]).

    Example:
        >>> tl.io.parse_single_example(record, {"id": tl.io.FixedLenFeature([], tl.int64)})
        {'id': <tl.Tensor: shape=(), dtype=int64, numpy=7>}
    """
    x = convert_to_tensor(serialized, dtype=_dt.string) if not hasattr(serialized, "dtype") \
        else convert_to_tensor(serialized)
    if x.shape.rank not in (None, 0):
        raise op_error(ValueError, "ParseExample", f"parse_single_example: serialized must be a "
                       f"scalar, got shape {x.shape}")
    return parse_example(x, features, example_names, name)


# -- raw bytes and base64 (tl.io.decode_raw, tl.io.encode_base64 / decode_base64)

def _string_input(op_name, x):
    x = convert_to_tensor(x, dtype=_dt.string) if not hasattr(x, "dtype") else convert_to_tensor(x)
    if x.dtype is not _dt.string:
        raise op_error(TypeError, op_name, f"expected a string tensor, got {x.dtype.name}")
    return x


def _decode_raw_infer(x, *, out_type, little_endian, fixed_length):
    return spec(list(x.shape) + [None] if x.shape.rank is not None else None, out_type)


@defop("DecodeRaw", infer=_decode_raw_infer, differentiable=False, host=True)
def _decode_raw(xp, x, *, out_type, little_endian, fixed_length):
    np_type = xp.dtype(out_type.np).newbyteorder("<" if little_endian else ">")
    size = np_type.itemsize
    rows = []
    for i, raw in enumerate(x.reshape(-1)):
        raw = bytes(raw)
        if fixed_length is not None:
            raw = raw[:fixed_length].ljust(fixed_length, b"\0")
        if len(raw) % size:
            raise InvalidArgumentError(f"Input to DecodeRaw has length {len(raw)} (element {i}) "
                                       f"that is not a multiple of {size}, the size of "
                                       f"{out_type.name}", op="DecodeRaw")
        if rows and len(raw) != len(rows[0]) * size:
            raise InvalidArgumentError(f"DecodeRaw requires input strings to all be the same size, "
                                       f"but element {i} has size {len(raw)} != "
                                       f"{len(rows[0]) * size}", op="DecodeRaw")
        rows.append(xp.frombuffer(raw, dtype=np_type).astype(out_type.np))
    width = len(rows[0]) if rows else 0
    out = xp.empty((len(rows), width), dtype=out_type.np)
    for i, row in enumerate(rows):
        out[i] = row
    return out.reshape(tuple(x.shape) + (width,))


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Reinterprets the bytes of each string as a vector of `out_type` (all strings the same
    length, a multiple of the type's size; `fixed_length` cuts or zero-pads each to that many
    bytes first). The result has one more dimension than `input_bytes`.

    Example:
        >>> tl.io.decode_raw(b"\\x01\\x00\\x02\\x00", tl.int16).numpy()
        array([1, 2], dtype=int16)
    """
    x = _string_input("DecodeRaw", input_bytes)
    dtype = _dt.as_dtype(out_type)
    if dtype is _dt.string or dtype.np is None:
        raise op_error(TypeError, "DecodeRaw", f"out_type must be a numeric type, got {dtype.name}")
    if fixed_length is not None and int(fixed_length) < 0:
        raise op_error(ValueError, "DecodeRaw", f"fixed_length must be >= 0, got {fixed_length}")
    return apply("DecodeRaw", x, out_type=dtype, little_endian=bool(little_endian),
                 fixed_length=None if fixed_length is None else int(fixed_length))


def _same_strings(x, **attrs):
    return spec(x.shape, _dt.string)


@defop("EncodeBase64", infer=_same_strings, differentiable=False, host=True)
def _encode_base64(xp, x, *, pad):
    out = xp.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, raw in enumerate(x.reshape(-1)):
        text = base64.urlsafe_b64encode(bytes(raw))
        flat[i] = text if pad else text.rstrip(b"=")
    return out


@defop("DecodeBase64", infer=_same_strings, differentiable=False, host=True)
def _decode_base64(xp, x):
    out = xp.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, text in enumerate(x.reshape(-1)):
        text = bytes(text)
        body = text.rstrip(b"=")
        if len(body) % 4 == 1:
            raise InvalidArgumentError(f"Base64 string length cannot be 1 modulo 4 (element {i}: "
                                       f"{text[:40]!r})", op="DecodeBase64")
        if not _WEB_SAFE.fullmatch(text):
            raise InvalidArgumentError(f"Invalid character found in base64 (element {i}: "
                                       f"{text[:40]!r})", op="DecodeBase64")
        flat[i] = base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
    return out


def encode_base64(input, pad=False, name=None):  # noqa: A002 - TensorFlow's name
    """Each string in web-safe base64 (`-` and `_` for `+` and `/`), without `=` padding
    unless `pad`.

    Example:
        >>> tl.io.encode_base64(b"\\xfb\\xff").numpy()
        b'-_8'
    """
    return apply("EncodeBase64", _string_input("EncodeBase64", input), pad=bool(pad))


def decode_base64(input, name=None):  # noqa: A002 - TensorFlow's name
    """The bytes of web-safe base64 strings, padded with `=` or not.

    Raises:
        InvalidArgumentError: for a character outside the web-safe alphabet or a bad length.
    """
    return apply("DecodeBase64", _string_input("DecodeBase64", input))


# -- tensors as TensorProto bytes (tl.io.serialize_tensor / parse_tensor)

_BY_NUMBER = {number: name for name, number in DATA_TYPES.items()}
_VALUE_FIELDS = {"float32": "float_val", "float64": "double_val", "int64": "int64_val",
                 "bool": "bool_val", "string": "string_val", "uint32": "uint32_val",
                 "uint64": "uint64_val", "complex64": "scomplex_val", "complex128": "dcomplex_val",
                 "float16": "half_val"}


def _serialize_infer(x):
    return spec([], _dt.string)


@defop("SerializeTensor", infer=_serialize_infer, differentiable=False, host=True)
def _serialize_tensor(xp, x):
    dtype = _dt.string if x.dtype == object else _dt.from_numpy(x.dtype)
    if dtype.name not in DATA_TYPES:
        raise InvalidArgumentError(f"cannot serialize a {dtype.name} tensor", op="SerializeTensor")
    proto = message_class("TensorProto")(dtype=DATA_TYPES[dtype.name])
    proto.tensor_shape.SetInParent()
    for d in x.shape:
        proto.tensor_shape.dim.add(size=int(d))
    if dtype is _dt.string:
        proto.string_val.extend(bytes(v) for v in x.reshape(-1))
    else:
        proto.tensor_content = xp.ascontiguousarray(x).astype(x.dtype.newbyteorder("<")).tobytes()
    out = xp.empty((), dtype=object)
    out[()] = proto.SerializeToString()
    return out


def _parse_tensor_infer(serialized, *, out_type):
    if serialized.dtype is not _dt.string:
        raise TypeError(f"ParseTensor: serialized must be a string, got {serialized.dtype.name}")
    if serialized.shape.rank not in (None, 0):
        raise ValueError(f"ParseTensor: serialized must be a scalar, got shape {serialized.shape}")
    return spec(None, out_type)


@defop("ParseTensor", infer=_parse_tensor_infer, differentiable=False, host=True)
def _parse_tensor(xp, serialized, *, out_type):
    raw = bytes(serialized.reshape(-1)[0])
    try:
        proto = message_class("TensorProto").FromString(raw)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError and kin
        raise InvalidArgumentError(f"Could not parse `serialized` as TensorProto: {raw[:40]!r}",
                                   op="ParseTensor") from None
    got = _BY_NUMBER.get(proto.dtype)
    if got != out_type.name:
        raise InvalidArgumentError(f"Type mismatch between parsed tensor ({got or proto.dtype}) "
                                   f"and dtype ({out_type.name})", op="ParseTensor")
    shape = tuple(int(d.size) for d in proto.tensor_shape.dim)
    count = _size(shape)
    if out_type is _dt.string:
        values = list(proto.string_val)
        out = xp.empty(count, dtype=object)
        out[...] = (values + values[-1:] * (count - len(values)))[:count] if values else b""
        return out.reshape(shape)
    np_type = xp.dtype(out_type.np)
    if proto.tensor_content:
        flat = xp.frombuffer(proto.tensor_content, dtype=np_type.newbyteorder("<"))
        if flat.size != count:
            raise InvalidArgumentError(f"the tensor content holds {flat.size} values, the shape "
                                       f"{list(shape)} needs {count}", op="ParseTensor")
        return flat.astype(np_type).reshape(shape)
    values = list(getattr(proto, _VALUE_FIELDS.get(out_type.name, "int_val")))
    if out_type.is_complex:
        values = [complex(a, b) for a, b in zip(values[::2], values[1::2])]
    if out_type.name == "float16":   # half_val holds the bits
        values = xp.asarray(values, dtype=xp.uint16).view(np_type).tolist()
    out = xp.zeros(count, dtype=np_type)
    if values and count:   # fewer values than elements: the last one repeats (TensorFlow's rule)
        out[:] = values[-1]
        out[:min(len(values), count)] = values[:count]
    return out.reshape(shape)


def serialize_tensor(tensor, name=None):
    """`tensor` as the bytes of a TensorFlow TensorProto (a scalar string), which
    `parse_tensor` (or TensorFlow's tf.io.parse_tensor) reads back.

    Example:
        >>> tl.io.parse_tensor(tl.io.serialize_tensor(tl.constant([1.0, 2.0])), tl.float32)
        <tl.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return apply("SerializeTensor", convert_to_tensor(tensor))


def parse_tensor(serialized, out_type, name=None):
    """The tensor of a serialized TensorProto (as `serialize_tensor` writes), of dtype
    `out_type`; its shape is known only when it runs.

    Raises:
        InvalidArgumentError: if the bytes are not a TensorProto or hold another dtype.
    """
    return apply("ParseTensor", _string_input("ParseTensor", serialized),
                 out_type=_dt.as_dtype(out_type))
