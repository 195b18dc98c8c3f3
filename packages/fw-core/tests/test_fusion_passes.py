"""Fusion passes and fused ops: a golden test on program text per pattern, equality of
outputs before and after on random inputs through the executor (bit-exact where the
pass promises it), the fused ops' references against the unfused chains they replace,
and the text/model-file round trip of fused programs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fw
from fw.core import dtypes as _dt
from fw.core.ir import TensorType, parse, run, trace, verify
from fw.core.ir.control import cond
from fw.core.ir.passes import PIPELINES, PassManager, get_pass
from fw.core.ops import OPS, call
from fw.core.testing import as_tuple, records_for, reference_call, tolerance
from fw.core.testing.programs import draw_program
from fw.core.testing.records import fused as fused_records

T = TensorType
F32 = np.float32


@pytest.fixture(autouse=True)
def _reference_kernels(monkeypatch):
    """The passes must reproduce the unfused program bit for bit with the NumPy
    reference kernels; the native kernels are checked against those references
    (within a few ulp) in test_native_fused.py."""
    for n in ("fused_elementwise", "fused_matmul", "relu", "gelu", "silu", "conv", "fused_conv",
              "conv_transpose"):
        if "cpu" in OPS[n].kernels:
            monkeypatch.delitem(OPS[n].kernels, "cpu")


def _param(rng, shape, name, dtype=F32, scale=0.5):
    t = fw.to_tensor((rng.standard_normal(shape) * scale).astype(dtype))
    t.name = name
    t.persistable = True
    t.trainable = True
    return t


def _buffer(array, name):
    t = fw.to_tensor(array)
    t.name = name
    t.persistable = True
    return t


def _apply(name, p):
    changed = get_pass(name).run(p)
    verify(p)
    return changed


def _text(lines: str) -> str:
    return "program {\n" + lines + "}\n"


def _outputs(p, inputs):
    return [o.numpy() for o in as_tuple(run(p, *inputs))]


def _check_same(p, q, inputs, exact=True, rtol=1e-5, atol=1e-6):
    a, b = _outputs(p, inputs), _outputs(q, inputs)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape and x.dtype == y.dtype
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def _fused(p, name, passes=None):
    """(clone of p after `passes` (default: the pass `name`), whether it changed)."""
    q = p.clone()
    changed = PassManager(passes or [name]).run(q)
    return q, changed


# ================================================================ fused ops vs unfused chains
def _oracle_case(name, oracle, data, exact):
    (rec,) = records_for(name)
    dtype = data.draw(st.sampled_from(rec.dtypes if not exact else (_dt.float32,
                                                                    _dt.float64)))
    s = rec.sample(data.draw, dtype)
    got, attrs = reference_call(OPS[name], s.args, dict(s.attrs))
    want = oracle(*s.args, **s.attrs)
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        r, a = rec.tol.get(dtype.name, tolerance(dtype))
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=r,
                                   atol=a)


@given(data=st.data())
def test_fused_matmul_is_the_unfused_chain_bit_for_bit(data):
    _oracle_case("fused_matmul", fused_records.fused_matmul_oracle, data, exact=True)


@given(data=st.data())
def test_fused_matmul_low_precision_is_close_to_the_chain(data):
    _oracle_case("fused_matmul", fused_records.fused_matmul_oracle, data, exact=False)


@given(data=st.data())
def test_fused_conv_is_the_unfused_chain_bit_for_bit(data):
    _oracle_case("fused_conv", fused_records.fused_conv_oracle, data, exact=True)


def test_fused_matmul_order_is_act_then_residual():
    x = np.array([[1.0, -2.0]], F32)
    y = np.eye(2, dtype=F32)
    r = np.array([[1.0, 1.0]], F32)
    out = call("fused_matmul", fw.to_tensor(x), fw.to_tensor(y), None, fw.to_tensor(r),
               activation="relu")
    assert out.numpy().tolist() == [[2.0, 1.0]]  # relu(x) + r, not relu(x + r) = [2, 0]


def test_fused_elementwise_program_round_trips_through_text():
    p = trace(lambda x, y: call("fused_elementwise", [x, y], program=(
        ("silu", "float32", (0,), ()), ("const", _dt.float32, (), (0.5,)),
        ("multiply", "f32", (2, 3), ()), ("add", "f32", (4, 1), ())), out_dtype="float32"),
        [T([-1, 3], "float32"), T([3], "float32")])
    text = str(p)
    assert 'program=[["silu", f32, [0], []], ["const", f32, [], [0.5]], ' \
           '["multiply", f32, [2, 3], []], ["add", f32, [4, 1], []]]' in text
    assert str(parse(text)) == text
    x, y = np.linspace(-2, 2, 6, dtype=F32).reshape(2, 3), np.ones(3, F32)
    want = x / (1 + np.exp(-x)) * F32(0.5) + y
    np.testing.assert_allclose(run(p, x, y).numpy(), want, rtol=1e-6)


# ================================================================ fuse_matmul_bias_act
def test_fuse_matmul_golden():
    rng = np.random.default_rng(0)
    w, b = _param(rng, (4, 3), "fc.w"), _param(rng, (3,), "fc.b")

    def f(x, r):
        return call("relu", fw.matmul(x, w) + b) + r

    p = trace(f, [T([-1, 4], "float32"), T([-1, 3], "float32")], ["x", "r"])
    q, changed = _fused(p, "fuse_matmul_bias_act")
    assert changed
    assert str(q) == _text("""\
  block 0 (%x: f32[-1,4], %r: f32[-1,3], %p0: f32[4,3] param "fc.w", %p1: f32[3] param "fc.b") {
    %0 = fused_matmul(%x, %p0, %p1, %r) {transpose_x=false, transpose_y=false, \
activation="relu", alpha=1.0} : f32[-1,3]
    return %0
  }
