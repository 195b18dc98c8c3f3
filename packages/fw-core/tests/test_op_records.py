"""Generic op tests driven by the records of fw.core.testing (one per op)."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import FwError
from fw.core.ir import TensorType, trace
from fw.core.ops import OPS
from fw.core.testing import as_tuple, assert_close, load_all, reference_call, to_args, tolerance

RECORDS = load_all()
# ops tested by their own dedicated tests (control flow needs nested blocks)
EXEMPT = {"cond", "while"}
CASES = [pytest.param(r, id=f"{name}-{i}") for name, recs in sorted(RECORDS.items())
         for i, r in enumerate(recs)]


def test_every_op_has_a_record():
    missing = sorted(n for n in OPS if n not in RECORDS and n not in EXEMPT)
    assert not missing, f"ops without a test record: {missing}"


def test_reference_defaults_match_the_op_attrs():
    """A reference kernel's keyword defaults are the op's declared defaults (raw or
    canonical): the reference is the executable specification, called directly by
    oracles and tests, and must not drift from the table."""
    import inspect

    bad = []
    for name, op in OPS.items():
        canon = {}
        if op.canon is not None:
            try:
                canon = op.canon(dict(op.attrs))
            except FwError:  # attrs without a usable default (kernel_size=None, ...)
                canon = {}
        for p in inspect.signature(op.reference).parameters.values():
            if p.default is inspect.Parameter.empty or p.name not in op.attrs:
                continue
            allowed = [op.attrs[p.name]] + ([canon[p.name]] if p.name in canon else [])
            if not any(p.default == v or str(p.default) == str(v) for v in allowed):
                bad.append(f"{name}.{p.name}: reference default {p.default!r}, op {allowed}")
    assert not bad, "\n".join(bad)


def _fast_kernels(op):
    """The op's fast kernels and the NumPy kernels a native one falls back to
    (``numpy_kernel``, the ``_cpu`` functions beside the references)."""
    out = []
    for k in op.kernels.values():
        out += [k] + ([k.numpy_kernel] if getattr(k, "numpy_kernel", None) else [])
    return out


def _kernels_of(op):
    """The op's reference and infer, and the plain functions they close over (a wrapped
    NumPy kernel like hardtanh's lambda, called with the op's attrs), and its fast
    kernels (``kernels=``; not what those close over: the native wrappers have their
    own conventions): each of their keyword defaults is reachable from a direct call."""
    import types

    seen, out = set(), []
    fast = _fast_kernels(op)
    for f in (op.reference, op.infer, *fast):
        inner = [] if f in fast else [
            c.cell_contents for c in (getattr(f, "__closure__", None) or ())
            if isinstance(c.cell_contents, types.FunctionType)]
        for g in [f] + inner:
            if isinstance(g, types.FunctionType) and id(g) not in seen:
                seen.add(id(g))
                out.append(g)
    return out


def test_kernel_and_infer_defaults_match_the_op_attrs():
    """Like the test above, for infer and the functions a reference wraps."""
    import inspect

    bad = []
    for name, op in OPS.items():
        canon = {}
        if op.canon is not None:
            try:
                canon = op.canon(dict(op.attrs))
            except FwError:
                canon = {}
        for f in _kernels_of(op):
            for p in inspect.signature(f).parameters.values():
                if p.default is inspect.Parameter.empty or p.name not in op.attrs:
                    continue
                allowed = [op.attrs[p.name]] + ([canon[p.name]] if p.name in canon else [])
                if not any(p.default == v or str(p.default) == str(v) for v in allowed):
                    bad.append(f"{name} ({f.__qualname__}).{p.name}: default {p.default!r}, "
                               f"op {allowed}")
    assert not bad, "\n".join(bad)


def _without_defaults(f, attrs, raw):
    """attrs less those f's signature has a default for (a call then uses f's own),
    except where that default is the op's raw, uncanonicalised one (dtype=None, which
    canon turns into a dtype): those are still passed, canonical."""
    import inspect

    ps = inspect.signature(f).parameters

    def same(d, v):
        try:
            return d is v or bool(d == v) or (d is not None and str(d) == str(v))
        except Exception:  # (arrays)
            return False

    return {k: v for k, v in attrs.items()
            if k not in ps or ps[k].default is inspect.Parameter.empty
            or (k in raw and same(ps[k].default, raw[k]) and not same(ps[k].default, v))}


def _same_values(a, b):
    a, b = as_tuple(a), as_tuple(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype
        if x.dtype.kind not in "biufcO":  # bfloat16 and friends: NaN == NaN via float32
            x, y = x.astype(np.float32), y.astype(np.float32)
        np.testing.assert_array_equal(x, y)


def _run_record_sample(name):
    """Run the op's reference on one record sample (the test that checked its defaults
    then runs its functions: the defaults of an op with required attributes)."""
    rec = RECORDS[name][0]

    @settings(max_examples=1, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        s = rec.sample(data.draw, data.draw(st.sampled_from(rec.dtypes)))
        fw.seed(0)
        try:
            reference_call(OPS[name], s.args, dict(s.attrs))
        except FwError:
            pass

    run()


def _close_values(a, b):
    a, b = as_tuple(a), as_tuple(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype
        tol = 1e-5
        if x.dtype.kind not in "biufcO":  # bfloat16: 8 significant bits
            x, y, tol = x.astype(np.float32), y.astype(np.float32), 1e-2
        elif x.dtype == np.float16:
            tol = 2e-3
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True)


# the index ops' key attribute describes their index tensors: no default fits a sample
NO_DEFAULT_CALL = {"getitem", "setitem"}


@pytest.mark.parametrize("name", sorted(n for n in RECORDS if n in OPS
                                        and n not in EXEMPT | NO_DEFAULT_CALL))
def test_omitted_attrs_take_the_op_defaults(name):
    """Calling the reference and infer with their defaulted attributes left out gives
    what the op's declared defaults give. The two tests above read the signatures;
    this one runs the functions, so a default that is wrong but agrees in text (or a
    test runner that picks tests by the lines they execute) is covered too."""
    import copy
    import inspect

    op = OPS[name]
    try:
        defaults = op.canon(dict(op.attrs)) if op.canon is not None else dict(op.attrs)
    except FwError:  # a required attribute (kernel_size=None): no call without one
        defaults = None
    # this op's signature defaults first (test_kernel_and_infer_defaults checks all ops;
    # here they sit beside the calls: an infer that ignores an attribute runs here too;
    # also for an op whose defaults cannot be called, as its record runs the functions)
    for f in _kernels_of(op):
        for p in inspect.signature(f).parameters.values():
            if p.default is not inspect.Parameter.empty and p.name in op.attrs:
                allowed = [op.attrs[p.name], (defaults or {}).get(p.name)]
                assert any(p.default == v or str(p.default) == str(v) for v in allowed), \
                    f"{f.__qualname__}.{p.name}: default {p.default!r}, op {allowed}"
    if defaults is None:
        _run_record_sample(name)
        return
    bare = copy.copy(op)  # the same conversions, the reference called with fewer attrs
    bare.canon = None
    kw = _without_defaults(op.reference, defaults, op.attrs)
    bare.reference = lambda *a, **_: op.reference(*a, **kw)
    ikw = _without_defaults(op.infer, defaults, op.attrs)

    @settings(max_examples=3, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        rec = RECORDS[name][0]
        s = rec.sample(data.draw, data.draw(st.sampled_from(rec.dtypes)))
        try:
            fw.seed(0)
            want, _ = reference_call(op, s.args, dict(defaults))
        except Exception:  # these inputs do not fit the default attributes
            return
        fw.seed(0)
        got, _ = reference_call(bare, s.args, {})
        _same_values(got, want)
        # each fast kernel called the same way computes what the reference computes
        # (to rounding: a kernel may order its arithmetic differently)
        for kern in _fast_kernels(op):
            fast = copy.copy(op)
            fast.canon = None
            kkw = _without_defaults(kern, defaults, op.attrs)
            fast.reference = lambda *a, k=kern, kw=kkw, **_: k(*a, **kw)
            fw.seed(0)
            got, _ = reference_call(fast, s.args, {})
            _close_values(got, want)
        from fw.core.dispatch import input_types

        types = input_types(op, to_args(s.args))
        a = [(t.shape, t.dtype) for t in as_tuple(op.infer(*types, **defaults))
             if isinstance(t, TensorType)]
        b = [(t.shape, t.dtype) for t in as_tuple(op.infer(*types, **ikw))
             if isinstance(t, TensorType)]
        assert a == b

    run()


def test_records_name_real_ops():
    unknown = sorted(n for n in RECORDS if n not in OPS)
    assert not unknown, f"records for ops that do not exist: {unknown}"


def _draw(rec, data):
    dtype = data.draw(st.sampled_from(rec.dtypes), label="dtype")
    return dtype, rec.sample(data.draw, dtype)


@pytest.mark.parametrize("rec", CASES)
@given(data=st.data())
def test_eager_matches_reference_and_infer(rec, data):
    """The eager path (fast kernels, specialised entry points) computes what the
    NumPy reference computes, and `infer` predicts its shapes and dtypes."""
    op = OPS[rec.op]
    dtype, s = _draw(rec, data)
    fw.seed(0) if rec.nondeterministic else None
    out = as_tuple(invoke(op, to_args(s.args), dict(s.attrs)))
    fw.seed(0) if rec.nondeterministic else None
    want, attrs = reference_call(op, s.args, dict(s.attrs))
    want = as_tuple(want)
    assert len(out) == len(want) and op.num_outputs in (len(out), -1)
    from fw.core.dispatch import input_types

    types = input_types(op, to_args(s.args))
    inferred = as_tuple(op.infer(*types, **attrs))
    for k, (o, w, t) in enumerate(zip(out, want, inferred)):
        w = np.asarray(w)
        assert list(t.shape) == list(w.shape) or -1 in t.shape, \
            f"{op.name} output {k}: infer says {t}, kernel gives {w.shape}"
        assert t.dtype.np == w.dtype, f"{op.name} output {k}: infer dtype {t.dtype} vs {w.dtype}"
        if rec.nondeterministic:
            assert o.shape == list(w.shape) and o.numpy().dtype == w.dtype
        else:
            r, a = rec.tol.get(dtype.name, tolerance(dtype))
            assert_close(o.numpy(), w, dtype, r, a, what=f"{op.name} output {k}")


NONDIFF = [c for c in CASES if not OPS[c.values[0].op].differentiable]


@pytest.mark.parametrize("rec", NONDIFF)
@settings(max_examples=2)
@given(data=st.data())
def test_non_differentiable_ops_record_no_gradient(rec, data):
    """An op declared non-differentiable gives outputs that stop the gradient even when
    its floating inputs require one (it has no VJP rule to record)."""
    op = OPS[rec.op]
    _, s = _draw(rec, data)
    args = to_args(s.args)
    for a in args:
        for t in (a if isinstance(a, list) else [a]):
            if isinstance(t, fw.Tensor) and t.dtype.is_floating_point:
                t.stop_gradient = False
    for k, o in enumerate(as_tuple(invoke(op, args, dict(s.attrs)))):
        for t in (o if isinstance(o, (list, tuple)) else [o]):
            assert t.stop_gradient, f"{op.name} output {k} records a gradient"


def _symbolic_call(op, s, dynamic):
    """Trace op(sample) with every array argument as a program input."""
    flat, pos = [], []
    for i, a in enumerate(s.args):
        if isinstance(a, np.ndarray):
            pos.append((i, None))
            flat.append(a)
        elif isinstance(a, list) and a and all(isinstance(x, np.ndarray) for x in a):
            for j, x in enumerate(a):
                pos.append((i, j))
                flat.append(x)
    types = [TensorType([-1] * x.ndim if dynamic else x.shape, _dt.from_numpy(x.dtype))
             for x in flat]

    def fn(*vals):
        args = [list(a) if isinstance(a, list) else a for a in s.args]
        for v, (i, j) in zip(vals, pos):
            if j is None:
                args[i] = v
            else:
                args[i][j] = v
        return invoke(op, args, dict(s.attrs))

    return trace(fn, types), flat


@pytest.mark.parametrize("rec", [c for c in CASES if c.values[0].ir])
@given(data=st.data())
def test_executor_matches_eager(rec, data):
    """Tracing the op and running the program gives the eager result."""
    op = OPS[rec.op]
    dtype, s = _draw(rec, data)
    dynamic = rec.dynamic_ok and data.draw(st.booleans(), label="dynamic")
    fw.seed(1)
    want = as_tuple(invoke(op, to_args(s.args), dict(s.attrs)))
    prog, flat = _symbolic_call(op, s, dynamic)
    fw.seed(1)
    got = as_tuple(fw.core.ir.run(prog, *[fw.to_tensor(x) for x in flat]))
    for k, (g, w) in enumerate(zip(got, want)):
        if rec.nondeterministic:
            assert g.shape == w.shape and g.dtype == w.dtype
        else:
            assert_close(g.numpy(), w.numpy(), dtype, what=f"{op.name} output {k} (executor)")


ERROR_CASES = [pytest.param(r, e, id=f"{r.op}-{i}") for recs in RECORDS.values() for r in recs
               for i, e in enumerate(r.errors)]


@pytest.mark.parametrize("rec,case", ERROR_CASES)
def test_bad_input_gives_clear_error(rec, case):
    args, attrs, exc, pattern = case
    op = OPS[rec.op]
    full = dict(op.attrs)
    full.update(attrs)
    with pytest.raises(exc) as info:
        invoke(op, to_args([np.asarray(a) if isinstance(a, list) else a for a in args]), full)
    msg = str(info.value)
    assert msg.startswith(op.name), f"error does not name the op: {msg}"
    assert re.search(pattern, msg), f"{msg!r} does not match {pattern!r}"
    assert isinstance(info.value, FwError)
