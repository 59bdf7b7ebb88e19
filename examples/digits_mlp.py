"""Digits MLP: a Sequential model on scikit-learn's 8x8 digits, trained with fit().

The code lives in trainlib/examples/digits_mlp.py, so that an installed trainlib runs it
too (python -m trainlib.examples digits_mlp); --help lists the flags.
"""
import sys

from trainlib.examples.digits_mlp import main

if __name__ == "__main__":
    sys.exit(main())
