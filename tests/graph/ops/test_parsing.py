"""tl.io.parse_example / parse_single_example: each feature kind (values, dtypes, shapes),
defaults, padding of sequence features, sparse outputs, use inside tl.function and
Dataset.map, and the errors for missing, mistyped and mis-sized features."""
import base64

import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl


def example(**features):
    def feature(v):
        if isinstance(v, list) and v and isinstance(v[0], bytes):
            return tl.train.Feature(bytes_list=tl.train.BytesList(value=v))
        if isinstance(v, list) and v and isinstance(v[0], float):
            return tl.train.Feature(float_list=tl.train.FloatList(value=v))
        return tl.train.Feature(int64_list=tl.train.Int64List(value=v))
    return tl.train.Example(features=tl.train.Features(
        feature={k: feature(v) for k, v in features.items()})).SerializeToString()


RECORDS = [example(i=[1], f=[0.5, 1.5], s=[b"a"], v=[4, 5, 6], q=[1.0, 2.0, 3.0, 4.0]),
           example(i=[2], f=[2.5, -1.0], v=[], q=[5.0, 6.0]),
           example(i=[3], f=[0.0, 0.0], s=[b"c"], v=[7])]
FEATURES = {"i": tl.io.FixedLenFeature([], tl.int64),
            "f": tl.io.FixedLenFeature([2], tl.float32),
            "s": tl.io.FixedLenFeature([1], tl.string, default_value=[b"-"]),
            "d": tl.io.FixedLenFeature([2, 1], tl.float32, default_value=[[9.0], [8.0]]),
            "v": tl.io.VarLenFeature(tl.int64),
            "q": tl.io.FixedLenSequenceFeature([2], tl.float32, allow_missing=True)}


def _check(out):
    assert out["i"].dtype == tl.int64 and out["i"].numpy().tolist() == [1, 2, 3]
    assert out["f"].dtype == tl.float32 and out["f"].shape == (3, 2)
    np.testing.assert_array_equal(out["f"].numpy(), [[0.5, 1.5], [2.5, -1.0], [0, 0]])
    assert out["s"].dtype == tl.string and out["s"].numpy().tolist() == [[b"a"], [b"-"], [b"c"]]
    assert out["d"].shape == (3, 2, 1) and out["d"].numpy()[1].tolist() == [[9.0], [8.0]]
    v = out["v"]
    assert isinstance(v, tl.SparseTensor) and v.dtype == tl.int64
    assert v.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2], [2, 0]]
    assert v.values.numpy().tolist() == [4, 5, 6, 7] and v.dense_shape.numpy().tolist() == [3, 3]
    q = out["q"]
    assert q.shape == (3, 2, 2)
    np.testing.assert_array_equal(q.numpy(), [[[1, 2], [3, 4]], [[5, 6], [0, 0]], [[0, 0], [0, 0]]])


def test_parse_example_each_feature_kind():
    _check(tl.io.parse_example(tl.constant(RECORDS), FEATURES))
    _check(tl.io.parse_example(RECORDS, FEATURES))


def test_parse_example_inside_a_function():
    shapes = []

    @tl.function
    def parse(x):
        out = tl.io.parse_example(x, FEATURES)
        shapes.append((out["f"].shape.as_list(), out["q"].shape.as_list()))
        return out
    _check(parse.get_concrete_function(tl.TensorSpec([None], tl.string))(tl.constant(RECORDS)))
    assert shapes == [([None, 2], [None, None, 2])]
    _check(parse(tl.constant(RECORDS)))   # a SparseTensor comes back out of the Function


def test_parse_single_example_drops_the_batch_dimension():
    out = tl.io.parse_single_example(RECORDS[0], FEATURES)
    assert out["i"].shape == () and out["i"].numpy() == 1
    assert out["f"].shape == (2,) and out["s"].numpy().tolist() == [b"a"]
    assert out["v"].indices.numpy().tolist() == [[0], [1], [2]]
    assert out["v"].dense_shape.numpy().tolist() == [3]
    assert out["q"].shape == (2, 2)
    with pytest.raises(ValueError, match="scalar"):
        tl.io.parse_single_example(RECORDS, FEATURES)


