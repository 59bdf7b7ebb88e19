"""Model.export: a digits model trained with fit runs from its SavedModel in a fresh process."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trainlib as tl

sklearn = pytest.importorskip("sklearn.datasets")


def test_trained_digits_model_exports_and_runs_without_its_code(tmp_path):
    digits = sklearn.load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    tl.random.set_seed(1)
    model = tl.Sequential([tl.layers.Input((64,)), tl.layers.Dense(32, activation="relu"),
                           tl.layers.Dense(10)])
    model.compile(optimizer="adam", loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x[:1200], y[:1200], epochs=3, batch_size=64, verbose=0)
    path = str(tmp_path / "digits_model")
    model.export(path, verbose=False)
    test = x[1200:1264]
    want = model.predict(test, verbose=0)
    np.save(tmp_path / "inputs.npy", test)
    script = (
        "import sys, json, numpy as np, trainlib as tl\n"
        f"m = tl.saved_model.load({path!r})\n"
        f"x = np.load({str(tmp_path / 'inputs.npy')!r})\n"
        "out = m.signatures['serving_default'](x)\n"
        "serve = m.serve(x).numpy()\n"
        "(value,) = out.values()\n"
        "print(json.dumps({'sig': value.numpy().tolist(), 'serve': serve.tolist(), "
        "'user_module_loaded': any('test_model_export' in k for k in sys.modules)}))\n")
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, cwd=str(tmp_path), env=env)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert not got["user_module_loaded"]
    np.testing.assert_allclose(np.array(got["sig"]), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(got["serve"]), want, rtol=1e-5, atol=1e-6)


def _sequential_built_by(how):
    tl.random.set_seed(3)
    if how == "input":
        return tl.Sequential([tl.layers.Input((4,)), tl.layers.Dense(3), tl.layers.Dense(2)])
    model = tl.Sequential([tl.layers.Dense(3), tl.layers.Dense(2)])
    if how == "call":
        model(np.ones((5, 4), np.float32))
    else:
        model.build((None, 4))
    return model


@pytest.mark.parametrize("how", ["input", "call", "build"])
def test_saved_model_save_of_a_sequential_model_saves_serve(tmp_path, how):
    model = _sequential_built_by(how)
    tl.saved_model.save(model, tmp_path / "m")
    loaded = tl.saved_model.load(tmp_path / "m")
    x = np.linspace(-2, 2, 28, dtype=np.float32).reshape(7, 4)   # any batch size
    want = model(x).numpy()
    np.testing.assert_array_equal(loaded.serve(x).numpy(), want)
    (sig_out,) = loaded.signatures["serving_default"](x).values()
    np.testing.assert_array_equal(sig_out.numpy(), want)


def test_sequential_input_dtype_is_the_signature_dtype(tmp_path):
    model = tl.Sequential([tl.layers.Input((3,), dtype="int32"), tl.layers.Embedding(10, 2)])
    tl.saved_model.save(model, tmp_path / "m")
    loaded = tl.saved_model.load(tmp_path / "m")
    ids = np.array([[1, 2, 9]], np.int32)
    (spec,) = loaded.signatures["serving_default"].structured_input_signature[1].values()
    assert spec.dtype == tl.int32 and tuple(spec.shape) == (None, 3)
    np.testing.assert_array_equal(loaded.serve(ids).numpy(), model(ids).numpy())


def test_sequential_of_unknown_input_shape_is_a_clear_error(tmp_path):
    model = tl.Sequential([tl.layers.Dense(3)])
    with pytest.raises(ValueError, match="input shape is unknown.*input_signature"):
        tl.saved_model.save(model, tmp_path / "m")
    assert not (tmp_path / "m").exists()
    tl.saving.save_model(model, tmp_path / "m", input_signature=[tl.TensorSpec((None, 4))])
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(tl.saved_model.load(tmp_path / "m").serve(x).numpy(),
                                  model(x).numpy())
