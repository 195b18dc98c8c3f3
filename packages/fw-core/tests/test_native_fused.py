"""The fused kernel family of fw.core._C (fw/core/kernels/cpu/: optimizer.py, fused.py,
activation.py, nn_grad.py): optimizer
updates against the NumPy cpu kernels, the fused_elementwise interpreter against the
op's reference (random programs, every opcode's accuracy and special values, the
broadcast forms, tiles and threads), and fused_matmul through oneDNN."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fw
from fw.core import _native
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.kernels.cpu import _common, optimizer
from fw.core.kernels.cpu import fused as cpu_fused
from fw.core.ops import OPS
from fw.core.testing import arrays, as_tuple, tolerance
from fw.core.testing.records.fused import elementwise_program

pytestmark = pytest.mark.skipif(not _common.fused_available,
                                reason="native fused kernels unavailable (no _C or no AVX2)")

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
C = _common.C


class _Counting:
    """Stands in for fw.core._C in the optimizer kernels, counting optim_update calls."""

    def __init__(self, real):
        self.real, self.calls = real, 0

    def optim_update(self, *a, **k):
        self.calls += 1
        return self.real.optim_update(*a, **k)

    def __getattr__(self, name):
        return getattr(self.real, name)


@pytest.fixture
def counting(monkeypatch):
    c = _Counting(optimizer.C)
    monkeypatch.setattr(optimizer, "C", c)
    return c


@pytest.fixture
def threads():
    n = _native.get_num_threads()
    yield
    _native.set_num_threads(n)


# ================================================================ optimizer updates
def _one(v, dtype=np.float32):
    return np.array([v], dtype=dtype)


def _case(rule, rng, n, pd, sd, **kw):
    """(args, attrs) of one update op call with `n` elements."""
    p = (rng.standard_normal(n) * 0.5).astype(pd)
    g = (rng.standard_normal(n) * 0.1).astype(pd)

    def st_(lo=0.0, hi=1.0):
        return rng.uniform(lo, hi, n).astype(sd)

    lr = np.array([0.01])
    if rule == "sgd":
        return [p, g, lr], {}
    if rule == "momentum":
        return [p, g, lr, st_(-1, 1)], {"mu": 0.9, "use_nesterov": kw.get("nesterov", False),
                                        "regularization_method": "l2_decay",
                                        "regularization_coeff": 0.01, "rescale_grad": 0.5}
    if rule in ("adam", "adamw"):
        ams = kw.get("amsgrad", False)
        args = [p, g, lr, st_(-0.1, 0.1), st_(0, 0.01), _one(0.9 ** 3), _one(0.999 ** 3),
                st_(0, 0.02) if ams else None]
        attrs = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "amsgrad": ams}
        if rule == "adamw":
            attrs.update(lr_ratio=0.5, coeff=0.01, with_decay=True)
        return args, attrs
    if rule == "adamax":
        return [p, g, lr, st_(-0.1, 0.1), st_(0.01, 1), _one(0.9 ** 2)], \
            {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}
    if rule == "adagrad":
        return [p, g, lr, st_(0, 1)], {"epsilon": 1e-6}
    if rule == "adadelta":
        return [p, g, lr, st_(0, 1), st_(0, 1)], {"rho": 0.95, "epsilon": 1e-6}
    if rule == "rmsprop":
        c = kw.get("centered", False)
        ms = st_(0.5, 1)
        return [p, g, lr, ms, st_(-0.1, 0.1), st_(-0.1, 0.1) if c else None], \
            {"rho": 0.95, "epsilon": 1e-6, "momentum": 0.9, "centered": c}
    if rule == "lamb":
        return [p, g, lr, st_(-0.1, 0.1), st_(0, 0.01), _one(0.9 ** 3), _one(0.999 ** 3)], \
            {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "weight_decay": 0.01,
             "always_adapt": False}
    if rule == "asgd":
        return [p, g, lr, st_(-1, 1), st_(-1, 1), np.array([3.0])], {}
    raise AssertionError(rule)


# (rule, extra options)
RULES = [("sgd", {}), ("momentum", {}), ("momentum", {"nesterov": True}), ("adam", {}),
         ("adam", {"amsgrad": True}), ("adamw", {}), ("adamw", {"amsgrad": True}),
         ("adamax", {}), ("adagrad", {}), ("adadelta", {}), ("rmsprop", {}),
         ("rmsprop", {"centered": True}), ("lamb", {}), ("asgd", {})]
DTYPES = [(F32, F32), (F16, F32), (BF16, F32), (F16, F16), (BF16, BF16)]


def _state_slots(rule, args):
    """Indices into args of the per-element state inputs, with their output index."""
    names, outs = _OPT_IO[rule]
    return [(i, o) for i, o in zip(names, outs) if args[i] is not None]


# args index of each state input -> its output index, per rule
_OPT_IO = {
    "sgd": ((), ()), "momentum": ((3,), (1,)), "adam": ((3, 4, 7), (1, 2, 5)),
    "adamw": ((3, 4, 7), (1, 2, 5)), "adamax": ((3, 4), (1, 2)), "adagrad": ((3,), (1,)),
    "adadelta": ((3, 4), (1, 2)), "rmsprop": ((3, 4, 5), (1, 2, 3)), "lamb": ((3, 4), (1, 2)),
    "asgd": ((3, 4), (1, 2)),
}


def _tol(pd, sd):
    if pd == F32:
        return 2e-6, 1e-7
    return (1e-2, 1e-3) if pd == F16 else (2e-2, 1e-2)


def _compare(got, want, pd, sd, what):
    r, a = _tol(pd, sd)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, f"{what} output {k}"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=r, atol=a,
                                   equal_nan=True, err_msg=f"{what} output {k}")


def _copy(args):
    return [None if a is None else a.copy() for a in args]


@pytest.mark.parametrize("rule,opts", RULES, ids=[f"{r}{'-' + '-'.join(o) if o else ''}"
                                                 for r, o in RULES])
@pytest.mark.parametrize("pd,sd", DTYPES, ids=[f"{a}-{b}" for a, b in DTYPES])
@pytest.mark.parametrize("n", [0, 1, 13, 70_001])
def test_update_matches_the_numpy_kernel(rule, opts, pd, sd, n, counting):
    """Functional form (out=None) and in place (out entries = inputs), small and large
    (threads), against the NumPy kernel; the native kernel must have run."""
    kern = OPS[rule].kernels["cpu"]
    rng = np.random.default_rng(n + len(rule))
    args, attrs = _case(rule, rng, n, pd, sd, **opts)
    want = as_tuple(kern.numpy_kernel(*_copy(args), **attrs))
    got = as_tuple(kern(*_copy(args), **attrs))
    assert counting.calls == 1
    _compare(got, want, pd, sd, f"{rule} functional")
    # in place, as fw.optimizer calls it
    work = _copy(args)
    out = [None] * len(want)
    out[0] = work[0]
    for i, o in _state_slots(rule, work):
        out[o] = work[i]
    res = as_tuple(kern(*work, **attrs, out=tuple(out)))
    assert counting.calls == 2
    for k, o in enumerate(out):
        if o is not None:
            assert res[k] is o
    _compare(res, want, pd, sd, f"{rule} in place")


@pytest.mark.parametrize("rule", ["adam", "momentum", "lamb"])
def test_update_into_separate_out_arrays(rule, counting):
    rng = np.random.default_rng(3)
    args, attrs = _case(rule, rng, 1000, F32, F32)
    kern = OPS[rule].kernels["cpu"]
    want = kern.numpy_kernel(*_copy(args), **attrs)
    before = _copy(args)
    out = tuple(np.full_like(w, 7.0) for w in want)
    res = kern(*args, **attrs, out=out)
    assert counting.calls == 1 and all(r is o for r, o in zip(res, out) if o.size)
    _compare(res, want, F32, F32, rule)
    for a, b in zip(args, before):  # inputs untouched
        if a is not None:
            np.testing.assert_array_equal(a, b)


def test_update_falls_back_to_numpy(counting):
    """float64, strided arrays, mixed state dtypes and an out overlapping an input take
    the NumPy kernel, with its results."""
    kern = OPS["adam"].kernels["cpu"]
    rng = np.random.default_rng(4)
    args, attrs = _case("adam", rng, 64, F64, F64)
    _compare(kern(*_copy(args), **attrs), kern.numpy_kernel(*_copy(args), **attrs), F32, F32,
             "f64")
    args, attrs = _case("adam", rng, 128, F32, F32)
    strided = _copy(args)
    strided[0] = np.repeat(strided[0], 2)[::2]
    kern(*strided, **attrs)
    mixed = _copy(args)
    mixed[0], mixed[1] = mixed[0].astype(F16), mixed[1].astype(F16)
    mixed[4] = mixed[4].astype(F16)  # moment1 float32, moment2 float16
    kern(*mixed, **attrs)
    overlap = _copy(args)
    shifted = np.empty(129, F32)
    shifted[1:] = overlap[0]
    out = (shifted[:128], None, None, None, None, None)  # overlaps param by 127 elements
    want = kern.numpy_kernel(*_copy(args), **attrs)
    kern(*[shifted[1:]] + overlap[1:], **attrs, out=out)
    np.testing.assert_allclose(out[0], want[0], rtol=1e-6)
    assert counting.calls == 0


def test_update_special_values_match_numpy():
    """NaN/Inf gradients and zero state take the same paths as the NumPy kernels."""
    g = np.array([np.nan, np.inf, -np.inf, 0.0, 1e-30, -1e30, 1.0, 2.0, 3.0], F32)
    n = g.size
    for rule in ("adam", "adagrad", "rmsprop", "lamb", "adamax"):
        kern = OPS[rule].kernels["cpu"]
        args, attrs = _case(rule, np.random.default_rng(5), n, F32, F32)
        args[1] = g.copy()
        for i, _ in _state_slots(rule, args):
            args[i][:] = 0.0
        want = kern.numpy_kernel(*_copy(args), **attrs)
        got = kern(*_copy(args), **attrs)
        for k, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7, equal_nan=True,
                                       err_msg=f"{rule} output {k}")


@given(st.lists(st.integers(0, 3000), max_size=7), st.integers(1, 3000), st.booleans())
def test_lamb_trust_ratio_per_segment(sizes, last, always):
    """Per-parameter trust ratios over packed buffers (empty parameters included; the
    NumPy kernel's reduceat cannot end on an empty one)."""
    kern = OPS["lamb"].kernels["cpu"]
    sizes = sizes + [last]
    n = sum(sizes)
    args, attrs = _case("lamb", np.random.default_rng(n), n, F32, F32)
    attrs["always_adapt"] = always
    attrs["weight_decay"] = 0.0 if always else 0.02
    seg = np.cumsum([0] + sizes[:-1])
    want = kern.numpy_kernel(*_copy(args), **attrs, segments=seg)
    got = kern(*_copy(args), **attrs, segments=seg)
    _compare(got, want, F32, F32, "lamb segments")
    # one segment per parameter == the parameters updated one by one
    offs = np.append(seg, n)
    for a, b in zip(offs[:-1], offs[1:]):
        part = [x[a:b].copy() if i in (0, 1, 3, 4) else x for i, x in enumerate(args)]
        one = kern(*part, **attrs)
        np.testing.assert_allclose(got[0][a:b], one[0], rtol=2e-6, atol=1e-7)


def test_update_results_do_not_depend_on_the_thread_count(threads):
    rng = np.random.default_rng(6)
    for rule in ("adam", "lamb", "rmsprop"):
        args, attrs = _case(rule, rng, 300_001, F32, F32)
        kern = OPS[rule].kernels["cpu"]
        res = []
        for nt in (1, 2):
            _native.set_num_threads(nt)
            res.append(kern(*_copy(args), **attrs))
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-7 if rule == "lamb" else 0, atol=0)


