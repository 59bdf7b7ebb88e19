"""Execution: running graphs, compiled or op by op.

Modules, in the order they build on each other:
  emit.py       the namespace (ASCII identifiers, distinct after NFKC, no builtins shadowed),
                the emitter (source lines, closure bindings, the line -> op map) and the one
                exec-with-source helper (sources registered with linecache), shared by the
                lowering below and by the fused op's cache-blocked loops (ops/fused.py);
  lower.py      one small lowering function per kind of op, chosen through the OpDef's
                lowering facts; the memory plan is `graph/passes/memory.py`;
  program.py    `compile_graph` -> Program, error translation to the user's line, and the
                binding of a compiled graph to its captured values that traced Functions
                and loaded saved models share;
  interpret.py  the Interpreter: a graph's ops re-applied one by one in the current context
                (inlining a loaded function into a trace, replaying If/While graphs for
                their gradients).
This package imports nothing at import time, so the ops package may use the Interpreter.
"""
