"""`tl.function`: Function (a polymorphic cache of traces) and ConcreteFunction (one graph).

Owns: cache keys from call arguments (tensors by dtype and shape, Python
values by value, containers by structure, Variables and other objects by
identity), tracing on a miss (placeholders for tensors, AutoGraph conversion,
the Variable-creation policy), why each retrace happened, the bounded LRU
cache, `input_signature` and `reduce_retracing`, and calling a compiled graph.
Invariants: Python side effects run only while tracing; a cache hit runs only
the generated code; a Function called while another is tracing is inlined.
Threads: a miss takes the Function's trace lock and looks again before it
traces, so threads racing on a new signature trace it once; calls of a traced
graph take no lock (a generated program keeps no state between calls).
"""
import collections
import functools
import inspect
import warnings
import weakref

import numpy

from . import dtypes as _dt, nest
from .autodiff import recording
from .nest import flatten, pack_as
from .backend import transfer
from .calls import GraphFunction, optimized_copy
from .context import LockOwner, fork_safe_lock, graph_scope, process, state
from .errors import InvalidArgumentError, OpError
from .exec import native as _native
from .exec.program import CompiledFunction
from .op import apply, convert_to_tensor
from .properties import read_only
from .tensor import SymbolicTensor, Tensor, TensorShape, TensorSpec, is_tensor
from .trace_key import SIGNATURE, describe, is_array_like, key_of, relax_args
from .tracing import FuncGraph
from .variables import Variable

MAX_TRACES = 64          # LRU bound of one Function's cache
TRACE_LISTENERS = []     # callables told of each new trace (tl.summary.trace_on's collector)
_NOT_RECORDED = object()  # a call no active tape records: it takes the plain path
RETRACE_WARNING_AT = 5   # warn when a Function has traced this many times


class _Counts:
    """Holds the lock of every Function's trace count (held only to count, never to trace)."""


_COUNTS = _Counts()
_COUNTS._lock = fork_safe_lock(_COUNTS)


def _leaf_type_text(value):
    if isinstance(value, TensorSpec):
        return repr(value)
    if isinstance(value, (Tensor, SymbolicTensor)):
        return repr(TensorSpec(value.shape, value.dtype))
    if isinstance(value, (bool, int, float, str, type(None))):
        return f"Literal[{value!r}]"
    if isinstance(value, Variable):
        return f"{value!r}"
    if hasattr(type(value), "_tl_type_spec"):
        return repr(value._tl_type_spec())
    return type(value).__name__


def _container_type_text(container, children):
    if isinstance(children, dict):
        return "Dict[" + ", ".join(f"[{k!r}, {v}]" for k, v in children.items()) + "]"
    return ("List[" if isinstance(container, list) else "Tuple[") + ", ".join(children) + "]"


def _type_text(value, leaf=_leaf_type_text):
    """The guide's pretty-printed type of one argument (`leaf` renders its leaves)."""
    return nest.fold(value, leaf, _container_type_text)


def _map_args(structure, fn, args):
    """`args` with `fn(spec, value)` applied where `structure` (one entry per argument) has its
    leaves; arguments that do not nest as the structure are left as they are."""
    if len(args) != len(structure):
        return args
    return nest.map_structure_up_to(tuple(structure), fn, tuple(args),
                                    on_mismatch=lambda s, value: value)


# ------------------------------------------------------------------ Function

