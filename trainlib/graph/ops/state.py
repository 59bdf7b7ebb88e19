"""Variable ops: reading and writing a Variable through its resource handle.

Owns: `ReadVariableOp`, `AssignVariableOp`, `AssignAddVariableOp`,
`AssignSubVariableOp`. A handle is a `resource` tensor whose value is the
Variable object itself, so the same kernels serve eager calls and graphs
(where the handle is a captured placeholder fed with the Variable).
Invariants: writes replace the Variable's array (never mutate it in place),
so a read taken before a write keeps its value; all four ops are stateful,
so automatic control dependencies keep reads and writes in program order.
"""
from ..op import defop, spec


def _read_infer(handle, dtype, shape):
    return spec(shape, dtype)


@defop("ReadVariableOp", infer=_read_infer, stateful=True, grad=lambda op, dy: (dy,))
def _read(xp, variable, **_static):  # dtype/shape attrs serve inference only
    return variable._array


_read.inline = "{0}._array"  # codegen emits the read as this expression


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


@defop("AssignVariableOp", infer=_assign_infer("assign"), stateful=True, differentiable=False)
def _assign(xp, variable, value, **_static):
    if value.shape != variable._array.shape and variable._shape_fixed:
        raise ValueError(f"cannot assign a value of shape {value.shape} to Variable "
                         f"'{variable.name}' of shape {variable._array.shape}")
    variable._array = value
    return value


@defop("AssignAddVariableOp", infer=_assign_infer("assign_add"), stateful=True, differentiable=False)
def _assign_add(xp, variable, delta, **_static):
    variable._array = new = xp.add(variable._array, delta)
    return new


@defop("AssignSubVariableOp", infer=_assign_infer("assign_sub"), stateful=True, differentiable=False)
def _assign_sub(xp, variable, delta, **_static):
    variable._array = new = xp.subtract(variable._array, delta)
    return new
