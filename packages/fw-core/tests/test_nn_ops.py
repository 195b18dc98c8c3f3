"""The nn op families (activation, conv, pool, norm, nn_misc, loss) against independent
formulas on fixed inputs: direct loops, brute force, adjoint identities, and -- when
PyTorch is installed -- torch.nn.functional with the layouts converted.

The generic record tests check eager == reference == executor; these check that the
reference itself computes Paddle's semantics."""

import itertools
import math

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType
from fw.core.ops import OPS, call

RNG = np.random.default_rng(1234)


def run(op, *args, **attrs):
    ins = [fw.to_tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    out = call(op, *ins, **attrs)
    if isinstance(out, tuple):
        return tuple(o.numpy() for o in out)
    return out.numpy()


def rand(*shape, lo=-1.0, hi=1.0, dtype=np.float64):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ================================================================ activations
def test_activation_formulas():
    x = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0])
    sig = 1 / (1 + np.exp(-x))
    erf = np.vectorize(math.erf)
    sp = np.log1p(np.exp(x))
    close(run("relu", x), np.where(x > 0, x, 0))
    close(run("relu6", x), np.clip(x, 0, 6))
    close(run("leaky_relu", x, negative_slope=0.2), np.where(x > 0, x, 0.2 * x))
    close(run("elu", x, alpha=0.5), np.where(x > 0, x, 0.5 * (np.exp(x) - 1)))
    close(run("celu", x, alpha=2.0), np.maximum(x, 0) + np.minimum(0, 2 * (np.exp(x / 2) - 1)))
    close(run("selu", x), 1.0507009873554805 * np.where(x > 0, x,
                                                         1.6732632423543772 * np.expm1(x)))
    close(run("gelu", x), x * 0.5 * (1 + erf(x / math.sqrt(2))))
    close(run("gelu", x, approximate=True),
          0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))))
    close(run("silu", x), x * sig)
    close(run("mish", x), x * np.tanh(sp))
    close(run("hardswish", x), x * np.clip(x + 3, 0, 6) / 6)
    close(run("hardsigmoid", x, slope=0.2, offset=0.3), np.clip(0.2 * x + 0.3, 0, 1))
    close(run("hardtanh", x, min=-0.5, max=1.5), np.clip(x, -0.5, 1.5))
    close(run("hardshrink", x, threshold=0.5), np.where(np.abs(x) > 0.5, x, 0))
    close(run("softshrink", x, threshold=0.5),
          np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)))
    close(run("softplus", x, beta=2.0, threshold=5.0),
          np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2))
    close(run("softsign", x), x / (1 + np.abs(x)))
    close(run("tanhshrink", x), x - np.tanh(x))
    close(run("log_sigmoid", x), np.log(sig))
    close(run("thresholded_relu", x, threshold=0.5, value=-1.0), np.where(x > 0.5, x, -1.0))


def test_activations_stay_finite_at_extremes():
    x = np.array([-1e4, -100.0, 100.0, 1e4], dtype=np.float32)
    assert np.all(np.isfinite(run("log_sigmoid", x)))
    close(run("softplus", x), np.array([0, 0, 100, 1e4], np.float32), 1e-6)
    close(run("silu", x), np.array([0, 0, 100, 1e4], np.float32), 1e-6)
    close(run("mish", x), np.array([0, 0, 100, 1e4], np.float32), 1e-6)


def test_low_precision_matches_float32_rounded():
    x = rand(5, 7, dtype=np.float32)
    for op in ("gelu", "silu", "softplus", "mish"):
        lo = run(op, x.astype(np.float16))
        assert lo.dtype == np.float16
        close(lo.astype(np.float32), run(op, x.astype(np.float16).astype(np.float32))
              .astype(np.float16).astype(np.float32), 1e-3)


def test_prelu_channel_weight_both_layouts():
    x = rand(2, 3, 4)
    w = np.array([0.1, 0.2, 0.3])
    close(run("prelu", x, w), np.where(x > 0, x, w[None, :, None] * x))
    xl = np.moveaxis(x, 1, -1)
    close(run("prelu", xl, w, channel_last=True), np.moveaxis(run("prelu", x, w), 1, -1))
    close(run("prelu", x, np.array([0.5])), np.where(x > 0, x, 0.5 * x))


def test_rrelu_eval_and_training_slopes():
    x = np.linspace(-2, 2, 101)
    out, noise = run("rrelu", x, lower=0.1, upper=0.3, training=False)
    close(out, np.where(x >= 0, x, 0.2 * x))
    fw.seed(3)
    out, noise = run("rrelu", x, lower=0.1, upper=0.3, training=True)
    neg = x < 0
    assert np.all((noise[neg] >= 0.1) & (noise[neg] <= 0.3)) and np.all(noise[~neg] == 1)
    close(out, x * noise)
    assert len(np.unique(noise[neg])) > 10  # one slope per element


def test_maxout_glu_swiglu():
    x = rand(2, 6, 3)
    close(run("maxout", x, groups=3), x.reshape(2, 2, 3, 3).max(axis=2))
    close(run("maxout", np.moveaxis(x, 1, -1), groups=2, axis=-1),
          np.moveaxis(x, 1, -1).reshape(2, 3, 3, 2).max(-1))
    a, b = x[:, :3], x[:, 3:]
    close(run("glu", x, axis=1), a / (1 + np.exp(-b)))
    u, v = x[..., :1], x[..., 1:2]
    y = rand(2, 6, 2)
    close(run("swiglu", y), y[..., :1] / (1 + np.exp(-y[..., :1])) * y[..., 1:])
    close(run("swiglu", u, v), u / (1 + np.exp(-u)) * v)


def test_softmax_family():
    x = rand(3, 4, 5) * 10
    e = np.exp(x - x.max(axis=1, keepdims=True))
    close(run("softmax", x, axis=1), e / e.sum(axis=1, keepdims=True))
    close(run("log_softmax", x, axis=1), np.log(e / e.sum(axis=1, keepdims=True)))
    big = np.array([1000.0, 1001.0, -np.inf])
    close(run("softmax", big), np.array([1 / (1 + np.e), np.e / (1 + np.e), 0]))
    assert np.all(np.isfinite(run("log_softmax", np.array([1e4, -1e4]))))


def test_gumbel_softmax_outputs():
    fw.seed(0)
    out, soft = run("gumbel_softmax", rand(4, 6), temperature=0.5, hard=True)
    close(soft.sum(-1), np.ones(4))
    assert set(np.unique(out)) <= {0.0, 1.0} and np.all(out.sum(-1) == 1)
    assert np.all(out.argmax(-1) == soft.argmax(-1))
    fw.seed(5)
    a = run("gumbel_softmax", rand(3, 3))[0]
    fw.seed(5)
    b = run("gumbel_softmax", rand(3, 3) * 0 + 0)[0]
    assert a.shape == b.shape


