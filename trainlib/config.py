"""`tl.config`: eager/graph switch and devices (`list_devices`, `set_default_device`)."""
from .graph.backend import get_default_device, set_default_device  # noqa: F401 -- tl.config API
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
    """A device trainlib can run on (`name`, `device_type`)."""

    def __init__(self, name, device_type):
        self.name = name
        self.device_type = device_type

    def __repr__(self):
        return f"PhysicalDevice(name={self.name!r}, device_type={self.device_type!r})"


def list_devices(device_type=None):
    """The devices available: always the CPU, and the GPU when CuPy finds one."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    if _gpu_available():
        devices.append(PhysicalDevice("/physical_device:GPU:0", "GPU"))
    if device_type is not None:
        devices = [d for d in devices if d.device_type == device_type.upper()]
    return devices


list_physical_devices = list_devices
