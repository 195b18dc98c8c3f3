"""The public functions and Tensor methods, derived from the op table.

For each op with ``api`` set, a function with the Paddle signature
``name(inputs..., attrs=defaults..., name=None)`` is generated (real Python
source, so signatures and defaults are introspectable and argument binding is
as cheap as a hand-written function). Ops whose public signature is not a plain
mapping of inputs and attributes get a hand-written wrapper registered with
`public` next to their declaration; it takes precedence. Their compiled code
is kept between processes in this package's ``__pycache__`` (`_codecache`).

The hottest ops get specialised entry points (`_make_binary`, `_make_unary`):
when every input is a cpu Tensor of one dtype (or a Python number next to a
floating tensor) and no program is being built, they call the kernel directly
and skip the general dispatcher; everything else falls through to
`fw.core.dispatch.invoke`, which has the full semantics.

The same function objects are attached to `Tensor` and to the IR `Value`, so a
method call behaves identically in eager and static code.
"""

from __future__ import annotations

import keyword

import numpy as np

from fw.core import tensor as _tensor
from fw.core.dispatch import grad_state, invoke, observe_state
from fw.core.ir.core import Value
from fw.core.ir.core import _state as _build
from fw.core.ops._codecache import CodeCache
from fw.core.ops._registry import OPS, get_op
from fw.core.tensor import Tensor, _new, wrap

__all__ = ["public", "PUBLIC", "METHODS", "call", "entry", "install", "FUNCTIONS"]

PUBLIC: dict = {}  # name -> hand-written public function
METHODS: dict = {}  # method name -> function (self first)
DUNDERS: dict = {}
FUNCTIONS: dict = {}  # every public function, after install()
# second public names of generated functions: {new name: (existing name, also a method)},
# filled by api modules (composite.py) and resolved by install()
SECOND_NAMES: dict = {}
_installed = [False]

_ndarray = np.ndarray
_asarray = np.asarray
_codes = CodeCache()  # compiled generated functions, kept between processes


def public(name=None, *, method=False, dunders=(), aliases=(), method_aliases=()):
    """Register a hand-written public function (and optionally a Tensor method)."""

    def deco(fn):
        n = name or fn.__name__
        PUBLIC[n] = fn
        for a in aliases:
            PUBLIC[a] = fn
        if method:
            METHODS[n if method is True else method] = fn
        for m in method_aliases:
            METHODS[m] = fn
        for d in dunders:
            DUNDERS[d] = fn
        return fn

    return deco


def call(op_name: str, *args, **attrs):
    """Invoke an op by name: positional tensor inputs, keyword attributes."""
    op = get_op(op_name)
    n = len(op.input_names)
    ins = list(args[:n]) + [None] * (n - len(args))
    at = dict(op.attrs)
    for k, v in attrs.items():
        if k not in at:
            raise TypeError(f"{op_name}() got an unexpected attribute {k!r}; "
                            f"it has {list(op.attrs)}")
        at[k] = v
    return invoke(op, ins, at)


_ENTRIES: dict = {}


def entry(op_name: str):
    """The generated eager entry point of an op, public or not: ``entry("tanh_grad")(out,
    g)`` takes the specialised path (``fast="binary"``/``"unary"`` ops) that
    ``call`` cannot, which matters where an op runs per node of a backward pass."""
    fn = _ENTRIES.get(op_name)
    if fn is None:
        op = get_op(op_name)
        fn = _ENTRIES[op_name] = _function_for(op, op_name)
    return fn


# ---------------------------------------------------------------- generation
def _finish1(op, args, attrs, r, need):
    t = wrap(r)
    if need and op.differentiable and grad_state.enabled:
        grad_state.record(op, args, attrs, (t,))
    return t


def _finishn(op, args, attrs, rs, need):
    out = tuple(wrap(r) for r in rs)
    if need and op.differentiable and grad_state.enabled:
        grad_state.record(op, args, attrs, out)
    return out


