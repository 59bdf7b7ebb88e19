"""The Einsum kernel's contraction plans: every einsum that is a (batched) matrix product runs as
one `xp.matmul`, planned once per (equation, input shapes).

Owns: `contract(xp, equation, arrays)` and the cached planning behind it. A plan names each
'...' dim, drops size-1 dims (so that a label broadcasts by being absent), sums the labels only
one input holds, contracts inputs pairwise in a greedy order (smallest intermediate first, as
opt_einsum's greedy), each pair as transpose + reshape to (batch, M, K) @ (batch, K, N) and
back, and ends with one transpose (and reshape for the size-1 dims) to the output order.
Invariants: results equal numpy's einsum for every numeric dtype (float16 products are computed
in float32 and cast back; integer sums keep their dtype, as numpy's einsum does); an equation
with a label repeated inside one term (a diagonal) is left to `xp.einsum` whole; transposes stay
views wherever `xp.matmul` can hand the strides to BLAS, copies are made only where it could not.
"""
import functools
import math

import numpy as np

_PLANS = 4096  # (equation, shapes) plans kept


def contract(xp, equation, arrays, matmul=None):
    """`xp.einsum(equation, *arrays)` (explicit equation, '->' present), as matrix products.

    Args:
        xp: the array module (numpy or CuPy).
        equation: an explicit einsum equation, such as 'bqhd,bkhd->bhqk'.
        arrays: one array per input term, of one dtype.
        matmul: `matmul(xp, a, b)` running each product (MatMul's kernel, with its thread
            policy); default `xp.matmul`.

    Returns:
        The contraction, of the inputs' dtype (it may be a view of a product's result).

    Example:
        >>> contract(np, "ij,jk->ik", [np.ones((2, 3)), np.ones((3, 4))]).shape
        (2, 4)
    """
    dtype = arrays[0].dtype
    steps = _plan(equation, tuple(tuple(a.shape) for a in arrays))
    if steps is None:
        return xp.einsum(equation, *arrays).astype(dtype, copy=False)
    compute = np.float32 if dtype == np.float16 else None
    if compute is not None:
        arrays = [a.astype(compute) for a in arrays]
    values = list(arrays)
    matmul = matmul or _plain_matmul
    for step in steps:
        step(xp, matmul, values)
    out = values[0]
    return out.astype(dtype, copy=False) if compute is not None else out


# ------------------------------------------------------------------ planning

def _named_terms(equation, shapes):
    """(input label tuples, output label tuple, label sizes): each '...' dim gets its own label,
    right-aligned as broadcasting aligns them; None where a term repeats a label."""
    lhs, out = equation.split("->")
    terms = lhs.split(",")
    ranks = [len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)]
    width = max([r for t, r in zip(terms, ranks) if "..." in t], default=0)
    ellipsis = tuple(f"...{i}" for i in range(width))

    def name(term, rank):
        if "..." not in term:
            return tuple(term)
        head, tail = term.split("...")
        return tuple(head) + ellipsis[width - rank:] + tuple(tail)

    named = [name(t, r) for t, r in zip(terms, ranks)]
    if any(len(set(labels)) != len(labels) for labels in named):
        return None
    sizes = {}
    for labels, shape in zip(named, shapes):
        for label, dim in zip(labels, shape):
            if dim != 1 or label not in sizes:
                sizes[label] = dim
    return named, name(out, width), sizes


@functools.lru_cache(maxsize=_PLANS)
def _plan(equation, shapes):
    """The steps computing `equation` over arrays of `shapes`, each `step(xp, matmul, values)` rewriting
    the list of live values; None where xp.einsum must do it (repeated labels in a term)."""
    named = _named_terms(equation, shapes)
    if named is None:
        return None
    terms, out, sizes = named
    steps, live = [], []
    for i, (labels, shape) in enumerate(zip(terms, shapes)):
        kept = tuple(c for c, d in zip(labels, shape) if d != 1)
        if len(kept) != len(labels):  # a size-1 dim broadcasts: drop it, the label goes with it
            steps.append(_reshape_step(i, tuple(d for d in shape if d != 1)))
        live.append(kept)
    wanted = tuple(c for c in out if sizes[c] != 1)
    while True:
        # labels that only one input holds and the output does not: summed first
        for i, labels in enumerate(live):
            elsewhere = set(wanted).union(*(t for j, t in enumerate(live) if j != i))
            axes = tuple(a for a, c in enumerate(labels) if c not in elsewhere)
            if axes:
                steps.append(_sum_step(i, axes))
                live[i] = tuple(c for c in labels if c in elsewhere)
        if len(live) == 1:
            break
        i, j = _greedy_pair(live, wanted, sizes)
        rest = [t for k, t in enumerate(live) if k not in (i, j)]
        keep = set(wanted).union(*rest)
        step, labels = _pair_step(i, j, live[i], live[j], keep, sizes, wanted)
        steps.append(step)
        live = [labels] + rest
    steps.append(_output_step(live[0], wanted, tuple(sizes[c] for c in out)))
    return tuple(steps)


