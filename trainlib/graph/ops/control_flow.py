"""Control-flow ops: `If` and `While` with branch/body graphs; `tl.cond`, `tl.while_loop`.

Owns: tracing branch and loop-body functions into FuncGraphs nested in the
graph being traced, the matching of their inputs (captures of the enclosing
graph become op inputs, aligned across branches) and outputs (same
structure, same dtypes; Python scalars take the other branch's dtype), and
the loop-variable rules (dtype kept; shape kept unless `shape_invariants`
relaxes it). Eagerly both functions run as plain Python.
Invariants: an `If` op's inputs are [pred] + the captured values, and each
branch graph's `inputs` align with them; a `While` op's inputs are the loop
variables then the captured values, and `cond`/`body` take the same list.
"""
from .. import dtypes as _dt
from ..autodiff import GradientTape, variable_of_handle
from .. import nest
from ..nest import flatten, pack_as
from ..context import graph_scope, state
from ..exec.interpret import replay
from ..op import apply, convert_to_tensor, defop, set_gradient, spec
from ..tensor import SymbolicTensor, TensorShape, as_shape, is_tensor
from ..tracing import FuncGraph
from . import array as _array, math as _math


__all__ = ["cond", "while_loop"]


def _graph_kernel(xp, *args, **attrs):
    raise RuntimeError("If/While run only inside compiled graphs (graph/exec lowers them to "
                       "Python if/while); eagerly tl.cond and tl.while_loop run Python.")


def _if_infer(pred, *inputs, then_branch, else_branch):
    return tuple(spec(t.shape.most_specific_compatible_shape(e.shape), t.dtype)
                 for t, e in zip(then_branch.outputs, else_branch.outputs))


def _while_infer(*inputs, cond, body, maximum_iterations=None):
    return tuple(spec(p.shape, p.dtype) for p in body.inputs[:len(body.outputs)])


defop("If", infer=_if_infer, num_outputs=None, control="if",
      subgraphs=("then_branch", "else_branch"))(_graph_kernel)
defop("While", infer=_while_infer, num_outputs=None, control="while",
      subgraphs=("cond", "body"))(_graph_kernel)


def _new_graph(name):
    graph = FuncGraph(name, outer=state.graph)
    graph.allow_variable_creation = getattr(state.graph, "allow_variable_creation", True)
    return graph


def _is_symbolic(x):
    return isinstance(x, SymbolicTensor)


