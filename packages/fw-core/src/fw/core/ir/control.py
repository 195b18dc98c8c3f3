"""Building ``cond`` and ``while`` operations (and their eager meaning).

`cond(pred, true_fn, false_fn)` and `while_loop(cond_fn, body_fn, loop_vars)`
work in both modes: on concrete tensors with no program being built they are
ordinary Python control flow; while building, they trace each function into a
nested block (values of enclosing blocks are used directly, as in MLIR regions).
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.builder import _flatten
from fw.core.ir.core import Block, Value, _state
from fw.core.ir.types import DYN, TensorType
from fw.core.tensor import Tensor

__all__ = ["cond", "while_loop", "join_types"]

_SCALARS = (bool, int, float)


def join_types(a: TensorType, b: TensorType, what: str) -> TensorType:
    if a.dtype is not b.dtype:
        raise InvalidTypeError(f"{what}: the branches give different dtypes ({a.dtype.name} vs "
                               f"{b.dtype.name}); cast one of them")
    if len(a.shape) != len(b.shape):
        raise InvalidArgumentError(f"{what}: the branches give tensors of different rank "
                                   f"({a} vs {b})")
    return TensorType([x if x == y else DYN for x, y in zip(a.shape, b.shape)], a.dtype)


def _as_values(builder, outs, what):
    vals = []
    for o in outs:
        if type(o) is Value:
            vals.append(o)
        elif isinstance(o, Tensor):
            vals.append(builder.capture(o))
        elif isinstance(o, _SCALARS):
            vals.append(builder.constant(o, _dt.scalar_dtype(o)))
        else:
            raise InvalidTypeError(f"{what} must return tensors (or tuples/lists of them), got "
                                   f"{type(o).__name__}")
    return vals


def _structure(x):
    """A skeleton of nested tuples/lists/dicts to rebuild outputs."""
    if isinstance(x, (list, tuple)):
        return (type(x), [_structure(e) for e in x])
    if isinstance(x, dict):
        return (dict, [(k, _structure(v)) for k, v in x.items()])
    if x is None:
        return None
    return "leaf"


def _rebuild(struct, it):
    if struct == "leaf":
        return next(it)
    if struct is None:
        return None
    kind, items = struct
    if kind is dict:
        return {k: _rebuild(s, it) for k, s in items}
    return kind(_rebuild(s, it) for s in items)


def _scalar_bool(pred, what):
    if type(pred) is Value:
        if pred.type.numel() not in (1, DYN):
            raise InvalidArgumentError(f"{what}: the condition must hold one value, got "
                                       f"{pred.type}")
        return pred
    return None


def cond(pred, true_fn, false_fn=None, name=None):
    """``true_fn()`` if pred else ``false_fn()`` — a ``cond`` op while building."""
    b = _state.builder
    if b is None or (type(pred) is not Value and not isinstance(pred, Tensor)):
        if isinstance(pred, Tensor):
            pred = bool(pred)
        if pred:
            return true_fn() if true_fn is not None else None
        return false_fn() if false_fn is not None else None
    if isinstance(pred, Tensor):
        pred = b.capture(pred)
    _scalar_bool(pred, "cond")
    if pred.type.dtype is not _dt.bool_:
        from fw.core.ops import call

        pred = call("cast", pred, dtype=_dt.bool_)
    blocks, outs_per, structs = [], [], []
    for fn in (true_fn, false_fn):
        blk = Block(b.program)
        b.push(blk)
        try:
            res = fn() if fn is not None else None
            vals = _as_values(b, _flatten(res) if res is not None else [], "cond branch")
            blk.outputs = vals
        finally:
            b.pop()
        blocks.append(blk)
        outs_per.append(vals)
        structs.append(_structure(res))
    if len(outs_per[0]) != len(outs_per[1]):
        raise InvalidArgumentError(f"cond: true_fn returns {len(outs_per[0])} values but "
                                   f"false_fn returns {len(outs_per[1])}; both must return the "
                                   f"same structure")
    types = [join_types(x.type, y.type, f"cond output {i}")
             for i, (x, y) in enumerate(zip(*outs_per))]
    from fw.core.ops._registry import OPS

    op = b.append_op(OPS["cond"], [pred], {}, types, blocks)
    for r, (x, y) in zip(op.results, zip(*outs_per)):
        r._sg = x._sg and y._sg
    if not op.results:
        return None
    return _rebuild(structs[0], iter(op.results))


def while_loop(cond_fn, body_fn, loop_vars, is_test=False, name=None):
    """Paddle's ``static.nn.while_loop``: ``while cond_fn(*vars): vars = body_fn(*vars)``.
    Returns the final loop variables (a list, like Paddle)."""
    if not isinstance(loop_vars, (list, tuple)):
        raise InvalidTypeError("while_loop: 'loop_vars' must be a list or tuple of tensors")
    b = _state.builder
    if b is None:
        vars_ = list(loop_vars)
        while bool(cond_fn(*vars_)):
            out = body_fn(*vars_)
            vars_ = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(vars_) != len(loop_vars):
                raise InvalidArgumentError(f"while_loop: body_fn returned {len(vars_)} values "
                                           f"for {len(loop_vars)} loop variables")
        return vars_
    init = _as_values(b, list(loop_vars), "while_loop loop_vars")
    types = [v.type for v in init]
    from fw.core.ops._registry import OPS

    for _attempt in range(3):
        cblk, bblk = Block(b.program), Block(b.program)
        cargs = [cblk.add_arg(t) for t in types]
        for a, v in zip(cargs, init):
            a._sg = v._sg
        b.push(cblk)
        try:
            c = cond_fn(*cargs)
            (cv,) = _as_values(b, [c], "while_loop cond_fn")
            if cv.type.dtype is not _dt.bool_:
                from fw.core.ops import call

                cv = call("cast", cv, dtype=_dt.bool_)
            cblk.outputs = [cv]
        finally:
            b.pop()
        bargs = [bblk.add_arg(t) for t in types]
        for a, v in zip(bargs, init):
            a._sg = v._sg
        b.push(bblk)
        try:
            out = body_fn(*bargs)
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(out) != len(types):
                raise InvalidArgumentError(f"while_loop: body_fn returned {len(out)} values for "
                                           f"{len(types)} loop variables")
            vals = _as_values(b, out, "while_loop body_fn")
            vals = [_match_dtype(v, t) for v, t in zip(vals, types)]
            bblk.outputs = vals
        finally:
            b.pop()
        new_types = [join_types(t, v.type, f"while_loop variable {i}")
                     for i, (t, v) in enumerate(zip(types, vals))]
        if new_types == types:
            break
        types = new_types  # a carried shape changes in the body: retrace with -1 dims
    op = b.append_op(OPS["while"], init, {}, types, [cblk, bblk])
    for r, v in zip(op.results, init):
        r._sg = v._sg
    return list(op.results)


def _match_dtype(v, t):
    if v.type.dtype is not t.dtype:
        raise InvalidTypeError(f"while_loop: a loop variable changes dtype in the body "
                               f"({t.dtype.name} -> {v.type.dtype.name}); cast it back")
    return v
