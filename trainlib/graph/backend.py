"""The array module kernels run on: numpy on the CPU, CuPy on NVIDIA GPUs.

Owns: device names ('cpu', 'gpu'), the array module of each, the default
device, transfers between devices, and each device's memory limit.
Invariants: kernels never import numpy; they receive `xp` from here (through
`context.state.xp`). CuPy is imported only when a GPU device is asked for, so
CPU-only machines never need it. Device arrays are recognised generically, as
"not a numpy array but has `.get()`" (CuPy's host copy), so a stand-in array
module (tests' strict shim, installed with `simulated_gpu`) plays the GPU.
"""
import contextlib
import os

import numpy

from . import context

CPU, GPU = "cpu", "gpu"
_modules = {CPU: numpy}     # device -> array module; GPU appears once CuPy loads
_cupy_failure = None        # why CuPy could not load: asked once per process


def _load_cupy():
    global _cupy_failure
    module = _modules.get(GPU)
    if module is not None:
        return module
    if _cupy_failure is None:
        try:
            import cupy  # noqa: PLC0415 -- optional dependency, imported on demand
            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("CuPy found no CUDA device")
            _modules[GPU] = cupy
            return cupy
        except Exception as e:  # ImportError, CUDA driver errors
            _cupy_failure = str(e) or type(e).__name__
    raise RuntimeError(
        f"device 'gpu' was asked for, but no usable GPU was found ({_cupy_failure}). "
        "Install the GPU extra (pip install 'trainlib[gpu]', which brings CuPy) on a machine "
        "with an NVIDIA GPU and CUDA driver, or use tl.device('cpu').")


def gpu_available():
    """True if a GPU array module is usable (CuPy imports and sees a CUDA device)."""
    try:
        _load_cupy()
        return True
    except RuntimeError:
        return False


def parse_device(name):
    """(device, index) from TensorFlow's device strings: 'cpu', 'GPU:0', '/gpu:0',
    '/device:CPU:0', '/job:localhost/replica:0/task:0/device:GPU:1', 'cuda'. The index is
    an int, or None when absent or '*'. The job, replica and task parts are ignored (one
    process, one task).

    Raises:
        ValueError: for a device type other than CPU and GPU, or a malformed index.
    """
    kind, index = None, None
    for part in str(name).strip().split("/"):
        low = part.lower()
        if not low or low.startswith(("job:", "replica:", "task:")):
            continue
        if low.startswith("device:"):
            low = low[len("device:"):]
        fields = low.split(":")
        kind = fields[0]
        index = fields[1] if len(fields) > 1 else None
        if len(fields) > 2 or (index not in (None, "*") and not index.isdigit()):
            raise ValueError(f"Malformed device {name!r}; expected forms such as 'GPU:0', "
                             "'/device:CPU:0' or '/job:localhost/replica:0/task:0/device:GPU:0'")
    if kind == "cpu":
        device = CPU
    elif kind in ("gpu", "cuda"):
        device = GPU
    else:
        raise ValueError(f"Unknown device {name!r}; expected 'cpu' or 'gpu' (in any of "
                         "TensorFlow's forms, such as '/device:GPU:0')")
    return device, None if index in (None, "*") else int(index)


def canonical_device(name):
    """'cpu' or 'gpu' from names such as 'CPU:0', '/gpu:0', '/device:GPU:0', 'cuda' (see
    `parse_device` for every form)."""
    return parse_device(name)[0]


def array_module(device):
    """numpy for 'cpu', cupy for 'gpu' (raises RuntimeError with the fix if no GPU)."""
    module = _modules.get(device)
    return module if module is not None else _load_cupy()


def is_device_array(array):
    """True for arrays that live off the host (CuPy's, or a stand-in's): not numpy, has .get()."""
    return not isinstance(array, (numpy.ndarray, numpy.generic)) and hasattr(array, "get") \
        and hasattr(array, "dtype")


def device_of(array):
    """The device an array lives on: 'gpu' for device arrays, else 'cpu'."""
    return GPU if is_device_array(array) else CPU


def to_device(array, device):
    """`array` on `device`: the same object if it is already there, else a copy."""
    if device == CPU:
        return array.get() if is_device_array(array) else array
    if is_device_array(array):
        return array
    return array_module(device).asarray(array)


def transfer(xp, array):
    """`array` on the device of array module `xp` (a copy only if it lives elsewhere)."""
    if xp is numpy:
        return array.get() if is_device_array(array) else array
    return array if is_device_array(array) else xp.asarray(array)


def to_numpy(array):
    """A numpy array (a host copy for device arrays)."""
    if is_device_array(array):
        return array.get()
    return numpy.asarray(array)


_host_memory = None  # physical memory in bytes, asked once


