"""Quickstart: eager tensors, a traced Function, and a tiny linear regression.

    python examples/quickstart.py --steps 200
"""
import argparse
import sys
import time

import trainlib as tl
from trainlib.examples import _cli


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="training steps (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)

    x = tl.constant([[1.0, 2.0], [3.0, 4.0]])
    print("eager:", tl.matmul(x, x) + 1.0)

    tl.random.set_seed(args.seed)
    true_w = tl.constant([[2.0], [-3.0]])
    features = tl.random.normal([256, 2])
    targets = tl.matmul(features, true_w) + 0.5

    w = tl.Variable(tl.zeros([2, 1]))
    b = tl.Variable(0.0)

    @tl.function
    def train_step(x, y):
        with tl.GradientTape() as tape:
            loss = tl.reduce_mean(tl.square(tl.matmul(x, w) + b - y))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * dw)
        b.assign_sub(0.1 * db)
        return loss

    start = time.perf_counter()
    for _ in range(args.steps):
        loss = train_step(features, targets)
    elapsed = time.perf_counter() - start
    print(f"learned w={w.numpy().ravel().round(3).tolist()} b={float(b.numpy()):.3f} "
          f"loss={float(loss):.2e}; {args.steps / elapsed:.0f} steps/s")
    _cli.summary("quickstart", elapsed, args.steps, final_loss=float(loss))
    if args.steps != parser.get_default("steps") or args.seed != parser.get_default("seed"):
        return 0    # as every example: a shortened or changed run only reports
    ok = abs(float(b.numpy()) - 0.5) < 1e-2
    if not ok:
        print(f"quickstart: FAILED: learned b={float(b.numpy()):.3f}, expected 0.5 +- 0.01",
              file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
