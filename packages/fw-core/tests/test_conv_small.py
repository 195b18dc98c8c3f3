"""The small-channel direct convolution (csrc/nn_conv_small.cpp): float32 channel-last
convs with at most 4 output channels and 27 taps (a pruned LeNet stem) run a kernel
vectorised over the output row instead of oneDNN's, which pads the channels to its
16-float blocks. Checked against a float64 NumPy convolution on every instruction
set the CPU has (AVX-512, AVX2, scalar), with bias and each fused activation, odd
widths (masked tails), padding and dilation; that conv_forward really takes it (a call
counter) only for the shapes of its rule; that it agrees with oneDNN; and that it is
safe from several threads. Also the 2- and 3-channel path of the 2x2 max pool."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from fw.core import _native

pytestmark = pytest.mark.skipif(not _native.available, reason="FW_DISABLE_NATIVE=1")

F32 = np.float32


def C():
    return _native.C


def ref_conv(x, w, b, pad, dil, act):
    """x [N, H, W, C] (channel-last), w [O, C, KH, KW], stride 1: float64 NumPy."""
    n, h, wd, c = x.shape
    o, _, kh, kw = w.shape
    (pt, pb), (pl, pr) = pad
    xp = np.zeros((n, h + pt + pb, wd + pl + pr, c))
    xp[:, pt:pt + h, pl:pl + wd] = x
    oh = h + pt + pb - dil[0] * (kh - 1)
    ow = wd + pl + pr - dil[1] * (kw - 1)
    y = np.zeros((n, oh, ow, o))
    for i in range(kh):
        for j in range(kw):
            win = xp[:, i * dil[0]:i * dil[0] + oh, j * dil[1]:j * dil[1] + ow, :]
            y += win @ w[:, :, i, j].astype(np.float64).T
    if b is not None:
        y += b
    if act in ("relu", "relu6"):
        y = np.maximum(y, 0)
    if act == "relu6":
        y = np.minimum(y, 6)
    return y


def run(x, w, b, pad, dil, act, residual=None, stride=(1, 1)):
    n, h, wd, _ = x.shape
    o, _, kh, kw = w.shape
    (pt, pb), (pl, pr) = pad
    oh = (h + pt + pb - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pl + pr - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.full((n, oh, ow, o), np.nan, F32)
    C().conv_forward(x, w, y, b, residual, act, list(stride), list(dil), [pt, pl], [pb, pr], 1,
                     True)
    return y


def isas():
    out = []
    try:
        for cap in (2, 1, 0):
            C().conv_small_set_max_isa(cap)
            name = C().conv_small_isa()
            if name not in [n for _, n in out]:
                out.append((cap, name))
    finally:
        C().conv_small_set_max_isa(2)
    return out


@pytest.fixture
def isa(request):
    C().conv_small_set_max_isa(request.param)
    yield C().conv_small_isa()
    C().conv_small_set_max_isa(2)
    C().conv_small_set_enabled(True)


# (N, H, W, C_in, O, K, pad ((t, b), (l, r)), dilation): inside the rule (O <= 4,
# C_in * K * K <= 27), every code path: the 3- and 5-row register tiles, the generic
# rows (other kernel heights, dilation), masked tails, patterns of period lcm(O, V)
SHAPES = [
    (3, 28, 28, 1, 3, 3, ((1, 1), (1, 1)), (1, 1)),   # LeNet's stem with half its channels
    (2, 28, 28, 1, 4, 3, ((1, 1), (1, 1)), (1, 1)),   # ... round_to=4
    (2, 13, 11, 1, 4, 5, ((2, 2), (2, 2)), (1, 1)),   # 5x5 tile, 7 rows left over
    (1, 9, 13, 1, 1, 3, ((0, 2), (1, 0)), (1, 1)),    # one channel, uneven padding
    (2, 11, 7, 2, 4, 3, ((1, 1), (2, 2)), (2, 2)),    # dilation: the generic rows
    (1, 6, 31, 1, 3, 4, ((1, 2), (0, 3)), (1, 2)),    # even kernel, horizontal dilation
    (1, 5, 17, 3, 4, 1, ((0, 0), (0, 0)), (1, 1)),    # 1x1, 3 input channels
    (1, 10, 12, 2, 4, 3, ((1, 1), (1, 1)), (1, 1)),   # 2 input channels, 3x3
]
@pytest.mark.parametrize("isa", [c for c, _ in isas()], indirect=True)
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{s[3]}to{s[4]}k{s[5]}" for s in SHAPES])
@pytest.mark.parametrize("act,bias", [("", False), ("relu", True), ("relu6", True)])
def test_against_numpy(isa, shape, act, bias):
    n, h, wd, c, o, k, pad, dil = shape
    rng = np.random.default_rng(hash((shape, act)) % 2**32)
    x = rng.uniform(-6, 6, (n, h, wd, c)).astype(F32)
    w = rng.uniform(-1, 1, (o, c, k, k)).astype(F32)
    b = rng.uniform(-1, 1, o).astype(F32) if bias else None
    before = C().conv_small_calls()
    got = run(x, w, b, pad, dil, act)
    assert C().conv_small_calls() == before + 1, f"{isa}: conv_forward did not take the kernel"
    want = ref_conv(x, w, b, pad, dil, act)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * c * k * k)
    if act:  # the clips really ran (the inputs are wide enough to reach them)
        assert (got[want < -0.01] == 0).all() and (got == 0).any()
        if act == "relu6":
            assert (got[want > 6.01] == 6).all() and (got == 6).any()


def test_equals_onednn_and_rule():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (4, 28, 28, 1)).astype(F32)
    w = rng.uniform(-1, 1, (3, 1, 3, 3)).astype(F32)
    b = rng.uniform(-1, 1, 3).astype(F32)
    pad = ((1, 1), (1, 1))
    direct = run(x, w, b, pad, (1, 1), "relu")
    C().conv_small_set_enabled(False)
    try:
        before = C().conv_small_calls()
        onednn = run(x, w, b, pad, (1, 1), "relu")
        assert C().conv_small_calls() == before
    finally:
        C().conv_small_set_enabled(True)
    np.testing.assert_allclose(direct, onednn, rtol=1e-5, atol=1e-5)
    # outside the rule oneDNN runs: 5 or more output channels (LeNet's dense stem 1 -> 6),
    # more than 27 taps (a pruned conv2 3 -> 8 at 5x5), stride 2, a residual, a
    # non-fused activation, channel-first
    before = C().conv_small_calls()
    w6 = rng.uniform(-1, 1, (6, 1, 3, 3)).astype(F32)
    np.testing.assert_allclose(run(x, w6, None, pad, (1, 1), ""),
                               ref_conv(x, w6, None, pad, (1, 1), ""), rtol=1e-4, atol=1e-4)
    x3 = rng.uniform(-1, 1, (1, 14, 14, 3)).astype(F32)
    run(x3, rng.uniform(-1, 1, (3, 3, 5, 5)).astype(F32), None, ((0, 0), (0, 0)), (1, 1), "")
    run(x, w, b, pad, (1, 1), "relu", stride=(2, 2))
    run(x, w, b, pad, (1, 1), "relu", residual=np.ones((4, 28, 28, 3), F32))
    run(x, w, b, pad, (1, 1), "sigmoid")
    y = np.empty((4, 3, 28, 28), F32)
    C().conv_forward(np.ascontiguousarray(x.transpose(0, 3, 1, 2)), w, y, b, None, "relu", [1, 1],
                     [1, 1], [1, 1], [1, 1], 1, False)
    assert C().conv_small_calls() == before


def test_threads_share_nothing():
    """Concurrent calls (the GIL is released) with different shapes and weights each get
    their own result: the kernel's scratch is per call and per OpenMP thread."""
    rng = np.random.default_rng(1)
    cases = []
    for i in range(6):
        o = (3, 4, 2)[i % 3]
        c = (1, 1, 3)[i % 3]
        k = (3, 5, 3)[i % 3]
        x = rng.uniform(-1, 1, (8, 16, 16, c)).astype(F32)
        w = rng.uniform(-1, 1, (o, c, k, k)).astype(F32)
        cases.append((x, w, ref_conv(x, w, None, ((1, 1), (1, 1)), (1, 1), "relu")))
    errors = []

    def work(case):
        x, w, want = case
        try:
            for _ in range(20):
                np.testing.assert_allclose(run(x, w, None, ((1, 1), (1, 1)), (1, 1), "relu"), want,
                                           rtol=1e-5, atol=1e-4)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c,)) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and not errors, errors


