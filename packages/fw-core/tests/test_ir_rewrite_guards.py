"""Guards of the rewrite passes, each on a program built to sit on its edge: the
rewrite fires on one side (the program changes as the pass promises) and must NOT
fire on the other (the program is left as it was), and either way the optimized
program computes what the original computes."""

import collections

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.passes import PassManager, get_pass
from fw.core.ops import OPS, call
from fw.core.testing import as_tuple

T = TensorType
F32, F64 = np.float32, np.float64


@pytest.fixture(autouse=True)
def _reference_kernels(monkeypatch):
    """Fusions are bit-exact against the NumPy reference kernels."""
    for n in ("fused_matmul", "conv", "fused_conv", "matmul", "linear", "relu"):
        if "cpu" in OPS[n].kernels:
            monkeypatch.delitem(OPS[n].kernels, "cpu")


def _const(a, name):
    t = fw.to_tensor(np.asarray(a))
    t.name = name
    t.persistable = True  # not trainable: a block-0 constant, as in a predictor
    return t


def _rand(*shape, seed=0, dtype=F32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _ops(p) -> collections.Counter:
    return collections.Counter(op.name for op in p.walk())


def _after(p, passes):
    q = p.clone()
    changed = PassManager(passes).run(q)
    verify(q)
    return q, changed


def _same(p, q, inputs, exact=True):
    for a, b in zip(as_tuple(run(p, *inputs)), as_tuple(run(q, *inputs)), strict=True):
        a, b = a.numpy(), b.numpy()
        assert a.shape == b.shape and a.dtype == b.dtype
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


# ================================================================ fold_linear_chain
# x [*, k] @ W1 [k, n1] @ W2 [n1, n2] folds into x @ (W1 W2) [k, n2] unless that costs
# more multiply-adds per row: k * n2 > k * n1 + n1 * n2
@pytest.mark.parametrize("k,n1,n2,folds", [
    (4, 2, 4, True),  # 16 == 8 + 8: as cheap folded, folded
    (4, 2, 5, False),  # 20 > 8 + 10
    (1, 2, 4, True),  # 4 < 2 + 8: a chain that widens, still cheaper folded
    (3, 2, 3, True),  # 9 < 6 + 6
    (12, 8, 6, True)])
def test_linear_chain_folds_exactly_when_it_is_not_dearer(k, n1, n2, folds):
    w1, w2 = _const(_rand(k, n1, seed=1), "w1"), _const(_rand(n1, n2, seed=2), "w2")
    b1, b2 = _const(_rand(n1, seed=3), "b1"), _const(_rand(n2, seed=4), "b2")
    p = trace(lambda x: call("linear", call("linear", x, w1, b1), w2, b2),
              [T([-1, k], "float32")], ["x"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["fold_linear_chain"])
    assert changed is folds
    assert _ops(q)["fused_matmul"] == (1 if folds else 2)
    if folds:
        (mm,) = [op for op in q.walk() if op.name == "fused_matmul"]
        assert mm.operands[1].type.shape == (k, n2)
    _same(p, q, [_rand(5, k, seed=5)], exact=not folds)


@pytest.mark.parametrize("what", ["outer transpose_x", "outer alpha", "inner alpha",
                                  "inner activation", "inner residual", "float64 weight",
                                  "batched inner weight", "inner read twice"])
def test_linear_chain_guards(what):
    w1, w2 = _const(_rand(6, 6, seed=6), "w1"), _const(_rand(6, 6, seed=7), "w2")
    w64 = _const(_rand(6, 6, seed=8, dtype=F64), "w64")
    w3 = _const(_rand(2, 6, 6, seed=9), "w3")

    def f(x, r):
        if what == "inner activation":
            return fw.matmul(call("relu", fw.matmul(x, w1)), w2)
        if what == "inner residual":
            return fw.matmul(fw.matmul(x, w1) + r, w2)
        if what == "outer transpose_x":
            return fw.matmul(fw.matmul(x, w1), w2, transpose_x=True)
        if what == "outer alpha":
            return fw.matmul(fw.matmul(x, w1), w2) * 2.0
        if what == "inner alpha":
            return fw.matmul(fw.matmul(x, w1) * 2.0, w2)
        if what == "float64 weight":
            return fw.matmul(fw.matmul(fw.cast(x, "float64"), w64), fw.cast(w2, "float64"))
        if what == "batched inner weight":
            return fw.matmul(fw.matmul(x, w3), w2)
        h = fw.matmul(x, w1)
        return fw.matmul(h, w2), h

    types = [T([6, 6], "float32"), T([6, 6], "float32")]
    p = trace(f, types, ["x", "r"])
    fused, _ = _after(p, ["fuse_matmul_bias_act", "fold_matmul_scale"])
    before = _ops(fused)["fused_matmul"]
    q, changed = _after(fused, ["fold_linear_chain"])
    if what in ("outer alpha", "inner alpha"):
        # fold_matmul_scale moved the scale into the weights first: then it folds
        assert _ops(q)["fused_matmul"] <= before
    else:
        assert not changed and _ops(q)["fused_matmul"] == before, q
    _same(p, q, [_rand(6, 6, seed=10), _rand(6, 6, seed=11)], exact=False)


# ================================================================ fuse_conv_bias_act
def test_conv_bias_of_another_dtype_is_not_absorbed():
    """conv f32 + a per-channel f64 constant promotes to f64: fusing it would change the
    result's dtype and precision."""
    w = _const(_rand(3, 2, 2, 2, seed=12), "cw")
    b64 = _const(_rand(1, 3, 1, 1, seed=13, dtype=F64), "cb64")
    b32 = _const(_rand(1, 3, 1, 1, seed=13), "cb32")
    for b, absorbed in ((b64, False), (b32, True)):
        p = trace(lambda x, b=b: call("relu", call("conv", x, w, None) + b),
                  [T([2, 2, 5, 5], "float32")])
        q, changed = _after(p, ["fuse_conv_bias_act", "dce"])
        assert changed is absorbed and (_ops(q)["fused_conv"] == 1) is absorbed, q
        _same(p, q, [_rand(2, 2, 5, 5, seed=14)])


def test_conv_scalar_bias_is_not_a_channel_bias():
    w = _const(_rand(3, 2, 2, 2, seed=15), "cw2")
    s = _const(np.array(0.5, F32), "s0")  # 0-d: one value for every channel
    p = trace(lambda x: call("conv", x, w, None) + s, [T([2, 2, 5, 5], "float32")])
    q, changed = _after(p, ["fuse_conv_bias_act", "dce"])
    assert not changed and _ops(q)["fused_conv"] == 0
    _same(p, q, [_rand(2, 2, 5, 5, seed=16)])


# ================================================================ layout_nhwc
def _conv_w(c_out, c_in, name, seed):
    return _const(_rand(c_out, c_in, 3, 3, seed=seed) * 0.3, name)


@pytest.mark.parametrize("layouts,converts", [
    (("NCHW", "NCHW"), True), (("NHWC", "NHWC"), False), (("NCHW", "NHWC"), False)])
def test_layout_converts_only_channel_first_convs(layouts, converts):
    """Convs already channel-last are not convertible: they neither count towards
    min_convs nor get wrapped in transposes."""
    w1, w2 = _conv_w(4, 4, "lw1", 17), _conv_w(4, 4, "lw2", 18)

    def conv(x, w, layout):
        if layout == "NHWC":
            return call("conv", x.transpose([0, 2, 3, 1]), w, None, padding=1,
                        channel_last=True).transpose([0, 3, 1, 2])
        return call("conv", x, w, None, padding=1)

    p = trace(lambda x: conv(call("relu", conv(x, w1, layouts[0])), w2, layouts[1]),
              [T([2, 4, 5, 5], "float32")])
    q, changed = _after(p, ["layout_nhwc", "dce"])
    assert changed is converts
    if not converts:
        assert str(q) == str(p)
    else:
        assert all(op.attrs["channel_last"] for op in q.walk() if op.name == "conv")
        assert _ops(q)["transpose"] == 2
    _same(p, q, [_rand(2, 4, 5, 5, seed=19)], exact=False)


def test_layout_with_min_channels_keeps_a_zero_channel_stem():
    """min_channels=0 converts every conv, a stem without channels (nothing to
    convolve: bias only) included; min_channels=1 keeps that one channel first."""
    w0 = _const(np.zeros((4, 0, 3, 3), F32), "w0")
    b0 = _const(_rand(4, seed=20), "b0")
    w1 = _conv_w(4, 4, "lw3", 21)
    p = trace(lambda x: call("conv", call("conv", x, w0, b0, padding=1), w1, None, padding=1),
              [T([2, 0, 5, 5], "float32")])
    x = np.zeros((2, 0, 5, 5), F32)
    try:
        want = run(p, x).numpy()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"a conv over zero channels does not run here: {e}")
    for min_channels, n_last in ((0, 2), (1, 1)):
        q = p.clone()
        get_pass("layout_nhwc", min_channels=min_channels, min_convs=1).run(q)
        PassManager(["dce"]).run(q)
        verify(q)
        assert sum(bool(op.attrs["channel_last"]) for op in q.walk()
                   if op.name == "conv") == n_last, q
        np.testing.assert_allclose(run(q, x).numpy(), want, rtol=1e-5, atol=1e-6)


# ================================================================ algebraic_simplify
def test_multiply_by_ones_is_dropped_only_when_it_cannot_broadcast_x():
    ones13 = _const(np.ones((1, 3), F32), "ones13")
    ones23 = _const(np.ones((2, 3), F32), "ones23")
    ones113 = _const(np.ones((1, 1, 3), F32), "ones113")

    def f(x, d):
        return (x * ones13,  # [2, 3] * [1, 3]: x's shape and dtype, dropped
                d * ones13,  # [-1, 3] * [1, 3]: still x's shape, dropped
                d * ones23,  # [-1, 3] * [2, 3]: a batch of 1 would grow to 2: kept
                x * ones113)  # a higher rank: kept

    p = trace(f, [T([2, 3], "float32"), T([-1, 3], "float32")], ["x", "d"])
    q, changed = _after(p, ["algebraic_simplify", "dce"])
    assert changed
    x, d = q.block.args[:2]
    outs = q.block.outputs
    assert outs[0] is x and outs[1] is d
    assert outs[2].owner.name == "multiply" and outs[3].owner.name == "multiply"
    _same(p, q, [_rand(2, 3, seed=30), _rand(1, 3, seed=31)])
    _same(p, q, [_rand(2, 3, seed=30), _rand(2, 3, seed=32)])


# ================================================================ the Rewriter
def test_erasing_a_cond_forgets_the_uses_of_its_branch_outputs():
    """A branch yielding an outer value reads it; once the cond is erased, that use is
    gone (a pass asking for a single reader must not see it)."""
    from fw.core.ir.control import cond
    from fw.core.ir.passes.rewrite import Rewriter

    def f(x):
        y = x.exp()
        dead = cond(call("less_than", call("sum", x), 0.0), lambda: y, lambda: y.neg())
        del dead
        return y.tanh()

    p = trace(f, [T([3], "float64")])
    y = next(op for op in p.block.ops if op.name == "exp").results[0]
    c = next(op for op in p.block.ops if op.name == "cond")
    rw = Rewriter(p)
    assert rw.num_uses(y) == 3  # the then-branch yield, the neg, the tanh
    rw.erase(c)
    users = rw.users(y)
    assert len(users) == 1 and users[0][0].name == "tanh", users
    assert rw.num_uses(y) == 1 and rw.has_uses(y)
    verify(p)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(run(p, x).numpy(), np.tanh(np.exp(x)))


# ================================================================ nothing to rewrite
# Each program holds the op a pattern looks at, on the pattern's negative side. The pass
# must report no change (pipelines iterate while passes report changes: a pattern that
# claims one without rewriting keeps them going to their round limit) and leave the
# program text as it was.
def _w(shape, name, seed, dtype=F32):
    return _const(_rand(*shape, seed=seed, dtype=dtype), name)


NOTHING = {
    "algebraic_simplify: a single neg": (
        "algebraic_simplify", lambda x: x.exp().neg(), [4]),
    "algebraic_simplify: neg of an input": ("algebraic_simplify", lambda x: x.neg(), [4]),
    "algebraic_simplify: cast to another dtype": (
        "algebraic_simplify", lambda x: fw.cast(x, "float64"), [4]),
    "algebraic_simplify: reshape that copies a dim (0)": (
        "algebraic_simplify", lambda x: fw.reshape(fw.reshape(x, [3, 4]), [0, 2, -1]), [2, 6]),
    "algebraic_simplify: transpose of an exp": (
        "algebraic_simplify", lambda x: fw.transpose(x.exp(), [1, 0]), [2, 3]),
    "fuse_matmul_bias_act: a bare matmul": (
        "fuse_matmul_bias_act", lambda x: fw.matmul(x, _w((4, 3), "m.w", 40)), [2, 4]),
    "fuse_matmul_bias_act: matmul by a vector": (
        "fuse_matmul_bias_act", lambda x: call("relu", fw.matmul(x, _w((4,), "m.v", 41))),
        [2, 4]),
    "fuse_conv_bias_act: a bare conv": (
        "fuse_conv_bias_act", lambda x: call("conv", x, _w((3, 2, 2, 2), "c.w", 42), None),
        [2, 2, 5, 5]),
    "fuse_conv_bias_act: a conv read twice": (
        "fuse_conv_bias_act", lambda x: (lambda h: (call("relu", h), h))(
            call("conv", x, _w((3, 2, 2, 2), "c.w2", 43), None)), [2, 2, 5, 5]),
    "fold_batch_norm: bn of an input": (
        "fold_batch_norm", lambda x: call("batch_norm", x, *[
            _const(np.full(3, v, F32), f"bn.{i}") for i, v in enumerate((0.5, 2.0, 1.5, 0.1))])[0],
        [2, 3]),
    "fold_matmul_scale: a multiply of two inputs": (
        "fold_matmul_scale", lambda x: fw.matmul(x, _w((4, 4), "s.w", 44)) * x, [4, 4]),
    "fold_matmul_scale: a multiply by a scalar of a non-product": (
        "fold_matmul_scale", lambda x: x.exp() * 2.0, [4, 4]),
    "fold_flatten_transpose: a flatten of an input": (
        "fold_flatten_transpose", lambda x: call("linear", x.flatten(1), _w((12, 3), "f.w", 45),
                                                 None), [2, 3, 4]),
    "fold_linear_chain: a product of an input": (
        "fold_linear_chain", lambda x: call("fused_matmul", x, _w((4, 3), "l.w", 46), None, None),
        [2, 4]),
    "merge_parallel_matmul: one product per input": (
        "merge_parallel_matmul", lambda x: (call("fused_matmul", x, _w((4, 3), "p.w", 47), None,
                                                 None), x.exp()), [2, 4]),
    "fuse_elementwise: a lone op": ("fuse_elementwise", lambda x: x.exp(), [4]),
}


@pytest.mark.parametrize("name", list(NOTHING))
def test_a_pass_with_nothing_to_rewrite_reports_no_change(name):
    pass_name, fn, shape = NOTHING[name]
    dtype = "float64" if "float64" in name else "float32"
    p = trace(fn, [T(shape, dtype)])
    q = p.clone()
    changed = get_pass(pass_name).run(q)
    verify(q)
    assert changed is False and str(q) == str(p), q
    x = _rand(*shape, seed=48, dtype=np.dtype(dtype))
    _same(p, q, [x])


# ================================================================ fold_linear_chain on fused ops
def _fm(x, w, b=None, r=None, **attrs):
    return call("fused_matmul", x, w, b, r, **attrs)


@pytest.mark.parametrize("what,folds", [
    ("no biases", True), ("inner bias only", True), ("outer bias only", True),
    ("outer transpose_x", False), ("outer alpha", False), ("inner alpha", False),
    ("inner activation", False), ("inner residual", False), ("3-d inner weight", False),
    ("3-d outer weight", False), ("inner bias an input", False), ("inner read twice", False),
    ("h as the outer weight too", False)])
def test_linear_chain_of_fused_products(what, folds):
    w1, w2 = _w((6, 6), "fw1", 50), _w((6, 6), "fw2", 51)
    b1, b2 = _w((6,), "fb1", 52), _w((6,), "fb2", 53)
    w3 = _w((1, 6, 6), "fw3", 54)

    def f(x, r, bin_):
        if what == "no biases":
            return _fm(_fm(x, w1), w2)
        if what == "inner bias only":
            return _fm(_fm(x, w1, b1), w2)
        if what == "outer bias only":
            return _fm(_fm(x, w1), w2, b2)
        if what == "outer transpose_x":
            return _fm(_fm(x, w1, b1), w2, b2, transpose_x=True)
        if what == "outer alpha":
            return _fm(_fm(x, w1), w2, alpha=2.0)
        if what == "inner alpha":
            return _fm(_fm(x, w1, alpha=2.0), w2)
        if what == "inner activation":
            return _fm(_fm(x, w1, activation="relu"), w2)
        if what == "inner residual":
            return _fm(_fm(x, w1, None, r), w2)
        if what == "3-d inner weight":
            return _fm(_fm(x, w3), w2)
        if what == "3-d outer weight":
            return _fm(_fm(x, w1), w3)
        if what == "inner bias an input":
            return _fm(_fm(x, w1, bin_), w2)
        h = _fm(x, w1)
        if what == "inner read twice":
            return _fm(h, w2), h
        return _fm(h, h)  # "h as the outer weight too"

    p = trace(f, [T([6, 6], "float32"), T([6, 6], "float32"), T([6], "float32")])
    before = _ops(p)["fused_matmul"]
    q, changed = _after(p, ["fold_linear_chain"])
    assert changed is folds, q
    assert _ops(q)["fused_matmul"] == before - (1 if folds else 0)
    _same(p, q, [_rand(6, 6, seed=55), _rand(6, 6, seed=56), _rand(6, seed=57)],
          exact=not folds)


# ================================================================ fold_flatten_transpose
def test_flatten_transpose_stays_when_another_op_reads_the_features():
    w = _w((24, 3), "ftw", 70)

    def f(y):
        flat = y.transpose([0, 3, 1, 2]).flatten(1)
        return call("linear", flat, w, None), flat.exp()

    p = trace(f, [T([2, 3, 4, 2], "float32")])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["fold_flatten_transpose"])
    assert not changed and "transpose" in _ops(q)
    _same(p, q, [_rand(2, 3, 4, 2, seed=71)], exact=False)


