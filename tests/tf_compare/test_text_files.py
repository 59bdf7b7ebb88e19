"""text_dataset_from_directory and TextLineDataset against Keras / tf.data."""
import numpy as np
import pytest

from .compare import tf, tl  # noqa: F401 -- tf: skips this module without TensorFlow

keras = pytest.importorskip("keras")


@pytest.fixture
def corpus(tmp_path):
    for label, texts in {"neg": ["bad film", "awful\\nplot", "dull"], "pos": ["great", "fun ride"]}.items():
        (tmp_path / label).mkdir()
        for i, t in enumerate(texts):
            (tmp_path / label / f"{i}.txt").write_text(t)
    (tmp_path / "pos" / "ignored.md").write_text("not text")
    return str(tmp_path)


@pytest.mark.parametrize("label_mode", ["int", "categorical", "binary"])
def test_text_dataset_from_directory_unshuffled(corpus, label_mode):
    ref = keras.utils.text_dataset_from_directory(corpus, batch_size=2, shuffle=False,
                                                  label_mode=label_mode, verbose=False)
    ours = tl.utils.text_dataset_from_directory(corpus, batch_size=2, shuffle=False,
                                                label_mode=label_mode, verbose=False)
    assert ours.class_names == ref.class_names
    want = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ref]
    got = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ours]
    assert got == want


def test_text_dataset_shuffled_split_covers_the_files(corpus):
    train = tl.utils.text_dataset_from_directory(corpus, validation_split=0.4, subset="training",
                                                 seed=1, verbose=False)
    val = tl.utils.text_dataset_from_directory(corpus, validation_split=0.4, subset="validation",
                                               seed=1, verbose=False)
    texts = [t for ds in (train, val) for x, _ in ds for t in x.numpy().tolist()]
    assert sorted(texts) == sorted([b"bad film", b"awful\\nplot", b"dull", b"great", b"fun ride"])
    assert sum(len(x) for x, _ in val) == 2


def test_text_line_dataset(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"one\\ntwo \\r\\n\\nthree")
    want = [t.numpy() for t in tf.data.TextLineDataset(str(path))]
    assert [t.numpy() for t in tl.data.TextLineDataset(str(path))] == want
