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

    Made as `OpError(message, op=None, location=None)`, or with TensorFlow's
    positional form `OpError(node_def, op, message)` (code written against
    `tf.errors` raises them so).

    Attributes:
        op: the op type name (`"MatMul"`), or None.
        location: `"file.py:12"` of the user's code that created the op, or None.
        message: the message; `error_code`: TensorFlow's code (`tl.errors.INVALID_ARGUMENT`).
    """

    error_code = 2   # UNKNOWN; each subclass sets its own

    def __init__(self, *args, op=None, location=None, **unused):
        if len(args) >= 3:     # TensorFlow's (node_def, op, message, ...)
            self.node_def = args[0]
            op = args[1] if op is None else op
            message = args[2]
        elif args:
            message = args[0]
            if len(args) == 2 and op is None:
                op = args[1]
            self.node_def = None
        else:
            message, self.node_def = "", None
        self.op = op
        self.location = location
        self.message = message
        super().__init__(message)


def _error(name, code, doc, *bases):
    return type(name, (OpError,) + bases, {"error_code": code, "__doc__": doc,
                                            "__module__": __name__})


# TensorFlow's error classes, each with its code (`tl.errors.INVALID_ARGUMENT` is 3)
CancelledError = _error("CancelledError", 1, "An operation or step was cancelled.")
UnknownError = _error("UnknownError", 2, "An error of no other kind.")
InvalidArgumentError = _error("InvalidArgumentError", 3, "An op got an argument of the wrong "
                              "dtype, shape or value.", ValueError)
DeadlineExceededError = _error("DeadlineExceededError", 4, "A deadline passed first.")
NotFoundError = _error("NotFoundError", 5, "Something the op needs does not exist.")
AlreadyExistsError = _error("AlreadyExistsError", 6, "What the op would create exists already.")
PermissionDeniedError = _error("PermissionDeniedError", 7, "The caller may not run the operation.")
ResourceExhaustedError = _error("ResourceExhaustedError", 8, "Out of memory or another resource.",
                                MemoryError)
FailedPreconditionError = _error("FailedPreconditionError", 9, "The op ran in a state that does "
                                 "not allow it (e.g. an uninitialized variable).")
AbortedError = _error("AbortedError", 10, "The operation was aborted.")
OutOfRangeError = _error("OutOfRangeError", 11, "An iterator was read past the end of its data "
                         "(\"End of sequence\").")
UnimplementedError = _error("UnimplementedError", 12, "The op or feature is not implemented for "
                            "these arguments.", NotImplementedError)
InternalError = _error("InternalError", 13, "An invariant of the system broke.")
UnavailableError = _error("UnavailableError", 14, "A service the operation needs is not "
                          "available now.")
DataLossError = _error("DataLossError", 15, "Data was lost or corrupted beyond recovery.")
UnauthenticatedError = _error("UnauthenticatedError", 16, "The request has no valid credentials.")


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operation on a symbolic tensor that needs its value (iterating it, `bool(t)`)
    outside what AutoGraph converts."""


# TensorFlow's error codes (`tl.errors.INVALID_ARGUMENT`...)
(OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS,
 PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE,
 UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED) = range(17)


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


def is_library_file(filename):
    """True for trainlib's own files (and its generated code); the shipped examples are not."""
    library = _LIBRARY_FILES.get(filename)
    if library is None:
        if len(_LIBRARY_FILES) >= _LIBRARY_FILES_MAX:
            _LIBRARY_FILES.clear()
        library = _LIBRARY_FILES[filename] = _is_library_file(filename) or \
            filename.startswith("<frozen")
    return library


def user_location(skip_library=True):
    """`"path/file.py:LINE"` of the innermost frame outside the trainlib package."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        library = _LIBRARY_FILES.get(filename)
        if library is None:
            library = is_library_file(filename)
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
