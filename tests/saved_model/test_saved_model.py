"""tl.saved_model: save/load round trips, a fresh-process load, refusals, and clear load errors."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import trainlib as tl
from trainlib import saved_model, saving
from trainlib.graph.serialization import FORMAT_VERSION, LoadError

from . import models
from .helpers import arrays_path, edit_json, read_doc, rewrite_npz

# the op types these tests save and load (for the registry-coverage table)
CASES = [
    ("mlp", ("MatMul", "AddV2", "Relu", "ReadVariableOp", "AssignSubVariableOp", "AssignAddVariableOp",
             "SparseSoftmaxCrossEntropyWithLogits", "Mean", "Placeholder", "Identity", "Const")),
    ("collatz", ("While", "If", "FloorMod", "FloorDiv", "Cast", "Less", "NotEqual", "LogicalAnd")),
    ("attr_kinds", ("Transpose", "Reshape", "Cumsum", "Einsum", "StridedSlice", "LeakyRelu",
                    "ClipByValue", "PrintV2", "Cast")),
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The trained MLP and the control-flow Function, saved once for the module."""
    root = tmp_path_factory.mktemp("saved")
    mlp = models.trained_mlp()
    saved_model.save(mlp, root / "mlp")
    logits = mlp(models.data()[0]).numpy()  # tests below may train `mlp` further
    models.collatz(tl.constant(27), tl.constant(1000))
    saved_model.save(models.collatz, root / "collatz")
    return {"root": root, "mlp": mlp, "logits": logits}


def test_mlp_round_trip(saved):
    mlp = saved["mlp"]
    x, y = models.data()
    loaded = saved_model.load(saved["root"] / "mlp")
    np.testing.assert_array_equal(mlp(x).numpy(), saved["logits"])  # the only test that trains it
    np.testing.assert_array_equal(loaded(x).numpy(), saved["logits"])
    sig = loaded.signatures["serving_default"]
    np.testing.assert_array_equal(sig(x=x)["output_0"].numpy(), mlp(x).numpy())
    np.testing.assert_array_equal(sig(tl.constant(x))["output_0"].numpy(), mlp(x).numpy())
    assert [v.name for v in loaded.variables] == [v.name for v in mlp.variables]
    assert len(loaded.trainable_variables) == 4
    # the restored train step updates the restored Variables exactly as the original does
    out = loaded.train_step(x, y)
    ref = mlp.train_step(x, y)
    assert float(out["loss"]) == float(ref["loss"]) and int(out["steps"]) == int(ref["steps"]) == 4
    np.testing.assert_array_equal(loaded(x).numpy(), mlp(x).numpy())
    # Variables are read at run time: assigning one changes every function
    var = {v.name: v for v in loaded.variables}
    var["b1:0"].assign(np.zeros(8, np.float32))
    var["w1:0"].assign(np.zeros((4, 8), np.float32))
    np.testing.assert_allclose(loaded(x).numpy(), np.broadcast_to(var["b2:0"].numpy(), (16, 3)))


def test_control_flow_round_trip(saved):
    loaded = saved_model.load(saved["root"] / "collatz")
    for n in (1, 6, 27):
        got = loaded(tl.constant(n), tl.constant(1000))
        ref = models.collatz(tl.constant(n), tl.constant(1000))
        assert {k: float(v) for k, v in got.items()} == {k: float(v) for k, v in ref.items()}
    out = loaded.signatures["serving_default"](n=np.int32(27), limit=np.int32(5))
    assert sorted(out) == ["parity", "steps", "total"] and int(out["steps"]) == 5
    assert {op.type for op in loaded.collatz.concrete_functions[0].graph.operations} >= {"While", "If"}


SUBPROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np
    import trainlib as tl
    from trainlib import saved_model
    root = sys.argv[1]
    x = np.load(root + "/x.npy")
    mlp = saved_model.load(root + "/mlp")
    logits = mlp.signatures["serving_default"](x=x)["output_0"].numpy()
    mlp.variables[0].assign(np.ones(8, np.float32))
    changed = mlp(x).numpy()
    flow = saved_model.load(root + "/collatz")
    results = {str(n): {k: float(v) for k, v in flow(tl.constant(n), tl.constant(1000)).items()}
               for n in (6, 27)}
    np.savez(root + "/out.npz", logits=logits, changed=changed)
    json.dump({"flow": results, "modules": sorted(m for m in sys.modules if m.startswith("tests"))},
              open(root + "/out.json", "w"))