""")
    inputs = [rng.standard_normal((5, 4)).astype(F32), rng.standard_normal((5, 3)).astype(F32)]
    _check_same(p, q, inputs)
    assert not _apply("fuse_matmul_bias_act", q)


def test_fuse_linear_with_gelu_and_alpha_forms():
    rng = np.random.default_rng(1)
    w, b = _param(rng, (4, 6), "w"), _param(rng, (6,), "b")
    wt = _param(rng, (6, 4), "wt")

    def f(x):
        h = call("gelu", call("linear", x, w, b), approximate=True)     # linear + act
        g = call("tanh", fw.matmul(x, wt, transpose_y=True) * 0.25)     # alpha + act
        return h, g

    p = trace(f, [T([2, 4], "float32")], ["x"])
    q, _ = _fused(p, "fuse_matmul_bias_act")
    text = str(q)
    assert text.count("fused_matmul(") == 2 and "linear(" not in text
    assert 'activation="gelu_tanh", alpha=1.0' in text
    assert 'transpose_y=true, activation="tanh", alpha=0.25' in text
    _check_same(p, q, [rng.standard_normal((2, 4)).astype(F32)])


def test_fuse_matmul_keeps_what_the_formula_cannot_express():
    rng = np.random.default_rng(2)
    w, b = _param(rng, (4, 3), "w"), _param(rng, (3,), "b")
    r = _param(rng, (2, 3), "r")

    def f(x):
        p0 = fw.matmul(x, w)
        shared = p0 + b                        # used twice: the chain stops at the bias
        a = call("relu", shared + r)           # residual before the activation: not fused
        return a, shared * 2.0

    p = trace(f, [T([2, 4], "float32")], ["x"])
    q, _ = _fused(p, "fuse_matmul_bias_act")
    assert str(q) == _text("""\
  block 0 (%x: f32[2,4], %p0: f32[4,3] param "w", %p1: f32[3] param "b", %p2: f32[2,3] param "r") {
    %0 = fused_matmul(%x, %p0, %p1, none) {transpose_x=false, transpose_y=false, \
activation="none", alpha=1.0} : f32[2,3]
    %1 = add(%0, %p2) : f32[2,3]
    %2 = relu(%1) : f32[2,3]
    %3 = full() {shape=[], fill_value=2.0, dtype=f32} : f32[]
    %4 = multiply(%0, %3) : f32[2,3]
    return %2, %4
  }