def cond(pred, true_fn=None, false_fn=None, name=None):
    """Returns `true_fn()` if `pred` is true, else `false_fn()`; a graph `If` op while tracing.

    Args:
        pred: a scalar bool tensor or Python bool.
        true_fn, false_fn: functions of no arguments returning the same structure
            of tensors (same dtypes).

    Returns:
        The result of the branch taken.

    Raises:
        ValueError/TypeError: if the branches return different structures or dtypes.

    Example:
        >>> tl.cond(tl.constant(1) > 0, lambda: 1.0, lambda: -1.0)
        <tl.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond needs callables true_fn and false_fn, got "
                        f"{type(true_fn).__name__} and {type(false_fn).__name__}")
    if not _is_symbolic(pred):
        return true_fn() if bool(pred) else false_fn()
    if pred.dtype is not _dt.bool or pred.shape.rank not in (0, None):
        raise TypeError(f"cond needs a scalar bool predicate, got shape {pred.shape} dtype {pred.dtype.name}")
    return build_if(pred, true_fn, false_fn)


def build_if(pred, true_fn, false_fn, join=None):
    """The graph `If` of `cond` for a symbolic `pred`, each branch traced once.

    `join(then_out, else_out)`, if given, runs after both branches are traced and
    returns what each branch gives the op (AutoGraph decides there what the
    branches carry, knowing both); the op returns the joined structure.
    """
    then_graph, then_out = _trace_branch("then", true_fn)
    else_graph, else_out = _trace_branch("else", false_fn)
    if join is not None:
        then_out, else_out = join(then_out, else_out)
    then_leaves, else_leaves = flatten(then_out), flatten(else_out)
    if len(then_leaves) != len(else_leaves) or _structure(then_out) != _structure(else_out):
        raise ValueError("true_fn and false_fn must return the same structure; got "
                         f"{_structure(then_out)!r} and {_structure(else_out)!r}")
    carried = [not (a is None and b is None) for a, b in zip(then_leaves, else_leaves)]
    _finish_outputs(then_graph, then_leaves, else_graph, else_leaves)
    captured = _align_captures([then_graph, else_graph])
    outputs = apply("If", pred, *captured, then_branch=then_graph, else_branch=else_graph)
    outputs = iter(outputs if isinstance(outputs, tuple) else () if outputs is None else (outputs,))
    # outputs that are None in both branches are not carried by the op: put the Nones back
    return pack_as(then_out, [next(outputs) if c else None for c in carried])


def _structure(value):
    """How a branch result nests, None leaves told apart (an If carries no None)."""
    return nest.structure_of(value, leaf=lambda v: "leaf" if v is not None else None)


def _trace_branch(name, fn):
    graph = _new_graph(name)
    with graph_scope(graph):
        out = fn()
    return graph, out


def _finish_outputs(g1, leaves1, g2, leaves2):
    """Turns branch results into graph outputs with matching dtypes (weak Python scalars follow)."""
    out1, out2 = [], []
    for i, (a, b) in enumerate(zip(leaves1, leaves2)):
        if a is None and b is None:
            continue
        if a is None or b is None:
            raise ValueError(f"output {i} is None in one branch only")
        dtype = a.dtype if _is_tensorish(a) else (b.dtype if _is_tensorish(b) else None)
        with graph_scope(g1):
            ta = apply("Identity", _to_tensor(a, dtype))
        with graph_scope(g2):
            tb = apply("Identity", _to_tensor(b, dtype))
        if ta.dtype is not tb.dtype:
            raise TypeError(f"output {i} of the two branches has different dtypes: {ta.dtype.name} in "
                            f"the true branch, {tb.dtype.name} in the false branch. Cast one of them.")
        out1.append(ta)
        out2.append(tb)
    g1.outputs, g2.outputs = out1, out2
    return out1, out2


def _is_tensorish(x):
    return is_tensor(x) or hasattr(x, "_array")


def _to_tensor(x, dtype):
    if is_tensor(x):
        return x
    return convert_to_tensor(x, dtype=None if hasattr(x, "_array") else dtype)


def _align_captures(graphs):
    """Gives every graph a placeholder for every captured value; returns those values in order.

    Each graph's `inputs` becomes (its own leading inputs) + one placeholder per
    captured value, aligned across graphs.
    """
    values, seen = [], {}
    for g in graphs:
        for value, _ in g.captures:
            if id(value) not in seen:
                seen[id(value)] = len(values)
                values.append(value)
    for g in graphs:
        own = {id(v): p for v, p in g.captures}
        placeholders = []
        for v in values:
            p = own.get(id(v))
            if p is None:
                with graph_scope(g):
                    p = g._capture(v)
            placeholders.append(p)
        g.inputs = list(getattr(g, "loop_placeholders", [])) + placeholders
    return values


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`; a graph `While` op while tracing.

    Args:
        cond: returns a scalar bool given the loop variables.
        body: returns new loop variables (same structure and dtypes).
        loop_vars: a tuple/list (or nested structure) of tensors.
        shape_invariants: shapes (None dims) the loop variables may take, in the
            structure of loop_vars; by default each keeps its shape.
        maximum_iterations: an upper bound on the number of iterations.

    Returns:
        The final loop variables, in the structure of `loop_vars`.

    Raises:
        TypeError/ValueError: if the body changes a variable's dtype or shape.

    Example:
        >>> tl.while_loop(lambda i: i < 10, lambda i: (i + 1,), (tl.constant(0),))
        (<tl.Tensor: shape=(), dtype=int32, numpy=10>,)
    """
    if not callable(cond) or not callable(body):
        raise TypeError(f"while_loop needs callables: 'cond' is {type(cond).__name__} and 'body' is "
                        f"{type(body).__name__}; pass functions of the loop variables")
    return build_while(cond, body, loop_vars, shape_invariants, maximum_iterations)


