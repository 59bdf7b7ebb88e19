"""`tl.Variable` (mutable state read and written through ops) and `tl.Module` (tracks them).

Owns: Variable creation (always eager, even inside a trace: the initial value
is computed outside the graph, as TensorFlow lifts initializers), its resource
handle, Module's discovery of Variables through attributes, lists, tuples
and dicts, and the autocast scope (inside it, floating Variables made with
`_autocast` read as the scope's dtype: mixed precision's float32 weights used
in float16 math). Invariants: every read and write goes through the state ops, so the
tape and graphs see them; a Variable's array always has the Variable's dtype.
"""
import contextlib
import enum
import itertools
import weakref

from . import dtypes as _dt
from .backend import array_module, device_of, to_numpy
from .context import LockOwner, eager_scope, fork_safe_lock, state
from .op import apply, convert_to_tensor, register_tensor_conversion
from .scopes import current_prefix
from .tensor import Tensor, TensorShape, is_tensor, numpy_text, to_array
from .properties import read_only

_uid = itertools.count()
_autocast_dtype = [None]   # the dtype autocasting Variables read as (None: their own)


def current_autocast_dtype():
    """The dtype of the innermost autocast scope (None outside any)."""
    return _autocast_dtype[0]


@contextlib.contextmanager
def autocast_scope(dtype):
    """Inside the block, floating Variables that autocast read as `dtype` (None: no casting).

    Layers open it around `call` when their compute dtype differs from their variable
    dtype (mixed precision); the cast is an op, so gradients reach the Variable in
    its own dtype.
    """
    previous = _autocast_dtype[0]
    _autocast_dtype[0] = None if dtype is None else _dt.as_dtype(dtype)
    try:
        yield
    finally:
        _autocast_dtype[0] = previous


