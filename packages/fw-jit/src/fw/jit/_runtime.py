"""The runtime helpers converted code calls (``__fw_jst.<name>`` in the code).

Each helper does what Python would do when its operands are Python values (so
converted code runs eagerly exactly like the original), and builds IR when an
operand is a symbolic tensor (a `Value`) while a program is being traced:
``convert_ifelse``/``convert_while``/``convert_for`` build ``cond``/``while``
ops (`fw.jit._cflow`), the boolean helpers build ``logical_*`` ops, and so on.
"""

from __future__ import annotations

import builtins

import numpy as np

from fw.core import dtypes as _dt
from fw.core.internal import build_state
from fw.core.ir.core import Value
from fw.core.tensor import Tensor, wrap
from fw.jit import _cflow, _context
from fw.jit._context import UndefinedVar
from fw.jit.errors import ConversionError

__all__ = ["UndefinedVar", "convert_ifelse", "convert_while", "convert_for",
           "convert_and", "convert_or", "convert_not", "convert_ifexp", "convert_assert",
           "convert_setitem", "convert_setitem_state", "convert_append", "convert_inplace",
           "convert_inplace_attr",
           "convert_len", "convert_print", "convert_range", "convert_enumerate",
           "convert_isinstance", "run_regions"]


def _sym(v) -> bool:
    return type(v) is Value


def _building() -> bool:
    return build_state.builder is not None


def _loc(lineno):
    fn, ln = _context.user_frame(3)
    return fn, (lineno if lineno is not None else ln)


# ------------------------------------------------------------------ control flow
def _symbolic_leaf(v) -> bool:
    if _sym(v) or isinstance(v, _cflow.TensorArray):
        return True
    if isinstance(v, (list, tuple)):
        return any(_symbolic_leaf(x) for x in v)
    if isinstance(v, dict):
        return any(_symbolic_leaf(x) for x in v.values())
    return False


def _keep_globals_concrete(init, get_args, set_args, names, global_names, loc, what):
    """A global the op's branches/body assign must not take a symbolic value: it
    would outlive the trace (module state holding a value of a program). The
    variables get their values from before the op back and the error names it."""
    for n, v in zip(names, get_args()):
        if n in global_names and _symbolic_leaf(v):
            set_args(init)
            raise ConversionError(
                f"global {n!r} is assigned in {what} whose condition is a tensor, so its value "
                f"after it depends on the tensor; a program cannot write a Python global",
                *loc, construct=what, hint="return the value from the function instead (or "
                                           "keep it in a tensor and update it with set_value)")


def convert_ifelse(pred, true_fn, false_fn, get_args, set_args, names, lineno=None,
                   global_names=()):
    """``if pred: true_fn() else: false_fn()`` — a ``cond`` op when pred is symbolic."""
    if _sym(pred) and _building():
        init = tuple(get_args())
        loc = _loc(lineno)
        _cflow.build_cond(pred, true_fn, false_fn, get_args, set_args, names, loc)
        if global_names:
            _keep_globals_concrete(init, get_args, set_args, names, global_names, loc, "an `if`")
        return
    if isinstance(pred, UndefinedVar):
        pred.fail("used as the condition of an `if`")
    if pred:
        true_fn()
    else:
        false_fn()


def convert_while(cond_fn, body_fn, get_args, set_args, names, lineno=None, global_names=()):
    """``while cond_fn(): body_fn()`` — a ``while`` op once the condition is symbolic."""
    while True:
        c = cond_fn()
        if _sym(c) and _building():
            init = tuple(get_args())
            loc = _loc(lineno)
            _cflow.build_while(cond_fn, body_fn, get_args, set_args, names, loc)
            if global_names:
                _keep_globals_concrete(init, get_args, set_args, names, global_names, loc,
                                       "a `while` loop")
            return
        if isinstance(c, UndefinedVar):
            c.fail("used as the condition of a `while`")
        if not c:
            return
        body_fn()


