"""The AST conversion: a user function's source in, a new function object out.

`convert_source(fn)` parses the function's source and rewrites it in passes
(each a small transformer below), then compiles it against the function's own
globals and closure cells:

1. `_Prepare` — statement-level rewrites that make mutation visible as
   assignment: ``x.add_(y)`` -> ``x = jst.convert_inplace(x, x.add_(y))`` (also
   ``dist.all_reduce(x)`` -> ``x = jst.convert_inplace(x, dist.all_reduce(x))``, and
   ``dist.all_reduce(p.grad)`` -> ``jst.convert_inplace_attr(p, "grad", ...)``, for
   the functions named in `INPLACE_FIRST_ARG`); ``x[i] = v`` ->
   ``x = jst.convert_setitem(x, i, v)``; ``obj.attr[i] = v`` (``op=``) ->
   ``jst.convert_setitem_state(obj.attr, i, v)`` (a state update when
   ``obj.attr`` is a captured tensor); ``x.append(v)`` ->
   ``x = jst.convert_append(x, v)``; ``super()`` -> ``super(__class__, self)``;
   private names are mangled as the class body would have done.
2. `_Flow` — ``return``/``break``/``continue`` inside compound statements become
   flag assignments (``__fw_ret``, ``__fw_brk_N``, ``__fw_cont_N``) and the
   statements after them are guarded by ``if not flag``; loop conditions test the
   flags; ``for``/``while``-``else`` becomes an ``if not brk`` after the loop.
3. `_Exprs` — calls go through ``jst.convert_call(f)(...)``; ``and``/``or``/
   ``not``, conditional expressions, chained comparisons and ``assert`` become
   helper calls (so a symbolic operand builds ops instead of calling bool()).
4. `_Control` — ``if``/``while``/``for`` become nested functions (the branches,
   the condition, the body) that read and write the enclosing variables through
   ``nonlocal``, plus a getter/setter pair and one helper call
   (``jst.convert_ifelse``/``convert_while``/``convert_for``). The helper runs
   them as Python control flow when the condition is a Python value and builds a
   ``cond``/``while`` op when it is a symbolic tensor.

Every local that is not a parameter starts as ``jst.UndefinedVar(name)`` so the
``nonlocal`` declarations always bind, and a variable that is never assigned on
some path is reported by name when it is used.

The converted code keeps the user's file name and line numbers (tracebacks and
the IR's source locations point at the user's code); ``code`` holds its text.
Nothing of the user's source is evaluated beyond what running the original
function would evaluate.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types

from fw.jit import _logging
from fw.jit.errors import ConversionError

__all__ = ["convert_source", "ConvertedFunction", "JST"]

JST = "__fw_jst"  # the runtime helper module, a closure cell of every converted function
_FLAG_PREFIXES = ("__fw_ret", "__fw_brk_", "__fw_cont_")
RETVAL = "__fw_retval"
RETFLAG = "__fw_ret"


class ConvertedFunction:
    """A converted function with what produced it."""

    __slots__ = ("fn", "code", "original", "filename", "firstlineno")

    def __init__(self, fn, code, original, filename, firstlineno):
        self.fn = fn
        self.code = code
        self.original = original
        self.filename = filename
        self.firstlineno = firstlineno


# ------------------------------------------------------------------ helpers
# Functions that write their result into their first argument and, while a program
# is built, return the new value instead (fw.distributed's in-place collectives,
# also as ``fw.distributed.stream.*``): an expression statement calling one by
# these names rebinds that argument (`convert_inplace`). Matched by name, as the
# conversion cannot resolve the callee; a call whose result is not symbolic leaves
# the variable as it is, so a same-named function elsewhere is unaffected.
INPLACE_FIRST_ARG = frozenset({"all_reduce", "broadcast", "reduce_scatter", "all_gather"})


def _callee(func) -> str | None:
    """The last name of a call's callee (``dist.all_reduce`` -> ``all_reduce``)."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _jst(attr: str) -> ast.expr:
    return ast.Attribute(value=ast.Name(id=JST, ctx=ast.Load()), attr=attr, ctx=ast.Load())


def _name(n: str, store=False) -> ast.Name:
    return ast.Name(id=n, ctx=ast.Store() if store else ast.Load())


def _call(func: ast.expr, args, keywords=()) -> ast.Call:
    return ast.Call(func=func, args=list(args), keywords=list(keywords))