def test_in_dataset_map_and_function():
    dense = {k: v for k, v in FEATURES.items() if k != "v"}
    ds = tl.data.Dataset.from_tensor_slices(RECORDS).map(
        lambda r: tl.io.parse_single_example(r, dense))
    assert ds.element_spec["f"] == tl.TensorSpec([2], tl.float32)
    assert ds.element_spec["q"] == tl.TensorSpec([None, 2], tl.float32)
    got = [e["i"].numpy() for e in ds]
    assert got == [1, 2, 3]
    batched = next(iter(tl.data.Dataset.from_tensor_slices(RECORDS).batch(3)))

    @tl.function
    def parse(x):
        out = tl.io.parse_example(x, FEATURES)
        return {**{k: v for k, v in out.items() if k != "v"}, "vi": out["v"].indices,
                "vv": out["v"].values, "vs": out["v"].dense_shape}
    out = parse(batched)
    out["v"] = tl.SparseTensor(out.pop("vi"), out.pop("vv"), out.pop("vs"))
    _check(out)


def test_errors_name_the_op_and_the_key():
    with pytest.raises(tl.errors.InvalidArgumentError, match="ParseExample.*Feature: i .*required"):
        tl.io.parse_example([example(f=[1.0])], {"i": tl.io.FixedLenFeature([], tl.int64)})
    with pytest.raises(tl.errors.InvalidArgumentError, match="ParseExample.*Key: f.*Data types"):
        tl.io.parse_example([example(f=[1.0])], {"f": tl.io.FixedLenFeature([], tl.int64)})
    with pytest.raises(tl.errors.InvalidArgumentError, match="ParseExample.*Key: f, Index: 0.*Values size: 3"):
        tl.io.parse_example([example(f=[1.0, 2.0, 3.0])], {"f": tl.io.FixedLenFeature([2], tl.float32)})
    with pytest.raises(tl.errors.InvalidArgumentError, match="multiple of stride"):
        tl.io.parse_example([example(q=[1.0, 2.0, 3.0])],
                            {"q": tl.io.FixedLenSequenceFeature([2], tl.float32, allow_missing=True)})
    with pytest.raises(tl.errors.InvalidArgumentError, match="Could not parse example"):
        tl.io.parse_example([b"\xff\xff"], {"i": tl.io.FixedLenFeature([], tl.int64)})
    with pytest.raises(ValueError, match="allow_missing"):
        tl.io.parse_example(RECORDS, {"q": tl.io.FixedLenSequenceFeature([2], tl.float32)})
    with pytest.raises(ValueError, match="unsupported dtype float64"):
        tl.io.parse_example(RECORDS, {"f": tl.io.FixedLenFeature([2], tl.float64)})
    with pytest.raises(ValueError, match="default_value has 1 values"):
        tl.io.parse_example(RECORDS, {"f": tl.io.FixedLenFeature([2], tl.float32, default_value=0.0)})
    with pytest.raises(ValueError, match="non-empty"):
        tl.io.parse_example(RECORDS, {})


def test_decode_raw():
    out = tl.io.decode_raw([b"\x01\x00\x02\x00", b"\x03\x00\x04\x01"], tl.int16)
    assert out.dtype == tl.int16 and out.numpy().tolist() == [[1, 2], [3, 260]]
    assert tl.io.decode_raw(b"\x01\x00", tl.uint16, little_endian=False).numpy().tolist() == [256]
    assert tl.io.decode_raw([b"\x01\x02\x03", b"\x04"], tl.uint8, fixed_length=2).numpy().tolist() \
        == [[1, 2], [4, 0]]
    floats = tl.io.decode_raw(tl.constant(b"\x00\x00\x80\x3f"), tl.float32)
    assert floats.shape == (1,) and floats.numpy().tolist() == [1.0]

    @tl.function
    def decode(x):
        return tl.io.decode_raw(x, tl.int32)
    assert decode(tl.constant([b"\x05\x00\x00\x00"])).numpy().tolist() == [[5]]
    with pytest.raises(tl.errors.InvalidArgumentError, match="DecodeRaw.*not a multiple of 4"):
        tl.io.decode_raw(b"abc", tl.int32)
    with pytest.raises(tl.errors.InvalidArgumentError, match="DecodeRaw.*same size"):
        tl.io.decode_raw([b"ab", b"abcd"], tl.uint8)
    with pytest.raises(TypeError, match="DecodeRaw: expected a string tensor"):
        tl.io.decode_raw(tl.constant([1]), tl.uint8)


