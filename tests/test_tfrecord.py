"""TFRecord files: CRC32C against known vectors, the framing, writer/reader round trips (plain,
GZIP, ZLIB), interleaved reads, corrupted and truncated records, and the fixtures TensorFlow
wrote (tests/fixtures/tfrecord) read back."""
import importlib.util
import os
import struct

import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from trainlib.tfrecord import crc32c, masked_crc32c

_FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "tfrecord")
_spec = importlib.util.spec_from_file_location("tfrecord_fixtures",
                                               os.path.join(_FIXTURES, "make_fixtures.py"))
fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixtures)


def test_crc32c_known_vectors():
    # RFC 3720 appendix B.4 and the classic check value
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    assert crc32c(b"") == 0
    assert crc32c(b"6789", crc32c(b"12345")) == crc32c(b"123456789")


def _bitwise_crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@given(st.binary(max_size=70), st.binary(max_size=20))
def test_crc32c_equals_the_bitwise_definition_and_continues(a, b):
    assert crc32c(a) == _bitwise_crc32c(a)
    assert crc32c(b, crc32c(a)) == crc32c(a + b)


def test_framing_is_length_crc_data_crc(tmp_path):
    path = str(tmp_path / "one.tfrecord")
    with tl.io.TFRecordWriter(path) as w:
        w.write(b"hello")
    data = open(path, "rb").read()
    header = struct.pack("<Q", 5)
    assert data == (header + struct.pack("<I", masked_crc32c(header)) + b"hello"
                    + struct.pack("<I", masked_crc32c(b"hello")))


def _write(path, records, kind=""):
    with tl.io.TFRecordWriter(path, tl.io.TFRecordOptions(compression_type=kind)) as w:
        for r in records:
            w.write(r)


@given(st.lists(st.binary(max_size=40), max_size=6), st.sampled_from(["", "GZIP", "ZLIB"]))
def test_round_trip(tmp_path_factory, records, kind):
    path = str(tmp_path_factory.mktemp("rt") / "r.tfrecord")
    _write(path, records, kind)
    ds = tl.data.TFRecordDataset(path, compression_type=kind)
    assert ds.element_spec == tl.TensorSpec([], tl.string)
    assert [r.numpy() for r in ds] == records
    assert [r.numpy() for r in ds] == records   # re-iterable


def test_files_in_turn_and_interleaved(tmp_path):
    paths = []
    for n, count in enumerate((2, 4, 1)):
        paths.append(str(tmp_path / f"{n}.tfrecord"))
        _write(paths[-1], [f"{n}{i}".encode() for i in range(count)])
    read = lambda **kw: [r.numpy().decode() for r in tl.data.TFRecordDataset(paths, **kw)]  # noqa: E731
    assert read() == ["00", "01", "10", "11", "12", "13", "20"]
    assert read(num_parallel_reads=2) == ["00", "10", "01", "11", "12", "20", "13"]  # as tf.data
    assert read(num_parallel_reads=3) == ["00", "10", "20", "01", "11", "12", "13"]
    names = tl.data.Dataset.from_tensor_slices(paths[:2])
    assert [r.numpy() for r in tl.data.TFRecordDataset(names)] == [b"00", b"01", b"10", b"11", b"12", b"13"]


def test_writer_accepts_text_tensors_and_flushes(tmp_path):
    path = str(tmp_path / "w.tfrecord")
    w = tl.io.TFRecordWriter(path, "ZLIB")
    w.write("é")
    w.write(tl.constant(b"t"))
    w.flush()
    w.close()
    w.close()
    assert [r.numpy() for r in tl.data.TFRecordDataset(path, "ZLIB")] == ["é".encode(), b"t"]
    with pytest.raises(ValueError, match="closed"):
        w.write(b"x")
    with pytest.raises(TypeError, match="expected bytes"):
        tl.io.TFRecordWriter(str(tmp_path / "x")).write(3)
    with pytest.raises(ValueError, match="compression_type"):
        tl.io.TFRecordOptions("BZ2")
    assert tl.io.TFRecordOptions.get_compression_type_string(
        tl.io.TFRecordCompressionType.GZIP) == "GZIP"