""")
    _check_same(p, q, [rng.standard_normal((2, 4)).astype(F32)])


def test_every_linear_becomes_a_fused_matmul():
    rng = np.random.default_rng(14)
    w, b = _param(rng, (4, 3), "w"), _param(rng, (3,), "b")
    p = trace(lambda x: (call("linear", x, w, b), call("linear", x, w)), [T([-1, 4], "float32")],
              ["x"])
    q, changed = _fused(p, "fuse_matmul_bias_act")
    assert changed
    assert str(q) == _text("""\
  block 0 (%x: f32[-1,4], %p0: f32[4,3] param "w", %p1: f32[3] param "b") {
    %0 = fused_matmul(%x, %p0, %p1, none) {transpose_x=false, transpose_y=false, \
activation="none", alpha=1.0} : f32[-1,3]
    %1 = fused_matmul(%x, %p0, none, none) {transpose_x=false, transpose_y=false, \
activation="none", alpha=1.0} : f32[-1,3]
    return %0, %1
  }
""")
    _check_same(p, q, [rng.standard_normal((2, 4)).astype(F32)])


def test_fuse_matmul_leaves_bare_products_integers_and_growing_broadcasts():
    rng = np.random.default_rng(3)
    w = _param(rng, (4, 3), "w")
    wi = fw.to_tensor(np.ones((4, 3), np.int64))
    wide = _param(rng, (5, 1, 3), "wide")

    def f(x, xi):
        return fw.matmul(x, w), call("relu", fw.matmul(xi, wi)), fw.matmul(x, w) + wide

    p = trace(f, [T([2, 4], "float32"), T([2, 4], "int64")])
    q, changed = _fused(p, "fuse_matmul_bias_act")
    assert not changed and str(q) == str(p)


def test_fuse_matmul_in_nested_blocks():
    rng = np.random.default_rng(4)
    w, b = _param(rng, (3, 3), "w"), _param(rng, (3,), "b")

    def f(x):
        return cond(x.sum() > 0.0, lambda: call("sigmoid", fw.matmul(x, w) + b),
                    lambda: call("silu", call("linear", x, w, b)))

    p = trace(f, [T([2, 3], "float32")])
    q, _ = _fused(p, "fuse_matmul_bias_act")
    assert str(q).count("fused_matmul(") == 2
    for s in (1.0, -1.0):
        _check_same(p, q, [np.abs(rng.standard_normal((2, 3))).astype(F32) * s])


@st.composite
def mlps(draw):
    """A random MLP built from fw ops: matmul/linear layers, bias forms, activations,
    residuals, dynamic batch."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    dtype = draw(st.sampled_from(["float32", "float64"]))
    sizes = [draw(st.integers(1, 6)) for _ in range(draw(st.integers(2, 4)))]
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        w = _param(rng, (a, b), f"l{i}.w", dtype)
        bias = _param(rng, draw(st.sampled_from([(b,), (1, b)])), f"l{i}.b", dtype)
        layers.append((draw(st.sampled_from(["matmul", "linear", "linear_nobias"])), w, bias,
                       draw(st.sampled_from([None, "relu", "gelu", "gelu_t", "sigmoid", "tanh",
                                             "silu", "exp"])),
                       draw(st.booleans()) and a == b, draw(st.booleans())))

    def act(h, name):
        if name is None:
            return h
        if name.startswith("gelu"):
            return call("gelu", h, approximate=name == "gelu_t")
        return call(name, h)

    def f(x):
        h = x
        for kind, w, b, a, residual, flip in layers:
            if kind == "matmul":
                z = fw.matmul(h, w)
                z = (b + z) if flip else (z + b)
            elif kind == "linear":
                z = call("linear", h, w, b.reshape([-1]))
            else:
                z = call("linear", h, w)
            z = act(z, a)
            h = (h + z if flip else z + h) if residual else z
        return h

    batch = draw(st.integers(0, 3))
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    dyn = draw(st.booleans())
    return trace(f, [T([-1 if dyn else batch, sizes[0]], dtype)]), [x]