def test_switch_errors():
    with pytest.raises(ValueError, match="conv_small_set_max_isa: isa must be 0"):
        C().conv_small_set_max_isa(3)
    assert C().conv_small_isa() in ("avx512f", "avx2", "scalar")


@pytest.mark.parametrize("c", [2, 3])
@pytest.mark.parametrize("w", [2, 3, 4, 5, 8, 9, 28])
def test_max_pool_2x2_few_channels(c, w):
    """2 or 3 channels channel-last take one 4-lane step per pixel (its extra lanes are
    overwritten by the next pixel's step): the values, NaNs, infinities and tied signed
    zeros max_pool_with_index picks, bit for bit, at every row width."""
    from fw.core.kernels.cpu._common import FACTORIES
    from fw.core.ops import OPS

    def no_fallback(*a, **k):
        raise AssertionError("fell back to NumPy")

    rng = np.random.default_rng(c * 100 + w)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, 2.5, -np.inf, 3.0], F32), (3, 7, w, c))
    x[0] = rng.uniform(-1, 1, (7, w, c))
    attrs = {"kernel_size": (2, 2), "stride": (2, 2), "padding": 0, "ceil_mode": False,
             "channel_last": True}
    got = FACTORIES["max_pool"](no_fallback)(x, **attrs)
    first = OPS["max_pool_with_index"].reference(x, **attrs)[0]
    np.testing.assert_array_equal(got.view(np.uint32), first.view(np.uint32))