def memory_limit(xp):
    """The most bytes one array on `xp`'s device could take: the GPU's memory, or on the host the
    physical memory (less if an address-space limit, `ulimit -v`, is lower)."""
    global _host_memory
    if xp is not numpy:
        try:
            return int(xp.cuda.runtime.memGetInfo()[1])
        except (AttributeError, RuntimeError):  # a stand-in array module: the host's limit
            pass
    if _host_memory is None:
        try:
            _host_memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):  # not POSIX: no known bound
            _host_memory = float("inf")
    limit = _host_memory
    try:
        import resource  # noqa: PLC0415 -- POSIX only
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
    except (ImportError, ValueError, OSError):
        pass
    return limit


def several_devices():
    """True once a second array module (the GPU's) is loaded: only then can inputs disagree."""
    return len(_modules) > 1


def first_input_elsewhere(values, device):
    """Index of the first array among an op's input values that is not on `device`, or None.
    Non-array values (a Variable behind a resource handle) are skipped."""
    for i, a in enumerate(values):
        if isinstance(a, numpy.ndarray):
            if device != CPU:
                return i
        elif device == CPU and is_device_array(a):
            return i
    return None


_hidden = set()   # device types hidden by tl.config.set_visible_devices


def _gpu_visible():
    return GPU not in _hidden and gpu_available()


def set_soft_device_placement(enabled):
    """Where a `tl.device` block asks for a GPU that is missing (or hidden), run its work on
    the CPU (True, TensorFlow's default), or raise RuntimeError (False)."""
    context.process.soft_device_placement = bool(enabled)


def get_soft_device_placement():
    """Whether soft device placement is on (see `set_soft_device_placement`)."""
    return context.process.soft_device_placement


def set_hidden_devices(kinds):
    """Hides the device types `kinds` ('gpu') from placement (tl.config.set_visible_devices)."""
    _hidden.clear()
    _hidden.update(kinds)


def hidden_devices():
    """The device types hidden by `set_hidden_devices`."""
    return set(_hidden)


def _state():
    return context.state


def set_default_device(name):
    """Makes `name` ('cpu' or 'gpu') the device ops run on outside `tl.device` scopes.

    Call it at program start, outside any `tl.device` block (a block restores
    the device it found when it exits).

    Raises:
        RuntimeError: for 'gpu' when no GPU is usable (the message says how to get one).
        ValueError: for an unknown device name.
    """
    name = canonical_device(name)
    xp = array_module(name)
    context.set_default_device(name, xp)  # for this thread and threads started later


def get_default_device():
    """The device ops run on now: 'cpu' or 'gpu'."""
    return _state().device


@contextlib.contextmanager
def simulated_gpu(xp):
    """Installs array module `xp` as the GPU's for the block (tests: a strict stand-in for
    CuPy lets device semantics run on machines without a GPU)."""
    saved = _modules.get(GPU)
    _modules[GPU] = xp
    try:
        yield xp
    finally:
        if saved is None:
            _modules.pop(GPU, None)
        else:
            _modules[GPU] = saved


class device:  # noqa: N801 -- TensorFlow's name for the context manager
    """Runs the ops in its block on `name` ('cpu' or 'gpu'); tensors created there live there.

    Inputs of an op must live on the device it runs on (else InvalidArgumentError);
    move them with `tensor.cpu()` / `tensor.gpu()`, or `tl.identity(x)` inside the block.

    `name` takes TensorFlow's forms ("GPU:0", "/device:CPU:0",
    "/job:localhost/replica:0/task:0/device:GPU:0"); None or "" asks for nothing. With
    soft placement on (the default, as TensorFlow), a GPU that is missing or hidden
    (`tl.config.set_visible_devices`) places the block on the CPU.

    Raises:
        RuntimeError: for a missing GPU when soft placement is off (the message says how to
            get one).

    Example:
        >>> with tl.device("cpu"):
        ...     x = tl.ones([2])
        >>> x.device
        'cpu'
    """

    def __init__(self, name):
        self.requested = name
        self.name, self.index = parse_device(name) if name not in (None, "") else (None, None)

    def __enter__(self):
        state = _state()
        self._saved = (state.device, state.xp)
        if self.name is None:   # tl.device(None) / tl.device(""): no placement asked
            return self
        name = self.name
        if name == GPU and (not _gpu_visible() or (self.index or 0) > 0) and \
                context.process.soft_device_placement:
            name = CPU   # soft placement: where the GPU asked for is missing, the CPU runs it
        elif name == GPU and GPU in _hidden:
            raise RuntimeError(f"device {self.requested!r} was asked for, but the GPU is hidden "
                               "by tl.config.set_visible_devices; soft placement is off")
        elif name == GPU and self.index:
            raise RuntimeError(f"device {self.requested!r} was asked for, but trainlib uses one "
                               "GPU ('GPU:0'); with tl.config.set_soft_device_placement(True) "
                               "the work runs on the CPU instead")
        xp = array_module(name)  # raises before any state changes if there is no GPU
        state.device, state.xp = name, xp
        return self

    def __exit__(self, *exc):
        state = _state()
        state.device, state.xp = self._saved