# ================================================================ convolution
def conv_loops(x, w, b, stride, pads, dil, groups):
    """Direct N-d convolution by nested loops (channels first, explicit pads)."""
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    ks = w.shape[2:]
    nd = len(ks)
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    outs = [(xp.shape[2 + i] - dil[i] * (ks[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    y = np.zeros((n, o) + tuple(outs))
    og = o // groups
    for ni, oc in itertools.product(range(n), range(o)):
        g = oc // og
        for pos in itertools.product(*[range(v) for v in outs]):
            acc = 0.0 if b is None else b[oc]
            for ci in range(cg):
                for k in itertools.product(*[range(v) for v in ks]):
                    idx = tuple(p * s + kk * d for p, s, kk, d in zip(pos, stride, k, dil))
                    acc += xp[(ni, g * cg + ci) + idx] * w[(oc, ci) + k]
            y[(ni, oc) + pos] = acc
    return y


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_matches_loops(nd):
    ks = (3, 2, 2)[:nd]
    x = rand(2, 4, *((6, 5, 4)[:nd]))
    w = rand(6, 2, *ks)
    b = rand(6)
    stride, dil = (2, 1, 1)[:nd], (1, 2, 1)[:nd]
    pads = [(1, 2), (0, 1), (1, 0)][:nd]
    flat = [v for p in pads for v in p]
    want = conv_loops(x, w, b, stride, pads, dil, groups=2)
    close(run("conv", x, w, b, stride=stride, padding=flat, dilation=dil, groups=2), want)
    xl = np.moveaxis(x, 1, -1)
    got = run("conv", xl, w, b, stride=stride, padding=flat, dilation=dil, groups=2,
              channel_last=True)
    close(np.moveaxis(got, -1, 1), want)


def test_conv_padding_spellings_agree():
    x, w = rand(1, 2, 5, 6), rand(3, 2, 3, 3)
    ref = run("conv", x, w, None, padding=[1, 1, 2, 2])
    close(run("conv", x, w, None, padding=[1, 2]), ref)
    close(run("conv", x, w, None, padding=[[0, 0], [0, 0], [1, 1], [2, 2]]), ref)
    close(np.moveaxis(run("conv", np.moveaxis(x, 1, -1), w, None, channel_last=True,
                          padding=[[0, 0], [1, 1], [2, 2], [0, 0]]), -1, 1), ref)
    close(run("conv", x, w, None, padding="VALID"), run("conv", x, w, None, padding=0))


def test_conv_same_padding_is_paddles():
    # SAME: out = ceil(in / stride), the extra pixel at the end, dilation taken as 1
    x, w = rand(1, 1, 7, 7), rand(1, 1, 3, 3)
    got = run("conv", x, w, None, stride=2, padding="SAME", dilation=2)
    assert got.shape == (1, 1, 4, 4)
    close(got, conv_loops(x, w, None, (2, 2), [(1, 1), (1, 1)], (1, 1), 1))
    x = rand(1, 1, 6)
    w = rand(1, 1, 4)
    close(run("conv", x, w, None, padding="same"), conv_loops(x, w, None, (1,), [(1, 2)], (1,), 1))


def conv_t_loops(x, w, b, stride, pads, dil, groups, opad):
    n, c = x.shape[:2]
    og = w.shape[1]
    ks = w.shape[2:]
    cg = c // groups
    o = og * groups
    full = [(x.shape[2 + i] - 1) * stride[i] + dil[i] * (ks[i] - 1) + 1 + opad[i]
            for i in range(len(ks))]
    buf = np.zeros((n, o) + tuple(f + 5 for f in full))
    for ni, ci in itertools.product(range(n), range(c)):
        g = ci // cg
        for pos in itertools.product(*[range(v) for v in x.shape[2:]]):
            for oc in range(og):
                for k in itertools.product(*[range(v) for v in ks]):
                    idx = tuple(p * s + kk * d for p, s, kk, d in zip(pos, stride, k, dil))
                    buf[(ni, g * og + oc) + idx] += x[(ni, ci) + pos] * w[(ci, oc) + k]
    outs = [f - b_ - e for f, (b_, e) in zip(full, pads)]
    y = buf[(slice(None), slice(None)) + tuple(slice(b_, b_ + v) for (b_, _), v in
                                               zip(pads, outs))]
    return y + (0 if b is None else b.reshape((1, -1) + (1,) * len(ks)))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_matches_loops(nd):
    x = rand(2, 4, *((4, 3, 2)[:nd]))
    w = rand(4, 3, *((3, 2, 2)[:nd]))
    b = rand(6)
    stride, dil, opad = (2, 3, 1)[:nd], (1, 2, 1)[:nd], (1, 0, 0)[:nd]
    pads = [(1, 0), (0, 1), (1, 1)][:nd]
    flat = [v for p in pads for v in p]
    want = conv_t_loops(x, w, b, stride, pads, dil, 2, opad)
    got = run("conv_transpose", x, w, b, stride=stride, padding=flat, dilation=dil, groups=2,
              output_padding=opad)
    close(got, want)
    sizes = list(want.shape[2:])
    got = run("conv_transpose", x, w, b, stride=stride, padding=flat, dilation=dil, groups=2,
              output_size=sizes)
    close(got, want)


def test_conv_transpose_is_the_adjoint_of_conv():
    x = rand(2, 4, 7, 6)
    w = rand(6, 2, 3, 2)
    attrs = dict(stride=[2, 1], padding=[1, 0, 0, 1], dilation=[1, 2], groups=2)
    y = run("conv", x, w, None, **attrs)
    g = rand(*y.shape)
    xt = run("conv_transpose", g, w, None, output_size=list(x.shape[2:]), **attrs)
    close(np.vdot(y, g), np.vdot(x, xt))


def test_conv_transpose_paddle_example():
    x = np.array([[[4, 0, 9, 7], [8, 0, 9, 2]]], np.float32)
    w = np.array([[[7, 0]], [[4, 2]]], np.float32)
    close(run("conv_transpose", x, w), np.array([[[60, 16, 99, 75, 4]]], np.float32))


def test_conv_errors_name_shapes():
    with pytest.raises(InvalidArgumentError, match=r"conv: x has 3 input channels"):
        run("conv", rand(1, 3, 5, 5), rand(2, 2, 3, 3))


# ================================================================ pooling
def window_ranges(i, k, s, b, e, ceil):
    o = (i + b + e - k + ((s - 1) if ceil else 0)) // s + 1
    return [(q * s - b, q * s - b + k) for q in range(o)]


def pool_loops(x, k, s, pads, ceil, kind, exclusive=True):
    n, c, h, w = x.shape
    rh = window_ranges(h, k[0], s[0], *pads[0], ceil)
    rw = window_ranges(w, k[1], s[1], *pads[1], ceil)
    out = np.zeros((n, c, len(rh), len(rw)))
    idx = np.zeros(out.shape, np.int64)
    for a, (h0, h1) in enumerate(rh):
        for bb, (w0, w1) in enumerate(rw):
            hs, ws = range(max(h0, 0), min(h1, h)), range(max(w0, 0), min(w1, w))
            vals = x[:, :, hs.start:hs.stop, ws.start:ws.stop].reshape(n, c, -1)
            if kind == "max":
                out[:, :, a, bb] = vals.max(-1)
                j = vals.argmax(-1)
                idx[:, :, a, bb] = (hs.start + j // len(ws)) * w + ws.start + j % len(ws)
            else:
                if exclusive:
                    cnt = len(hs) * len(ws)
                else:
                    cnt = (min(h1, h + pads[0][1]) - h0) * (min(w1, w + pads[1][1]) - w0)
                out[:, :, a, bb] = vals.sum(-1) / cnt
    return out, idx


@pytest.mark.parametrize("ceil", [False, True])
def test_pools_match_loops(ceil):
    x = rand(2, 3, 7, 6)
    k, s, pads = (3, 2), (2, 2), [(1, 0), (1, 1)]
    flat = [1, 0, 1, 1]
    mx, mi = pool_loops(x, k, s, pads, ceil, "max")
    close(run("max_pool", x, kernel_size=k, stride=s, padding=flat, ceil_mode=ceil), mx)
    out, mask = run("max_pool_with_index", x, kernel_size=k, stride=s, padding=flat,
                    ceil_mode=ceil)
    close(out, mx)
    assert mask.dtype == np.int32 and np.array_equal(mask, mi)
    for exclusive in (True, False):
        av, _ = pool_loops(x, k, s, pads, ceil, "avg", exclusive)
        close(run("avg_pool", x, kernel_size=k, stride=s, padding=flat, ceil_mode=ceil,
                  exclusive=exclusive), av)
    # channel-last gives the same values and the same (layout-independent) mask
    out2, mask2 = run("max_pool_with_index", np.moveaxis(x, 1, -1), kernel_size=k, stride=s,
                      padding=flat, ceil_mode=ceil, channel_last=True)
    close(np.moveaxis(out2, -1, 1), mx)
    assert np.array_equal(np.moveaxis(mask2, -1, 1), mi)


def test_avg_pool_divisor_override_and_lp_pool():
    x = rand(1, 2, 6, lo=0.1, hi=2)
    windows = x.reshape(1, 2, 3, 2)
    close(run("avg_pool", x, kernel_size=2, divisor_override=4.0), windows.sum(-1) / 4)
    close(run("lp_pool", x, norm_type=3.0, kernel_size=2), (windows ** 3).sum(-1) ** (1 / 3))
    close(run("lp_pool", x, norm_type=float("inf"), kernel_size=2), windows.max(-1))


def test_max_pool_ties_pick_the_first_in_row_major_order():
    x = np.zeros((1, 1, 2, 2))
    _, mask = run("max_pool_with_index", x, kernel_size=2)
    assert mask.item() == 0
    _, mask = run("adaptive_max_pool", x, output_size=1)
    assert mask.item() == 0


def test_adaptive_pools_match_loops():
    x = rand(2, 2, 7, 5)
    oh, ow = 3, 4
    want = np.zeros((2, 2, oh, ow))
    wmax = np.zeros_like(want)
    widx = np.zeros(want.shape, np.int64)
    for i in range(oh):
        h0, h1 = (i * 7) // oh, -(-(i + 1) * 7 // oh)
        for j in range(ow):
            w0, w1 = (j * 5) // ow, -(-(j + 1) * 5 // ow)
            win = x[:, :, h0:h1, w0:w1].reshape(2, 2, -1)
            want[:, :, i, j] = win.mean(-1)
            wmax[:, :, i, j] = win.max(-1)
            a = win.argmax(-1)
            widx[:, :, i, j] = (h0 + a // (w1 - w0)) * 5 + w0 + a % (w1 - w0)
    close(run("adaptive_avg_pool", x, output_size=[oh, ow]), want)
    out, idx = run("adaptive_max_pool", x, output_size=[oh, ow])
    close(out, wmax)
    assert np.array_equal(idx, widx)
    close(run("adaptive_avg_pool", x, output_size=[None, 1]), x.mean(-1, keepdims=True))


def test_avg_pool_window_of_padding_alone_is_zero():
    # ceil_mode lets the last window start in the right padding: with exclusive
    # averaging it holds no element. fw gives 0 there (Paddle 3.3.1 gives 0/0 = NaN);
    # the other windows average their real elements
    x = np.arange(3.0, dtype=np.float32).reshape(1, 1, 3)
    attrs = {"kernel_size": [2], "stride": [2], "padding": [1], "ceil_mode": True}
    close(run("avg_pool", x, **attrs), [[[0.0, 1.5, 0.0]]])  # the fast kernel
    close(OPS["avg_pool"].reference(x, **OPS["avg_pool"].canon(  # the NumPy reference
        dict(OPS["avg_pool"].attrs, **attrs))), [[[0.0, 1.5, 0.0]]])


def test_optimizer_ops_refuse_a_gradient_of_another_shape():
    # also when the shapes agree on their common leading dims but the ranks differ
    p = np.ones((2, 3), np.float32)
    for g in ((2, 3, 1), (2,), (3, 2)):
        with pytest.raises(InvalidArgumentError, match="must be equal"):
            call("sgd", p, np.ones(g, np.float32), np.array([0.1], np.float32))
        with pytest.raises(InvalidArgumentError, match="must be equal"):  # building a program
            OPS["sgd"].infer(TensorType([2, 3], "float32"), TensorType(list(g), "float32"),
                             TensorType([1], "float32"))


def test_max_unpool_inverts_max_pool():
    x = rand(2, 3, 6, 4, lo=0.1, hi=1.0)
    out, mask = run("max_pool_with_index", x, kernel_size=2)
    up = run("max_unpool", out, mask, kernel_size=2)
    assert up.shape == x.shape
    keep = up != 0
    close(up[keep], x[keep])
    close(run("max_pool", up, kernel_size=2), out)
    assert keep.sum() == out.size
    assert run("max_unpool", out, mask, kernel_size=2, output_size=[7, 5]).shape == \
        (2, 3, 7, 5)
    # the default size is Paddle's (in - 1) * stride - 2 * padding + kernel per axis;
    # padding [[b, e], ...] takes b + e (indices all 0: valid for any output size)
    zero = np.zeros_like(mask)
    assert run("max_unpool", out, zero, kernel_size=3, stride=2, padding=1).shape == \
        (2, 3, (3 - 1) * 2 - 2 + 3, (2 - 1) * 2 - 2 + 3)
    pairs = [[0, 0], [0, 0], [1, 0], [0, 2]]
    assert run("max_unpool", out, zero, kernel_size=2, stride=3, padding=pairs).shape == \
        (2, 3, (3 - 1) * 3 - 1 + 2, (2 - 1) * 3 - 2 + 2)


# ================================================================ normalization
def test_batch_norm_training_eval_and_running_stats():
    x = rand(4, 3, 5, 2)
    rm, rv = rand(3), rand(3, lo=0.5, hi=2)
    w, b = rand(3), rand(3)
    rm0, rv0 = rm.copy(), rv.copy()
    out, mo, vo, sm, sinv = run("batch_norm", x, rm, rv, w, b, training=True, momentum=0.8,
                                epsilon=1e-3)
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    c = (slice(None), None, None)
    close(out, (x - mean[c]) / np.sqrt(var[c] + 1e-3) * w[c] + b[c])
    close(mo, 0.8 * rm + 0.2 * mean)
    close(vo, 0.8 * rv + 0.2 * var)  # Paddle: the biased batch variance
    close(sm, mean)
    close(sinv, 1 / np.sqrt(var + 1e-3))
    assert np.array_equal(rm, rm0) and np.array_equal(rv, rv0)  # inputs are not mutated
    out, mo, vo, sm, sinv = run("batch_norm", x, rm, rv, w, b, training=False)
    close(out, (x - rm[c]) / np.sqrt(rv[c] + 1e-5) * w[c] + b[c])
    close(mo, rm)
    close(vo, rv)
    glob = run("batch_norm", x, rm, rv, w, b, training=True, use_global_stats=True)
    close(glob[0], out)
    close(glob[1], rm)
    xl = np.moveaxis(x, 1, -1)
    close(np.moveaxis(run("batch_norm", xl, rm, rv, w, b, training=True,
                          channel_last=True)[0], -1, 1),
          run("batch_norm", x, rm, rv, w, b, training=True)[0])


def test_batch_norm_float16_keeps_float32_statistics():
    x = rand(4, 3, dtype=np.float32).astype(np.float16)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    out, mo, vo, sm, sinv = run("batch_norm", x, rm, rv, training=True)
    assert out.dtype == np.float16 and mo.dtype == sm.dtype == np.float32


def test_layer_group_instance_rms_norms():
    x = rand(2, 6, 3, 4)
    w, b = rand(3, 4), rand(3, 4)
    out, mean, inv = run("layer_norm", x, w, b, begin_norm_axis=2, epsilon=1e-4)
    m = x.mean(axis=(2, 3), keepdims=True)
    v = x.var(axis=(2, 3), keepdims=True)
    close(out, (x - m) / np.sqrt(v + 1e-4) * w + b)
    close(mean, m[..., 0, 0])
    close(inv, 1 / np.sqrt(v[..., 0, 0] + 1e-4))
    close(run("layer_norm", x, w.reshape(-1), b.reshape(-1), begin_norm_axis=-2,
              epsilon=1e-4)[0], out)
    out, inv = run("rms_norm", x, w, None, begin_norm_axis=2)
    close(out, x / np.sqrt((x ** 2).mean(axis=(2, 3), keepdims=True) + 1e-5) * w)
    gw, gb = rand(6), rand(6)
    out, mean, inv = run("group_norm", x, gw, gb, num_groups=3)
    g = x.reshape(2, 3, 2, 3, 4)
    gm = g.mean(axis=(2, 3, 4), keepdims=True)
    gv = g.var(axis=(2, 3, 4), keepdims=True)
    want = ((g - gm) / np.sqrt(gv + 1e-5)).reshape(x.shape) * gw[:, None, None] + \
        gb[:, None, None]
    close(out, want)
    assert mean.shape == (2, 3)
    close(np.moveaxis(run("group_norm", np.moveaxis(x, 1, -1), gw, gb, num_groups=3,
                          channel_last=True)[0], -1, 1), want)
    out, mean, inv = run("instance_norm", x, gw, gb)
    im = x.mean(axis=(2, 3), keepdims=True)
    iv = x.var(axis=(2, 3), keepdims=True)
    close(out, (x - im) / np.sqrt(iv + 1e-5) * gw[:, None, None] + gb[:, None, None])
    assert mean.shape == (2, 6)


def test_local_response_norm_and_normalize():
    x = rand(2, 5, 3)
    size, alpha, beta, k = 3, 0.1, 0.75, 2.0
    want = np.zeros_like(x)
    for ch in range(5):
        lo, hi = max(0, ch - size // 2), min(5, ch + (size - 1) // 2 + 1)
        s = (x[:, lo:hi] ** 2).sum(axis=1)
        want[:, ch] = x[:, ch] / (k + alpha / size * s) ** beta
    close(run("local_response_norm", x, size=size, alpha=alpha, beta=beta, k=k), want)
    close(run("normalize", x, p=3.0, axis=1),
          x / np.maximum((np.abs(x) ** 3).sum(1, keepdims=True) ** (1 / 3), 1e-12))
    close(run("normalize", x, axis=-1), x / np.linalg.norm(x, axis=-1, keepdims=True))
    close(run("normalize", np.zeros((2, 3))), np.zeros((2, 3)))


# ================================================================ nn_misc
def test_linear_bilinear_embedding():
    x, w, b = rand(2, 3, 4), rand(4, 5), rand(5)
    close(run("linear", x, w, b), x @ w + b)
    x1, x2, wb, bb = rand(3, 4), rand(3, 2), rand(5, 4, 2), rand(1, 5)
    want = np.einsum("ni,oij,nj->no", x1, wb, x2) + bb
    close(run("bilinear", x1, x2, wb, bb), want)
    table = rand(6, 3)
    ids = np.array([[0, 5], [2, 5]])
    out = run("embedding", ids, table, padding_idx=-1)
    close(out[0, 0], table[0])
    close(out[:, 1], np.zeros((2, 3)))


def test_dropout_modes_and_axis():
    x = np.ones((200, 50))
    fw.seed(7)
    out, mask = run("dropout", x, p=0.3)
    assert mask.dtype == np.bool_ and abs(mask.mean() - 0.7) < 0.02
    close(out, np.where(mask, 1 / 0.7, 0))
    out, mask = run("dropout", x, p=0.3, mode="downscale_in_infer")
    close(out, mask.astype(float))
    close(run("dropout", x, p=0.3, training=False, mode="downscale_in_infer")[0], x * 0.7)
    close(run("dropout", x, p=0.3, training=False)[0], x)
    _, mask = run("dropout", x, p=0.5, axis=0)
    assert np.all(mask == mask[:, :1])  # one draw per row, shared along axis 1
    close(run("dropout", x, p=1.0)[0], np.zeros_like(x))
    fw.seed(11)
    a = run("dropout", x, p=0.5)[1]
    fw.seed(11)
    assert np.array_equal(a, run("dropout", x, p=0.5)[1])


def test_alpha_dropout_keeps_selu_statistics():
    fw.seed(2)
    x = RNG.standard_normal((400, 400))
    out, mask = run("alpha_dropout", x, p=0.2)
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    close(run("alpha_dropout", x, p=0.2, training=False)[0], x)


def interp_loops_linear(x, o, align_corners, align_mode=0):
    i = x.shape[-1]
    out = np.zeros(x.shape[:-1] + (o,))
    for t in range(o):
        if align_corners:
            src = t * (i - 1) / (o - 1) if o > 1 else 0.0
        elif align_mode == 0:
            src = max((t + 0.5) * i / o - 0.5, 0.0)
        else:
            src = t * i / o
        lo = min(int(math.floor(src)), i - 1)
        hi = min(lo + 1, i - 1)
        lam = src - lo
        out[..., t] = x[..., lo] * (1 - lam) + x[..., hi] * lam
    return out


def test_interpolate_modes():
    x = rand(2, 3, 5)
    for ac, am in ((False, 0), (True, 0), (False, 1)):
        close(run("interpolate", x, size=[8], mode="linear", align_corners=ac, align_mode=am),
              interp_loops_linear(x, 8, ac, am))
    close(run("interpolate", x, scale_factor=2.0), np.repeat(x, 2, axis=-1))
    y = rand(1, 2, 4, 6)
    got = run("interpolate", y, size=[7, 3], mode="bilinear", align_corners=True)
    want = interp_loops_linear(np.swapaxes(interp_loops_linear(y, 3, True), 2, 3), 7, True)
    close(got, np.swapaxes(want, 2, 3))
    close(run("interpolate", y, size=[2, 3], mode="area"),
          y.reshape(1, 2, 2, 2, 3, 2).mean(axis=(3, 5)))
    # bicubic reproduces a linear ramp exactly away from the borders (align_corners)
    ramp = np.tile(np.arange(8.0), (1, 1, 8, 1))
    out = run("interpolate", ramp, size=[15, 15], mode="bicubic", align_corners=True)
    close(out[0, 0, 3, 4:-4], np.arange(4, 11) * 0.5)
    nn = run("interpolate", y, size=[4, 3])
    close(nn, y[:, :, :, ::2])


def test_pixel_and_channel_shuffles():
    x = rand(2, 8, 3, 3)
    r = 2
    out = run("pixel_shuffle", x, upscale_factor=r)
    for c, h, w, i, j in itertools.product(range(2), range(3), range(3), range(2), range(2)):
        assert out[0, c, h * r + i, w * r + j] == x[0, c * 4 + i * 2 + j, h, w]
    close(run("pixel_unshuffle", out, downscale_factor=r), x)
    cl = run("pixel_shuffle", np.moveaxis(x, 1, -1), upscale_factor=r, channel_last=True)
    close(np.moveaxis(cl, -1, 1), out)
    cs = run("channel_shuffle", x, groups=2)
    close(cs, x.reshape(2, 2, 4, 3, 3).transpose(0, 2, 1, 3, 4).reshape(x.shape))


def test_unfold_matches_loops_and_fold_is_its_adjoint():
    x = rand(2, 3, 5, 6)
    ks, st, pad, dil = (2, 3), (1, 2), [1, 0, 0, 1], (2, 1)  # [top, left, bottom, right]
    cols = run("unfold", x, kernel_sizes=ks, strides=st, paddings=pad, dilations=dil)
    xp = np.pad(x, [(0, 0), (0, 0), (1, 0), (0, 1)])
    oh = (xp.shape[2] - dil[0] * (ks[0] - 1) - 1) // st[0] + 1
    ow = (xp.shape[3] - dil[1] * (ks[1] - 1) - 1) // st[1] + 1
    want = np.zeros((2, 3 * 6, oh * ow))
    for c, i, j, a, b in itertools.product(range(3), range(2), range(3), range(oh), range(ow)):
        want[:, c * 6 + i * 3 + j, a * ow + b] = xp[:, c, a * st[0] + i * dil[0],
                                                    b * st[1] + j * dil[1]]
    close(cols, want)
    g = rand(*cols.shape)
    back = run("fold", g, output_sizes=[5, 6], kernel_sizes=ks, strides=st, paddings=pad,
               dilations=dil)
    close(np.vdot(cols, g), np.vdot(x, back))
    # more padding on the left than the right (and on top than the bottom)
    pad = [1, 2, 0, 0]
    cols = run("unfold", x, kernel_sizes=ks, strides=st, paddings=pad, dilations=dil)
    g = rand(*cols.shape)
    back = run("fold", g, output_sizes=[5, 6], kernel_sizes=ks, strides=st, paddings=pad,
               dilations=dil)
    close(np.vdot(cols, g), np.vdot(x, back))


def sdpa_loops(q, k, v, mask, causal, scale):
    b, sq, h, d = q.shape
    hk = k.shape[2]
    out = np.zeros((b, sq, h, v.shape[3]))
    for bi, hi in itertools.product(range(b), range(h)):
        kh = hi // (h // hk)
        s = q[bi, :, hi] @ k[bi, :, kh].T * scale
        if causal:
            s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
        if mask is not None:
            m = np.broadcast_to(mask, (b, h) + s.shape)[bi, hi]
            s = np.where(m, s, -np.inf) if m.dtype == bool else s + m
        p = np.exp(s - s.max(-1, keepdims=True))
        out[bi, :, hi] = (p / p.sum(-1, keepdims=True)) @ v[bi, :, kh]
    return out


def test_scaled_dot_product_attention():
    q, k, v = rand(2, 4, 4, 3), rand(2, 5, 2, 3), rand(2, 5, 2, 2)
    close(run("scaled_dot_product_attention", q, k, v),
          sdpa_loops(q, k, v, None, False, 1 / math.sqrt(3)))
    mask = RNG.random((4, 5)) < 0.7
    mask[:, 0] = True
    close(run("scaled_dot_product_attention", q, k, v, mask, scale=0.3),
          sdpa_loops(q, k, v, mask, False, 0.3))
    fm = rand(2, 1, 4, 5)
    close(run("scaled_dot_product_attention", q, k, v, fm, is_causal=True),
          sdpa_loops(q, k, v, fm, True, 1 / math.sqrt(3)))
    close(run("scaled_dot_product_attention", q[0], k[0], v[0]),
          sdpa_loops(q[:1], k[:1], v[:1], None, False, 1 / math.sqrt(3))[0])


def test_distances_and_label_smooth():
    x1, x2 = rand(3, 4), rand(3, 4)
    cos = (x1 * x2).sum(1) / np.sqrt((x1 ** 2).sum(1) * (x2 ** 2).sum(1))
    close(run("cosine_similarity", x1, x2, axis=1), cos)
    d = np.abs(x1 - x2 + 1e-6)
    close(run("pairwise_distance", x1, x2), np.sqrt((d ** 2).sum(-1)))
    close(run("pairwise_distance", x1, x2, p=float("inf"), keepdim=True), d.max(-1,
                                                                                keepdims=True))
    close(run("pairwise_distance", x1, x2, p=1.0, epsilon=0.0), np.abs(x1 - x2).sum(-1))
    lab = np.eye(4)[[0, 2, 3]]
    close(run("label_smooth", lab, epsilon=0.2), 0.8 * lab + 0.05)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    close(run("label_smooth", lab, prior, epsilon=0.2), 0.8 * lab + 0.2 * prior)


# ================================================================ losses
def log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def test_cross_entropy_hard_labels_and_paddle_mean():
    x = rand(5, 4) * 3
    lab = np.array([0, 3, 1, 1, 2])
    lp = log_softmax(x)
    per = -lp[np.arange(5), lab]
    loss, sm = run("cross_entropy_with_softmax", x, lab, reduction="none")
    close(loss, per)
    close(sm, np.exp(lp))
    close(run("cross_entropy_with_softmax", x, lab[:, None])[0], per.mean())
    w = np.array([0.5, 1.0, 2.0, 3.0])
    close(run("cross_entropy_with_softmax", x, lab, w)[0],
          (per * w[lab]).sum() / w[lab].sum())
    ign = lab.copy()
    ign[1] = 1
    keep = ign != 1
    # ignore_index >= 0 without weight: the mean over the kept samples
    close(run("cross_entropy_with_softmax", x, ign, ignore_index=1)[0], per[keep].mean())
    # with weight: the weighted mean over the kept samples
    close(run("cross_entropy_with_softmax", x, ign, w, ignore_index=1)[0],
          (per * w[lab])[keep].sum() / w[lab][keep].sum())
    # a negative ignore_index without weight: Paddle divides by every sample
    neg = lab.copy()
    neg[0] = -100
    per0 = per.copy()
    per0[0] = 0
    close(run("cross_entropy_with_softmax", x, neg)[0], per0.sum() / 5)
    close(run("cross_entropy_with_softmax", x, neg, reduction="sum")[0], per0.sum())


def test_cross_entropy_soft_labels_axis_and_no_softmax():
    x = rand(2, 3, 4)
    lab = RNG.random((2, 3, 4))
    lab /= lab.sum(1, keepdims=True)
    lp = log_softmax(x, axis=1)
    per = -(lab * lp).sum(1, keepdims=True)
    close(run("cross_entropy_with_softmax", x, lab, soft_label=True, axis=1,
              reduction="none")[0], per)
    w = np.array([1.0, 2.0, 0.5])
    pw = (lab * w[None, :, None]).sum(1, keepdims=True)
    close(run("cross_entropy_with_softmax", x, lab, w, soft_label=True, axis=1)[0],
          (per * pw).sum() / pw.sum())
    p = np.exp(lp)
    hard = np.array([[0, 2, 1, 1], [2, 2, 0, 1]])
    got = run("cross_entropy_with_softmax", p, hard, axis=1, use_softmax=False,
              reduction="none")[0]
    close(got, -np.take_along_axis(lp, hard[:, None], 1)[:, 0])


def test_nll_bce_kl_smooth_l1_ranking_focal():
    lp = log_softmax(rand(4, 3, 2))
    lab = np.array([[0, 2], [1, 1], [2, 0], [1, -100]])
    w = np.array([1.0, 2.0, 0.5])
    pick = np.where(lab == -100, 0, -np.take_along_axis(lp, np.maximum(lab, 0)[:, None],
                                                        1)[:, 0])
    pw = np.where(lab == -100, 0, w[np.maximum(lab, 0)])
    close(run("nll_loss", lp, lab, w, reduction="none"), pick * pw)
    close(run("nll_loss", lp, lab, w), (pick * pw).sum() / pw.sum())
    p, y = rand(6, lo=0.01, hi=0.99), RNG.random(6)
    close(run("binary_cross_entropy", p, y, reduction="sum"),
          -(y * np.log(p) + (1 - y) * np.log(1 - p)).sum())
    close(run("binary_cross_entropy", np.array([0.0, 1.0]), np.array([1.0, 0.0]),
              reduction="none"), np.array([100.0, 100.0]))
    z = np.array([-800.0, -2.0, 0.0, 3.0, 800.0])
    yz = np.array([1.0, 0.0, 0.5, 1.0, 0.0])
    pos = np.array([2.0])
    # pos_weight multiplies only the label term: -(2*y*log(sigmoid(z)) + (1-y)*log(1-sigmoid(z)))
    # with log(sigmoid(z)) = -logaddexp(0, -z) and log(1 - sigmoid(z)) = -logaddexp(0, z)
    want = 2 * yz * np.logaddexp(0, -z) + (1 - yz) * np.logaddexp(0, z)
    close(run("binary_cross_entropy_with_logits", z, yz, None, pos, reduction="none"), want)
    assert np.all(np.isfinite(want))
    inp, tgt = log_softmax(rand(3, 4)), RNG.random((3, 4))
    kl = tgt * (np.log(tgt) - inp)
    close(run("kl_div", inp, tgt, reduction="batchmean"), kl.sum() / 3)
    close(run("kl_div", inp, np.log(tgt), reduction="sum", log_target=True), kl.sum())
    close(run("kl_div", inp, np.zeros((3, 4)), reduction="none"), np.zeros((3, 4)))
    a, b = rand(10) * 3, rand(10) * 3
    d = np.abs(a - b)
    close(run("smooth_l1_loss", a, b, delta=0.7),
          np.where(d < 0.7, 0.5 * d * d, 0.7 * d - 0.5 * 0.49).mean())
    s = np.sign(rand(10))
    close(run("margin_ranking_loss", a, b, s, margin=0.2, reduction="sum"),
          np.maximum(0, -s * (a - b) + 0.2).sum())
    yy = (RNG.random(10) > 0.5).astype(float)
    sig = 1 / (1 + np.exp(-a))
    ce = -(yy * np.log(sig) + (1 - yy) * np.log(1 - sig))
    pt = sig * yy + (1 - sig) * (1 - yy)
    at = 0.25 * yy + 0.75 * (1 - yy)
    close(run("sigmoid_focal_loss", a, yy, np.array([4.0])), (at * ce * (1 - pt) ** 2).sum() / 4)
    for bad in ((2,), (0,), (1, 2)):  # the normalizer holds exactly one value
        with pytest.raises(InvalidArgumentError, match="one value"):
            OPS["sigmoid_focal_loss"].infer(TensorType(list(a.shape), "float64"),
                                            TensorType(list(a.shape), "float64"),
                                            TensorType(list(bad), "float64"))


def ctc_brute_force(logits, label, blank):
    """-log p(label) by summing over every alignment path (tiny inputs only)."""
    t, c = logits.shape
    lp = log_softmax(logits)
    total = 0.0
    for path in itertools.product(range(c), repeat=t):
        collapsed = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        if [k for k in collapsed if k != blank] == list(label):
            total += np.exp(sum(lp[i, k] for i, k in enumerate(path)))
    return -np.log(total)


def test_ctc_loss_matches_brute_force_and_its_gradient():
    logits = rand(5, 3, 3) * 2
    labels = np.array([[1, 1, 0], [2, 0, 0], [1, 2, 0]], np.int32)
    tl = np.array([5, 4, 3])
    ll = np.array([2, 1, 2])
    loss, grad = run("ctc_loss", logits, labels, tl, ll, blank=0)
    for b in range(3):
        close(loss[b], ctc_brute_force(logits[:tl[b], b], labels[b, :ll[b]], 0), 1e-9)
    # the gradient output is d loss / d logits (finite differences)
    eps = 1e-6
    num = np.zeros_like(logits)
    for idx in itertools.product(*[range(v) for v in logits.shape]):
        d = np.zeros_like(logits)
        d[idx] = eps
        num[idx] = (run("ctc_loss", logits + d, labels, tl, ll)[0].sum()
                    - run("ctc_loss", logits - d, labels, tl, ll)[0].sum()) / (2 * eps)
    close(grad, num, 1e-6)
    _, g2 = run("ctc_loss", logits, labels, tl, ll, norm_by_times=True)
    close(g2, grad / tl[None, :, None])
    # blank elsewhere than 0, and a sequence too short for its label (infinite loss)
    lab2 = np.array([[0, 0, 1]], np.int32)
    got, g = run("ctc_loss", logits[:, :1], lab2, np.array([5]), np.array([3]), blank=2)
    close(got[0], ctc_brute_force(logits[:, 0], [0, 0, 1], 2), 1e-9)
    inf, g = run("ctc_loss", logits[:2, :1], np.array([[1, 1]], np.int32), np.array([2]),
                 np.array([2]))
    assert np.isinf(inf[0]) and np.all(g == 0)


def test_hsigmoid_default_tree_follows_the_bit_code():
    x, w, b = rand(3, 2), rand(5, 2), rand(5, 1)
    lab = np.array([0, 3, 5])
    got = run("hsigmoid_loss", x, lab, w, b, num_classes=6)
    width = (6 - 1).bit_length()
    for i, y in enumerate(lab.tolist()):
        c = y + 6
        length = c.bit_length() - 1
        total = 0.0
        for j in range(width):
            if j < length:
                node, bit = (c >> (j + 1)) - 1, (c >> j) & 1
                pre = np.clip(x[i] @ w[node] + b[node, 0], -40, 40)
                total += np.log1p(np.exp(pre)) - bit * pre
            else:
                total += np.log(2.0)  # Paddle's kernel counts the padding slots
        close(got[i, 0], total)
    table = np.array([[0, 2, -1], [1, -1, 3], [4, 3, 2]])
    code = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])
    got = run("hsigmoid_loss", x, lab, w, None, table, code, num_classes=6)
    for i in range(3):
        total = 0.0
        for j in range(3):
            if np.all(table[i, :j + 1] >= 0):
                pre = x[i] @ w[table[i, j]]
                total += np.log1p(np.exp(pre)) - code[i, j] * pre
            else:
                total += np.log(2.0)
        close(got[i, 0], total)


# ================================================================ against PyTorch
@pytest.fixture(scope="module")
def torch():
    t = pytest.importorskip("torch")
    old = t.get_default_dtype()
    t.set_default_dtype(t.float64)
    yield t
    t.set_default_dtype(old)


def T(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a))


def test_torch_conv(torch):
    tf = torch.nn.functional
    x, w, b = rand(2, 4, 7, 6), rand(6, 2, 3, 2), rand(6)
    want = tf.conv2d(T(torch, x), T(torch, w), T(torch, b), stride=(2, 1), padding=(1, 2),
                     dilation=(1, 2), groups=2).numpy()
    close(run("conv", x, w, b, stride=[2, 1], padding=[1, 2], dilation=[1, 2], groups=2), want)
    xl = np.moveaxis(x, 1, -1)
    close(np.moveaxis(run("conv", xl, w, b, stride=[2, 1], padding=[1, 2], dilation=[1, 2],
                          groups=2, channel_last=True), -1, 1), want)
    x3, w3 = rand(1, 2, 4, 5, 3), rand(3, 2, 2, 3, 2)
    close(run("conv", x3, w3, None, padding=1),
          tf.conv3d(T(torch, x3), T(torch, w3), padding=1).numpy())
    wt = rand(4, 3, 3, 2)
    want = tf.conv_transpose2d(T(torch, x), T(torch, wt), T(torch, b), stride=2, padding=1,
                               output_padding=1, groups=2, dilation=(1, 2)).numpy()
    close(run("conv_transpose", x, wt, b, stride=2, padding=1, output_padding=1, groups=2,
              dilation=[1, 2]), want)
    x1, w1 = rand(2, 3, 9), rand(2, 3, 4)
    close(run("conv", x1, w1, None, stride=2, padding=[2, 1]),
          tf.conv1d(tf.pad(T(torch, x1), (2, 1)), T(torch, w1), stride=2).numpy())


def test_torch_pools(torch):
    tf = torch.nn.functional
    x = rand(2, 3, 9, 8)
    tx = T(torch, x)
    for ceil in (False, True):
        mo, mi = tf.max_pool2d(tx, 3, 2, 1, ceil_mode=ceil, return_indices=True)
        out, mask = run("max_pool_with_index", x, kernel_size=3, stride=2, padding=1,
                        ceil_mode=ceil)
        close(out, mo.numpy())
        assert np.array_equal(mask, mi.numpy())
        for exclusive in (True, False):
            close(run("avg_pool", x, kernel_size=3, stride=2, padding=1, ceil_mode=ceil,
                      exclusive=exclusive),
                  tf.avg_pool2d(tx, 3, 2, 1, ceil_mode=ceil,
                                count_include_pad=not exclusive).numpy())
    close(run("adaptive_avg_pool", x, output_size=[4, 3]),
          tf.adaptive_avg_pool2d(tx, (4, 3)).numpy())
    ao, ai = tf.adaptive_max_pool2d(tx, (4, 5), return_indices=True)
    out, idx = run("adaptive_max_pool", x, output_size=[4, 5])
    close(out, ao.numpy())
    assert np.array_equal(idx, ai.numpy())
    x3 = rand(1, 2, 5, 6, 4)
    close(run("max_pool", x3, kernel_size=2, stride=[1, 2, 2]),
          tf.max_pool3d(T(torch, x3), 2, (1, 2, 2)).numpy())
    close(run("lp_pool", x, norm_type=2.0, kernel_size=2),
          tf.lp_pool2d(tx, 2.0, 2).numpy())
    out, mask = run("max_pool_with_index", x, kernel_size=2)
    close(run("max_unpool", out, mask, kernel_size=2),
          tf.max_unpool2d(T(torch, out), T(torch, mask.astype(np.int64)), 2).numpy())


def test_torch_norms(torch):
    tf = torch.nn.functional
    x = rand(3, 4, 5, 2)
    rm, rv, w, b = rand(4), rand(4, lo=0.5, hi=2), rand(4), rand(4)
    trm, trv = T(torch, rm.copy()), T(torch, rv.copy())
    want = tf.batch_norm(T(torch, x), trm, trv, T(torch, w), T(torch, b), training=True,
                         momentum=0.1, eps=1e-5)
    out, mo, vo, _, _ = run("batch_norm", x, rm, rv, w, b, training=True, momentum=0.9)
    close(out, want.numpy())
    close(mo, trm.numpy())  # the same update (torch's momentum is 1 - Paddle's) ...
    n = x.size / 4
    close(vo, 0.9 * rv + 0.1 * x.var(axis=(0, 2, 3)))  # ... but Paddle's variance is biased
    close((trv.numpy() - 0.9 * rv) / 0.1 * (n - 1) / n, x.var(axis=(0, 2, 3)))
    lw = rand(5, 2)
    close(run("layer_norm", x, lw, None, begin_norm_axis=2)[0],
          tf.layer_norm(T(torch, x), (5, 2), T(torch, lw)).numpy())
    close(run("group_norm", x, w, b, num_groups=2)[0],
          tf.group_norm(T(torch, x), 2, T(torch, w), T(torch, b)).numpy())
    close(run("instance_norm", x, w, b)[0],
          tf.instance_norm(T(torch, x), weight=T(torch, w), bias=T(torch, b)).numpy())
    close(run("local_response_norm", x, size=3, alpha=0.2, beta=0.6, k=1.5),
          tf.local_response_norm(T(torch, x), 3, 0.2, 0.6, 1.5).numpy())
    close(run("rms_norm", x, None, None, begin_norm_axis=-2, epsilon=1e-6)[0],
          tf.rms_norm(T(torch, x), (5, 2), eps=1e-6).numpy())


def test_torch_interpolate(torch):
    tf = torch.nn.functional
    x = rand(2, 3, 5, 7)
    tx = T(torch, x)
    for mode in ("bilinear", "bicubic"):
        for ac in (False, True):
            close(run("interpolate", x, size=[8, 4], mode=mode, align_corners=ac),
                  tf.interpolate(tx, size=(8, 4), mode=mode, align_corners=ac).numpy())
    close(run("interpolate", x, size=[3, 11]),
          tf.interpolate(tx, size=(3, 11), mode="nearest").numpy())
    close(run("interpolate", x, size=[3, 4], mode="area"),
          tf.interpolate(tx, size=(3, 4), mode="area").numpy())
    x3 = rand(1, 2, 3, 4, 5)
    close(run("interpolate", x3, size=[5, 3, 7], mode="trilinear"),
          tf.interpolate(T(torch, x3), size=(5, 3, 7), mode="trilinear").numpy())


def test_torch_losses_and_misc(torch):
    tf = torch.nn.functional
    x = rand(6, 5) * 3
    lab = np.array([0, 4, 2, -100, 1, 1])
    w = rand(5, lo=0.1, hi=2)
    close(run("cross_entropy_with_softmax", x, lab, w)[0],
          tf.cross_entropy(T(torch, x), T(torch, lab), T(torch, w)).numpy())
    close(run("nll_loss", log_softmax(x), lab, w),
          tf.nll_loss(T(torch, log_softmax(x)), T(torch, lab), T(torch, w)).numpy())
    logits = rand(7, 3, 5) * 2
    labels = np.array([[1, 2, 2], [3, 4, 0], [1, 0, 0]])
    tl, ll = np.array([7, 6, 3]), np.array([3, 2, 1])
    loss, grad = run("ctc_loss", logits, labels.astype(np.int32), tl, ll)
    tlog = T(torch, logits).requires_grad_()
    tloss = tf.ctc_loss(tf.log_softmax(tlog, 2), T(torch, labels), T(torch, tl), T(torch, ll),
                        reduction="none")
    close(loss, tloss.detach().numpy(), 1e-8)
    tloss.sum().backward()
    close(grad, tlog.grad.numpy(), 1e-8)
    q, k, v = rand(2, 5, 4, 3), rand(2, 6, 4, 3), rand(2, 6, 4, 2)
    perm = (0, 2, 1, 3)
    want = tf.scaled_dot_product_attention(*(T(torch, a.transpose(perm)) for a in (q, k, v)),
                                           is_causal=True).numpy().transpose(perm)
    close(run("scaled_dot_product_attention", q, k, v, is_causal=True), want)
    a, b = rand(4, 3), rand(4, 3)
    close(run("cosine_similarity", a, b), tf.cosine_similarity(T(torch, a), T(torch, b)).numpy())
    close(run("pairwise_distance", a, b, p=3.0),
          tf.pairwise_distance(T(torch, a), T(torch, b), p=3.0).numpy())
    y = RNG.random((4, 3))
    close(run("binary_cross_entropy_with_logits", a, y, None, None),
          tf.binary_cross_entropy_with_logits(T(torch, a), T(torch, y)).numpy())
    close(run("kl_div", log_softmax(a), y, reduction="batchmean"),
          tf.kl_div(T(torch, log_softmax(a)), T(torch, y), reduction="batchmean").numpy())
    img = rand(2, 3, 5, 6)
    close(run("unfold", img, kernel_sizes=[2, 3], strides=[1, 2], paddings=[1, 0],
              dilations=[2, 1]),
          tf.unfold(T(torch, img), (2, 3), dilation=(2, 1), padding=(1, 0),
                    stride=(1, 2)).numpy())