# ================================================================ constant_folding
@pytest.fixture
def effect_with_result():
    """A side-effecting op that returns its input, as the collective ops do (here with a
    recording reference instead of communication): removed again afterwards."""
    from fw.core.ops._registry import defop

    seen = []
    op = defop("_test_effect_id", ("x",), infer=lambda x: x,
               reference=lambda x: seen.append(np.array(x)) or np.array(x), side_effect=True,
               promote=None, api=False, method=False)
    yield op, seen
    del OPS["_test_effect_id"]


def test_constant_folding_never_folds_a_side_effect(effect_with_result):
    """Its operand is a constant, but the effect must happen at each run, not once when
    the pass runs."""
    from fw.core.ir.builder import Builder

    op, seen = effect_with_result
    k = _const(np.array([1.0, 2.0], F32), "eff.k")
    b = Builder()
    with b:
        x = b.add_input(T([2], "float32"), "x")
        y = b.append_op(op, [k * 2.0], {}, [T([2], "float32")]).results[0]
        b.set_outputs(x + y)
    p = b.program
    q, _ = _after(p, ["constant_folding", "dce"])
    assert _ops(q)["_test_effect_id"] == 1 and not seen, q
    for i in range(2):
        np.testing.assert_array_equal(run(q, np.ones(2, F32)).numpy(), [3.0, 5.0])
        assert len(seen) == i + 1
        np.testing.assert_array_equal(seen[-1], [2.0, 4.0])


