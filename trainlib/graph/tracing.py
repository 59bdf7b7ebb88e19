"""FuncGraph: the graph a Python function is traced into.

Owns: placeholders for tensor arguments, captures (eager tensors and Variable
handles from outside become extra inputs, read at call time; tensors of an
enclosing graph, for `If`/`While` branch graphs, become inputs the enclosing
op passes in), automatic control dependencies (stateful ops chained in
program order), and the policy on creating Variables while tracing.
Invariant: `inputs` = argument placeholders followed by capture placeholders,
in the order `captures` lists them.
"""
from . import dtypes as _dt
from .errors import user_location
from .ir import Graph
from .op import REGISTRY
from .tensor import SymbolicTensor, Tensor


class FuncGraph(Graph):
    """A Graph being traced from a Python function.

    Attributes:
        arg_placeholders: Placeholder outputs for the tensor arguments.
        captures: list of (outside value, placeholder): eager Tensors (including
            Variable handles) or SymbolicTensors of the enclosing graph.
        allow_variable_creation: False makes `tl.Variable(...)` raise (retraces).
        created_variables: Variables created while tracing.
    """

    def __init__(self, name="graph", outer=None):
        super().__init__(name)
        self.outer = outer
        self.arg_placeholders = []
        self.captures = []
        self._capture_index = {}
        self.last_stateful = None
        self.allow_variable_creation = True
        self.created_variables = []
        self.stateful_ops = []

    # -- inputs
    def add_placeholder(self, shape, dtype, name="x", attrs=None):
        """A new Placeholder output for an argument (or a capture)."""
        all_attrs = {"shape": shape, "dtype": dtype}
        if attrs:
            all_attrs.update(attrs)
        op = self.add_op(REGISTRY["Placeholder"], [], all_attrs, name=name)
        return op.outputs[0]

    def add_argument(self, shape, dtype, name):
        t = self.add_placeholder(shape, dtype, name)
        self.arg_placeholders.append(t)
        return t

    def capture_if_needed(self, value):
        if isinstance(value, SymbolicTensor):
            if value.op.graph is self:
                return value
            return self._capture(value)
        if isinstance(value, Tensor):
            return self._capture(value)
        raise TypeError(f"cannot use {type(value).__name__} as an op input in graph {self.name!r}")

    def _capture(self, value):
        found = self._capture_index.get(id(value))
        if found is not None:
            return found
        if isinstance(value, SymbolicTensor) and self.outer is None:
            raise ValueError(
                f"The symbolic tensor {value.name} belongs to another graph (a different tl.function "
                "or trace); tensors cannot be shared between Functions. Pass it as an argument.")
        attrs = {}
        if value.dtype is _dt.resource:
            variable = value._value if isinstance(value, Tensor) else value.op.attrs.get("_variable")
            attrs["_variable"] = variable
            name = getattr(variable, "name", None) or "resource"  # a Variable, an iterator...
            name = name.split(":")[0]
        else:
            name = "capture"
        placeholder = self.add_placeholder(value.shape, value.dtype, name, attrs)
        self.captures.append((value, placeholder))
        self._capture_index[id(value)] = placeholder
        return placeholder

    def capture_variable(self, variable):
        """The placeholder of `variable`'s handle (capturing it on first use)."""
        return self._capture(variable.handle)

    # -- automatic control dependencies
    def _after_add(self, op):
        if op.stateful and op.type != "Placeholder":
            if self.last_stateful is not None:
                op.control_inputs.append(self.last_stateful)
            self.last_stateful = op
            self.stateful_ops.append(op)

    # -- Variables
    def variable_created(self, variable):
        if not self.allow_variable_creation:
            raise ValueError(
                f"tl.function-decorated function tried to create a tl.Variable (at "
                f"{user_location()}) on a trace other than its first (a first trace that creates "
                "Variables is traced again, as TensorFlow does, to check it creates them once). "
                "Variables may be created only on the first trace: create them outside the function "
                "(e.g. in __init__ or a build step), or once behind a check, and use them inside.")
        self.created_variables.append(variable)
        if self.outer is not None:
            self.outer.variable_created(variable)
