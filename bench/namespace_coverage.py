"""How many of TensorFlow 2.21's `tf.math` / `tf.nn` / `tf.linalg` / `tf.random` names and of
Keras 3.15's `keras.activations` / `keras.initializers` / `keras.ops` names trainlib provides,
from the name lists checked in beside the tests (no TensorFlow needed).

Run: `PYTHONPATH=. python bench/namespace_coverage.py`
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trainlib as tl  # noqa: E402
from trainlib import keras  # noqa: E402
from tests.keras.ops.test_names import KERAS_OPS  # noqa: E402
from tests.test_activations import KERAS_ACTIVATIONS, KERAS_INITIALIZERS  # noqa: E402
from tests.test_namespaces import NOT_PROVIDED, TF_NAMES  # noqa: E402

# the names issue 18 lists by name
LISTED = {
    "math": "top_k in_top_k bincount segment_sum segment_mean segment_max segment_min "
            "segment_prod unsorted_segment_sum unsorted_segment_mean unsorted_segment_max "
            "unsorted_segment_min unsorted_segment_prod unsorted_segment_sqrt_n l2_normalize",
    "nn": "moments l2_normalize embedding_lookup ctc_loss top_k in_top_k",
    "linalg": "band_part diag diag_part qr svd eig eigh eigvals eigvalsh",
    "random": "categorical shuffle Generator stateless_uniform stateless_normal "
              "stateless_truncated_normal stateless_categorical stateless_binomial "
              "stateless_gamma stateless_poisson",
}


def main():
    rows = [(f"tf.{ns}", getattr(tl, ns), names) for ns, names in TF_NAMES.items()]
    rows += [("keras.activations", keras.activations, KERAS_ACTIVATIONS),
             ("keras.initializers", keras.initializers, KERAS_INITIALIZERS),
             ("keras.ops", keras.ops, KERAS_OPS)]
    print(f"{'namespace':20} {'provided':>9} {'of':>4}  missing")
    for label, module, names in rows:
        have = sum(hasattr(module, n) for n in names)
        missing = [n for n in names if not hasattr(module, n)]
        print(f"{label:20} {have:9d} {len(names):4d}  {len(missing)}")
    listed = sum(hasattr(getattr(tl, ns), n) for ns, s in LISTED.items() for n in s.split())
    total = sum(len(s.split()) for s in LISTED.values())
    print(f"issue 18's listed names: {listed} of {total}")
    print("still missing, with reasons: tests/test_namespaces.py NOT_PROVIDED "
          f"({sum(len(v) for v in NOT_PROVIDED.values())} names)")


if __name__ == "__main__":
    main()
