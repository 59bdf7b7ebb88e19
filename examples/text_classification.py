"""Text classification: Embedding + masked mean pooling + Dense on synthetic movie reviews.

The code lives in trainlib/examples/text_classification.py, so that an installed trainlib runs it
too (python -m trainlib.examples text_classification); --help lists the flags.
"""
import sys

from trainlib.examples.text_classification import main

if __name__ == "__main__":
    sys.exit(main())
