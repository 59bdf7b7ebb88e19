"""`tl.case` and `tl.switch_case`: many-way branching as nested `tl.cond`s.

Owns: the argument rules of both (TensorFlow's: `case` takes (predicate, function)
pairs, a list or dict, and runs the first whose predicate holds; `switch_case`
takes an integer index and a list or dict of functions) and their defaults (without
`default`, `case` runs its last function and asserts that its predicate holds;
`switch_case` runs its last function for an index out of range). Each branch is traced
once, into the chain of `If` ops `cond` makes; eagerly only the chosen function runs.
"""
from .. import dtypes as _dt
from ..op import convert_to_tensor
from ..tensor import Tensor
from .control_flow import cond
from . import io as _io, math as _math, array as _array

__all__ = ["case", "switch_case"]


def _pairs(pred_fn_pairs):
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    if not isinstance(pred_fn_pairs, (list, tuple)):
        raise TypeError(f"tl.case: pred_fn_pairs must be a list or dict of (predicate, callable) "
                        f"pairs, got {type(pred_fn_pairs).__name__}")
    preds, fns = [], []
    for i, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(f"tl.case: pred_fn_pairs[{i}] must be a (predicate, callable) pair, "
                            f"got {pair!r}")
        pred, fn = pair
        if not callable(fn):
            raise TypeError(f"tl.case: the function of pair {i} must be callable, got "
                            f"{type(fn).__name__}")
        pred = convert_to_tensor(pred)
        if pred.dtype is not _dt.bool or pred.shape.rank not in (0, None):
            raise TypeError(f"tl.case: the predicate of pair {i} must be a scalar bool, got shape "
                            f"{pred.shape} dtype {pred.dtype.name}")
        preds.append(pred)
        fns.append(fn)
    if not preds:
        raise ValueError("tl.case: pred_fn_pairs is empty")
    return preds, fns


def _chain(preds, fns, default):
    fn = default
    for pred, action in reversed(list(zip(preds, fns))):
        fn = (lambda p, a, rest: lambda: cond(p, a, rest))(pred, action, fn)
    return fn


def _count_true(preds):
    return _math.reduce_sum(_math.cast(_array.stack(preds), _dt.int32))


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """Runs the function of the first pair whose predicate is true; `default()` if none.

    Args:
        pred_fn_pairs: a list (or dict) of (scalar bool tensor, callable) pairs.
        default: a callable run when no predicate holds. Without it, the last pair's
            function runs then, and an assertion fails unless its predicate holds.
        exclusive: assert that at most one predicate holds.

    Example:
        >>> x = tl.constant(3)
        >>> int(tl.case([(x < 2, lambda: tl.constant(0)), (x < 5, lambda: tl.constant(1))],
        ...             default=lambda: tl.constant(2)))
        1
    """
    preds, fns = _pairs(pred_fn_pairs)
    if default is not None and not callable(default):
        raise TypeError(f"tl.case: default must be callable, got {type(default).__name__}")
    if default is None:
        last_pred, last_fn = preds[-1], fns[-1]
        preds, fns = preds[:-1], fns[:-1]

        def default():
            _io.Assert(last_pred, ["Input error: None of conditions evaluated as True:",
                                   _array.stack(preds + [last_pred])])
            return last_fn()
    fn = _chain(preds, fns, default)
    if exclusive and len(preds) > 1:
        _io.Assert(_count_true(preds) <= 1, ["Input error: exclusive=True: more than one "
                                             "condition evaluated as True:", _array.stack(preds)])
    return fn()


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Runs `branch_fns[branch_index]()`; `default()` (or the last branch) when out of range.

    Args:
        branch_index: a scalar int32 tensor or Python int.
        branch_fns: a list of callables, a dict {int: callable}, or a list of (int, callable).
        default: the callable for an index with no branch (default: the last branch).

    Example:
        >>> int(tl.switch_case(tl.constant(1), [lambda: tl.constant(10), lambda: tl.constant(20)]))
        20
    """
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and branch_fns and \
            all(isinstance(b, (list, tuple)) and len(b) == 2 for b in branch_fns):
        items = sorted(branch_fns)
    elif isinstance(branch_fns, (list, tuple)):
        items = list(enumerate(branch_fns))
    else:
        raise TypeError(f"tl.switch_case: branch_fns must be a list or dict of callables, got "
                        f"{type(branch_fns).__name__}")
    if not items:
        raise ValueError("tl.switch_case: branch_fns is empty")
    for key, fn in items:
        if not isinstance(key, int) or not callable(fn):
            raise TypeError(f"tl.switch_case: each branch must be an int key and a callable, got "
                            f"{key!r}: {fn!r}")
    if [k for k, _ in items] != list(range(len(items))):
        raise ValueError(f"tl.switch_case: branch keys must be 0..{len(items) - 1}, got "
                         f"{[k for k, _ in items]}")
    fns = [fn for _, fn in items]
    if default is None:                 # the last branch is the default: traced once
        default, fns = fns[-1], fns[:-1]
    index = convert_to_tensor(branch_index)
    if not index.dtype.is_integer or index.shape.rank not in (0, None):
        raise TypeError(f"tl.switch_case: branch_index must be a scalar integer, got shape "
                        f"{index.shape} dtype {index.dtype.name}")
    if isinstance(index, Tensor):               # eager: run the one branch
        i = int(index.numpy())
        return (fns[i] if 0 <= i < len(fns) else default)()
    preds = [_math.equal(index, k) for k in range(len(fns))]
    return _chain(preds, fns, default)()