def test_optim_update_checks_its_arrays():
    p = np.zeros(4, F32)
    with pytest.raises(ValueError, match=r"adam: grad float32\[3\] must have 4 elements"):
        C.optim_update(2, p, np.zeros(3, F32), p, [p.copy(), p.copy()], [p.copy(), p.copy()],
                       [1.0] * 5, [False, False])
    with pytest.raises(TypeError, match="sgd: param float64"):
        C.optim_update(0, p.astype(F64), p, p, [], [], [0.1], [])
    with pytest.raises(ValueError, match="expected 2 states"):
        C.optim_update(2, p, p, p, [p.copy()], [p.copy()], [1.0] * 5, [False, False])
    with pytest.raises(ValueError, match="segments must start at 0"):
        C.optim_update(7, p, p, p, [p.copy(), p.copy()], [p.copy(), p.copy()], [0.5] * 7,
                       [True, True], np.array([1, 2], np.int64))
    with pytest.raises(ValueError, match="C-contiguous"):
        C.optim_update(0, np.zeros(8, F32)[::2], p, p, [], [], [0.1], [])


def test_update_errors_still_name_the_op():
    """Bad input goes to the NumPy kernel, whose errors dispatch reports."""
    with pytest.raises(InvalidArgumentError, match="adam: 'grad' has shape"):
        fw.core.dispatch.invoke(OPS["adam"], [np.zeros(3, F32), np.zeros(4, F32),
                                              np.array(0.1, F32), np.zeros(3, F32),
                                              np.zeros(3, F32), _one(0.9), _one(0.9), None],
                                dict(OPS["adam"].attrs))


