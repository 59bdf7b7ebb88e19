"""The CNN train step (bench/_models.py's CNN) with and without the conv_patch_sharing pass, in
one process, interleaved rounds, CPU time per step (the machine is shared: CPU time, not wall
time, and one BLAS thread). Prints each variant's median and the ratio shared / unshared, and
checks that both give the same losses.

Run: OPENBLAS_NUM_THREADS=1 python bench/conv_patches.py [--rounds 7] [--steps 5]
"""
import argparse
import os
import resource
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import _models as M  # noqa: E402

import trainlib as tl  # noqa: E402
from trainlib.graph import optimizer_config  # noqa: E402


def build(shared):
    params, x, y = M.cnn_data()
    optimizer_config.set_experimental_options({"conv_patch_sharing": shared})
    try:
        step = M.tl_step(M.tl_cnn(), params, "sparse_ce")
        xt, yt = tl.constant(x), tl.constant(y)
        first = float(step(xt, yt).numpy())   # traces with the option as set now
    finally:
        optimizer_config.reset_experimental_options()
    return (lambda: step(xt, yt)), first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    runs = {"unshared": build(False), "shared": build(True)}
    assert runs["unshared"][1] == runs["shared"][1], "losses differ"
    times = {k: [] for k in runs}
    faults = {k: [] for k in runs}
    for _ in range(args.rounds):
        for name, (run, _) in runs.items():
            run()
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = time.process_time()
            for _ in range(args.steps):
                run()
            times[name].append((time.process_time() - t0) / args.steps)
            faults[name].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / args.steps)
    med = {k: float(np.median(v)) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:9} {v * 1e3:8.2f} ms CPU per step, {np.median(faults[k]):8.0f} page faults "
              f"per step (medians of {args.rounds} rounds)")
    print(f"ratio shared / unshared: {med['shared'] / med['unshared']:.3f}")


if __name__ == "__main__":
    main()
