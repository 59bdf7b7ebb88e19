"""Smoke tests for the example scripts: each runs with tiny settings in a subprocess
(`python -m trainlib.examples NAME ...`, exit status and summary line checked), flags work
in-process, and `python -m trainlib.examples` lists them."""
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import trainlib as tl
from trainlib import examples
from trainlib.examples import _cli
from trainlib.graph.backend import gpu_available

ROOT = Path(__file__).resolve().parents[2]
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

# One tiny run per example: (name, argv), as a user's quick try: a shortened run is not
# judged by the example's floor (one epoch proves nothing), it reports and exits 0.
TINY = [
    ("quickstart", ["--steps", "50"]),
    ("digits_mlp", ["--epochs", "1"]),
    ("digits_cnn", ["--epochs", "1"]),
    ("digits_rnn", ["--epochs", "1"]),
    ("digits_resnet", ["--epochs", "1"]),
    ("custom_training_loop", ["--epochs", "1", "--timing-steps", "3"]),
    ("regression", ["--epochs", "2"]),
    ("text_classification", ["--epochs", "1", "--samples", "200"]),
    ("text_from_strings", ["--epochs", "2", "--samples", "300"]),
    ("graphs_and_functions", ["--epochs", "1"]),
]


def run(name, argv, capsys):
    """Runs the example in-process; returns (exit status, stdout)."""
    status = examples.run(name, argv + (["--quiet"] if name != "quickstart" else []))
    return status, capsys.readouterr().out


def summary_of(out):
    lines = [line for line in out.splitlines() if line.startswith(_cli.SUMMARY_PREFIX)]
    assert len(lines) == 1, out[-2000:]
    return dict(re.findall(r"(\S+)=(\S+)", lines[0]))


def test_every_example_is_listed_and_has_a_wrapper():
    on_disk = sorted(p.stem for p in (ROOT / "trainlib" / "examples").glob("[!_]*.py"))
    assert sorted(examples.EXAMPLES) == on_disk == sorted(name for name, _ in TINY)
    for name in examples.EXAMPLES:
        wrapper = (ROOT / "examples" / f"{name}.py").read_text()
        assert f"from trainlib.examples.{name} import main" in wrapper