def test_adam_optimizer_uses_the_native_kernel(counting):
    """fw.optimizer.Adam on a small MLP: one native call per step, same parameters as
    the NumPy kernel gives."""
    def run(kern_override):
        fw.seed(0)
        net = fw.nn.Sequential(fw.nn.Linear(20, 16), fw.nn.ReLU(), fw.nn.Linear(16, 3))
        opt = fw.optimizer.Adam(learning_rate=0.01, parameters=net.parameters())
        x = fw.to_tensor(np.random.default_rng(0).standard_normal((8, 20)).astype(F32))
        op = OPS["adam"]
        saved = op.kernels["cpu"]
        if kern_override is not None:
            op.kernels["cpu"] = kern_override
        try:
            for _ in range(3):
                loss = (net(x) ** 2).mean()
                loss.backward()
                opt.step()
                opt.clear_grad()
        finally:
            op.kernels["cpu"] = saved
        return [p.numpy().copy() for p in net.parameters()]

    pytest.importorskip("fw.optimizer")
    native = run(None)
    assert counting.calls == 3
    ref = run(OPS["adam"].kernels["cpu"].numpy_kernel)
    for a, b in zip(native, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_register_is_idempotent():
    before = {n: OPS[n].kernels["cpu"].numpy_kernel for n in optimizer._OPTIMIZERS}
    optimizer.register()
    for n, k in before.items():
        assert OPS[n].kernels["cpu"].numpy_kernel is k


# ================================================================ fused_elementwise
EW = OPS["fused_elementwise"]
LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}