def build_while(cond, body, loop_vars, shape_invariants=None, maximum_iterations=None,
                leaf_names=None, where=None, write_only=None):
    """`while_loop` (a graph `While` op while tracing, cond and body traced once each).

    `leaf_names` names each tensor of `loop_vars` in error messages (by default `#k`)
    and `where` (file:line) says which loop they are about: AutoGraph passes the
    user's variable names and line.
    `write_only()`, if given, is called right after the body is traced (in its graph)
    and returns more tensors the body made: values no iteration reads back (AutoGraph's
    value returned from inside the loop, found by this one trace). Each becomes one
    more loop variable, zeros before the first iteration; the result is then
    (loop variables, list of their final values).
    """
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars
    leaves = flatten(structure)

    def call(fn, values):
        args = pack_as(structure, values)
        return fn(args[0]) if single else fn(*args)

    if state.graph is None:
        return _python_loop(cond, body, structure, leaves, single, maximum_iterations, call)
    if any(v is None for v in leaves):
        structure = _complete_composites(structure, leaves, call, body, single)
        leaves = flatten(structure)
    tensors = [convert_to_tensor(v) for v in leaves]
    invariants = flatten(shape_invariants) if shape_invariants is not None else [None] * len(tensors)
    invariants = [c if inv is None else inv
                  for inv, c in zip(invariants, _composite_invariants(structure))]
    names = list(leaf_names) if leaf_names is not None else _names(structure)
    at = f" (in the loop at {where})" if where else ""
    specs = [TensorShape(t.shape) if inv is None else as_shape(inv) for t, inv in zip(tensors, invariants)]

    cond_graph = _new_graph("while_cond")
    with graph_scope(cond_graph):
        cond_vars = [cond_graph.add_placeholder(s, t.dtype, f"loop_var_{i}") for i, (s, t) in enumerate(zip(specs, tensors))]
        cond_graph.loop_placeholders = cond_vars
        c = call(cond, cond_vars)
        c = convert_to_tensor(c)
        if c.dtype is not _dt.bool or c.shape.rank not in (0, None):
            raise TypeError(f"while_loop cond must return a scalar bool, got shape {c.shape} dtype "
                            f"{c.dtype.name}{at}")
        cond_graph.outputs = [apply("Identity", c)]

    body_graph = _new_graph("while_body")
    with graph_scope(body_graph):
        body_vars = [body_graph.add_placeholder(s, t.dtype, f"loop_var_{i}") for i, (s, t) in enumerate(zip(specs, tensors))]
        body_graph.loop_placeholders = body_vars
        new_leaves = _body_leaves(call(body, body_vars), single)
        if len(new_leaves) != len(tensors):
            raise ValueError(f"while_loop body returned {len(new_leaves)} values for {len(tensors)} "
                             f"loop variables{at}")
        outs = []
        for i, (v, old, s) in enumerate(zip(new_leaves, tensors, specs)):
            t = _to_tensor(v, old.dtype)
            if t.dtype is not old.dtype:
                raise TypeError(f"loop variable {names[i]} enters the loop as {old.dtype.name} and "
                                f"the body makes it {t.dtype.name}; a loop variable keeps its dtype. "
                                f"Cast it with tl.cast(..., tl.{old.dtype.name}).{at}")
            if not s.is_compatible_with(t.shape) or (s.rank is not None and t.shape.rank is None):
                error = ValueError(f"loop variable {names[i]} enters the loop with shape {s} and the "
                                   f"body makes it {t.shape}; a loop variable keeps its shape unless "
                                   f"relaxed with shape_invariants (e.g. None for the changing dim).{at}")
                error.loop_variable_changed_shape = names[i]  # for callers that relax and retry
                raise error
            outs.append(apply("Identity", t))
        late = [] if write_only is None else [_to_tensor(v, None) for v in write_only()]
        for t in late:
            if not t.shape.is_fully_defined():
                raise ValueError(f"a value the loop body makes has shape {t.shape}, which is not "
                                 f"fully known, so the loop cannot start it as zeros{at}; give it a "
                                 "value before the loop")
            outs.append(apply("Identity", t))
        body_graph.outputs = outs
    for t in late:  # unread placeholders: the loop carries these values out, never in
        for g in (cond_graph, body_graph):
            with graph_scope(g):
                g.loop_placeholders.append(g.add_placeholder(TensorShape(t.shape), t.dtype, "write_only"))

    captured = _align_captures([cond_graph, body_graph])
    attrs = {"cond": cond_graph, "body": body_graph}
    if maximum_iterations is not None:
        attrs["maximum_iterations"] = int(maximum_iterations)
    starts = [_array.zeros(t.shape.as_list(), dtype=t.dtype) for t in late]
    results = apply("While", *tensors, *starts, *captured, **attrs)
    results = list(results) if isinstance(results, tuple) else [results]
    results, late_results = results[:len(tensors)], results[len(tensors):]
    packed = pack_as(structure, results)
    packed = packed[0] if single else type(loop_vars)(packed) if isinstance(loop_vars, tuple) else packed
    return packed if write_only is None else (packed, late_results)


