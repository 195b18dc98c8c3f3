"""Building ``cond``/``while`` ops from converted Python control flow.

The converted code hands each helper its branch/body functions plus a getter
and a setter of the variables they assign (see `fw.jit._transform`). Here the
functions are traced into nested blocks and the variables are reconciled:

- ``if`` on a symbolic condition: each branch runs from the same starting
  values; per variable, the two outcomes are merged: tensors (and Python numbers
  paired with a tensor, or two different numbers) become results of the
  ``cond`` op; equal Python values stay Python values; a tensor assigned in one
  branch only is an `UndefinedVar` afterwards (filled with zeros instead when
  the other branch leaves the function or the loop — return/break/continue — so
  the value is never read on that path); containers are merged element by
  element. Anything else is a `ConversionError` naming the variable.
- ``while`` on a symbolic condition: every variable with a value before the loop
  is carried (Python numbers become 0-D tensors); the body is traced, the types
  are joined (a dimension that changes becomes -1) and the trace is repeated
  until they are stable. A variable first assigned inside the loop is local to
  the body (an `UndefinedVar` after the loop), except the function's return
  value, which is carried with a zero start. The return value is an
  `UndefinedVar` until a ``return`` runs; ``None`` is a real ``return None`` (or
  the end of the function), and one beside a tensor is a `ConversionError`.
- ``for`` over a symbolic range or a tensor is a ``while`` with an index.

State updates (`Builder.record_update`, e.g. batch-norm statistics or an
optimizer step under a tensor condition) recorded inside a branch or body are
carried out as extra results of the op and recorded again outside.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.control import join_types
from fw.core.ir.core import Block, Value
from fw.core.ir.types import TensorType
from fw.core.tensor import Tensor
from fw.jit import _context
from fw.jit._context import UndefinedVar
from fw.jit.errors import ConversionError

__all__ = ["build_cond", "build_while", "build_for", "build_cond_value", "as_bool_value",
           "SymbolicRange", "SymbolicEnumerate", "TensorArray"]

_NUM = (bool, int, float)
RETVAL = "__fw_retval"


def _ops():
    from fw.core.internal import OPS

    return OPS


def _is_tensor(v) -> bool:
    return type(v) is Value or isinstance(v, Tensor)


def _is_num(v) -> bool:
    return isinstance(v, _NUM) or isinstance(v, np.number)


def _is_flag(name: str) -> bool:
    return name == "__fw_ret" or name.startswith("__fw_brk_") or name.startswith("__fw_cont_")


def _describe(v) -> str:
    if isinstance(v, UndefinedVar):
        return "unassigned"
    if type(v) is Value:
        return f"a tensor ({v.type})"
    if isinstance(v, Tensor):
        return f"a tensor ({v.dtype.name}{list(v.shape)})"
    r = repr(v)
    return f"{type(v).__name__} {r if len(r) < 40 else r[:37] + '...'}"


def _py_dtype(*vals):
    if all(isinstance(v, (bool, np.bool_)) for v in vals):
        return _dt.bool_
    if any(isinstance(v, (float, np.floating)) for v in vals):
        return _dt.get_default_dtype()
    return _dt.int64


def _in_block(b, blk, fn):
    b.push(blk)
    try:
        return fn()
    finally:
        b.pop()


def _const(b, value, dtype) -> Value:
    return b.constant(value.item() if isinstance(value, np.generic) else value, dtype)


def _zeros(type_: TensorType) -> Value:
    from fw.core.ops import call

    return call("full", shape=[0 if d == -1 else d for d in type_.shape], fill_value=0,
                dtype=type_.dtype)


def _value(b, v) -> Value:
    return v if type(v) is Value else b.capture(v)


def as_bool_value(b, v, what, loc=None) -> Value:
    """A bool scalar Value from a condition value (`loc`: the statement's place)."""
    from fw.core.ops import call

    if type(v) is not Value:
        if isinstance(v, Tensor):
            v = b.capture(v)
        else:
            return b.constant(bool(v), _dt.bool_)
    n = v.type.numel()
    if n not in (1, -1):
        raise ConversionError(f"the condition of {what} is a tensor of shape "
                              f"{list(v.type.shape)}; it must hold one value",
                              *(loc or _context.user_frame(2)), construct=what,
                              hint="reduce it first, e.g. `if (x > 0).all():` or "
                                   "`if x.sum() > 0:`")
    if v.type.dtype is not _dt.bool_:
        v = call("cast", v, dtype=_dt.bool_)
    if v.type.shape != ():
        v = call("reshape", v, shape=[])
    return v


def _exited(names, vals) -> bool:
    for n, v in zip(names, vals):
        if _is_flag(n) and (v is True or type(v) is Value or isinstance(v, Tensor)):
            return True
    return False


class _Merge:
    """Reconciles the two outcomes of a symbolic ``if`` (see the module docstring)."""

    def __init__(self, b, blocks, loc, exits):
        self.b = b
        self.blocks = blocks
        self.loc = loc
        self.exits = exits  # per branch: does it leave (return/break/continue)?
        self.outs = ([], [])

    def error(self, msg, hint=None):
        raise ConversionError(msg, self.loc[0], self.loc[1], construct="if", hint=hint)

    def leaf(self, name, a, c):
        b = self.b
        vals = []
        for side, v, other in ((0, a, c), (1, c, a)):
            if _is_tensor(v):
                vals.append(_value(b, v))
            else:  # a Python number paired with a tensor or another number
                d = other.dtype if _is_tensor(other) else _py_dtype(a, c)
                d = d if isinstance(d, _dt.DType) else _dt.convert_dtype(d)
                vals.append(_in_block(b, self.blocks[side], lambda v=v, d=d: _const(b, v, d)))
        x, y = vals
        if x.type.dtype is not y.type.dtype:
            self.error(f"variable {name!r} is {x.type.dtype.name} after the true branch and "
                       f"{y.type.dtype.name} after the false branch of an `if` whose condition "
                       f"is a tensor", hint="cast one of them so both branches give one dtype")
        if len(x.type.shape) != len(y.type.shape):
            self.error(f"variable {name!r} has rank {x.type.ndim} after the true branch "
                       f"({x.type}) and rank {y.type.ndim} after the false branch ({y.type}) "
                       f"of an `if` whose condition is a tensor",
                       hint="reshape so both branches give tensors of one rank")
        self.outs[0].append(x)
        self.outs[1].append(y)
        return ("L", len(self.outs[0]) - 1)

    def merge(self, name, a, c):
        ua, uc = isinstance(a, UndefinedVar), isinstance(c, UndefinedVar)
        if name == RETVAL:
            # "no return yet" is the return value's own UndefinedVar; any other one is a
            # variable that a `return` on this path gave back with no value there
            # (silently filling it with zeros would return them where Python raises)
            for u in (a, c):
                if isinstance(u, UndefinedVar) and u.name != RETVAL:
                    why = f" ({u.reason})" if u.reason else ""
                    self.error(f"variable {u.name!r} is returned but has no value{why}",
                               hint="assign it on every path before the `return` (for a "
                                    "tensor computed in only one branch, give it a value "
                                    "before the `if`)")
        if name == RETVAL and (a is None) != (c is None):
            # "no return yet" is an UndefinedVar; None is the function's own `return None`
            # (or falling off its end): it cannot stand beside a tensor
            other = c if a is None else a
            if isinstance(other, UndefinedVar):
                return ("C", None)
            if _fillable(other):
                self.error("the function returns None on one path and a tensor on another, "
                           "after an `if` whose condition is a tensor",
                           hint="return a tensor (or the same containers of tensors) on "
                                "every path, including the end of the function")
        if _is_tensor(a) and _is_tensor(c):
            return self.leaf(name, a, c)
        if isinstance(a, TensorArray) and isinstance(c, TensorArray):
            return ("A", self.leaf(name, a.buf, c.buf)[1])
        if ua and uc:
            return ("C", a)
        if ua or uc:
            side = 0 if ua else 1
            defined = c if ua else a
            if (name == RETVAL or self.exits[side]) and _fillable(defined):
                # the branch leaves (return/break/continue): the value is never read there
                z = _in_block(self.b, self.blocks[side], lambda: _filler(self.b, defined))
                return self.merge(name, z, defined) if side == 0 else \
                    self.merge(name, defined, z)
            if name == RETVAL and defined is not None:
                self.error("the function returns a value on one path of an `if` whose "
                           "condition is a tensor that cannot be matched on the other path",
                           hint="return tensors (or containers of tensors) on every path")
            which = "false" if ua else "true"
            return ("C", UndefinedVar(name, f"it is assigned only in the {which} branch of the "
                                            f"`if` at {self.loc[0]}:{self.loc[1]}, whose "
                                            f"condition is a tensor"))
        if _is_tensor(a) and _is_num(c) or _is_num(a) and _is_tensor(c):
            return self.leaf(name, a, c)
        if isinstance(a, (list, tuple)) and type(a) is type(c):
            if len(a) != len(c):
                self.error(f"{type(a).__name__} {name!r} has {len(a)} items after the true "
                           f"branch and {len(c)} after the false branch of an `if` whose "
                           f"condition is a tensor",
                           hint="append to it in both branches (or in neither)")
            parts = [self.merge(f"{name}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, c))]
            return (type(a), parts)
        if isinstance(a, dict) and type(a) is type(c):
            if list(a) != list(c):
                self.error(f"dict {name!r} has keys {list(a)} after the true branch and "
                           f"{list(c)} after the false branch of an `if` whose condition is a "
                           f"tensor")
            return (dict, [(k, self.merge(f"{name}[{k!r}]", a[k], c[k])) for k in a])
        if a is c:
            return ("C", a)
        if _is_num(a) and _is_num(c):
            if type(a) is type(c) and a == c:
                return ("C", a)
            return self.leaf(name, a, c)
        try:
            same = type(a) is type(c) and bool(a == c)
        except Exception:  # noqa: BLE001 - objects without a usable ==
            same = False
        if same:
            return ("C", a)
        self.error(f"variable {name!r} is {_describe(a)} after the true branch and "
                   f"{_describe(c)} after the false branch of an `if` whose condition is a "
                   f"tensor; a program cannot hold a Python value that depends on a tensor",
                   hint="make both branches assign the same Python value, or tensors")


def _fillable(v) -> bool:
    """Whether `v` holds a tensor somewhere (so a stand-in of it can be made)."""
    if _is_tensor(v) or isinstance(v, TensorArray):
        return True
    if isinstance(v, (list, tuple)):
        return any(_fillable(x) for x in v)
    if isinstance(v, dict):
        return any(_fillable(x) for x in v.values())
    return False


def _filler(b, v):
    """A stand-in for `v` on a path that never reads it: zeros for tensors, the same
    Python values elsewhere."""
    if isinstance(v, TensorArray):
        return TensorArray(_zeros(v.buf.type))
    if _is_tensor(v):
        return _zeros(_value(b, v).type)
    if isinstance(v, (list, tuple)):
        items = [_filler(b, x) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
    if isinstance(v, dict):
        return {k: _filler(b, x) for k, x in v.items()}
    return v


def _rebuild(tmpl, results):
    kind = tmpl[0]
    if kind == "L":
        return results[tmpl[1]]
    if kind == "A":
        return TensorArray(results[tmpl[1]])
    if kind == "C":
        return tmpl[1]
    if kind is dict:
        return {k: _rebuild(t, results) for k, t in tmpl[1]}
    return kind(_rebuild(t, results) for t in tmpl[1])


class TensorArray:
    """A Python list of same-typed tensors that grows in a loop whose condition is a
    tensor: stored as one Value ``buf`` of shape ``[-1, *element shape]`` (the
    elements stacked). ``append`` returns a new array (converted code rebinds the
    variable); ``fw.stack(arr)``/``fw.concat(arr)``, ``len(arr)`` and ``arr[i]`` work
    in converted code."""

    __slots__ = ("buf",)

    def __init__(self, buf):
        self.buf = buf

    def append(self, v):
        import fw

        v = v if type(v) is Value else _context.active().builder.capture(v)
        return TensorArray(fw.concat([self.buf, fw.unsqueeze(v, 0)], axis=0))

    def stack(self, axis=0, name=None):
        import fw

        if axis == 0:
            return self.buf
        return fw.moveaxis(self.buf, 0, axis)

    def concat(self, axis=0, name=None):
        import fw

        shape = self.buf.type.shape
        if len(shape) < 2:
            raise ConversionError("concat of a list of 0-D tensors (use fw.stack)",
                                  *_context.user_frame(2), construct="concat")
        ax = axis % (len(shape) - 1)  # an axis of the items (one dim fewer than buf)
        if ax == 0:
            return fw.reshape(self.buf, [-1] + list(shape[2:]))
        # the list's axis goes just before the items' axis `ax`; the two are merged
        return fw.flatten(fw.moveaxis(self.buf, 0, ax), ax, ax + 1)

    def length(self):
        import fw

        n = self.buf.type.shape[0]
        return n if n >= 0 else fw.shape(self.buf)[0]

    def __getitem__(self, i):
        return self.buf[i]

    def __iter__(self):
        fn, ln = _context.user_frame(2)
        raise ConversionError("iterating over a list built in a loop whose condition is a "
                              "tensor", fn, ln, construct="list",
                              hint="use fw.stack(lst) and index or loop over the tensor")

    def __repr__(self):
        return f"TensorArray({self.buf.type})"


def _reread(b, scope, before) -> None:
    """After a branch or body: the tensors it wrote read again as they did before it.
    (`Builder.pop_update_scope` falls back to the enclosing update scopes and block
    0, which misses the value a tensor has inside an enclosing loop body: the
    body's argument carrying it.)"""
    for key in scope:
        if key in before:
            b._captured[key] = before[key]


def _append_op(b, name, operands, types, blocks):
    return b.append_op(_ops()[name], operands, {}, types, blocks)


def build_cond(pred, true_fn, false_fn, get_args, set_args, names, loc) -> None:
    """A ``cond`` op for ``if pred:`` with a symbolic `pred` (see the module doc)."""
    trace = _context.active()
    b = trace.builder
    pred = as_bool_value(b, pred, "`if`", loc)
    init = tuple(get_args())
    before = dict(b._captured)  # what each captured tensor reads as before the `if`
    runs = []
    for fn in (true_fn, false_fn):
        blk = Block(b.program)
        b.push(blk)
        b.push_update_scope()
        trace.symbolic_depth += 1
        try:
            set_args(init)
            fn()
            vals = tuple(get_args())
        finally:
            trace.symbolic_depth -= 1
            scope = b.pop_update_scope()
            b.pop()
            _reread(b, scope, before)
        runs.append((blk, vals, scope))
    (tb, tv, ts), (fb, fv, fs) = runs
    m = _Merge(b, (tb, fb), loc, (_exited(names, tv), _exited(names, fv)))
    tmpls = [m.merge(n, x, y) for n, x, y in zip(names, tv, fv)]
    # state updates made in either branch
    state = []
    for key in list(dict.fromkeys(list(ts) + list(fs))):
        t = (ts.get(key) or fs.get(key))[0]
        cur = b.current_value(t)
        x = ts[key][1] if key in ts else cur
        y = fs[key][1] if key in fs else cur
        m.outs[0].append(x)
        m.outs[1].append(y)
        state.append((t, len(m.outs[0]) - 1))
    xs, ys = m.outs
    types = [join_types(x.type, y.type, f"the if at {loc[0]}:{loc[1]}") for x, y in zip(xs, ys)]
    tb.outputs = list(xs)
    fb.outputs = list(ys)
    op = _append_op(b, "cond", [pred], types, [tb, fb])
    for r, x, y in zip(op.results, xs, ys):
        r._sg = x._sg and y._sg
    res = list(op.results)
    set_args(tuple(_rebuild(t, res) for t in tmpls))
    for t, i in state:
        b.record_update(t, res[i])


def build_cond_value(pred, true_fn, false_fn, loc):
    """``a if pred else b`` with a symbolic pred: a cond op yielding the values."""
    box = {"v": None}

    def run(fn):
        def f():
            box["v"] = fn()
        return f

    build_cond(pred, run(true_fn), run(false_fn), lambda: (box["v"],),
               lambda vals: box.__setitem__("v", vals[0]), ("<conditional expression>",), loc)
    return box["v"]


# ------------------------------------------------------------------ while
class _Carry:
    """How a variable's value maps onto loop-carried leaves."""

    def __init__(self, b):
        self.b = b
        self.leaves: list = []  # initial Values
        self.from_py: list = []  # leaf came from a Python number (its dtype may change)

    def flatten(self, v, dtype_hint=None):
        if isinstance(v, TensorArray):
            self.leaves.append(v.buf)
            self.from_py.append(False)
            return ("A", len(self.leaves) - 1)
        if _is_tensor(v):
            self.leaves.append(_value(self.b, v))
            self.from_py.append(False)
            return ("L", len(self.leaves) - 1)
        if _is_num(v):
            d = dtype_hint.pop(0) if dtype_hint else _py_dtype(v)
            self.leaves.append(_const(self.b, v, d))
            self.from_py.append(True)
            return ("L", len(self.leaves) - 1)
        if isinstance(v, (list, tuple)):
            return (type(v), [self.flatten(x, dtype_hint) for x in v])
        if isinstance(v, dict):
            return (dict, [(k, self.flatten(x, dtype_hint)) for k, x in v.items()])
        return ("C", v)


def _match(name, tmpl, v, out: list, b, blk, types, loc):
    """Flatten body result `v` along the carried template `tmpl` into `out`."""
    kind = tmpl[0]
    if kind == "A":
        if not isinstance(v, TensorArray):
            raise ConversionError(f"variable {name!r} is a list built in the loop but "
                                  f"{_describe(v)} after its body", loc[0], loc[1],
                                  construct="while")
        out.append(v.buf)
        return
    if kind == "L":
        t = types[tmpl[1]]
        if _is_tensor(v):
            out.append(_value(b, v))
        elif _is_num(v):
            out.append(_in_block(b, blk, lambda: _const(b, v, t.dtype)))
        else:
            raise ConversionError(f"variable {name!r} is a tensor before the loop but "
                                  f"{_describe(v)} after its body; a loop whose condition is a "
                                  f"tensor carries tensors", loc[0], loc[1], construct="while")
        return
    if kind == "C":
        c = tmpl[1]
        same = v is c
        if not same:
            try:
                same = type(v) is type(c) and not _is_tensor(v) and bool(v == c)
            except Exception:  # noqa: BLE001
                same = False
        if not same:
            raise ConversionError(
                f"variable {name!r} changes from {_describe(c)} to {_describe(v)} in the body "
                f"of a loop whose condition is a tensor; a program cannot carry that Python "
                f"value", loc[0], loc[1], construct="while",
                hint="keep it constant in the loop, or make it a tensor (numbers are carried "
                     "as tensors)")
        return
    items = tmpl[1]
    if kind is dict:
        if not isinstance(v, dict) or list(v) != [k for k, _ in items]:
            raise ConversionError(f"dict {name!r} changes its keys in the body of a loop whose "
                                  f"condition is a tensor", loc[0], loc[1], construct="while")
        for k, t in items:
            _match(f"{name}[{k!r}]", t, v[k], out, b, blk, types, loc)
        return
    if not isinstance(v, (list, tuple)) or len(v) != len(items):
        got = len(v) if isinstance(v, (list, tuple)) else _describe(v)
        raise ConversionError(
            f"{kind.__name__} {name!r} has {len(items)} items before the loop and {got} after "
            f"its body; a loop whose condition is a tensor cannot grow a Python list",
            loc[0], loc[1], construct="while",
            hint="collect the values in a tensor (e.g. fw.concat) or use a loop with a Python "
                 "trip count (for i in range(n) with an int n is unrolled)")
    for i, (t, x) in enumerate(zip(items, v)):
        _match(f"{name}[{i}]", t, x, out, b, blk, types, loc)


def build_while(cond_fn, body_fn, get_args, set_args, names, loc) -> None:
    """A ``while`` op for a loop whose condition is symbolic (see the module doc)."""
    trace = _context.active()
    b = trace.builder
    init = list(get_args())

    def unset(i):  # no value yet
        return isinstance(init[i], UndefinedVar)

    carried = [i for i in range(len(init)) if not unset(i)]
    extra: dict = {}  # index of a name undefined before the loop -> TensorType to start from
    states: dict = {}  # id(tensor) -> tensor, state carried through the loop
    dtypes: dict = {}  # leaf index -> dtype override (numbers that became other dtypes)
    arrays: dict = {}  # index of a list the body appends to -> element TensorType
    prev_types = None
    for _attempt in range(6):
        carry = _Carry(b)
        tmpls = {}
        for i in carried:
            if i in arrays:
                tmpls[i] = carry.flatten(_array_init(b, init[i], arrays[i], names[i], loc))
                continue
            tmpls[i] = carry.flatten(init[i])
        for i, v in extra.items():  # the return value: starts as a stand-in
            tmpls[i] = carry.flatten(_filler(b, v))
        for k, d in dtypes.items():  # numbers re-typed by an earlier attempt
            lv = carry.leaves[k]
            if lv.type.dtype is not d:
                from fw.core.ops import call

                carry.leaves[k] = call("cast", lv, dtype=d)
        state_list = list(states.values())
        n_vars = len(carry.leaves)
        leaves = carry.leaves + [b.current_value(t) for t in state_list]
        types = [v.type for v in leaves]
        if prev_types is not None and len(prev_types) == len(types):
            types = [join_types(p, t, f"loop variable {k}") if p.dtype is t.dtype else t
                     for k, (p, t) in enumerate(zip(prev_types, types))]
        order = list(tmpls)
        bound: list = []  # the variables as the body starts

        def bind(args, order=order, tmpls=tmpls, bound=bound, state_list=state_list,
                 n_vars=n_vars):
            vals = list(init)
            for i in order:
                vals[i] = _rebuild(tmpls[i], args)
            set_args(tuple(vals))
            bound[:] = vals
            for t, a in zip(state_list, args[n_vars:]):
                b._captured[id(t)] = a

        saved = {id(t): b.current_value(t) for t in state_list}
        cblk = Block(b.program)
        cargs = [cblk.add_arg(t) for t in types]
        for a, v in zip(cargs, leaves):
            a._sg = v._sg
        b.push(cblk)
        trace.symbolic_depth += 1
        try:
            bind(cargs)
            cv = as_bool_value(b, cond_fn(), "`while`", loc)
            cblk.outputs = [cv]
        finally:
            trace.symbolic_depth -= 1
            b.pop()
            for t in state_list:
                b._captured[id(t)] = saved[id(t)]
        bblk = Block(b.program)
        bargs = [bblk.add_arg(t) for t in types]
        for a, v in zip(bargs, leaves):
            a._sg = v._sg
        b.push(bblk)
        b.push_update_scope()
        trace.symbolic_depth += 1
        try:
            bind(bargs)
            body_fn()
            vals = list(get_args())
        finally:
            trace.symbolic_depth -= 1
            scope = b.pop_update_scope()
            b.pop()
            for t in state_list:
                b._captured[id(t)] = saved[id(t)]
        again = False
        body_start = list(bound)
        for i in order:
            v0, v1 = body_start[i], vals[i]
            if i not in arrays and isinstance(v0, list) and isinstance(v1, list) and \
                    len(v1) > len(v0) and all(x is y for x, y in zip(v0, v1)):
                elems = [e for e in v1 if _is_tensor(e)]
                if len(elems) != len(v1):
                    raise ConversionError(
                        f"list {names[i]!r} gets non-tensor items in a loop whose condition "
                        f"is a tensor", loc[0], loc[1], construct="while",
                        hint="append tensors (they are stacked into one tensor)")
                t = None
                for e in elems:
                    et = _value(b, e).type
                    t = et if t is None else join_types(t, et, f"the items of {names[i]!r}")
                arrays[i] = t
                again = True
        if again:
            continue
        outs: list = []
        for i in order:
            _match(names[i], tmpls[i], vals[i], outs, b, bblk, types, loc)
        for k, (o, t) in enumerate(zip(outs, types)):
            if o.type.dtype is not t.dtype:
                if carry.from_py[k] and k not in dtypes:
                    dtypes[k] = o.type.dtype  # `i = 0` before, `i = i + 0.5` inside
                    again = True
                else:
                    raise ConversionError(
                        f"a variable carried by the loop changes dtype in its body "
                        f"({t.dtype.name} -> {o.type.dtype.name})", loc[0], loc[1],
                        construct="while", hint="cast it back to its dtype before the loop "
                                                "body ends")
        for i, (n, v) in enumerate(zip(names, vals)):
            if i not in tmpls and i not in extra and unset(i) and n == RETVAL and \
                    _fillable(v):
                extra[i] = v
                again = True
        for key, (t, _v) in scope.items():
            if key not in states:
                states[key] = t
                again = True
        state_outs = []
        for t, a in zip(state_list, bargs[n_vars:]):
            e = scope.get(id(t))
            state_outs.append(e[1] if e is not None else a)
        outs += state_outs
        new_types = [join_types(t, o.type, f"the loop at {loc[0]}:{loc[1]}")
                     for t, o in zip(types, outs)] if not again else None
        if not again and new_types == types:
            break
        prev_types = new_types if new_types is not None else types
    else:  # pragma: no cover - types stabilise after one widening
        raise ConversionError("the types of the loop variables do not settle", loc[0], loc[1],
                              construct="while")
    bblk.outputs = outs
    op = _append_op(b, "while", leaves, types, [cblk, bblk])
    for r, v in zip(op.results, leaves):
        r._sg = v._sg
    res = list(op.results)
    final = []
    for i, (n, v) in enumerate(zip(names, init)):
        if i in tmpls:
            final.append(_rebuild(tmpls[i], res))
        elif isinstance(v, UndefinedVar):
            final.append(UndefinedVar(n, f"it is first assigned inside the loop at "
                                         f"{loc[0]}:{loc[1]}, whose condition is a tensor; give "
                                         f"it a value before the loop to use it after"))
        else:  # pragma: no cover - defined names are carried
            final.append(v)
    set_args(tuple(final))
    for t, r in zip(state_list, res[n_vars:]):
        b.record_update(t, r)


def _array_init(b, lst, elem, name, loc):
    """The starting `TensorArray` of list `lst` whose items have type `elem`."""
    import fw

    if not lst:
        return TensorArray(fw.zeros([0] + [0 if d == -1 else d for d in elem.shape],
                                    elem.dtype))
    vals = [_value(b, e) if _is_tensor(e) else None for e in lst]
    if any(v is None for v in vals):
        raise ConversionError(f"list {name!r} holds non-tensor items before a loop (whose "
                              f"condition is a tensor) appends tensors to it", loc[0], loc[1],
                              construct="while")
    return TensorArray(fw.stack(vals, axis=0))


# ------------------------------------------------------------------ for
class SymbolicRange:
    """``range(start, stop, step)`` where a bound is a symbolic tensor."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def __repr__(self):
        return f"range({self.start!r}, {self.stop!r}, {self.step!r})"

    def __iter__(self):
        fn, ln = _context.user_frame(2)
        raise ConversionError("iterating over a range whose bounds are symbolic tensors outside "
                              "a converted `for` loop", fn, ln, construct="range",
                              hint="write the loop as `for i in range(n):` inside the converted "
                                   "function")


class SymbolicEnumerate:
    """``enumerate(x, start)`` over a symbolic tensor or range."""

    def __init__(self, inner, start=0):
        self.inner = inner
        self.start = start

    def __iter__(self):
        fn, ln = _context.user_frame(2)
        raise ConversionError("iterating over enumerate() of a symbolic tensor outside a "
                              "converted `for` loop", fn, ln, construct="enumerate")


def _int64(b, v):
    from fw.core.ops import call

    if type(v) is Value:
        if v.type.dtype is not _dt.int64:
            v = call("cast", v, dtype=_dt.int64)
        if v.type.shape != ():
            v = call("reshape", v, shape=[])
        return v
    if isinstance(v, Tensor):
        return _int64(b, b.capture(v))
    return b.constant(int(v), _dt.int64)


def _iteration(b, it):
    """(start, stop, step, item(i)) of a symbolic iterable."""
    if isinstance(it, SymbolicEnumerate):
        start, stop, step, item = _iteration(b, it.inner)
        off = it.start
        return start, stop, step, lambda i: (i + off if off else i, item(i))
    if isinstance(it, SymbolicRange):
        return (_int64(b, it.start), _int64(b, it.stop), _int64(b, it.step), lambda i: i)
    x = it if type(it) is Value else b.capture(it)
    if not x.type.shape:
        fn, ln = _context.user_frame(3)
        raise ConversionError("iterating over a 0-D tensor", fn, ln, construct="for",
                              hint="a 0-D tensor has no first dimension to iterate over")
    n = x.type.shape[0]
    if n >= 0:
        stop = b.constant(n, _dt.int64)
    else:  # a dynamic first dim: its size at run time (as len() of such a tensor)
        import fw

        stop = fw.shape(x)[0]
    return b.constant(0, _dt.int64), stop, b.constant(1, _dt.int64), lambda i: x[i]


def build_for(it, body_fn, get_args, set_args, names, loc, stops=()) -> None:
    """``for target in it`` over a symbolic range or tensor: a ``while`` with an
    index (the body function receives each item). The loop also ends once one of
    its `stops` flags (its own break flag, the return flag) is set."""
    import fw

    b = _context.active().builder
    start, stop, step, item = _iteration(b, it)
    flags = [names.index(n) for n in stops]
    box = {"i": start}
    static_step = step.owner.attrs.get("fill_value") if (
        type(step) is Value and getattr(step.owner, "name", None) == "full") else None

    def get2():
        return (box["i"],) + tuple(get_args())

    def set2(vals):
        box["i"] = vals[0]
        set_args(tuple(vals[1:]))

    def cond2():
        i = box["i"]
        if static_step is not None:
            c = i < stop if static_step > 0 else i > stop
        else:
            c = fw.where(step > 0, i < stop, i > stop)
        if flags:
            vals = get_args()
            for k in flags:
                f = vals[k]
                if type(f) is Value or isinstance(f, Tensor):
                    c = fw.logical_and(c, fw.logical_not(f))
                elif f:
                    c = fw.logical_and(c, False)
        return c

    def body2():
        i = box["i"]
        body_fn(item(i))
        box["i"] = i + step

    build_while(cond2, body2, get2, set2, ("__fw_index",) + tuple(names), loc)