def _ew(inputs, prog):
    return EW.kernels["cpu"](inputs, program=prog, out_dtype=prog[-1][1])


def _ew_ref(inputs, prog):
    return EW.reference(inputs, program=prog, out_dtype=prog[-1][1])


def _close(got, want, dtype, what=""):
    assert got.shape == want.shape and got.dtype == want.dtype, what
    r, a = LOW_TOL.get(dtype.name, tolerance(dtype))
    if got.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=r,
                                   atol=a, equal_nan=True, err_msg=what)


def _native_program(prog, n):
    return cpu_fused.compile_program(prog, n)


@given(data=st.data())
def test_random_programs_match_the_reference(data):
    """The records' program generator on larger shapes and every native broadcast form
    (full, scalar, row), in float32/float16/bfloat16."""
    dtype = data.draw(st.sampled_from([_dt.float32, _dt.float16, _dt.bfloat16]))
    shape = data.draw(st.sampled_from([(3000,), (7, 1031), (2, 3, 517), (4099,), (1, 9)]))
    n = data.draw(st.integers(1, 3))
    forms = [shape, (), shape[-1:], (1,) * len(shape)]
    in_shapes = [shape] + [data.draw(st.sampled_from(forms)) for _ in range(n - 1)]
    if data.draw(st.booleans()):
        in_shapes.reverse()
    prog = elementwise_program(data.draw, dtype, n, data.draw(st.integers(1, 10)))
    inputs = [arrays(data.draw, dtype, s, special=True) for s in in_shapes]
    if any(ins[1] is _dt.float64 for ins in prog):
        assert _native_program(prog, n) is None  # float64 values: the reference
    else:
        assert _native_program(prog, n) is not None
    got, want = _ew(inputs, prog), _ew_ref(inputs, prog)
    try:
        _close(got, want, dtype, str(prog))
    except AssertionError:
        _as_accurate(got, want, inputs, prog, dtype)