def _composite_invariants(structure):
    """Per leaf: the shape a composite loop variable asks to be carried with (the growing
    buffer of a dynamic TensorArray has an unknown first dim), else None."""
    out = []
    for s in nest.flatten(structure, nest.KEEP_COMPOSITES):
        has_invariants = hasattr(type(s), "_tl_shape_invariants")
        out.extend(s._tl_shape_invariants() if has_invariants else [None] * len(flatten(s)))
    return out


def probe(fn, values):
    """`fn(*values)` traced in a scratch graph that is then dropped, each tensor among
    `values` (leaves of nested structures too) replaced by a placeholder of its spec.

    What a loop needs to know before its real trace (the dtype a Python number takes in
    the body, the element shape a TensorArray gets) comes from this one extra trace.
    """
    scratch = _new_graph("while_probe")
    leaves = flatten(list(values))
    with graph_scope(scratch):
        stand_ins = [scratch.add_placeholder(TensorShape(v.shape), v.dtype, f"probe_{i}")
                     if is_tensor(v) or hasattr(v, "_array") else v for i, v in enumerate(leaves)]
        return fn(*pack_as(list(values), stand_ins))


def _complete_composites(structure, leaves, call, body, single):
    """Composite loop variables missing a tensor (a None leaf: a TensorArray of unknown element
    shape before its first write) learn it from one probe trace of the body
    (`_tl_complete(what the body made of it)`); the real loop is traced after."""
    out = probe(lambda *vs: call(body, list(vs)),
                [None if v is None else convert_to_tensor(v) for v in leaves])
    if single:
        out = [out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out]

    def complete(s, o):
        if hasattr(type(s), "_tl_complete"):
            done = s._tl_complete(o) if None in nest.components(s) else None
            return s if done is None else done
        if isinstance(s, dict):
            o = o if isinstance(o, dict) else {}
            return type(s)((key, complete(s[key], o.get(key))) for key in s)
        if isinstance(s, (list, tuple)):
            o = o if isinstance(o, (list, tuple)) and len(o) == len(s) else [None] * len(s)
            items = [complete(x, y) for x, y in zip(s, o)]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return s

    return complete(structure, out)


def _names(structure):
    return [f"#{i}" for i in range(len(flatten(structure)))]


def _body_leaves(new, single):
    """The body's results as leaves; a single loop variable may come back bare or in a 1-tuple."""
    if single or not isinstance(new, (list, tuple, dict)):
        if isinstance(new, (list, tuple)) and len(new) == 1:
            new = new[0]
        return flatten([new])
    return flatten(new)


def _python_loop(cond, body, structure, leaves, single, maximum_iterations, call):
    values = leaves
    i = 0
    while maximum_iterations is None or i < int(maximum_iterations):
        c = call(cond, values)
        if _is_symbolic(c):
            raise TypeError("while_loop cond returned a symbolic tensor for non-symbolic loop variables; "
                            "pass the values it depends on as loop variables")
        if not bool(c):
            break
        out = call(body, values)
        values = _body_leaves(out, single)
        if not single and isinstance(out, (list, tuple)):
            structure = out  # TensorFlow returns the body's structure (a tuple stays a tuple)
        i += 1
    # ...with its values as tensors, as TensorFlow converts them at the end of an eager loop
    values = [v if v is None or is_tensor(v) else convert_to_tensor(v) for v in values]
    packed = pack_as(structure, values)
    return packed[0] if single else (tuple(packed) if isinstance(structure, tuple) else packed)


