"""`Layer` (the unit of state and computation), `KerasTensor` and `Input` for the functional API.

Owns: weight creation (`add_weight`, always eager: the initializer runs inside
the callable handed to `tl.Variable`, so a first call inside a tl.function
trace still creates concrete Variables), lazy `build` on first `__call__`,
the `training` flag passed down to nested layers, weight order (a layer's own
weights in creation order, then its sublayers' in attribute-assignment
order: Keras 3's order), and symbolic calls on KerasTensors, whose output
specs come from tracing `call` into a scratch graph that is then dropped.
Invariants: a Layer's Variables exist before any graph uses them on a later
trace; a KerasTensor never reaches an op (layers intercept it).
"""
import contextlib
import inspect
import itertools
import collections
import re

import trainlib as tl
from trainlib import initializers
from trainlib.graph.autodiff import flatten, pack_as
from trainlib.graph.context import graph_scope, state
from trainlib.graph.tensor import TensorShape, is_tensor
from trainlib.graph.tracing import FuncGraph
from trainlib.graph.variables import Module, Variable

__all__ = ["Layer", "InputLayer", "Input", "KerasTensor", "Node", "register", "serialize",
           "deserialize", "dtype_policy_config", "check_unsupported"]

_name_counters = collections.defaultdict(itertools.count)
_training_stack = []          # the training flag of the enclosing layer calls
_REGISTRY = {}                # class name -> class, for from_config / deserialize


def register(cls):
    """Class decorator: makes `cls` known to `deserialize` (and model loading) by name."""
    key = cls._registry_key() if hasattr(cls, "_registry_key") else cls.__name__
    _REGISTRY[key] = cls
    return cls


def dtype_policy_config(dtype):
    """A dtype as Keras 3 writes it in a layer config (a serialized DTypePolicy)."""
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": dtype.name},
            "registered_name": None}


def check_unsupported(layer, **options):
    """Raises NotImplementedError for a Keras option given a value trainlib does not implement.

    `options` maps each option name to (value given, the value trainlib supports).
    """
    for name, (value, supported) in options.items():
        if value != supported and value is not None:
            raise NotImplementedError(f"{type(layer).__name__}: {name}={value!r} is not supported "
                                      f"by trainlib (only {supported!r})")


def unique_name(base):
    """`base`, then `base_1`, `base_2`... for default layer names, as Keras numbers them."""
    n = next(_name_counters[base])
    return base if n == 0 else f"{base}_{n}"


