"""Keeping freed memory for reuse (`tl.config.experimental.set_keep_freed_memory`): arrays made
again at the sizes just freed take no page faults. Measured in a fresh process: in a long test
run the allocator's state (arenas, thresholds other tests moved) decides what a free does."""
import json
import subprocess
import sys

import pytest

from trainlib.graph import allocator

_MEASURE = r"""
import json, resource
import numpy as np
import trainlib as tl

set_hugepage = getattr(getattr(np, "_core", None) or np.core, "multiarray")._set_madvise_hugepage
set_hugepage(False)   # with huge pages an 8 MiB array is a handful of faults whoever keeps it

def faults(nbytes=8 << 20, times=5):
    np.ones(nbytes // 8)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(times):
        np.ones(nbytes // 8)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

out = {"default": tl.config.experimental.get_keep_freed_memory()}
out["off"] = tl.config.experimental.set_keep_freed_memory(False)
out["off_state"] = tl.config.experimental.get_keep_freed_memory()
out["given_back"] = faults()
out["on"] = tl.config.experimental.set_keep_freed_memory(True)
out["on_state"] = tl.config.experimental.get_keep_freed_memory()
out["kept"] = faults()
print(json.dumps(out))
"""


@pytest.mark.skipif(allocator._mallopt() is None, reason="glibc's allocator only")
def test_freed_memory_is_reused_while_kept_and_given_back_otherwise():
    result = subprocess.run([sys.executable, "-c", _MEASURE], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["default"] and out["off"] and not out["off_state"]
    assert out["on"] and out["on_state"]
    if out["given_back"] < 100:
        pytest.skip(f"the kernel maps huge pages for these arrays whatever numpy asks "
                    f"({out['given_back']} faults given back): page faults do not show reuse")
    assert out["kept"] * 20 < out["given_back"], out