# ================================================================ fold_matmul_scale
@pytest.mark.parametrize("act,scale,folds", [
    ("relu", 0.5, True), ("relu", 2.0, True),  # relu(x) * s == relu(s x) for s > 0
    ("relu", -0.5, False), ("none", -0.5, True), ("sigmoid", 0.5, False)])
def test_a_scale_after_an_activation_folds_only_when_it_commutes(act, scale, folds):
    w, b = _w((4, 3), "sw", 80), _w((3,), "sb", 81)
    p = trace(lambda x: _fm(x, w, b, activation=act) * scale, [T([2, 4], "float32")])
    q, changed = _after(p, ["fold_matmul_scale", "dce"])
    assert changed is folds and (_ops(q)["multiply"] == 0) is folds, q
    _same(p, q, [_rand(2, 4, seed=82)], exact=False)


# ================================================================ fuse_conv_bias_act
def test_a_single_channel_conv_takes_its_bias():
    w = _w((1, 2, 2, 2), "c1w", 83)
    b = _w((1, 1, 1, 1), "c1b", 84)
    p = trace(lambda x: call("relu", call("conv", x, w, None) + b), [T([2, 2, 5, 5], "float32")])
    q, changed = _after(p, ["fuse_conv_bias_act", "dce"])
    assert changed and _ops(q) == {"fused_conv": 1, "reshape": 1}, q
    _same(p, q, [_rand(2, 2, 5, 5, seed=85)])