def _make_generic(op, fname):
    """The public function of `op`: an inlined eager lane for the common case
    (every input a cpu Tensor, no dtype cast needed, no program being built, no
    autocast), else the general dispatcher `invoke`."""
    from fw.core import place as _pl
    from fw.core.dispatch import amp_state

    params, ins = [], []
    ns = {"_invoke": invoke, "_op": op, "_ref": op.reference, "_bs": _build, "_amp": amp_state,
          "_T": Tensor, "_nd": _ndarray, "_canon": op.canon, "_pl": _pl,
          "_fin": _finish1 if op.num_outputs == 1 else _finishn, "_obs": observe_state}
    for i, n in enumerate(op.input_names):
        params.append(f"{n}=None" if i in op.optional else n)
        ins.append(n)
    items = []
    for j, (k, v) in enumerate(op.attrs.items()):
        ns[f"_d{j}"] = v
        params.append(f"{k}=_d{j}")
        items.append(f"{k!r}: {k}")
    if "name" not in op.attrs and "name" not in op.input_names:
        params.append("name=None")
    call_args = f"[{', '.join(ins)}], {{{', '.join(items)}}}"
    lines = [f"def {fname}({', '.join(params)}):"]
    fast = op.variadic < 0 and op.num_outputs >= 1
    if fast:
        tconds, aconds, arrs, grads, prom = [], [], [], [], []
        for i, n in enumerate(op.input_names):
            if i in op.optional:
                tconds.append(f"({n} is None or isinstance({n}, _T))")
                arrs.append(f"_a{i} = None if {n} is None else {n}._data")
                aconds.append(f"(_a{i} is None or type(_a{i}) is _nd)")
                grads.append(f"({n} is not None and not {n}._sg)")
            else:
                tconds.append(f"isinstance({n}, _T)")
                arrs.append(f"_a{i} = {n}._data")
                aconds.append(f"type(_a{i}) is _nd")
                grads.append(f"not {n}._sg")
            if i in op.promote_idx:
                prom.append(i)
        # promoted inputs must already share one dtype (and be inexact if to_float)
        req = [i for i in prom if i not in op.optional]
        for i in prom[1:]:
            ref = prom[0]
            if i in op.optional or ref in op.optional:
                aconds.append(f"(_a{i} is None or _a{ref} is None or _a{i}.dtype is _a{ref}.dtype)")
            else:
                aconds.append(f"_a{i}.dtype is _a{ref}.dtype")
        if op.to_float and req:
            aconds.append(f"_a{req[0]}.dtype.kind in 'fc'")
        elif op.to_float and prom:
            fast = False
        if not op.input_names:  # creation ops: only when the current device is the cpu
            tconds.append("_pl._current[0].kind == 'cpu'")
    if fast:
        head = " and ".join(["_bs.builder is None", "_obs.hook is None", "not _amp.enabled"]
                            + tconds)
        need = " or ".join(grads) if grads else "False"
        lines.append(f"    if {head}:")
        for a in arrs:
            lines.append(f"        {a}")
        if aconds:
            lines.append(f"        if {' and '.join(aconds)}:")
            ind = "            "
        else:
            ind = "        "
        lines.append(f"{ind}_at = {{{', '.join(items)}}}")
        if op.canon is not None:
            lines.append(f"{ind}_at = _canon(_at)")
        karrs = ", ".join(f"_a{i}" for i in range(len(op.input_names)))
        lines.append(f"{ind}try:")
        sep = ", " if karrs else ""
        lines.append(f"{ind}    _r = (_op.kernels.get('cpu') or _ref)({karrs}{sep}**_at)")
        lines.append(f"{ind}except Exception:")
        lines.append(f"{ind}    return _invoke(_op, {call_args})")
        lines.append(f"{ind}return _fin(_op, [{', '.join(ins)}], _at, _r, {need})")
    lines.append(f"    return _invoke(_op, {call_args})")
    src = "\n".join(lines) + "\n"
    exec(_codes.compile(src, f"<fw op {op.name}>"), ns)
    fn = ns[fname]
    fn.__doc__ = op.doc or f"The ``{op.name}`` op (generated from the op table)."
    fn.__module__ = "fw"
    fn.__qualname__ = fname
    fn.op = op
    fn.source = src
    return fn