# ------------------------------------------------------------------ gradients
# If and While are differentiated by re-running their branch/body graphs under
# a tape inside new If/While ops: the gradient graph never needs the forward
# op's intermediates, so it works for any nesting and for second order.
# While's gradient makes the forward loop save each iteration's variables (the
# forward op becomes a loop that also saves, see _become_saving_loop; a loop whose
# graphs change state is run again to save instead), then walks them back.
# A loop of n iterations costs O(n) both ways: see _Accumulator.

def _float(t):
    return t.dtype.is_floating or t.dtype.is_complex


def _differentiable(t):
    """Float tensors, and resource handles (their Variables get gradients)."""
    return _float(t) or t.dtype is _dt.resource


def _sources(inner):
    """What an inner tape differentiates: float inputs, and the Variables behind handles."""
    return [x if _float(x) else variable_of_handle(x) for x in inner if _differentiable(x)]


def _zeros_for(x):
    return _array.zeros_like(variable_of_handle(x).read_value() if x.dtype is _dt.resource else x)


def _tape_gradient(graph, inner, dys, picked):
    """Replays `graph` on `inner` under a tape; d(outputs[picked] . dys) / d(_sources(inner))."""
    sources = _sources(inner)
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(sources)
        outs = replay(graph, inner)
    outs = [outs[i] for i in picked]
    return tape.gradient(outs, sources, output_gradients=list(dys), unconnected_gradients="zero")


def _branch_gradient(graph, inputs, dys):
    inner = [apply("Identity", x) if x.dtype is not _dt.resource else x for x in inputs]
    picked = [i for i, o in enumerate(graph.outputs) if _float(o)]
    return _tape_gradient(graph, inner, [dys[i] for i in picked], picked)


def _if_grad(op, *dys):
    pred, *ins = op.inputs
    then_graph, else_graph = op.attrs["then_branch"], op.attrs["else_branch"]
    grads = cond(pred, lambda: _branch_gradient(then_graph, ins, dys),
                 lambda: _branch_gradient(else_graph, ins, dys))
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    it = iter(grads)
    return (None,) + tuple(next(it) if _differentiable(x) else None for x in ins)


# The forward loop of a While gradient saves each iteration's loop variables in accumulator
# buffers, one row per iteration, written with TensorArrayWrite: the loop owns them, so codegen
# writes them in place, and they grow geometrically (or start at `maximum_iterations` rows), so
# n iterations cost O(n) to save and O(n) to walk back. What a variable needs saved depends on
# how the body uses it (see _save_kind).
_PREALLOCATE_ELEMENTS = 1 << 20  # start at maximum_iterations rows when that many elements fit


def _consumers(graph, t):
    return [o for o in graph.operations if any(x is t for x in o.inputs)]


def _reaches_float(graph, t):
    """True if a float (or resource) value of `graph` is computed from `t`."""
    reached, found = {id(t)}, False
    for o in graph.operations:  # in program order: inputs come before the ops that use them
        if any(id(x) in reached for x in o.inputs):
            reached.update(id(y) for y in o.outputs)
            found = found or any(_differentiable(y) for y in o.outputs)
    return found


def _save_kind(k, init, cond_graph, body_graph):
    """How the forward loop saves loop variable k for the backward loop:

    "same"  the body passes it through unchanged, or it is not a float and no float value of
            the body depends on it: the value that entered the loop serves;
    "shape" the body only writes into it (a TensorArray buffer) and the test does not read it:
            its values never reach a gradient, only its shape (a zeros buffer stands in);
    "rows"  its shape is the same in every iteration: one row per iteration;
    "flat"  its shape changes (a growing buffer that is also read): flattened, with its
            shape and offset per iteration.
    """
    place, out = body_graph.inputs[k], body_graph.outputs[k]
    if out.op.type == "Identity" and out.op.inputs[0] is place:
        return "same"
    if not _float(init) and not _reaches_float(body_graph, place):
        return "same"  # (a loop counter) no gradient depends on its value: any valid one serves
    users = _consumers(body_graph, place)
    cond_place = cond_graph.inputs[k]
    if users and all(o.type == "TensorArrayWrite" and o.inputs[0] is place and
                     not any(x is place for x in o.inputs[1:]) for o in users) and \
            not _consumers(cond_graph, cond_place) and \
            not any(t is cond_place for t in cond_graph.outputs):
        return "shape"
    if place.shape.rank is not None and TensorShape(place.shape) != TensorShape(init.shape):
        return "flat"
    return "rows"


