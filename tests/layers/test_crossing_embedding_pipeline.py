"""HashedCrossing, ReversibleEmbedding and Pipeline against numpy formulas, finite
differences in float64, configs, masks, graph mode, fit and Dataset.map."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.ops.farmhash import fingerprint64
from tests.graph.ops.test_sparse import _cat64_reference

from ._reference import check_layer_gradients

L = tl.keras.layers
RNG = np.random.default_rng(5)


def _cross_reference(columns, bins):
    hashed = np.full(np.shape(columns[0]), 0xDECAFCAFFE, np.uint64)
    for c in columns:
        c = np.asarray(c)
        features = np.vectorize(fingerprint64, otypes=[np.uint64])(c) if c.dtype == object \
            else c.astype(np.int64).view(np.uint64)
        hashed = _cat64_reference(hashed, features)
    return (hashed % np.uint64(bins)).astype(np.int64)


def test_hashed_crossing_matches_the_fingerprint_chain():
    a = np.array([[3], [-1], [3], [40]])
    b = np.array([[b"x"], [b"y"], [b"x"], [b""]], object)
    layer = L.HashedCrossing(num_bins=9)
    want = _cross_reference([a, b], 9)
    out = layer((a, tl.constant(b)))
    assert out.dtype == tl.int64 and out.shape == (4, 1)
    np.testing.assert_array_equal(out.numpy(), want)
    assert out.numpy()[0, 0] == out.numpy()[2, 0]      # the same pair, the same bin
    one_hot = L.HashedCrossing(num_bins=9, output_mode="one_hot")((a, tl.constant(b)))
    np.testing.assert_array_equal(one_hot.numpy(), np.eye(9, dtype=np.float32)[want[:, 0]])
    flat = L.HashedCrossing(9, dtype="int32")((a[:, 0], a[:, 0] * 2))
    assert flat.dtype == tl.int32 and flat.shape == (4,)
    np.testing.assert_array_equal(flat.numpy(), _cross_reference([a[:, 0], a[:, 0] * 2], 9))
    graph = tl.function(lambda x, y: layer((x, y)))
    np.testing.assert_array_equal(graph(a, a).numpy(), layer((a, a)).numpy())
    ds = tl.data.Dataset.from_tensor_slices((a[:, 0], a[:, 0] + 1)).batch(2).map(
        lambda x, y: layer((x, y)))
    np.testing.assert_array_equal(np.concatenate([e.numpy() for e in ds]),
                                  _cross_reference([a[:, 0], a[:, 0] + 1], 9))
    assert L.HashedCrossing.from_config(layer.get_config()).get_config() == layer.get_config()


@pytest.mark.parametrize("inputs, message", [
    (np.array([1, 2]), "list or tuple"), ((np.array([1, 2]),), "at least two"),
    ((np.ones((2, 2), np.int64), np.ones((2, 2), np.int64)), "should have shape"),
    ((np.array([1, 2]), np.array([1, 2, 3])), "equal shape"),
    ((np.array([1.0, 2.0]), np.array([1, 2])), "integer or string")])
def test_hashed_crossing_errors(inputs, message):
    with pytest.raises(ValueError, match=message):
        L.HashedCrossing(4)(inputs)
    with pytest.raises(ValueError, match="output_mode"):
        L.HashedCrossing(4, output_mode="multi_hot")


def test_reversible_embedding_reverse_matches_numpy_and_gradients():
    tied = L.ReversibleEmbedding(7, 3, dtype="float64")
    ids = np.array([[1, 2, 0], [6, 5, 4]])
    forward = tied(ids)
    table = tied.embeddings.numpy()
    np.testing.assert_allclose(forward.numpy(), table[ids])
    hidden = RNG.normal(size=(2, 4, 3))
    np.testing.assert_allclose(tied(hidden, reverse=True).numpy(), hidden @ table.T,
                               rtol=1e-12)
    check_layer_gradients(lambda lay, xs: lay(xs[0], reverse=True), tied, [hidden])
    capped = L.ReversibleEmbedding(7, 3, tie_weights=False, logit_soft_cap=2.0, dtype="float64",
                                   embeddings_initializer="random_normal")
    capped(ids)
    assert [w.name.split(":")[0] for w in capped.weights] == ["embeddings",
                                                             "reverse_embeddings"]
    reverse = capped.reverse_embeddings.numpy()
    assert reverse.shape == (3, 7)
    np.testing.assert_allclose(capped(hidden, reverse=True).numpy(),
                               np.tanh(hidden @ reverse / 2.0) * 2.0, rtol=1e-12)
    # (the untied reverse leaves the table unused: the forward lookup joins the sum)
    check_layer_gradients(lambda lay, xs: lay(xs[0], reverse=True) + tl.reduce_sum(lay(ids)),
                          capped, [hidden])
    half = L.ReversibleEmbedding(7, 3, reverse_dtype="float16")
    half(ids)
    assert half(hidden.astype(np.float32), reverse=True).dtype == tl.float16
    graph = tl.function(lambda h: tied(h, reverse=True))
    np.testing.assert_allclose(graph(hidden).numpy(), hidden @ table.T, rtol=1e-12)
    config = capped.get_config()
    assert (config["tie_weights"], config["logit_soft_cap"]) == (False, 2.0)
    assert L.ReversibleEmbedding.from_config(config).get_config() == config
    assert capped.compute_output_shape((2, 4, 3), reverse=True) == (2, 4, 7)


def test_reversible_embedding_language_model_mask_and_fit():
    inputs = tl.keras.Input((5,), dtype="int32")
    embedding = L.ReversibleEmbedding(11, 4, mask_zero=True)
    hidden = embedding(inputs)
    assert tuple(hidden.shape) == (None, 5, 4)
    logits = embedding(L.Dense(4)(hidden), reverse=True)
    assert tuple(logits.shape) == (None, 5, 11)
    model = tl.keras.Model(inputs, logits)
    model.compile(optimizer="adam",
                  loss=tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = RNG.integers(1, 11, size=(8, 5)).astype(np.int32)
    before = embedding.embeddings.numpy().copy()
    history = model.fit(x, x, epochs=2, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]
    assert not np.allclose(embedding.embeddings.numpy(), before)
    mask = embedding(np.array([[3, 0, 2]]))._keras_mask
    np.testing.assert_array_equal(mask.numpy(), [[True, False, True]])


def test_pipeline_chains_training_masks_and_configs():
    pipe = L.Pipeline([L.Rescaling(2.0, offset=-1.0), L.Dropout(0.5, seed=3),
                       L.Rescaling(0.5)])
    x = np.ones((4, 6), np.float32)
    trained = pipe(x).numpy()                # training defaults to True, as Keras's
    assert set(np.unique(trained)) <= {0.0, 1.0} and (trained == 0.0).any()
    np.testing.assert_array_equal(pipe(x, training=False).numpy(), 0.5 * np.ones_like(x))
    assert len(pipe.layers) == 3
    config = pipe.get_config()
    assert [c["class_name"] for c in config["layers"]] == ["Rescaling", "Dropout", "Rescaling"]
    again = L.Pipeline.from_config(config)
    assert again.get_config()["layers"][0]["config"]["offset"] == -1.0
    with pytest.raises(ValueError, match="`layers` key"):
        L.Pipeline.from_config({"name": "p"})
    masked = L.Pipeline([L.Masking(0.0), L.GlobalAveragePooling1D()])
    seq = np.array([[[1.0], [3.0], [0.0]]], np.float32)
    np.testing.assert_allclose(masked(seq).numpy(), [[2.0]])   # the mask reaches the pooling
    dense = L.Pipeline([L.Dense(3, dtype="float64"), L.Dense(2, dtype="float64")])
    check_layer_gradients(lambda lay, xs: lay(xs[0]), dense, [RNG.normal(size=(2, 4))])
    assert len(dense.weights) == 4
    mapped = tl.data.Dataset.from_tensor_slices(x).batch(2).map(pipe)
    assert any((e.numpy() == 0.0).any() for e in mapped)      # augments in Dataset.map
    graph = tl.function(lambda t: pipe(t, training=False))
    np.testing.assert_array_equal(graph(x).numpy(), 0.5 * np.ones_like(x))
