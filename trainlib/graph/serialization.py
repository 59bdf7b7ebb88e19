"""Graphs <-> versioned JSON: the data half of a saved model.

Owns: the JSON form of a Graph (ops with type, name, inputs as `"op:index"`,
control inputs, attrs tagged by kind, output specs; `If`/`While` subgraphs
nested), the encoding of attrs and value specs, and rebuilding Graphs from
that form through the op registry, checking everything on the way.
Arrays (`Const` values and other array attrs) are not in the JSON: they go to
a dict of arrays the caller stores beside it (`.npz`), referenced by key.

Invariants: encoding refuses, at save time, anything it cannot restore as
plain data (naming the op and attr); decoding only ever creates registered
op types with attrs of the known kinds, never imports, evaluates or
unpickles anything, and raises `LoadError` (a ValueError) for anything that
is not a well-formed graph whose saved output specs agree with each op's
inference rule. Attr keys must be identifiers because the lowering (graph/exec)
writes them into generated source; operation names may be any printable text
(generated code makes its own ASCII names).
"""
import keyword
import math
import re

import numpy as np

from . import dtypes as _dt
from .backend import to_numpy
from .ir import Graph, Operation
from .op import REGISTRY, infer_outputs
from .tensor import TensorShape, TensorSpec
from .tracing import FuncGraph

FORMAT_VERSION = 1


class LoadError(ValueError):
    """A saved model (or graph JSON) that cannot be loaded: names the file and what is wrong."""


# ------------------------------------------------------------------ specs and shapes

def encode_shape(shape):
    """A TensorShape as JSON: a list of ints/None, or None for unknown rank."""
    shape = TensorShape(shape)
    return None if shape.rank is None else [None if d is None else int(d) for d in shape]


def decode_shape(data, where):
    if data is None:
        return TensorShape(None)
    if not isinstance(data, list) or len(data) > 64 or not all(
            d is None or (type(d) is int and 0 <= d < 2 ** 62) for d in data):
        raise LoadError(f"{where}: expected a shape (a list of non-negative ints or null), got "
                        f"{_short(data)}")
    return TensorShape(data)


def decode_dtype(data, where, allow_resource=True):
    dtype = _dt._BY_NAME.get(data) if isinstance(data, str) else None
    if dtype is None or dtype.name != data or (dtype is _dt.resource and not allow_resource):
        raise LoadError(f"{where}: unknown dtype {_short(data)}; expected one of "
                        f"{', '.join(d.name for d in _dt.ALL)}")
    return dtype


def encode_spec(shape, dtype):
    return {"shape": encode_shape(shape), "dtype": dtype.name}


def decode_spec(data, where, allow_resource=True):
    _expect_dict(data, where, ("shape", "dtype"), optional=("name",))
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise LoadError(f"{where}: spec name must be a string")
    return TensorSpec(decode_shape(data["shape"], f"{where}.shape"),
                      decode_dtype(data["dtype"], f"{where}.dtype", allow_resource), name)


# ------------------------------------------------------------------ attrs

class _Saver:
    """Encoding context: collects arrays (key -> numpy array) and maps Variables to indices."""

    def __init__(self, arrays, variable_index):
        self.arrays = arrays
        self.variable_index = variable_index

    def array(self, value):
        value = np.asarray(to_numpy(value))
        if value.dtype.kind == "O" and all(type(v) is bytes for v in value.reshape(-1)):
            return self._strings(value)
        if value.dtype.kind == "O" or _dt._BY_NP.get(value.dtype) is None:
            raise TypeError(f"an array of numpy dtype {value.dtype} (not a trainlib dtype)")
        key = f"array_{len(self.arrays)}"
        self.arrays[key] = value
        return {"array": key, "dtype": _dt.from_numpy(value.dtype).name,
                "shape": list(value.shape)}

    def _strings(self, value):
        """A string array as two plain arrays (never pickle): its bytes end to end, and each
        element's length."""
        flat = value.reshape(-1)
        key = f"array_{len(self.arrays)}"
        self.arrays[key] = np.frombuffer(b"".join(flat), dtype=np.uint8).copy()
        self.arrays[key + "_lengths"] = np.array([len(v) for v in flat], dtype=np.int64)
        return {"array": key, "dtype": "string", "shape": list(value.shape),
                "lengths": key + "_lengths"}


