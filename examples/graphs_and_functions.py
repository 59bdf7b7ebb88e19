"""Graphs and tl.function: a runnable tour of what tracing does, ending with a training step.

The code lives in trainlib/examples/graphs_and_functions.py, so that an installed trainlib runs it
too (python -m trainlib.examples graphs_and_functions); --help lists the flags.
"""
import sys

from trainlib.examples.graphs_and_functions import main

if __name__ == "__main__":
    sys.exit(main())
