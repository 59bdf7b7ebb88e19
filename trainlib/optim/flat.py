"""Flat parameters: the Variables an optimizer trains, and their slots, as views into one
contiguous buffer per dtype, so one update covers them all in a handful of array calls.

Owns: `FlatGroup` (one buffer, the member Variables pinned into it, and the flat Variable
that stands for the whole buffer in graphs), `group_for` (one group per dtype and device,
reused when another optimizer trains the same Variables in the same order), and
`flat_slot` (the slots of one name of a group's members, gathered into a buffer of their
own). The flat Variable is an ordinary Variable: an optimizer's `update_step` runs on it
as on any other, which is Keras 3's extension point kept as it is.
Invariants: members are pinned (`graph.variables.pin_storage`): their arrays are views
into the buffer for good, every write goes in place and every read hands out a copy, so a
write through the flat Variable is a write to every member and nothing ever detaches; a
Variable is pinned into one parameter group only (a second optimizer over other
combinations of the same Variables updates them one by one).
"""
import weakref

from ..graph.backend import array_module, device_of
from ..graph.context import eager_scope
from ..graph.ops.array import concat, reshape
from ..graph.variables import Variable, pin_storage

__all__ = ["FlatGroup", "group_for", "flat_slot", "flat_gradient"]


class FlatGroup:
    """Variables of one dtype and device laid out back to back in one buffer.

    Attributes:
        members: the Variables, in buffer order.
        offsets: `(start, stop)` of each member in the buffer.
        variable: a 1-D Variable whose array is the whole buffer.
    """

    def __init__(self, members, name):
        self.members = list(members)
        first = self.members[0]._array
        xp = array_module(device_of(first))
        self.offsets, start = [], 0
        for v in self.members:
            n = int(v._array.size)
            self.offsets.append((start, start + n))
            start += n
        buffer = xp.empty((start,), dtype=first.dtype)
        with eager_scope():  # created outside any trace: the buffer is state, not a graph value
            self.variable = Variable(buffer, trainable=False, name=name)
        pin_storage(self.variable, buffer, self, (0, start))
        for v, (a, b) in zip(self.members, self.offsets):
            pin_storage(v, buffer[a:b].reshape(v._array.shape), self, (a, b))

    @property
    def size(self):
        """The number of elements in the buffer."""
        return self.offsets[-1][1] if self.offsets else 0


# id(Variable) -> (weak reference to it, its parameter group): one group per Variable
_GROUP_OF = {}


def _forget(key):
    def callback(_ref):
        _GROUP_OF.pop(key, None)
    return callback


def group_for(variables, name):
    """The FlatGroup holding exactly `variables` in this order, made now if none does.

    Returns None when they cannot share one: fewer than two, a shape not fully known,
    mixed dtypes or devices, a Variable already pinned (into another group, or by
    anyone else), or one listed twice.
    """
    variables = list(variables)
    if len(variables) < 2 or len({id(v) for v in variables}) != len(variables):
        return None
    first = variables[0]
    if any(not v.shape.is_fully_defined() or v.dtype is not first.dtype or
           device_of(v._array) != device_of(first._array) for v in variables):
        return None
    entry = _GROUP_OF.get(id(first))
    found = entry[1] if entry is not None and entry[0]() is first else None
    if found is not None:
        same = len(found.members) == len(variables) and all(
            a is b for a, b in zip(found.members, variables))
        return found if same else None
    if any(v._pinned is not None for v in variables):
        return None
    group = FlatGroup(variables, name)
    for v in variables:
        _GROUP_OF[id(v)] = (weakref.ref(v, _forget(id(v))), group)
    return group


def flat_slot(slots, name):
    """A FlatGroup over an optimizer's slots of one name, one per member, in member order
    (the slots keep their values; from now on they are views into the new buffer)."""
    return FlatGroup(slots, name)


def flat_gradient(grads):
    """One 1-D tensor: the members' gradients (in member order) back to back, as a
    group's buffer lays out the members."""
    return concat([reshape(g, [-1]) for g in grads], 0)