# The specialised lanes of `_make_binary` and `_make_unary` build their result
# inline (the body of `fw.core.tensor.wrap`) rather than calling `wrap`: the call
# costs 40-55 ns, 5-8% of `a + b` (CPU time, measured in one process against the
# inline form). Everything else, the generic lane (`_finish1`) included, calls `wrap`.
def _make_binary(op, fname):
    kern = op.kernels.get("cpu") or op.reference
    gs = grad_state
    bs = _build
    obs = observe_state  # the profiler / NaN check send every op to `invoke`
    inv = invoke
    T = Tensor
    nd = _ndarray
    new = _new
    asarray = _asarray
    diff = op.differentiable
    float_only = op.to_float

    def f(x, y, name=None):
        if type(x) is T and bs.builder is None and obs.hook is None:
            a = x._data
            ty = type(y)
            if ty is T:
                b = y._data
                if a.dtype is b.dtype and type(a) is nd and type(b) is nd and (
                        not float_only or a.dtype.kind in "fc"):
                    try:
                        r = kern(a, b)
                    except Exception:
                        return inv(op, [x, y], {})
                    if type(r) is not nd:
                        r = asarray(r)
                    t = new(T)
                    t._data = r
                    t._sg = True
                    t._node = None
                    if diff and gs.enabled and not (x._sg and y._sg):
                        gs.record(op, [x, y], {}, (t,))
                    return t
            elif (ty is float or ty is int) and type(a) is nd and a.dtype.kind == "f":
                try:
                    r = kern(a, y)
                except Exception:
                    return inv(op, [x, y], {})
                if type(r) is not nd:
                    r = asarray(r)
                t = new(T)
                t._data = r
                t._sg = True
                t._node = None
                if diff and gs.enabled and not x._sg:
                    gs.record(op, [x, y], {}, (t,))
                return t
        return inv(op, [x, y], {})

    def rf(y, x):
        # reflected operator (``2.0 - t`` calls t.__rsub__(2.0)): computes x op y
        if type(y) is T and bs.builder is None and obs.hook is None:
            b = y._data
            tx = type(x)
            if (tx is float or tx is int) and type(b) is nd and b.dtype.kind == "f":
                try:
                    r = kern(x, b)
                except Exception:
                    return inv(op, [x, y], {})
                if type(r) is not nd:
                    r = asarray(r)
                t = new(T)
                t._data = r
                t._sg = True
                t._node = None
                if diff and gs.enabled and not y._sg:
                    gs.record(op, [x, y], {}, (t,))
                return t
        return inv(op, [x, y], {})

    f.__name__ = f.__qualname__ = fname
    f.__doc__ = op.doc or f"Elementwise ``{op.name}`` with broadcasting and dtype promotion."
    f.__module__ = "fw"
    f.op = op
    rf.__name__ = rf.__qualname__ = f"r{fname}"
    f.reflected = rf
    return f


def _make_unary(op, fname):
    kern = op.kernels.get("cpu") or op.reference
    gs = grad_state
    bs = _build
    obs = observe_state  # the profiler / NaN check send every op to `invoke`
    inv = invoke
    T = Tensor
    nd = _ndarray
    new = _new
    asarray = _asarray
    diff = op.differentiable
    kinds = "fc" if op.to_float else "biufcV"

    def f(x, name=None):
        if type(x) is T and bs.builder is None and obs.hook is None:
            a = x._data
            if type(a) is nd and a.dtype.kind in kinds:
                try:
                    r = kern(a)
                except Exception:
                    return inv(op, [x], {})
                if type(r) is not nd:
                    r = asarray(r)
                t = new(T)
                t._data = r
                t._sg = True
                t._node = None
                if diff and not x._sg and gs.enabled:
                    gs.record(op, [x], {}, (t,))
                return t
        return inv(op, [x], {})

    f.__name__ = f.__qualname__ = fname
    f.__doc__ = op.doc or f"Elementwise ``{op.name}``."
    f.__module__ = "fw"
    f.op = op
    return f


def _function_for(op, fname):
    fast = getattr(op, "fast", None)
    if fast == "binary" and len(op.input_names) == 2 and not op.attrs:
        return _make_binary(op, fname)
    if fast == "unary" and len(op.input_names) == 1 and not op.attrs:
        return _make_unary(op, fname)
    return _make_generic(op, fname)


def _make_inplace(op, fn, fname):
    from fw.core.dispatch import assign_inplace

    def f(x, *args, **kwargs):
        return assign_inplace(fname, x, fn(x, *args, **kwargs))

    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"In-place version of ``{fn.__name__}``: writes the result into x."
    f.__module__ = "fw"
    f.op = op
    return f