def to_snake_case(name):
    """Keras 3's default-name form: "Conv2D" -> "conv2d", "MeanSquaredError" -> "mean_squared_error"."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def auto_name(class_name):
    """A fresh default name for an object of class `class_name` (conv2d, conv2d_1, ...)."""
    return unique_name(to_snake_case(class_name))




# ------------------------------------------------------------------ symbolic values

class Node:
    """One call of a layer on KerasTensors: the layer, its arguments, and the KerasTensors made."""

    __slots__ = ("layer", "args", "kwargs", "outputs")

    def __init__(self, layer, args, kwargs, outputs=None):
        self.layer, self.args, self.kwargs, self.outputs = layer, args, kwargs, outputs


class KerasTensor:
    """A symbolic value of the functional API: a shape (batch dim None), a dtype and its history.

    Produced by `tl.layers.Input` and by calling layers on KerasTensors; it
    never holds data. `Model(inputs, outputs)` reads the recorded `node`s.
    """

    def __init__(self, shape, dtype=tl.float32, node=None, index=0, name=None, layer=None):
        self.shape = TensorShape(shape)
        self.dtype = tl.as_dtype(dtype)
        self.node = node      # the Node whose call produced it (None for an Input)
        self.index = index    # which output of that call
        self.name = name
        self.layer = layer if layer is not None else (node.layer if node is not None else None)

    @property
    def ndim(self):
        return self.shape.rank

    def __repr__(self):
        return f"<KerasTensor shape={self.shape} dtype={self.dtype.name} " \
               f"(created by layer '{self.layer.name if self.layer else None}')>"

    def __hash__(self):
        return id(self)

    # operators record operations of the functional API (layers/operators.py), as Keras 3's
    def __add__(self, other): return _operator("Add", self, other)
    def __radd__(self, other): return _operator("Add", self, other, True)
    def __sub__(self, other): return _operator("Subtract", self, other)
    def __rsub__(self, other): return _operator("Subtract", self, other, True)
    def __mul__(self, other): return _operator("Multiply", self, other)
    def __rmul__(self, other): return _operator("Multiply", self, other, True)
    def __truediv__(self, other): return _operator("TrueDivide", self, other)
    def __rtruediv__(self, other): return _operator("TrueDivide", self, other, True)
    def __floordiv__(self, other): return _operator("FloorDivide", self, other)
    def __rfloordiv__(self, other): return _operator("FloorDivide", self, other, True)
    def __mod__(self, other): return _operator("Mod", self, other)
    def __rmod__(self, other): return _operator("Mod", self, other, True)
    def __pow__(self, other): return _operator("Power", self, other)
    def __rpow__(self, other): return _operator("Power", self, other, True)
    def __matmul__(self, other): return _operator("Matmul", self, other)
    def __rmatmul__(self, other): return _operator("Matmul", self, other, True)
    def __lt__(self, other): return _operator("Less", self, other)
    def __le__(self, other): return _operator("LessEqual", self, other)
    def __gt__(self, other): return _operator("Greater", self, other)
    def __ge__(self, other): return _operator("GreaterEqual", self, other)
    def __and__(self, other): return _operator("LogicalAnd", self, other)
    def __rand__(self, other): return _operator("LogicalAnd", self, other, True)
    def __or__(self, other): return _operator("LogicalOr", self, other)
    def __ror__(self, other): return _operator("LogicalOr", self, other, True)
    def __neg__(self): return _operator("Negative", self)
    def __abs__(self): return _operator("Absolute", self)
    def __invert__(self): return _operator("LogicalNot", self)
    def __getitem__(self, key): return _operator("GetItem", self, key)


def _operator(name, x, other=None, reverse=False):
    from .operators import symbolic_operator  # noqa: PLC0415 -- the operations subclass Layer
    return symbolic_operator(name, x, other, reverse)


def _is_keras_tensor(x):
    return isinstance(x, KerasTensor)


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
    dtype = value.dtype if isinstance(value.dtype, tl.DType) else tl.as_dtype(value.dtype)
    return graph.add_argument(shape, dtype, name)


# ------------------------------------------------------------------ Layer

class Layer(Module):
    """Base class of layers: state (weights, created in `build`) plus computation (`call`).

    Subclasses implement `build(input_shape)` (create weights with
    `add_weight`) and `call(inputs, training=None)`; `__call__` builds on the
    first call, casts floating inputs to the layer's dtype, and passes the
    `training` flag down to nested layers.

    Args:
        trainable: whether the layer's weights are trained.
        name: the layer's name (default: snake-cased class name, numbered).
        dtype: the dtype of the weights and computation (default float32).

    Example:
        >>> class Scale(tl.layers.Layer):
        ...     def build(self, input_shape):
        ...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")
        ...     def call(self, x):
        ...         return x * self.w
        >>> Scale()(tl.ones((2, 3))).shape
        TensorShape([2, 3])
    """

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None, input_dim=None,
                 **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {sorted(kwargs)}")
        super().__init__(name or auto_name(type(self).__name__))
        self._trainable = bool(trainable)
        if isinstance(dtype, dict):  # Keras 3's serialized DTypePolicy
            dtype = dtype.get("config", {}).get("name")
        self.dtype = tl.as_dtype(dtype or "float32")
        self.built = False
        self._trainable_variables = []
        self._non_trainable_variables = []
        self._build_input_shape = None
        self._output_shape = None
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        self._input_shape_arg = tuple(input_shape) if input_shape is not None else None
        try:
            self._call_takes_training = "training" in inspect.signature(self.call).parameters
        except (TypeError, ValueError):
            self._call_takes_training = False

    # -- weights
    def add_weight(self, name=None, shape=(), initializer=None, trainable=True, dtype=None,
                   regularizer=None, constraint=None):
        """Creates a Variable owned by this layer (eagerly, even during a trace).

        Args:
            name: the weight's name ("kernel", "bias", ...).
            shape: its shape.
            initializer: an initializer, its Keras name, or None (glorot_uniform for
                floating weights, zeros otherwise).
            trainable: whether optimizers train it.
            dtype: its dtype (default: the layer's).

        Returns:
            The `tl.Variable`.
        """
        dtype = tl.as_dtype(dtype or self.dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = initializers.get(initializer)
        shape = tuple(int(d) for d in shape)
        variable = Variable(lambda: init(shape, dtype=dtype), trainable=trainable,
                            name=name or "variable", dtype=dtype)
        (self._trainable_variables if trainable else self._non_trainable_variables).append(variable)
        return variable

    def _sublayers(self):
        """Directly owned layers, in attribute-assignment order."""
        out, seen = [], set()

        def visit(value):
            if isinstance(value, Layer):
                if id(value) not in seen:
                    seen.add(id(value))
                    out.append(value)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    visit(v)
            elif isinstance(value, dict):
                for v in value.values():
                    visit(v)

        for value in vars(self).values():
            visit(value)
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
        for layer in self._sublayers():
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
        for layer in self._sublayers():
            layer.trainable = value

    def get_weights(self):
        """The weights' values as numpy arrays, in `weights` order."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Assigns numpy arrays to the weights, in `weights` order.

        Raises:
            ValueError: on a count or shape mismatch.
        """
        import numpy as np  # noqa: PLC0415 -- host data, not kernel math
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

    # -- building and calling
    def build(self, input_shape):
        """Creates the weights for inputs of `input_shape` (a tuple, batch dim None)."""
        self.built = True

    def call(self, inputs, *args, **kwargs):
        """The computation; the default returns the inputs."""
        return inputs

    def compute_output_shape(self, input_shape):
        """The output shape for `input_shape`, found by tracing `call` symbolically."""
        with scratch_graph() as graph:
            x = graph.add_argument(TensorShape(input_shape), self.dtype, "x")
            out = self.call(x, **({"training": False} if self._call_takes_training else {}))
        return tuple(out.shape)

    def _maybe_build(self, args):
        if self.built:
            return
        shapes = pack_as(args[0], [tuple(x.shape) if hasattr(x, "shape") else None
                                   for x in flatten(args[0])])
        self._build_input_shape = shapes
        # building creates Variables eagerly even while a tl.function traces
        self.build(shapes)
        self.built = True

    def _convert_inputs(self, value):
        import numpy as np  # noqa: PLC0415 -- inspecting host data
        leaves = flatten(value)
        out = []
        for x in leaves:
            if isinstance(x, (np.ndarray, np.generic, list, float, int)) and not isinstance(x, bool):
                arr = np.asarray(x)
                if arr.dtype.kind == "f" and arr.dtype != self.dtype.np and self.dtype.is_floating:
                    arr = arr.astype(self.dtype.np)
                x = tl.convert_to_tensor(arr)
            elif isinstance(x, Variable):
                x = x.read_value()
            if is_tensor(x) and x.dtype.is_floating and self.dtype.is_floating and \
                    x.dtype is not self.dtype and self._autocast:
                x = tl.cast(x, self.dtype)
            out.append(x)
        return pack_as(value, out)

    _autocast = True

    def __call__(self, *args, **kwargs):
        if not args and "inputs" in kwargs:
            args = (kwargs.pop("inputs"),)
        if not args:
            raise TypeError(f"{self.name}: __call__ needs the inputs as first argument")
        if any(_is_keras_tensor(x) for x in flatten(args[0])):
            return self._symbolic_call(args, kwargs)
        args = (self._convert_inputs(args[0]),) + tuple(args[1:])
        training = kwargs.get("training")
        if training is None and _training_stack:
            training = _training_stack[-1]
        if self._call_takes_training:
            kwargs["training"] = bool(training) if training is not None else False
        else:
            kwargs.pop("training", None)
        self._maybe_build(args)
        _training_stack.append(bool(training) if training is not None else False)
        call = self.call
        if state.graph is not None:  # as Keras: a user's call() gets AutoGraph while tracing
            from trainlib.graph import autograph  # noqa: PLC0415
            call = autograph.convert(call)
        try:
            return call(*args, **kwargs)
        finally:
            _training_stack.pop()

    def _symbolic_call(self, args, kwargs):
        """Calls the layer on KerasTensors: builds it, infers output specs, records the node."""
        kwargs = {k: v for k, v in kwargs.items() if k != "training"}
        self._maybe_build(args)
        with scratch_graph() as graph:
            leaves = flatten(args[0])
            feeds = [placeholder_like(graph, x, f"x{i}") if _is_keras_tensor(x) else x
                     for i, x in enumerate(leaves)]
            if self._call_takes_training:
                kwargs_call = dict(kwargs, training=False)
            else:
                kwargs_call = kwargs
            _training_stack.append(False)
            try:
                out = self.call(pack_as(args[0], feeds), *args[1:], **kwargs_call)
            finally:
                _training_stack.pop()
        node = Node(self, args, kwargs)
        kts = [KerasTensor(t.shape, t.dtype, node=node, index=i)
               for i, t in enumerate(flatten(out))]
        node.outputs = pack_as(out, kts)
        if "_first_node" not in self.__dict__:
            self._first_node = node
        self._output_shape = tuple(kts[0].shape) if len(kts) == 1 else [tuple(k.shape) for k in kts]
        return node.outputs

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
    def get_config(self):
        """The constructor arguments, as a JSON-serializable dict (Keras 3's keys and forms)."""
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": dtype_policy_config(self.dtype)}
        if self._input_shape_arg is not None:
            config["input_shape"] = list(self._input_shape_arg)
        return config

    @classmethod
    def from_config(cls, config):
        """A new layer from `get_config`'s dict."""
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


# ------------------------------------------------------------------ Input

@register
class InputLayer(Layer):
    """The layer behind `tl.layers.Input`: holds the input spec of a functional model."""

    output = None   # set per instance: the Input's KerasTensor

    def __init__(self, shape=None, batch_size=None, dtype=None, name=None, batch_shape=None,
                 **kwargs):
        if "input_shape" in kwargs and shape is None:
            shape = kwargs.pop("input_shape")
        super().__init__(name=name or unique_name("input_layer"), dtype=dtype, **kwargs)
        if batch_shape is None:
            if shape is None:
                raise ValueError("Input needs a shape (without the batch dim), e.g. shape=(784,)")
            batch_shape = (batch_size,) + tuple(shape)
        self.batch_shape = tuple(batch_shape)
        self.built = True
        self.output = KerasTensor(self.batch_shape, self.dtype, name=self.name, layer=self)
        self._output_shape = self.batch_shape

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {"batch_shape": list(self.batch_shape), "dtype": self.dtype.name, "name": self.name}


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

def serialize(layer):
    """A layer as Keras 3's `keras.layers.serialize` writes it: {"module", "class_name",
    "config", "registered_name"} (and "build_config" once built)."""
    from ..saving.serialization_lib import serialize_keras_object  # noqa: PLC0415 -- saving is above
    return serialize_keras_object(layer)


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

