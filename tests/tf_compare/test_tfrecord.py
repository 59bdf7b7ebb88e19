"""TFRecord files and tf.train.Example between trainlib and TensorFlow: files written by one
read by the other (plain, GZIP, ZLIB), the same bytes, the same interleaving order, and the
parsing ops' results (values, dtypes, shapes) for each feature kind."""
import numpy as np
import pytest

from .compare import tf, tl  # noqa: F401 -- tf: skips this module without TensorFlow

RECORDS = [b"", b"a", b"\x00\xff" * 300, "é".encode()]


@pytest.mark.parametrize("kind", ["", "GZIP", "ZLIB"])
def test_files_cross_read(tmp_path, kind):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    with tl.io.TFRecordWriter(ours, tl.io.TFRecordOptions(kind)) as w:
        for r in RECORDS:
            w.write(r)
    with tf.io.TFRecordWriter(theirs, tf.io.TFRecordOptions(kind)) as w:
        for r in RECORDS:
            w.write(r)
    assert [r.numpy() for r in tf.data.TFRecordDataset(ours, kind)] == RECORDS
    assert [r.numpy() for r in tl.data.TFRecordDataset(theirs, kind)] == RECORDS
    if not kind:
        assert open(ours, "rb").read() == open(theirs, "rb").read()


@pytest.mark.parametrize("cycle", [None, 2, 3])
def test_interleaving_order(tmp_path, cycle):
    paths = []
    for n, count in enumerate((3, 1, 4, 2)):
        paths.append(str(tmp_path / f"{n}"))
        with tf.io.TFRecordWriter(paths[-1]) as w:
            for i in range(count):
                w.write(f"{n}-{i}")
    want = [r.numpy() for r in tf.data.TFRecordDataset(paths, num_parallel_reads=cycle)]
    assert [r.numpy() for r in tl.data.TFRecordDataset(paths, num_parallel_reads=cycle)] == want


def test_examples_are_the_same_bytes():
    def build(m):
        return m.train.SequenceExample(
            context=m.train.Features(feature={
                "f": m.train.Feature(float_list=m.train.FloatList(value=[1.5, -0.0, 3e38])),
                "i": m.train.Feature(int64_list=m.train.Int64List(value=[-(2 ** 63), 5]))}),
            feature_lists=m.train.FeatureLists(feature_list={"s": m.train.FeatureList(feature=[
                m.train.Feature(bytes_list=m.train.BytesList(value=[b"x", b""]))])}))
    ours, theirs = build(tl), build(tf)
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
    assert tl.train.SequenceExample.FromString(theirs.SerializeToString()) == ours
    ex = tf.train.Example(features=tf.train.Features(feature={
        "b": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"q"]))}))
    assert str(tl.train.Example.FromString(ex.SerializeToString())) == str(ex)


def _examples(m):
    def ex(**kv):
        lists = {"i": ("int64_list", m.train.Int64List), "f": ("float_list", m.train.FloatList),
                 "s": ("bytes_list", m.train.BytesList)}
        feature = {k: m.train.Feature(**{lists[k[0]][0]: lists[k[0]][1](value=v)})
                   for k, v in kv.items()}
        return m.train.Example(features=m.train.Features(feature=feature)).SerializeToString()
    return [ex(i1=[3], f2=[0.25, -1e30], s1=[b"a"], iv=[1, 2, 3], fq=[1.0, 2.0, 3.0, 4.0], sv=[b"x"]),
            ex(i1=[-(2 ** 62)], f2=[1.5, 2.0], iv=[], fq=[5.0, 6.0], sq=[b"p", b"q", b"r"]),
            ex(i1=[0], f2=[0.0, 3.0], s1=[b"\xff"], iv=[9], sq=[b"z"], sv=[b"", b"w"])]


def _features(m):
    return {"i1": m.io.FixedLenFeature([], m.int64),
            "f2": m.io.FixedLenFeature([2], m.float32),
            "s1": m.io.FixedLenFeature([], m.string, default_value="none"),
            "md": m.io.FixedLenFeature([2, 2], m.int64, default_value=[[1, 2], [3, 4]]),
            "iv": m.io.VarLenFeature(m.int64),
            "sv": m.io.VarLenFeature(m.string),
            "fq": m.io.FixedLenSequenceFeature([2], m.float32, allow_missing=True),
            "sq": m.io.FixedLenSequenceFeature([], m.string, allow_missing=True),
            "iq": m.io.FixedLenSequenceFeature([1], m.int64, allow_missing=True, default_value=-1)}


