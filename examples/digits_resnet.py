"""Digits ResNet: residual Add blocks, SeparableConv2D and GlobalAveragePooling2D on 8x8 digits.

The code lives in trainlib/examples/digits_resnet.py, so that an installed trainlib runs it
too (python -m trainlib.examples digits_resnet); --help lists the flags.
"""
import sys

from trainlib.examples.digits_resnet import main

if __name__ == "__main__":
    sys.exit(main())
