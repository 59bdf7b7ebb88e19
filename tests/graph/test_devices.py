"""Devices: `tl.device` scopes, `tl.config.set_default_device`, `tensor.device`, `.cpu()`/`.gpu()`.

Without a GPU these run against the strict array module of tests/graph/strict_xp.py
installed as the GPU's (`backend.simulated_gpu`): device arrays that refuse
implicit numpy conversion, as CuPy's do. Tests of the no-GPU error run only
where no real GPU is present.
"""
import numpy as np
import pytest

import trainlib as tl
from tests.graph.strict_xp import strict_xp
from trainlib.graph import backend
from trainlib.graph.context import state

no_real_gpu = pytest.mark.skipif(backend.gpu_available(), reason="a real GPU is present")


@pytest.fixture
def fake_gpu():
    saved = state.device, state.xp
    with backend.simulated_gpu(strict_xp):
        yield
    state.device, state.xp = saved


@pytest.mark.parametrize("name, want", [("cpu", "cpu"), ("CPU:0", "cpu"), ("/device:GPU:0", "gpu"),
                                        ("/gpu:0", "gpu"), ("cuda", "gpu"), ("GPU", "gpu"),
                                        ("/GPU:0", "gpu"), ("/device:CPU:0", "cpu"),
                                        ("/job:localhost/replica:0/task:0/device:CPU:0", "cpu"),
                                        ("/job:worker/task:1/device:GPU:*", "gpu")])
def test_canonical_device_names(name, want):
    assert backend.canonical_device(name) == want


def test_parse_device_index_and_errors():
    assert backend.parse_device("/job:localhost/replica:0/task:0/device:GPU:1") == ("gpu", 1)
    assert backend.parse_device("cpu") == ("cpu", None)
    with pytest.raises(ValueError, match="Malformed device"):
        backend.parse_device("/device:GPU:x")


def test_unknown_device_name():
    with pytest.raises(ValueError, match="expected 'cpu' or 'gpu'"):
        tl.device("tpu")


@no_real_gpu
def test_soft_placement_runs_gpu_blocks_on_the_cpu():
    assert tl.config.get_soft_device_placement() is True   # TensorFlow's default
    for name in ("GPU:0", "/GPU:0", "/device:GPU:0", "gpu",
                 "/job:localhost/replica:0/task:0/device:GPU:0"):
        with tl.device(name):
            x = tl.ones([2]) * 2
        assert x.device == "cpu" and state.xp is np

    @tl.function
    def f(x):
        with tl.device("/device:GPU:0"):
            return x + 1

    assert float(f(tl.constant(1.0))) == 2.0
    with tl.device(None), tl.device(""):
        assert tl.config.get_default_device() == "cpu"


def test_soft_placement_of_a_second_gpu_and_hidden_gpus(fake_gpu):
    with tl.device("GPU:1"):   # one GPU: soft placement puts GPU:1's work on the CPU
        assert tl.ones([1]).device == "cpu"
    with tl.device("GPU:0"):
        assert tl.ones([1]).device == "gpu"
    gpus = tl.config.list_physical_devices("GPU")
    assert [d.name for d in gpus] == ["/physical_device:GPU:0"]
    tl.config.set_visible_devices(tl.config.list_physical_devices("CPU"))
    try:
        assert tl.config.get_visible_devices("GPU") == []
        assert [d.name for d in tl.config.list_logical_devices()] == ["/device:CPU:0"]
        with tl.device("GPU:0"):
            assert tl.ones([1]).device == "cpu"
    finally:
        tl.config.set_visible_devices(tl.config.list_physical_devices())
    assert tl.config.get_visible_devices("GPU") == gpus
    tl.config.experimental.set_memory_growth(gpus[0], True)
    assert tl.config.experimental.get_memory_growth(gpus[0]) is True
    with pytest.raises(ValueError, match="non-GPU"):
        tl.config.experimental.set_memory_growth(tl.config.list_physical_devices("CPU")[0], True)
    with pytest.raises(ValueError, match="CPU cannot be hidden"):
        tl.config.set_visible_devices(gpus)


