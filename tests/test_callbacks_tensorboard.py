"""The TensorBoard callback in fit: epoch and batch scalars, validation, learning rate,
weight histograms and images, the model config and train graph, read back with
tensorboard's own EventAccumulator."""
import glob
import gzip
import json
import os

import numpy as np
import pytest

import trainlib as tl
from trainlib import callbacks, layers, losses, models, optim

pytest.importorskip("tensorboard")
from tests.test_summary import read, values as series  # noqa: E402

CASES = []  # Keras-level module: no op types of its own


def _fit(log_dir, epochs=2, **kwargs):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    m = models.Sequential([layers.Input(shape=(3,)), layers.Dense(4, name="hidden"),
                           layers.Dense(2, name="out")])
    m.compile(optim.SGD(0.1), losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    tb = callbacks.TensorBoard(log_dir, **kwargs)
    history = m.fit(x, y, batch_size=8, epochs=epochs, validation_split=0.25, verbose=0,
                    callbacks=[tb])
    return m, history


def test_epoch_scalars_match_history(tmp_path):
    _, history = _fit(tmp_path)
    train, val = read(tmp_path / "train"), read(tmp_path / "validation")
    for name in ("loss", "accuracy"):
        got = [(s, float(v)) for s, v in series(train, f"epoch_{name}")]
        assert got == [(e, pytest.approx(v)) for e, v in enumerate(history.history[name])]
        got = [(s, float(v)) for s, v in series(val, f"epoch_{name}")]
        assert got == [(e, pytest.approx(v)) for e, v in enumerate(history.history[f"val_{name}"])]
    assert [float(v) for _, v in series(train, "epoch_learning_rate")] == pytest.approx([0.1] * 2)
    assert "batch_loss" not in train.Tags()["tensors"]
    # evaluation after each epoch: at the optimizer's iteration count (4 batches an epoch)
    assert [s for s, _ in series(val, "evaluation_loss_vs_iterations")] == [4, 8]
    # the model config as Keras's "keras" summary, and the traced train step
    [(_, config)] = series(train, "keras")
    assert json.loads(config.item())["class_name"] == "Sequential"
    assert train.SummaryMetadata("keras").plugin_data.plugin_name == "graph_keras_model"
    assert len(train.Graph().node) > 10


@pytest.mark.parametrize("update_freq, steps", [("batch", list(range(1, 9))), (3, [3, 6])])
def test_batch_scalars_every_update_freq(tmp_path, update_freq, steps):
    _fit(tmp_path, update_freq=update_freq, write_graph=False)
    train = read(tmp_path / "train")
    assert [s for s, _ in series(train, "batch_loss")] == steps
    assert "__run_graph__" not in train.Tags()["tensors"] and not train.Tags()["graph"]


def test_weight_histograms_and_images(tmp_path):
    m, _ = _fit(tmp_path, epochs=3, histogram_freq=2, write_images=True, write_graph=False)
    train = read(tmp_path / "train")
    tags = train.Tags()["tensors"]
    for weight in m.weights:
        name = weight.path.replace(":", "_")
        assert f"{name}/histogram" in tags and f"{name}/image" in tags
    kernel = m.layers[-1].weights[0]
    hist = series(train, f"{kernel.path}/histogram")
    assert [s for s, _ in hist] == [0, 2]
    assert hist[-1][1][:, 2].sum() == kernel.numpy().size


def test_bad_arguments():
    with pytest.raises(ValueError, match="update_freq"):
        callbacks.TensorBoard(update_freq="sometimes")
    for bad in (-1, (3, 2), (1, 2, 3), "a,b", 1.5):
        with pytest.raises(ValueError, match="profile_batch must be a non-negative integer"):
            callbacks.TensorBoard(profile_batch=bad)
    with pytest.raises(ValueError, match="embeddings_freq"):
        callbacks.TensorBoard(embeddings_freq=1)


def _profiled_batches(log_dir):
    """The run dirs under log_dir/train/plugins/profile and their "Profiled batch" events."""
    runs = sorted(glob.glob(os.path.join(str(log_dir), "train", "plugins", "profile", "*")))
    batches = []
    for run in runs:
        (trace,) = glob.glob(os.path.join(run, "*.trace.json.gz"))
        assert os.path.exists(os.path.join(run, "summary.txt"))
        with gzip.open(trace, "rt", encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        batches.append([e["args"]["step_num"] for e in events if e["name"] == "Profiled batch"])
    return runs, batches


def test_profile_batch_profiles_that_batch(tmp_path):
    _fit(tmp_path, profile_batch=2)   # 4 train batches an epoch
    runs, batches = _profiled_batches(tmp_path)
    assert len(runs) == 1 and batches == [[1]]   # the second batch: index 1 of epoch 0


def test_profile_batch_range_spans_epochs(tmp_path):
    _fit(tmp_path, profile_batch=(3, 5))
    _, batches = _profiled_batches(tmp_path)
    assert batches == [[2, 3, 0]]


def test_profile_batch_past_the_end_stops_with_training(tmp_path):
    _fit(tmp_path, epochs=1, profile_batch="3,100")
    _, batches = _profiled_batches(tmp_path)
    assert batches == [[2, 3]]
    assert tl.graph.profiler._session is None


def test_keras_name(tmp_path):
    assert tl.keras.callbacks.TensorBoard is callbacks.TensorBoard
    assert not os.path.exists(tmp_path / "logs")


def test_profile_batch_while_another_profile_runs_is_logged_not_fatal(tmp_path, caplog):
    tl.profiler.experimental.start(str(tmp_path / "outer"))
    try:
        _fit(tmp_path / "logs", epochs=1, profile_batch=1)
    finally:
        tl.profiler.experimental.stop(save=False)
    assert "Failed to start profiler" in caplog.text
    assert not os.path.exists(tmp_path / "logs" / "train" / "plugins")
