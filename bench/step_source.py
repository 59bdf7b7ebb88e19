"""Prints the generated source of the Dense 64-128-10 + Adam train step (batch 32).

Run: python bench/step_source.py
The model and step are the benchmarks' own (bench/_models.py: `tl_mlp`, `tl_step`, as
bench/fit_step.py times them): Sequential Input(64), Dense(128, relu), Dense(10); sparse
softmax cross-entropy from logits; Keras-3 Adam at learning rate 1e-3. They use the public
API only, so the script also runs against older versions of the engine (PYTHONPATH pointing
to one): docs/generated-source.md shows two listings.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _models import MLP_SMALL, mlp_data, tl_mlp, tl_step  # noqa: E402

import trainlib as tl  # noqa: E402


def main():
    params, x, y = mlp_data(**MLP_SMALL)
    step = tl_step(tl_mlp(MLP_SMALL["sizes"]), params, "sparse_ce")
    x, y = tl.constant(x), tl.constant(y)
    step(x, y)  # trace, compile and run once
    print(step.get_concrete_function(x, y).python_source, end="")


if __name__ == "__main__":
    main()
