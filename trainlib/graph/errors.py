"""The error classes of `tl.errors` and the helper that names the user's line.

Owns: `OpError` and its subclasses (as TensorFlow's), and `user_location()`,
which finds the first stack frame outside trainlib so that every error can say
where in the user's code it came from.
"""
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class OpError(Exception):
    """An op failed: bad arguments, shapes or values.

    Attributes:
        op: the op type name (`"MatMul"`), or None.
        location: `"file.py:12"` of the user's code that created the op, or None.
    """

    def __init__(self, message, op=None, location=None):
        self.op = op
        self.location = location
        self.message = message
        super().__init__(message)


class OutOfRangeError(OpError):
    """An iterator was read past the end of its data ("End of sequence")."""


class InvalidArgumentError(OpError, ValueError):
    """An op got an argument of the wrong dtype, shape or value."""


class NotFoundError(OpError):
    """Something the op needs does not exist."""


class ResourceExhaustedError(OpError, MemoryError):
    """Out of memory or another resource."""


class UnimplementedError(OpError, NotImplementedError):
    """The op or feature is not implemented for these arguments."""


class FailedPreconditionError(OpError):
    """The op ran in a state that does not allow it (e.g. an uninitialized variable)."""


_EXAMPLES_DIR = os.path.join(_PACKAGE_DIR, "examples") + os.sep


def _is_library_file(filename):
    if filename.startswith(_EXAMPLES_DIR):
        return False  # the shipped examples are user code: errors name their lines
    return filename.startswith(_PACKAGE_DIR) or filename.startswith("<trainlib")


# file name -> True if it is trainlib's (asked once per op while tracing). Keyed by the name, not
# the code object, so no user function is kept alive by it; bounded, as generated code gets a new
# name per compiled graph.
_LIBRARY_FILES = {}
_LIBRARY_FILES_MAX = 4096


def user_location(skip_library=True):
    """`"path/file.py:LINE"` of the innermost frame outside the trainlib package."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        library = _LIBRARY_FILES.get(filename)
        if library is None:
            if len(_LIBRARY_FILES) >= _LIBRARY_FILES_MAX:
                _LIBRARY_FILES.clear()
            library = _LIBRARY_FILES[filename] = _is_library_file(filename) or \
                filename.startswith("<frozen")
        if not (library and skip_library):
            return f"{code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def op_error(cls, op_name, message, location=None):
    """Builds `cls` with a message that names the op and the user's line."""
    location = location or user_location()
    where = f" (at {location})" if location else ""
    if not issubclass(cls, OpError):  # TypeError/ValueError for misuse of the Python API
        return cls(f"{op_name}: {message}{where}")
    return cls(f"{op_name}: {message}{where}", op=op_name, location=location)
