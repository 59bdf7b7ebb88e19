"""Why a symbolic tensor cannot be a Python bool, said with its origin: the error of
`bool(graph_tensor)` (an `if`, `while`, `and` on a tensor in code AutoGraph did not convert).

Owns: `explain_bool(tensor)` (the message) and its installation as SymbolicTensor.__bool__
(tensor.py sits below the graph and AutoGraph layers, so the richer error is installed from
here, as ops/operators.py installs the tensor operators). The message names the value (op,
dtype, shape), the graph input it came from (a tl.function argument by name, a captured
tensor or Variable, a loop or branch input), its chain of ops from that input with the
user's file:line of each, the statement that asked for the bool, and whether AutoGraph would
have converted that statement (an `if`/`while`/`assert`, `and`/`or`/`not`, `x if c else y`
on a tensor: yes; `bool(x)`, `x in [...]`, a comparison inside a Python call: no).
Invariant: explaining never raises; anything it cannot find it leaves out.
"""
import ast
import linecache
import sys

from ..errors import _is_library_file
from ..tensor import SymbolicTensor
from . import pipeline

_MAX_CHAIN = 8  # ops shown of the chain from the input to the value (the middle elided)


def _source_of(op):
    """What a Placeholder stands for: a tl.function argument, a capture, a body input."""
    graph = op.graph
    out = op.outputs[0]
    if any(p is out for p in getattr(graph, "arg_placeholders", ())):
        return f"argument '{op.name}' of tl.function '{graph.name}'"
    for value, placeholder in getattr(graph, "captures", ()):
        if placeholder is out:
            variable = op.attrs.get("_variable")
            if variable is not None and hasattr(variable, "name"):
                return f"the Variable '{variable.name}' (captured)"
            outer = getattr(value, "name", None)
            return f"a tensor captured from outside ({outer or 'an eager tensor'})" \
                if not isinstance(value, SymbolicTensor) else \
                f"the outer graph's {value.name} (captured)"
    return f"input '{op.name}' of the graph '{graph.name}'"


def _path_to_source(tensor):
    """The ops from a source (a Placeholder, preferably a tl.function argument; else the
    first op without inputs) to `tensor`'s op, in program order."""
    start = tensor.op
    parent = {id(start): None}
    order, queue = [], [start]
    best = None
    while queue:
        op = queue.pop(0)
        order.append(op)
        if op.type == "Placeholder":
            rank = 0 if any(p is op.outputs[0] for p in getattr(op.graph, "arg_placeholders", ())) \
                else 1
            if best is None or rank < best[0]:
                best = (rank, op)
            if rank == 0:
                break
            continue
        for t in op.inputs:
            src = getattr(t, "op", None)
            if src is not None and id(src) not in parent:
                parent[id(src)] = op
                queue.append(src)
    end = best[1] if best is not None else (order[-1] if order else start)
    chain, op = [], end
    while op is not None:
        chain.append(op)
        op = parent.get(id(op))
    return chain, best is not None


def _input_text(t):
    """An op input by name; a small constant with its value (`Const:0=2`)."""
    name = getattr(t, "name", "?")
    op = getattr(t, "op", None)
    value = op.attrs.get("value") if op is not None and op.type == "Const" else None
    if value is not None and getattr(value, "size", 99) <= 4:
        return f"{name}={value.tolist() if hasattr(value, 'tolist') else value!r}"
    return name


def _op_line(op):
    inputs = ", ".join(_input_text(t) for t in op.inputs)
    where = f"   at {op.location}" if getattr(op, "location", None) else ""
    return f"    {op.outputs[0].name if op.outputs else op.name} = {op.type}({inputs}){where}"


def _user_frame():
    frame = sys._getframe(2)
    while frame is not None and (_is_library_file(frame.f_code.co_filename)
                                 or frame.f_code.co_filename.startswith("<frozen")):
        frame = frame.f_back
    return frame


def _statement(frame):
    """(source line, what AutoGraph does with it: a phrase, converts: bool) of the frame's
    current statement."""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    if not line:
        return None, None, None
    text = "if" + line[4:] if line.startswith("elif") else line
    tree = None
    for candidate in (text + "\n    pass" if text.endswith(":") else text, text.rstrip(":")):
        try:
            tree = ast.parse(candidate)
            break
        except SyntaxError:
            continue
    if tree is None or not tree.body:
        return line, None, None
    stmt = tree.body[0]
    kinds = {ast.If: "an `if` on a tensor becomes tl.cond", ast.While:
             "a `while` on a tensor becomes tl.while_loop", ast.Assert:
             "an `assert` on a tensor becomes a graph Assert"}
    for kind, phrase in kinds.items():
        if isinstance(stmt, kind):
            return line, phrase, True
    for node in ast.walk(stmt):
        if isinstance(node, ast.BoolOp) or (isinstance(node, ast.UnaryOp) and
                                            isinstance(node.op, ast.Not)):
            return line, "`and`/`or`/`not` on tensors become tl.logical_and/or/not", True
        if isinstance(node, ast.IfExp):
            return line, "`x if c else y` on a tensor becomes tl.cond", True
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            return line, "a chained comparison on tensors becomes tl.logical_and", True
    return line, ("it is not a statement AutoGraph converts (a Python bool is asked for by "
                  "`bool()`, `in`, or a Python function)"), False


def _converted(frame):
    return frame.f_code in pipeline.GENERATED_CODES


def explain_bool(tensor):
    """The message of `bool(tensor)` on a symbolic tensor: value, origin, chain, statement."""
    lines = [f"Using the symbolic tensor {tensor.name} ({tensor.dtype.name}, shape "
             f"{tensor.shape}) as a Python bool is not allowed while tracing: it has no value "
             "until the graph runs."]
    try:
        chain, from_input = _path_to_source(tensor)
        if from_input:
            lines.append(f"  It comes from {_source_of(chain[0])}, through:")
        else:
            lines.append("  It is computed from constants (no graph input), through:")
        shown = chain if len(chain) <= _MAX_CHAIN else \
            chain[:_MAX_CHAIN // 2] + [None] + chain[-_MAX_CHAIN // 2:]
        lines += ["    ..." if op is None else _op_line(op) for op in shown]
        frame = _user_frame()
        if frame is not None:
            source, phrase, converts = _statement(frame)
            where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
            if source is not None:
                lines.append(f"  The statement at {where} asks for its truth value: {source}")
            if converts is None:
                pass
            elif _converted(frame):
                lines.append("  AutoGraph converted this function, but not this statement: "
                             f"{phrase}. Write it with tensor ops (tl.cond, tl.where, "
                             "tl.reduce_any...).")
            elif converts:
                lines.append(f"  AutoGraph would have converted it ({phrase}), but this code was "
                             "not converted: the tl.function has autograph=False, the function is "
                             "marked do_not_convert, or it is called from code AutoGraph leaves "
                             "alone. Keep autograph=True, or use tl.cond / tl.where.")
            else:
                lines.append(f"  AutoGraph would not convert it either: {phrase}. Use tensor ops "
                             "(tl.cond, tl.where, tl.reduce_any...).")
    except Exception:  # noqa: BLE001 -- the explanation must never hide the error itself
        lines.append("  Use tl.cond / tl.where, or keep autograph=True so that `if` on a tensor "
                     "becomes graph control flow.")
    return "\n".join(lines)


def _bool(self):
    raise TypeError(explain_bool(self))


SymbolicTensor.__bool__ = _bool
