"""Prepared cpu kernels (fw.core.kernels.cpu.prepared, ``Compiled(prepare=True)``): the
same outputs as the op table's kernels, bit for bit, NaN/Inf included, for drawn
convolution networks after the inference pipeline and for drawn programs; and the
cases they leave to the table kernels still answer as those do."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core import _native
from fw.core.ir import TensorType, trace
from fw.core.ir.executor import Compiled
from fw.core.ir.passes import PassManager
from fw.core.kernels.cpu import prepared
from fw.core.ops import call
from fw.core.testing.programs import draw_program

T = TensorType
F32 = np.float32

needs_native = pytest.mark.skipif(not _native.available, reason="needs fw-core's native kernels")


def _param(rng, shape, name, scale=0.5):
    t = fw.to_tensor((rng.standard_normal(shape) * scale).astype(F32))
    t.name = name
    t.persistable = True
    return t


def _both(p):
    """(table-kernel Compiled, prepared Compiled) of program `p`."""
    return Compiled(p, "cpu"), Compiled(p, "cpu", prepare=True)


def _check_all(p, inputs):
    """The prepared runs — checked, and with the NaN/Inf checks moved to the inputs
    (``nonfinite_checks=False`` through `bind_params`) — equal the table kernels'."""
    want = Compiled(p, "cpu")(list(inputs))
    _same(want, Compiled(p, "cpu", prepare=True)(list(inputs)))
    fast = Compiled(p, "cpu", prepare=True, nonfinite_checks=False)
    _same(want, fast.bind_params()(list(inputs)))
    _same(want, fast(list(inputs)))  # __call__ checks the inputs and params itself


def _same(a_outs, b_outs):
    assert len(a_outs) == len(b_outs)
    for x, y in zip(a_outs, b_outs):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)  # NaN equals NaN here


def _convnet(draw, rng):
    """A drawn channel-first CNN (conv + bias + activation [+ residual], a pool, a
    flatten and a linear layer) with a dynamic batch, as fw.jit traces one."""
    c_in = draw(st.integers(1, 7), label="c_in")
    c_mid = draw(st.sampled_from([1, 3, 6, 8, 16]), label="c_mid")
    k = draw(st.sampled_from([1, 3, 5]), label="k")
    hw = draw(st.integers(k + 1, 9), label="hw")
    groups = draw(st.sampled_from([g for g in (1, c_in) if c_mid % g == 0]), label="groups")
    act = draw(st.sampled_from([None, "relu", "relu6", "hardswish", "sigmoid"]), label="act")
    residual = draw(st.booleans(), label="residual") and c_in == c_mid
    pool = draw(st.sampled_from(["max2", "max3", "avg2", "adaptive", "none"]), label="pool")
    stride = 1 if residual else draw(st.sampled_from([1, 2]), label="stride")
    w = _param(rng, (c_mid, c_in // groups, k, k), "w")
    b = _param(rng, (c_mid,), "b")
    pad = k // 2

    def f(x):
        h = call("conv", x, w, b, stride=stride, padding=pad, groups=groups)
        if act:
            h = call(act, h)
        if residual:
            h = h + x
        if pool == "max2":
            h = call("max_pool", h, kernel_size=2, stride=2)
        elif pool == "max3":
            h = call("max_pool", h, kernel_size=3, stride=1, padding=1)
        elif pool == "avg2":
            h = call("avg_pool", h, kernel_size=2, stride=2)
        elif pool == "adaptive":
            h = call("adaptive_avg_pool", h, output_size=1)
        h = h.flatten(1)
        return h

    p = trace(f, [T([-1, c_in, hw, hw], "float32")])
    feat = p.outputs[0].type.shape[1]
    fc_w, fc_b = _param(rng, (feat, 3), "fc.w"), _param(rng, (3,), "fc.b")
    relu_fc = draw(st.booleans(), label="relu_fc")

    def g(x):
        h = f(x)
        h = fw.matmul(h, fc_w) + fc_b
        return call("relu", h) if relu_fc else h

    return trace(g, [T([-1, c_in, hw, hw], "float32")]), (c_in, hw)


@needs_native
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_prepared_equals_table_kernels_on_drawn_convnets(data):
    draw = data.draw
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1), label="seed"))
    p, (c_in, hw) = _convnet(draw, rng)
    PassManager("inference").run(p)
    plain, prep = _both(p)
    fast = Compiled(p, "cpu", prepare=True, nonfinite_checks=False)
    # a drawn convnet is all finite-preserving ops: every fused op runs unchecked
    assert fast._unchecked == {op for op in p.block.ops
                               if op.name in ("fused_conv", "fused_matmul")}
    fast = fast.bind_params()
    for batch in (1, 2, 1):  # a second shape, then the first again (per-shape geometry)
        x = rng.standard_normal((batch, c_in, hw, hw)).astype(F32)
        want = plain([x])
        _same(want, prep([x]))
        _same(want, fast([x]))
    # non-finite values: the prepared kernels hand them to the table kernels' rule, the
    # unchecked program to its checked twin
    x = rng.standard_normal((2, c_in, hw, hw)).astype(F32)
    flat = x.reshape(-1)
    idx = rng.choice(flat.size, size=min(3, flat.size), replace=False)
    flat[idx] = draw(st.sampled_from([np.nan, np.inf, -np.inf]), label="bad")
    want = plain([x])
    _same(want, prep([x]))
    _same(want, fast([x]))