def _greedy_pair(live, wanted, sizes):
    """The pair of inputs whose product is smallest (then cheapest): opt_einsum's greedy rule."""
    best = None
    for i in range(len(live)):
        for j in range(i + 1, len(live)):
            rest = set(wanted).union(*(t for k, t in enumerate(live) if k not in (i, j)))
            both = set(live[i]) | set(live[j])
            size = math.prod(sizes[c] for c in both if c in rest)
            cost = math.prod(sizes[c] for c in both)
            if best is None or (size, cost) < best[0]:
                best = ((size, cost), (i, j))
    return best[1]


def _pair_step(i, j, left, right, keep, sizes, wanted):
    """The step multiplying values i and j (labels `left`, `right`; every label of each is in the
    other or in `keep`) as one matmul, and the labels of its result (batch, M, N): the batch
    labels in the left's order, M and K in the left's, N in the right's, so that the
    transposes are views where the layouts allow; the batch dims stay apart (matmul takes
    several) since merging them would copy whenever they are not adjacent. The last product
    swaps its sides when the output wants N's labels first, so that it comes out in order."""
    if set(keep) == set(wanted):
        order = [c for c in wanted if (c in left) != (c in right)]
        if order and order[0] in right:
            i, j, left, right = j, i, right, left
    batch = tuple(c for c in left if c in right and c in keep)
    inner = tuple(c for c in left if c in right and c not in keep)
    m = tuple(c for c in left if c not in right)
    n = tuple(c for c in right if c not in left)
    nb = tuple(sizes[c] for c in batch)
    nm, nk, nn = (math.prod(sizes[c] for c in g) for g in (m, inner, n))
    a_axes = tuple(left.index(c) for c in batch + m + inner)
    b_axes = tuple(right.index(c) for c in batch + inner + n)
    out_shape = tuple(sizes[c] for c in batch + m + n)

    if not inner:  # an outer product per batch: broadcasting multiply, no matmul of K = 1
        def step(xp, matmul, values):
            a = values[i].transpose(a_axes).reshape(nb + (nm, 1))
            b = values[j].transpose(b_axes).reshape(nb + (1, nn))
            _pop_two(values, i, j, (a * b).reshape(out_shape))
    else:
        def step(xp, matmul, values):
            a = _blasable(xp, values[i].transpose(a_axes).reshape(nb + (nm, nk)))
            b = _blasable(xp, values[j].transpose(b_axes).reshape(nb + (nk, nn)))
            _pop_two(values, i, j, matmul(xp, a, b).reshape(out_shape))
    return step, batch + m + n


def _plain_matmul(xp, a, b):
    return xp.matmul(a, b)


def _pop_two(values, i, j, result):
    """values[i] and values[j] replaced by `result`, put first (as `_plan`'s `live`)."""
    rest = [v for k, v in enumerate(values) if k not in (i, j)]
    values[:] = [result] + rest


def _blasable(xp, a):
    """`a` (rank >= 2), copied only where neither of its last two dims is contiguous: numpy's matmul
    would otherwise leave BLAS for its plain loop."""
    item = a.itemsize
    if a.strides[-1] == item or a.strides[-2] == item or a.shape[-1] == 1 or a.shape[-2] == 1:
        return a
    return xp.ascontiguousarray(a)


def _reshape_step(i, shape):
    def step(xp, matmul, values):
        values[i] = values[i].reshape(shape)
    return step


def _sum_step(i, axes):
    def step(xp, matmul, values):
        values[i] = values[i].sum(axis=axes, dtype=values[i].dtype)
    return step


def _output_step(labels, wanted, shape):
    """The last step: the result's dims into the output's order, size-1 dims put back."""
    axes = tuple(labels.index(c) for c in wanted)

    def step(xp, matmul, values):
        values[0] = xp.asarray(values[0]).transpose(axes).reshape(shape)
    return step
