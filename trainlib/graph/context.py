"""The state `apply` consults: the graph being traced, the active tapes, the device.

Owns: the module-level `state` object, which is per thread (as TensorFlow's
graph and tape stacks are thread-local): tracing pushes graphs onto the calling
thread's state, autodiff pushes tapes, `tl.device` pushes devices, so a thread
that traces never sees another thread's eager ops, nor they its graph; and
`process`, the settings all threads share: `run_eagerly` and the device a new
thread starts on (`set_default_device`), as in TensorFlow.
Also owns the fork handler: a forked child starts with no lock held by a
thread that does not exist in it (see `fork_safe_lock`).
Invariant: this module imports nothing from trainlib, so every layer of the
pipeline can read it.
"""
import contextlib
import os
import threading
import weakref

import numpy


class _Process:
    """Settings shared by all threads (one instance: `process`)."""
    run_eagerly = False
    soft_device_placement = True   # tl.device("gpu") without a GPU runs on the CPU, as TF
    device = "cpu"    # the device a new thread starts on (set_default_device)
    xp = numpy        # its array module; backend.py owns the others


class _ThreadState(threading.local):
    """One thread's view: `__init__` runs once in each thread, on its first access."""

    def __init__(self):
        self.graph = None        # the Graph ops are added to, or None when eager
        self.graph_stack = []
        self.tapes = []          # active GradientTapes, innermost last
        self.device = process.device
        self.xp = process.xp
        self.name_scopes = []    # (graph or None, "outer/inner/") of open tl.name_scope blocks
        self.control_inputs = []  # (graph, [Operation...]) of open tl.control_dependencies blocks
        # the line new ops are attributed to when not their own (see Operation.origin):
        # (user's "file.py:LINE", layer name) or None, innermost last
        self.origins = []


process = _Process()
state = _ThreadState()


def set_default_device(device, xp):
    """Makes `device` (with array module `xp`) the calling thread's device and the one threads
    started later begin on."""
    process.device, process.xp = device, xp
    state.device, state.xp = device, xp


@contextlib.contextmanager
def graph_scope(graph):
    """Makes `graph` the one ops are added to, for the `with` block (in this thread)."""
    state.graph_stack.append(state.graph)
    state.graph = graph
    try:
        yield graph
    finally:
        state.graph = state.graph_stack.pop()


@contextlib.contextmanager
def eager_scope():
    """Runs ops eagerly inside the block, even while a graph is being traced."""
    with graph_scope(None):
        yield


def executing_eagerly():
    """True when ops run now (in this thread) rather than being added to a graph."""
    return state.graph is None


def inside_function():
    """True while a graph is being traced in this thread (`tl.function`, a branch or loop body)."""
    return state.graph is not None


# ---------------------------------------------------------------- fork

_RLOCK = type(threading.RLock())
_LOCK_OWNERS = weakref.WeakSet()  # objects whose `_lock` a forked child must replace


def fork_safe_lock(owner, reentrant=False):
    """A new lock for `owner` (stored by the caller as `owner._lock`), replaced by a fresh one in
    a forked child: a lock held by another thread at the fork would otherwise stay held forever
    there (that thread does not exist in the child)."""
    _LOCK_OWNERS.add(owner)
    return threading.RLock() if reentrant else threading.Lock()


class LockOwner:
    """Mixin for objects with a `fork_safe_lock` in `self._lock`: copies and pickles leave the
    lock out (a lock cannot be copied), and each copy gets a new one of the same kind."""

    def __getstate__(self):
        state = dict(self.__dict__)
        lock = state.pop("_lock", None)
        state["_lock_reentrant"] = isinstance(lock, _RLOCK)
        return state

    def __setstate__(self, state):
        state = dict(state)
        reentrant = state.pop("_lock_reentrant", False)
        self.__dict__.update(state)
        self._lock = fork_safe_lock(self, reentrant)


def _after_fork_in_child():
    """The child of a fork: only the forking thread survives. Its own state is kept (its frames
    continue and unwind their scopes); the other threads' states are gone with them; every lock
    they might have held (a Function's trace lock, a Variable's write lock) is new and free."""
    for owner in list(_LOCK_OWNERS):
        lock = getattr(owner, "_lock", None)
        if lock is not None:
            owner._lock = threading.RLock() if isinstance(lock, _RLOCK) else threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
