"""Keeping freed memory for reuse (`tl.config.experimental.set_keep_freed_memory`): arrays made
again at the sizes just freed take no page faults."""
import resource

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph import allocator


def _faults_making(nbytes, times=5):
    """Minor page faults while making (and writing) then freeing an array `times` times."""
    np.ones(nbytes // 8)   # once before counting
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(times):
        np.ones(nbytes // 8)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(allocator._mallopt() is None, reason="glibc's allocator only")
def test_freed_memory_is_reused_while_kept_and_given_back_otherwise():
    assert tl.config.experimental.get_keep_freed_memory()   # the default from import
    try:
        assert tl.config.experimental.set_keep_freed_memory(False)
        assert not tl.config.experimental.get_keep_freed_memory()
        given_back = _faults_making(8 << 20)   # fresh pages from the system each time
        assert tl.config.experimental.set_keep_freed_memory(True)
        assert tl.config.experimental.get_keep_freed_memory()
        kept = _faults_making(8 << 20)
        assert given_back >= 100 and kept * 20 < given_back
    finally:
        tl.config.experimental.set_keep_freed_memory(True)