def _as_accurate(got, want, inputs, prog, dtype):
    """Chains like exp(exp(exp(x))) amplify the last-bit differences of two float32
    exp implementations beyond any fixed tolerance: then the native result must be
    about as close to the program run in float64 as NumPy's result is."""
    up = {_dt.float32: _dt.float64}
    p64 = tuple((op, up.get(d, d), ops, sc) for op, d, ops, sc in prog)
    ins = [a.astype(F64) if a.dtype == F32 else a for a in inputs]
    t = np.asarray(EW.reference(ins, program=p64, out_dtype=p64[-1][1]), F64)
    g, w = got.astype(F64), want.astype(F64)
    r, a = LOW_TOL.get(dtype.name, tolerance(dtype))
    bad = ~np.isclose(g, w, rtol=r, atol=a, equal_nan=True)
    ok = np.abs(g - t) <= 4 * np.abs(w - t) + a + r * np.abs(t)
    # finiteness may differ only where the exact value is at the float32 range's edge
    ok |= ~np.isfinite(g) & ~np.isfinite(w) & (np.isnan(g) == np.isnan(w))
    ok |= (np.isfinite(g) != np.isfinite(w)) & (np.abs(t) > 1e38)
    assert ok[bad].all(), (str(prog), g[bad][~ok[bad]], w[bad][~ok[bad]], t[bad][~ok[bad]])


def _unary(opcode, dtype, x, scalars=()):
    prog = ((opcode, dtype, (0,), scalars),)
    return _ew([x], prog), _ew_ref([x], prog)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4e38,
                    -3.4e38, 88.72, 88.73, -87.4, -103.9, -104.0, 1.0, -1.0, 0.5], np.float64)


def _ulps(got, want):
    ok = np.isfinite(want) & (np.abs(want) > 1.2e-38)
    sp = np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
    return np.abs(got[ok].astype(np.float64) - want[ok]) / sp


@pytest.mark.parametrize("opcode,ulp", [("exp", 3), ("log", 5), ("tanh", 4), ("sigmoid", 5),
                                        ("sqrt", 0), ("rsqrt", 0), ("silu", 8),
                                        ("abs", 0), ("neg", 0), ("relu", 0)])
def test_unary_accuracy_and_special_values(opcode, ulp):
    """float32 results within `ulp` of the float32 reference (NumPy's own exp/log are
    ~2 ulp from correctly rounded) over a wide range; NaN/Inf/zero/denormal inputs give
    exactly the reference's non-finite results."""
    rng = np.random.default_rng(7)
    x = np.concatenate([SPECIAL, rng.uniform(-100, 100, 20000), rng.uniform(-4, 4, 20000),
                        rng.standard_normal(5000) * 1e-3]).astype(F32)
    if opcode in ("log", "sqrt", "rsqrt"):
        x = np.concatenate([x, np.abs(x)])
    got, want = _unary(opcode, _dt.float32, x)
    assert np.array_equal(np.isnan(got), np.isnan(want)), opcode
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    assert _ulps(got, want).max() <= ulp, opcode


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_matches_the_activation(approximate):
    x = np.concatenate([SPECIAL, np.linspace(-12, 12, 50001)]).astype(F32)
    got, want = _unary("gelu", _dt.float32, x, (approximate,))
    # the f32 formula cancels in the negative tail: absolute error there
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=6e-7, equal_nan=True)


@pytest.mark.parametrize("dtype", [_dt.float32, _dt.float16, _dt.bfloat16])
@pytest.mark.parametrize("e", [2.0, 0.5, -1.0, 0.0, 1.0, 3.0, -0.5, 1.7, -2.3])
def test_pow_exponents_and_special_values(dtype, e):
    x = np.concatenate([SPECIAL, [-2.0, -8.0, 4.0, 1e-3]]).astype(dtype.np)
    got, want = _unary("pow", dtype, x, (e,))
    _close(got, want, dtype, f"pow {e}")
    assert np.array_equal(np.isnan(got.astype(F32)), np.isnan(want.astype(F32)))