@given(case=mlps())
def test_fuse_matmul_equality_on_random_mlps(case):
    p, inputs = case
    q, _ = _fused(p, "fuse_matmul_bias_act")
    _check_same(p, q, inputs)
    text = str(q)  # every layer has a bias: each product became a fused_matmul
    assert " matmul(" not in text and "linear(" not in text
    assert text.count("fused_matmul(") == str(p).count("matmul(") + str(p).count("linear(")


# ================================================================ fuse_conv_bias_act
def test_fuse_conv_golden():
    rng = np.random.default_rng(5)
    w = _param(rng, (3, 2, 3, 3), "conv.w")
    b = _param(rng, (1, 3, 1, 1), "conv.b")
    w2, b2 = _param(rng, (3, 3, 1, 1), "c2.w"), _param(rng, (3,), "c2.b")

    def f(x):
        h = call("relu", call("conv", x, w, None, padding=1) + b)
        return call("conv", h, w2, b2) + h

    p = trace(f, [T([-1, 2, 5, 5], "float32")], ["x"])
    q, changed = _fused(p, "fuse_conv_bias_act")
    assert changed
    assert str(q) == _text("""\
  block 0 (%x: f32[-1,2,5,5], %p0: f32[3,2,3,3] param "conv.w", %p1: f32[1,3,1,1] param "conv.b", \
%p2: f32[3,3,1,1] param "c2.w", %p3: f32[3] param "c2.b") {
    %0 = reshape(%p1) {shape=[3]} : f32[3]
    %1 = fused_conv(%x, %p0, %0, none) {stride=[1], padding=[1], dilation=[1], groups=1, \
channel_last=false, activation="relu"} : f32[-1,3,5,5]
    %2 = fused_conv(%1, %p2, %p3, %1) {stride=[1], padding=[0], dilation=[1], groups=1, \
channel_last=false, activation="none"} : f32[-1,3,5,5]
    return %2
  }
""")
    _check_same(p, q, [rng.standard_normal((2, 2, 5, 5)).astype(F32)])


@given(data=st.data())
def test_fuse_conv_equality_on_random_convnets(data):
    draw = data.draw
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    cl = draw(st.booleans())
    nd = draw(st.integers(1, 2))
    c_in, c_out = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    w = _param(rng, (c_out, c_in) + (3,) * nd, "w")
    kind = draw(st.sampled_from(["own", "add", "none"]))
    b_own = _param(rng, (c_out,), "b") if kind == "own" else None
    bshape = (c_out,) if cl else draw(st.sampled_from([(1, c_out) + (1,) * nd,
                                                       (c_out,) + (1,) * nd]))
    b_add = _param(rng, bshape, "badd")
    actname = draw(st.sampled_from([None, "relu", "tanh", "silu", "sigmoid"]))
    residual = draw(st.booleans()) and c_in == c_out

    def f(x):
        h = call("conv", x, w, b_own, padding="SAME", channel_last=cl)
        if kind == "add":
            h = h + b_add
        if actname:
            h = call(actname, h)
        return h + x if residual else h

    n = draw(st.integers(0, 2))
    xs = (n,) + (4,) * nd + (c_in,) if cl else (n, c_in) + (4,) * nd
    p = trace(f, [T([-1] + list(xs[1:]), "float32")])
    q, changed = _fused(p, "fuse_conv_bias_act")
    assert changed == (kind == "add" or actname is not None or residual)
    _check_same(p, q, [rng.standard_normal(xs).astype(F32)])


