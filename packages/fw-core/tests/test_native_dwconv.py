"""fw's own channel-last depthwise 3x3 kernel (csrc/nn_dwconv.cpp) and the bound
convolution `ConvPlan` (csrc/nn_conv_plan_bind.cpp), against a NumPy float64 oracle and
against oneDNN's kernel for the same convolution.

The kernel computes MobileNet-style depthwise convolutions (stride 1 or 2, padding 0 or
1, bias + none/relu/relu6); `conv_forward` runs the stride-2 ones on it when switched on
(`conv_set_native_dw`, the default), stride 1 stays on oneDNN. Each ISA path this CPU
has (AVX-512, AVX2, portable scalar) is checked on its own through
`dwconv3x3_forward(..., isa=...)`.
"""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core import _native

pytestmark = pytest.mark.skipif(not _native.available, reason="needs fw-core's native kernels")

C = _native.C if _native.available else None


def _oracle(x, w, b, stride, pad_l, pad_r, act):
    """Depthwise 3x3 in float64: x [N, H, W, C], w [C, 1, 3, 3]."""
    n, h, wd, c = x.shape
    xp = np.zeros((n, h + pad_l[0] + pad_r[0], wd + pad_l[1] + pad_r[1], c))
    xp[:, pad_l[0]:pad_l[0] + h, pad_l[1]:pad_l[1] + wd] = x
    oh = (xp.shape[1] - 3) // stride[0] + 1
    ow = (xp.shape[2] - 3) // stride[1] + 1
    out = np.zeros((n, oh, ow, c)) + (0.0 if b is None else b.astype(np.float64))
    for kh in range(3):
        for kw in range(3):
            win = xp[:, kh:kh + stride[0] * (oh - 1) + 1:stride[0],
                     kw:kw + stride[1] * (ow - 1) + 1:stride[1]]
            out += win * w[:, 0, kh, kw].astype(np.float64)
    if act in ("relu", "relu6"):
        out = np.maximum(out, 0)
    if act == "relu6":
        out = np.minimum(out, 6)
    return out


def _out_shape(x, stride, pad_l, pad_r):
    n, h, w, c = x.shape
    return (n, (h + pad_l[0] + pad_r[0] - 3) // stride[0] + 1,
            (w + pad_l[1] + pad_r[1] - 3) // stride[1] + 1, c)


@st.composite
def _cases(draw):
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad_l = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    pad_r = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    # sizes where the output size formula holds exactly (no rows left over), as
    # conv_forward's geometry check demands; the widths cover whole 8-output tiles,
    # remainders and rows narrower than the kernel's chunk
    h = draw(st.integers(1, 9)) * stride[0] + 3 - pad_l[0] - pad_r[0] - stride[0]
    w = draw(st.integers(1, 40)) * stride[1] + 3 - pad_l[1] - pad_r[1] - stride[1]
    if h < 1 or w < 1:
        h, w = 3, 3
        pad_l, pad_r, stride = (0, 0), (0, 0), (1, 1)
    c = draw(st.sampled_from([1, 3, 8, 15, 16, 17, 32, 40, 96]))
    n = draw(st.integers(1, 2))
    act = draw(st.sampled_from(["none", "relu", "relu6"]))
    bias = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    return n, h, w, c, stride, pad_l, pad_r, act, bias, seed


def _operands(n, h, w, c, bias, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, h, w, c)) * 3).astype(np.float32)
    wt = rng.standard_normal((c, 1, 3, 3)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32) if bias else None
    return x, wt, b


