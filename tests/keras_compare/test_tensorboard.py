"""Keras 3's TensorBoard callback vs trainlib's: the same fit writes the same tags, at the
same steps, in the same train/ and validation/ folders (values differ only as the two
trainings do)."""
import pytest

keras = pytest.importorskip("keras")
pytest.importorskip("tensorboard")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402
from tests.test_summary import read, values  # noqa: E402

CASES = []  # Keras-level module: no op types of its own


def _fit(k, log_dir, **kwargs):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    m = k.Sequential([k.Input(shape=(3,)), k.layers.Dense(4, name="hidden"),
                      k.layers.Dense(2, name="out")], name="seq")
    m.compile(k.optimizers.SGD(0.1), k.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    m.fit(x, y, batch_size=8, epochs=3, validation_split=0.25, verbose=0,
          callbacks=[k.callbacks.TensorBoard(str(log_dir), **kwargs)])


@pytest.mark.parametrize("kwargs", [dict(), dict(update_freq=3, histogram_freq=2,
                                                 write_images=True)])
def test_same_tags_and_steps_as_keras(tmp_path, kwargs):
    _fit(tl.keras, tmp_path / "ours", **kwargs)
    _fit(keras, tmp_path / "theirs", **kwargs)
    for folder in ("train", "validation"):
        ours, theirs = read(tmp_path / "ours" / folder), read(tmp_path / "theirs" / folder)
        tags = set(theirs.Tags()["tensors"]) - {"__run_graph__"}  # graphs differ by design
        assert set(ours.Tags()["tensors"]) - {"__run_graph__"} == tags
        for tag in tags:
            assert [s for s, _ in values(ours, tag)] == [s for s, _ in values(theirs, tag)], tag
            assert (ours.SummaryMetadata(tag).plugin_data.plugin_name ==
                    theirs.SummaryMetadata(tag).plugin_data.plugin_name)
        for tag in ("epoch_learning_rate",):
            if tag in tags:
                np.testing.assert_allclose([v for _, v in values(ours, tag)],
                                           [v for _, v in values(theirs, tag)])