# ================================================================ fold_batch_norm
def _bn_params(rng, c, name):
    return (_buffer(rng.standard_normal(c).astype(F32), f"{name}.mean"),
            _buffer((rng.random(c) + 0.5).astype(F32), f"{name}.var"),
            _param(rng, (c,), f"{name}.gamma"), _param(rng, (c,), f"{name}.beta"))


def _bn(x, stats, **kw):
    m, v, g, b = stats
    return call("batch_norm", x, m, v, g, b, **kw)[0]


def test_fold_batch_norm_golden_conv():
    rng = np.random.default_rng(6)
    w, b0 = _param(rng, (3, 2, 3, 3), "conv.w"), _param(rng, (3,), "conv.b")
    stats = _bn_params(rng, 3, "bn")
    before = {t.name: t.numpy().copy() for t in (w, b0) + stats}

    def f(x):
        return call("relu", _bn(call("conv", x, w, b0), stats, epsilon=1e-3))

    p = trace(f, [T([-1, 2, 6, 6], "float32")], ["x"])
    q, changed = _fused(p, "fold_batch_norm")
    assert changed
    # a conv without bias followed by a per-channel add folds the same way
    cb = _buffer(b0.numpy().reshape(1, 3, 1, 1), "conv.cb")
    p2 = trace(lambda x: call("relu", _bn(call("conv", x, w, None) + cb, stats, epsilon=1e-3)),
               [T([-1, 2, 6, 6], "float32")], ["x"])
    q2, _ = _fused(p2, "fold_batch_norm")
    assert "add(" not in str(q2) and "batch_norm" not in str(q2)
    x = rng.standard_normal((2, 2, 6, 6)).astype(F32)
    _check_same(p2, q2, [x], exact=False)
    _check_same(p, q2, [x], exact=False)
    assert str(q) == _text("""\
  block 0 (%x: f32[-1,2,6,6], %p0: f32[3,2,3,3] param "conv.w", %p1: f32[3] param "conv.b", \
%c0: f32[3] const "bn.mean", %c1: f32[3] const "bn.var", %p2: f32[3] param "bn.gamma", \
%p3: f32[3] param "bn.beta", %c2: f32[3,2,3,3] const "conv.w.bn_folded", \
%c3: f32[3] const "conv.w.bn_folded_bias") {
    %0 = conv(%x, %c2, %c3) {stride=[1], padding=[0], dilation=[1], groups=1, \
channel_last=false} : f32[-1,3,4,4]
    %1 = relu(%0) : f32[-1,3,4,4]
    return %1
  }
""")
    _check_same(p, q, [rng.standard_normal((2, 2, 6, 6)).astype(F32)], exact=False)
    # the parameters and statistics were not touched; the folded weights are new arrays
    for t in (w, b0) + stats:
        np.testing.assert_array_equal(t.numpy(), before[t.name])
    s = stats[2].numpy() / np.sqrt(stats[1].numpy() + 1e-3)
    np.testing.assert_allclose(q.captured["conv.w.bn_folded"].numpy(),
                               w.numpy() * s[:, None, None, None], rtol=1e-6)
    # dce drops the statistics that were constants; parameters stay in the signature
    PassManager(["dce"]).run(q)
    assert [a.label for a in q.params()] == ["conv.w", "conv.b", "bn.gamma", "bn.beta",
                                             "conv.w.bn_folded", "conv.w.bn_folded_bias"]


