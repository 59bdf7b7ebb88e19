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
