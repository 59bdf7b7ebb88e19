"""TextVectorization and StringLookup against Keras 3 on TensorFlow: vocabularies and outputs."""
import numpy as np
import pytest

from .compare import tf, tl  # noqa: F401 -- tf: skips this module without TensorFlow

keras = pytest.importorskip("keras")

CORPUS = ["The cat sat.", "the dog sat!", "A cat, a dog", "the end", "Dogs & cats: the END"]
QUERIES = ["the cat", "unknown dog sat here now", ""]


def _vocab(layer):
    return [str(t.decode() if isinstance(t, bytes) else t) for t in layer.get_vocabulary()]


@pytest.mark.parametrize("kwargs", [
    dict(output_sequence_length=4),
    dict(),
    dict(max_tokens=6, output_sequence_length=3),
    dict(standardize="lower", split="character", output_sequence_length=5),
    dict(output_mode="multi_hot", ngrams=2, max_tokens=8),
    dict(output_mode="count", ngrams=2),
    dict(output_mode="tf_idf", max_tokens=10),
    dict(output_mode="count", standardize=None, pad_to_max_tokens=True, max_tokens=20),
])
@pytest.mark.parametrize("source", ["list", "dataset"])
def test_text_vectorization(kwargs, source):
    ref = keras.layers.TextVectorization(**kwargs)
    ours = tl.layers.TextVectorization(**kwargs)
    if source == "list":
        ref.adapt(CORPUS)
        ours.adapt(CORPUS)
    else:
        ref.adapt(tf.data.Dataset.from_tensor_slices(CORPUS).batch(2))
        ours.adapt(tl.data.Dataset.from_tensor_slices(CORPUS).batch(2))
    assert _vocab(ours) == _vocab(ref)
    want = np.asarray(ref(QUERIES))
    got = ours(QUERIES).numpy()
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5)


def test_string_lookup():
    for kwargs in (dict(vocabulary=["a", "b"]), dict(vocabulary=["a", "b"], num_oov_indices=3),
                   dict(vocabulary=["a", "b"], mask_token=""),
                   dict(vocabulary=["a", "b"], output_mode="multi_hot")):
        want = np.asarray(keras.layers.StringLookup(**kwargs)(tf.constant([["a", "zz", "b", ""]])))
        got = tl.layers.StringLookup(**kwargs)(tl.constant([["a", "zz", "b", ""]])).numpy()
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    ref, ours = keras.layers.StringLookup(), tl.layers.StringLookup()
    ref.adapt(["x", "y", "y", "z", "z", "z"])
    ours.adapt(["x", "y", "y", "z", "z", "z"])
    assert _vocab(ours) == _vocab(ref)