def _assign(n: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(n, True)], value=value)


def _lambda(body: ast.expr, params=()) -> ast.Lambda:
    return ast.Lambda(args=_arguments(params), body=body)


def _arguments(params=()) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _def(name: str, params, body, nonlocals=(), globals_=()) -> ast.FunctionDef:
    decl = []
    if nonlocals:
        decl.append(ast.Nonlocal(names=list(nonlocals)))
    if globals_:
        decl.append(ast.Global(names=list(globals_)))
    return ast.FunctionDef(name=name, args=_arguments(params), body=decl + (list(body) or
                                                                            [ast.Pass()]),
                           decorator_list=[], returns=None, type_params=[])


def _not_any(flags) -> ast.expr:
    flags = list(flags)
    e = _name(flags[0]) if len(flags) == 1 else ast.BoolOp(op=ast.Or(),
                                                          values=[_name(f) for f in flags])
    return ast.UnaryOp(op=ast.Not(), operand=e)


def _located(new, old):
    """Give `new` (a node or a list) the location of `old`, recursively where missing."""
    nodes = new if isinstance(new, list) else [new]
    for n in nodes:
        ast.copy_location(n, old)
        for sub in ast.walk(n):
            if isinstance(sub, (ast.expr, ast.stmt, ast.excepthandler, ast.arg, ast.keyword)):
                if not hasattr(sub, "lineno"):
                    ast.copy_location(sub, old)
    return new


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _walk_scope(node):
    """ast.walk that does not enter nested scopes (their headers are not visited)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if isinstance(c, _SCOPES):
                yield c  # the node itself (a def binds its name), not its inside
                continue
            todo.append(c)


def _target_names(t, out: dict) -> None:
    for n in ast.walk(t):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.setdefault(n.id, None)


def assigned_names(stmts) -> list:
    """Names bound by `stmts` in their own scope, in first-binding order."""
    out: dict = {}
    for st in stmts:
        for n in _walk_scope(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.setdefault(n.id, None)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.setdefault(n.name, None)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    if a.name != "*":
                        out.setdefault((a.asname or a.name).split(".")[0], None)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                out.setdefault(n.name, None)
    return list(out)


def _declared(stmts):
    g, nl = set(), set()
    for st in stmts:
        for n in _walk_scope(st):
            if isinstance(n, ast.Global):
                g.update(n.names)
            elif isinstance(n, ast.Nonlocal):
                nl.update(n.names)
    return g, nl


def _param_names(args: ast.arguments) -> list:
    out = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        out.append(args.vararg.arg)
    out += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        out.append(args.kwarg.arg)
    return out


def _contains(node, kinds, stop_at_loops=False) -> bool:
    """True if `node` (a statement) contains a node of `kinds` in its scope. With
    `stop_at_loops`, the bodies of loops — `node` itself included when it is one —
    are not searched (their orelse is: a break there belongs to the enclosing
    loop)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, kinds):
            return True
        for field, value in ast.iter_fields(n):
            if stop_at_loops and isinstance(n, (ast.For, ast.While, ast.AsyncFor)) \
                    and field == "body":
                continue
            vals = value if isinstance(value, list) else [value]
            for c in vals:
                if isinstance(c, ast.AST) and not isinstance(c, _SCOPES):
                    todo.append(c)
    return False