@pytest.mark.parametrize("dtype", [_dt.float16, _dt.bfloat16])
def test_low_precision_rounds_every_instruction(dtype):
    """float16/bfloat16 instructions round their float32 result, so comparisons
    downstream see the reference's values: with correctly rounded opcodes the
    results match the reference bit for bit."""
    rng = np.random.default_rng(8)
    x = rng.uniform(-6, 6, 5000).astype(dtype.np)
    y = rng.uniform(-6, 6, 5000).astype(dtype.np)
    prog = (("multiply", dtype, (0, 1), ()), ("abs", dtype, (2,), ()), ("sqrt", dtype, (3,), ()),
            ("const", dtype, (), (1.3,)), ("greater_than", _dt.bool_, (4, 5), ()),
            ("divide", dtype, (0, 4), ()), ("where", dtype, (6, 7, 1), ()))
    np.testing.assert_array_equal(_ew([x, y], prog).view(np.uint16),
                                  _ew_ref([x, y], prog).view(np.uint16))


def test_bool_inputs_outputs_and_casts():
    rng = np.random.default_rng(9)
    x = rng.uniform(-2, 2, 3001).astype(F32)
    x[::7] = np.nan
    b = rng.random(3001) < 0.5
    f32, bo = _dt.float32, _dt.bool_
    prog = (("cast", f32, (1,), ()), ("add", f32, (0, 2), ()), ("cast", bo, (3,), ()),
            ("cast", _dt.float16, (3,), ()), ("cast", f32, (5,), ()),
            ("where", f32, (4, 6, 0), ()), ("less_equal", bo, (7, 3), ()))
    got = _ew([x, b], prog)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, _ew_ref([x, b], prog))


@pytest.mark.parametrize("shape,other", [((5, 4099), (4099,)), ((3, 7), (1, 7)),
                                         ((2, 2, 3), ()), ((2, 2, 3), (1, 1, 1)),
                                         ((3, 70000), (70000,)), ((1,), (1,)), ((), ())])
def test_broadcast_forms(shape, other, threads):
    rng = np.random.default_rng(10)
    x = rng.standard_normal(shape).astype(F32)
    b = rng.standard_normal(other).astype(F16).astype(F32)
    prog = (("add", _dt.float32, (0, 1), ()), ("tanh", _dt.float32, (2,), ()),
            ("multiply", _dt.float32, (3, 1), ()))
    for nt in (1, 2):
        _native.set_num_threads(nt)
        _close(_ew([x, b], prog), _ew_ref([x, b], prog), _dt.float32)
        _close(_ew([b, x], prog), _ew_ref([b, x], prog), _dt.float32)


def test_other_broadcasts_and_layouts_use_the_reference():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 5)).astype(F32)
    col = rng.standard_normal((6, 1)).astype(F32)  # a column: not a native form
    prog = (("subtract", _dt.float32, (0, 1), ()), ("exp", _dt.float32, (2,), ()))
    np.testing.assert_array_equal(_ew([x, col], prog), _ew_ref([x, col], prog))
    xt = x.T  # strided full input: made contiguous, still native
    _close(_ew([xt, col.T], prog), _ew_ref([xt, col.T], prog), _dt.float32)
    empty = np.zeros((0, 5), F32)
    assert _ew([empty, col[:1]], prog).shape == (0, 5)
    f64 = (("exp", _dt.float64, (0,), ()),)
    xd = x.astype(F64)
    np.testing.assert_array_equal(_ew([xd], f64), _ew_ref([xd], f64))


def test_programs_are_compiled_once_per_program_and_dtypes():
    kern = EW.kernels["cpu"]
    prog = (("exp", _dt.float32, (0,), ()), ("neg", _dt.float32, (1,), ()))
    x = np.ones(10, F32)
    kern.cache.clear()
    for _ in range(3):
        _ew([x], prog)
    assert len(kern.cache) == 1
    _ew([x.astype(F16)], (("exp", _dt.float16, (0,), ()), ("neg", _dt.float16, (1,), ())))
    assert len(kern.cache) == 2
    (_, native), = [v for k, v in kern.cache.items() if k[0] == id(prog)]
    assert native.n_inputs == 1 and native.n_slots == 2  # neg reuses exp's slot