def test_fold_batch_norm_linear_and_transposed_matmul():
    rng = np.random.default_rng(7)
    w, b0 = _param(rng, (4, 5), "fc.w"), _param(rng, (5,), "fc.b")
    wt = _param(rng, (5, 4), "mm.w")
    s1, s2 = _bn_params(rng, 5, "bn1"), _bn_params(rng, 5, "bn2")

    s3, b3 = _bn_params(rng, 5, "bn3"), _param(rng, (1, 5), "mm.b")

    def f(x):
        a = _bn(call("linear", x, w, b0), s1)
        c = _bn(fw.matmul(x, wt, transpose_y=True), s2, training=True, use_global_stats=True)
        d = _bn(b3 + fw.matmul(x, w), s3)  # a bias add in between joins the folded bias
        return a, c, d

    p = trace(f, [T([-1, 4], "float32")])
    q, changed = _fused(p, "fold_batch_norm")
    text = str(q)
    assert changed and "batch_norm" not in text and "matmul" not in text and "add(" not in text
    assert text.count("linear(") == 3
    _check_same(p, q, [rng.standard_normal((3, 4)).astype(F32)], exact=False)


def test_fold_batch_norm_leaves_training_shared_and_mismatched_cases():
    rng = np.random.default_rng(8)
    w = _param(rng, (3, 2, 1, 1), "w")
    st_ = _bn_params(rng, 3, "bn")
    wl = _param(rng, (4, 3), "wl")
    stl = _bn_params(rng, 3, "bnl")

    def f(x, y, wdyn):
        c = call("conv", x, w, None)
        train = _bn(c, st_, training=True)                       # batch statistics
        used = call("batch_norm", call("conv", x, w, None), *st_)  # mean_out is returned
        seq = _bn(call("linear", y, wl), stl)                    # [N, L, C]: axis 1 != 2
        dyn = _bn(call("conv", x, wdyn, None), st_)              # weight is an input
        return train, used[0], used[1], seq, dyn

    p = trace(f, [T([2, 2, 3, 3], "float32"), T([2, 3, 4], "float32"),
                  T([3, 2, 1, 1], "float32")])
    q, changed = _fused(p, "fold_batch_norm")
    assert not changed and str(q) == str(p)


def test_fold_batch_norm_rounds_for_low_precision_weights_only_when_safe():
    rng = np.random.default_rng(9)
    w = _param(rng, (3, 2, 1, 1), "w", np.float16)
    stats = _bn_params(rng, 3, "bn")
    p = trace(lambda x: _bn(call("conv", x, w, None), stats), [T([1, 2, 2, 2], "float16")])
    q, changed = _fused(p, "fold_batch_norm")
    assert not changed  # float16 weights are not folded


# ================================================================ fuse_elementwise
def test_fuse_elementwise_golden_chain_with_constants_casts_and_pow():
    def f(x, b):
        h = (x + b).tanh() * 2.0
        h = fw.pow(h, 2.0) - h.astype("float16").astype("float32")
        return fw.where(h > 0.0, h, fw.sqrt(h.abs()))

    p = trace(f, [T([-1, 3], "float32"), T([3], "float32")], ["x", "b"])
    q, changed = _fused(p, "fuse_elementwise", ["fuse_elementwise", "dce"])
    assert changed
    assert str(q) == _text("""\
  block 0 (%x: f32[-1,3], %b: f32[3]) {
    %0 = fused_elementwise(%x, %b) {program=[["add", f32, [0, 1], []], ["tanh", f32, [2], []], \
["const", f32, [], [2.0]], ["multiply", f32, [3, 4], []], ["pow", f32, [5], [2.0]], \
["cast", f16, [5], []], ["cast", f32, [7], []], ["subtract", f32, [6, 8], []], \
["const", f32, [], [0.0]], ["greater_than", bool, [9, 10], []], ["abs", f32, [9], []], \
["sqrt", f32, [12], []], ["where", f32, [11, 9, 13], []]], out_dtype=f32} : f32[-1,3]
    return %0
  }
""")
    rng = np.random.default_rng(10)
    inputs = [rng.standard_normal((4, 3)).astype(F32), rng.standard_normal(3).astype(F32)]
    _check_same(p, q, inputs)
    back = parse(str(q))  # bool, f16 and the nested lists read back
    assert str(back) == str(q)
    _check_same(p, back, inputs)


