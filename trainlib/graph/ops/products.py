"""The kernels matrix products run on numpy: which one a product of a given dtype and shapes
takes, and the threads it runs on.

Owns: `kernel_for` (the choice, made once at code generation when the shapes are known, else
per call by `product`), and the kernels themselves, each `kernel(xp, a, b, out=None)` as
`xp.matmul` is:
  * float32, float64, complex64, complex128 (the dtypes numpy hands to BLAS): plain
    `xp.matmul` for products BLAS runs on one thread by itself; `small_matmul` (BLAS held at
    one thread) up to `threads.SMALL_PRODUCT` multiply-adds; above that `parallel_matmul`:
    blocks of rows (or columns, or batch entries) on trainlib's pool, each block on one BLAS
    thread (`threads.run_split`). So BLAS's own threads never run inside a trainlib kernel
    while the pool has more than one thread: OpenBLAS splits a product statically and its
    threads spin-wait on each other at every step, so one thread that loses its core to
    another process stalls the whole product; the pool hands blocks out as threads get free,
    and a core lost delays one block.
  * float16: `half_matmul`, the product in float32 (through the kernels above) rounded back
    once, as TensorFlow's and cuBLAS's float16 products accumulate in float32; numpy's own
    float16 matmul is a loop without BLAS, a hundred times slower.
  * integers and bool: numpy's own loop (no BLAS multiplies them); exact, wrapping as
    TensorFlow's integer matmul does.
On another xp (CuPy) every kernel is `xp.matmul` itself.
Invariants: every kernel returns what `xp.matmul(a, b)` would, in `a`'s dtype, into `out`
when given (a fresh array otherwise, never a view of an input).
"""
import numpy as _np

from .. import threads as _threads

# numpy's matmul calls BLAS for these dtypes (and loops over the others itself)
_BLAS = frozenset(_np.dtype(d) for d in (_np.float32, _np.float64, _np.complex64, _np.complex128))
# dtypes multiplied in a wider BLAS dtype and rounded back
_VIA = {_np.dtype(_np.float16): _np.dtype(_np.float32)}


def macs(a_shape, b_shape):
    """Multiply-adds of the (batched, broadcast) product of arrays of these shapes."""
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    batch = 1
    for da, db in zip(reversed(a_shape[:-2]), reversed(b_shape[:-2])):
        batch *= max(da, db)
    longer = a_shape if len(a_shape) > len(b_shape) else b_shape
    for d in longer[:abs(len(a_shape) - len(b_shape))]:
        batch *= d
    return batch * m * n * k


def kernel_for(dtype, a_shape, b_shape):
    """The kernel (a function above, or "matmul": `xp.matmul` itself) a numpy product of
    `dtype` and these shapes runs; `product` (decides per call) when a dim is unknown (None).

    Example:
        >>> kernel_for(np.float16, (2, 3), (3, 4)) is half_matmul
        True
    """
    dtype = _np.dtype(dtype)
    if dtype in _VIA:
        return half_matmul
    if dtype not in _BLAS:
        return "matmul"
    if None in tuple(a_shape) + tuple(b_shape):
        return product
    count = macs(a_shape, b_shape)
    if _threads.parallel_product(count):
        return parallel_matmul
    if _threads.small_product(count):
        return small_matmul
    return "matmul"


def product(xp, a, b, out=None):
    """`xp.matmul(a, b, out=out)` through the kernel `kernel_for` picks for these arrays."""
    kernel = kernel_for(a.dtype, a.shape, b.shape) if xp.__name__ == "numpy" else "matmul"
    if kernel == "matmul":
        return xp.matmul(a, b, out=out)
    return kernel(xp, a, b, out=out)


def small_matmul(xp, a, b, out=None):
    """xp.matmul on one BLAS thread: a product that BLAS would thread but that is small
    (`threads.small_product`)."""
    return _threads.one_blas_thread(lambda: xp.matmul(a, b, out=out))


def parallel_matmul(xp, a, b, out=None):
    """xp.matmul as blocks on trainlib's pool, each on one BLAS thread
    (`threads.product_ranges`): of batch entries when both inputs have the same leading batch
    dim, long enough for every block, else of the output's rows or columns, whichever are more."""
    if xp.__name__ != "numpy":
        return xp.matmul(a, b, out=out)
    if out is None:
        batch = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        out = xp.empty(batch + (a.shape[-2], b.shape[-1]), _np.result_type(a, b))
    count = macs(a.shape, b.shape)
    pieces = _threads.pool_threads() * _threads.PIECES_PER_THREAD
    if a.ndim == b.ndim > 2 and a.shape[0] == b.shape[0] >= pieces:
        def block(lo, hi):
            xp.matmul(a[lo:hi], b[lo:hi], out=out[lo:hi])
        ranges = _threads.product_ranges(a.shape[0], count)
    elif a.shape[-2] >= b.shape[-1]:
        def block(lo, hi):
            xp.matmul(a[..., lo:hi, :], b, out=out[..., lo:hi, :])
        ranges = _threads.product_ranges(a.shape[-2], count)
    else:
        def block(lo, hi):
            xp.matmul(a, b[..., lo:hi], out=out[..., lo:hi])
        ranges = _threads.product_ranges(b.shape[-1], count)
    if len(ranges) == 1:   # threads off since the code was made: BLAS as set
        return xp.matmul(a, b, out=out)
    _threads.run_split(block, ranges)
    return out


def half_matmul(xp, a, b, out=None):
    """A float16 product computed in float32 and rounded to float16 once (numpy's float16
    matmul is a loop without BLAS)."""
    if xp.__name__ != "numpy":
        return xp.matmul(a, b, out=out)
    wide = _VIA[a.dtype]
    result = product(xp, a.astype(wide), b.astype(wide))
    if out is None:
        return result.astype(a.dtype)
    xp.copyto(out, result, casting="same_kind")
    return out
