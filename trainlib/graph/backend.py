"""The array module kernels run on: numpy on the CPU, CuPy on NVIDIA GPUs.

Owns: device names, the array module for each, and transfers between them.
Invariant: kernels never import numpy; they receive `xp` from here. CuPy is
imported only when a GPU device is asked for, so CPU-only machines never need it.
"""
import numpy

CPU, GPU = "cpu", "gpu"
_cupy = None


def _load_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy  # noqa: PLC0415 -- optional dependency, imported on demand
            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("CuPy found no CUDA device")
        except Exception as e:  # ImportError, CUDA driver errors
            raise RuntimeError(
                f"device 'gpu' was asked for, but no usable GPU was found ({e}). "
                "Install the GPU extra (pip install 'trainlib[gpu]') on a machine with an "
                "NVIDIA GPU, or use tl.device('cpu').") from None
        _cupy = cupy
    return _cupy


def gpu_available():
    """True if CuPy imports and sees at least one CUDA device."""
    try:
        _load_cupy()
        return True
    except RuntimeError:
        return False


def canonical_device(name):
    """'cpu' or 'gpu' from names such as 'CPU:0', '/gpu:0', 'cuda'."""
    text = str(name).lower().strip("/")
    text = text.replace("device:", "").split(":")[0]
    if text in ("cpu",):
        return CPU
    if text in ("gpu", "cuda"):
        return GPU
    raise ValueError(f"Unknown device {name!r}; expected 'cpu' or 'gpu'")


def array_module(device):
    """numpy for 'cpu', cupy for 'gpu' (raises RuntimeError with the fix if no GPU)."""
    if device == CPU:
        return numpy
    return _load_cupy()


def device_of(array):
    """The device an array lives on."""
    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return CPU
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return GPU
    return CPU


def to_device(array, device):
    """A copy of `array` on `device` (the same object if it is already there)."""
    if device == CPU:
        if _cupy is not None and isinstance(array, _cupy.ndarray):
            return array.get()
        return array
    cp = _load_cupy()
    return cp.asarray(array)


def to_numpy(array):
    """A numpy array (a host copy for GPU arrays)."""
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return array.get()
    return numpy.asarray(array)


class device:  # noqa: N801 -- TensorFlow's name for the context manager
    """Runs the ops in its block on `name` ('cpu' or 'gpu'); tensors created there live there.

    Example:
        >>> with tl.device("cpu"):
        ...     x = tl.ones([2])
    """

    def __init__(self, name):
        self.name = canonical_device(name)

    def __enter__(self):
        from .context import state  # noqa: PLC0415 -- context is below backend in spirit only
        self._saved = (state.device, state.xp)
        state.xp = array_module(self.name)
        state.device = self.name
        return self

    def __exit__(self, *exc):
        from .context import state  # noqa: PLC0415
        state.device, state.xp = self._saved
