"""Gradients of the quantization ops: the straight-through estimator and LSQ's scale
gradient of fake_quantize_dequantize against their closed forms (and against finite
differences where the function is differentiable: in the clipped region), and
weight_only_linear's gradients against finite differences."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core.ops import call

F64, I32 = np.float64, np.int32


def _fq(x, s, z, **kw):
    return call("fake_quantize_dequantize", x, s, z, **kw)


def _grads(x, s, z, g, **kw):
    xt = fw.to_tensor(x)
    st_ = fw.to_tensor(s)
    xt.stop_gradient = False
    st_.stop_gradient = False
    out = _fq(xt, st_, fw.to_tensor(z), **kw)
    gx, gs = fw.grad([out], [xt, st_], [fw.to_tensor(g)])
    return gx.numpy(), gs.numpy()


def _closed_form(x, s, z, g, axis, qmin, qmax):
    """STE for x, LSQ for s, elementwise then summed per channel (NumPy)."""
    nd = x.ndim
    shape = [1] * nd
    if s.size > 1:
        shape[axis % nd] = -1
    sb, zb = s.astype(F64).reshape(shape), z.astype(F64).reshape(shape)
    v = x / sb
    r = np.rint(v)
    code = r + zb
    inside = (code >= qmin) & (code <= qmax)
    gx = g * inside
    d = np.where(code < qmin, qmin - zb, np.where(code > qmax, qmax - zb, r - v))
    t = g * d
    if s.size > 1:
        other = tuple(i for i in range(nd) if i != axis % nd)
        gs = t.sum(axis=other)
    else:
        gs = np.full(s.shape, t.sum())
    return gx, gs


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), per_channel=st.booleans(),
       rng_=st.sampled_from([(-128, 127), (0, 255), (-8, 7)]), axis=st.sampled_from([0, 1, -1]))
def test_ste_and_lsq_match_the_closed_form(seed, per_channel, rng_, axis):
    rng = np.random.default_rng(seed)
    qmin, qmax = rng_
    x = rng.normal(0, 4, (3, 4)).astype(F64)
    c = x.shape[axis] if per_channel else 1
    s = rng.uniform(0.02, 0.2, c).astype(np.float32)
    z = rng.integers(qmin, qmin + 3, c).astype(I32) if qmin >= 0 else \
        rng.integers(-2, 3, c).astype(I32)
    g = rng.normal(size=x.shape)
    gx, gs = _grads(x, s, z, g, axis=axis, qmin=qmin, qmax=qmax)
    wx, ws = _closed_form(x, s, z, g, axis, qmin, qmax)
    np.testing.assert_array_equal(gx, wx)
    np.testing.assert_allclose(gs, ws, rtol=1e-5, atol=1e-6)
    # (some elements of every draw are clipped: x spreads far past the int4 range)


def test_ste_passes_inside_and_blocks_outside_the_range():
    x = np.array([-20.0, -12.8, -1.0, 0.0, 0.3, 12.7, 12.8, 50.0])
    s, z = np.array([0.1], np.float32), np.array([0], I32)
    gx, _ = _grads(x, s, z, np.ones_like(x))
    # codes: -200 (clipped), -128 (edge: inside), -10, 0, 3, 127 (inside), 128, 500 (clipped)
    np.testing.assert_array_equal(gx, [0, 1, 1, 1, 1, 1, 0, 0])


def test_clipped_region_matches_finite_differences():
    """Where every code is clipped the function is s * (qmax - z) (or qmin): smooth in
    x (derivative 0, which the STE gives) and in s (derivative qmax - z, LSQ's value)."""
    x = np.array([[30.0, 45.0], [-33.0, -60.0]])
    s, z = np.array([0.1, 0.2], np.float32), np.array([2, -1], I32)
    g = np.array([[1.0, 2.0], [3.0, -1.0]])
    gx, gs = _grads(x, s, z, g, axis=1)
    eps = 1e-3

    def f(xx, ss):
        out = _fq(fw.to_tensor(xx), fw.to_tensor(ss.astype(np.float32)), fw.to_tensor(z), axis=1)
        return float((out.numpy() * g).sum())

    fd_x = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        fd_x[i] = (f(x + d, s) - f(x - d, s)) / (2 * eps)
    np.testing.assert_allclose(gx, fd_x, atol=1e-9)
    fd_s = np.zeros(2)
    for j in range(2):
        d = np.zeros(2)
        d[j] = eps
        fd_s[j] = (f(x, s + d) - f(x, s - d)) / (2 * eps)
    np.testing.assert_allclose(gs, fd_s, rtol=2e-3)


def test_lsq_scale_gradient_inside_the_range():
    # x/s = 2.3 -> round 2: d/ds [s * round(x/s)] with round' := 1 is round(x/s) - x/s
    x, s, z = np.array([0.23]), np.array([0.1], np.float32), np.array([0], I32)
    _, gs = _grads(x, s, z, np.ones(1))
    np.testing.assert_allclose(gs, [2 - 0.23 / np.float64(np.float32(0.1))], rtol=1e-6)


def test_weight_only_linear_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    w = rng.normal(size=(4, 3)).astype(np.float32)
    q, s = call("weight_quantize", fw.to_tensor(w), algo="weight_only_int4", group_size=2)
    x0, b0, s0 = rng.normal(size=(2, 4)), rng.normal(size=3), s.numpy().astype(np.float64)
    g = rng.normal(size=(2, 3))

    def f(xx, bb, ss):
        return call("weight_only_linear", fw.to_tensor(xx), q, fw.to_tensor(bb),
                    fw.to_tensor(ss.astype(np.float32)), weight_dtype="int4", group_size=2)

    xt, bt, stt = fw.to_tensor(x0), fw.to_tensor(b0), fw.to_tensor(s.numpy())
    for t in (xt, bt, stt):
        t.stop_gradient = False
    out = call("weight_only_linear", xt, q, bt, stt, weight_dtype="int4", group_size=2)
    gx, gb, gsc = (a.numpy() for a in fw.grad([out], [xt, bt, stt], [fw.to_tensor(g)]))
    deq = call("weight_dequantize", q, s, algo="weight_only_int4", out_dtype="float64",
               group_size=2).numpy()
    np.testing.assert_allclose(gx, g @ deq.T, rtol=1e-6)
    np.testing.assert_allclose(gb, g.sum(0), rtol=1e-12)
    eps = 1e-3
    fd = np.zeros_like(s0)
    for i in np.ndindex(*s0.shape):
        d = np.zeros_like(s0)
        d[i] = eps
        fd[i] = ((f(x0, b0, s0 + d).numpy() - f(x0, b0, s0 - d).numpy()) * g).sum() / (2 * eps)
    np.testing.assert_allclose(gsc, fd, rtol=1e-3, atol=1e-4)