@given(st.lists(st.binary(max_size=20), min_size=1, max_size=5), st.booleans())
def test_base64_round_trip_web_safe(values, pad):
    text = tl.io.encode_base64(values, pad=pad).numpy().tolist()
    assert text == [base64.urlsafe_b64encode(v) if pad else base64.urlsafe_b64encode(v).rstrip(b"=")
                    for v in values]
    assert tl.io.decode_base64(text).numpy().tolist() == values


def test_base64_errors():
    assert tl.io.encode_base64(b"\xfb\xff").numpy() == b"-_8"
    with pytest.raises(tl.errors.InvalidArgumentError, match="DecodeBase64: Invalid character"):
        tl.io.decode_base64(b"ab+c")
    with pytest.raises(tl.errors.InvalidArgumentError, match="DecodeBase64: Base64 string length"):
        tl.io.decode_base64(b"abcde")


@pytest.mark.parametrize("value", [3.0, [[1, 2], [3, 4]], [b"a", b"bc"], [True, False],
                                   np.zeros((0, 2), np.float32), np.array([1.5, 2], np.float16),
                                   np.array([1 + 2j], np.complex64), np.array(7, np.int64)])
def test_serialize_and_parse_tensor_round_trip(value):
    t = tl.constant(value)
    raw = tl.io.serialize_tensor(t)
    assert raw.dtype == tl.string and raw.shape == ()
    back = tl.io.parse_tensor(raw, t.dtype)
    assert back.dtype == t.dtype and back.shape == t.shape
    np.testing.assert_array_equal(back.numpy(), t.numpy())

    @tl.function
    def again(x):
        out = tl.io.parse_tensor(tl.io.serialize_tensor(x), x.dtype)
        assert out.shape.rank is None
        return out
    np.testing.assert_array_equal(again(t).numpy(), t.numpy())


def test_serialized_tensor_bytes_and_value_fields():
    # TensorProto: dtype 1 (DT_FLOAT), an empty shape message, tensor_content little-endian
    assert tl.io.serialize_tensor(tl.constant(3.0)).numpy() == b"\x08\x01\x12\x00\x22\x04\x00\x00\x40\x40"
    proto = tl.io.serialize_tensor(tl.constant([b"a"])).numpy()
    assert proto == b"\x08\x07\x12\x04\x12\x02\x08\x01\x42\x01a"   # string_val, field 8
    from trainlib.graph.example_proto import message_class
    p = message_class("TensorProto")(dtype=3, int_val=[1, 2])   # DT_INT32, the last value repeats
    p.tensor_shape.dim.add(size=4)
    assert tl.io.parse_tensor(p.SerializeToString(), tl.int32).numpy().tolist() == [1, 2, 2, 2]
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"ParseTensor: Type mismatch .*\(int32\) and dtype \(float32\)"):
        tl.io.parse_tensor(p.SerializeToString(), tl.float32)
    with pytest.raises(tl.errors.InvalidArgumentError, match="ParseTensor: Could not parse"):
        tl.io.parse_tensor(b"\xff\xff", tl.float32)


def test_var_len_features_in_dataset_map_and_batch():
    ds = tl.data.Dataset.from_tensor_slices(RECORDS).map(
        lambda r: tl.io.parse_single_example(r, {"v": FEATURES["v"]}))
    assert ds.element_spec["v"] == tl.SparseTensorSpec([None], tl.int64)
    elements = [e["v"] for e in ds]
    assert [e.values.numpy().tolist() for e in elements] == [[4, 5, 6], [], [7]]
    assert [e.dense_shape.numpy().tolist() for e in elements] == [[3], [0], [1]]
    batched = ds.batch(2)
    assert batched.element_spec["v"] == tl.SparseTensorSpec([None, None], tl.int64)
    first, second = [b["v"] for b in batched]
    assert first.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2]]
    assert first.dense_shape.numpy().tolist() == [2, 3]
    assert second.indices.numpy().tolist() == [[0, 0]] and second.dense_shape.numpy().tolist() == [1, 1]
    dense = ds.map(lambda e: tl.sparse.to_dense(e["v"]))
    assert [d.numpy().tolist() for d in dense] == [[4, 5, 6], [], [7]]
