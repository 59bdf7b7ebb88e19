"""Custom training loop: your own @tl.function train step with GradientTape, an optimizer and metrics.

The code lives in trainlib/examples/custom_training_loop.py, so that an installed trainlib runs it
too (python -m trainlib.examples custom_training_loop); --help lists the flags.
"""
import sys

from trainlib.examples.custom_training_loop import main

if __name__ == "__main__":
    sys.exit(main())