def test_fuse_elementwise_shared_values_and_shapes_split_groups():
    def f(x, y):
        shared = x.exp()                      # read by two groups: stays an op
        a = (shared * 3.0).tanh()             # read by the add and the subtract: a root
        b = shared.neg().abs()
        s = (a + b).sum()                     # a reduction ends the group
        return s.sigmoid().exp(), a - y       # the lone subtract is not fused

    p = trace(f, [T([2, 3], "float32"), T([2, 3], "float32")], ["x", "y"])
    q, _ = _fused(p, "fuse_elementwise", ["fuse_elementwise", "dce"])
    assert str(q) == _text("""\
  block 0 (%x: f32[2,3], %y: f32[2,3]) {
    %0 = exp(%x) : f32[2,3]
    %1 = fused_elementwise(%0) {program=[["const", f32, [], [3.0]], ["multiply", f32, [0, 1], \
[]], ["tanh", f32, [2], []]], out_dtype=f32} : f32[2,3]
    %2 = fused_elementwise(%0, %1) {program=[["neg", f32, [0], []], ["abs", f32, [2], []], \
["add", f32, [1, 3], []]], out_dtype=f32} : f32[2,3]
    %3 = sum(%2) {axis=none, dtype=none, keepdim=false} : f32[]
    %4 = fused_elementwise(%3) {program=[["sigmoid", f32, [0], []], ["exp", f32, [1], []]], \
out_dtype=f32} : f32[]
    %5 = subtract(%1, %y) : f32[2,3]
    return %4, %5
  }
""")
    rng = np.random.default_rng(11)
    _check_same(p, q, [rng.standard_normal((2, 3)).astype(F32) for _ in range(2)])


def test_fuse_elementwise_diamond_and_single_ops():
    def f(x):
        t = x.neg()
        d = t.exp() + t.tanh()                 # t read twice, both inside the group
        return d, x.sin()                      # sin is not an opcode: left alone

    p = trace(f, [T([-1], "float32")], ["x"])
    q, _ = _fused(p, "fuse_elementwise")
    assert str(q) == _text("""\
  block 0 (%x: f32[-1]) {
    %0 = fused_elementwise(%x) {program=[["neg", f32, [0], []], ["exp", f32, [1], []], \
["tanh", f32, [1], []], ["add", f32, [2, 3], []]], out_dtype=f32} : f32[-1]
    %1 = sin(%x) : f32[-1]
    return %0, %1
  }
""")
    _check_same(p, q, [np.linspace(-3, 3, 7, dtype=F32)])
    single = trace(lambda x: x.exp(), [T([3], "float32")])
    assert not get_pass("fuse_elementwise").run(single)


def test_fuse_elementwise_dynamic_dims_broadcast_at_run_time():
    # both inputs are [-1, 3]: at run time one may have 1 row and broadcast
    p = trace(lambda x, y: ((x + y).exp() * y).tanh(), [T([-1, 3], "float32")] * 2, ["x", "y"])
    q, changed = _fused(p, "fuse_elementwise")
    assert changed and str(q).count("fused_elementwise(") == 1
    rng = np.random.default_rng(15)
    for rx, ry in ((1, 4), (4, 1), (2, 2), (0, 1)):
        _check_same(p, q, [rng.standard_normal((rx, 3)).astype(F32),
                           rng.standard_normal((ry, 3)).astype(F32)])


@given(data=st.data())
def test_fuse_elementwise_equality_on_random_programs(data):
    rp = draw_program(data.draw)
    p = rp.trace()
    q, _ = _fused(p, "fuse_elementwise", ["fuse_elementwise", "dce"])
    _check_same(p, q, [fw.to_tensor(x) for x in rp.inputs_])