def convert_for(iterable, body_fn, get_args, set_args, names, lineno=None, stops=(),
                global_names=()):
    """``for item in iterable: body_fn(item)`` — a ``while`` op over a symbolic
    tensor or range; otherwise Python iteration that stops when the converted
    body set one of the loop's own `stops` flags (its break flag, the return
    flag) to True. (A flag that became a tensor cannot stop Python iteration: the
    remaining iterations run guarded by ``if not flag``, see `fw.jit._transform`.)"""
    if isinstance(iterable, UndefinedVar):
        iterable.fail("iterated over")
    if (_sym(iterable) or isinstance(iterable, (_cflow.SymbolicRange,
                                                _cflow.SymbolicEnumerate))) and _building():
        init = tuple(get_args())
        loc = _loc(lineno)
        _cflow.build_for(iterable, body_fn, get_args, set_args, names, loc, stops)
        if global_names:
            _keep_globals_concrete(init, get_args, set_args, names, global_names, loc,
                                   "a `for` loop")
        return
    stops = [names.index(n) for n in stops]
    for item in iterable:
        body_fn(item)
        if stops:
            vals = get_args()
            if any(vals[i] is True for i in stops):
                break


def _bool_value(v):
    import fw

    if v.dtype is not _dt.bool_:
        v = fw.cast(v, "bool")
    return v


def _logical(op, a, b):
    import fw

    if not (_sym(a) or isinstance(a, Tensor)):
        a = bool(a)
    if not (_sym(b) or isinstance(b, Tensor)):
        b = bool(b)
    if isinstance(a, bool) and isinstance(b, bool):
        return a and b if op == "and" else a or b
    if isinstance(a, bool):
        a, b = b, a
    a = _bool_value(a)
    if not isinstance(b, bool):
        b = _bool_value(b)
    return fw.logical_and(a, b) if op == "and" else fw.logical_or(a, b)


def _logic(op, fns):
    v = fns[0]()
    for k, f in enumerate(fns[1:], 1):
        if _sym(v) and _building():
            rest = [g() for g in fns[k:]]  # a symbolic operand: both sides are evaluated
            for r in rest:
                v = _logical(op, v, r)
            return v
        if isinstance(v, UndefinedVar):
            v.fail(f"used as an operand of `{op}`")
        if (not v) if op == "and" else v:
            return v
        v = f()
    return v


def convert_and(*fns):
    """``a and b and ...`` (operands as thunks): Python's short-circuit on Python
    values, ``logical_and`` once an operand is symbolic."""
    return _logic("and", fns)


def convert_or(*fns):
    """``a or b or ...`` (operands as thunks)."""
    return _logic("or", fns)


def convert_not(x):
    """``not x``; ``logical_not`` on a symbolic tensor."""
    if _sym(x) and _building():
        import fw

        return fw.logical_not(_bool_value(x))
    if isinstance(x, UndefinedVar):
        x.fail("used as the operand of `not`")
    return not x


def convert_ifexp(pred, true_fn, false_fn):
    """``a if pred else b``; a ``cond`` op yielding the value when pred is symbolic."""
    if _sym(pred) and _building():
        return _cflow.build_cond_value(pred, true_fn, false_fn, _loc(None))
    if isinstance(pred, UndefinedVar):
        pred.fail("used as a condition")
    return true_fn() if pred else false_fn()


def convert_assert(test, msg_fn=None, lineno=None):
    """``assert test, msg``. On a symbolic test the check runs with the program: it
    is ANDed into a flag the program writes (a state update) and the caller raises
    `AssertionError` after the run when it is false."""
    if _sym(test) and _building():
        import fw

        trace = _context.active()
        b = trace.builder
        fn, ln = _loc(lineno)
        ok = _bool_value(test)
        if ok.type.shape != ():
            ok = fw.all(ok)
        flag = None
        for f, _m, afn, aln in trace.asserts:
            if (afn, aln) == (fn, ln):
                flag = f
        if flag is None:
            flag = wrap(np.ones((), np.bool_))
            flag.name = f"__fw_assert_{len(trace.asserts)}"
            msg = None
            if msg_fn is not None:
                m = msg_fn()
                msg = m if not (_sym(m) or isinstance(m, Tensor)) else None
            trace.asserts.append((flag, msg, fn, ln))
        b.record_update(flag, fw.logical_and(b.current_value(flag), ok))
        return
    if isinstance(test, UndefinedVar):
        test.fail("asserted")
    if not test:
        if msg_fn is None:
            raise AssertionError
        raise AssertionError(msg_fn())


