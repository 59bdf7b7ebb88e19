"""GatherV2's gradient (GatherV2Grad) and its row scatter-add (`scatter_add_rows`): the same sums
as numpy's `add.at` (bitwise, in its order) for any multiplicity of rows, every axis and
batch_dims against a numpy reference, eager == compiled (where the compiled step writes it
`out=` a flat optimizer's gradient buffer), and float64 finite differences.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph.op import apply
from trainlib.graph.ops.array import scatter_add_rows


def _gather_grad_ref(dy, indices, params_shape, axis, batch_dims):
    """np.add.at on the moved-axis view: the definition of the gradient of a gather."""
    out = np.zeros(params_shape, dy.dtype)
    batch = params_shape[:batch_dims]
    for b in np.ndindex(*batch):
        o = np.moveaxis(out[b], axis - batch_dims, 0)
        i = indices[b].reshape(-1)
        d = np.moveaxis(dy[b], list(range(axis - batch_dims, axis - batch_dims + indices[b].ndim)),
                        list(range(indices[b].ndim)))
        np.add.at(o, i, d.reshape((i.size,) + o.shape[1:]))
    return out


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 12), width=st.integers(1, 5), n=st.integers(0, 40),
       high=st.integers(1, 12), seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(["float32", "float64"]))
def test_scatter_add_rows_is_add_at_bitwise(rows, width, n, high, seed, dtype):
    rng = np.random.default_rng(seed)
    # `high` small gives rows repeating more often than the assignment rounds cover
    idx = rng.integers(0, min(high, rows), n).astype(np.int32)
    values = rng.standard_normal((n, width)).astype(dtype)
    start = rng.standard_normal((rows, width)).astype(dtype)
    want = start.copy()
    np.add.at(want, idx, values)
    got = scatter_add_rows(np, start.copy(), idx, values)
    np.testing.assert_array_equal(got, want)


def test_scatter_add_rows_one_row_many_times():
    values = np.arange(1.0, 101.0, dtype=np.float32).reshape(100, 1) / 7
    want = np.zeros((3, 1), np.float32)
    np.add.at(want, np.full(100, 1), values)
    got = scatter_add_rows(np, np.zeros((3, 1), np.float32), np.full(100, 1, np.int64), values)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("params_shape,index_shape,axis,batch_dims", [
    ((7, 3), (5,), 0, 0), ((7,), (4, 3), 0, 0), ((6, 2, 3), (2, 4), 0, 0),
    ((3, 6, 2), (5,), 1, 0), ((2, 3, 6), (4,), 2, 0), ((2, 6, 3), (2, 5), 1, 1),
    ((2, 3, 6), (2, 3, 4), 2, 2), ((7, 3), (0,), 0, 0)])
def test_gather_grad_matches_reference(params_shape, index_shape, axis, batch_dims):
    rng = np.random.default_rng(1)
    size = params_shape[axis]
    indices = rng.integers(0, size, index_shape).astype(np.int32)
    params = rng.standard_normal(params_shape)
    out_shape = params_shape[:axis] + index_shape[batch_dims:] + params_shape[axis + 1:]
    dy = rng.standard_normal(out_shape)
    got = apply("GatherV2Grad", tl.constant(dy), tl.constant(indices), tl.constant(params),
                axis=axis, batch_dims=batch_dims).numpy()
    np.testing.assert_allclose(got, _gather_grad_ref(dy, indices, params_shape, axis, batch_dims),
                               rtol=1e-12, atol=1e-12)


def test_gather_forward_rows_is_fancy_indexing():
    table = np.arange(24, dtype=np.float32).reshape(6, 4)
    idx = np.array([[5, 0, 0], [2, 2, 1]], np.int32)
    np.testing.assert_array_equal(tl.gather(table, idx).numpy(), table[idx])


def test_embedding_gradient_finite_differences():
    rng = np.random.default_rng(2)
    table = tl.Variable(rng.standard_normal((5, 3)))
    idx = tl.constant(np.array([[0, 4, 4], [1, 4, 0]], np.int32))
    weights = tl.constant(rng.standard_normal((2, 3, 3)))

    def loss(t):
        return tl.reduce_sum(tl.gather(t, idx) ** 2 * weights)

    with tl.GradientTape() as tape:
        value = loss(table)
    grad = tape.gradient(value, table).numpy()
    base, eps, numeric = table.numpy(), 1e-6, np.zeros_like(table.numpy())
    for i in np.ndindex(*base.shape):
        up, down = base.copy(), base.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (float(loss(tl.constant(up))) - float(loss(tl.constant(down)))) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-7)


def test_compiled_embedding_step_matches_eager():
    """The compiled step writes the table's gradient out= its slice of the flat optimizer's
    gradient buffer; eager builds it anew: the same updates."""
    def make():
        layers = tl.keras.layers
        model = tl.keras.Sequential([layers.Input((6,), dtype="int32"), layers.Embedding(9, 4),
                                     layers.GlobalAveragePooling1D(), layers.Dense(3)])
        model.compile(optimizer=tl.keras.optimizers.Adam(0.01),
                      loss=tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model
    rng = np.random.default_rng(3)
    x = rng.integers(0, 9, (5, 6)).astype(np.int32)
    x[:, :3] = 2   # rows repeating within and across samples
    y = rng.integers(0, 3, 5).astype(np.int32)
    compiled, eager = make(), make()
    eager.set_weights(compiled.get_weights())
    eager.run_eagerly = True
    for _ in range(3):
        compiled.train_on_batch(x, y)
        eager.train_on_batch(x, y)
    for a, b in zip(compiled.get_weights(), eager.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
