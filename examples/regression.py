"""Regression: a functional-API model on scikit-learn's diabetes data set (442 patients, 10 features).

The code lives in trainlib/examples/regression.py, so that an installed trainlib runs it
too (python -m trainlib.examples regression); --help lists the flags.
"""
import sys

from trainlib.examples.regression import main

if __name__ == "__main__":
    sys.exit(main())