class Function(LockOwner):
    """A Python function compiled to graphs, one per input signature (see `tl.function`)."""

    def __init__(self, python_function, input_signature=None, autograph=True, jit_compile=False,
                 reduce_retracing=False, name=None, experimental_attributes=None):
        self._python_function = python_function
        self._input_signature = None if input_signature is None else tuple(input_signature)
        self._autograph = autograph
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._name = name or getattr(python_function, "__name__", "function")
        self._signature = inspect.signature(python_function)
        self._positional = [p for p in self._signature.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._simple = all(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                           for p in self._signature.parameters.values())
        self._cache = collections.OrderedDict()
        self._relaxed = []            # ConcreteFunctions with None dims (reduce_retracing)
        self._tracing_count = 0
        self._retrace_reasons = []
        self._keys = []               # keys traced, in order (for reasons)
        self._inlined_keys = set()    # signatures seen inlined into other Functions' traces
        self._converted = None
        self._variables_created = False
        self._instances = weakref.WeakKeyDictionary()
        self._warned = False
        # held while tracing (reentrant: a trace may ask for its own concrete functions), never
        # while running a traced graph
        self._lock = fork_safe_lock(self, reentrant=True)
        functools.update_wrapper(self, python_function)

    # -- public API
    python_function = read_only("_python_function", "The original Python function.")
    input_signature = read_only(
        "_input_signature", "The `input_signature` given (a tuple of TensorSpecs), or None.")

    def experimental_get_tracing_count(self):
        """How many times this Function has traced."""
        return self._tracing_count

    def experimental_retrace_reasons(self):
        """Why each trace after the first happened: a list of strings naming the argument,
        what it was, and what it is now."""
        return list(self._retrace_reasons)

    def __get__(self, instance, owner):
        if instance is None:
            return self
        bound = self._instances.get(instance)
        if bound is None:
            with self._lock:  # one bound Function (one cache) per instance, whatever the threads
                bound = self._instances.get(instance)
                if bound is None:
                    bound = self._bind_instance(instance, owner)
        return bound

    def _bind_instance(self, instance, owner):
        method = self._python_function.__get__(instance, owner)
        bound = Function(method, self._input_signature, self._autograph, self._jit_compile,
                         self._reduce_retracing, self._name)
        bound._original_method = self._python_function
        try:
            self._instances[instance] = bound
        except TypeError:  # instance not weak-referenceable: no per-instance cache
            pass
        return bound

    def __call__(self, *args, **kwargs):
        if process.run_eagerly:
            return self._python_function(*args, **kwargs)
        here = state.__dict__  # this thread's state, read once (see op.apply)
        if here["graph"] is not None:  # called while another Function traces: inline
            self._count_inlined(args, kwargs)
            return self._converted_function()(*args, **kwargs)
        device = here["device"]
        if not kwargs and self._input_signature is None and device == "cpu":
            # the hot path: a cache hit on positional arguments
            concrete = self._cache.get(tuple(map(key_of, args)))
            if concrete is not None and concrete._arity == len(args):
                return concrete._call_structured(args)
        args = self._canonical_args(args, kwargs)
        if self._input_signature is not None:
            args = self._signature_args(args)
            concrete = self._signature_concrete(args)
        else:
            key = tuple(map(key_of, args))
            if device != "cpu":  # a graph is compiled for one device's array module
                key += (device,)
            concrete = self._cache.get(key)
            if concrete is None:
                concrete = self._lookup_or_trace(args, key)
            elif len(self._cache) > 1:
                with self._lock:  # the LRU order; another thread may be evicting
                    if key in self._cache:
                        self._cache.move_to_end(key)
        out = concrete._call_structured(args)
        _native.call_returned()   # a jit region's numba import may start now (not per hot call)
        return out

    def _lookup_or_trace(self, args, key):
        """The cached or relaxed trace for `key`, else a new one; one thread traces at a time,
        and a thread that waited finds the trace the one before it made."""
        with self._lock:
            concrete = self._cache.get(key)
            return concrete if concrete is not None else \
                self._lookup_relaxed(args) or self._trace(args, key)

    def _count_inlined(self, args, kwargs):
        """Counts an inlined call as a trace when its signature is new here, as TensorFlow traces
        a Function called inside another once per signature (experimental_get_tracing_count)."""
        try:
            key = tuple(map(key_of, self._canonical_args(args, kwargs)))
        except TypeError:  # unhashable arguments: no count
            return
        with _COUNTS._lock:  # not the trace lock: f inlined in g's trace while g is inlined in f's
            if key in self._inlined_keys or key in self._cache:
                return
            self._inlined_keys.add(key)
            self._tracing_count += 1

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments (values or TensorSpecs), tracing if needed."""
        if not args and not kwargs and self._input_signature is not None:
            args = self._input_signature
        args = self._canonical_args(args, kwargs)
        if self._input_signature is not None:
            return self._signature_concrete(args)
        key = tuple(map(key_of, args))
        if state.device != "cpu":
            key += (state.device,)
        return self._lookup_or_trace(args, key)

    def pretty_printed_concrete_signatures(self, verbose=True):
        """Every traced signature, in the guide's format (Input Parameters, Output Type, Captures)."""
        return "\n\n".join(c.pretty_printed_signature(verbose) for c in self._concrete_functions())

    def _concrete_functions(self):
        seen, out = set(), []
        for c in list(self._cache.values()) + self._relaxed:
            if id(c) not in seen:
                seen.add(id(c))
                out.append(c)
        return sorted(out, key=lambda c: getattr(c, "_trace_index", 0))  # in trace order, as TF

    def __repr__(self):
        return f"<tl.function {self._name}>"

    # -- arguments
    def _canonical_args(self, args, kwargs):
        if not kwargs and self._simple and len(args) == len(self._positional):
            return args
        return canonical_args(self._signature, args, kwargs, self._name)

    def _call_python(self, fn, args):
        """Calls `fn` with canonical args mapped back to positional/keyword form."""
        params = list(self._signature.parameters.values())
        pos, kw, i = [], {}, 0
        for p in params:
            if p.kind is p.VAR_POSITIONAL:
                n = len(args) - (len(params) - 1)  # every other parameter holds one slot
                pos.extend(args[i:i + n])
                i += n
            elif p.kind is p.VAR_KEYWORD:
                kw.update(args[i])
                i += 1
            elif p.kind is p.KEYWORD_ONLY:
                kw[p.name] = args[i]
                i += 1
            else:
                pos.append(args[i])
                i += 1
        return fn(*pos, **kw)

    def _signature_args(self, args):
        """`args` with Python values and numpy arrays in TensorSpec places converted to tensors of
        the spec's dtype, as TensorFlow converts them (a mismatch is left for the check)."""
        def convert(s, value):
            if isinstance(s, TensorSpec) and not (is_tensor(value) or value is None):
                try:
                    return convert_to_tensor(value, dtype=s.dtype)
                except (TypeError, ValueError, OpError):
                    return value
            return value
        return _map_args(self._input_signature, convert, args)

    def _signature_concrete(self, args):
        specs = self._input_signature
        leaves = flatten(list(args))
        spec_leaves = flatten(list(specs))
        ok = len(leaves) == len(spec_leaves)
        if ok:
            for value, s in zip(leaves, spec_leaves):
                if isinstance(s, TensorSpec):
                    t = value if isinstance(value, (Tensor, TensorSpec)) else None
                    if t is None:
                        try:
                            t = convert_to_tensor(value, dtype=s.dtype)
                        except (TypeError, ValueError, OpError):
                            ok = False
                            break
                    if not s.is_compatible_with(t):
                        ok = False
                        break
        if not ok:
            raise TypeError(
                f"{self._name}: the arguments {_describe_args(args)} do not match the "
                f"input_signature {list(specs)}. Pass values of those dtypes and compatible shapes.")
        key = SIGNATURE
        concrete = self._cache.get(key)
        if concrete is None:
            concrete = self._lookup_or_trace(tuple(specs), key)
        return concrete

    def _lookup_relaxed(self, args):
        for c in self._relaxed:
            if c._matches(args):
                return c
        return None

    # -- tracing
    def _converted_function(self):
        if self._converted is None:
            fn = self._python_function
            if self._autograph:
                from . import autograph  # noqa: PLC0415 -- AutoGraph sits above tracing
                fn = autograph.convert(fn)
            self._converted = fn
        return self._converted

    def _trace(self, args, key):
        if self._tracing_count and key != SIGNATURE:
            reason = self._retrace_reason(key)
            self._retrace_reasons.append(reason)
            if self._tracing_count + 1 >= RETRACE_WARNING_AT and not self._warned:
                self._warned = True
                warnings.warn(
                    f"tl.function {self._name!r} has traced {self._tracing_count + 1} times; "
                    f"tracing is expensive. Latest reason: {reason}. Pass tensors rather than Python "
                    "values that change, use input_signature, or reduce_retracing=True.",
                    stacklevel=4)  # the user's call, above __call__ and _lookup_or_trace
        relax = self._reduce_retracing and self._keys and key != SIGNATURE
        trace_args = relax_args(args, key, self._keys) if relax else args
        trace_args = nest.type_spec_form(trace_args)  # a ragged argument traces by its spec
        concrete = ConcreteFunction.trace(self, trace_args, allow_variables=not self._tracing_count)
        with _COUNTS._lock:
            self._tracing_count += 1
        if concrete.created_variables:
            # as TensorFlow: a first trace that created Variables is traced again with creation
            # forbidden, so a function that creates them on every call fails now (the check
            # trace is thrown away: the first one, with the Variables captured, is compiled)
            self._trace_without_new_variables(trace_args)
            with _COUNTS._lock:
                self._tracing_count += 1
        concrete._trace_index = self._tracing_count
        for listener in TRACE_LISTENERS:
            listener(concrete)
        self._keys.append(key)
        if relax and concrete._has_unknown_dims():
            self._relaxed.append(concrete)
        else:
            self._cache[key] = concrete
            if len(self._cache) > MAX_TRACES:
                self._cache.popitem(last=False)
        return concrete

    def _trace_without_new_variables(self, args):
        graph = FuncGraph(self._name)
        graph.allow_variable_creation = False
        names = _flat_arg_names(list(self._signature.parameters.values()), args)
        with graph_scope(graph):
            self._call_python(self._converted_function(), _placeholders(graph, args, names))

    def _retrace_reason(self, key):
        names = [p.name for p in self._signature.parameters.values()]
        best, best_diff = None, None
        for old in reversed(self._keys):  # the most recent of equally close traces
            if old == SIGNATURE or len(old) != len(key):
                continue
            diff = [i for i, (a, b) in enumerate(zip(old, key)) if a != b]
            if best_diff is None or len(diff) < len(best_diff):
                best, best_diff = old, diff
        if best is None:
            return "a call with a different number of arguments"
        parts = []
        for i in best_diff:
            name = names[i] if i < len(names) else f"argument {i}"
            parts.append(f"argument {name!r} was {describe(best[i])}, now {describe(key[i])}")
        return "; ".join(parts) or "the arguments changed"


def _describe_args(args):
    return "(" + ", ".join(_type_text(a) for a in args) + ")"


def canonical_args(signature, args, kwargs, name):
    """The arguments of a call in canonical order: one entry per parameter of `signature`
    (an inspect.Signature), defaults filled in, `*args` spread, `**kwargs` as one dict.
    A call that does not fit is a TypeError naming function `name`."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None
    bound.apply_defaults()
    out = []
    for pname, p in signature.parameters.items():
        value = bound.arguments.get(pname)
        if p.kind is p.VAR_POSITIONAL:
            out.extend(value or ())
        elif p.kind is p.VAR_KEYWORD:
            out.append(dict(value or {}))
        else:
            out.append(value)
    return tuple(out)


# ------------------------------------------------------------------ ConcreteFunction

class ConcreteFunction(CompiledFunction):
    """One traced graph of a Function, compiled to Python; callable with tensors.

    Attributes:
        graph: the FuncGraph as traced (what the Python code built, loops unrolled, as
            TensorFlow's `ConcreteFunction.graph`).
        optimized_graph: the copy of `graph` the optimization passes rewrote, which runs.
        inputs / outputs: the graph's placeholders and output tensors.
        python_source: the generated code that runs it.
        pass_report: (pass, ops before, ops after) for each optimization pass.
    """

    def __init__(self, function, graph, arg_structure, output_structure, arg_names):
        self._function = function
        self.graph = graph
        self._arg_structure = arg_structure      # args with tensors replaced by TensorSpecs
        self._output_structure = output_structure
        self._arg_names = arg_names
        self._n_args = len(graph.arg_placeholders)
        self.pass_report = []
        self.optimized_graph = None
        self._callable = None
        self._simple_output = None
        self._dict_output = None
        self._arity = len(arg_structure)  # positional arguments after canonicalization
        self._tensor_args_only = all(isinstance(a, TensorSpec) for a in arg_structure)

    @classmethod
    def trace(cls, function, args, allow_variables=True):
        graph = FuncGraph(function._name)
        graph.allow_variable_creation = allow_variables
        params = list(function._signature.parameters.values())
        arg_names = _flat_arg_names(params, args)
        with graph_scope(graph):
            placeholder_args = _placeholders(graph, args, arg_names)
            fn = function._converted_function()
            outputs = function._call_python(fn, placeholder_args)
            leaves = flatten(outputs)
            out_tensors = []
            structure_leaves = []
            for leaf in leaves:
                if leaf is None:
                    structure_leaves.append(None)
                    continue
                t = _output_tensor(leaf)
                if isinstance(t, SymbolicTensor) and t.op.graph is not graph:
                    raise ValueError(f"{function._name} returned a tensor of another graph")
                if isinstance(t, SymbolicTensor) and not isinstance(leaf, Tensor):
                    t = apply("Identity", t)  # every output an Identity, as TensorFlow's graphs
                out_tensors.append(t)
                structure_leaves.append(_OutputSlot(len(out_tensors) - 1))
        graph.outputs = out_tensors
        graph.inputs = list(graph.arg_placeholders) + [p for _, p in graph.captures]
        arg_structure = _spec_structure(args)
        output_structure = pack_as(outputs, structure_leaves) if leaves else outputs
        concrete = cls(function, graph, arg_structure, output_structure, arg_names)
        concrete.created_variables = bool(graph.created_variables)
        concrete._finish()
        return concrete

    def _finish(self):
        self.optimized_graph = optimized_copy(
            self.graph, options={"jit_compile": bool(self._function._jit_compile)},
            report=self.pass_report)
        self._compile(self.optimized_graph, self._function._name,
                      [_capture_feed(v) for v, _ in self.optimized_graph.captures], state.xp)
        s = self._output_structure
        self._simple_output = isinstance(s, _OutputSlot)
        # a flat dict of outputs (a train step's logs): {key: index}, filled without pack_as
        self._dict_output = {k: v.index for k, v in s.items()} if type(s) is dict and \
            all(isinstance(v, _OutputSlot) for v in s.values()) else None

    @property
    def captured_inputs(self):
        return [v for v, _ in self.graph.captures]

    @property
    def structured_outputs(self):
        return pack_as(self._output_structure, [None if s is None else self.graph.outputs[s.index]
                                                for s in flatten(self._output_structure)]) \
            if not isinstance(self._output_structure, _OutputSlot) else self.graph.outputs[0]

    name = read_only("_function._name", "The name of the Function it was traced from.")

    def _has_unknown_dims(self):
        return any(not p.shape.is_fully_defined() for p in self.graph.arg_placeholders)

    def _matches(self, args):
        specs = flatten(list(self._arg_structure))
        values = flatten(list(args))
        if len(specs) != len(values):
            return False
        for s, v in zip(specs, values):
            if isinstance(s, TensorSpec):
                if is_array_like(v):
                    v = TensorSpec(TensorShape(v.shape), _dt.from_numpy(v.dtype))
                if not isinstance(v, (Tensor, TensorSpec)) or not s.is_compatible_with(v):
                    return False
            elif key_of(s) != key_of(v):
                return False
        return True

    # -- calling
    def __call__(self, *args, **kwargs):
        args = self._function._canonical_args(args, kwargs) if kwargs or \
            len(args) != len(self._arg_structure) else args
        return self._call_structured(self._bind(args))

    def _bind(self, args):
        """`args` checked against this trace's specs, as TensorFlow binds a ConcreteFunction's
        inputs: a tensor of another dtype is an InvalidArgumentError; Python values and numpy
        arrays convert to the spec's dtype and must fit its shape (TypeError)."""
        def bind(s, value):
            if isinstance(s, TensorSpec):
                if is_tensor(value):
                    if value.dtype is not s.dtype:
                        raise InvalidArgumentError(
                            f"{self.name}: input expected a {s.dtype.name} tensor but got a "
                            f"{value.dtype.name} tensor ({value!r})")
                    return value
                if isinstance(value, Variable) or value is None:
                    return value
                try:
                    t = convert_to_tensor(value, dtype=s.dtype)
                except (TypeError, ValueError, OpError) as e:
                    raise TypeError(f"{self.name}: cannot bind {value!r} to {s!r}: {e}") from None
                if not s.shape.is_compatible_with(t.shape):
                    raise TypeError(f"{self.name}: cannot bind {value!r} (shape {t.shape}) to {s!r}")
                return t
            return value
        return _map_args(self._arg_structure, bind, args)

    def _graph_function(self):
        """This trace as a GraphFunction: what a differentiable call op runs."""
        if self._callable is None:
            # the plain Program, never a profiled one (which would go on recording)
            self._callable = GraphFunction(self.graph, self.name, program=self._plain_program)
        return self._callable

    def _call_recorded(self, args):
        """The call as one op that active tapes record (as TensorFlow's PartitionedCall), its
        gradient built from this trace's graph; _NOT_RECORDED when no tape would record it."""
        tensors = []
        for a in args:
            if not isinstance(a, (bool, int, float, str, type(None))):
                _flat_feeds(a, tensors, as_tensors=True)
        if len(tensors) != self._n_args:
            raise TypeError(f"{self.name}: expected {self._n_args} tensor arguments, got {len(tensors)}")
        if not recording(tensors + self.captured_inputs):
            return _NOT_RECORDED
        results = list(self._graph_function().call(tensors))
        if self._simple_output:
            return results[0]
        return _fill_outputs(self._output_structure, results)

    def _call_structured(self, args):
        if state.tapes:
            recorded = self._call_recorded(args)
            if recorded is not _NOT_RECORDED:
                return recorded
        feeds = None
        if self._tensor_args_only:
            try:
                feeds = [a._value for a in args]
            except AttributeError:  # numpy arrays in the place of tensors
                feeds = None
        if feeds is None:
            feeds = []
            for a in args:
                if type(a) is Tensor:
                    feeds.append(a._value)
                elif isinstance(a, (bool, int, float, str, type(None))):
                    continue
                else:
                    _flat_feeds(a, feeds)
        if len(feeds) != self._n_args:
            raise TypeError(f"{self.name}: expected {self._n_args} tensor arguments, got {len(feeds)}")
        feeds += self._capture_feeds
        try:  # CompiledFunction._run, inlined: this is the hot path of every call
            results = self._fn(*feeds)
        except Exception as e:
            self._reraise(e)
        dtypes = self._out_dtypes
        if self._simple_output:
            return Tensor(results[0], dtypes[0])
        tensors = [Tensor(r, d) for r, d in zip(results, dtypes)]
        if self._dict_output is not None:
            return {k: tensors[i] for k, i in self._dict_output.items()}
        return _fill_outputs(self._output_structure, tensors)

    def pretty_printed_signature(self, verbose=True):
        """`Input Parameters:` / `Output Type:` / `Captures:` as TensorFlow prints them."""
        lines = ["Input Parameters:"]
        params = list(self._function._signature.parameters.values())
        # as TensorFlow: *args spread into name_0, name_1...; with *args every positional
        # parameter is POSITIONAL_ONLY; **kwargs entries are KEYWORD_ONLY parameters
        args, i = self._arg_structure, 0
        spread = any(p.kind is p.VAR_POSITIONAL for p in params)
        for p in params:
            if i >= len(args):
                break
            if p.kind is p.VAR_POSITIONAL:
                n = len(args) - (len(params) - 1)
                lines += [f"  {p.name}_{j} (POSITIONAL_ONLY): {_type_text(args[i + j])}" for j in range(n)]
                i += n
                continue
            if p.kind is p.VAR_KEYWORD:
                lines += [f"  {k} (KEYWORD_ONLY): {_type_text(v)}" for k, v in args[i].items()]
            else:
                kind = "POSITIONAL_ONLY" if spread and p.kind is p.POSITIONAL_OR_KEYWORD else p.kind.name
                lines.append(f"  {p.name} ({kind}): {_type_text(args[i])}")
            i += 1
        lines.append("Output Type:")
        lines.append("  " + _output_type_text(self._output_structure, self.graph.outputs))
        lines.append("Captures:")
        caps = self.graph.captures
        if not caps:
            lines.append("  None")
        for value, placeholder in caps:
            lines.append(f"  {id(value)}: {TensorSpec(placeholder.shape, placeholder.dtype)!r}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<ConcreteFunction {self.name} at {id(self):#x}>"


class _OutputSlot:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _fill_outputs(structure, tensors):
    if isinstance(structure, _OutputSlot):
        return tensors[structure.index]
    leaves = flatten(structure)
    return pack_as(structure, [tensors[s.index] if isinstance(s, _OutputSlot) else s for s in leaves])


def _output_type_text(structure, outputs):
    def leaf(value):
        if isinstance(value, _OutputSlot):
            t = outputs[value.index]
            return repr(TensorSpec(t.shape, t.dtype))
        if nest.is_composite(value):   # a RaggedTensor of output slots: its spec
            return _leaf_type_text(_fill_outputs(value, outputs))
        return _leaf_type_text(value)
    return _type_text(structure, leaf)


def _output_tensor(leaf):
    if isinstance(leaf, Variable):
        return leaf.read_value()
    if is_tensor(leaf):
        if isinstance(leaf, Tensor):
            return apply("Identity", leaf)  # an eager tensor returned as-is: captured
        return leaf
    return convert_to_tensor(leaf)


def _capture_feed(value):
    if isinstance(value, Tensor):
        return value._value
    raise TypeError(f"cannot feed capture {value!r}")


def _flat_feeds(value, feeds, as_tensors=False):
    """Appends the arrays fed for `value`'s tensor leaves (or, `as_tensors`, the tensors)."""
    host = state.xp is numpy
    # a tuple of arrays (fit's (x, y) batch) is its own flattening: no walk through it
    leaves = value if type(value) is tuple and all(
        type(v) is numpy.ndarray or type(v) is Tensor for v in value) else flatten(value)
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            feeds.append(leaf if as_tensors else leaf._value)
        elif host and type(leaf) is numpy.ndarray:   # the common array case, as below
            array = leaf.copy()
            feeds.append(Tensor(array) if as_tensors else array)
        elif is_array_like(leaf):
            array = transfer(state.xp, leaf)
            # the caller's array: copied, as a tensor made of it would be (an output may be it)
            array = array.copy() if array is leaf else array
            feeds.append(Tensor(array) if as_tensors else array)


def _flat_arg_names(params, args):
    names = []
    for i, _ in enumerate(args):
        names.append(params[i].name if i < len(params) else f"arg{i}")
    return names


def _placeholders(graph, args, names):
    """`args` with a graph argument in the place of each tensor leaf (named for its path)."""
    def make(value, name):
        if isinstance(value, (Tensor, TensorSpec)):
            return graph.add_argument(value.shape, value.dtype, name if isinstance(value, Tensor) or
                                      value.name is None else value.name)
        if is_array_like(value):
            return graph.add_argument(TensorShape(value.shape), _dt.from_numpy(value.dtype), name)
        return value

    def placeholders_of(arg, name):
        pairs = nest.flatten_with_paths(arg)
        return nest.pack_as(arg, [make(leaf, "_".join([name] + [str(p) for p in path]))
                                  for path, leaf in pairs])
    return tuple(placeholders_of(a, n) for a, n in zip(args, names))


def _spec_of(value):
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if is_array_like(value):
        return TensorSpec(TensorShape(value.shape), _dt.from_numpy(value.dtype))
    return value


def _spec_structure(args):
    """`args` with a TensorSpec in the place of each tensor (or array) leaf."""
    return tuple(nest.pack_as(a, [_spec_of(x) for x in flatten(a)]) for a in args)


def function(func=None, input_signature=None, autograph=True, jit_compile=False,
             reduce_retracing=False, experimental_attributes=None, name=None):
    """Compiles a Python function into graphs: traced once per input signature, then run fast.

    Usable as `@tl.function`, `@tl.function(...)` or `tl.function(fn)`, on functions
    and methods (one trace cache per instance).

    Args:
        func: the Python function.
        input_signature: a list of TensorSpecs fixing the one signature (None dims allowed).
        autograph: convert Python control flow on tensors to graph control flow.
        jit_compile: fuse elementwise chains into compiled kernels.
        reduce_retracing: relax changing dims to None instead of retracing per shape.

    Returns:
        A Function.

    Example:
        >>> @tl.function
        ... def f(x):
        ...     return x * x
        >>> f(tl.constant(3.0))
        <tl.Tensor: shape=(), dtype=float32, numpy=9.0>
    """
    def wrap(fn):
        return Function(fn, input_signature, autograph, jit_compile, reduce_retracing, name)
    return wrap if func is None else wrap(func)
