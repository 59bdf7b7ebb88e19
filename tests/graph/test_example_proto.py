"""tl.train.Example and its kin: TensorFlow's wire format (field numbers, packing), round trips,
and the ImportError that names the extra when protobuf is missing."""
import sys

import pytest

import trainlib as tl
from trainlib.graph import example_proto


def test_the_wire_format_is_tensorflows_field_numbers_and_packing():
    # hand-derived from example.proto/feature.proto: tag (number << 3 | wire type), packed repeats
    assert tl.train.Int64List(value=[1, 2]).SerializeToString() == b"\x0a\x02\x01\x02"
    assert tl.train.FloatList(value=[1.0]).SerializeToString() == b"\x0a\x04\x00\x00\x80\x3f"
    assert tl.train.BytesList(value=[b"a", b"bc"]).SerializeToString() == b"\x0a\x01a\x0a\x02bc"
    f = tl.train.Feature(int64_list=tl.train.Int64List(value=[7]))
    assert f.SerializeToString() == b"\x1a\x03\x0a\x01\x07"   # int64_list is field 3
    assert tl.train.Feature(float_list=tl.train.FloatList()).SerializeToString() == b"\x12\x00"
    ex = tl.train.Example(features=tl.train.Features(feature={"k": f}))
    entry = b"\x0a\x01k" + b"\x12\x05" + f.SerializeToString()   # map entry: key 1, value 2
    assert ex.SerializeToString() == b"\x0a" + bytes([len(entry) + 2]) + b"\x0a" + \
        bytes([len(entry)]) + entry


def test_example_and_sequence_example_round_trip():
    ex = tl.train.Example(features=tl.train.Features(feature={
        "b": tl.train.Feature(bytes_list=tl.train.BytesList(value=[b"x", b"\xff"])),
        "f": tl.train.Feature(float_list=tl.train.FloatList(value=[0.5, -2.0])),
        "i": tl.train.Feature(int64_list=tl.train.Int64List(value=[2 ** 40, -1]))}))
    back = tl.train.Example.FromString(ex.SerializeToString())
    assert back == ex
    assert list(back.features.feature["i"].int64_list.value) == [2 ** 40, -1]
    assert back.features.feature["f"].WhichOneof("kind") == "float_list"
    seq = tl.train.SequenceExample(
        context=tl.train.Features(feature={"n": tl.train.Feature(
            int64_list=tl.train.Int64List(value=[3]))}),
        feature_lists=tl.train.FeatureLists(feature_list={"w": tl.train.FeatureList(feature=[
            tl.train.Feature(bytes_list=tl.train.BytesList(value=[b"a"])),
            tl.train.Feature(bytes_list=tl.train.BytesList(value=[b"b", b"c"]))])}))
    back = tl.train.SequenceExample()
    back.ParseFromString(seq.SerializeToString())
    assert back == seq and len(back.feature_lists.feature_list["w"].feature) == 2
    assert type(back).DESCRIPTOR.full_name == "tensorflow.SequenceExample"
    assert "Example" in dir(tl.train)


def test_without_protobuf_the_error_names_the_extra(monkeypatch):
    example_proto.messages.cache_clear()
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    try:
        with pytest.raises(ImportError, match=r"trainlib\[records\]"):
            tl.train.Example()
    finally:
        monkeypatch.undo()
        example_proto.messages.cache_clear()
    assert tl.train.Example().SerializeToString() == b""