@settings(max_examples=40, deadline=None)
@given(_cases())
def test_every_isa_path_matches_the_float64_oracle_and_onednn(case):
    n, h, w, c, stride, pad_l, pad_r, act, bias, seed = case
    x, wt, b = _operands(n, h, w, c, bias, seed)
    want = _oracle(x, wt, b, stride, pad_l, pad_r, act)
    outs = []
    for isa in C.dwconv3x3_isas():
        out = np.full(_out_shape(x, stride, pad_l, pad_r), np.nan, np.float32)
        C.dwconv3x3_forward(x, wt, out, b, act, list(stride), list(pad_l), list(pad_r), isa)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5, err_msg=isa)
        outs.append(out)
    for other in outs[1:]:  # same sums in the same order, FMA on every path
        np.testing.assert_array_equal(other, outs[0])
    # oneDNN's kernel for the same convolution (the one conv_forward ran before)
    ref = np.empty_like(outs[0])
    C.conv_set_native_dw(False)
    try:
        C.conv_forward(x, wt, ref, b, None, act, list(stride), [1, 1], list(pad_l), list(pad_r),
                       c, True)
    finally:
        C.conv_set_native_dw(True)
    np.testing.assert_allclose(outs[-1], ref, rtol=1e-5, atol=1e-5)


def test_conv_forward_dispatches_depthwise_3x3_to_it():
    x, wt, b = _operands(1, 14, 14, 32, True, 0)
    args = (x, wt, None, b, None, "relu6", [2, 2], [1, 1], [1, 1], [1, 1], 32, True)
    out = np.empty((1, 7, 7, 32), np.float32)
    impl = C.conv_impl(x, wt, out, [2, 2], [1, 1], [1, 1], [1, 1], 32, True, 0)
    assert impl.startswith("fw_dw3x3_nhwc:")
    assert impl.split(":")[1] == C.dwconv3x3_isas()[-1]
    C.conv_forward(x, wt, out, *args[3:])
    np.testing.assert_allclose(out, _oracle(x, wt, b, (2, 2), (1, 1), (1, 1), "relu6"),
                               rtol=1e-5, atol=1e-5)
    C.conv_set_native_dw(False)
    try:
        assert not C.conv_native_dw()
        impl = C.conv_impl(x, wt, out, [2, 2], [1, 1], [1, 1], [1, 1], 32, True, 0)
        assert not impl.startswith("fw_") and not impl.startswith("ref")
    finally:
        C.conv_set_native_dw(True)
    assert C.conv_native_dw()
    # what it does not run stays on oneDNN: stride 1 (jit_dw is faster there),
    # channel-first, 5x5, dilation, a residual
    assert not C.conv_impl(x, wt, np.empty((1, 14, 14, 32), np.float32), [1, 1], [1, 1],
                           [1, 1], [1, 1], 32, True, 0).startswith("fw_")
    xf = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    assert not C.conv_impl(xf, wt, np.empty((1, 32, 7, 7), np.float32), [2, 2], [1, 1],
                           [1, 1], [1, 1], 32, False, 0).startswith("fw_")
    w5 = np.zeros((32, 1, 5, 5), np.float32)
    assert not C.conv_impl(x, w5, np.empty((1, 7, 7, 32), np.float32), [2, 2], [1, 1],
                           [2, 2], [1, 1], 32, True, 0).startswith("fw_")
    assert not C.conv_impl(x, wt, np.empty((1, 6, 6, 32), np.float32), [2, 2], [2, 2],
                           [1, 1], [1, 1], 32, True, 0).startswith("fw_")
    res = np.ones((1, 7, 7, 32), np.float32)
    C.conv_forward(x, wt, out, b, res, "relu6", [2, 2], [1, 1], [1, 1], [1, 1], 32, True)
    np.testing.assert_allclose(out, _oracle(x, wt, b, (2, 2), (1, 1), (1, 1), "relu6") + 1,
                               rtol=1e-5, atol=1e-5)