def _attach_docs(documented):
    """Give each generated function (and its in-place variant) its reference docstring
    from ``fw/core/ops/docs``; hand-written wrappers keep their own. The texts come from
    the docs cache when it is current (then the doc tables are not even imported)."""
    from fw.core.ops import docs as _docs
    from fw.core.ops.docs import _cache

    cache = _cache.DocCache()
    table = None if cache.valid else _docs.load()

    def text(kind, op, fname, method):
        nonlocal table
        key = (kind, op.name, fname, method)
        fp = _cache.fingerprint(op)
        got = cache.get(key, fp)
        if got is None:
            if table is None:
                table = _docs.load()
            doc = table[op.name]
            got = (_docs.render(op, doc, fname, method) if kind == "fn" else
                   _docs.render_inplace(op, doc, fname, method))
            cache.put(key, fp, got)
        return got

    for op, fn, fname, key in documented:
        if (op.name not in table) if table is not None else (op.name not in cache.ops):
            continue
        mname = (op.method if isinstance(op.method, str) else fname) if op.method else None
        if getattr(fn, "op", None) is op and PUBLIC.get(key) is not fn:
            fn.__doc__ = text("fn", op, fname, mname if METHODS.get(mname) is fn else None)
        iname = fname + "_"  # generated even where the function itself is hand-written
        ifn = METHODS.get((mname or fname) + "_") or FUNCTIONS.get(iname)
        if op.inplace and ifn is not None and getattr(ifn, "op", None) is op and \
                PUBLIC.get(iname) is not ifn:
            ifn.__doc__ = text("inplace", op, iname, fname)
    cache.save(table if table is not None else cache.ops)


_REFLECTED = {"__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
              "__rpow__", "__rmatmul__", "__rand__", "__ror__", "__rxor__", "__rlshift__",
              "__rrshift__", "__rdivmod__"}


def _reflected(fn):
    def r(self, other):
        return fn(other, self)

    r.__name__ = f"r{fn.__name__}"
    return r


def install():
    """Build every public function and attach methods to Tensor and Value."""
    if _installed[0]:
        return FUNCTIONS
    documented = []
    for op in OPS.values():
        if op.api is False and op.method is False and not op.dunders:
            continue
        key = op.api if isinstance(op.api, str) else op.name  # may be dotted: "linalg.inv"
        fname = key.rsplit(".", 1)[-1]
        if keyword.iskeyword(fname):
            fname = fname + "_"
        fn = PUBLIC.get(key) or _function_for(op, fname)
        documented.append((op, fn, fname, key))
        if op.api is not False:
            FUNCTIONS.setdefault(key, fn)
            for a in op.aliases:
                FUNCTIONS.setdefault(a, fn)
        if op.method:
            mname = op.method if isinstance(op.method, str) else fname
            METHODS.setdefault(mname, fn)
            for a in op.aliases:
                METHODS.setdefault(a, fn)
        if op.inplace:
            iname = fname + "_"
            ifn = PUBLIC.get(iname) or _make_inplace(op, fn, iname)
            if op.api is not False:
                FUNCTIONS.setdefault(iname if "." not in key else key + "_", ifn)
            METHODS.setdefault((op.method if isinstance(op.method, str) else fname) + "_", ifn)
        for d in op.dunders:
            if d in _REFLECTED:
                DUNDERS.setdefault(d, getattr(fn, "reflected", None) or _reflected(fn))
            else:
                DUNDERS.setdefault(d, fn)
    for n, fn in PUBLIC.items():
        FUNCTIONS[n] = fn
    for new, (old, as_method, *as_function) in SECOND_NAMES.items():  # greater = greater_than …
        fn = FUNCTIONS.get(old)
        if fn is not None:
            if as_function != [False]:
                FUNCTIONS.setdefault(new, fn)
            if as_method:
                METHODS.setdefault(new, fn)
    _attach_docs(documented)  # before the alias wrappers copy each __doc__
    _tensor._call_op = call
    for cls in (Tensor, Value):
        for m, fn in METHODS.items():
            if m in cls.__dict__ and not getattr(cls.__dict__[m], "op", None) and \
                    not getattr(cls.__dict__[m], "_fw_method", False):
                continue  # a hand-written member wins
            setattr(cls, m, fn)
        for d, fn in DUNDERS.items():
            setattr(cls, d, fn)
    from fw.core import aliases as _aliases  # Paddle 3.3's dim=/input=/… argument aliases

    _aliases.apply_core(FUNCTIONS, METHODS, (Tensor, Value))
    _installed[0] = True
    _codes.save()
    return FUNCTIONS
