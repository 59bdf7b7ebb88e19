"""`Layer` (the unit of state and computation), `KerasTensor` and `Input` for the functional API.

Owns, as Keras 3's Layer: tracking at assignment (a `__setattr__` hook records the
Variables and sub-layers an attribute receives, also inside lists, tuples and dicts,
so `weights` never walks attributes), `add_weight` (always eager: the initializer runs
inside the callable handed to the Variable, so a first call inside a tl.function trace
still creates concrete Variables) with regularizers and constraints, `add_loss` and
`losses` (own losses cleared at each outermost call, sub-layers' gathered, weight
penalties computed on access), the dtype policy (compute and variable dtypes) with input
autocasting, lazy `build` on first `__call__` (and `build` called directly marks the layer
built), the `training` flag passed down to nested layers, weight order (a layer's own
weights in creation order, then its sublayers' in assignment order), name scopes that
give Variables their `path`, and symbolic calls on KerasTensors, whose output specs
come from tracing `call` into a scratch graph that is then dropped.
Invariants: a Layer's Variables exist before any graph uses them on a later trace; a
KerasTensor never reaches an op (layers intercept it).
"""
import contextlib
import functools
import inspect
import itertools
import collections
import os
import warnings

import numpy as np

from .. import constraints as constraints_module, initializers, mixed_precision, \
    regularizers as regularizers_module
from ..graph import dtypes as _dt
from ..graph.nest import flatten, map_structure, pack_as
from ..graph import autograph
from ..graph.context import graph_scope, state
from ..graph.errors import is_library_file, user_location
from ..graph.op import convert_to_tensor
from ..graph.ops import array as _array, math as _math
from ..graph.tensor import TensorShape, is_tensor
from ..graph.tracing import FuncGraph
from ..graph.variables import Module, Variable as _EngineVariable, autocast_scope, \
    current_autocast_dtype

from ..graph.properties import read_only
from ..naming import auto_name, unique_name
from .variables import Variable, name_scope
from .input_spec import assert_input_compatibility

__all__ = ["Layer", "InputLayer", "Input", "KerasTensor", "Node", "register",
           "deserialize", "dtype_policy_config", "check_unsupported", "get_keras_mask",
           "set_keras_mask"]

_training_stack = []          # the training flag of the enclosing layer calls
_REGISTRY = {}                # class name -> class, for from_config / deserialize


def register(cls):
    """Class decorator: makes `cls` known to `deserialize` (and model loading) by name."""
    key = cls._registry_key() if hasattr(cls, "_registry_key") else cls.__name__
    _REGISTRY[key] = cls
    return cls


def dtype_policy_config(dtype):
    """A dtype policy (or dtype) as Keras 3 writes it in a layer config (a serialized DTypePolicy)."""
    name = dtype.name if isinstance(dtype, (mixed_precision.DTypePolicy, _dt.DType)) else str(dtype)
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name},
            "registered_name": None}


def check_unsupported(layer, **options):
    """Raises NotImplementedError for a Keras option given a value trainlib does not implement.

    `options` maps each option name to (value given, the value trainlib supports).
    """
    for name, (value, supported) in options.items():
        if value != supported and value is not None:
            raise NotImplementedError(f"{type(layer).__name__}: {name}={value!r} is not supported "
                                      f"by trainlib (only {supported!r})")


_LIBRARY_CALLS = {}   # layer class -> True when its call() is trainlib's own


def _origin(layer):
    """What ops made inside `layer`'s call are attributed to (Operation.origin): a built-in
    layer's ops to the user's line that created it, (location, name); None for a layer
    whose call() is the user's own (its ops name their own lines)."""
    cls = type(layer)
    library = _LIBRARY_CALLS.get(cls)
    if library is None:
        code = getattr(cls.call, "__code__", None)
        library = _LIBRARY_CALLS[cls] = code is not None and is_library_file(code.co_filename)
    created = getattr(layer, "_created_at", None)
    return (created, layer.name) if library and created else None


