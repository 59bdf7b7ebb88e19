"""`tl.config`: eager/graph switch and devices (`list_physical_devices`,
`list_logical_devices`, `get_visible_devices`/`set_visible_devices`,
`set_soft_device_placement`, `set_default_device`, `experimental.set_memory_growth`,
`experimental.enable_op_determinism`) and `threading` (threads per op: numpy's BLAS and
trainlib's own pool)."""
from .graph import backend as _backend
from .graph.backend import get_default_device, set_default_device  # noqa: F401 -- tl.config API
from .graph.backend import get_soft_device_placement, set_soft_device_placement  # noqa: F401
from .graph.backend import gpu_available as _gpu_available
from .graph import optimizer_config as optimizer  # noqa: F401 -- tl.config.optimizer.*
from .graph.context import process as _process
from .graph import allocator as _allocator
from .graph import threads as _threads


def run_functions_eagerly(run_eagerly):
    """Makes every tl.function run its Python code eagerly (for debugging) when True.

    Example:
        >>> tl.config.run_functions_eagerly(True)
    """
    _process.run_eagerly = bool(run_eagerly)  # for every thread, as TensorFlow


def functions_run_eagerly():
    """True if `run_functions_eagerly(True)` is in force."""
    return _process.run_eagerly


class PhysicalDevice:
    """A device trainlib can run on (`name`, `device_type`), as TensorFlow's."""

    def __init__(self, name, device_type):
        self.name = name
        self.device_type = device_type

    def __eq__(self, other):
        return isinstance(other, PhysicalDevice) and (self.name, self.device_type) == (
            other.name, other.device_type)

    def __hash__(self):
        return hash((self.name, self.device_type))

    def __repr__(self):
        return f"PhysicalDevice(name={self.name!r}, device_type={self.device_type!r})"


class LogicalDevice(PhysicalDevice):
    """A device ops are placed on ('/device:CPU:0', '/device:GPU:0')."""

    def __repr__(self):
        return f"LogicalDevice(name={self.name!r}, device_type={self.device_type!r})"


def _select(devices, device_type):
    if device_type is None:
        return devices
    return [d for d in devices if d.device_type == str(device_type).upper()]


def list_devices(device_type=None):
    """The devices available: always the CPU, and the GPU when CuPy finds one.

    Example:
        >>> tl.config.list_physical_devices("GPU")   # [] on a machine without one
        []
    """
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    if _gpu_available():
        devices.append(PhysicalDevice("/physical_device:GPU:0", "GPU"))
    return _select(devices, device_type)


list_physical_devices = list_devices


def get_visible_devices(device_type=None):
    """The physical devices placement may use (all but those `set_visible_devices` hid)."""
    hidden = _backend.hidden_devices()
    return _select([d for d in list_devices() if d.device_type.lower() not in hidden],
                   device_type)


def set_visible_devices(devices, device_type=None):
    """Makes only `devices` (PhysicalDevices, or one) usable for placement; a hidden GPU is
    treated as missing (soft placement puts its work on the CPU).

    Raises:
        ValueError: when the CPU would be hidden, or for a device that is not listed.
    """
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    known = list_devices()
    for d in devices:
        if d not in known:
            raise ValueError(f"Unrecognized device: {d!r}; expected one of {known}")
    kinds = {d.device_type for d in known if device_type is None or
             d.device_type == str(device_type).upper()}
    visible = {d.device_type for d in devices}
    if "CPU" in kinds and "CPU" not in visible:
        raise ValueError("The CPU cannot be hidden: trainlib runs on it")
    _backend.set_hidden_devices({k.lower() for k in kinds - visible} |
                                (_backend.hidden_devices() - {k.lower() for k in kinds}))


def list_logical_devices(device_type=None):
    """The devices ops may be placed on: the visible physical devices, named as TensorFlow
    names logical devices ('/device:CPU:0')."""
    return [LogicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type)
            for d in get_visible_devices(device_type)]