class _Accumulator:
    """The saved iterations of one loop variable: buffers written by the forward loop (state),
    read back by the backward loop (`value(j)`)."""

    def __init__(self, kind, init, place, limit):
        self.kind, self.init, self.dtype = kind, init, init.dtype
        rank = place.shape.rank
        self.static = kind == "shape" and place.shape.is_fully_defined()
        self.static_shape = TensorShape(place.shape).as_list() if self.static else None
        shape = TensorShape(init.shape)
        if kind == "same" or self.static:
            self.state, self.invariants = [], []
        elif kind == "rows":
            rows = 0
            if limit is not None and shape.is_fully_defined() and \
                    limit * max(shape.num_elements(), 1) <= _PREALLOCATE_ELEMENTS:
                rows = limit  # the loop never runs longer: no growth at all
            buffer = _array.zeros([rows] + shape.as_list(), dtype=init.dtype) \
                if shape.is_fully_defined() else _array.expand_dims(init, 0)[:0]
            self.state = [buffer]
            # preallocated, it keeps its rows (a static shape: the executor may keep its
            # memory between calls); else it grows
            self.invariants = [TensorShape([rows or None]).concatenate(place.shape)]
        else:  # per iteration its shape; "flat" also its values, flattened, and their offset
            self.state = [_array.zeros([0, rank], dtype=_dt.int32)]
            self.invariants = [TensorShape([None, rank])]
            if kind == "flat":
                self.state += [_array.zeros([0], dtype=init.dtype), _array.zeros([0], dtype=_dt.int32),
                               convert_to_tensor(0)]
                self.invariants += [TensorShape([None]), TensorShape([None]), TensorShape([])]

    def push(self, i, value, state):
        """The state after saving `value` as iteration `i`."""
        if not state:
            return []
        if self.kind == "rows":
            return [_write(state[0], i, value)]
        shape = _array.shape(value)
        shapes = _write(state[0], i, shape)
        if self.kind == "shape":
            return [shapes]
        _, flat, offsets, offset = state
        size = _math.reduce_prod(shape)
        flat = _write(flat, _array.range(offset, offset + size), _array.reshape(value, [-1]))
        return [shapes, flat, _write(offsets, i, offset), offset + size]

    def value(self, j, state):
        """Iteration j's value, from the state the forward loop ended with."""
        if self.kind == "same":
            return self.init
        if self.static:
            return _array.zeros(self.static_shape, dtype=self.dtype)
        if self.kind == "rows":
            return _array.gather(state[0], j)
        shape = _array.gather(state[0], j)
        if self.kind == "shape":
            return _array.zeros(shape, dtype=self.dtype)
        _, flat, offsets, _ = state
        start = _array.reshape(_array.gather(offsets, j), [1])
        size = _array.reshape(_math.reduce_prod(shape), [1])
        return _array.reshape(_array.slice(flat, start, size), shape)


def _write(buffer, index, value):
    return apply("TensorArrayWrite", buffer, index, value, geometric=True)


