"""Threads the kernels use, and op determinism: the settings behind `tl.config.threading` and
`tl.config.experimental.enable_op_determinism`.

Owns: how many threads one op may use (`intra_op`: numpy's BLAS and trainlib's own pool of
worker threads, so the two never add up to more threads than that), that pool (the fused
elementwise op's blocks, the batch slices of the convolution and pooling kernels, the
blocks of large matrix products and the slices of large elementwise calls run on it, `split`/`run_split`; BLAS is held at one thread
while they do), the thread policy of matrix products (`small_product`: one BLAS thread;
`parallel_product`/`product_ranges`: blocks on the pool; see the comment above them), the count of ops run side by side
(`inter_op`: accepted, as TensorFlow's; a compiled graph runs its ops one after another),
the BLAS library's thread count (set through its own C entry point, found among the loaded
libraries, or through threadpoolctl when that is installed: no dependency), and the
process-wide op-determinism switch.
Invariants: 0 means "the default" (one thread per core for the pool; BLAS left as it
started); nothing here imports from trainlib, so any module may read it.
"""
import concurrent.futures
import ctypes
import os

_intra_op = 0
_inter_op = 0
_determinism = False
_blas_default = None   # the BLAS thread count at the first change, restored by 0


_cpus = {}   # pid -> the count, asked once per process (the kernels ask on every call)


def cpu_count():
    """The cores this process may run on (its CPU affinity when it first asked), at least 1."""
    pid = os.getpid()
    if pid not in _cpus:
        try:
            _cpus[pid] = len(os.sched_getaffinity(0)) or 1
        except (AttributeError, OSError):
            _cpus[pid] = os.cpu_count() or 1
    return _cpus[pid]


def pool_threads():
    """Threads trainlib's own pool (the fused op's blocks, the conv and pooling kernels' batch
    slices) uses: the intra-op setting, else one per core."""
    return _intra_op or cpu_count()


# ------------------------------------------------------------------ the worker pool

_POOL = []   # [executor, pid, threads] of the pool made last


def pool(threads=None):
    """trainlib's pool of `threads` (default `pool_threads()`) worker threads, made on first use
    and made again in a forked child (the parent's threads are not there) or for a new count
    (the old pool's threads end when idle)."""
    threads = threads or pool_threads()
    if _POOL and _POOL[1:] != [os.getpid(), threads]:
        old, pid = _POOL[0], _POOL[1]
        _POOL.clear()
        if pid == os.getpid():
            old.shutdown(wait=False)
    if not _POOL:
        _POOL.extend((concurrent.futures.ThreadPoolExecutor(max_workers=threads,
                                                            thread_name_prefix="trainlib"),
                      os.getpid(), threads))
    return _POOL[0]


def drop_pool():
    """Shuts the pool down (the next `pool()` makes a new one)."""
    if _POOL:
        _POOL[0].shutdown()
    _POOL.clear()


MIN_SPLIT_WORK = 1 << 17   # elements a batch slice should move at least to be worth a hand-off


PIECES_PER_THREAD = 2   # batch slices per thread (see `split`)


