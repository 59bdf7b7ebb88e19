"""The GPU check, in one run: the GPU tests, then GPU-vs-CPU timings, printed as a table.

Run from the repository root:  python bench/gpu_check.py
  1. `pytest -m gpu tests` (the tests marked gpu; the strict-shim proof runs without a GPU);
  2. a digits-like MLP train step (64-128-10, batch 32, GradientTape + SGD / Adam, in one
     tl.function), plain, with jit_compile=True (fusion) and, where tl.function offers it,
     with CUDA graphs; then a chain of 4096x4096 float32 matmuls, in a tl.function and eagerly.
Each row gives CPU and GPU medians (GPU times end with a device synchronize) and the ratio.
Exits 0 with a "no GPU: skipped" line where CuPy finds no GPU; finishes in well under
5 minutes on a GPU machine. `--dry-run` checks this script itself without a GPU: the
strict array module of tests/graph/strict_xp.py plays the GPU, at small sizes.
"""
import argparse
import inspect
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402
from trainlib.graph import backend  # noqa: E402

TEST_TIMEOUT_S = 150
ROW_BUDGET_S = 8.0     # per row and device: timing stops at this much, or at max_reps calls


def run_gpu_tests():
    cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider",
           os.path.join(ROOT, "tests")]
    print("$", " ".join(cmd), flush=True)
    try:
        done = subprocess.run(cmd, cwd=ROOT, timeout=TEST_TIMEOUT_S, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        print(f"GPU tests: TIMED OUT after {TEST_TIMEOUT_S}s")
        return False
    tail = done.stdout.strip().splitlines()[-25:]
    print("\n".join(tail))
    print(f"GPU tests: {'passed' if done.returncode == 0 else 'FAILED (rc %d)' % done.returncode}",
          flush=True)
    return done.returncode == 0


def synchronize(device):
    if device == "gpu":
        xp = backend.array_module("gpu")
        if hasattr(xp, "cuda"):
            xp.cuda.Device().synchronize()


def median_ms(call, device, max_reps, warmup=2):
    """Median wall time of `call()` in ms (after `warmup` calls), synchronized on the GPU."""
    for _ in range(warmup):
        call()
    synchronize(device)
    times, start = [], time.perf_counter()
    while len(times) < max_reps and time.perf_counter() - start < ROW_BUDGET_S:
        t0 = time.perf_counter()
        call()
        synchronize(device)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), len(times)


def mlp_step(device, optimizer, batch, function_kwargs):
    """A tl.function train step of a 64-128-10 MLP on `device`, and the data it runs on."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    with tl.device(device):
        params = [tl.Variable(rng.standard_normal((64, 128)).astype(np.float32) * 0.1),
                  tl.Variable(np.zeros(128, np.float32)),
                  tl.Variable(rng.standard_normal((128, 10)).astype(np.float32) * 0.1),
                  tl.Variable(np.zeros(10, np.float32))]
        opt = tl.optim.SGD(0.1) if optimizer == "sgd" else tl.optim.Adam(1e-3)
        tx, ty = tl.constant(x), tl.constant(y)

        @tl.function(**function_kwargs)
        def step(x, y):
            w1, b1, w2, b2 = params
            with tl.GradientTape() as tape:
                h = tl.nn.relu(tl.matmul(x, w1) + b1)
                logits = tl.matmul(h, w2) + b2
                loss = tl.reduce_mean(
                    tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            opt.apply_gradients(zip(tape.gradient(loss, params), params))
            return loss

    def call():
        with tl.device(device):
            return step(tx, ty)
    return call


def matmul_chain(device, n, eager):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n) for _ in range(3))

    def chain(a, b, c):
        return tl.reduce_sum(tl.matmul(tl.tanh(tl.matmul(tl.matmul(a, b), c)), b))

    with tl.device(device):
        ta, tb, tc = tl.constant(a), tl.constant(b), tl.constant(c)
        fn = chain if eager else tl.function(chain)

    def call():
        with tl.device(device):
            return fn(ta, tb, tc)
    return call


def cuda_graph_kwargs():
    """tl.function's CUDA-graph switch, if it has one (the name may change while it lands)."""
    params = inspect.signature(tl.function).parameters
    for name in ("experimental_cuda_graphs", "cuda_graphs", "experimental_cuda_graph"):
        if name in params:
            return {name: True, "jit_compile": True}
    return None


def rows(small):
    batch, n = (8, 64) if small else (32, 4096)
    mm_reps = 3 if small else 5
    out = []
    for opt in ("sgd", "adam"):
        out.append((f"MLP 64-128-10 {opt} step, batch {batch}", lambda d, o=opt: mlp_step(d, o, batch, {}), 200))
        out.append((f"  same, jit_compile=True (fusion)",
                    lambda d, o=opt: mlp_step(d, o, batch, {"jit_compile": True}), 200))
        graphs = cuda_graph_kwargs()
        if graphs is not None:
            out.append(("  same, CUDA graphs", lambda d, o=opt, g=graphs: mlp_step(d, o, batch, g), 200))
        else:
            out.append(("  same, CUDA graphs", None, 0))
    out.append((f"matmul chain {n}x{n} f32, tl.function", lambda d: matmul_chain(d, n, False), mm_reps))
    out.append((f"matmul chain {n}x{n} f32, eager", lambda d: matmul_chain(d, n, True), mm_reps))
    return out


def benchmark(small):
    print(f"\n{'case':44} {'cpu ms':>10} {'gpu ms':>10} {'cpu/gpu':>8}", flush=True)
    for name, make, reps in rows(small):
        if make is None:
            print(f"{name:44} {'n/a: tl.function has no CUDA-graph option yet':>30}", flush=True)
            continue
        try:
            cpu, _ = median_ms(make("cpu"), "cpu", reps)
            gpu, _ = median_ms(make("gpu"), "gpu", reps)
            print(f"{name:44} {cpu:10.3f} {gpu:10.3f} {cpu / gpu:8.2f}", flush=True)
        except Exception as e:  # one failing row must not hide the others
            print(f"{name:44} FAILED: {type(e).__name__}: {str(e)[:160]}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU needed: the strict test array module plays it, small sizes")
    parser.add_argument("--skip-tests", action="store_true", help="only the timings")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.dry_run:
        from tests.graph.strict_xp import strict_xp  # noqa: PLC0415
        with backend.simulated_gpu(strict_xp):
            print("dry run: the strict array module plays the GPU (timings mean nothing)")
            benchmark(small=True)
        return 0
    if not backend.gpu_available():
        try:
            backend.array_module("gpu")
        except RuntimeError as e:
            print(f"no GPU: skipped ({e})")
        return 0
    xp = backend.array_module("gpu")
    props = xp.cuda.runtime.getDeviceProperties(0)
    print(f"GPU: {props['name'].decode() if isinstance(props['name'], bytes) else props['name']}, "
          f"CuPy {xp.__version__}, numpy {np.__version__}")
    ok = True if args.skip_tests else run_gpu_tests()
    benchmark(small=False)
    print(f"\ntotal {time.perf_counter() - start:.0f}s; GPU tests {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
