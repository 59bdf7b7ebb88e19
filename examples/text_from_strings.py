"""Text classification from raw strings: TextVectorization inside the model, served on strings.

The code lives in trainlib/examples/text_from_strings.py, so that an installed trainlib runs it
too (python -m trainlib.examples text_from_strings); --help lists the flags.
"""
import sys

from trainlib.examples.text_from_strings import main

if __name__ == "__main__":
    sys.exit(main())