def _user_stacklevel():
    """The stacklevel of the first frame outside trainlib (warnings name the user's line)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = inspect.currentframe().f_back, 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


# ------------------------------------------------------------------ symbolic values

class Node:
    """One call of a layer on KerasTensors: the layer, its arguments, and the KerasTensors made."""

    __slots__ = ("layer", "args", "kwargs", "outputs")

    def __init__(self, layer, args, kwargs, outputs=None):
        self.layer, self.args, self.kwargs, self.outputs = layer, args, kwargs, outputs


class KerasTensor:
    """A symbolic value of the functional API: a shape (batch dim None), a dtype and its history.

    Produced by `tl.layers.Input` and by calling layers on KerasTensors; it never
    holds data. As Keras 3's, `shape` is a tuple (`(None, 784)`) and `dtype` a string
    (`"float32"`). `Model(inputs, outputs)` reads the recorded `node`s.
    """

    def __init__(self, shape, dtype="float32", node=None, index=0, name=None, layer=None):
        shape = TensorShape(shape)
        self.shape = tuple(shape.as_list()) if shape.rank is not None else None
        self.dtype = _dt.as_dtype(dtype).name
        self.node = node      # the Node whose call produced it (None for an Input)
        self.index = index    # which output of that call
        self.name = name or unique_name("keras_tensor")
        self.layer = layer if layer is not None else (node.layer if node is not None else None)
        self.sparse = self.ragged = False

    @property
    def ndim(self):
        return None if self.shape is None else len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, sparse=False, " \
               f"ragged=False, name={self.name}>"

    def __hash__(self):
        return id(self)

    # Python operators (`x + y`, `x[0]`...) record operations of the functional API, as
    # Keras 3's: layers/operators.py installs them (its operations subclass Layer)


def _is_keras_tensor(x):
    return isinstance(x, KerasTensor)


def _has_keras_tensor(args, kwargs):
    if len(args) == 1 and not kwargs and is_tensor(args[0]):   # the common case, quickly
        return False
    if any(_is_keras_tensor(x) for x in flatten(args[0])):
        return True
    if len(args) == 1 and not kwargs:
        return False
    return any(_is_keras_tensor(x) for x in flatten((args[1:], kwargs)))


def _is_tensor_argument(value):
    """Whether a call argument counts as a tensor argument (Keras 3's CallSpec): a tensor, or a
    non-empty list/tuple/dict of tensors (None allowed)."""
    if is_tensor(value) or _is_keras_tensor(value):
        return True
    if isinstance(value, (list, tuple, dict)) and len(value) > 0:
        leaves = flatten(value)
        return all(x is None or is_tensor(x) or _is_keras_tensor(x) for x in leaves) and \
            any(x is not None for x in leaves)
    return False


def _shape_params(build):
    """The parameter names of a `build` method (bound)."""
    try:
        params = inspect.signature(build).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY, p.KEYWORD_ONLY))


def get_keras_mask(x):
    """The mask a layer attached to tensor `x` (its `_keras_mask`), or None."""
    return getattr(x, "_keras_mask", None)


def set_keras_mask(x, mask):
    """Attaches `mask` to tensor `x` as its `_keras_mask` (None removes it); values that
    cannot carry one (Python numbers, Variables) are left alone."""
    try:
        if mask is None:
            if hasattr(x, "_keras_mask"):
                del x._keras_mask
        else:
            x._keras_mask = mask
    except (AttributeError, TypeError):
        pass


def _keep_mask(old, new):
    """`new` (a converted `old`) with `old`'s mask."""
    mask = get_keras_mask(old)
    if mask is not None:
        set_keras_mask(new, mask)
    return new


@contextlib.contextmanager
def scratch_graph(name="symbolic"):
    """A graph to trace into only for shapes: active tapes are hidden, nothing runs."""
    tapes = state.tapes
    state.tapes = []
    try:
        with graph_scope(FuncGraph(name)) as graph:
            yield graph
    finally:
        state.tapes = tapes


def placeholder_like(graph, value, name="x"):
    """A placeholder with the spec of a KerasTensor / tensor / TensorSpec / array."""
    shape = TensorShape(value.shape)
    dtype = value.dtype if isinstance(value.dtype, _dt.DType) else _dt.as_dtype(value.dtype)
    return graph.add_argument(shape, dtype, name)


# ------------------------------------------------------------------ tracking

class _Untracked:
    """The owner of a tracking container rebuilt without one (e.g. by `pack_as`)."""

    @staticmethod
    def _track(value):
        return value

    @staticmethod
    def _untrack(value):
        pass


class _TrackedList(list):
    """A list attribute of a layer: Layers and Variables put in it are tracked, taken out untracked."""

    def __init__(self, values=(), owner=_Untracked):
        super().__init__(values)
        self._owner = owner
        for v in self:
            owner._track(v)

    def append(self, value):
        super().append(self._owner._track(value))

    def insert(self, index, value):
        super().insert(index, self._owner._track(value))

    def extend(self, values):
        super().extend(self._owner._track(v) for v in values)

    def __iadd__(self, values):
        self.extend(values)
        return self

    def __setitem__(self, key, value):
        values = [self._owner._track(v) for v in value] if isinstance(key, slice) else \
            self._owner._track(value)
        super().__setitem__(key, values)

    def pop(self, index=-1):
        value = super().pop(index)
        self._owner._untrack(value)
        return value

    def remove(self, value):
        super().remove(value)
        self._owner._untrack(value)

    def __reduce__(self):
        return list, (list(self),)


class _TrackedDict(dict):
    """A dict attribute of a layer: Layers and Variables stored in it are tracked."""

    def __init__(self, values=(), owner=_Untracked):
        super().__init__(values)
        self._owner = owner
        for v in self.values():
            owner._track(v)

    def __setitem__(self, key, value):
        super().__setitem__(key, self._owner._track(value))

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def __reduce__(self):
        return dict, (dict(self),)


# ------------------------------------------------------------------ Layer

class Layer(Module):
    """Base class of layers: state (weights, created in `build`) plus computation (`call`).

    Subclasses implement `build(input_shape)` (create weights with `add_weight`) and
    `call(inputs, training=None)`; `__call__` builds on the first call, casts inputs to
    the layer's compute dtype, passes the `training` flag down to nested layers and
    collects the losses of `add_loss` and `activity_regularizer`.

    Args:
        trainable: whether the layer's weights are trained.
        name: the layer's name (default: snake-cased class name, numbered).
        dtype: the dtype policy: a dtype name ("float32"), "mixed_float16", or a
            `tl.keras.mixed_precision.DTypePolicy` (default: the global policy).
        autocast: cast floating inputs (and, under mixed precision, floating Variables
            read in `call`) to the compute dtype.
        activity_regularizer: a penalty on the outputs, divided by the batch size and
            added to `losses`.

    Example:
        >>> class Scale(tl.layers.Layer):
        ...     def build(self, input_shape):
        ...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")
        ...     def call(self, x):
        ...         self.add_loss(tl.reduce_sum(x))
        ...         return x * self.w
        >>> Scale()(tl.ones((2, 3))).shape
        TensorShape([2, 3])
    """

    # integer inputs become the compute dtype: Keras's ops promote them where the layer's
    # first op meets a floating weight or takes a mean (Dense, normalization, averaging)
    _promotes_integer_inputs = False
    # an InputSpec (or one per input) the first argument is checked against, as Keras's
    input_spec = None

    def _weight_options(self, weight, initializer, regularizer, constraint):
        """Keeps what the user passed for weight `weight` ("kernel", "bias", ...) as
        `<weight>_initializer`, `<weight>_regularizer` and `<weight>_constraint` (each resolved
        from a name, a config or an object), the attributes Keras layers have ("_kernel" for
        private ones)."""
        setattr(self, f"{weight}_initializer", initializers.get(initializer))
        setattr(self, f"{weight}_regularizer", regularizers_module.get(regularizer))
        setattr(self, f"{weight}_constraint", constraints_module.get(constraint))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_marks_built", False):
            cls.build = _build_wrapper(build)

    def __init__(self, trainable=True, name=None, dtype=None, autocast=True,
                 activity_regularizer=None, input_shape=None, input_dim=None, **kwargs):
        if kwargs:
            raise ValueError("Unrecognized keyword arguments passed to "
                             f"{type(self).__name__}: {kwargs}")
        if not isinstance(trainable, bool):
            raise ValueError("Expected `trainable` to be a boolean. Received: "
                             f"trainable={trainable} (of type {type(trainable)})")
        self._init_tracker()
        super().__init__(name or auto_name(type(self).__name__))
        self._created_at = user_location()   # the profiler attributes built-in layers' ops here
        self._trainable = bool(trainable)
        self._dtype_policy = mixed_precision.get(dtype)
        self.autocast = bool(autocast)
        self.activity_regularizer = regularizers_module.get(activity_regularizer)
        self.built = False
        self._losses = []
        self._build_input_shape = None
        self._output_shape = None
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if input_shape is not None:
            warnings.warn("Do not pass an `input_shape`/`input_dim` argument to a layer. When "
                          "using Sequential models, prefer using an `Input(shape)` object as the "
                          "first layer in the model instead.", UserWarning,
                          stacklevel=_user_stacklevel())
        self._input_shape_arg = tuple(input_shape) if input_shape is not None else None
        try:
            self._call_signature = inspect.signature(self.call)
            params = self._call_signature.parameters
        except (TypeError, ValueError):
            self._call_signature, params = None, {}
        self._call_takes_training = "training" in params
        positional = [n for n, p in params.items()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._call_first_param = positional[0] if positional else None
        # the mask arguments `__call__` fills in from the inputs' masks (Keras 3's protocol)
        self._call_mask_params = frozenset(n for n in params if n == "mask" or n.endswith("_mask"))
        # as Keras: outside any training context, `training` takes the default of `call`
        # (True for the random preprocessing layers, so they augment in Dataset.map)
        default = params["training"].default if "training" in params else None
        self._call_training_default = default if isinstance(default, bool) else False

    # -- tracking
    def _init_tracker(self):
        if "_tracked_ids" not in self.__dict__:
            object.__setattr__(self, "_tracked_ids", set())
            object.__setattr__(self, "_trainable_variables", [])
            object.__setattr__(self, "_non_trainable_variables", [])
            object.__setattr__(self, "_tracked_layers", [])

    def _track(self, value):
        """Records a Variable or Layer (or those inside a list, tuple or dict) as this layer's;
        returns the value to store (lists and dicts become tracking containers)."""
        if isinstance(value, _EngineVariable):
            if id(value) not in self._tracked_ids:
                self._tracked_ids.add(id(value))
                (self._trainable_variables if value.trainable
                 else self._non_trainable_variables).append(value)
        elif isinstance(value, Layer):
            if value is not self and id(value) not in self._tracked_ids:
                self._tracked_ids.add(id(value))
                self._tracked_layers.append(value)
        elif type(value) is list:
            return _TrackedList(value, self)
        elif type(value) is dict:
            return _TrackedDict(value, self)
        elif type(value) is tuple:
            for v in value:
                self._track(v)
        return value

    def _untrack(self, value):
        if id(value) not in self._tracked_ids:
            return
        self._tracked_ids.discard(id(value))
        for store in (self._trainable_variables, self._non_trainable_variables,
                      self._tracked_layers):
            for i, v in enumerate(store):
                if v is value:
                    del store[i]
                    break

    def __setattr__(self, name, value):
        if "_tracked_ids" not in self.__dict__:
            self._init_tracker()
        if not name.startswith("__"):
            value = self._track(value)
        super().__setattr__(name, value)   # Module's: a restored checkpoint may wait for it

    def __setstate__(self, state):
        # a copy (copy.deepcopy) holds new objects: the identities tracked are theirs
        self.__dict__.update(state)
        object.__setattr__(self, "_tracked_ids", {
            id(v) for store in (self._trainable_variables, self._non_trainable_variables,
                                self._tracked_layers) for v in store})

    def __delattr__(self, name):
        value = getattr(self, name, None)
        if isinstance(value, (_EngineVariable, Layer)):
            self._untrack(value)
        object.__delattr__(self, name)

    # -- weights
    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none",
                   overwrite_with_gradient=False, name=None):
        """Creates a Variable owned by this layer (eagerly, even during a trace).

        Args:
            shape: its shape (default `()`).
            initializer: an initializer, its Keras name, or None (glorot_uniform for
                floating weights, zeros otherwise).
            dtype: its dtype (default: the layer's variable dtype).
            trainable: whether optimizers train it.
            autocast: whether it reads as the compute dtype under mixed precision.
            regularizer: a penalty on it (a Regularizer, its name, or a function) added to
                `losses`.
            constraint: a projection (a Constraint, its name, or a function) the optimizer
                applies after each update.
            name: the weight's name ("kernel", "bias", ...).

        Returns:
            The Variable (`tl.keras.Variable`, path "<layer>/<name>").

        Raises:
            ValueError: for a name passed as the first positional argument (Keras 2's order).
        """
        if isinstance(shape, str):
            raise ValueError(f"`name` must be passed as a keyword argument. Received: "
                             f"add_weight('{shape}', ...). Use: add_weight(shape=..., "
                             f"name='{shape}').")
        shape = () if shape is None else tuple(int(d) for d in shape)
        dtype = _dt.as_dtype(dtype or self.variable_dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = initializers.get(initializer)
        with name_scope(self.name, owner=self):
            variable = Variable(lambda: init(shape, dtype=dtype), dtype=dtype,
                                trainable=trainable, autocast=autocast, aggregation=aggregation,
                                name=name or "variable")
        variable.regularizer = regularizers_module.get(regularizer)
        variable.constraint = constraints_module.get(constraint)
        variable.overwrite_with_gradient = overwrite_with_gradient
        self._track(variable)
        return variable

    add_variable = add_weight

    def _sublayers(self):
        """Directly owned layers, in the order they were assigned."""
        return list(self._tracked_layers)

    def _flatten_layers(self, include_self=True):
        """This layer and every layer below it, each once, breadth first (Keras's order)."""
        out, seen = ([self] if include_self else []), {id(self)}
        queue = collections.deque(self._tracked_layers)
        while queue:
            layer = queue.popleft()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            out.append(layer)
            queue.extend(layer._tracked_layers)
        return out

    @property
    def layers(self):
        return self._sublayers()

    @property
    def weights(self):
        """All weights: own (creation order), then each sublayer's, each once."""
        out, seen = [], set()
        for v in self._trainable_variables + self._non_trainable_variables:
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        for layer in self._tracked_layers:
            for v in layer.weights:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    @property
    def trainable_weights(self):
        return [v for v in self.weights if v.trainable] if self._trainable else []

    @property
    def non_trainable_weights(self):
        if not self._trainable:
            return self.weights
        return [v for v in self.weights if not v.trainable]

    # lists, as Keras 3's layers return them (tl.Module keeps TensorFlow's tuples)
    @property
    def variables(self):
        """Every Variable of the layer (a list, in `weights` order)."""
        return list(self.weights)

    @property
    def trainable_variables(self):
        """The trainable Variables (a list)."""
        return list(self.trainable_weights)

    @property
    def non_trainable_variables(self):
        """The non-trainable Variables (a list)."""
        return list(self.non_trainable_weights)

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        value = bool(value)
        self._trainable = value
        for v in self._trainable_variables:
            v.trainable = value
        for layer in self._tracked_layers:
            layer.trainable = value

    def get_weights(self):
        """The weights' values as numpy arrays, in `weights` order."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Assigns numpy arrays to the weights, in `weights` order.

        Raises:
            ValueError: on a count or shape mismatch.
        """
        own = self.weights
        weights = list(weights)
        if len(weights) != len(own):
            raise ValueError(f"Layer '{self.name}' expects {len(own)} weights, got {len(weights)}")
        for v, w in zip(own, weights):
            w = np.asarray(w)
            if tuple(w.shape) != tuple(v.shape):
                raise ValueError(f"weight '{v.name}' of layer '{self.name}' has shape "
                                 f"{tuple(v.shape)}, got an array of shape {w.shape}")
            v.assign(w.astype(v.dtype.np))

    def count_params(self):
        """Number of scalars in all weights."""
        if not self.built:
            raise ValueError(f"Layer '{self.name}' is not built yet: call it or build() it first "
                             "to count its parameters.")
        return int(sum(v.shape.num_elements() for v in self.weights))

    # -- losses
    def add_loss(self, loss):
        """Adds a scalar loss (or a list of them), from `call` or `build`; `fit` adds it to
        the loss it minimizes. Losses are cleared when the outermost layer is called again.

        Raises:
            ValueError: for a value that is not a tensor.
        """
        losses = flatten(loss)
        for x in losses:
            if not is_tensor(x):
                raise ValueError("`add_loss()` can only be called from inside `build()` or "
                                 f"`call()`, on a tensor input. Received invalid value: {x}")
        self._losses.extend(losses)

    @property
    def losses(self):
        """The losses of `add_loss` (this layer's, then its sub-layers'), then the weight
        regularizers' penalties (computed now, on the current weights)."""
        out = list(self._losses)
        for layer in self._flatten_layers(include_self=False):
            out.extend(layer._losses)
        for v in self.trainable_weights:
            regularizer = getattr(v, "regularizer", None)
            if regularizer is not None:
                out.append(regularizer(v))
        return out

    def _clear_losses(self):
        self._losses.clear()
        for layer in self._tracked_layers:
            layer._clear_losses()

    # -- dtype policy
    def _set_dtype_policy(self, value):
        self._dtype_policy = mixed_precision.get(value)

    # both accept a policy or its name; `dtype` reads back the variable dtype only
    dtype_policy = read_only("_dtype_policy", "The layer's `DTypePolicy`.").setter(
        _set_dtype_policy)
    dtype = read_only("_dtype_policy.variable_dtype",
                      'The variable dtype, as Keras: a string ("float32").').setter(
        _set_dtype_policy)
    compute_dtype = read_only("_dtype_policy.compute_dtype",
                              "The dtype of the layer's math and outputs (a string, as Keras).")
    variable_dtype = read_only("_dtype_policy.variable_dtype",
                               "The dtype of the layer's weights (a string, as Keras).")
    input_dtype = read_only("_dtype_policy.compute_dtype",
                            "The dtype floating inputs are cast to (the compute dtype).")

    # -- building and calling
    def build(self, input_shape):
        """Creates the weights for inputs of `input_shape` (a tuple, batch dim None)."""
        self.built = True

    def call(self, inputs, *args, **kwargs):
        """The computation; the default returns the inputs."""
        return inputs

    # -- masks (Keras 3's protocol: a mask travels as the `_keras_mask` of a tensor)
    @property
    def supports_masking(self):
        """Whether the layer computes output masks with `compute_mask` (default: whether the
        layer's class overrides `compute_mask`); a layer that does not support masking
        drops an input's mask, with a warning."""
        value = getattr(self, "_supports_masking", None)   # a class may set it too
        if value is None:
            return type(self).compute_mask is not Layer.compute_mask
        return value

    @supports_masking.setter
    def supports_masking(self, value):
        self.__dict__["_supports_masking"] = bool(value)

    def compute_mask(self, inputs, previous_mask):
        """The mask of the outputs: by default the mask the inputs came with.

        Args:
            inputs: the first argument of `call`.
            previous_mask: the `mask` argument of the call, else the inputs' masks.
        """
        return previous_mask

    def _set_mask_metadata(self, inputs, outputs, previous_mask):
        flat_outputs = flatten(outputs)
        if all(get_keras_mask(x) is not None for x in flat_outputs):
            return
        masks = self.compute_mask(inputs, previous_mask)
        if masks is None:
            return
        for tensor, mask in zip(flat_outputs, flatten(masks)):
            if mask is not None and get_keras_mask(tensor) is None:
                set_keras_mask(tensor, mask)

    def _populate_masks(self, args, kwargs):
        """Fills in `call`'s mask arguments from the inputs' `_keras_mask`s, as Keras 3: with one
        tensor argument its masks go to `mask`; with several, each argument `k`'s to `k_mask`
        (where `call` takes them and the caller gave none). Returns the mask the outputs
        inherit by default: `mask`, else the first argument's."""
        if self._call_mask_params:
            try:
                arguments = self._call_signature.bind(*args, **kwargs).arguments
            except TypeError:
                arguments = None      # `call` itself will say what is wrong
            if arguments is not None:
                tensors = {name: value for name, value in arguments.items()
                           if _is_tensor_argument(value)}
                if len(tensors) == 1:
                    if "mask" in self._call_mask_params and arguments.get("mask") is None:
                        kwargs["mask"] = map_structure(get_keras_mask, next(iter(tensors.values())))
                elif len(tensors) > 1:
                    for name, value in tensors.items():
                        if f"{name}_mask" in self._call_mask_params and \
                                arguments.get(f"{name}_mask") is None:
                            kwargs[f"{name}_mask"] = map_structure(get_keras_mask, value)
        if kwargs.get("mask") is not None:
            return kwargs["mask"]
        if is_tensor(args[0]):
            return getattr(args[0], "_keras_mask", None)
        return map_structure(get_keras_mask, args[0])

    def compute_output_shape(self, input_shape):
        """The output shape for `input_shape`, found by tracing `call` symbolically."""
        with scratch_graph() as graph:
            x = graph.add_argument(TensorShape(input_shape), _dt.as_dtype(self.compute_dtype), "x")
            out = self.call(x, **({"training": False} if self._call_takes_training else {}))
        self._losses.clear()
        return tuple(out.shape)

    def _maybe_build(self, args, kwargs=None):
        if self.built:
            return

        def shapes_of(value):
            return pack_as(value, [tuple(x.shape) if hasattr(x, "shape") else None
                                   for x in flatten(value)])

        shapes = shapes_of(args[0])
        build_params = _shape_params(self.build)
        if len(build_params) > 1 and self._call_signature is not None:
            # as Keras: build(query_shape, value_shape) takes each tensor argument's shape
            try:
                arguments = self._call_signature.bind(*args, **(kwargs or {})).arguments
            except TypeError:
                arguments = {}
            given = {f"{name}_shape": shapes_of(value) for name, value in arguments.items()
                     if f"{name}_shape" in build_params and _is_tensor_argument(value)}
            # building creates Variables eagerly even while a tl.function traces
            self.build(**given)
        else:
            self.build(shapes)
        self._build_input_shape = shapes
        self.built = True

    def _convert_inputs(self, value):
        compute = self._dtype_policy._compute_dt
        out = []
        for x in flatten(value):
            if isinstance(x, (np.ndarray, np.generic)):
                x = convert_to_tensor(x)
            elif isinstance(x, (list, float, int)) and not isinstance(x, bool):
                x = convert_to_tensor(x)
            elif isinstance(x, _EngineVariable):
                x = x.read_value()
            if is_tensor(x) and compute.is_floating and x.dtype is not compute and (
                    (x.dtype.is_floating and self.autocast) or
                    (x.dtype.is_integer and self._promotes_integer_inputs)):
                x = _keep_mask(x, _math.cast(x, compute))
            out.append(x)
        return pack_as(value, out)

    def _convert_arguments(self, args, kwargs):
        """The call's arguments converted as Keras 3 converts them: the inputs by
        `_convert_inputs`; in the other arguments, arrays become tensors and floating tensors
        take the compute dtype (autocast). Masks stay with their tensors."""
        first = self._convert_inputs(args[0])
        if len(args) == 1 and not kwargs:
            return (first,), kwargs
        compute = self._dtype_policy._compute_dt

        def convert(x):
            if isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, np.str_):
                return convert_to_tensor(x)
            if is_tensor(x) and self.autocast and compute.is_floating and \
                    x.dtype.is_floating and x.dtype is not compute:
                return _keep_mask(x, _math.cast(x, compute))
            return x

        rest = tuple(map_structure(convert, a) for a in args[1:])
        return (first,) + rest, {k: map_structure(convert, v) for k, v in kwargs.items()}

    def _autocast_dtype(self):
        """The autocast scope `call` runs in, as Keras's: none for a layer that does not
        autocast or computes in a non-floating dtype, the compute dtype where it differs
        from the enclosing scope's or (outside any scope) from the variable dtype."""
        current = current_autocast_dtype()
        compute = self._dtype_policy._compute_dt
        if current is not None:
            if not self.autocast or not compute.is_floating:
                return None, True
            return compute, current is not compute
        if compute is not self._dtype_policy._variable_dt:
            return compute, True
        return None, False

    def __call__(self, *args, **kwargs):
        given = args, kwargs
        if not args:   # the inputs by name: call(inputs=x), mha(query=q, value=v)
            kwargs = dict(kwargs)
            for name in (self._call_first_param, "inputs"):
                if name is not None and name in kwargs:
                    args = (kwargs.pop(name),)
                    break
        if not args:
            raise TypeError(f"{self.name}: __call__ needs the inputs as first argument")
        if _has_keras_tensor(args, kwargs):
            return self._symbolic_call(args, kwargs, given)
        return self._call_on_values(args, kwargs)

    def _call_on_values(self, args, kwargs, symbolic=False):
        """`__call__` on tensors (eager, or symbolic while a graph traces): converts the
        arguments, resolves `training`, fills in the masks, builds, calls, and attaches the
        outputs' masks. `symbolic`: the tensors are placeholders standing for KerasTensors;
        as Keras 3's, `call` sees their masks only as mask arguments."""
        args, kwargs = self._convert_arguments(args, kwargs)
        training = kwargs.get("training")
        if training is None and _training_stack:
            training = _training_stack[-1]
        if self._call_takes_training:
            kwargs["training"] = bool(training) if training is not None else \
                self._call_training_default
        else:
            kwargs.pop("training", None)
        previous_mask = self._populate_masks(args, kwargs)
        if symbolic:
            for x in flatten((args, kwargs)):
                set_keras_mask(x, None)
        if not _training_stack:  # the outermost call: last call's add_loss losses go
            self._clear_losses()
        call = self.call
        if state.graph is not None:  # as Keras: a user's call() gets AutoGraph while tracing
            call = autograph.convert(call)
        scope_dtype, change_scope = self._autocast_dtype()
        assert_input_compatibility(self.input_spec, args[0], self.name)
        state.origins.append(_origin(self))
        try:
            outputs = self._scoped_call(call, args, kwargs, training, scope_dtype, change_scope)
        finally:
            state.origins.pop()
        if previous_mask is None and type(self).compute_mask is Layer.compute_mask:
            pass    # no mask came and none is made: nothing to attach or to warn about
        elif self.supports_masking:
            self._set_mask_metadata(args[0], outputs, previous_mask)
        elif any(m is not None for m in flatten(previous_mask)):
            warnings.warn(f"Layer '{self.name}' (of type {type(self).__name__}) was passed an "
                          "input with a mask attached to it. However, this layer does not "
                          "support masking and will therefore destroy the mask information. "
                          "Downstream layers will not see the mask.", UserWarning,
                          stacklevel=_user_stacklevel())
        return outputs

    def _scoped_call(self, call, args, kwargs, training, scope_dtype, change_scope):
        """`call` inside the layer's name scope (building first), `training` on the stack."""
        with name_scope(self.name, owner=self):
            if not self.built:
                self._maybe_build(args, kwargs)
                assert_input_compatibility(self.input_spec, args[0], self.name)  # build may set it
            _training_stack.append(bool(training) if training is not None else False)
            try:
                if change_scope:
                    with autocast_scope(scope_dtype):
                        outputs = call(*args, **kwargs)
                else:
                    outputs = call(*args, **kwargs)
                if self.activity_regularizer is not None:
                    self._add_activity_losses(outputs)
            finally:
                _training_stack.pop()
        return outputs

    def _add_activity_losses(self, outputs):
        for output in flatten(outputs):
            if not is_tensor(output):
                continue
            loss = self.activity_regularizer(output)
            if output.shape.rank:
                # per sample, so the penalty's weight does not change with the batch size
                batch = _math.cast(_array.shape(output)[0], loss.dtype)
                loss = _math.divide_no_nan(loss, batch)
            self.add_loss(loss)

    def _symbolic_call(self, args, kwargs, given=None):
        """Calls the layer on KerasTensors (anywhere in its arguments): traces the call on
        placeholders of their specs (masks included) in a scratch graph to learn the output
        specs and masks, and records the node (with the arguments as `given`, as Keras
        records them)."""
        kwargs = {k: v for k, v in kwargs.items() if k != "training"}
        masks_of = {}    # id(placeholder of a mask) -> the KerasTensor mask it stands for
        with scratch_graph() as graph:
            count = itertools.count()

            def feed(x):
                if not _is_keras_tensor(x):
                    return x
                placeholder = placeholder_like(graph, x, f"x{next(count)}")
                mask = getattr(x, "_keras_mask", None)
                if _is_keras_tensor(mask):
                    mask_placeholder = placeholder_like(graph, mask, f"mask{next(count)}")
                    masks_of[id(mask_placeholder)] = mask
                    set_keras_mask(placeholder, mask_placeholder)
                return placeholder

            feed_args = tuple(map_structure(feed, a) for a in args)
            feed_kwargs = {k: map_structure(feed, v) for k, v in kwargs.items()}
            if self._call_takes_training:
                feed_kwargs["training"] = False
            _training_stack.append(False)
            try:
                out = self._call_on_values(feed_args, feed_kwargs, symbolic=True)
            finally:
                _training_stack.pop()
                # the scratch graph's add_loss tensors must not outlive it
                self._clear_losses()
        node_args, node_kwargs = given if given is not None else (args, kwargs)
        node = Node(self, tuple(node_args),
                    {k: v for k, v in node_kwargs.items() if k != "training"})
        kts = []
        for i, t in enumerate(flatten(out)):
            kt = KerasTensor(t.shape, t.dtype, node=node, index=i)
            mask = get_keras_mask(t)
            if mask is not None:
                kt._keras_mask = masks_of.get(id(mask)) or KerasTensor(mask.shape, mask.dtype)
            kts.append(kt)
        node.outputs = pack_as(out, kts)
        if "_first_node" not in self.__dict__:
            self._first_node = node
        self._output_shape = tuple(kts[0].shape) if len(kts) == 1 else [tuple(k.shape) for k in kts]
        return node.outputs

    @property
    def input(self):
        """The symbolic input (KerasTensor, or the structure passed) of the layer's first call
        on KerasTensors.

        Raises:
            AttributeError: if the layer was never called on KerasTensors.
        """
        node = self.__dict__.get("_first_node")
        if node is None or not node.args:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no "
                                 "defined input.")
        return node.args[0]

    @property
    def output(self):
        """The symbolic output (KerasTensor) of the layer's first call on KerasTensors.

        Raises:
            AttributeError: if the layer was never called on KerasTensors.
        """
        node = self.__dict__.get("_first_node")
        if node is None:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no "
                                 "defined output.")
        return node.outputs

    # -- config
    def _obj_type(self):
        """The kind of object the savers tell apart, as Keras 3's: "Layer", "Model",
        "Functional" or "Sequential" (the file formats ask it: they sit below the models)."""
        return "Layer"

    def get_config(self):
        """The constructor arguments, as a JSON-serializable dict (Keras 3's keys and forms)."""
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": dtype_policy_config(self._dtype_policy)}
        if self._input_shape_arg is not None:
            config["input_shape"] = list(self._input_shape_arg)
        if self.activity_regularizer is not None:
            config["activity_regularizer"] = regularizers_module.serialize(
                self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config):
        """A new layer from `get_config`'s dict."""
        with warnings.catch_warnings():  # input_shape in a saved config is not the user's
            warnings.simplefilter("ignore", UserWarning)
            return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _build_wrapper(build):
    """Wraps a subclass's `build` so that calling it (directly too) marks the layer built,
    records the input shape, and names the Variables it makes after the layer."""

    @functools.wraps(build)
    def wrapper(self, *args, **kwargs):
        with name_scope(self.name, owner=self):
            result = build(self, *args, **kwargs)
        if self._build_input_shape is None and args:
            self._build_input_shape = args[0]
        self.built = True
        return result

    wrapper._marks_built = True
    return wrapper