def split(n, work, min_work=None, pieces_per_thread=None):
    """[lo, hi) ranges of `n` rows (batch entries) for the pool: `pieces_per_thread` per thread
    (so a thread that gets its core back late leaves fewer rows to wait for), none smaller than
    `min_work` of the `work` units all rows hold together; one range when threads are off
    (`pool_threads()` is 1) or the work is small (a hand-off costs tens of microseconds)."""
    threads, min_work = pool_threads(), min_work or MIN_SPLIT_WORK
    pieces_per_thread = pieces_per_thread or PIECES_PER_THREAD
    if threads < 2 or n < 2 or work < 2 * min_work:
        return [(0, n)]
    pieces = min(n, threads * pieces_per_thread, max(work // min_work, 2))
    bounds = [n * i // pieces for i in range(pieces + 1)]
    return [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


def run_split(fn, ranges):
    """[fn(lo, hi) for each range]: the first on the calling thread, the others on the pool
    (any not yet started when the caller is free it runs itself), with BLAS held at one
    thread meanwhile, so the pool's threads are the only ones and never oversubscribe the
    cores. numpy releases the GIL in its loops and BLAS, so the ranges run in parallel."""
    if len(ranges) == 1:
        return [fn(*ranges[0])]
    libraries = _blas_libraries()
    if not libraries and _threadpoolctl() is not None:
        with _threadpoolctl().threadpool_limits(limits=1, user_api="blas"):
            return _run_ranges(fn, ranges)
    before = int(libraries[0][0]()) if libraries else 0
    if before > 1:
        set_blas_threads(1)
    try:
        return _run_ranges(fn, ranges)
    finally:
        if before > 1:
            set_blas_threads(before)


# The policy for matrix products (the kernels are graph/ops/products.py): at most
# BLAS_SINGLE_BELOW multiply-adds, BLAS runs them on one thread by itself; up to
# SMALL_PRODUCT trainlib holds BLAS at one thread: a second thread there saves microseconds,
# but OpenBLAS's workers then spin for tens of milliseconds waiting for more work, on the
# cores trainlib's pool (and the next kernels) need. Larger products run as blocks on
# trainlib's pool, each block on one BLAS thread (`run_split`), never on BLAS's own threads:
# OpenBLAS splits a product into one fixed share per thread, and its threads spin-wait on
# each other at every step, so one thread that loses its core to another process stalls the
# whole product (a step ran 5x TensorFlow's time under load); the pool hands out
# PIECES_PER_THREAD blocks per thread as threads get free, so a lost core delays one block.
# With the pool at one thread (intra_op 1), BLAS runs every product at the intra-op count.
SMALL_PRODUCT = 1 << 23
# OpenBLAS runs products of at most this many multiply-adds on one thread by itself
BLAS_SINGLE_BELOW = 1 << 18
# multiply-adds a block of a large product holds at least (a block costs a hand-off and
# repacks the shared operand: a few hundred microseconds of work keep that small)
MIN_PRODUCT_BLOCK = 1 << 22


def small_product(macs):
    """Whether a matrix product of `macs` multiply-adds is one trainlib keeps on one BLAS
    thread (more than BLAS keeps there by itself, at most `SMALL_PRODUCT`)."""
    return BLAS_SINGLE_BELOW < macs <= SMALL_PRODUCT and pool_threads() > 1


def parallel_product(macs):
    """Whether a matrix product of `macs` multiply-adds runs as blocks on trainlib's pool
    (more than `SMALL_PRODUCT`, and the pool has more than one thread)."""
    return macs > SMALL_PRODUCT and pool_threads() > 1


def product_ranges(n, macs):
    """[lo, hi) ranges of the `n` rows (or columns, or batch entries) of a product of `macs`
    multiply-adds, one per block for the pool (`split`), none under `MIN_PRODUCT_BLOCK`."""
    return split(n, macs, min_work=MIN_PRODUCT_BLOCK)


# elementwise calls in compiled graphs over at least this many elements run as flat slices
# on the pool (`run_elementwise`): a hand-off costs tens of microseconds, a pass over 1M
# float32 about a millisecond (an optimizer's flat update is a dozen such passes)
SPLIT_ELEMENTWISE = 1 << 20


def run_elementwise(fn, *arrays, out):
    """`fn(*arrays, out=out)` (a ufunc) over flat slices on the pool (`split`, `run_split`)
    when every array is either of `out`'s size or of one element, and `out` and the
    full-size ones are C-contiguous; else in one call. Slice i of the result depends on
    slice i of the inputs only, so `out` may be one of them."""
    n = out.size
    sizes = [getattr(a, "size", 1) for a in arrays]
    ranges = [(0, n)]
    if out.flags.c_contiguous and all(
            size == 1 or (size == n and a.flags.c_contiguous) for a, size in zip(arrays, sizes)):
        ranges = split(n, n)
    if len(ranges) == 1:
        return fn(*arrays, out=out)
    flat_out = out.reshape(-1)
    flats = [a.reshape(-1) if size == n and size > 1 else a for a, size in zip(arrays, sizes)]
    full = [size == n and size > 1 for size in sizes]
    run_split(lambda lo, hi: fn(*[f[lo:hi] if whole else f for f, whole in zip(flats, full)],
                                out=flat_out[lo:hi]), ranges)
    return out


def one_blas_thread(fn, *args, **kwargs):
    """fn(*args, **kwargs) with BLAS held at one thread (restored after)."""
    libraries = _blas_libraries()
    before = int(libraries[0][0]()) if libraries else 0
    if before <= 1:
        return fn(*args, **kwargs)
    set_blas_threads(1)
    try:
        return fn(*args, **kwargs)
    finally:
        set_blas_threads(before)


def _run_ranges(fn, ranges):
    futures = [pool().submit(fn, lo, hi) for lo, hi in ranges[1:]]
    try:
        first = fn(*ranges[0])
    except BaseException:
        for f in futures:
            f.cancel()
        concurrent.futures.wait(futures)
        raise
    # a range no worker took yet runs here (so a caller that is itself one of the pool's
    # workers never waits on a range queued behind it)
    return [first] + [fn(*r) if f.cancel() else f.result() for r, f in zip(ranges[1:], futures)]


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