# ------------------------------------------------------------------ pass 1
class _Prepare(ast.NodeTransformer):
    """Rewrites that turn mutation into assignment (see the module docstring)."""

    def __init__(self, first_param, class_name, rebindable):
        self.first_param = first_param
        self.class_name = class_name
        # names this function may assign (its locals, and names it declares global or
        # nonlocal): mutation of any other name (a closure's list) stays a mutation
        self.rebindable = rebindable

    def _mangle(self, n: str) -> str:
        if self.class_name and n.startswith("__") and not n.endswith("__") and \
                not n.startswith("__fw_"):
            return f"_{self.class_name.lstrip('_')}{n}"
        return n

    def visit_Name(self, node):
        node.id = self._mangle(node.id)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = self._mangle(node.attr)
        return node

    def visit_FunctionDef(self, node):  # nested functions are converted when called
        return node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id == "super" and not node.args and \
                not node.keywords and self.first_param:
            node.args = [_name("__class__"), _name(self.first_param)]
        return node

    def visit_Expr(self, node):
        self.generic_visit(node)
        c = node.value
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and \
                isinstance(c.func.value, ast.Name) and c.func.value.id in self.rebindable:
            target = c.func.value.id
            meth = c.func.attr
            if meth.endswith("_") and not meth.startswith("_"):  # x.add_(y): rebind x
                return _located(_assign(target, _call(_jst("convert_inplace"),
                                                      [_name(target), c])), node)
            if meth == "append" and len(c.args) == 1 and not c.keywords:
                return _located(_assign(target, _call(_jst("convert_append"),
                                                      [_name(target), c.args[0]])), node)
        if isinstance(c, ast.Call) and c.args and _callee(c.func) in INPLACE_FIRST_ARG:
            # ``dist.all_reduce(x)`` writes into its first argument: rebind x (or set
            # ``p.grad``) to the value the call returns while tracing
            a0 = c.args[0]
            if isinstance(a0, ast.Name) and a0.id in self.rebindable:
                return _located(_assign(a0.id, _call(_jst("convert_inplace"),
                                                     [_name(a0.id), c])), node)
            if isinstance(a0, ast.Attribute) and isinstance(a0.value, ast.Name):
                return _located(ast.Expr(value=_call(
                    _jst("convert_inplace_attr"),
                    [_name(a0.value.id), ast.Constant(a0.attr), c])), node)
        return node

    @staticmethod
    def _index_expr(sl):
        """The runtime value of a subscript's slice expression."""
        if isinstance(sl, ast.Slice):
            parts = [sl.lower, sl.upper, sl.step]
            return _call(_name("slice"), [p if p is not None else ast.Constant(None)
                                          for p in parts])
        if isinstance(sl, ast.Tuple):
            return ast.Tuple(elts=[_Prepare._index_expr(e) for e in sl.elts], ctx=ast.Load())
        return sl

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) and \
                isinstance(node.targets[0].value, ast.Name) and \
                node.targets[0].value.id in self.rebindable:
            t = node.targets[0]
            x = t.value.id
            new = _assign(x, _call(_jst("convert_setitem"),
                                   [_name(x), self._index_expr(t.slice), node.value]))
            return _located(new, node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) and \
                isinstance(node.targets[0].value, ast.Attribute):
            # ``self.buf[i] = v``: no variable to rebind; a captured tensor's write is a
            # state update (jst.convert_setitem_state)
            t = node.targets[0]
            new = ast.Expr(value=_call(_jst("convert_setitem_state"),
                                       [t.value, self._index_expr(t.slice), node.value]))
            return _located(new, node)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and \
                t.value.id in self.rebindable:
            x = t.value.id
            idx = self._index_expr(t.slice)
            cur = ast.Subscript(value=_name(x), slice=t.slice, ctx=ast.Load())
            val = ast.BinOp(left=cur, op=node.op, right=node.value)
            new = _assign(x, _call(_jst("convert_setitem"), [_name(x), idx, val]))
            return _located(new, node)
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute):
            op = type(node.op).__name__  # ast.Add -> operator.iadd, see convert_setitem_state
            new = ast.Expr(value=_call(_jst("convert_setitem_state"), [
                t.value, self._index_expr(t.slice), node.value, ast.Constant(op)]))
            return _located(new, node)
        return node


# ------------------------------------------------------------------ pass 2
class _Loop:
    __slots__ = ("brk", "cont")

    def __init__(self, brk, cont):
        self.brk = brk
        self.cont = cont


