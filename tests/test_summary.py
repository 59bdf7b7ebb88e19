"""tl.summary: event files written through tensorboard's writer, read back with tensorboard's
own EventAccumulator (the one the TensorBoard server uses)."""
import io
import sys

import numpy as np
import pytest

import trainlib as tl

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.plugin_event_accumulator import (  # noqa: E402
    EventAccumulator)
from tensorboard.util import tensor_util  # noqa: E402


def read(logdir):
    acc = EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    acc.Reload()
    return acc


def values(acc, tag):
    return [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]


def test_scalars_histograms_text_read_back(tmp_path):
    writer = tl.summary.create_file_writer(tmp_path)
    data = np.random.default_rng(0).normal(size=1000)
    with writer.as_default(step=2):
        assert tl.summary.scalar("loss", 0.25)
        assert tl.summary.scalar("loss", tl.constant(0.125), step=5)
        assert tl.summary.histogram("w", data, buckets=10)
        assert tl.summary.text("note", "**hello**")
    writer.close()
    acc = read(tmp_path)
    assert [(s, float(v)) for s, v in values(acc, "loss")] == [(2, 0.25), (5, 0.125)]
    assert acc.SummaryMetadata("loss").plugin_data.plugin_name == "scalars"
    [(step, buckets)] = values(acc, "w")
    assert step == 2 and buckets.shape == (10, 3)
    assert buckets[:, 2].sum() == 1000
    assert buckets[0, 0] == pytest.approx(data.min()) and buckets[-1, 1] == pytest.approx(data.max())
    np.testing.assert_allclose(buckets[:, 2], np.histogram(data, bins=10)[0])
    assert acc.SummaryMetadata("w").plugin_data.plugin_name == "histograms"
    [(_, note)] = values(acc, "note")
    assert note.item() == b"**hello**"


def test_images_are_pngs(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    pixels = np.random.default_rng(1).integers(0, 256, size=(4, 5, 6, 3), dtype=np.uint8)
    with tl.summary.create_file_writer(tmp_path).as_default():
        tl.summary.image("im", pixels, step=1, max_outputs=2)
        tl.summary.image("grey", np.linspace(0, 1, 12).reshape(1, 3, 4, 1), step=1)
    acc = read(tmp_path)
    [(_, im)] = values(acc, "im")
    assert im[:2].tolist() == [b"6", b"5"] and len(im) == 4
    for encoded, expected in zip(im[2:], pixels[:2]):
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(encoded))), expected)
    [(_, grey)] = values(acc, "grey")
    decoded = np.asarray(Image.open(io.BytesIO(grey[2])))
    np.testing.assert_array_equal(decoded, np.minimum(np.linspace(0, 1, 12) * 255.5, 255)
                                  .astype(np.uint8).reshape(3, 4))


def test_no_writer_no_step_and_record_if(tmp_path):
    assert tl.summary.scalar("x", 1.0, step=0) is False
    writer = tl.summary.create_file_writer(tmp_path)
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tl.summary.scalar("x", 1.0)
        tl.summary.experimental.set_step(4)
        try:
            assert tl.summary.scalar("x", 1.0)
        finally:
            tl.summary.experimental.set_step(None)
        with tl.summary.record_if(False):
            assert not tl.summary.should_record_summaries()
            assert tl.summary.scalar("x", 2.0, step=5) is False
        with tl.summary.record_if(lambda: True):
            assert tl.summary.scalar("x", 3.0, step=6)
    assert not tl.summary.should_record_summaries()
    writer.flush()
    assert [(s, float(v)) for s, v in values(read(tmp_path), "x")] == [(4, 1.0), (6, 3.0)]
    with tl.summary.create_noop_writer().as_default(step=0):
        assert tl.summary.scalar("x", 1.0) is False


