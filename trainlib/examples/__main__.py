"""`python -m trainlib.examples`: list the examples or run one by name."""
import sys

from trainlib.examples import main

sys.exit(main())
