"""The graph IR: `Graph`, `Operation`, and the GraphDef text form.

Owns: the data structure traced functions become and passes rewrite.
An Operation has typed fields (name, type, inputs, control inputs, attrs,
outputs, the user's source location and the line the profiler attributes it to); a Graph keeps its operations in
topological order. Invariants (checked by `Graph.verify()`): every input is
produced by an earlier operation of the same graph, names are unique, and the
output specs agree with the op's inference rule.
"""
import numpy as np

from . import dtypes as _dt
from .errors import user_location
from .context import state
from .op import infer_outputs
from .scopes import current_prefix, pending_control_inputs
from .tensor import SymbolicTensor, TensorShape
from .properties import read_only


class Operation:
    """One node of a graph: an op type applied to input tensors with attrs.

    Attributes:
        name: unique within the graph (`"MatMul_1"`).
        type: the op type (`"MatMul"`).
        inputs: the SymbolicTensors it reads.
        control_inputs: Operations that must run before it (stateful order).
        attrs: static attributes (Python values, arrays for Const).
        outputs: the SymbolicTensors it produces.
        location: `"file.py:LINE"` of the user's code that created it.
        origin: `("file.py:LINE", layer name or None)` the profiler attributes it to when
            that is not `location`: the user's line that created the built-in layer whose
            call made it (ops inside a Dense are the Dense line, not the `fit` line), or for
            a gradient op its forward op's line; None: `location`.
    """

    __slots__ = ("graph", "name", "opdef", "inputs", "control_inputs", "attrs", "outputs",
                 "location", "origin", "__weakref__")

    def __init__(self, graph, name, opdef, inputs, attrs, output_specs, location=None,
                 origin=None):
        self.graph = graph
        self.name = name
        self.opdef = opdef
        self.inputs = list(inputs)
        self.control_inputs = []
        self.attrs = attrs
        self.location = location
        self.origin = origin
        self.outputs = [SymbolicTensor(self, i, s.shape, s.dtype) for i, s in enumerate(output_specs)]

    type = read_only("opdef.name", "The op's type: its OpDef's name, such as MatMul.")

    @property
    def stateful(self):
        """The op's own flag; an If/While is stateful when an op in its graphs is (it may
        write a Variable or print), so it is ordered, never pruned, merged or folded."""
        if self.opdef.stateful:
            return True
        if not self.opdef.subgraphs:
            return False
        return any(op.stateful and op.opdef.variable_access != "read"
                   for key in self.opdef.subgraphs
                   if self.attrs.get(key) is not None for op in self.attrs[key].operations)

    def get_attr(self, name):
        return self.attrs[name]

    def __repr__(self):
        return f"<tl.Operation '{self.name}' type={self.type}>"