def _while_grad(op, *dys):
    n_vars = len(op.outputs)
    init, captured = list(op.inputs[:n_vars]), list(op.inputs[n_vars:])
    cond_graph, body_graph = op.attrs["cond"], op.attrs["body"]
    limit = op.attrs.get("maximum_iterations")
    floats = [i for i, t in enumerate(init) if _float(t)]
    places = body_graph.inputs[:n_vars]
    graph, mark = state.graph, len(state.graph.operations)  # the saving loop's ops start here
    accs = [_Accumulator(_save_kind(k, init[k], cond_graph, body_graph), init[k], places[k], limit)
            for k in range(n_vars)]
    sizes = [len(a.state) for a in accs]

    def split(flat):
        out, at = [], 0
        for n in sizes:
            out.append(list(flat[at:at + n]))
            at += n
        return out

    # 1. the forward loop, saving every iteration's loop variables: (*vars, counter, *saved)
    def fwd_cond(*state):
        c = replay(cond_graph, list(state[:n_vars]) + captured)[0]
        if limit is not None:
            c = _math.logical_and(c, _math.less(state[n_vars], limit))
        return c

    def fwd_body(*state):
        vars_, i, saved = list(state[:n_vars]), state[n_vars], split(state[n_vars + 1:])
        saved = [x for a, v, s in zip(accs, vars_, saved) for x in a.push(i, v, s)]
        new = replay(body_graph, vars_ + captured)
        return (*new, i + 1, *saved)

    shape_inv = [TensorShape(t.shape) for t in places] + [TensorShape([])] + \
        [s for a in accs for s in a.invariants]
    result = while_loop(fwd_cond, fwd_body, (*init, convert_to_tensor(0), *[s for a in accs for s in a.state]),
                        shape_invariants=shape_inv)
    result = _become_saving_loop(op, result[0].op, graph, mark)
    count, final = result[n_vars], split(result[n_vars + 1:])

    # 2. walk back: for iteration j = count-1 .. 0, replay the body on its saved variables
    caps_diff = [c for c in captured if _differentiable(c)]
    carried = [dys[i] for i in floats]
    d_caps = [_zeros_for(c) for c in caps_diff]

    def bwd_cond(j, *acc):
        return _math.greater_equal(j, 0)

    def bwd_body(j, *acc):
        dv, dc = list(acc[:len(floats)]), list(acc[len(floats):])
        inner = [apply("Identity", a.value(j, s)) for a, s in zip(accs, final)]
        caps = [apply("Identity", c) if c.dtype is not _dt.resource else c for c in captured]
        # sources: the float loop variables, then the differentiable captures
        g = _tape_gradient(body_graph, inner + caps, dv, floats)
        return (j - 1, *g[:len(floats)], *[a + b for a, b in zip(dc, g[len(floats):])])

    back_inv = [TensorShape([])] + [TensorShape(places[i].shape) if accs[i].kind in ("flat", "shape")
                                    else None for i in floats] + [None] * len(d_caps)
    back = while_loop(bwd_cond, bwd_body, (count - 1, *carried, *d_caps), shape_invariants=back_inv)
    d_init = list(back[1:1 + len(floats)])
    d_cap = list(back[1 + len(floats):])
    # the gradients of the op's inputs (the saving loop's, if the op became it)
    by_value = {id(c): g for c, g in zip(caps_diff, d_cap)}
    grads = [None] * len(op.inputs)
    for k, i in enumerate(floats):
        grads[i] = d_init[k]
    for k, x in enumerate(op.inputs[n_vars:]):
        grads[n_vars + k] = by_value.get(id(x))
    return tuple(grads)


def _become_saving_loop(op, saving, graph, mark):
    """Makes the forward While `op` the loop that also saves its iterations (`saving`, built
    from ops appended to `graph` from index `mark` on), so the loop runs once, not twice:
    `op` takes `saving`'s inputs, graphs and extra outputs, the ops that make its
    starting buffers move before it, and `saving` leaves the graph. Returns the outputs
    of the loop that now runs, in `saving`'s order.

    Only for an op of this graph whose graphs change no state (a write or a print would
    not be replayed) and that did not become one already (a second gradient of it, as
    of a persistent tape or of second order, differentiates it as the While it now is).
    """
    n_vars = len(op.outputs)
    window = graph.operations[mark:]
    if op.attrs.get("_saves_iterations") or op.graph is not graph or op.stateful or \
            op not in graph.operations[:mark] or not window or window[-1] is not saving:
        return list(saving.outputs)
    graph.operations[mark:] = []
    at = graph.operations.index(op)
    graph.operations[at:at] = window[:-1]
    op.inputs, op.attrs = list(saving.inputs), dict(saving.attrs, _saves_iterations=True)
    for t in saving.outputs[n_vars:]:
        t.op = op
        op.outputs.append(t)
    # a tape that recorded `saving` must not differentiate it: its outputs are op's now
    # (the starting buffers it moved carry no gradient: zeros, or an empty slice)
    del saving.outputs[n_vars:]
    return list(op.outputs)


set_gradient("If", _if_grad)
set_gradient("While", _while_grad)