def test_corrupted_and_truncated_records_raise_data_loss(tmp_path):
    path = str(tmp_path / "c.tfrecord")
    _write(path, [b"first", b"second"])
    data = bytearray(open(path, "rb").read())
    second = 8 + 4 + 5 + 4
    data[second + 12 + 2] ^= 1   # one bit of the second record's data
    open(path, "wb").write(bytes(data))
    ds = tl.data.TFRecordDataset(path)
    with pytest.raises(tl.errors.DataLossError, match=rf"corrupted record at offset {second} in .*c\.tfrecord"):
        list(ds)
    data[second + 12 + 2] ^= 1
    data[second + 1] ^= 4        # the second record's length
    open(path, "wb").write(bytes(data))
    with pytest.raises(tl.errors.DataLossError, match=f"corrupted record at offset {second}"):
        list(ds)
    open(path, "wb").write(bytes(data[:second + 10]))
    with pytest.raises(tl.errors.DataLossError, match=f"truncated record at offset {second}"):
        list(ds)
    open(path, "wb").write(b"not gzip")
    with pytest.raises(tl.errors.DataLossError, match="not a valid GZIP"):
        list(tl.data.TFRecordDataset(path, "GZIP"))


@pytest.mark.parametrize("name,kind", [("examples.tfrecord", ""), ("examples.tfrecord.gz", "GZIP")])
def test_reads_the_files_tensorflow_wrote(name, kind):
    ds = tl.data.TFRecordDataset(os.path.join(_FIXTURES, name), compression_type=kind)
    records = [r.numpy() for r in ds]
    assert len(records) == len(fixtures.RECORDS)
    for raw, want in zip(records, fixtures.RECORDS):
        assert tl.train.Example.FromString(raw) == fixtures.example(tl.train, want)
        assert raw == fixtures.example(tl.train, want).SerializeToString(deterministic=True)


def test_dataset_writer(tmp_path):
    path = str(tmp_path / "d.tfrecord")
    records = [b"a", b"", b"xyz"]
    tl.data.experimental.TFRecordWriter(path, "GZIP").write(
        tl.data.Dataset.from_tensor_slices(records))
    assert [r.numpy() for r in tl.data.TFRecordDataset(path, "GZIP")] == records
    with pytest.raises(TypeError, match="scalar strings"):
        tl.data.experimental.TFRecordWriter(path).write(tl.data.Dataset.range(3))


def test_missing_files_raise_not_found(tmp_path):
    with pytest.raises(tl.errors.NotFoundError, match="TFRecordDataset: .*missing.tfrecord"):
        list(tl.data.TFRecordDataset(str(tmp_path / "missing.tfrecord")))
    with pytest.raises(tl.errors.NotFoundError, match="TFRecordWriter: .*no_dir"):
        tl.io.TFRecordWriter(str(tmp_path / "no_dir" / "x.tfrecord"))


def test_flushed_gzip_file_of_a_writer_that_died_reads_every_flushed_record(tmp_path):
    path, copy = str(tmp_path / "live.gz"), str(tmp_path / "dead.gz")
    writer = tl.io.TFRecordWriter(path, "GZIP")
    records = [b"record %d" % i * 7 for i in range(50)]
    for r in records:
        writer.write(r)
    writer.flush()
    open(copy, "wb").write(open(path, "rb").read())   # the process died here: no trailer
    assert [r.numpy() for r in tl.data.TFRecordDataset(copy, "GZIP")] == records
    writer.close()


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_compressed_bomb_stops_at_first_bad_record_with_small_memory(tmp_path, kind):
    import tracemalloc
    import zlib
    path = str(tmp_path / "bomb")
    z = zlib.compressobj(9, zlib.DEFLATED, 31 if kind == "GZIP" else 15)
    data = bytearray()
    zeros = bytes(1 << 20)
    for _ in range(1024):   # 1 GiB of zeros, about 1 MB compressed
        data += z.compress(zeros)
    data += z.flush()
    open(path, "wb").write(data)
    tracemalloc.start()
    try:
        with pytest.raises(tl.errors.DataLossError, match="corrupted"):
            list(tl.data.TFRecordDataset(path, kind))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2 ** 20