class _Flow:
    """return/break/continue inside compound statements -> flags + guards."""

    def __init__(self, counter):
        self.counter = counter
        self.ret = False

    def run(self, body: list) -> list:
        """The whole body (region form converts each top-level statement with
        `block` instead, see `convert_source`)."""
        self.ret = any(_contains(st, ast.Return) for st in body
                       if not isinstance(st, ast.Return))
        if self.ret and not isinstance(body[-1], ast.Return):
            # falling off the end returns None: say so, so that a path ending there meets
            # the paths that return a tensor (an error, not a silent zero tensor)
            body = body + [_located(ast.Return(value=None), body[-1])]
        new = self.block(body, None)
        if self.ret:  # (the return value starts as an UndefinedVar, like every local)
            new = [_assign(RETFLAG, ast.Constant(False))] + new + \
                [ast.Return(value=_name(RETVAL))]
        return new

    def _exits(self, st, loop) -> list:
        flags = []
        if self.ret and _contains(st, ast.Return):
            flags.append(RETFLAG)
        if loop is not None:
            if loop.brk and _contains(st, ast.Break, stop_at_loops=True):
                flags.append(loop.brk)
            if loop.cont and _contains(st, ast.Continue, stop_at_loops=True):
                flags.append(loop.cont)
        return flags

    def block(self, stmts, loop) -> list:
        out = []
        for i, st in enumerate(stmts):
            if isinstance(st, ast.Return):
                if self.ret:
                    val = st.value if st.value is not None else ast.Constant(None)
                    out += _located([_assign(RETVAL, val), _assign(RETFLAG, ast.Constant(True))],
                                    st)
                else:
                    out.append(st)
                return out
            if isinstance(st, ast.Break) and loop is not None:
                out.append(_located(_assign(loop.brk, ast.Constant(True)), st))
                return out
            if isinstance(st, ast.Continue) and loop is not None:
                out.append(_located(_assign(loop.cont, ast.Constant(True)), st))
                return out
            exits = self._exits(st, loop)  # (before stmt() rewrites the statement)
            out.extend(self.stmt(st, loop))
            if exits and i + 1 < len(stmts):
                rest = self.block(stmts[i + 1:], loop)
                if rest:
                    out.append(_located(ast.If(test=_not_any(exits), body=rest, orelse=[]),
                                        stmts[i + 1]))
                return out
        return out

    def _loop_ctx(self, node):
        k = next(self.counter)
        brk = f"__fw_brk_{k}" if any(_contains(s, ast.Break, True) for s in node.body) else None
        cont = f"__fw_cont_{k}" if any(_contains(s, ast.Continue, True)
                                       for s in node.body) else None
        return _Loop(brk, cont)

    def stmt(self, st, loop) -> list:
        if isinstance(st, ast.If):
            st.body = self.block(st.body, loop) or [ast.Pass()]
            st.orelse = self.block(st.orelse, loop)
            return [st]
        if isinstance(st, (ast.With, ast.AsyncWith)):
            st.body = self.block(st.body, loop) or [ast.Pass()]
            return [st]
        if isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
            # `else:` runs when the body ends normally: not after its return/break/continue
            exits = list(dict.fromkeys(f for s in st.body for f in self._exits(s, loop)))
            st.body = self.block(st.body, loop) or [ast.Pass()]
            for h in st.handlers:
                h.body = self.block(h.body, loop) or [ast.Pass()]
            st.orelse = self.block(st.orelse, loop)
            if exits and st.orelse:
                st.orelse = [_located(ast.If(test=_not_any(exits), body=st.orelse, orelse=[]),
                                      st.orelse[0])]
            st.finalbody = self.block(st.finalbody, loop)
            return [st]
        if isinstance(st, (ast.While, ast.For)):
            return self._loop(st, loop)
        return [st]

    def _loop(self, st, outer) -> list:
        lp = self._loop_ctx(st)
        has_ret = self.ret and any(_contains(s, ast.Return) for s in st.body)
        pre = []
        if lp.brk:
            pre.append(_located(_assign(lp.brk, ast.Constant(False)), st))
        body = self.block(st.body, lp) or [ast.Pass()]
        stop = ([RETFLAG] if has_ret else []) + ([lp.brk] if lp.brk else [])
        # a for loop's own stop flags: its body also assigns the break flags of the
        # loops nested in it, which must not end this one (`_Control.visit_For`)
        st._fw_stops = tuple(stop)
        if isinstance(st, ast.While):
            if stop:
                st.test = ast.BoolOp(op=ast.And(), values=[_not_any(stop), st.test])
        elif stop:  # a Python for loop keeps iterating: later iterations must do nothing
            body = [_located(ast.If(test=_not_any(stop), body=body, orelse=[]), st.body[0])]
        if lp.cont:
            body = [_located(_assign(lp.cont, ast.Constant(False)), st.body[0])] + body
        st.body = body
        orelse = st.orelse
        st.orelse = []
        post = []
        if orelse:
            ob = self.block(orelse, outer)
            if ob and lp.brk:
                post.append(_located(ast.If(test=_not_any([lp.brk]), body=ob, orelse=[]),
                                     orelse[0]))
            else:
                post.extend(ob)
        return pre + [st] + post