class VariableSynchronization(enum.Enum):
    """When a distributed Variable's replicas are brought together (TensorFlow's enum)."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed Variable's replica updates combine (TensorFlow's enum)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class Variable(LockOwner):
    """A mutable tensor: created once, then read and updated by ops.

    Args:
        initial_value: a tensor, numpy array, Python value, or a callable returning one.
        trainable: whether tapes watch it automatically and optimizers train it.
        name: a name (default `"Variable"`).
        dtype: convert the initial value to this dtype.
        shape: the static shape; `None` dims let `assign` change that dim.
        constraint: a function applied to the value after each optimizer update (kept as
            `.constraint`, as TensorFlow).
        synchronization, aggregation: how distributed replicas share it
            (`tl.VariableSynchronization`, `tl.VariableAggregation`; kept as attributes).
        validate_shape, caching_device, experimental_enable_variable_lifting: accepted for
            TensorFlow's signature; `validate_shape=False` is `shape` with every dim None.

    Raises:
        ValueError: if created inside a tl.function on any trace but the first.

    Example:
        >>> v = tl.Variable(1.0)
        >>> v.assign_add(2.0).numpy()
        3.0
    """

    def __init__(self, initial_value=None, trainable=None, validate_shape=True, caching_device=None,
                 name=None, variable_def=None, dtype=None, import_scope=None, constraint=None,
                 synchronization="auto", aggregation="none", shape=None,
                 experimental_enable_variable_lifting=True):
        if initial_value is None:
            raise ValueError("tl.Variable needs an initial_value (a tensor, array, Python value "
                             "or a callable returning one)")
        if variable_def is not None or import_scope is not None:
            raise ValueError("tl.Variable: variable_def/import_scope (TensorFlow 1 protocol "
                             "buffers) are not supported")
        if constraint is not None and not callable(constraint):
            raise ValueError(f"tl.Variable: constraint must be callable, got {constraint!r}")
        self.constraint = constraint
        self.synchronization, self.aggregation = synchronization, aggregation
        trainable = True if trainable is None else trainable
        graph = state.graph
        if graph is not None and hasattr(graph, "variable_created"):
            graph.variable_created(self)
        with eager_scope():
            if callable(initial_value):
                initial_value = initial_value()
            if isinstance(initial_value, Variable):
                initial_value = initial_value.read_value()
            if is_tensor(initial_value):
                if not isinstance(initial_value, Tensor):
                    raise ValueError(
                        "A Variable's initial value cannot be a symbolic tensor of the graph being "
                        "traced; create the Variable outside the tl.function, or pass a callable.")
                if dtype is not None and initial_value.dtype is not _dt.as_dtype(dtype):
                    raise ValueError(f"initial value has dtype {initial_value.dtype.name}, "
                                     f"Variable asked for {_dt.as_dtype(dtype).name}")
                array = initial_value._value
            else:
                array = to_array(state.xp, initial_value, dtype)
        self._array = array
        self._owned = False  # the array may be the caller's: writes replace it until we own one
        self._pinned = None  # the storage group whose buffer holds the array for good (pin_storage)
        self._pinned_span = None  # (start, stop) of the array in that buffer (None: unknown)
        self._lock = fork_safe_lock(self)  # the state ops' kernels write under it (threads)
        self._dtype = _dt.from_numpy(array.dtype)
        if shape is None and not validate_shape:
            shape = [None] * array.ndim
        self._shape = TensorShape(array.shape) if shape is None else TensorShape(shape)
        if not self._shape.is_compatible_with(array.shape):
            raise ValueError(f"initial value of shape {array.shape} does not match shape {self._shape}")
        self._shape_fixed = self._shape.is_fully_defined()
        self.trainable = bool(trainable)
        self._name = current_prefix(graph) + ("Variable" if name is None else str(name))
        self._unique_id = next(_uid)
        self._autocast = False  # Keras-level Variables set it (see autocast_scope)
        self.handle = Tensor(self, _dt.resource)

    # -- reading
    dtype = read_only("_dtype", "The dtype of the value.")

    @property
    def shape(self):
        return self._shape if not self._shape_fixed else TensorShape(self._array.shape)

    ndim = read_only("_shape.rank", "The number of dimensions.")

    @property
    def name(self):
        return self._name + ":0"

    @property
    def device(self):
        return device_of(self._array)

    def read_value(self):
        """The current value, as a tensor (a `ReadVariableOp` while tracing)."""
        return apply("ReadVariableOp", self.handle, dtype=self._dtype, shape=self._shape)

    value = read_value

    array = read_only("_array", "The backend array that holds the value now (not a copy): what a "
                                "compiled graph reads. Treat it as read-only; the Variable's ops "
                                "may update it in place later.")

    def numpy(self):
        """The current value as a numpy array."""
        with self._lock:  # not while another thread writes the array in place
            value = to_numpy(self._array)
            value = value.copy() if value is self._array else value  # a snapshot, as TensorFlow's
        return value[()] if value.ndim == 0 else value

    def __array__(self, dtype=None, copy=None):
        value = self.numpy()
        import numpy  # noqa: PLC0415 -- host conversion protocol
        value = numpy.asarray(value)
        return value if dtype is None else value.astype(dtype)

    # -- writing
    def _write(self, op_name, value, read_value):
        value = convert_to_tensor(value, dtype_hint=self._dtype) if not is_tensor(value) else value
        if not is_tensor(value) or value.dtype is not self._dtype:
            value = convert_to_tensor(value, dtype=self._dtype)
        out = apply(op_name, self.handle, value, dtype=self._dtype, shape=self._shape)
        return out if read_value else None

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Sets the value; returns the new value (a tensor)."""
        return self._write("AssignVariableOp", value, read_value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        """Adds `delta` to the value; returns the new value."""
        return self._write("AssignAddVariableOp", delta, read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        """Subtracts `delta` from the value; returns the new value."""
        return self._write("AssignSubVariableOp", delta, read_value)

    # -- Python conversions
    def __bool__(self):
        return bool(self.read_value())

    def __int__(self):
        return int(self.read_value())

    def __float__(self):
        return float(self.read_value())

    def __index__(self):
        return self.read_value().__index__()

    def __len__(self):
        return len(self.read_value())

    def __iter__(self):
        return iter(self.read_value())

    def __getitem__(self, key):
        return self.read_value()[key]

    def __hash__(self):
        return id(self)

    def ref(self):
        return self

    def __repr__(self):
        if state.graph is not None:
            return f"<tl.Variable '{self.name}' shape={self.shape} dtype={self._dtype.name}>"
        return (f"<tl.Variable '{self.name}' shape={self.shape} dtype={self._dtype.name}, "
                f"numpy={numpy_text(self.numpy())}>")


def pin_storage(variable, view, group, span=None):
    """Makes `view` the Variable's array for good: its value is copied in, every later write
    goes into it in place, and every read hands out a copy.

    How several Variables come to live in one contiguous buffer (an optimizer's flat
    parameters): `view` is a slice of that buffer, of the Variable's shape and dtype, and
    `group` the object that stands for the buffer. The memory plan treats the Variables of
    one group as one storage, so an in-place write to any of them waits for every read of
    the others (see `graph/passes/memory.py`).

    Raises:
        ValueError: if `view` has another shape or dtype than the Variable.
    """
    if tuple(view.shape) != tuple(variable._array.shape) or view.dtype != variable._array.dtype:
        raise ValueError(f"cannot pin Variable '{variable.name}' ({variable._array.shape}, "
                         f"{variable._array.dtype}) to a view of shape {view.shape} and dtype "
                         f"{view.dtype}")
    with variable._lock:
        if view is not variable._array:
            array_module(device_of(view)).copyto(view, variable._array)
        variable._array = view
        variable._owned = True
        variable._pinned = group
        variable._pinned_span = None if span is None else (int(span[0]), int(span[1]))


def storage_group(variable):
    """The object standing for the buffer `variable` lives in (its `pin_storage` group), or
    the Variable itself: two Variables with one storage group may share memory."""
    return variable._pinned if variable._pinned is not None else variable


def _variable_to_tensor(variable, dtype):
    value = variable.read_value()
    target = _autocast_dtype[0]
    if target is not None and variable._autocast and variable._dtype.is_floating and \
            variable._dtype is not target and (dtype is None or _dt.as_dtype(dtype) is target):
        value = apply("Cast", value, DstT=target)
    if dtype is not None and _dt.as_dtype(dtype) is not variable.dtype:
        return convert_to_tensor(value, dtype)
    return value


register_tensor_conversion(Variable, _variable_to_tensor)


_child_watchers = {}   # id(object) -> (weakref to it, callback): restorations waiting for children


def watch_children(obj, callback):
    """Calls `callback(obj)` whenever `obj` (a Module, or an object that calls
    `children_changed`) gains an attribute, until `unwatch_children(obj)`: how a checkpoint
    restores values into Variables created after `restore` (deferred restoration)."""
    key, watchers = id(obj), _child_watchers   # bound now: at exit, module globals are None
    watchers[key] = (weakref.ref(obj, lambda _: watchers.pop(key, None)), callback)


def unwatch_children(obj):
    """Stops the callback `watch_children` registered for `obj`."""
    _child_watchers.pop(id(obj), None)


def children_changed(obj):
    """Tells a waiting checkpoint restoration that `obj` may hold new Variables."""
    entry = _child_watchers.get(id(obj))
    if entry is not None and entry[0]() is obj:
        entry[1](obj)


class Module:
    """A container that finds the Variables in its attributes (also in lists, dicts and submodules).

    Args:
        name: the module's name (default: the class name in snake case).

    Example:
        >>> class Scale(tl.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = tl.Variable(2.0)
        >>> len(Scale().trainable_variables)
        1
    """

    def __init__(self, name=None):
        self._name = name or snake_case(type(self).__name__)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if _child_watchers:   # a restored checkpoint waits for Variables created later
            children_changed(self)

    @property
    def name(self):
        name = self.__dict__.get("_name")  # no default computed on every access
        return name if name is not None else snake_case(type(self).__name__)

    @property
    def variables(self):
        """All Variables reachable from the attributes, each once, in attribute order."""
        return tuple(self._walk(Variable))

    @property
    def trainable_variables(self):
        return tuple(v for v in self._walk(Variable) if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self._walk(Variable) if not v.trainable)

    @property
    def submodules(self):
        return tuple(m for m in self._walk(Module) if m is not self)

    def _walk(self, kind):
        seen = set()
        out = []

        def visit(value):
            if id(value) in seen:
                return
            if isinstance(value, kind):
                seen.add(id(value))
                out.append(value)
            if isinstance(value, Module):
                seen.add(id(value))
                for key in sorted(vars(value)):
                    visit(vars(value)[key])
            elif isinstance(value, (list, tuple)):
                for item in value:
                    visit(item)
            elif isinstance(value, dict):
                for key in value:
                    visit(value[key])

        seen.add(id(self))
        if kind is Module:
            out.append(self)
        for key in sorted(vars(self)):
            visit(vars(self)[key])
        return out


def snake_case(name):
    """`"MeanSquaredError"` -> `"mean_squared_error"`, `"AUC"` -> `"auc"` (default object names)."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (not name[i - 1].isupper() or
                                   (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
