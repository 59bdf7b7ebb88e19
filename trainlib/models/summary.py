"""`Model.summary()`'s table, laid out as Keras 3 prints it (through rich) without needing rich.

Owns: which models print as a plain stack (Sequential, subclassed, chain-shaped
functional models: columns Layer (type) / Output Shape / Param #) and which get
a "Connected to" column; the column widths (Keras's `positions` of a line of
`min(88 or 108, terminal columns - 4)` characters, shrunk as rich shrinks them to
fit the borders); word-wrapped cells; the totals, counting bytes per dtype and
the optimizer's variables once it is built.
"""
import math
import shutil
import textwrap

import numpy as np

from ..graph.nest import flatten
from ..layers.base import KerasTensor

__all__ = ["format_summary"]


def _shape_text(shape):
    if shape is None:
        return "?"
    if isinstance(shape, list):
        return "[" + ", ".join(_shape_text(s) for s in shape) + "]"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"


def _bytes_text(size):
    # keras readable_memory_size
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _count(variables):
    return int(sum(math.prod(tuple(v.shape)) for v in variables))


def _memory(variables):
    unique = {id(v): v for v in variables}.values()
    return sum(math.prod(tuple(v.shape)) * np.dtype(v.dtype.np).itemsize for v in unique)


def _output_shape(layer):
    shape = getattr(layer, "_output_shape", None)
    if shape is None and hasattr(layer, "batch_shape"):
        shape = layer.batch_shape
    if shape is None and layer.built and getattr(layer, "_build_input_shape", None) is not None:
        try:  # a layer called on data (a subclassed model's): its shape for the build input
            shape = layer.compute_output_shape(layer._build_input_shape)
        except Exception:  # noqa: BLE001 -- no shape is not an error in a summary
            shape = None
    return shape


def _functional_structure(model):
    """(sequential_like, {id(layer): "Connected to" text}) of a functional model."""
    nodes = model._nodes
    calls = {}
    for n in nodes:
        calls.setdefault(id(n.layer), []).append(n)

    def ref(kt):
        if kt.node is None:
            return f"{kt.layer.name}[0][0]"
        return f"{kt.node.layer.name}[{calls[id(kt.node.layer)].index(kt.node)}][{kt.index}]"

    connected = {}
    chain = len(model.inputs) == 1 and all(len(v) == 1 for v in calls.values())
    previous = model.inputs[0] if model.inputs else None
    for n in nodes:
        args = [a for a in flatten(n.args) if isinstance(a, KerasTensor)]
        text = ", ".join(ref(a) for a in args)
        layer_id = id(n.layer)
        connected[layer_id] = (connected[layer_id] + ", " + text) if layer_id in connected \
            else text
        outs = flatten(n.outputs)
        if len(args) != 1 or args[0] is not previous or len(outs) != 1:
            chain = False
        previous = outs[0] if outs else None
    return chain, connected


def _ratio_reduce(total, widths):
    # rich's ratio_reduce with equal ratios: the last resort that shrinks fixed-width columns
    out, remaining, ratio = [], total, len(widths)
    for w in widths:
        cut = min(w, round(remaining / ratio))
        out.append(w - cut)
        remaining -= cut
        ratio -= 1
    return out


def _table(header, alignment, rows, widths):
    inner = [w - 2 for w in widths]

    def render(cells):
        wrapped = [textwrap.wrap(c, width=iw, break_on_hyphens=False) or [""]
                   for c, iw in zip(cells, inner)]
        lines = []
        for i in range(max(len(w) for w in wrapped)):
            parts = []
            for w, iw, align in zip(wrapped, inner, alignment):
                text = w[i] if i < len(w) else ""
                parts.append(" " + (text.rjust(iw) if align == "right" else text.ljust(iw)) + " ")
            lines.append(parts)
        return lines

    def rule(left, mid, right, fill):
        return left + mid.join(fill * w for w in widths) + right

    out = [rule("┏", "┳", "┓", "━")]
    out += ["┃" + "┃".join(p) + "┃" for p in render(header)]
    out.append(rule("┡", "╇", "┩", "━"))
    for i, row in enumerate(rows):
        out += ["│" + "│".join(p) + "│" for p in render(row)]
        if i != len(rows) - 1:
            out.append(rule("├", "┼", "┤", "─"))
    out.append(rule("└", "┴", "┘", "─"))
    return out


def format_summary(model, line_length=None, positions=None):
    """The summary text of `model`, as Keras 3's `model.summary()` prints it."""
    sequential_like, connected = True, {}
    if model._obj_type() == "Functional":  # model.py imports this module: no Functional here
        sequential_like, connected = _functional_structure(model)
    if sequential_like:
        default_length, positions = 88, positions or [0.45, 0.80, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #"]
        alignment = ["left", "left", "right"]
    else:
        default_length, positions = 108, positions or [0.3, 0.56, 0.74, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        alignment = ["left", "left", "right", "left"]
    line_length = line_length or min(default_length, shutil.get_terminal_size().columns - 4)
    widths, current = [], 0
    for pos in positions:
        width = int(pos * line_length) - current if pos <= 1 else int(pos) - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(width)
        current += width
    # rich: each column is its width plus one space of padding per side, and the table with
    # its borders must fit the line, so every column gives back an equal share
    padded = [w + 2 for w in widths]
    excess = sum(padded) - (line_length - len(padded) - 1)
    if excess > 0:
        padded = _ratio_reduce(excess, padded)

    rows = []
    # a functional model lists its operations (x + y, x[:, 0]) too, as Keras 3's summary does
    for layer in model._layers if hasattr(model, "_nodes") else model.layers:
        if not layer.built:
            params = "0 (unbuilt)"
        else:
            params = f"{_count(layer.weights):,}"
        row = [f"{layer.name} ({type(layer).__name__})", _shape_text(_output_shape(layer)), params]
        if not sequential_like:
            row.append(connected.get(id(layer)) or "-")
        rows.append(row)

    # rich crops what is wider than the console (the terminal, or 80 columns)
    columns = shutil.get_terminal_size().columns
    out = [f'Model: "{model.name}"'] + [line[:columns] for line in
                                        _table(header, alignment, rows, padded)]
    built = model.built
    trainable = model.trainable_weights if built else []
    frozen = model.non_trainable_weights if built else []
    optimizer = getattr(model, "optimizer", None)
    opt_vars = optimizer.variables if getattr(model, "compiled", False) and optimizer is not None \
        and optimizer.built else None
    counts = [_count(trainable), _count(frozen), _count(opt_vars or [])]
    sizes = [_memory(trainable), _memory(frozen), _memory(opt_vars or [])]
    out.append(f" Total params: {sum(counts):,} ({_bytes_text(sum(sizes))})")
    out.append(f" Trainable params: {counts[0]:,} ({_bytes_text(sizes[0])})")
    out.append(f" Non-trainable params: {counts[1]:,} ({_bytes_text(sizes[1])})")
    if opt_vars is not None:
        out.append(f" Optimizer params: {counts[2]:,} ({_bytes_text(sizes[2])})")
    return "\n".join(out)