# ================================================================ algebraic_simplify
# x / 1 is x only when the division keeps x's type: int32 / int32 is float32 (true
# division), so the int operand cannot stand for the result. A traced program casts
# first; a parsed (or imported) one may divide ints directly.
@pytest.mark.parametrize("dtype,drops", [("i32", False), ("f32", True)])
def test_dividing_by_one_is_dropped_only_when_it_keeps_the_type(dtype, drops):
    from fw.core.ir import parse

    p = parse(f"""program {{
  block 0 (%x: {dtype}[3]) {{
    %0 = full() {{shape=[1], fill_value=1, dtype={dtype}}} : {dtype}[1]
    %1 = divide(%x, %0) : f32[3]
    return %1
  }}
}}""")
    verify(p)
    q, changed = _after(p, ["algebraic_simplify"])
    assert changed is drops and (_ops(q)["divide"] == 0) is drops, q
    (out,) = q.block.outputs
    assert out.type == T([3], "float32"), q
    x = np.array([1, -2, 7], np.int32 if dtype == "i32" else F32)
    (got,) = as_tuple(run(q, x))
    np.testing.assert_array_equal(got.numpy(), x.astype(F64))


# ================================================================ fold_batch_norm
def test_a_batch_norm_input_named_like_a_captured_constant_is_not_folded():
    """captured_array takes only block-0 params/consts: a program input that happens
    to share its name with a captured constant (same shape and dtype) is runtime data,
    and folding the constant's value in its place would compute the wrong thing."""
    w = _w((3, 2, 1, 1), "bnx.w", 90)
    mean, beta = _w((3,), "bnx.mean", 91), _w((3,), "bnx.beta", 92)
    var = _const(np.abs(_rand(3, seed=93)) + 0.5, "bnx.var")
    p = trace(lambda x, g: call("batch_norm", call("conv", x, w, None), mean, var, g, beta)[0],
              [T([2, 2, 4, 4], "float32"), T([3], "float32")], ["x", "bnx.beta"])
    q, changed = _after(p, ["fold_batch_norm", "dce"])
    assert not changed and _ops(q)["batch_norm"] == 1, q
    gamma = np.array([2.0, -1.0, 0.5], F32)  # not the captured bnx.beta
    _same(p, q, [_rand(2, 2, 4, 4, seed=94), gamma])
    # the same program with gamma captured folds (the guard's other side)
    g = _const(gamma, "bnx.gamma")
    p2 = trace(lambda x: call("batch_norm", call("conv", x, w, None), mean, var, g, beta)[0],
               [T([2, 2, 4, 4], "float32")], ["x"])
    q2, changed2 = _after(p2, ["fold_batch_norm", "dce"])
    assert changed2 and _ops(q2)["batch_norm"] == 0, q2
    np.testing.assert_allclose(as_tuple(run(q2, _rand(2, 2, 4, 4, seed=94)))[0].numpy(),
                               as_tuple(run(p, _rand(2, 2, 4, 4, seed=94), gamma))[0].numpy(),
                               rtol=1e-5, atol=1e-5)


