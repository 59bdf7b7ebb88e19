"""`tl.config`: eager/graph switch and devices (`list_physical_devices`,
`list_logical_devices`, `get_visible_devices`/`set_visible_devices`,
`set_soft_device_placement`, `set_default_device`, `experimental.set_memory_growth`)."""
from .graph import backend as _backend
from .graph.backend import get_default_device, set_default_device  # noqa: F401 -- tl.config API
from .graph.backend import get_soft_device_placement, set_soft_device_placement  # noqa: F401
from .graph.backend import gpu_available as _gpu_available
from .graph import optimizer_config as optimizer  # noqa: F401 -- tl.config.optimizer.*
from .graph.context import process as _process


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

    list_physical_devices = staticmethod(list_devices)
    get_visible_devices = staticmethod(get_visible_devices)
    set_visible_devices = staticmethod(set_visible_devices)
    list_logical_devices = staticmethod(list_logical_devices)


experimental = _Experimental()
