"""The profiler's `<host>.xplane.pb` read by TensorFlow's own XSpace message class (the one
TensorBoard's profile plugin decodes it with): planes, lines, events and op names."""
import glob

import numpy as np
import pytest

import trainlib as tl

xplane_pb2 = pytest.importorskip("tensorflow.tsl.profiler.protobuf.xplane_pb2")


def test_tensorflows_xspace_class_reads_the_profile(tmp_path):
    f = tl.function(lambda x: tl.sin(x) * 2.0)
    x = tl.constant(np.ones(10, np.float32))
    f(x)
    tl.profiler.experimental.start(str(tmp_path))
    for _ in range(3):
        f(x)
    tl.profiler.experimental.stop()
    path, = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.xplane.pb"))
    space = xplane_pb2.XSpace()
    with open(path, "rb") as file:
        space.ParseFromString(file.read())
    plane, = space.planes
    assert plane.name == "/host:CPU"
    names = {m.name for m in plane.event_metadata.values()}
    assert {"Sin:Sin", "Mul:Mul"} <= names
    events = [e for line in plane.lines for e in line.events]
    named = [plane.event_metadata[e.metadata_id].name for e in events]
    assert named.count("Sin:Sin") == 3 and all(e.duration_ps > 0 for e in events)