@needs_native
def test_prepared_kernels_replace_the_keyword_calls():
    rng = np.random.default_rng(0)
    w, b = _param(rng, (6, 1, 3, 3), "w"), _param(rng, (6,), "b")
    fc, fcb = _param(rng, (6 * 4 * 4, 4), "fc"), _param(rng, (4,), "fcb")

    def f(x):
        h = call("relu", call("conv", x, w, b, padding=1))
        h = call("max_pool", h, kernel_size=2, stride=2).flatten(1)
        return fw.matmul(h, fc) + fcb

    p = trace(f, [T([-1, 1, 8, 8], "float32")])
    PassManager("inference").run(p)
    plain, prep = _both(p)
    ops = {op.name for op in p.block.ops}
    assert {"fused_conv", "max_pool", "flatten", "fused_matmul"} <= ops
    # the table kernels get their attributes as keywords; the prepared ones have them bound
    assert "stride=" in plain.source and "kernel_size=" in plain.source
    assert "stride=" not in prep.source and "kernel_size=" not in prep.source
    x = rng.standard_normal((3, 1, 8, 8)).astype(F32)
    _same(plain([x]), prep([x]))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_prepared_equals_table_kernels_on_drawn_programs(data):
    rp = draw_program(data.draw)
    p = rp.trace()
    PassManager("inference").run(p)
    _check_all(p, rp.inputs_)


def test_preparers_decline_what_they_do_not_cover():
    rng = np.random.default_rng(1)
    w = fw.to_tensor(rng.standard_normal((2, 3)).astype(np.float64))
    w.name, w.persistable = "w", True
    p = trace(lambda x: call("relu", fw.matmul(x, w)), [T([-1, 2], "float64")])
    PassManager("inference").run(p)
    (mm,) = [op for op in p.block.ops if op.name == "fused_matmul"]
    kernel = mm.opdef.kernels.get("cpu", mm.opdef.reference)
    assert prepared.prepare(mm, kernel) is None  # float64: the table kernel
    assert prepared.prepare(mm, lambda *a, **k: None) is None  # an overridden kernel
    plain, prep = _both(p)
    x = rng.standard_normal((4, 2))
    _same(plain([x]), prep([x]))


@needs_native
def test_prepared_conv_falls_back_on_a_shape_the_program_does_not_expect():
    rng = np.random.default_rng(2)
    w, b = _param(rng, (4, 2, 3, 3), "w"), _param(rng, (4,), "b")
    p = trace(lambda x: call("relu", call("conv", x, w, b, padding=1)),
              [T([-1, 2, 5, 5], "float32")])
    PassManager("inference").run(p)
    (op,) = [o for o in p.block.ops if o.name == "fused_conv"]
    run = prepared.prepare(op, op.opdef.kernels["cpu"])
    table = op.opdef.kernels["cpu"]
    x = rng.standard_normal((1, 5, 5, 2)).astype(F32) if op.attrs["channel_last"] else \
        rng.standard_normal((1, 2, 5, 5)).astype(F32)
    wv, bv = (p.captured[a.label]._data for a in op.operands[1:3])
    _same([run(x, wv, bv)], [table(x, wv, bv, **op.attrs)])
    # a non-contiguous input and a float64 one: the table kernel's answers
    xt = np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    _same([run(xt, wv, bv)], [table(xt, wv, bv, **op.attrs)])
    bad = x[..., :1] if op.attrs["channel_last"] else x[:, :1]  # 1 channel, not 2
    with pytest.raises(Exception) as e1:
        table(bad, wv, bv, **op.attrs)
    with pytest.raises(type(e1.value), match="input channels"):
        run(bad, wv, bv)