def test_stamped_weights_are_repacked_once_and_follow_the_stamp():
    """A nonzero weight_stamp promises constant bytes (a predictor's frozen weights):
    the kernel keeps them repacked; another stamp for the same address is new data."""
    from fw.core.kernels.frozen import freeze

    x, wt, b = _operands(1, 8, 8, 16, True, 1)
    out = np.empty((1, 4, 4, 16), np.float32)
    geo = ([2, 2], [1, 1], [1, 1], [0, 0], 16, True)
    s = freeze(wt)
    for _ in range(2):
        C.conv_forward(x, wt, out, b, None, "none", *geo, s)
        np.testing.assert_allclose(out, _oracle(x, wt, b, (2, 2), (1, 1), (0, 0), "none"),
                                   rtol=1e-5, atol=1e-5)
    w2 = wt * 2  # new bytes, unstamped: repacked per call
    C.conv_forward(x, w2, out, b, None, "none", *geo, 0)
    np.testing.assert_allclose(out, _oracle(x, w2, b, (2, 2), (1, 1), (0, 0), "none"),
                               rtol=1e-5, atol=1e-5)


def test_nan_passes_through_the_relu6_epilogue():
    x, wt, _ = _operands(1, 4, 4, 16, False, 2)
    x[0, 1, 1, 3] = np.nan
    for isa in C.dwconv3x3_isas():
        out = np.empty((1, 4, 4, 16), np.float32)
        C.dwconv3x3_forward(x, wt, out, None, "relu6", [1, 1], [1, 1], [1, 1], isa)
        assert np.isnan(out[0, 1, 1, 3]) and np.isnan(out[0, 0, 0, 3]), isa
        assert np.isfinite(out[..., :3]).all()


