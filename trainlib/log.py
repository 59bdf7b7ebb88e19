"""trainlib's logger (`tl.get_logger()`, as TensorFlow's `tf.get_logger()`).

Owns the one `logging.Logger` named "trainlib"; without handlers of the user's it writes
warnings and above to stderr as Python's last-resort handler does.
"""
import logging

__all__ = ["get_logger"]


def get_logger():
    """The `logging.Logger` named "trainlib" (set its level to see trainlib's info messages)."""
    return logging.getLogger("trainlib")
