"""`Model.summary()`'s table: layer (type), output shape, parameter count, then the totals."""

__all__ = ["format_summary"]


def _shape_text(shape):
    if shape is None:
        return "?"
    if isinstance(shape, list):
        return ", ".join(_shape_text(s) for s in shape)
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def _bytes_text(n):
    size = float(n * 4)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.2f} {unit}"
        size /= 1024


def _count(variables):
    return int(sum(v.shape.num_elements() for v in variables))


def format_summary(model):
    """The summary text of `model` (a Keras-like box table)."""
    rows = []
    for layer in model.layers:
        params = _count(layer.weights) if layer.built else 0
        shape = getattr(layer, "_output_shape", None)
        if shape is None and hasattr(layer, "batch_shape"):
            shape = layer.batch_shape
        rows.append((f"{layer.name} ({type(layer).__name__})", _shape_text(shape),
                     f"{params:,}" if layer.built else "0 (unbuilt)"))
    headers = ("Layer (type)", "Output Shape", "Param #")
    widths = [max([len(headers[i])] + [len(r[i]) for r in rows]) + 2 for i in range(3)]
    widths[0] = max(widths[0], 31)
    widths[1] = max(widths[1], 22)
    widths[2] = max(widths[2], 13)

    def line(left, mid, right, fill="━"):
        return left + mid.join(fill * w for w in widths) + right

    def cells(values, sep):
        return sep + sep.join(f" {values[0]:<{widths[0] - 1}}" if i == 0 else
                              (f" {values[1]:<{widths[1] - 1}}" if i == 1 else
                               f"{values[2]:>{widths[2] - 1}} ")
                              for i in range(3)) + sep

    out = [f'Model: "{model.name}"', line("┏", "┳", "┓"), cells(headers, "┃"),
           line("┡", "╇", "┩")]
    for i, r in enumerate(rows):
        out.append(cells(r, "│"))
        if i != len(rows) - 1:
            out.append(line("├", "┼", "┤", "─"))
    out.append(line("└", "┴", "┘", "─"))
    weights = model.weights if model.built else []
    total = _count(weights)
    trainable = _count(model.trainable_weights) if model.built else 0
    out.append(f" Total params: {total:,} ({_bytes_text(total)})")
    out.append(f" Trainable params: {trainable:,} ({_bytes_text(trainable)})")
    out.append(f" Non-trainable params: {total - trainable:,} ({_bytes_text(total - trainable)})")
    return "\n".join(out)
