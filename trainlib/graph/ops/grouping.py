"""`tl.group`, `tl.no_op`, `tl.tuple`, `tl.identity_n`: ops that exist to order other ops.

Owns: the `NoOp` op (no inputs, no outputs; the node other ops hang control
dependencies on) and the three TensorFlow functions built from it and
`tl.control_dependencies`. Eagerly ops already ran in program order, so `group` and
`no_op` return None and `tuple` returns its tensors, as TensorFlow 2 does. The module
defines `tuple`, so the builtin is reached as `_py.tuple` here.
"""
import builtins as _py

from ..context import state
from ..op import apply, convert_to_tensor, defop
from ..scopes import control_dependencies

__all__ = ["group", "no_op", "tuple", "identity_n"]


@defop("NoOp", infer=lambda: None, num_outputs=0, differentiable=False)
def _no_op(xp):
    return None


def _last_op():
    return state.graph.operations[-1]


def no_op(name=None):
    """An op that does nothing: while tracing, the Operation (to wait on); eagerly None."""
    apply("NoOp")
    return None if state.graph is None else _last_op()


def group(*inputs, name=None):
    """One Operation that runs after all of `inputs` (Operations, tensors, or lists of them).

    Eagerly returns None (everything already ran). While tracing, the returned
    Operation can be passed to `tl.control_dependencies`.
    """
    flat = []
    for value in inputs:
        if isinstance(value, (list, _py.tuple, set)):
            flat.extend(value)
        elif isinstance(value, dict):
            flat.extend(value.values())
        else:
            flat.append(value)
    if state.graph is None:
        return None
    with control_dependencies([v for v in flat if v is not None]):
        return no_op()


def tuple(tensors, control_inputs=None, name=None):  # noqa: A001 -- TensorFlow's name
    """The `tensors`, each available only once all of them (and `control_inputs`) are.

    Eagerly returns them as a list, unchanged.
    """
    tensors = list(tensors)
    if state.graph is None:
        return tensors
    gate = group(*[t for t in tensors if t is not None], *(control_inputs or ()))
    with control_dependencies([gate]):
        return [None if t is None else apply("Identity", convert_to_tensor(t)) for t in tensors]


def identity_n(input, name=None):  # noqa: A002 -- TensorFlow's argument name
    """A list of tensors with the values of the tensors in `input` (one Identity each)."""
    return [apply("Identity", convert_to_tensor(t)) for t in input]