def test_bad_arguments_raise_naming_the_kernel():
    x, wt, b = _operands(1, 8, 8, 16, True, 3)
    out = np.empty((1, 8, 8, 16), np.float32)
    call = C.dwconv3x3_forward
    with pytest.raises(ValueError, match="stride 1 or 2"):
        call(x, wt, np.empty((1, 3, 3, 16), np.float32), b, "none", [3, 3], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="padding 0 or 1"):
        call(x, wt, np.empty((1, 10, 10, 16), np.float32), b, "none", [1, 1], [2, 2], [2, 2])
    with pytest.raises(ValueError, match="output size"):
        call(x, wt, np.empty((1, 7, 8, 16), np.float32), b, "none", [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="channels"):
        call(x, wt[:8], out, b, "none", [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="bias must be"):
        call(x, wt, out, b[:4], "none", [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="relu6"):
        call(x, wt, out, b, "gelu", [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="isa must be"):
        call(x, wt, out, b, "none", [1, 1], [1, 1], [1, 1], "sse9")
    with pytest.raises(ValueError, match="overlap"):
        call(x, wt, x, b, "none", [1, 1], [1, 1], [1, 1])
    with pytest.raises(TypeError):
        call(x.astype(np.float64), wt, out, b, "none", [1, 1], [1, 1], [1, 1])
    with pytest.raises(TypeError):
        call(x[:, ::2], wt, out, b, "none", [1, 1], [1, 1], [1, 1])
    missing = [i for i in ("scalar", "avx2", "avx512") if i not in C.dwconv3x3_isas()]
    for isa in missing:
        with pytest.raises(ValueError, match="does not run"):
            call(x, wt, out, b, "none", [1, 1], [1, 1], [1, 1], isa)


def test_concurrent_calls_from_threads_agree_with_single_calls():
    cases = [_operands(1, 28, 28, 48, True, s) for s in range(4)]
    want = []
    for x, wt, b in cases:
        out = np.empty((1, 14, 14, 48), np.float32)
        C.conv_forward(x, wt, out, b, None, "relu6", [2, 2], [1, 1], [1, 1], [1, 1], 48, True)
        want.append(out)
    errors = []

    def work(i):
        x, wt, b = cases[i]
        for _ in range(30):
            out = np.empty((1, 14, 14, 48), np.float32)
            C.conv_forward(x, wt, out, b, None, "relu6", [2, 2], [1, 1], [1, 1], [1, 1], 48,
                           True)
            if not np.array_equal(out, want[i]):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert not errors


# ---------------------------------------------------------------- ConvPlan
PLAN_CASES = [
    # x shape, weight shape, stride, pad_l, pad_r, groups, channel_last, bias, residual, act
    ((1, 8, 8, 16), (32, 16, 1, 1), [1, 1], [0, 0], [0, 0], 1, True, True, False, "relu6"),
    ((2, 9, 9, 4), (8, 4, 3, 3), [2, 2], [1, 1], [1, 1], 1, True, False, False, "none"),
    ((1, 12, 12, 24), (24, 1, 3, 3), [1, 1], [1, 1], [1, 1], 24, True, True, False, "relu6"),
    ((1, 6, 6, 8), (8, 8, 1, 1), [1, 1], [0, 0], [0, 0], 1, True, True, True, "none"),
    ((1, 3, 10, 10), (6, 3, 3, 3), [1, 1], [1, 1], [1, 1], 1, False, True, False, "relu"),
]


def _conv_out_shape(xs, ws, stride, pad_l, pad_r, cl):
    sp = xs[1:3] if cl else xs[2:4]
    o = [(s + pl + pr - k) // st_ + 1
         for s, pl, pr, k, st_ in zip(sp, pad_l, pad_r, ws[2:], stride)]
    return (xs[0], *o, ws[0]) if cl else (xs[0], ws[0], *o)


@pytest.mark.parametrize("case", PLAN_CASES, ids=[str(i) for i in range(len(PLAN_CASES))])
def test_conv_plan_gives_conv_forwards_bits(case):
    xs, ws, stride, pad_l, pad_r, groups, cl, has_b, has_r, act = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    ys = _conv_out_shape(xs, ws, stride, pad_l, pad_r, cl)
    b = rng.standard_normal(ws[0]).astype(np.float32) if has_b else None
    r = rng.standard_normal(ys).astype(np.float32) if has_r else None
    plan = C.ConvPlan(list(xs), list(ws), list(ys), has_b, has_r, act, stride, [1, 1], pad_l,
                      pad_r, groups, cl)
    got, want = np.empty(ys, np.float32), np.empty(ys, np.float32)
    plan(x, w, got, b, r)
    C.conv_forward(x, w, want, b, r, act, stride, [1, 1], pad_l, pad_r, groups, cl)
    np.testing.assert_array_equal(got, want)
    assert not plan.impl().startswith("ref")


def test_conv_plan_refuses_arrays_of_another_geometry():
    plan = C.ConvPlan([1, 8, 8, 16], [32, 16, 1, 1], [1, 8, 8, 32], True, False, "relu",
                      [1, 1], [1, 1], [0, 0], [0, 0], 1, True)
    x = np.zeros((1, 8, 8, 16), np.float32)
    w = np.zeros((32, 16, 1, 1), np.float32)
    b = np.zeros(32, np.float32)
    out = np.empty((1, 8, 8, 32), np.float32)
    with pytest.raises(ValueError, match="ConvPlan: x \\[1, 8, 9, 16\\] does not match"):
        plan(np.zeros((1, 8, 9, 16), np.float32), w, out, b, None)
    with pytest.raises(ValueError, match="out .* does not match"):
        plan(x, w, np.empty((1, 8, 8, 16), np.float32), b, None)
    with pytest.raises(ValueError, match="bias missing"):
        plan(x, w, out, None, None)
    with pytest.raises(ValueError, match="bias \\[16\\] must be \\[32\\]"):
        plan(x, w, out, b[:16], None)
    with pytest.raises(ValueError, match="got a residual"):
        plan(x, w, out, b, out.copy())
    with pytest.raises(TypeError):
        plan(x.astype(np.float64), w, out, b, None)
    with pytest.raises(ValueError, match="channels"):
        C.ConvPlan([1, 8, 8, 16], [32, 8, 1, 1], [1, 8, 8, 32], True, False, "relu", [1, 1],
                   [1, 1], [0, 0], [0, 0], 1, True)
    with pytest.raises(ValueError, match="output size"):
        C.ConvPlan([1, 8, 8, 16], [32, 16, 1, 1], [1, 7, 8, 32], True, False, "relu", [1, 1],
                   [1, 1], [0, 0], [0, 0], 1, True)