# ------------------------------------------------------------------ mutation
def convert_setitem(x, index, value):
    """``x[index] = value``; returns the new x (a new Value when x is symbolic)."""
    if isinstance(x, UndefinedVar):
        x.fail("indexed")
    if (_sym(x) or (isinstance(x, Tensor) and _building())) and not isinstance(x, (list, dict)):
        from fw.core.ops.indexing import setitem

        return setitem(x, index, value)
    x[index] = value
    return x


_AUG_OPS = {"Add": "iadd", "Sub": "isub", "Mult": "imul", "Div": "itruediv",
            "FloorDiv": "ifloordiv", "Mod": "imod", "Pow": "ipow", "MatMult": "imatmul",
            "BitAnd": "iand", "BitOr": "ior", "BitXor": "ixor", "LShift": "ilshift",
            "RShift": "irshift"}


def convert_setitem_state(x, index, value, aug=None):
    """``obj.attr[index] = value`` (``obj.attr[index] op= value`` with `aug`, the
    name of the `ast` operator). While a program is being built, a concrete tensor
    there (a buffer, a tensor held in an attribute) is not written: the write is
    recorded as a state update of the program (inside a branch or loop body it is
    carried out of the op like any other update); anything else is assigned as
    Python does."""
    if aug is not None:
        import operator

        value = getattr(operator, _AUG_OPS[aug])(x[index], value)
    b = build_state.builder
    if b is not None and isinstance(x, Tensor):
        from fw.core.ops.indexing import setitem

        b.record_update(x, setitem(b.current_value(x), index, value))
        return
    x[index] = value


def convert_append(lst, value):
    """``lst.append(value)``; inside a branch or body traced into a nested block a
    list is not mutated but replaced (each branch starts from the same list)."""
    if isinstance(lst, UndefinedVar):
        lst.fail("appended to")
    if isinstance(lst, _cflow.TensorArray):
        return lst.append(value)
    t = _context.active()
    if isinstance(lst, list) and t is not None and t.symbolic_depth > 0:
        return lst + [value]
    lst.append(value)
    return lst


def convert_inplace(x, result):
    """``x.op_(...)``: the variable takes the result when it is symbolic (a program's
    values are immutable); eager in-place ops already changed x."""
    return result if _sym(result) else x


def convert_inplace_attr(obj, attr, result):
    """``f(obj.attr, ...)`` for a function writing into its first argument (see
    `fw.jit._transform.INPLACE_FIRST_ARG`): when the call returned a symbolic value,
    ``obj.attr`` takes it — for a parameter's ``.grad`` the traced training state
    does (so ``opt.step()`` reads the new gradient). A concrete tensor the program
    captured needs nothing here: the call recorded its state update itself."""
    if not _sym(result):
        return
    if attr == "grad" and isinstance(obj, Tensor):
        from fw.jit import _training

        tt = _training.active()
        if tt is not None:
            tt.assign_grad(obj, result)
            return
    if _sym(getattr(obj, attr, None)):
        setattr(obj, attr, result)


# ------------------------------------------------------------------ builtins
def convert_len(x):
    """``len(x)``; for a symbolic tensor with a dynamic first dimension, a 0-D
    int64 tensor."""
    if _sym(x):
        if not x.type.shape:
            raise TypeError("len() of a 0-D tensor")
        n = x.type.shape[0]
        if n >= 0:
            return n
        import fw

        return fw.shape(x)[0]
    if isinstance(x, UndefinedVar):
        x.fail("passed to len()")
    if isinstance(x, _cflow.TensorArray):
        return x.length()
    return builtins.len(x)


def _describe(v):
    if _sym(v):
        return f"Tensor(shape={list(v.type.shape)}, dtype={v.type.dtype.name}, symbolic)"
    return v


