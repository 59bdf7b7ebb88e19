"""Threads the kernels use, and op determinism: the settings behind `tl.config.threading` and
`tl.config.experimental.enable_op_determinism`.

Owns: how many threads one op may use (`intra_op`: numpy's BLAS and trainlib's own pool of
the fused elementwise op, so the two never add up to more threads than that), the count of
ops run side by side (`inter_op`: accepted, as TensorFlow's; a compiled graph runs its ops
one after another), the BLAS library's thread count (set through its own C entry point,
found among the loaded libraries, or through threadpoolctl when that is installed: no
dependency), and the process-wide op-determinism switch.
Invariants: 0 means "the default" (one thread per core for the pool; BLAS left as it
started); nothing here imports from trainlib, so any module may read it.
"""
import ctypes
import os

_intra_op = 0
_inter_op = 0
_determinism = False
_blas_default = None   # the BLAS thread count at the first change, restored by 0


def cpu_count():
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_threads():
    """Threads trainlib's own pool (the fused op's blocks) uses: the intra-op setting, else
    one per core."""
    return _intra_op or cpu_count()


def get_intra_op():
    """The intra-op setting (0: the default)."""
    return _intra_op


def set_intra_op(n):
    """At most `n` threads per op: trainlib's pool and numpy's BLAS (0: the defaults back)."""
    global _intra_op, _blas_default
    n = _count(n, "intra_op_parallelism_threads")
    if _blas_default is None:
        _blas_default = blas_threads()
    _intra_op = n
    target = n or _blas_default
    if target:
        set_blas_threads(target)   # (the fused op's pool follows pool_threads() by itself)


def get_inter_op():
    """The inter-op setting (0: the default)."""
    return _inter_op


def set_inter_op(n):
    """Recorded, as TensorFlow's: a compiled graph runs its ops in order, one at a time."""
    global _inter_op
    _inter_op = _count(n, "inter_op_parallelism_threads")


def _count(n, what):
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"{what} must be an int >= 0 (0: the default), got {n!r}")
    return n


# ------------------------------------------------------------------ the BLAS library

_SETTERS = ("openblas_set_num_threads", "openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
            "MKL_Set_Num_Threads")
_GETTERS = ("openblas_get_num_threads", "openblas_get_num_threads64_",
            "scipy_openblas_get_num_threads", "scipy_openblas_get_num_threads64_",
            "MKL_Get_Max_Threads")
_blas = []   # [(getter, setter)] of the loaded BLAS libraries, found once


def _blas_libraries():
    if _blas:
        return _blas[0]
    found = []
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps
                     if "/" in line and ("blas" in line.lower() or "mkl" in line.lower())}
    except OSError:
        paths = set()
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        getter = next((getattr(lib, g) for g in _GETTERS if hasattr(lib, g)), None)
        setter = next((getattr(lib, s) for s in _SETTERS if hasattr(lib, s)), None)
        if getter is not None and setter is not None:
            getter.restype = ctypes.c_int
            found.append((getter, setter))
    _blas.append(found)
    return found


def blas_threads():
    """The BLAS library's thread count (0 if it could not be asked)."""
    libraries = _blas_libraries()
    if libraries:
        return int(libraries[0][0]())
    limits = _threadpoolctl()
    if limits is not None:
        counts = [lib["num_threads"] for lib in limits.threadpool_info()
                  if lib.get("user_api") == "blas"]
        return counts[0] if counts else 0
    return 0


def set_blas_threads(n):
    """Sets the BLAS library's thread count; False if no BLAS could be told."""
    libraries = _blas_libraries()
    for _, setter in libraries:
        setter(ctypes.c_int(n))
    if libraries:
        return True
    limits = _threadpoolctl()
    if limits is not None:
        limits.threadpool_limits(limits=n, user_api="blas")
        return True
    return False


def _threadpoolctl():
    try:
        import threadpoolctl  # noqa: PLC0415 -- optional, used only if installed
    except ImportError:
        return None
    return threadpoolctl


# ------------------------------------------------------------------ determinism

def set_determinism(enabled):
    """Turns op determinism on or off for the whole process."""
    global _determinism
    _determinism = bool(enabled)


def determinism_enabled():
    """True once op determinism is on."""
    return _determinism
