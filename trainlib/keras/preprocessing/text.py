"""`trainlib.keras.preprocessing.text`: tf.keras 2's `Tokenizer` and text helpers, re-exported
from where they live."""
from ...text_tokenizer import *  # noqa: F401,F403
from ...text_tokenizer import __all__  # noqa: F401