def _same(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        a, b = ours[k], theirs[k]
        if isinstance(b, tf.SparseTensor):
            assert isinstance(a, tl.SparseTensor), k
            pairs = [(a.indices, b.indices), (a.values, b.values), (a.dense_shape, b.dense_shape)]
        else:
            pairs = [(a, b)]
        for x, y in pairs:
            assert x.dtype.name == y.dtype.name, k
            assert tuple(x.shape) == tuple(y.shape), k
            np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=k)


def test_parse_example_equals_tensorflows():
    records = _examples(tf)
    assert records == _examples(tl)
    _same(tl.io.parse_example(records, _features(tl)), tf.io.parse_example(records, _features(tf)))
    for r in records:
        _same(tl.io.parse_single_example(r, _features(tl)),
              tf.io.parse_single_example(r, _features(tf)))


def test_parse_in_dataset_map_equals_tensorflows(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for r in _examples(tf):
            w.write(r)
    def parsed(m, batchable=False):   # sequence features differ in length: they do not batch
        features = {k: v for k, v in _features(m).items() if not (batchable and k[1] == "q")}
        return m.data.TFRecordDataset(path).map(lambda r: m.io.parse_single_example(r, features))
    for a, b in [(parsed(tl), parsed(tf)),
                 (parsed(tl, True).batch(2), parsed(tf, True).batch(2))]:
        assert {k: (type(s).__name__, tuple(s.shape)) for k, s in a.element_spec.items()} == \
            {k: (type(s).__name__, tuple(s.shape)) for k, s in b.element_spec.items()}
        for x, y in zip(a, b, strict=True):
            _same(x, y)


@pytest.mark.parametrize("pad", [False, True])
def test_base64_equals_tensorflows(pad):
    values = [b"", b"\xfb\xff", b"hello world", b"ab", bytes(range(256))]
    ours = tl.io.encode_base64(values, pad=pad).numpy().tolist()
    assert ours == tf.io.encode_base64(values, pad=pad).numpy().tolist()
    assert tl.io.decode_base64(ours).numpy().tolist() == tf.io.decode_base64(ours).numpy().tolist()


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "int32", "int64", "float16",
                                   "float32", "float64"])
@pytest.mark.parametrize("little_endian", [True, False])
def test_decode_raw_equals_tensorflows(dtype, little_endian):
    raw = [bytes(range(16)), bytes(range(100, 116))]
    ours = tl.io.decode_raw(raw, getattr(tl, dtype), little_endian=little_endian)
    theirs = tf.io.decode_raw(raw, getattr(tf, dtype), little_endian=little_endian)
    assert ours.dtype.name == theirs.dtype.name and ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    if dtype == "float16":
        return   # TensorFlow has no float16 kernel for fixed_length (DecodePaddedRaw)
    ours = tl.io.decode_raw(raw[:1], getattr(tl, dtype), fixed_length=24)
    np.testing.assert_array_equal(ours.numpy(), tf.io.decode_raw(raw[:1], getattr(tf, dtype),
                                                                 fixed_length=24).numpy())


@pytest.mark.parametrize("value", [3.0, [[1, 2], [3, 4]], [b"a", b"bc"], [True, False],
                                   np.zeros((0, 2), np.float32), np.array([1.5, 2], np.float16),
                                   np.array([1 + 2j], np.complex128), np.arange(6, dtype=np.uint16)])
def test_serialize_tensor_equals_tensorflows(value):
    ours, theirs = tl.io.serialize_tensor(value).numpy(), tf.io.serialize_tensor(value).numpy()
    assert ours == theirs
    dtype = tf.constant(value).dtype
    back = tl.io.parse_tensor(theirs, tl.as_dtype(dtype.name))
    ref = tf.io.parse_tensor(ours, dtype)
    assert back.dtype.name == ref.dtype.name and back.shape == tuple(ref.shape)
    np.testing.assert_array_equal(back.numpy(), ref.numpy())


def test_parse_tensor_reads_tensorflows_value_fields():
    for proto, dtype in [(tf.make_tensor_proto(1.5, shape=[3]), "float32"),
                         (tf.make_tensor_proto([1, 2], dtype=tf.int32, shape=[4]), "int32"),
                         (tf.make_tensor_proto(np.array([1.5, 2.5], np.float16)), "float16"),
                         (tf.make_tensor_proto([b"x", b"y"]), "string")]:
        raw = proto.SerializeToString()
        np.testing.assert_array_equal(tl.io.parse_tensor(raw, getattr(tl, dtype)).numpy(),
                                      tf.io.parse_tensor(raw, getattr(tf, dtype)).numpy())