# ------------------------------------------------------------------ Input

@register
class InputLayer(Layer):
    """The layer behind `tl.layers.Input`: holds the input spec of a functional model."""

    output = None   # set per instance: the Input's KerasTensor

    def __init__(self, shape=None, batch_size=None, dtype=None, name=None, batch_shape=None,
                 **kwargs):
        if "input_shape" in kwargs and shape is None:
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs and batch_shape is None:   # tf.keras 2's configs
            batch_shape = kwargs.pop("batch_input_shape")
        for flag in ("sparse", "ragged", "optional"):   # Keras 3 writes them, False
            if kwargs.pop(flag, False):
                raise ValueError(f"InputLayer: {flag}=True inputs are not supported by trainlib")
        given_name = name
        super().__init__(name=name or unique_name("input_layer"), dtype=dtype or "float32",
                         **kwargs)
        if batch_shape is None:
            if shape is None:
                raise ValueError("Input needs a shape (without the batch dim), e.g. shape=(784,)")
            batch_shape = (batch_size,) + tuple(shape)
        self.batch_shape = tuple(batch_shape)
        self.built = True
        # as Keras: the tensor takes the Input's name when one is given, else keras_tensor_N
        self.output = KerasTensor(self.batch_shape, self.dtype, name=given_name, layer=self)
        self._output_shape = self.batch_shape

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {"batch_shape": list(self.batch_shape), "dtype": self.dtype, "name": self.name}


