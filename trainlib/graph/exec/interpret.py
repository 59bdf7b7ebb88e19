"""The Interpreter: a graph's operations re-applied one by one through `apply`.

Owns: running a graph op by op in the current context, so that eagerly the kernels run
now and inside a tl.function the ops are added to the graph being traced (a loaded saved
model's function called while tracing is inlined this way), and `Replay`, the variant
that If/While gradients use to re-run their branch and body graphs for their values.
Invariants: ops run in the graph's (topological) order; trainlib's own `_` attrs are
not passed on; the result is the list of the graph's outputs.
"""
from ..op import apply


class Interpreter:
    """Runs a graph's operations through `apply` in the current context."""

    def run(self, graph, inputs):
        """The values of `graph.outputs` for `inputs` (aligned with `graph.inputs`)."""
        env = {id(p): t for p, t in zip(graph.inputs, inputs)}
        for op in graph.operations:
            if op.type == "Placeholder":
                continue
            outs = self.outputs_of(op, [env[id(t)] for t in op.inputs])
            for t, new in zip(op.outputs, outs):
                env[id(t)] = new
        return [env[id(t)] for t in graph.outputs]

    def outputs_of(self, op, args):
        """The values of `op`'s outputs for input values `args` (a tuple; empty for none)."""
        attrs = {k: v for k, v in op.attrs.items() if not k.startswith("_")}
        out = apply(op.type, *args, **attrs)
        return () if out is None else (out if isinstance(out, tuple) else (out,))


class Replay(Interpreter):
    """Re-runs a graph for its values only: ops that are only effects (print, assert) are
    skipped and Variable writes are not repeated: an assign's result is the value
    written, an update's a read of the Variable."""

    def outputs_of(self, op, args):
        opdef = op.opdef
        if opdef.num_outputs == 0:
            return ()
        if opdef.variable_access == "assign":
            return (args[1],)
        if opdef.variable_access == "update":
            return (apply("ReadVariableOp", args[0], dtype=op.attrs["dtype"],
                          shape=op.attrs["shape"]),)
        if "_retrace" in op.attrs:  # a custom gradient: re-run, so its rule closes over new tensors
            return tuple(op.attrs["_retrace"](args[op.attrs["num_results"]:]))
        return super().outputs_of(op, args)


def replay(graph, inputs):
    """`Replay().run(graph, inputs)`: `graph` re-applied to `inputs` for its values."""
    return _REPLAY.run(graph, inputs)


_REPLAY = Replay()
