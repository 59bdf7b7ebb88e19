"""tl.regularizers: Keras 3's formulas, names, argument checks and config forms."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from trainlib import regularizers

MATRICES = hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=5),
                      elements=st.floats(-3, 3, width=32))


@given(MATRICES, st.floats(0, 1), st.floats(0, 1))
def test_l1_l2_l1l2_match_numpy(x, a, b):
    np.testing.assert_allclose(float(regularizers.L1(a)(x)), a * np.abs(x).sum(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(float(regularizers.L2(b)(x)), b * (x ** 2).sum(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(float(regularizers.L1L2(a, b)(x)),
                               a * np.abs(x).sum() + b * (x ** 2).sum(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("mode", ["rows", "columns"])
def test_orthogonal_regularizer_matches_keras_formula(mode):
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    m = x if mode == "rows" else x.T
    n = m / np.linalg.norm(m, axis=1, keepdims=True)
    product = n @ n.T
    size = m.shape[0]
    want = 0.5 * 0.5 * np.abs(product * (1 - np.eye(size))).sum() / (size * (size - 1) / 2)
    got = float(regularizers.OrthogonalRegularizer(0.5, mode=mode)(x))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    with pytest.raises(ValueError, match="rank 2"):
        regularizers.OrthogonalRegularizer()(np.ones((2, 2, 2), np.float32))


def test_names_defaults_and_checks():
    assert regularizers.get(None) is None
    assert isinstance(regularizers.get("l2"), regularizers.L2) and regularizers.get("l2").l2 == 0.01
    assert isinstance(regularizers.get("L1L2"), regularizers.L1L2)
    assert isinstance(regularizers.get("orthogonal_regularizer"),
                      regularizers.OrthogonalRegularizer)
    fn = lambda w: 0.0  # noqa: E731
    assert regularizers.get(fn) is fn
    with pytest.raises(ValueError, match="Could not interpret regularizer"):
        regularizers.get("nope")
    with pytest.raises(ValueError, match="non-negative float"):
        regularizers.L2(-1.0)
    with pytest.raises(ValueError, match="mode"):
        regularizers.OrthogonalRegularizer(mode="diag")


def test_serialize_round_trip_in_keras_form():
    r = regularizers.L1(0.01)
    config = regularizers.serialize(r)
    # Keras holds l1 as a float32 tensor, so its config carries the float32 value
    assert config == {"module": "keras.regularizers", "class_name": "L1",
                      "config": {"l1": float(np.float32(0.01))}, "registered_name": None}
    again = regularizers.deserialize(config)
    assert isinstance(again, regularizers.L1) and again.l1 == pytest.approx(0.01)
    assert regularizers.get(regularizers.serialize(regularizers.L1L2(0.1, 0.2))).l2 == 0.2