def test_invalid_programs_raise_the_references_errors():
    x = np.ones((2, 3), F32)
    with pytest.raises(InvalidArgumentError, match="fused_elementwise: .*unknown opcode 'mod'"):
        fw.core.dispatch.invoke(EW, [[x, x]], {"program": (("mod", "f32", (0, 1), ()),),
                                               "out_dtype": "f32"})
    with pytest.raises(InvalidArgumentError, match="cannot broadcast"):
        fw.core.dispatch.invoke(EW, [[x, np.ones((4, 3), F32)]],
                                {"program": (("add", "f32", (0, 1), ()),), "out_dtype": "f32"})
    with pytest.raises(ValueError, match="bad operands"):
        C.EwProgram(1, [(0, 3, 0, 5, -1, 0.0)])
    p = C.EwProgram(2, [(0, 3, 0, 1, -1, 0.0)])
    with pytest.raises(ValueError, match="input 1 float32\\[4\\] must be C-contiguous with 3"):
        p.run([np.ones(3, F32), np.ones(4, F32)], [0, 0], 0, np.empty(3, F32))
    with pytest.raises(TypeError, match="result dtype"):
        p.run([np.ones(3, F32), np.ones(3, F32)], [0, 0], 0, np.empty(3, F16))


def test_fused_elementwise_from_the_fusion_pass():
    """Chains traced from fw code and fused by the pass run natively and agree with
    the unfused program."""
    passes = pytest.importorskip("fw.core.ir.passes.fuse_elementwise")
    from fw.core.ir import TensorType, run, trace
    from fw.core.ir.passes import PassManager

    def f(x, b):
        h = (x + b).tanh() * 0.5
        h = fw.where(h > 0.1, h.exp(), (h * h).sqrt() - 1.0)
        return h.sigmoid() + fw.sqrt(h.abs())

    assert passes is not None
    p = trace(f, [TensorType([-1, 300], "float32"), TensorType([300], "float32")], ["x", "b"])
    q = p.clone()
    PassManager(["fuse_elementwise", "dce"]).run(q)
    assert "fused_elementwise(" in str(q)
    rng = np.random.default_rng(12)
    ins = [rng.standard_normal((50, 300)).astype(F32), rng.standard_normal(300).astype(F32)]
    want = run(p, *[fw.to_tensor(a) for a in ins]).numpy()
    got = run(q, *[fw.to_tensor(a) for a in ins]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ================================================================ activation kernels
@pytest.mark.parametrize("name,attrs,opcode", [("relu", {}, "relu"), ("silu", {}, "silu"),
                                               ("gelu", {"approximate": False}, "gelu"),
                                               ("gelu", {"approximate": True}, "gelu")])
@pytest.mark.parametrize("dtype", [_dt.float32, _dt.float16, _dt.bfloat16])
def test_activation_kernels(name, attrs, opcode, dtype):
    """Native for contiguous float32/float16/bfloat16 of any size: close to the NumPy
    reference (exact for relu), identical to the same fused_elementwise instruction;
    float64 and strided input take the reference."""
    op = OPS[name]
    kern = op.kernels["cpu"]
    rng = np.random.default_rng(16)
    for shape in ((), (5,), (3, 1000), (300_001,)):
        x = (rng.standard_normal(shape) * 4).astype(dtype.np)
        if x.size > 8:
            x.reshape(-1)[:len(SPECIAL)] = SPECIAL.astype(dtype.np)
        got, want = kern(x, **attrs), op.reference(x, **attrs)
        _close(got, want, dtype, name)
        if name == "relu":  # exact, signed zeros included
            np.testing.assert_array_equal(got.astype(F32), want.astype(F32))
            np.testing.assert_array_equal(np.signbit(got.astype(F32)), np.signbit(want.astype(F32)))
        prog = ((opcode, dtype, (0,), (attrs["approximate"],) if attrs else ()),)
        np.testing.assert_array_equal(got.reshape(-1).view(np.uint8),
                                      _ew([x], prog).reshape(-1).view(np.uint8))
    x = rng.standard_normal((40, 30)).astype(F32)
    np.testing.assert_array_equal(kern(x.T, **attrs), op.reference(x.T, **attrs))
    np.testing.assert_array_equal(kern(x.astype(F64), **attrs),
                                  op.reference(x.astype(F64), **attrs))
    with pytest.raises(TypeError, match="must share one dtype"):
        C.ew_unary(0 + C.ew_opcode_names().index("relu"), x, np.empty_like(x, F16))


@given(data=st.data())
def test_random_traced_programs_after_the_fusion_passes(data):
    """Random fw programs (fw.core.testing.programs), fused by the inference pipeline,
    run natively and agree with the unfused program within tolerance."""
    pytest.importorskip("fw.core.ir.passes.fuse_elementwise")
    programs = pytest.importorskip("fw.core.testing.programs")
    from fw.core.ir import run
    from fw.core.ir.passes import PassManager

    rp = programs.draw_program(data.draw)
    p = rp.trace()
    q = p.clone()
    PassManager(["fuse_elementwise", "fuse_matmul_bias_act", "dce"]).run(q)
    ins = [fw.to_tensor(x) for x in rp.inputs_]
    for a, b in zip(as_tuple(run(p, *ins)), as_tuple(run(q, *ins))):
        a, b = a.numpy(), b.numpy()
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b.astype(F64), a.astype(F64), rtol=2e-5, atol=2e-6,
                                   equal_nan=True)