def test_summaries_inside_a_function_write_every_call(tmp_path):
    writer = tl.summary.create_file_writer(tmp_path)

    @tl.function
    def step(x, i):
        tl.summary.scalar("sum", tl.reduce_sum(x), step=i)
        tl.summary.histogram("x", x, step=i)
        return x * 2.0

    with writer.as_default():
        for i in range(3):
            step(tl.constant([1.0, float(i)]), tl.constant(i, tl.int64))
        assert step.experimental_get_tracing_count() == 1
        tl.summary.graph(step)
    writer.close()
    acc = read(tmp_path)
    assert [(s, float(v)) for s, v in values(acc, "sum")] == [(0, 1.0), (1, 2.0), (2, 3.0)]
    assert len(values(acc, "x")) == 3
    assert {"Placeholder", "Sum", "Mul"} <= {n.op for n in acc.Graph().node}


def test_bad_input_is_a_clear_error(tmp_path):
    with tl.summary.create_file_writer(tmp_path).as_default(step=0):
        with pytest.raises(ValueError, match="expected a scalar"):
            tl.summary.scalar("v", [1.0, 2.0])
        with pytest.raises(ValueError, match="channels"):
            tl.summary.image("v", np.zeros((2, 3)))


def test_without_tensorboard_the_error_names_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto", None)
    with pytest.raises(ImportError, match="pip install tensorboard"):
        tl.summary.create_file_writer(tmp_path)


def test_audio_clips_are_16_bit_wavs_of_the_samples(tmp_path):
    import wave  # noqa: PLC0415
    clips = np.random.default_rng(1).uniform(-1.3, 1.3, (4, 40, 2)).astype(np.float32)
    writer = tl.summary.create_file_writer(tmp_path)
    with writer.as_default(step=7):
        assert tl.summary.audio("voice", clips, sample_rate=8000, max_outputs=3)
    writer.close()
    acc = read(tmp_path)
    assert acc.SummaryMetadata("voice").plugin_data.plugin_name == "audio"
    [(step, encoded)] = values(acc, "voice")
    assert step == 7 and len(encoded) == 3
    for clip, wav_bytes in zip(clips, encoded):
        with wave.open(io.BytesIO(wav_bytes)) as wav:
            assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (2, 2, 8000)
            pcm = np.frombuffer(wav.readframes(40), "<i2").reshape(40, 2)
        expected = np.clip(np.round(clip.astype(np.float64) * 2 ** 15), -2 ** 15, 2 ** 15 - 1)
        np.testing.assert_array_equal(pcm, expected)
    with pytest.raises(ValueError, match="only 'wav'"):
        tl.summary.audio("voice", clips, 8000, encoding="mp3")


def test_trace_export_writes_the_graphs_traced_while_the_trace_was_on(tmp_path):
    from tensorboard.compat.proto import config_pb2  # noqa: PLC0415

    @tl.function
    def before(x):
        return x + 1.0

    @tl.function
    def traced(x):
        return tl.tanh(x) * 2.0

    before(tl.constant(1.0))
    tl.summary.trace_on(graph=True)
    before(tl.constant(2.0))                 # already traced: nothing new to collect
    traced(tl.constant([1.0, 2.0]))
    writer = tl.summary.create_file_writer(tmp_path)
    with writer.as_default():
        assert tl.summary.trace_export("my_trace", step=3)
    writer.close()
    acc = read(tmp_path)
    meta = acc.SummaryMetadata("my_trace").plugin_data
    assert (meta.plugin_name, meta.content) == ("graph_run_metadata_graph", b"1")
    [(step, blob)] = values(acc, "my_trace")
    run_metadata = config_pb2.RunMetadata.FromString(blob.item())
    [graph] = run_metadata.function_graphs
    ops = {node.op for node in graph.pre_optimization_graph.node}
    assert step == 3 and {"Tanh", "Mul"} <= ops and "AddV2" not in ops
    with pytest.raises(ValueError, match="Must enable trace"):
        tl.summary.trace_export("again", step=0)   # export stopped the trace
    tl.summary.trace_on()
    tl.summary.trace_off()
    with pytest.raises(ValueError, match="Must enable trace"):
        tl.summary.trace_export("off", step=0)


def test_writer_shared_by_threads_creates_one_event_file(tmp_path):
    import threading
    writer = tl.summary.create_file_writer(str(tmp_path))
    start = threading.Barrier(8)

    def work(i):
        start.wait()
        with writer.as_default():
            tl.summary.scalar("x", float(i), step=i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    assert len([p for p in tmp_path.iterdir() if "tfevents" in p.name]) == 1
