"""Ops whose result size comes from their arguments (BroadcastTo, Tile, Fill) refuse a result
larger than the device's memory at once, with a ResourceExhaustedError naming the op, the shape
and the size, eagerly, at trace time for static shapes, and at run time for dynamic ones."""
import os
import subprocess
import sys
import textwrap

import pytest

import trainlib as tl

HUGE = [10**6, 10**6]  # 3725 GiB of float32: more than any machine this runs on
MESSAGE = (r"{op}( \(operation '\w+'\))?: the result, of shape \[1000000, 1000000\] and dtype float32, would take "
           r"3725 GiB \(4000000000000 bytes\), more than the .* GiB of memory of this device")


@pytest.mark.parametrize("op, make", [
    ("BroadcastTo", lambda: tl.broadcast_to(tl.ones([1]), HUGE)),  # then a reduction ran for minutes
    ("Tile", lambda: tl.tile(tl.ones([1, 1]), HUGE)),
    ("Fill", lambda: tl.fill(HUGE, 1.0)),
    ("Fill", lambda: tl.zeros(HUGE)),
])
def test_a_result_larger_than_memory_fails_at_once(op, make):
    with pytest.raises(tl.errors.ResourceExhaustedError, match=MESSAGE.format(op=op)) as info:
        make()
    assert info.value.op == op and "test_array_sizes.py" in info.value.location


def test_in_a_function_static_shapes_fail_at_trace_and_dynamic_ones_at_run_time():
    @tl.function
    def static(x):
        return tl.reduce_sum(tl.broadcast_to(x, HUGE))

    with pytest.raises(tl.errors.ResourceExhaustedError, match=MESSAGE.format(op="BroadcastTo")):
        static.get_concrete_function(tl.TensorSpec([1]))

    @tl.function
    def dynamic(x, shape):
        return tl.broadcast_to(x, shape)

    assert dynamic(tl.ones([1]), tl.constant([2, 3])).shape == (2, 3)
    with pytest.raises(tl.errors.ResourceExhaustedError, match=MESSAGE.format(op="BroadcastTo")):
        dynamic(tl.ones([1]), tl.constant(HUGE))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux has it")
def test_an_address_space_limit_lowers_the_limit():
    script = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))
        import trainlib as tl
        try:
            tl.broadcast_to(tl.ones([1]), [1 << 16, 1 << 15])  # 8 GiB: a view, unless checked
        except tl.errors.ResourceExhaustedError as e:
            print("refused:", e)
        tl.broadcast_to(tl.ones([1]), [1 << 12, 1 << 12])  # 64 MiB: fine
    """)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused: BroadcastTo: the result, of shape [65536, 32768] and dtype float32, would " \
           "take 8 GiB (8589934592 bytes), more than the 3 GiB of memory" in out.stdout
