"""tl.summary against tf.summary: the same calls give the same tags, steps, plugin metadata
and values (scalars, histogram buckets, text, image PNG pixels), both read back with
tensorboard's EventAccumulator."""
import io

import pytest

tf = pytest.importorskip("tensorflow")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402
from tests.test_summary import read, values  # noqa: E402

CASES = []  # writes files: no op types of its own


def _log(summary, logdir, data):
    writer = summary.create_file_writer(str(logdir))
    with writer.as_default(step=1):
        summary.scalar("loss", 0.75)
        summary.scalar("loss", 0.5, step=2)
        summary.histogram("w", data, step=3)
        summary.histogram("w_buckets", data, step=3, buckets=7)
        summary.histogram("const", np.full(5, 2.0), step=3)
        summary.text("note", "hello *world*", step=4)
        summary.image("im", np.linspace(0, 1, 2 * 3 * 4 * 3).reshape(2, 3, 4, 3), step=5)
        summary.image("im_u8", (np.arange(24) * 10).astype(np.uint8).reshape(1, 3, 8, 1), step=5)
    writer.close()
    return read(logdir)


def test_same_events_as_tf_summary(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    data = np.random.default_rng(0).normal(size=300)
    ours = _log(tl.summary, tmp_path / "ours", data)
    theirs = _log(tf.summary, tmp_path / "theirs", data)
    assert set(ours.Tags()["tensors"]) == set(theirs.Tags()["tensors"])
    for tag in theirs.Tags()["tensors"]:
        assert (ours.SummaryMetadata(tag).plugin_data.plugin_name ==
                theirs.SummaryMetadata(tag).plugin_data.plugin_name)
        got, want = values(ours, tag), values(theirs, tag)
        assert [s for s, _ in got] == [s for s, _ in want]
        for (_, a), (_, b) in zip(got, want):
            assert a.shape == b.shape, tag
            if tag.startswith("im"):
                assert a[:2].tolist() == b[:2].tolist()
                for x, y in zip(a[2:], b[2:]):
                    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(x))),
                                                  np.asarray(Image.open(io.BytesIO(y))))
            elif a.dtype == object:
                assert a.tolist() == b.tolist()
            else:
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, err_msg=tag)


def _audio_and_trace(tf_like, logdir, clips, fn):
    writer = tf_like.summary.create_file_writer(str(logdir))
    tf_like.summary.trace_on(graph=True)
    fn(tf_like.constant([1.0, 2.0]))
    with writer.as_default(step=2):
        tf_like.summary.audio("voice", clips, 16000, max_outputs=2)
        tf_like.summary.trace_export("trace", step=4)
    writer.close()
    return read(logdir)


def test_audio_bytes_and_trace_summary_as_tf_summary(tmp_path):
    clips = np.random.default_rng(2).uniform(-1.2, 1.2, (3, 30, 2)).astype(np.float32)
    ours = _audio_and_trace(tl, tmp_path / "ours", clips, tl.function(lambda x: tl.tanh(x) * 2.0))
    theirs = _audio_and_trace(tf, tmp_path / "theirs", clips,
                              tf.function(lambda x: tf.tanh(x) * 2.0))
    for tag in ("voice", "trace"):
        assert ours.SummaryMetadata(tag) == theirs.SummaryMetadata(tag), tag
        [(our_step, _)], [(their_step, _)] = values(ours, tag), values(theirs, tag)
        assert our_step == their_step
    [(_, our_clips)], [(_, their_clips)] = values(ours, "voice"), values(theirs, "voice")
    assert list(our_clips) == list(their_clips)       # byte-identical WAV files
    from tensorboard.compat.proto import config_pb2  # noqa: PLC0415
    ops = [{n.op for n in config_pb2.RunMetadata.FromString(values(acc, "trace")[0][1].item())
            .function_graphs[0].pre_optimization_graph.node} for acc in (ours, theirs)]
    assert {"Tanh", "Mul"} <= ops[0] & ops[1]
