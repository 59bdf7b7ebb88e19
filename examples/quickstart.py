"""Quickstart: eager tensors, a traced Function, and a tiny linear regression.

The code lives in trainlib/examples/quickstart.py, so that an installed trainlib runs it
too (python -m trainlib.examples quickstart); --help lists the flags.
"""
import sys

from trainlib.examples.quickstart import main

if __name__ == "__main__":
    sys.exit(main())