# ================================================================ fuse_elementwise
# pow joins a group when its exponent is a one-element constant of at most x's rank
# (it then broadcasts into x's shape, and becomes a scalar of the instruction)
@pytest.mark.parametrize("eshape,fuses", [([], True), ([1], True), ([1, 1], True),
                                          ([1, 1, 1], False)])
def test_pow_fuses_with_a_one_element_exponent_up_to_the_base_rank(eshape, fuses):
    e = _const(np.full(eshape, 2.0, F32), "pe")
    p = trace(lambda x: call("pow", x.exp(), e).tanh(), [T([3, 4], "float32")], ["x"])
    q, changed = _after(p, ["fuse_elementwise", "dce"])
    # else pow stays, and exp [3, 4] and tanh [1, 3, 4] around it are lone ops
    assert changed is fuses and _ops(q) == ({"fused_elementwise": 1} if fuses else _ops(p)), q
    _same(p, q, [_rand(3, 4, seed=95)], exact=False)  # the native fused kernel rounds apart


def test_a_group_the_fused_op_cannot_express_stays_and_reports_no_change(monkeypatch):
    """The last check before rewriting (fused.check_program over the whole group) is a
    fallback: a group it refuses is left as it is, and the pass says it changed nothing
    (a pass manager iterating to a fixed point relies on that)."""
    import fw.core.ir.passes.fuse_elementwise as fe
    from fw.core.errors import InvalidArgumentError

    def refuse(*a, **k):
        raise InvalidArgumentError("refused")

    monkeypatch.setattr(fe, "check_program", refuse)
    p = trace(lambda x: (x.exp() + 1.0).tanh(), [T([4], "float32")], ["x"])
    q, changed = _after(p, ["fuse_elementwise"])
    assert changed is False and "fused_elementwise" not in _ops(q), q
    assert _ops(q) == _ops(p)
    _same(p, q, [_rand(4, seed=96)])
