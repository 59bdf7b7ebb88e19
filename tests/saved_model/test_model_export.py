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
