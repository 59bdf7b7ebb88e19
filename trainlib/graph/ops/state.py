"""Variable ops: reading and writing a Variable through its resource handle.

Owns: `ReadVariableOp`, `AssignVariableOp`, `AssignAddVariableOp`,
`AssignSubVariableOp`. A handle is a `resource` tensor whose value is the
Variable object itself, so the same kernels serve eager calls and graphs
(where the handle is a captured placeholder fed with the Variable).
Invariants: a Variable's array is mutated in place only through the `in_place`
lowerings, which the executor picks when no read of the old value is used later,
and only while the Variable owns its array (`_owned`: made by one of its own
writes and never handed out since). Every kernel that hands the array out
(reads, writes returning their value) clears `_owned`, so tensors taken
earlier keep their values. All four ops are stateful, so automatic control
dependencies keep reads and writes in program order. Threads: each kernel and
in-place lowering runs under the Variable's `_lock`, so concurrent writes from
several threads are each applied once (a read-add-write is never interleaved)
and a read never takes an array that an in-place write is about to change (an in-place
add or subtract of 1M elements or more runs as slices on trainlib's pool, under that lock).
A pinned Variable (`variables.pin_storage`: its array is a view into a buffer it
shares, such as an optimizer's flat parameters) never swaps its array: every
write goes into it in place, and every read that hands it out hands a copy.
"""
from .. import threads as _threads
from ..op import defop, spec


def _read_infer(handle, dtype, shape):
    return spec(shape, dtype)


# a compiled graph reads a Variable as the `inline` expression (no call); the graph's memory
# plan keeps in-place writes after the read's last use, and reads it returns (which must
# clear `_owned`) call the kernel instead
@defop("ReadVariableOp", infer=_read_infer, stateful=True, grad=lambda op, dy: (dy,),
       variable_access="read", inline="{0}.array")
def _read(xp, variable, **_static):  # dtype/shape attrs serve inference only
    with variable._lock:
        if variable._pinned is not None:  # the buffer changes in place later: a snapshot
            return xp.array(variable._array, copy=True)
        variable._owned = False  # the caller now holds the array
        return variable._array


def _assign_infer(name):
    def infer(handle, value, dtype, shape):
        if value.dtype is not dtype:
            raise TypeError(f"cannot {name} a {value.dtype.name} value to a {dtype.name} Variable; "
                            f"cast it with tl.cast(value, tl.{dtype.name})")
        if not value.shape.is_compatible_with(shape):
            raise ValueError(f"cannot {name} a value of shape {value.shape} to a Variable of shape "
                             f"{shape}")
        return spec(shape, dtype)
    return infer


def _assign(xp, variable, value, **_static):
    _check_shape(variable, value.shape)
    with variable._lock:
        if variable._pinned is not None:
            xp.copyto(variable._array, value)
            return value
        variable._array = value
        variable._owned = False  # the value may be held elsewhere
    return value


def _update(ufunc):
    """The kernel of AssignAdd/AssignSub (`ufunc` "add" or "subtract"): the Variable becomes
    `ufunc(value, delta)`, which is returned."""
    def kernel(xp, variable, delta, **_static):
        fn = getattr(xp, ufunc)
        with variable._lock:
            if variable._pinned is not None:
                return _pinned_update(xp, variable, fn, delta)
            variable._array = new = fn(variable._array, delta)
            variable._owned = False  # returned: the caller holds it
        return new
    kernel.__name__ = f"assign_{ufunc}"
    return kernel


def _pinned_update(xp, variable, fn, delta):
    """A pinned Variable's add/subtract: into its own array, a copy returned (under its lock)."""
    old = variable._array
    if not _fits(delta, old):
        _check_shape(variable, fn(old, delta).shape)
    fn(old, delta, out=old)
    return xp.array(old, copy=True)


def _check_shape(variable, shape):
    if shape != variable._array.shape and variable._shape_fixed:
        raise ValueError(f"cannot assign a value of shape {shape} to Variable "
                         f"'{variable.name}' of shape {variable._array.shape}")


def _fits(delta, old):
    """True if `delta` broadcasts into `old`'s shape without changing it."""
    if delta.shape == old.shape:  # the usual case: a gradient or slot update
        return True
    return delta.ndim <= old.ndim and all(
        d in (1, o) for d, o in zip(delta.shape[::-1], old.shape[::-1]))


def _assign_in_place(xp, variable, value, **_static):
    """AssignVariableOp's in-place lowering, for a write whose result nobody reads."""
    with variable._lock:
        old = variable._array
        if (variable._owned or variable._pinned is not None) and old.shape == value.shape:
            xp.copyto(old, value)
        else:
            _check_shape(variable, value.shape)
            variable._array = xp.array(value, copy=True)  # an array the Variable owns from now on
            variable._owned = True


def _update_in_place(ufunc):
    """The in-place lowering of AssignAdd/AssignSub (`ufunc` "add" or "subtract")."""
    found = {}  # array module -> its ufunc

    def lowering(xp, variable, delta, **_static):
        fn = found.get(xp) or found.setdefault(xp, getattr(xp, ufunc))
        with variable._lock:
            old = variable._array
            if (variable._owned or variable._pinned is not None) and (
                    delta.shape == old.shape or _fits(delta, old)):
                if old.size >= _threads.SPLIT_ELEMENTWISE and xp.__name__ == "numpy":
                    _threads.run_elementwise(fn, old, delta, out=old)   # slices on the pool
                else:
                    fn(old, delta, out=old)
            else:
                # asarray: numpy gives 0-d results as scalars, which cannot be written in place
                variable._array = xp.asarray(fn(old, delta))
                variable._owned = True
    return lowering


defop("AssignVariableOp", infer=_assign_infer("assign"), stateful=True, differentiable=False,
      variable_access="assign", in_place=_assign_in_place)(_assign)
defop("AssignAddVariableOp", infer=_assign_infer("assign_add"), stateful=True,
      differentiable=False, variable_access="update", in_place=_update_in_place("add"))(
    _update("add"))
defop("AssignSubVariableOp", infer=_assign_infer("assign_sub"), stateful=True,
      differentiable=False, variable_access="update", in_place=_update_in_place("subtract"))(
    _update("subtract"))