class _Experimental:
    """`tl.config.experimental`: TensorFlow's memory settings, accepted (CuPy's memory pool
    grows on demand, so growth is always on) and the device listings under their older
    names."""

    def __init__(self):
        self._growth = {}

    def set_memory_growth(self, device, enable):
        """Accepted: records the setting (CuPy's pool already grows as needed).

        Raises:
            ValueError: for a device that is not a listed GPU (as TensorFlow).
        """
        if device not in list_devices():
            raise ValueError(f"Unrecognized device: {device!r}")
        if device.device_type != "GPU":
            raise ValueError(f"Cannot set memory growth on non-GPU devices: {device!r}")
        self._growth[device.name] = bool(enable)

    def get_memory_growth(self, device):
        """What `set_memory_growth` recorded for `device` (False if nothing)."""
        return self._growth.get(device.name, False)

    def get_device_details(self, device):
        """{"device_name": ...} for a GPU (empty for the CPU), as TensorFlow's."""
        return {"device_name": "GPU"} if device.device_type == "GPU" else {}

    @staticmethod
    def enable_op_determinism():
        """Makes two runs of the same seeded program give bit-identical results.

        trainlib's kernels are deterministic already (numpy's, its BLAS's for a fixed thread
        count, the fused op's blocks, the conv and pooling kernels' batch slices, whose
        partial sums are added in a fixed order for a fixed thread count); what this adds is
        TensorFlow's rule: a random op with neither a global nor an op seed raises
        RuntimeError instead of drawing from OS entropy, so set one first
        (`tl.random.set_seed`). Run with the same thread settings (`tl.config.threading`)
        in every run.
        """
        _threads.set_determinism(True)

    @staticmethod
    def disable_op_determinism():
        """Turns op determinism off again (unseeded random ops draw from OS entropy)."""
        _threads.set_determinism(False)

    @staticmethod
    def is_op_determinism_enabled():
        """True while op determinism is on."""
        return _threads.determinism_enabled()

    @staticmethod
    def set_keep_freed_memory(enabled):
        """Whether memory that numpy frees stays in the process for the next array (on by
        default: a step that makes arrays of the same sizes every call then never page-faults
        on memory it just gave back) or goes back to the system at once, as glibc does by
        default. Only glibc's allocator is tuned; returns whether it could be.
        TRAINLIB_KEEP_FREED_MEMORY=0 in the environment turns it off from import."""
        return _allocator.keep(bool(enabled))

    @staticmethod
    def get_keep_freed_memory():
        """Whether freed memory is kept for reuse now."""
        return _allocator.kept()

    list_physical_devices = staticmethod(list_devices)
    get_visible_devices = staticmethod(get_visible_devices)
    set_visible_devices = staticmethod(set_visible_devices)
    list_logical_devices = staticmethod(list_logical_devices)


experimental = _Experimental()


class _Threading:
    """`tl.config.threading`: how many threads an op may use, as TensorFlow's settings.

    `set_intra_op_parallelism_threads(n)` caps both numpy's BLAS (through the library's own
    entry point; no extra dependency) and trainlib's pool of the fused elementwise op at `n`
    threads, so that the two never oversubscribe the cores; 0 restores the defaults. Set it
    to 1 when several Python threads run trainlib at once (each would otherwise start a
    BLAS team of its own). `set_inter_op_parallelism_threads` is recorded: a compiled graph
    runs its ops one after another.
    """

    @staticmethod
    def get_intra_op_parallelism_threads():
        """The intra-op setting (0: the default, one thread per core)."""
        return _threads.get_intra_op()

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads):
        """At most `num_threads` threads per op (numpy's BLAS and trainlib's pool); 0: defaults.

        Example:
            >>> tl.config.threading.set_intra_op_parallelism_threads(1)
            >>> tl.config.threading.get_intra_op_parallelism_threads()
            1
            >>> tl.config.threading.set_intra_op_parallelism_threads(0)
        """
        _threads.set_intra_op(num_threads)

    @staticmethod
    def get_inter_op_parallelism_threads():
        """The inter-op setting (0: the default)."""
        return _threads.get_inter_op()

    @staticmethod
    def set_inter_op_parallelism_threads(num_threads):
        """Recorded (a compiled graph runs its ops in order); 0 is the default."""
        _threads.set_inter_op(num_threads)


threading = _Threading()