@pytest.fixture
def hard_placement():
    tl.config.set_soft_device_placement(False)
    yield
    tl.config.set_soft_device_placement(True)


@no_real_gpu
def test_gpu_without_a_gpu_says_how_to_get_one(hard_placement):
    with pytest.raises(RuntimeError, match=r"no usable GPU.*pip install 'trainlib\[gpu\]'"):
        with tl.device("gpu"):
            pass
    with pytest.raises(RuntimeError, match="no usable GPU"):
        tl.config.set_default_device("gpu")
    with pytest.raises(RuntimeError, match="no usable GPU"):
        tl.constant([1.0]).gpu()
    assert tl.config.get_default_device() == "cpu" and state.xp is np
    assert [d.device_type for d in tl.config.list_physical_devices()] == ["CPU"]


def test_cpu_is_the_default():
    x = tl.constant([1.0, 2.0])
    assert x.device == "cpu" and tl.config.get_default_device() == "cpu"
    assert x.cpu() is x
    with tl.device("cpu"):
        assert tl.ones([2]).device == "cpu"


def test_scope_places_new_tensors_and_restores(fake_gpu):
    with tl.device("gpu"):
        x = tl.constant([1.0, 2.0])
        y = tl.exp(x) + 1.0
        v = tl.Variable([3.0])
        assert x.device == y.device == v.device == "gpu"
        with tl.device("cpu"):
            assert tl.ones([1]).device == "cpu"
        assert tl.ones([1]).device == "gpu"
    assert tl.ones([1]).device == "cpu"
    assert type(y.numpy()) is np.ndarray  # .numpy() copies back to the host
    np.testing.assert_allclose(y.numpy(), np.exp([1.0, 2.0]) + 1, rtol=1e-6)
    np.testing.assert_array_equal(v.numpy(), [3.0])
    assert str(y).startswith("tl.Tensor([3.71") and "numpy=array" in repr(y)  # printing copies too


def test_cpu_and_gpu_copies(fake_gpu):
    x = tl.constant([[1, 2], [3, 4]])
    g = x.gpu()
    assert g.device == "gpu" and g.dtype is tl.int32 and g.shape == (2, 2)
    assert g.gpu() is g
    back = g.cpu()
    assert back.device == "cpu" and type(back._value) is np.ndarray
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    with tl.device("gpu"):
        moved = tl.identity(x)  # Identity under a device scope is the copy
    assert moved.device == "gpu"
    np.testing.assert_array_equal(moved.numpy(), x.numpy())


def test_gradients_flow_through_copies(fake_gpu):
    x = tl.constant([1.0, 2.0])
    with tl.device("gpu"):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(x.gpu() * x.gpu())
        assert y.device == "gpu"
        g = tape.gradient(y, x)  # inside the scope: gradient ops run where the forward ops ran
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])


@pytest.mark.xfail(reason="gradient rules run under the scope active at tape.gradient, and Identity's "
                          "keeps dy where it came from; autodiff.py / array.py changes reported",
                   strict=False)