# ================================================================ fused_matmul
FM = OPS["fused_matmul"]


@pytest.mark.parametrize("dtype", [F32, BF16])
@pytest.mark.parametrize("activation", ["none", "relu", "gelu_erf", "gelu_tanh", "sigmoid",
                                        "tanh", "silu"])
def test_fused_matmul_native_epilogue(dtype, activation):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 64, 96)).astype(dtype)
    y = (rng.standard_normal((96, 80)) * 0.1).astype(dtype)
    b = rng.standard_normal((1, 80)).astype(dtype)
    r = rng.standard_normal((2, 64, 80)).astype(dtype)
    tol = (1e-4, 1e-4) if dtype == F32 else (5e-2, 5e-2)
    for alpha in (1.0, 0.125, -0.3):
        for bias, res in ((b, r), (None, None), (b, None)):
            hits = _native.cache_info()["hits"] + _native.cache_info()["misses"]
            got = FM.kernels["cpu"](x, y, bias, res, activation=activation, alpha=alpha)
            assert _native.cache_info()["hits"] + _native.cache_info()["misses"] > hits
            want = FM.reference(x, y, bias, res, activation=activation, alpha=alpha)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=tol[0],
                                       atol=tol[1])


def test_fused_matmul_transposes_vectors_and_fallbacks():
    rng = np.random.default_rng(14)
    k = FM.kernels["cpu"]
    x = rng.standard_normal((96, 64)).astype(F32)
    y = rng.standard_normal((80, 96)).astype(F32)
    cases = [
        ((x, y, None, None), {"transpose_x": True, "transpose_y": True}),
        ((x[:, 0].copy(), y.T.copy(), rng.standard_normal(80).astype(F32), None), {}),
        # residual broadcasting over the product: the reference
        ((x.T.copy(), y.T.copy(), None, rng.standard_normal((1, 80)).astype(F32)), {}),
        ((x.T.copy(), y.T.copy(), None, rng.standard_normal((3, 64, 80)).astype(F32)), {}),
        ((x[:4, :4].copy(), y[:4, :4].copy(), None, None), {}),  # small: the reference
        ((x.astype(F16), y.astype(F16), None, None), {"transpose_x": True,
                                                      "transpose_y": True}),
    ]
    for args, attrs in cases:
        got = k(*args, **attrs)
        want = FM.reference(*args, **attrs)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=1e-3, atol=1e-3)
    with pytest.raises(InvalidArgumentError, match="contracted dimensions differ"):
        fw.core.dispatch.invoke(FM, [x, x, None, None], dict(FM.attrs))

