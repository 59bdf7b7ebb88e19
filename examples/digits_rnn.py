"""Digits RNN: an LSTM reads each 8x8 digit image row by row, as a sequence of 8 steps.

The code lives in trainlib/examples/digits_rnn.py, so that an installed trainlib runs it
too (python -m trainlib.examples digits_rnn); --help lists the flags.
"""
import sys

from trainlib.examples.digits_rnn import main

if __name__ == "__main__":
    sys.exit(main())
