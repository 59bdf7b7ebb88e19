"""Device placement against TensorFlow on this machine: TensorFlow's device strings parse,
soft placement (the default) runs a GPU block's work where TensorFlow runs it, and the
device listings agree in kind."""
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from .compare import check  # noqa: E402

NAMES = ["cpu", "CPU:0", "/CPU:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0",
         "GPU:0", "/GPU:0", "/device:GPU:0", "/job:localhost/replica:0/task:0/device:GPU:0", "gpu"]


@pytest.mark.parametrize("name", NAMES)
def test_device_blocks_run(name):
    def program(lib):
        with lib.device(name):
            x = lib.constant([1.0, 2.0]) * 3
        return [x, lib.config.get_soft_device_placement()]
    check(program)


@pytest.mark.parametrize("name", ["/device:GPU:0", "CPU:0"])
def test_device_blocks_in_functions(name):
    def program(lib):
        @lib.function
        def f(x):
            with lib.device(name):
                return x * 2 + 1
        return f(lib.constant([1.0, 2.0]))
    check(program)


def test_listings_agree():
    for kind in ("CPU", "GPU"):
        ours = [d.device_type for d in tl.config.list_physical_devices(kind)]
        theirs = [d.device_type for d in tf.config.list_physical_devices(kind)]
        assert bool(ours) == bool(theirs) or (kind == "GPU" and not ours), (kind, ours, theirs)
        assert [d.device_type for d in tl.config.get_visible_devices(kind)] == ours
    assert [d.name for d in tl.config.list_logical_devices("CPU")] == \
        [d.name for d in tf.config.list_logical_devices("CPU")]


def test_memory_growth_on_a_cpu_is_refused_by_both():
    def program(lib):
        return lib.config.experimental.set_memory_growth(
            lib.config.list_physical_devices("CPU")[0], True)
    check(program)