# ================================================================ the inference pipeline
def test_inference_pipeline_is_registered_in_order():
    assert PIPELINES["inference"] == ("fold_qdq", "constant_folding", "algebraic_simplify",
                                      "fold_batch_norm", "fuse_conv_bias_act",
                                      "fuse_matmul_bias_act", "fold_matmul_scale",
                                      "fold_linear_chain", "merge_parallel_matmul",
                                      "fuse_attention", "layout_nhwc", "fold_flatten_transpose",
                                      "fuse_elementwise", "cse", "dce")


def test_inference_pipeline_golden_convnet():
    rng = np.random.default_rng(12)
    w1 = _param(rng, (4, 3, 3, 3), "c1.w")
    bn = _bn_params(rng, 4, "bn1")
    fc_w, fc_b = _param(rng, (4, 2), "fc.w"), _param(rng, (2,), "fc.b")

    def net(x):
        h = call("relu", _bn(call("conv", x, w1, None, padding=1), bn))
        h = h.mean(axis=[2, 3])
        return call("softmax", call("linear", h, fc_w, fc_b) * 0.5 + 1.0)

    p = trace(net, [T([-1, 3, 8, 8], "float32")], ["image"])
    q = p.clone()
    dumps = []
    pm = PassManager("inference", dump=lambda stage, text: dumps.append(stage))
    assert pm.run(q)
    assert dumps == ["input"] + list(PIPELINES["inference"])
    assert str(q) == _text("""\
  block 0 (%image: f32[-1,3,8,8], %p0: f32[4,3,3,3] param "c1.w", %p1: f32[4] param "bn1.gamma", \
%p2: f32[4] param "bn1.beta", %p3: f32[4,2] param "fc.w", %p4: f32[2] param "fc.b", \
%c0: f32[4,3,3,3] const "c1.w.bn_folded", %c1: f32[4] const "c1.w.bn_folded_bias") {
    %0 = fused_conv(%image, %c0, %c1, none) {stride=[1], padding=[1], dilation=[1], \
groups=1, channel_last=false, activation="relu"} : f32[-1,4,8,8]
    %1 = mean(%0) {axis=[2, 3], keepdim=false} : f32[-1,4]
    %2 = fused_matmul(%1, %p3, %p4, none) {transpose_x=false, transpose_y=false, \
activation="none", alpha=1.0} : f32[-1,2]
    %3 = fused_elementwise(%2) {program=[["const", f32, [], [0.5]], ["multiply", f32, [0, 1], \
[]], ["const", f32, [], [1.0]], ["add", f32, [2, 3], []]], out_dtype=f32} : f32[-1,2]
    %4 = softmax(%3) {axis=-1} : f32[-1,2]
    return %4
  }
""")
    _check_same(p, q, [rng.standard_normal((2, 3, 8, 8)).astype(F32)], exact=False)


@given(data=st.data())
def test_inference_pipeline_equality_on_random_programs(data):
    """Without batch norms every rewrite of the pipeline is exact."""
    rp = draw_program(data.draw)
    p = rp.trace()
    q = p.clone()
    PassManager("inference").run(q)
    _check_same(p, q, [fw.to_tensor(x) for x in rp.inputs_])


def test_fused_programs_survive_the_model_file(tmp_path):
    rng = np.random.default_rng(13)
    w, b = _param(rng, (3, 3), "w"), _param(rng, (3,), "b")
    p = trace(lambda x: (call("relu", fw.matmul(x, w) + b) * 2.0).exp(),
              [T([-1, 3], "float32")], ["x"])
    PassManager("inference").run(p)
    from fw.core.ir import load, save

    save(p, tmp_path / "m.fwm")
    q, _ = load(tmp_path / "m.fwm")
    assert str(q) == str(p) and "fused_matmul" in str(q) and "fused_elementwise" in str(q)
    _check_same(p, q, [rng.standard_normal((2, 3)).astype(F32)])


@pytest.mark.parametrize("name", ["fuse_matmul_bias_act", "fuse_conv_bias_act",
                                  "fold_batch_norm", "fuse_elementwise"])
def test_passes_are_registered(name):
    assert get_pass(name).name == name