def _encode_attr(value, saver, depth=0):
    if depth > 32:
        raise TypeError("a value nested more than 32 levels deep")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, _dt.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": encode_shape(value)}
    if isinstance(value, Graph):
        return {"graph": encode_graph(value, saver)}
    if isinstance(value, np.generic):
        if _dt._BY_NP.get(value.dtype) is None or value.dtype.kind == "c":
            raise TypeError(f"a numpy scalar of dtype {value.dtype}")
        item = value.item()
        return {"scalar": _dt.from_numpy(value.dtype).name,
                "value": _encode_attr(float(item) if isinstance(item, float) else item, saver)}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return [_encode_attr(v, saver, depth + 1) for v in value]
    if isinstance(value, list):
        return {"list": [_encode_attr(v, saver, depth + 1) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": [[k, _encode_attr(v, saver, depth + 1)] for k, v in value.items()]}
    if hasattr(value, "__array_interface__") or hasattr(value, "__cuda_array_interface__"):
        return saver.array(value)
    raise TypeError(f"a value of type {type(value).__name__}")


def _decode_attr(data, loader, where, depth=0):
    if depth > 32:
        raise LoadError(f"{where}: attr nested too deeply")
    if data is None or isinstance(data, (bool, str)):
        return data
    if type(data) is int:
        return data
    if type(data) is float:
        return data
    if isinstance(data, list):
        return tuple(_decode_attr(v, loader, f"{where}[{i}]", depth + 1) for i, v in enumerate(data))
    if not isinstance(data, dict):
        raise LoadError(f"{where}: unknown attr encoding {_short(data)}")
    keys = set(data)
    if keys == {"list"} and isinstance(data["list"], list):
        return [_decode_attr(v, loader, f"{where}[{i}]", depth + 1) for i, v in enumerate(data["list"])]
    if keys == {"dict"} and isinstance(data["dict"], list):
        out = {}
        for i, item in enumerate(data["dict"]):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise LoadError(f"{where}: dict entry {i} must be [key, value]")
            out[item[0]] = _decode_attr(item[1], loader, f"{where}[{item[0]!r}]", depth + 1)
        return out
    if keys == {"float"} and data["float"] in ("nan", "inf", "-inf"):
        return float(data["float"])
    if keys == {"dtype"}:
        return decode_dtype(data["dtype"], where)
    if keys == {"shape"}:
        return decode_shape(data["shape"], where)
    if keys == {"graph"}:
        return decode_graph(data["graph"], loader, where + ".graph")
    if keys == {"scalar", "value"}:
        dtype = decode_dtype(data["scalar"], where, allow_resource=False)
        value = _decode_attr(data["value"], loader, where, depth + 1)
        if type(value) not in (bool, int, float):
            raise LoadError(f"{where}: a numpy scalar needs a number, got {_short(data['value'])}")
        try:
            with np.errstate(all="ignore"):
                return dtype.np.type(value)
        except (OverflowError, ValueError, TypeError):
            raise LoadError(f"{where}: {value!r} does not fit {dtype.name}") from None
    if keys == {"array", "dtype", "shape"}:
        return loader.array(data, where)
    if keys == {"array", "dtype", "shape", "lengths"}:
        return loader.strings(data, where)
    if keys == {"variable"}:
        return loader.variable(data["variable"], where)
    raise LoadError(f"{where}: unknown attr encoding {_short(data)}")


# ------------------------------------------------------------------ graphs

def encode_graph(graph, saver):
    """The JSON form of `graph` (arrays go to `saver.arrays`); TypeError/ValueError naming the
    op and attr for anything that cannot be saved."""
    ops = []
    for op in graph.operations:
        opdef = REGISTRY.get(op.type)
        if opdef is not op.opdef:
            raise ValueError(f"cannot save operation '{op.name}': its op type {op.type!r} is not "
                             "the registered OpDef of that name")
        attrs = {}
        for key, value in op.attrs.items():
            attrs[key] = _encode_op_attr(op, key, value, saver)
        ops.append({
            "name": op.name, "type": op.type,
            "inputs": [_ref(t) for t in op.inputs],
            "control_inputs": [c.name for c in op.control_inputs],
            "attrs": attrs,
            "outputs": [encode_spec(t.shape, t.dtype) for t in op.outputs],
            "location": op.location if isinstance(op.location, str) else None,
        })
    return {"name": str(graph.name), "ops": ops, "inputs": [_ref(t) for t in graph.inputs],
            "outputs": [_ref(t) for t in graph.outputs]}


def _encode_op_attr(op, key, value, saver):
    where = f"attr {key!r} of operation '{op.name}' (op {op.type})"
    if key == "_variable":
        if value is None:
            return None
        index = saver.variable_index(value)
        if index is None:
            raise ValueError(f"cannot save {where}: Variable {getattr(value, 'name', value)!r} is "
                             "not among the saved variables")
        return {"variable": index}
    if not key.isidentifier() or keyword.iskeyword(key) or key.startswith("_"):
        raise ValueError(f"cannot save {where}: only identifier attr names (and '_variable') can "
                         "be saved")
    if op.type == "PrintV2" and key == "output_stream" and value is not None:
        raise ValueError(f"cannot save {where}: it prints to the stream {value!r}; a saved model "
                         "can only print to the default sys.stdout (leave output_stream unset)")
    try:
        return _encode_attr(value, saver)
    except TypeError as e:
        raise ValueError(f"cannot save {where}: {e} is not a kind of attr a saved model can hold "
                         "(None, bool, int, float, str, tuple, list, dict, DType, TensorShape, "
                         "array, graph)") from None


def _ref(tensor):
    return f"{tensor.op.name}:{tensor.value_index}"


class _Loader:
    """Decoding context: arrays by key (checked against their declared spec) and Variables."""

    def __init__(self, arrays, variables, xp):
        self.arrays = arrays
        self.variables = variables
        self.xp = xp

    def array(self, data, where):
        key = data["array"]
        value = self.arrays.get(key) if isinstance(key, str) else None
        if value is None:
            raise LoadError(f"{where}: array {_short(key)} is missing from the arrays file")
        dtype = decode_dtype(data["dtype"], where, allow_resource=False)
        shape = decode_shape(data["shape"], where)
        if value.dtype != dtype.np or tuple(value.shape) != shape.as_tuple():
            raise LoadError(f"{where}: array {key!r} has shape {value.shape} and dtype {value.dtype}, "
                            f"the graph expects shape {shape.as_tuple()} and dtype {dtype.name}")
        return value if self.xp is np else self.xp.asarray(value)

    def strings(self, data, where):
        """A string array from its bytes and lengths (see `_Saver._strings`)."""
        raw, lengths = self.arrays.get(data["array"]), self.arrays.get(data["lengths"])
        shape = decode_shape(data["shape"], where)
        if raw is None or lengths is None or raw.dtype != np.uint8 or lengths.dtype != np.int64 \
                or lengths.ndim != 1 or not shape.is_fully_defined() or \
                lengths.size != shape.num_elements() or (lengths < 0).any() or \
                int(lengths.sum()) != raw.size:
            raise LoadError(f"{where}: string array {_short(data['array'])} is missing or does not "
                            f"match its lengths and shape {shape}")
        data_bytes = raw.tobytes()
        ends = np.cumsum(lengths)
        out = np.empty(lengths.size, dtype=object)
        for i, (end, n) in enumerate(zip(ends.tolist(), lengths.tolist())):
            out[i] = data_bytes[end - n:end]
        return out.reshape(shape.as_tuple())

    def variable(self, index, where):
        if type(index) is not int or not 0 <= index < len(self.variables):
            raise LoadError(f"{where}: variable index {_short(index)} is out of range "
                            f"(there are {len(self.variables)} variables)")
        return self.variables[index]


_REF = re.compile(r"(.+):(\d{1,6})")


def decode_graph(data, loader, where="graph"):
    """Rebuilds a FuncGraph from its JSON form; LoadError for anything malformed."""
    _expect_dict(data, where, ("name", "ops", "inputs", "outputs"))
    if not isinstance(data["name"], str) or not isinstance(data["ops"], list):
        raise LoadError(f"{where}: 'name' must be a string and 'ops' a list")
    graph = FuncGraph(data["name"])
    by_name = {}
    for i, item in enumerate(data["ops"]):
        op_where = f"{where}.ops[{i}]"
        _expect_dict(item, op_where, ("name", "type", "inputs", "control_inputs", "attrs", "outputs"),
                     optional=("location",))
        op = _decode_op(graph, item, by_name, loader, op_where)
        by_name[op.name] = op
    graph.inputs = _refs(data["inputs"], by_name, f"{where}.inputs")
    graph.outputs = _refs(data["outputs"], by_name, f"{where}.outputs")
    for t in graph.inputs:
        if t.op.type != "Placeholder":
            raise LoadError(f"{where}.inputs: {t.name} is not a Placeholder")
    if len({id(t) for t in graph.inputs}) != len(graph.inputs):
        raise LoadError(f"{where}.inputs: a placeholder is listed twice")
    try:
        graph.verify()
    except AssertionError as e:
        raise LoadError(f"{where}: the graph is inconsistent: {e}") from None
    return graph


def _decode_op(graph, item, by_name, loader, where):
    name, type_name = item["name"], item["type"]
    if not isinstance(name, str) or not name or len(name) > 256 or not name.isprintable():
        raise LoadError(f"{where}: bad operation name {_short(name)}")
    if name in by_name:
        raise LoadError(f"{where}: duplicate operation name {name!r}")
    opdef = REGISTRY.get(type_name) if isinstance(type_name, str) else None
    if opdef is None:
        raise LoadError(f"{where}: operation {name!r} has unknown op type {_short(type_name)}; this "
                        "trainlib registers no such op (was the model saved by a newer version?)")
    where = f"{where} ('{name}', {type_name})"
    inputs = _refs(item["inputs"], by_name, f"{where}.inputs")
    if not isinstance(item["control_inputs"], list):
        raise LoadError(f"{where}.control_inputs must be a list of operation names")
    controls = []
    for c in item["control_inputs"]:
        found = by_name.get(c) if isinstance(c, str) else None
        if found is None:
            raise LoadError(f"{where}.control_inputs: {_short(c)} is not an earlier operation")
        controls.append(found)
    if not isinstance(item["attrs"], dict):
        raise LoadError(f"{where}.attrs must be an object")
    attrs = {}
    for key, value in item["attrs"].items():
        if key == "_variable":
            attrs[key] = None if value is None else _decode_attr(value, loader, f"{where}.attrs._variable")
            if attrs[key] is not None and not hasattr(attrs[key], "_array"):
                raise LoadError(f"{where}.attrs._variable must reference a variable")
            continue
        if not key.isidentifier() or keyword.iskeyword(key) or key.startswith("_"):
            raise LoadError(f"{where}: bad attr name {_short(key)}")
        attrs[key] = _decode_attr(value, loader, f"{where}.attrs.{key}")
    try:
        specs = infer_outputs(opdef, inputs, attrs)
    except Exception as e:  # noqa: BLE001 -- any failure of the rule on these attrs is a bad file
        raise LoadError(f"{where}: the op's inference rule rejects the saved inputs/attrs: "
                        f"{type(e).__name__}: {e}") from None
    saved = item["outputs"]
    if not isinstance(saved, list) or len(saved) != len(specs):
        raise LoadError(f"{where}: {len(saved) if isinstance(saved, list) else _short(saved)} saved "
                        f"outputs, the op's inference rule gives {len(specs)}")
    for k, (s, d) in enumerate(zip(specs, saved)):
        d = decode_spec(d, f"{where}.outputs[{k}]")
        if s.dtype is not d.dtype or not s.shape.is_compatible_with(d.shape):
            raise LoadError(f"{where}: output {k} was saved as {d.dtype.name} {d.shape}, but "
                            f"inference on the saved inputs gives {s.dtype.name} {s.shape}")
    _check_subgraphs(opdef, inputs, attrs, specs, where)
    location = item.get("location")
    if graph.unique_name(name) != name:
        raise LoadError(f"{where}: operation name {name!r} clashes with another")
    op = Operation(graph, name, opdef, inputs, attrs, specs,
                   location if isinstance(location, str) else None)
    op.control_inputs = controls
    graph.operations.append(op)
    return op


def _check_subgraphs(opdef, inputs, attrs, specs, where):
    """If/While: the subgraphs' inputs and outputs line up with the op (lowering relies on it)."""
    def match(values, graph_tensors, what):
        if len(values) != len(graph_tensors):
            raise LoadError(f"{where}: {what} has {len(graph_tensors)} entries, expected {len(values)}")
        for v, t in zip(values, graph_tensors):
            if v.dtype is not t.dtype or not v.shape.is_compatible_with(t.shape):
                raise LoadError(f"{where}: {what} has a {t.dtype.name} {t.shape} where "
                                f"{v.dtype.name} {v.shape} comes")

    if opdef.control == "if":
        for key in opdef.subgraphs:
            match(inputs[1:], attrs[key].inputs, f"{key} inputs")
            match(specs, attrs[key].outputs, f"{key} outputs")
        if not inputs or inputs[0].dtype is not _dt.bool:
            raise LoadError(f"{where}: the predicate must be a bool tensor")
    elif opdef.control == "while":
        n = len(specs)
        cond_key, body_key = opdef.subgraphs
        for key in opdef.subgraphs:
            match(inputs, attrs[key].inputs, f"{key} inputs")
        match(inputs[:n], attrs[body_key].outputs, "body outputs")
        cond_out = attrs[cond_key].outputs
        if len(cond_out) != 1 or cond_out[0].dtype is not _dt.bool:
            raise LoadError(f"{where}: cond must return one bool tensor")
        limit = attrs.get("maximum_iterations")
        if limit is not None and type(limit) is not int:
            raise LoadError(f"{where}: maximum_iterations must be an int")


def _refs(data, by_name, where):
    if not isinstance(data, list):
        raise LoadError(f"{where} must be a list of 'op:index' references")
    out = []
    for ref in data:
        m = _REF.fullmatch(ref) if isinstance(ref, str) else None
        op = by_name.get(m.group(1)) if m else None
        if op is None or int(m.group(2)) >= len(op.outputs):
            raise LoadError(f"{where}: {_short(ref)} is not an output of an earlier operation")
        out.append(op.outputs[int(m.group(2))])
    return out


# ------------------------------------------------------------------ helpers

def _expect_dict(data, where, required, optional=()):
    if not isinstance(data, dict):
        raise LoadError(f"{where}: expected an object, got {_short(data)}")
    missing = [k for k in required if k not in data]
    extra = [k for k in data if k not in required and k not in optional]
    if missing or extra:
        raise LoadError(f"{where}: " + "; ".join(
            ([f"missing field(s) {missing}"] if missing else []) +
            ([f"unknown field(s) {extra}"] if extra else [])))


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