""")


def test_load_in_fresh_process(saved):
    root = saved["root"]
    x, _ = models.data()
    np.save(root / "x.npy", x)
    proc = subprocess.run([sys.executable, "-c", SUBPROCESS, str(root)], capture_output=True, text=True,
                          timeout=120, cwd=str(root))
    assert proc.returncode == 0, proc.stderr
    out = json.loads((root / "out.json").read_text())
    assert out["modules"] == []  # the defining module was never imported there
    arrays = np.load(root / "out.npz")
    np.testing.assert_array_equal(arrays["logits"], saved["logits"])
    assert not np.array_equal(arrays["changed"], arrays["logits"])
    for n in (6, 27):
        ref = models.collatz(tl.constant(n), tl.constant(1000))
        assert out["flow"][str(n)] == {k: float(v) for k, v in ref.items()}


def test_attr_kinds_round_trip(tmp_path, capsys):
    c = tl.constant([1.0, 2.0, 3.0])

    @tl.function
    def f(x, k=2, mode="a"):
        y = tl.transpose(tl.reshape(x, [3, 1])) + c
        z = tl.cast(tl.cumsum(y, axis=1, exclusive=True), tl.float64)
        e = tl.einsum("ij,ij->i", y, y)
        r = x[::-1][1:]
        s = tl.nn.leaky_relu(x, alpha=0.3)
        t = tl.clip_by_value(x, -np.inf, 2.5)
        tl.print("x is", x)
        return (z, [e, r], {"s": s, "t": t}, k, None)

    x = tl.constant([1.0, -2.0, 3.0])
    ref_a, ref_b = f(x), f(x, 3, mode="b")
    saved_model.save(f, tmp_path / "f")
    loaded = saved_model.load(tmp_path / "f")
    capsys.readouterr()
    for got, ref in ((loaded(x), ref_a), (loaded(x, k=3, mode="b"), ref_b)):
        assert got[3] == ref[3] and got[4] is None
        leaves = lambda r: [r[0], r[1][0], r[1][1], r[2]["s"], r[2]["t"]]  # noqa: E731
        for a, b in zip(leaves(got), leaves(ref)):
            assert a.dtype is b.dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert capsys.readouterr().out == "x is [1 -2 3]\n" * 2  # as tf.print writes it
    with pytest.raises(ValueError, match="Could not find a saved trace"):
        loaded(x, 4)


def test_loaded_function_inside_a_trace(saved):
    loaded = saved_model.load(saved["root"] / "mlp")
    x, _ = models.data()

    @tl.function
    def doubled(v):
        return loaded(v) * 2.0

    np.testing.assert_allclose(doubled(tl.constant(x)).numpy(), 2 * loaded(x).numpy(), rtol=1e-6)


def test_export_model_serve_endpoint(tmp_path):
    layer = tl.layers.Dense(3, activation="relu")
    x = np.ones((2, 4), np.float32)
    ref = layer(x).numpy()
    with pytest.raises(ValueError, match="input_signature"):  # never called: no input specs
        saved_model.export_model(tl.layers.Dense(3), tmp_path / "m")
    saved_model.export_model(layer, tmp_path / "built")  # a built layer knows its input shape
    np.testing.assert_array_equal(saving.load_model(tmp_path / "built").serve(x).numpy(), ref)
    saved_model.export_model(layer, tmp_path / "m", [tl.TensorSpec([None, 4], tl.float32, name="x")])
    loaded = saving.load_model(tmp_path / "m")
    np.testing.assert_array_equal(loaded.serve(x).numpy(), ref)
    out = loaded.signatures["serving_default"](x=x)
    np.testing.assert_array_equal(out["output_0"].numpy(), ref)
    assert len(loaded.variables) == 2
    with pytest.raises(TypeError, match="missing input 'x'"):
        loaded.signatures["serving_default"]()
    with pytest.raises(TypeError, match="unexpected inputs"):
        loaded.signatures["serving_default"](x=x, y=x)
    with pytest.raises(TypeError, match="must be a float32"):
        loaded.signatures["serving_default"](np.ones((2, 5), np.float32))
    with pytest.raises(TypeError, match="no __call__"):
        loaded(x)
    with pytest.raises(FileExistsError):
        saving.save_model(layer, tmp_path / "m", overwrite=False,
                          input_signature=[tl.TensorSpec([None, 4], tl.float32)])


def test_save_layer_with_inputs_gets_serve(tmp_path):
    layer = tl.layers.Dense(3)
    x = np.ones((2, 4), np.float32)
    ref = layer(x).numpy()
    layer.inputs = [tl.layers.Input(shape=(4,), name="features")]  # as a functional Model has
    saved_model.save(layer, tmp_path / "m")
    loaded = saved_model.load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.serve(x).numpy(), ref)
    out = loaded.signatures["serving_default"](features=x)["output_0"]
    np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.gpu
def test_save_on_gpu_load_on_cpu_and_gpu(tmp_path):
    with tl.device("gpu"):
        mlp = models.trained_mlp(steps=1)
        x = tl.constant(models.data()[0])
        ref = mlp(x).numpy()
        saved_model.save(mlp, tmp_path / "m")
        on_gpu = saved_model.load(tmp_path / "m")
        np.testing.assert_allclose(on_gpu(x).numpy(), ref, rtol=1e-5)
    on_cpu = saved_model.load(tmp_path / "m")
    np.testing.assert_allclose(on_cpu(models.data()[0]).numpy(), ref, rtol=1e-5)


def test_save_refuses_what_it_cannot_restore(tmp_path):
    @tl.function
    def to_stderr(x):
        tl.print(x, output_stream=sys.stderr)
        return x

    to_stderr(tl.constant(1.0))
    with pytest.raises(ValueError, match="output_stream.*PrintV2"):
        saved_model.save(to_stderr, tmp_path / "p")
    assert not (tmp_path / "p").exists()

    @tl.function
    def takes_object(x, obj):
        return x

    takes_object(tl.constant(1.0), object())
    with pytest.raises(ValueError, match="takes_object.*object"):
        saved_model.save(takes_object, tmp_path / "p")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        saved_model.save(saved_model_fn(), tmp_path / "busy")
    with pytest.raises(TypeError):
        saved_model.save(42, tmp_path / "p")


def saved_model_fn():
    @tl.function(input_signature=[tl.TensorSpec([], tl.float32)])
    def square(x):
        return x * x
    return square


def test_failed_save_keeps_existing_model(tmp_path):
    path = tmp_path / "m"
    saved_model.save(saved_model_fn(), path)

    @tl.function
    def bad(x):
        tl.print(x, output_stream=sys.stderr)
        return x

    bad(tl.constant(1.0))
    with pytest.raises(ValueError):
        saved_model.save(bad, path)
    assert float(saved_model.load(path)(tl.constant(3.0))) == 9.0
    saved_model.save(saved_model_fn(), path)  # overwriting a saved model is allowed
    assert sorted(os.listdir(tmp_path)) == ["m"]  # no temporary folders left behind


def test_clear_load_errors(saved, tmp_path):
    import shutil
    src = saved["root"] / "mlp"

    def fresh(name):
        dst = tmp_path / name
        shutil.copytree(src, dst)
        return dst

    with pytest.raises(FileNotFoundError):
        saved_model.load(tmp_path / "nowhere")
    p = fresh("newer")
    edit_json(p, lambda doc: doc.__setitem__("format_version", FORMAT_VERSION + 1), fix_checksum=False)
    with pytest.raises(LoadError, match="newer"):
        saved_model.load(p)
    p = fresh("unknown_op")
    edit_json(p, lambda doc: _first_op(doc, "MatMul").__setitem__("type", "MatMulFromTheFuture"))
    with pytest.raises(LoadError, match="unknown op type 'MatMulFromTheFuture'"):
        saved_model.load(p)
    p = fresh("edited")
    edit_json(p, lambda doc: _first_op(doc, "MatMul").__setitem__("type", "Sub"), fix_checksum=False)
    with pytest.raises(LoadError, match="checksum"):
        saved_model.load(p)
    p = fresh("no_vars")
    os.remove(arrays_path(p))
    with pytest.raises(LoadError, match=r"variables\.[0-9a-f]{16}\.npz: missing"):
        saved_model.load(p)
    p = fresh("var_shape")
    rewrite_npz(p, lambda arrays: arrays.__setitem__("variable_3", np.zeros((5, 8), np.float32)))
    with pytest.raises(LoadError, match="'w1' is declared float32"):
        saved_model.load(p)
    p = fresh("truncated")
    raw = (p / "saved_model.json").read_bytes()
    (p / "saved_model.json").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(LoadError, match="not valid JSON"):
        saved_model.load(p)
    p = fresh("code")  # attr names are written into generated code: they must be identifiers
    edit_json(p, lambda doc: _first_op(doc, "MatMul")["attrs"].__setitem__(
        "x=__import__('os').system('true'),y", 1))
    with pytest.raises(LoadError, match="bad attr name"):
        saved_model.load(p)


def _first_op(doc, type_name):
    for fn in doc["model"]["concrete_functions"]:
        for op in fn["graph"]["ops"]:
            if op["type"] == type_name:
                return op
    raise AssertionError(type_name)


def test_saved_json_is_plain_data(saved):
    doc = read_doc(saved["root"] / "mlp")
    assert doc["format"] == "trainlib.saved_model" and doc["model"]["trainlib_version"] == tl.__version__
    assert set(os.listdir(saved["root"] / "mlp")) == {"saved_model.json",
                                                      arrays_path(saved["root"] / "mlp").name}
    with np.load(arrays_path(saved["root"] / "mlp"), allow_pickle=False) as npz:
        assert all(npz[k].dtype != object for k in npz.files)
