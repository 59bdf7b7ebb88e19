"""Digits CNN: Conv2D, MaxPooling2D, BatchNormalization and Dropout on 8x8 digit images.

The code lives in trainlib/examples/digits_cnn.py, so that an installed trainlib runs it
too (python -m trainlib.examples digits_cnn); --help lists the flags.
"""
import sys

from trainlib.examples.digits_cnn import main

if __name__ == "__main__":
    sys.exit(main())