def Input(shape=None, batch_size=None, dtype=None, name=None, batch_shape=None):  # noqa: N802
    """A symbolic input (`KerasTensor`) for the functional API.

    Args:
        shape: the shape of one sample (no batch dim), e.g. `(784,)`.
        batch_size: a fixed batch size (default None: any).
        dtype: the input dtype (default float32).
        name: the input's name.

    Example:
        >>> x = tl.layers.Input(shape=(4,))
        >>> y = tl.layers.Dense(2)(x)
        >>> model = tl.Model(x, y)
    """
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name,
                      batch_shape=batch_shape).output


# ------------------------------------------------------------------ serialization

# (a layer's own config form, `keras.layers.serialize`, is serialization_lib's
# serialize_keras_object: it serializes every kind of Keras object and sits above layers)

def deserialize(config, custom_objects=None):
    """The layer a `serialize` dict describes (registered classes and `custom_objects` only).

    Raises:
        ValueError: for an unknown class name.
    """
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or \
        _REGISTRY.get(f"{config.get('module')}>{name}") or _REGISTRY.get(name)
    if cls is None:
        raise ValueError(f"Unknown layer class {name!r}: pass it in custom_objects or decorate it "
                         "with tl.layers.register")
    if hasattr(cls, "_from_config_custom"):
        return cls._from_config_custom(config["config"], custom_objects)
    return cls.from_config(config["config"])