@needs_native
def test_prepared_conv_rechecks_a_weight_it_has_not_seen_frozen():
    """The finite weight and bias a prepared fused_conv remembers are those arrays, frozen;
    another array (or one made writeable again) is checked again, NaN included."""
    from fw.core.kernels.frozen import freeze

    rng = np.random.default_rng(3)
    w, b = _param(rng, (3, 2, 3, 3), "w"), _param(rng, (3,), "b")
    p = trace(lambda x: call("relu", call("conv", x, w, b, padding=1)),
              [T([-1, 2, 5, 5], "float32")])
    PassManager("inference").run(p)
    (op,) = [o for o in p.block.ops if o.name == "fused_conv"]
    table = op.opdef.kernels["cpu"]
    run = prepared.prepare(op, table)
    shape = (1, 5, 5, 2) if op.attrs["channel_last"] else (1, 2, 5, 5)
    x = rng.standard_normal(shape).astype(F32)
    wv = np.array(p.captured[op.operands[1].label]._data)
    bv = np.array(p.captured[op.operands[2].label]._data)
    freeze(wv)
    freeze(bv)
    _same([run(x, wv, bv)], [table(x, wv, bv, **op.attrs)])  # remembered as finite
    bad = wv.copy()
    bad[0, 0, 0, 0] = np.nan
    got = run(x, bad, bv)
    assert np.isnan(got).any()
    _same([got], [table(x, bad, bv, **op.attrs)])
    # the remembered array itself, made writeable and changed: checked again
    wv.flags.writeable = True
    wv[1, 0, 0, 0] = np.inf
    _same([run(x, wv, bv)], [table(x, wv, bv, **op.attrs)])
    assert not np.isfinite(run(x, wv, bv)).all()


@needs_native
def test_unchecked_ops_follow_finite_values_only():
    """A fused op fed through an op that can make a non-finite value of finite ones (a
    division) keeps its checks; its neighbours fed by finite-preserving ops do not. A
    zero denominator then gives eager's NaN/Inf through the checked kernel."""
    rng = np.random.default_rng(4)
    w1, b1 = _param(rng, (4, 3), "w1"), _param(rng, (3,), "b1")
    w2, b2 = _param(rng, (3, 2), "w2"), _param(rng, (2,), "b2")

    def f(x, d):
        h = call("relu", fw.matmul(x, w1) + b1)
        g = call("relu", fw.matmul(h / d, w2) + b2)  # h / d: not finite-preserving
        return g, call("relu", fw.matmul(h, w2) + b2)

    p = trace(f, [T([-1, 4], "float32"), T([-1, 3], "float32")])
    PassManager("inference").run(p)
    fused = [op for op in p.block.ops if op.name == "fused_matmul"]
    assert len(fused) == 3
    unchecked = prepared.unchecked_ops(p)
    # the division stays a divide or becomes a fused_elementwise: neither is trusted
    fed_by_divide = [op for op in fused if getattr(op.operands[0].owner, "name", None) in (
        "divide", "fused_elementwise")]
    assert len(fed_by_divide) == 1 and fed_by_divide[0] not in unchecked
    assert len(unchecked) == 2
    x = rng.standard_normal((5, 4)).astype(F32)
    d = rng.standard_normal((5, 3)).astype(F32)
    d[0] = 0.0  # 0/0 and x/0: NaN and infinities from finite inputs
    _check_all(p, [x, d])


@needs_native
def test_a_nonfinite_constant_keeps_every_check():
    rng = np.random.default_rng(5)
    w, b = _param(rng, (2, 3, 3, 3), "w"), _param(rng, (2,), "b")
    w._data[0, 0, 0, 0] = np.inf
    p = trace(lambda x: call("relu", call("conv", x, w, b, padding=1)),
              [T([-1, 3, 6, 6], "float32")])
    PassManager("inference").run(p)
    x = rng.standard_normal((2, 3, 6, 6)).astype(F32)
    _check_all(p, [x])
    assert not np.isfinite(Compiled(p, "cpu")([x])[0]).all()


def test_all_finite_reads_every_float_dtype():
    import ml_dtypes

    assert prepared.all_finite(np.arange(5)) and prepared.all_finite(np.zeros(3, F32))
    for dt in (np.float16, F32, np.float64, np.complex64, ml_dtypes.bfloat16):
        a = np.zeros(7, dt)
        assert prepared.all_finite(a)
        a[4] = complex(0, np.inf) if dt is np.complex64 else np.inf
        assert not prepared.all_finite(a), dt
        assert not prepared.all_finite(a[::2]), dt  # strided