# ------------------------------------------------------------------ pass 3
class _Exprs(ast.NodeTransformer):
    """Calls, boolean operators, conditional expressions, chained comparisons and
    asserts -> helper calls."""

    def visit_FunctionDef(self, node):  # converted on their own when called
        return node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("super", "locals", "globals", "vars"):
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id == JST:
            return node
        node.func = _located(_call(_jst("convert_call"), [f]), f)
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        helper = "convert_and" if isinstance(node.op, ast.And) else "convert_or"
        return _located(_call(_jst(helper), [_lambda(v) for v in node.values]), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _located(_call(_jst("convert_not"), [node.operand]), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return _located(_call(_jst("convert_ifexp"), [node.test, _lambda(node.body),
                                                      _lambda(node.orelse)]), node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(_lambda(ast.Compare(left=left, ops=[op], comparators=[right])))
            left = right
        return _located(_call(_jst("convert_and"), parts), node)

    def visit_Assert(self, node):
        self.generic_visit(node)
        msg = _lambda(node.msg) if node.msg is not None else ast.Constant(None)
        return _located(ast.Expr(value=_call(_jst("convert_assert"),
                                             [node.test, msg, ast.Constant(node.lineno)])), node)


# ------------------------------------------------------------------ pass 4
class _Control(ast.NodeTransformer):
    """if/while/for -> nested functions + one helper call (see the docstring)."""

    def __init__(self, counter, user_globals):
        self.counter = counter
        self.user_globals = user_globals

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def _decls(self, names, params=()):
        nl = [n for n in names if n not in self.user_globals and n not in params]
        gl = [n for n in names if n in self.user_globals]
        return nl, gl

    def _get_set(self, k, names):
        getter = _lambda(ast.Tuple(elts=[_name(n) for n in names], ctx=ast.Load()))
        sname = f"__fw_set_{k}"
        if names:
            nl, gl = self._decls(names)
            target = ast.Tuple(elts=[_name(n, True) for n in names], ctx=ast.Store())
            setter = _def(sname, ["__fw_vals"],
                          [ast.Assign(targets=[target], value=_name("__fw_vals"))], nl, gl)
        else:
            setter = _def(sname, ["__fw_vals"], [ast.Pass()])
        names_t = ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())
        return getter, setter, sname, names_t

    @staticmethod
    def _globals_kw(gl):
        """``global_names=(...)`` for a helper whose branches/body assign globals (a
        tensor-dependent value must not leak into one, see `jst.convert_ifelse`)."""
        if not gl:
            return []
        return [ast.keyword(arg="global_names",
                            value=ast.Tuple(elts=[ast.Constant(n) for n in gl], ctx=ast.Load()))]

    def visit_If(self, node):
        names = assigned_names(node.body + node.orelse)
        self.generic_visit(node)
        k = next(self.counter)
        nl, gl = self._decls(names)
        tdef = _def(f"__fw_true_{k}", [], node.body, nl, gl)
        fdef = _def(f"__fw_false_{k}", [], node.orelse, nl, gl)
        getter, setter, sname, names_t = self._get_set(k, names)
        call = ast.Expr(value=_call(_jst("convert_ifelse"), [
            node.test, _name(tdef.name), _name(fdef.name), getter, _name(sname), names_t,
            ast.Constant(node.lineno)], self._globals_kw(gl)))
        return _located([tdef, fdef, setter, call], node)

    def visit_While(self, node):
        names = assigned_names(node.body)
        self.generic_visit(node)
        k = next(self.counter)
        nl, gl = self._decls(names)
        cdef = _def(f"__fw_cond_{k}", [], [ast.Return(value=node.test)])
        bdef = _def(f"__fw_body_{k}", [], node.body, nl, gl)
        getter, setter, sname, names_t = self._get_set(k, names)
        call = ast.Expr(value=_call(_jst("convert_while"), [
            _name(cdef.name), _name(bdef.name), getter, _name(sname), names_t,
            ast.Constant(node.lineno)], self._globals_kw(gl)))
        return _located([cdef, bdef, setter, call], node)

    def visit_For(self, node):
        tnames: dict = {}
        _target_names(node.target, tnames)
        names = list(dict.fromkeys(list(tnames) + assigned_names(node.body)))
        self.generic_visit(node)
        k = next(self.counter)
        item = f"__fw_item_{k}"
        nl, gl = self._decls(names, (item,))
        body = [ast.Assign(targets=[node.target], value=_name(item))] + node.body
        bdef = _def(f"__fw_body_{k}", [item], body, nl, gl)
        getter, setter, sname, names_t = self._get_set(k, names)
        call = ast.Expr(value=_call(_jst("convert_for"), [
            node.iter, _name(bdef.name), getter, _name(sname), names_t,
            ast.Constant(node.lineno), ast.Constant(getattr(node, "_fw_stops", ()))],
            self._globals_kw(gl)))
        return _located([bdef, setter, call], node)


# ------------------------------------------------------------------ driver
def _region_body(groups, originals, eager, ctl, local_names, params, user_globals) -> list:
    """One nested function per top-level statement, then
    ``return jst.run_regions(stmts, getter, setter, names, lines, texts, eager)``."""
    names = list(dict.fromkeys(list(params) + list(local_names)))
    nl = [n for n in names if n not in user_globals]
    out = []
    fnames = []
    for k, (stmts, orig) in enumerate(zip(groups, originals)):
        conv = []
        for st in stmts:
            r = ctl.visit(st)
            conv.extend(r if isinstance(r, list) else [r])
        assigned = [n for n in assigned_names(stmts) if n in set(nl)]
        gl = [n for n in assigned_names(stmts) if n in user_globals]
        d = _def(f"__fw_stmt_{k}", [], conv, assigned, gl)
        out.append(_located(d, orig))
        fnames.append(d.name)
    getter = _lambda(ast.Tuple(elts=[_name(n) for n in names], ctx=ast.Load()))
    target = ast.Tuple(elts=[_name(n, True) for n in names], ctx=ast.Store())
    setter = _def("__fw_set_regions", ["__fw_vals"],
                  [ast.Assign(targets=[target], value=_name("__fw_vals"))],
                  [n for n in names if n not in user_globals],
                  [n for n in names if n in user_globals])
    lines = [o.lineno for o in originals]
    texts = [linecache.getline(o.__dict__.get("_fw_file", ""), o.lineno).strip() or
             ast.unparse(o).split("\n")[0] for o in originals]
    rets = [_contains(o, ast.Return) for o in originals]
    call = _call(_jst("run_regions"), [
        ast.Tuple(elts=[_name(f) for f in fnames], ctx=ast.Load()), getter,
        _name("__fw_set_regions"),
        ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load()),
        ast.Constant(tuple(lines)), ast.Constant(tuple(texts)), ast.Constant(tuple(eager)),
        ast.Constant(tuple(rets))])
    out.append(setter)
    out.append(ast.Return(value=call))
    return out


_EAGER_METHODS = {"numpy": "it calls .numpy()", "item": "it calls .item()",
                  "tolist": "it calls .tolist()"}


def _eager_statement(st):
    """Why statement `st` must run eagerly (detected without running it), or None."""
    for n in _walk_scope(st):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in _EAGER_METHODS:
            return _EAGER_METHODS[n.func.attr]
    return None


def _counter():
    k = 0
    while True:
        yield k
        k += 1


class _Unsupported(ast.NodeVisitor):
    """Constructs the conversion refuses (in the function's own scope)."""

    def __init__(self, filename):
        self.filename = filename

    def check(self, fdef):
        for st in fdef.body:
            for n in _walk_scope(st):
                if isinstance(n, (ast.Yield, ast.YieldFrom)):
                    raise ConversionError(
                        "a generator function (`yield`) cannot be converted to a static "
                        "program; return a list/tuple of tensors instead",
                        self.filename, n.lineno, "yield")
                if isinstance(n, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
                    raise ConversionError("async code cannot be converted to a static program",
                                          self.filename, n.lineno, "async")


def _find_def(tree, name):
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return n
    raise ConversionError(f"could not find the definition of {name} in its source", None,
                          None, "source")


def _class_name(fn) -> str | None:
    parts = fn.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None


def convert_source(fn, jst_module, regions=False) -> ConvertedFunction:
    """Convert plain function `fn` (see the module docstring). With `regions`, the
    converted function runs its top-level statements through
    ``jst.run_regions`` (each one a nested function), which traces consecutive
    convertible statements into programs and runs the others eagerly
    (`fw.jit._regions`).

    Raises:
        OSError / TypeError: the source is not available (the caller then runs the
            function unconverted).
        ConversionError: the function uses a construct that cannot be converted.
    """
    filename = fn.__code__.co_filename
    _logging.log(1, f"converting {fn.__qualname__} ({filename}:{fn.__code__.co_firstlineno})")
    lines, first = inspect.getsourcelines(fn)
    src = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(src)
    except SyntaxError as e:  # e.g. a lambda in the middle of an expression
        raise OSError(f"the source of {fn.__qualname__} cannot be parsed on its own: {e}") \
            from None
    ast.increment_lineno(tree, first - 1)
    fdef = _find_def(tree, fn.__name__)
    if fdef.name != fn.__name__:
        raise OSError(f"the source found for {fn.__qualname__} defines {fdef.name}")
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise ConversionError("async functions cannot be converted to a static program",
                              filename, fdef.lineno, "async def")
    _Unsupported(filename).check(fdef)
    fdef.decorator_list = []
    params = _param_names(fdef.args)
    user_globals, user_nonlocals = _declared(fdef.body)
    counter = _counter()

    rebindable = set(params) | set(assigned_names(fdef.body)) | user_globals | user_nonlocals
    prep = _Prepare(params[0] if params else None, _class_name(fn), rebindable)
    body = [prep.visit(st) for st in fdef.body]
    body = [s for st in body for s in (st if isinstance(st, list) else [st])]
    doc = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc, body = body[0], body[1:]
    originals = list(body)
    for o in originals:
        o._fw_file = filename
    eager_reasons = [_eager_statement(o) for o in originals] if regions else None
    flow = _Flow(counter)
    groups = None
    if regions:
        flow.ret = any(_contains(st, ast.Return) for st in body)
        groups = [[_Exprs().visit(s) for s in flow.block([st], None)] for st in body]
        body = [s for g in groups for s in g]
    else:
        body = [_Exprs().visit(st) for st in flow.run(body)]
    local_names = [n for n in assigned_names(body) if n not in params and
                   n not in user_globals and n not in user_nonlocals]
    if regions:
        for n in (RETFLAG, RETVAL):
            if n not in local_names:
                local_names.append(n)
    ctl = _Control(counter, user_globals)
    if regions:
        new_body = _region_body(groups, originals, eager_reasons, ctl, local_names, params,
                                user_globals)
    else:
        new_body = []
        for st in body:
            r = ctl.visit(st)
            new_body.extend(r if isinstance(r, list) else [r])
    prologue = [_assign(n, _call(_jst("UndefinedVar"), [ast.Constant(n)])) for n in local_names]
    if regions:
        prologue += [_assign(RETFLAG, ast.Constant(False))]
    prologue = _located(prologue, fdef) if prologue else []
    fdef.body = ([doc] if doc is not None else []) + prologue + new_body
    if not fdef.body:
        fdef.body = [ast.Pass()]

    freevars = list(fn.__code__.co_freevars)
    factory = ast.FunctionDef(name="__fw_factory", args=_arguments([JST] + freevars),
                              body=[fdef, ast.Return(value=_name(fdef.name))],
                              decorator_list=[], returns=None, type_params=[])
    _located(factory, fdef)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code_text = ast.unparse(fdef)
    _logging.log_code(fn.__qualname__, code_text)
    try:
        code = compile(module, filename, "exec")
    except SyntaxError as e:  # a bug of the conversion: say so, with the generated code
        raise ConversionError(f"the converted code of {fn.__qualname__} does not compile "
                              f"({e.msg}); this is a bug in fw.jit — mark the function with "
                              f"@fw.jit.not_to_static to run it unconverted",
                              filename, e.lineno, "conversion") from None
    inner = None
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == "__fw_factory":
            for cc in c.co_consts:
                if isinstance(cc, types.CodeType) and cc.co_name == fdef.name:
                    inner = cc
    if inner is None:  # pragma: no cover - the factory always holds it
        raise ConversionError("internal: converted code not found", filename, fdef.lineno,
                              "conversion")
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = []
    for n in inner.co_freevars:
        if n == JST:
            closure.append(types.CellType(jst_module))
        elif n in cells:
            closure.append(cells[n])
        else:  # pragma: no cover - every free name of the converted code is one of these
            raise ConversionError(f"internal: free variable {n!r} has no cell", filename,
                                  fdef.lineno, "conversion")
    new = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(closure))
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    new.__fw_converted__ = True
    return ConvertedFunction(new, code_text, fn, filename, first)