class Graph:
    """A list of Operations in topological order, plus the graph's inputs and outputs.

    Ops are added by `apply` while the graph is the current one
    (`context.graph_scope`). `inputs` are the Placeholder outputs fed at call
    time, `outputs` the tensors returned.
    """

    def __init__(self, name="graph"):
        self.name = name
        self.operations = []
        self._names = {}
        self.inputs = []
        self.outputs = []
        self.device = "cpu"

    def unique_name(self, base):
        count = self._names.get(base)
        if count is None:
            self._names[base] = 1
            return base
        while True:
            candidate = f"{base}_{count}"
            count += 1
            if candidate not in self._names:
                self._names[base] = count
                self._names[candidate] = 1
                return candidate

    def add_op(self, opdef, inputs, attrs, name=None):
        """Adds one Operation (inference checks shapes and dtypes now)."""
        inputs = [self.capture_if_needed(t) for t in inputs]
        specs = infer_outputs(opdef, inputs, attrs)
        name = name or opdef.name
        scoped = state.name_scopes or state.control_inputs  # tl.name_scope / control_dependencies
        if scoped:
            name = current_prefix(self) + name
        origins = state.origins
        op = Operation(self, self.unique_name(name), opdef, inputs, attrs, specs, user_location(),
                       origins[-1] if origins else None)
        if scoped and opdef.name != "Placeholder":
            op.control_inputs.extend(c for c in pending_control_inputs(self)
                                     if c not in op.control_inputs)
        self.operations.append(op)
        self._after_add(op)
        return op

    def capture_if_needed(self, value):
        """Graph inputs from elsewhere (eager tensors, outer graphs); a plain Graph refuses them."""
        if isinstance(value, SymbolicTensor) and value.op.graph is self:
            return value
        raise ValueError(f"{value!r} does not belong to graph {self.name!r}")

    def _after_add(self, op):
        """Hook for subclasses (automatic control dependencies)."""

    def get_operations(self):
        """The Operations, in topological order."""
        return list(self.operations)

    def get_operation_by_name(self, name):
        for op in self.operations:
            if op.name == name:
                return op
        raise KeyError(f"No operation named {name!r} in graph {self.name!r}")

    def verify(self):
        """Checks the IR invariants; raises AssertionError naming the first broken one."""
        seen = set()
        names = set()
        for op in self.operations:
            assert op.name not in names, f"duplicate operation name {op.name}"
            names.add(op.name)
            assert op.graph is self, f"{op.name} belongs to another graph"
            for t in op.inputs:
                assert id(t.op) in seen, f"{op.name} reads {t.name} before it is produced"
            for c in op.control_inputs:
                assert id(c) in seen, f"{op.name} has control input {c.name} that comes later"
            specs = infer_outputs(op.opdef, op.inputs, op.attrs)
            assert len(specs) == len(op.outputs), f"{op.name}: output count differs from inference"
            for s, t in zip(specs, op.outputs):
                assert s.dtype is t.dtype, f"{op.name}: dtype {t.dtype} but inference says {s.dtype}"
                assert t.shape.is_compatible_with(s.shape), \
                    f"{op.name}: shape {t.shape} but inference says {s.shape}"
            seen.add(id(op))
        for t in self.outputs:
            assert id(t.op) in seen, f"graph output {t.name} is not produced by the graph"
        return True

    def copy(self):
        """An independent copy: new Operations and tensors (nested If/While graphs copied too),
        the same op types, attrs and captured outside values. Passes rewrite the copy in place
        while the original stays as traced."""
        return copy_graph(self, {}, {}, None)

    def as_graph_def(self):
        """The graph as a GraphDef: `.node` entries with `.name .op .input .attr`; `str()` is
        the protobuf text form."""
        return GraphDef([NodeDef.from_operation(op) for op in self.operations])


def copy_graph(graph, env, op_env, outer):
    """Copies `graph`; `env`/`op_env` map id(old tensor/op) -> new ones, shared with nested
    graphs so that their captures of the enclosing graph's tensors follow the copy."""
    new = object.__new__(type(graph))
    new.__dict__.update(graph.__dict__)
    new._names = dict(graph._names)
    new.operations = []
    for op in graph.operations:
        attrs = {k: copy_graph(v, env, op_env, new) if isinstance(v, Graph) else v
                 for k, v in op.attrs.items()}
        copied = Operation(new, op.name, op.opdef, [env.get(id(t), t) for t in op.inputs], attrs,
                           op.outputs, op.location, op.origin)
        copied.control_inputs = [op_env.get(id(c), c) for c in op.control_inputs]
        for old_t, new_t in zip(op.outputs, copied.outputs):
            env[id(old_t)] = new_t
        op_env[id(op)] = copied
        new.operations.append(copied)

    def remap(value):
        if isinstance(value, SymbolicTensor):
            return env.get(id(value), value)
        if isinstance(value, Operation):
            return op_env.get(id(value), value)
        if isinstance(value, list):
            return [remap(v) for v in value]
        if isinstance(value, tuple):
            return tuple(remap(v) for v in value)
        if isinstance(value, dict):
            return {k: remap(v) for k, v in value.items()}
        return value

    for key, value in graph.__dict__.items():
        if key not in ("operations", "_names", "outer"):
            setattr(new, key, remap(value))
    if "_capture_index" in graph.__dict__:  # keyed by the captured values' ids
        new._capture_index = {id(value): p for value, p in new.captures}
    if "outer" in graph.__dict__ and outer is not None:
        new.outer = outer
    return new