def convert_print(*args, sep=" ", end="\n", file=None, flush=False):
    """``print(...)``. With ``full_graph=False`` printing a symbolic tensor is a
    graph break (a `ConversionError` that makes the statement run eagerly). Else
    symbolic tensors are printed with their values each time the
    program runs (from block 0); inside a tensor-dependent branch or loop body they
    print once, at trace time, as their type (noted in the conversion report)."""
    t = _context.active()
    if not any(_sym(a) for a in args) or t is None:
        for a in args:
            if isinstance(a, UndefinedVar):
                a.fail("printed")
        builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        return
    if t.graph_breaks:  # full_graph=False: print the values eagerly, in order
        fn, ln = _context.user_frame(2)
        raise ConversionError("print() of a tensor needs its values (a graph break: the "
                              "statement runs eagerly)", fn, ln, construct="print")
    if len(t.builder.blocks) > 1:
        fn, ln = _context.user_frame(2)
        t.note(fn, ln, "print() of a tensor inside an if/while whose condition is a tensor "
                       "prints at trace time only (its type, not its values)")
        builtins.print(*[_describe(a) for a in args], sep=sep, end=end, file=file, flush=flush)
        return
    t.prints.append((list(args), sep, end, file, flush))


def convert_range(*args):
    """``range(...)``; a `SymbolicRange` when a bound is a symbolic tensor."""
    if any(_sym(a) for a in args) and _building():
        if len(args) == 1:
            return _cflow.SymbolicRange(0, args[0], 1)
        if len(args) == 2:
            return _cflow.SymbolicRange(args[0], args[1], 1)
        if len(args) == 3:
            return _cflow.SymbolicRange(*args)
        raise TypeError(f"range expected at most 3 arguments, got {len(args)}")
    # concrete bounds go to Python's range as they are: an integer Tensor is an index
    # (Tensor.__index__), and a float one or a Python float is refused as eagerly
    return builtins.range(*args)


def convert_enumerate(x, start=0):
    """``enumerate(x)``; over a symbolic tensor or range a `SymbolicEnumerate`."""
    if (_sym(x) or isinstance(x, _cflow.SymbolicRange)) and _building():
        return _cflow.SymbolicEnumerate(x, start)
    return builtins.enumerate(x, start)


def convert_isinstance(obj, cls):
    """``isinstance``: a symbolic tensor is an instance of ``fw.Tensor``."""
    if _sym(obj):
        classes = cls if isinstance(cls, tuple) else (cls,)
        if any(c is Tensor or c is Value or (isinstance(c, type) and issubclass(Tensor, c))
               for c in classes if isinstance(c, type)):
            return True
    return builtins.isinstance(obj, cls)


def _no_value(what, hint):
    def f(x, *a, **k):
        if _sym(x):
            fn, ln = _context.user_frame(2)
            raise ConversionError(f"calling `{what}` on a symbolic tensor: its value is not "
                                  f"known while the program is built", fn, ln, construct=what,
                                  hint=hint)
        return getattr(builtins, what)(x, *a, **k)

    f.__name__ = f"convert_{what}"
    return f


convert_int = _no_value("int", "keep it a tensor (x.astype('int64')), or compute the Python "
                               "number outside the converted function")
convert_float = _no_value("float", "keep it a tensor (x.astype('float32')), or compute the "
                                   "Python number outside the converted function")
convert_bool = _no_value("bool", "use it directly as an `if`/`while` condition (converted to "
                                 "cond/while), or x.astype('bool')")
convert_complex = _no_value("complex", "keep it a tensor")


# ------------------------------------------------------------------ regions
# the `fw.jit._regions.RegionRunner`s running, innermost last (full_graph=False)
_RUNNERS: list = []


def _truth(flag) -> bool:
    if flag is True:
        return True
    if isinstance(flag, Tensor):
        return bool(flag)
    return False


def run_regions(stmts, get, set_, names, lines, texts, eager, rets):
    """Converted code of a function in region form calls this (see the module doc)."""
    if not _RUNNERS:  # called outside a runner (e.g. eagerly): plain sequential Python
        for s in stmts:
            vals = get()
            if _truth(vals[names.index("__fw_ret")]):
                break
            s()
        out = get()[names.index("__fw_retval")]
        return None if isinstance(out, UndefinedVar) else out  # fell off the end
    return _RUNNERS[-1].run(stmts, get, set_, names, lines, texts, eager, rets)
