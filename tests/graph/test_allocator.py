"""Keeping freed memory for reuse (`tl.config.experimental.set_keep_freed_memory`): arrays made
again at the sizes just freed take no page faults."""
import resource

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph import allocator


def _faults_making(nbytes, times=5):
    """Minor page faults while making (and writing) then freeing an array `times` times, with
    numpy's transparent huge pages off (with them, an 8 MiB array is a handful of faults
    whoever keeps the memory, and the kernel decides when it grants them)."""
    set_hugepage = getattr(getattr(np, "_core", np.core).multiarray, "_set_madvise_hugepage",
                           None)
    previous = set_hugepage(False) if set_hugepage else None
    try:
        np.ones(nbytes // 8)   # once before counting
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(times):
            np.ones(nbytes // 8)
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    finally:
        if set_hugepage:
            set_hugepage(previous)


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