class AttrValue:
    """One attribute in the text form (`type: DT_FLOAT`, `shape {...}`, `i: 3`...)."""

    def __init__(self, value):
        self.value = value

    def text(self, indent):
        v = self.value
        pad = " " * indent
        if isinstance(v, _dt.DType):
            return f"{pad}type: {_proto_dtype(v)}\n"
        if isinstance(v, TensorShape):
            return pad + "shape {\n" + _shape_text(v, indent + 2) + pad + "}\n"
        if isinstance(v, (np.ndarray, np.generic)) or _is_array(v):
            return pad + "tensor {\n" + _tensor_text(np.asarray(_host(v)), indent + 2) + pad + "}\n"
        if isinstance(v, (bool, int, float, str)):
            return f"{pad}{_list_item(v)}\n"
        if isinstance(v, (list, tuple)):
            items = " ".join(_list_item(x) for x in v)
            return pad + "list {" + (" " + items + " " if items else "") + "}\n"
        if v is None:
            return pad + "placeholder: \"none\"\n"
        return f'{pad}s: "{type(v).__name__}"\n'


_PROTO_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}


def _proto_dtype(dtype):
    return _PROTO_NAMES.get(dtype.name, "DT_" + dtype.name.upper())


def _list_item(x):
    if isinstance(x, bool):
        return f"b: {str(x).lower()}"
    if isinstance(x, int):
        return f"i: {x}"
    if isinstance(x, float):
        return f"f: {x}"
    return f's: "{x}"'


def _is_array(v):
    return hasattr(v, "__array_interface__") or hasattr(v, "__cuda_array_interface__")


def _host(v):
    return v.get() if hasattr(v, "get") and not isinstance(v, np.ndarray) else v


def _shape_text(shape, indent):
    pad = " " * indent
    if shape.rank is None:
        return pad + "unknown_rank: true\n"
    return "".join(f"{pad}dim {{\n{pad}  size: {-1 if d is None else d}\n{pad}}}\n" for d in shape)


def _tensor_text(array, indent):
    pad = " " * indent
    dtype = _dt.from_numpy(array.dtype)
    text = f"{pad}dtype: {_proto_dtype(dtype)}\n{pad}tensor_shape {{\n"
    text += _shape_text(TensorShape(array.shape), indent + 2) + pad + "}\n"
    field = {"f": "float_val", "i": "int_val", "u": "int_val", "b": "bool_val"}.get(array.dtype.kind, "string_val")
    flat = array.reshape(-1)[:16]
    for x in flat:
        x = x.item()
        x = str(x).lower() if isinstance(x, bool) else x
        text += f"{pad}{field}: {x}\n"
    return text


class NodeDef:
    """One node of a GraphDef: `name`, `op`, `input` (list of names), `attr` (dict)."""

    def __init__(self, name, op, input, attr, device=""):  # noqa: A002 -- protobuf's field name
        self.name, self.op, self.input, self.attr, self.device = name, op, input, attr, device

    @classmethod
    def from_operation(cls, op):
        inputs = [t.op.name if t.value_index == 0 else t.name for t in op.inputs]
        inputs += ["^" + c.name for c in op.control_inputs]
        attr = {}
        for key, value in op.attrs.items():
            if key.startswith("_") or callable(value) and not isinstance(value, _dt.DType):
                continue
            attr[key] = AttrValue(value)
        if op.outputs and "dtype" not in attr and "T" not in attr:
            attr["T"] = AttrValue(op.outputs[0].dtype)
        if op.type == "Placeholder":
            attr["shape"] = AttrValue(op.outputs[0].shape)
        return cls(op.name, op.type, inputs, attr)

    def __str__(self):
        return self.text(0)

    def text(self, indent):
        pad = " " * indent
        out = f"{pad}node {{\n{pad}  name: \"{self.name}\"\n{pad}  op: \"{self.op}\"\n"
        for i in self.input:
            out += f"{pad}  input: \"{i}\"\n"
        for key in sorted(self.attr):
            out += f"{pad}  attr {{\n{pad}    key: \"{key}\"\n{pad}    value {{\n"
            out += self.attr[key].text(indent + 6)
            out += f"{pad}    }}\n{pad}  }}\n"
        return out + f"{pad}}}\n"


class GraphDef:
    """A serializable view of a Graph (`node` is a list of NodeDef)."""

    def __init__(self, node):
        self.node = node

    def __str__(self):
        return "".join(n.text(0) for n in self.node) + "versions {\n  producer: 1\n}\n"

    def __repr__(self):
        return str(self)

