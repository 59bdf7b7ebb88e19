"""Keras 3 vs trainlib: the Hashing layer (strings, integers, floats; masks, salts, encodings)
and StringLookup(invert=True) give Keras's outputs for the same inputs."""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

STRINGS = np.array([["A"], ["B"], ["C"], ["D"], ["E"], [""], ["héllo wörld"]])
HASHING = [
    (dict(num_bins=3), STRINGS),
    (dict(num_bins=3, mask_value=""), STRINGS),
    (dict(num_bins=5, salt=133), STRINGS),
    (dict(num_bins=5, salt=[133, 137]), STRINGS),
    (dict(num_bins=1000), np.array([[1, 2], [3, -40]])),
    (dict(num_bins=4, mask_value=0), np.array([[0, 2], [3, 40]])),
    (dict(num_bins=4), np.array([1.5, -2.7])),
    (dict(num_bins=4, output_mode="one_hot"), np.array(["a", "b"])),
    (dict(num_bins=4, output_mode="multi_hot"), np.array([["a", "b"], ["c", "c"]])),
    (dict(num_bins=4, output_mode="count"), np.array([["a", "b"], ["c", "c"]])),
    (dict(num_bins=4, dtype="int32"), np.array(["a", "q"])),
]


@pytest.mark.parametrize("kwargs,data", HASHING, ids=[str(k) for k, _ in HASHING])
def test_hashing(kwargs, data):
    want = keras.layers.Hashing(**kwargs)(data)
    layer = tl.keras.layers.Hashing(**kwargs)
    got = layer(data)
    assert str(got.dtype.name) == str(want.dtype.name if hasattr(want.dtype, "name") else want.dtype)
    np.testing.assert_array_equal(got.numpy(), np.asarray(want))
    traced = tl.function(lambda x: layer(x))(tl.constant(data))
    np.testing.assert_array_equal(traced.numpy(), np.asarray(want))
    config = keras.layers.Hashing(**kwargs).get_config()
    assert {k: config[k] for k in ("num_bins", "salt", "mask_value", "output_mode")} == \
        {k: layer.get_config()[k] for k in ("num_bins", "salt", "mask_value", "output_mode")}


INVERT = [
    (dict(vocabulary=["a", "b"]), np.array([1, 2, 0, 5, -1])),
    (dict(vocabulary=["a", "b"], mask_token=""), np.array([[0, 1, 2, 3, 4]])),
    (dict(vocabulary=["a", "b"], num_oov_indices=2), np.array([0, 1, 2, 3])),
    (dict(vocabulary=["a", "b"], oov_token="?"), np.array([0, 1, 9])),
]


@pytest.mark.parametrize("kwargs,data", INVERT, ids=[str(k) for k, _ in INVERT])
def test_string_lookup_invert(kwargs, data):
    want = keras.layers.StringLookup(invert=True, **kwargs)(data)
    got = tl.keras.layers.StringLookup(invert=True, **kwargs)(data)
    assert np.asarray(got.numpy()).tolist() == np.asarray(want).tolist()


def test_string_lookup_adapted_invert_and_config():
    k = keras.layers.StringLookup(invert=True)
    k.adapt(np.array(["x", "y", "y"]))
    t = tl.keras.layers.StringLookup(invert=True)
    t.adapt(np.array(["x", "y", "y"]))
    assert t(np.array([1, 2, 0])).numpy().tolist() == np.asarray(k(np.array([1, 2, 0]))).tolist()
    kc, tc = k.get_config(), t.get_config()
    for key in ("invert", "vocabulary", "idf_weights", "num_oov_indices", "oov_token",
                "mask_token", "vocabulary_size", "oov_method", "salt"):
        assert tc[key] == kc[key], key
    # Keras's config rebuilds a trainlib layer
    assert tl.keras.layers.StringLookup.from_config(
        keras.layers.StringLookup(vocabulary=["a"], invert=True).get_config()).invert
