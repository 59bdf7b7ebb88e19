"""Peak memory of one training step: trainlib's `tl.function` step against the same step
written by hand in numpy (bench/_models.py), for the MLPs and the CNN.

The measure is tracemalloc's peak over one step after a warm-up step (tracing, optimizer
slots): the bytes the step allocates above what was live when it started. tracemalloc sees
numpy's array allocations, so both sides are counted alike; Variables, weights and data made
before the step are not counted on either side.

Run: PYTHONPATH=$PWD python bench/memory.py
"""
import os
import sys
import tracemalloc

sys.path.insert(0, os.path.dirname(__file__))
import _models as M  # noqa: E402

import trainlib as tl  # noqa: E402

CASES = {
    "MLP 64-128-10, batch 32": (lambda: M.mlp_data(**M.MLP_SMALL),
                                lambda: M.tl_mlp(M.MLP_SMALL["sizes"]), M.NumpyMLP),
    "MLP 784-1024-1024-10, batch 256": (lambda: M.mlp_data(**M.MLP_LARGE),
                                        lambda: M.tl_mlp(M.MLP_LARGE["sizes"]), M.NumpyMLP),
    "CNN 2x(Conv2D 3x3 + MaxPool 2) + Dense, batch 64": (M.cnn_data, M.tl_cnn, M.NumpyCNN),
}


def make(case, impl):
    """A step function of `impl` ("trainlib" or "numpy") for `case`, warmed up by one step."""
    data, tl_model, np_cls = CASES[case]
    params, x, y = data()
    if impl == "numpy":
        ref = np_cls(params)
        fn = lambda: ref.step(x, y)  # noqa: E731
    else:
        step, xt, yt = M.tl_step(tl_model(), params, "sparse_ce"), tl.constant(x), tl.constant(y)
        fn = lambda: step(xt, yt).numpy()  # noqa: E731
    fn()
    return fn


def traced_peak(fn):
    """Bytes allocated at the step's peak above what was live when it started."""
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - base


def main():
    print("| step | numpy by hand | trainlib `tl.function` | trainlib / numpy |")
    print("| --- | --- | --- | --- |")
    for case in CASES:
        numpy_peak, tl_peak = traced_peak(make(case, "numpy")), traced_peak(make(case, "trainlib"))
        print(f"| {case} | {numpy_peak / 1e6:.2f} MB | {tl_peak / 1e6:.2f} MB | "
              f"{tl_peak / numpy_peak:.2f}x |")


if __name__ == "__main__":
    main()