def test_gradient_of_a_copy_lives_with_its_source(fake_gpu):
    x = tl.constant([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        with tl.device("gpu"):
            y = tl.reduce_sum(x.gpu())
    assert tape.gradient(y, x).device == "cpu"  # outside the scope too, as TensorFlow colocates


def test_default_device(fake_gpu):
    tl.config.set_default_device("gpu")
    try:
        assert tl.config.get_default_device() == "gpu"
        assert tl.zeros([2]).device == "gpu"
        with tl.device("cpu"):
            assert tl.zeros([2]).device == "cpu"
        assert tl.random.normal([3]).device == "gpu"
    finally:
        tl.config.set_default_device("cpu")
    assert tl.zeros([2]).device == "cpu" and state.xp is np


def test_function_runs_on_the_device_it_was_traced_on(fake_gpu):
    with tl.device("gpu"):
        f = tl.function(lambda a, b: tl.matmul(a, b) + 1.0)
        a = tl.constant(np.eye(2, dtype=np.float32))
        out = f(a, a)
    assert out.device == "gpu"
    np.testing.assert_array_equal(out.numpy(), np.eye(2) + 1)


def test_mixing_devices_is_an_invalid_argument_error(fake_gpu):
    x = tl.constant([1.0, 2.0])
    with tl.device("gpu"):
        y = tl.constant([1.0, 2.0])
        with pytest.raises(tl.errors.InvalidArgumentError, match="AddV2"):
            tl.add(y, x)


def test_mixing_devices_error_names_both_devices(fake_gpu):
    x = tl.constant([1.0, 2.0])
    with tl.device("gpu"):
        y = tl.constant([1.0, 2.0])
        with pytest.raises(tl.errors.InvalidArgumentError,
                           match=r"AddV2.*runs on gpu.*input 1 is on cpu.*\.gpu\(\)"):
            tl.add(y, x)


def test_function_retraces_per_device(fake_gpu):
    f = tl.function(lambda a: a * 2.0)
    np.testing.assert_array_equal(f(tl.constant([1.0])).numpy(), [2.0])
    with tl.device("gpu"):
        out = f(tl.constant([1.0]))
    assert out.device == "gpu" and f.experimental_get_tracing_count() == 2


def test_random_ops_seeded_on_the_gpu(fake_gpu):
    with tl.device("gpu"):
        tl.random.set_seed(3)
        a = tl.random.uniform([4]).numpy()
        tl.random.set_seed(3)
        b = tl.random.uniform([4]).numpy()
    np.testing.assert_array_equal(a, b)
    tl.random.set_seed(None)


def test_backend_transfers_are_generic(fake_gpu):
    host = np.arange(3.0)
    dev = backend.to_device(host, "gpu")
    assert type(dev) is strict_xp.ndarray and backend.device_of(dev) == "gpu"
    assert backend.to_device(dev, "gpu") is dev and backend.to_device(host, "cpu") is host
    assert type(backend.to_device(dev, "cpu")) is np.ndarray
    assert backend.transfer(np, dev).tolist() == [0.0, 1.0, 2.0]
    assert backend.transfer(strict_xp, dev) is dev
    assert backend.first_input_elsewhere([dev, host], "gpu") == 1
    assert backend.first_input_elsewhere([host], "cpu") is None
    assert [d.device_type for d in tl.config.list_physical_devices()] == ["CPU", "GPU"]


def _tiny_fit(device, weights=None):
    """Two epochs of a Dense classifier on `device`; returns (history, predictions, weights at start,
    devices of the weights)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = (x.sum(1) > 0).astype(np.int32)
    with tl.device(device):
        model = tl.Sequential([tl.layers.Input((8,)), tl.layers.Dense(16, activation="relu"),
                               tl.layers.Dense(2)])
        if weights is not None:
            model.set_weights(weights)
        start = model.get_weights()
        model.compile(optimizer=tl.optim.Adam(0.01), metrics=["accuracy"],
                      loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        predictions = model.predict(x[:4], verbose=0)
    return history.history, predictions, start, [w.device for w in model.weights]


def test_fit_on_the_gpu_matches_the_cpu(fake_gpu):
    cpu_history, cpu_pred, start, _ = _tiny_fit("cpu")
    gpu_history, gpu_pred, _, devices = _tiny_fit("gpu", start)
    assert devices == ["gpu"] * 4 and type(gpu_pred) is np.ndarray
    np.testing.assert_allclose(gpu_history["loss"], cpu_history["loss"], rtol=1e-5)
    np.testing.assert_allclose(gpu_pred, cpu_pred, rtol=1e-5, atol=1e-6)