@pytest.mark.parametrize("name,argv", TINY, ids=[name for name, _ in TINY])
def test_tiny_run_in_a_subprocess(name, argv, tmp_path):
    """As a user runs it: a fresh interpreter, `python -m trainlib.examples NAME ...`."""
    argv = argv + (["--quiet"] if name != "quickstart" else [])
    done = subprocess.run([sys.executable, "-m", "trainlib.examples", name, *argv], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    summary = summary_of(done.stdout)
    assert float(summary["steps/s"]) > 0 and summary["time"].endswith("s")
    assert done.stdout.splitlines()[-1].startswith(f"{_cli.SUMMARY_PREFIX} {name} ")


def test_digits_mlp_defaults_reach_095(capsys):
    status, out = run("digits_mlp", [], capsys)
    assert status == 0, out[-2000:]
    assert float(summary_of(out)["test_accuracy"]) >= 0.95


def test_digits_rnn_shortened_run_reports_and_a_given_floor_judges(capsys):
    status, out = run("digits_rnn", ["--epochs", "1"], capsys)
    assert status == 0 and 0 <= float(summary_of(out)["test_accuracy"]) <= 1
    status, out = run("digits_rnn", ["--epochs", "1", "--min-accuracy", "1.01"], capsys)
    assert status == 1


def test_floor_judges_default_runs_only():
    """The default floor applies when every training setting is the default (output flags and
    --eager/--jit do not count); a given --min-accuracy always judges."""
    p = _cli.parser("doc", epochs=5, batch_size=32, learning_rate=1e-3, min_accuracy=0.9)
    p.add_argument("--samples", type=int, default=100)
    p.add_argument("--out", default=None)
    assert _cli.parse(p, []).min_accuracy == 0.9
    assert _cli.parse(p, ["--eager", "--quiet"]).min_accuracy == 0.9
    assert _cli.parse(p, ["--out", "x"], not_training=("out",)).min_accuracy == 0.9
    for argv in (["--epochs", "1"], ["--batch-size", "8"], ["--learning-rate", "0.1"],
                 ["--seed", "3"], ["--samples", "10"], ["--out", "x"]):
        args = _cli.parse(p, argv)
        assert args.min_accuracy is None and not args.default_run, argv
        assert _cli.check("x", 0.0, args.min_accuracy) == 0
    assert _cli.parse(p, ["--epochs", "1", "--min-accuracy", "0.5"]).min_accuracy == 0.5
    assert _cli.check("x", 0.4, 0.5) == 1


def test_floor_gives_exit_status_1(capsys):
    status, out = run("text_classification", ["--epochs", "1", "--samples", "100",
                                              "--min-accuracy", "1.01"], capsys)
    assert status == 1


def test_eager_and_jit_flags(capsys):
    was = tl.config.functions_run_eagerly()
    for flag in ("--eager", "--jit"):
        status, out = run("digits_mlp", ["--epochs", "1", "--min-accuracy", "0", flag], capsys)
        assert status == 0, out[-2000:]
        assert tl.config.functions_run_eagerly() == was  # the session restores the mode


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib is not installed (the examples extra)")
def test_plot_writes_png(tmp_path, capsys):
    path = tmp_path / "curves.png"
    status, out = run("regression", ["--epochs", "2", "--max-mae", "1e9", "--plot", str(path)], capsys)
    assert status == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_plot_without_matplotlib_says_how_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with pytest.raises(SystemExit) as e:
        examples.run("digits_mlp", ["--plot", "x.png"])
    assert e.value.code == 2
    assert "pip install" in capsys.readouterr().err


def test_save_weights_and_saved_model(tmp_path, capsys):
    weights = tmp_path / "mlp.npz"
    assert run("digits_mlp", ["--epochs", "1", "--min-accuracy", "0", "--save", str(weights)],
               capsys)[0] == 0
    from trainlib.examples.digits_mlp import build_model
    model = build_model()
    model.load_weights(weights)
    x = np.random.default_rng(0).random((4, 64), dtype=np.float32)
    expected = model.predict(x, verbose=0)

    import trainlib.saving  # noqa: F401
    folder = tmp_path / "mlp_saved"
    assert run("text_classification", ["--epochs", "1", "--samples", "100", "--min-accuracy", "0",
                                       "--save", str(folder)], capsys)[0] == 0
    loaded = tl.saving.load_model(folder)
    tokens = np.zeros((2, 16), np.int32)
    assert np.asarray(loaded.serve(tokens)).shape == (2, 1)
    assert np.isfinite(expected).all()


@pytest.mark.skipif(gpu_available(), reason="checks the message shown without a GPU")
def test_gpu_without_gpu_is_a_clear_error():
    with pytest.raises(SystemExit) as e:
        examples.run("digits_mlp", ["--epochs", "1", "--device", "gpu"])
    assert "--device gpu" in str(e.value.code) and "cpu" in str(e.value.code)


def test_unknown_example():
    with pytest.raises(ValueError, match="digits_mlp"):
        examples.run("no_such_example")
    assert examples.main(["no_such_example"]) == 2


def test_module_lists_and_runs_from_a_subprocess():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    listing = subprocess.run([sys.executable, "-m", "trainlib.examples"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert listing.returncode == 0, listing.stderr
    for name in examples.EXAMPLES:
        assert name in listing.stdout
    run_one = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py"), "--steps", "30"],
                             capture_output=True, text=True, env=env, timeout=120)
    assert run_one.returncode == 0, run_one.stderr
    assert "steps/s" in run_one.stdout


HAS_GRAPHVIZ = importlib.util.find_spec("graphviz") is not None and shutil.which("dot") is not None


@pytest.mark.parametrize("suffix", [".dot", ".svg"])
def test_graphs_tour_draws_its_train_step(tmp_path, capsys, suffix):
    if suffix != ".dot" and not HAS_GRAPHVIZ:
        pytest.skip("needs the graphviz package and the dot program")
    path = tmp_path / f"train_step{suffix}"
    status, out = run("graphs_and_functions", ["--epochs", "1", "--graph", str(path)], capsys)
    assert status == 0 and f"train-step graph written to {path}" in out
    data = path.read_text()
    assert ("AssignVariableOp" in data) and ("(None, 3) float32" in data)


def test_graph_flag_without_graphviz_says_what_to_install(monkeypatch, capsys):
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "dot" else real(name, *a, **k))
    with pytest.raises(SystemExit) as e:
        examples.run("graphs_and_functions", ["--graph", "g.svg"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "pip install graphviz" in err and "apt-get install graphviz" in err and ".dot" in err
