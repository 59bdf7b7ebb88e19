"""The C allocator's handling of large arrays: whether memory numpy frees stays in the process
for the next allocation instead of going back to the system.

Owns: glibc's `mallopt` thresholds (the only allocator tuned; elsewhere nothing happens).
glibc hands each array above its mmap threshold (128 KiB at first, raised on its own up to
32 MiB as such arrays are freed) fresh pages from the system and returns them when the array
is freed; it also trims free memory at the top of its heaps. A training step frees and
makes again arrays of the same sizes every call, so every call page-faults on memory it
just gave back (about 10% of a CNN step's CPU time). Keeping freed memory (`keep(True)`, the
default from import unless the environment sets TRAINLIB_KEEP_FREED_MEMORY=0) sets the mmap
threshold to its maximum (32 MiB: smaller arrays come from the heap and are reused) and the
trim threshold to 512 MiB, as a caching allocator keeps its pool; `keep(False)` puts glibc's
defaults back. The cost: up to that much freed memory stays counted in the process's RSS.
Invariants: nothing here imports from trainlib.
"""
import ctypes
import ctypes.util
import os

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_KEPT = {_M_MMAP_THRESHOLD: 32 << 20, _M_TRIM_THRESHOLD: 512 << 20}
_DEFAULTS = {_M_MMAP_THRESHOLD: 128 << 10, _M_TRIM_THRESHOLD: 128 << 10}
_state = {"kept": False}


def _mallopt():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.mallopt if hasattr(libc, "mallopt") and hasattr(libc, "gnu_get_libc_version") \
            else None
    except OSError:
        return None


def keep(enabled):
    """Keeps freed memory for reuse (True) or gives it back as glibc does by default (False).
    Returns whether the allocator could be told (False off glibc)."""
    mallopt = _mallopt()
    if mallopt is None:
        return False
    values = _KEPT if enabled else _DEFAULTS
    done = all(mallopt(ctypes.c_int(k), ctypes.c_int(v)) == 1 for k, v in values.items())
    _state["kept"] = bool(enabled) and done
    return done


def kept():
    """Whether freed memory is kept for reuse now."""
    return _state["kept"]


if os.environ.get("TRAINLIB_KEEP_FREED_MEMORY", "1") != "0":
    keep(True)
