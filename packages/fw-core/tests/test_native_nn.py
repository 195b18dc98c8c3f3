"""The native nn kernels (fw.core.kernels.cpu: conv, pool, norm, activation, fused and
nn_grad, over fw.core._C: oneDNN convolution, normalization and softmax, own C++
pooling) against the ops' NumPy references.

Each kernel is built with a reference that fails when called, so a test of the native
path cannot silently pass through the fallback; the fallback tests check the opposite.
Shapes are larger than the op records' (which keep the generic tests fast) so the
blocked-layout, multi-threaded and vectorised code paths run too.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core import _native
from fw.core.kernels.cpu._common import FACTORIES
from fw.core.ops import OPS

pytestmark = pytest.mark.skipif(not _native.available, reason="FW_DISABLE_NATIVE=1")


F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
TOL = {F32: (2e-4, 2e-4), BF16: (5e-2, 5e-2)}


def _no_fallback(*args, **kwargs):
    raise AssertionError("the native kernel fell back to the NumPy reference")


def native(name):
    """The cpu kernel of op `name`, unable to fall back."""
    return FACTORIES[name](_no_fallback)


def ref(name, *args, **attrs):
    return OPS[name].reference(*args, **attrs)


def close(got, want, dtype, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    rtol, atol = TOL[np.dtype(dtype)]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol * max(1.0, float(np.nanmax(np.abs(want), initial=0))),
                               err_msg=what)


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


dtypes = st.sampled_from([F32, BF16])


# ---------------------------------------------------------------- convolution
@st.composite
def conv_cases(draw, transpose=False):
    nd = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin = groups * draw(st.integers(1, 4))
    cout = groups * draw(st.integers(1, 4))
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    stride = [draw(st.integers(1, 3)) for _ in range(nd)]
    dil = [draw(st.integers(1, 2)) for _ in range(nd)]
    pads = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nd)]
    side = {1: 20, 2: 10, 3: 6}[nd]
    sizes = []
    for k, d, (b, e), s in zip(ks, dil, pads, stride):
        lo = max(1, d * (k - 1) + 1 - b - e)
        if transpose:  # the output must not be cropped to nothing
            lo = max(lo, -(-(b + e - d * (k - 1)) // s) + 1)
        sizes.append(draw(st.integers(lo, max(lo, side))))
    n = draw(st.integers(1, 4))
    cl = draw(st.booleans())
    xs = (n, *sizes, cin) if cl else (n, cin, *sizes)
    ws = (cin, cout // groups, *ks) if transpose else (cout, cin // groups, *ks)
    attrs = {"stride": tuple(stride), "padding": tuple(v for p in pads for v in p),
             "dilation": tuple(dil), "groups": groups, "channel_last": cl}
    return xs, ws, cout, attrs


@settings(max_examples=25, deadline=None)
@given(case=conv_cases(), dtype=dtypes, bias=st.booleans(), seed=st.integers(0, 2**16))
def test_conv_forward(case, dtype, bias, seed):
    xs, ws, cout, attrs = case
    rng = np.random.default_rng(seed)
    x, w = rand(rng, xs, dtype), rand(rng, ws, dtype)
    b = rand(rng, (cout,), dtype) if bias else None
    close(native("conv")(x, w, b, **attrs), ref("conv", x, w, b, **attrs), dtype, f"conv {attrs}")


@settings(max_examples=25, deadline=None)
@given(case=conv_cases(transpose=True), dtype=dtypes, bias=st.booleans(),
       seed=st.integers(0, 2**16), extra=st.integers(0, 2))
def test_conv_transpose_forward(case, dtype, bias, seed, extra):
    xs, ws, cout, attrs = case
    rng = np.random.default_rng(seed)
    x, w = rand(rng, xs, dtype), rand(rng, ws, dtype)
    b = rand(rng, (cout,), dtype) if bias else None
    # output_padding below max(stride, dilation), and within what a convolution with
    # non-negative padding expresses (the native kernel's coverage)
    op = tuple(min(extra, max(s, d) - 1, e + s - 1) for s, d, e in
               zip(attrs["stride"], attrs["dilation"], attrs["padding"][1::2]))
    attrs = dict(attrs, output_padding=op, output_size=None)
    close(native("conv_transpose")(x, w, b, **attrs), ref("conv_transpose", x, w, b, **attrs),
          dtype, f"conv_transpose {attrs}")


@settings(max_examples=25, deadline=None)
@given(case=conv_cases(), dtype=dtypes, seed=st.integers(0, 2**16))
def test_conv_grad_weight(case, dtype, seed):
    xs, ws, cout, attrs = case
    rng = np.random.default_rng(seed)
    x = rand(rng, xs, dtype)
    ys = ref("conv", x, rand(rng, ws, dtype), **attrs).shape
    g = rand(rng, ys, dtype)
    got = native("conv_grad_weight")(x, g, kernel_size=ws[2:], **attrs)
    want = ref("conv_grad_weight", x, g, kernel_size=ws[2:], **attrs)
    for k, (a, b) in enumerate(zip(got, want)):
        close(a, b, dtype, f"conv_grad_weight output {k} {attrs}")


@settings(max_examples=20, deadline=None)
@given(case=conv_cases(), dtype=dtypes, seed=st.integers(0, 2**16),
       act=st.sampled_from(["none", "relu", "gelu_tanh", "gelu_erf", "sigmoid", "tanh",
                            "silu"]),
       bias=st.booleans(), residual=st.booleans())
def test_fused_conv(case, dtype, seed, act, bias, residual):
    xs, ws, cout, attrs = case
    rng = np.random.default_rng(seed)
    x, w = rand(rng, xs, dtype), rand(rng, ws, dtype)
    b = rand(rng, (cout,), dtype) if bias else None
    r = rand(rng, ref("conv", x, w, **attrs).shape, dtype) if residual else None
    attrs = dict(attrs, activation=act)
    close(native("fused_conv")(x, w, b, r, **attrs), ref("fused_conv", x, w, b, r, **attrs),
          dtype, f"fused_conv {attrs}")


def test_fused_conv_relu_of_minus_infinity_is_zero():
    # oneDNN's relu turns -inf into NaN; the kernel hands that case to NumPy
    x = np.ones((1, 1, 4, 4), F32)
    x[0, 0, 1, 1] = -np.inf
    w = np.ones((1, 1, 1, 1), F32)
    out = OPS["fused_conv"].kernels["cpu"](x, w, None, None, activation="relu")
    np.testing.assert_array_equal(out, ref("fused_conv", x, w, None, None, activation="relu"))
    assert out[0, 0, 1, 1] == 0


@pytest.mark.parametrize("policy", [1, 2])
def test_conv_layout_policies_agree(policy):
    """Every activation layout a pass may run in (the caller's, oneDNN's blocked one)
    gives the same numbers."""
    rng = np.random.default_rng(0)
    x, w = rand(rng, (3, 5, 9, 8), F32), rand(rng, (6, 5, 3, 3), F32)
    g = rand(rng, (3, 6, 7, 6), F32)
    want = (ref("conv", x, w), ref("conv_grad_weight", x, g, kernel_size=(3, 3)),
            ref("conv_transpose", g, w))
    old = _native.C.conv_layout_policy()
    _native.C.conv_set_layout_policy(policy)
    try:
        got = (native("conv")(x, w), native("conv_grad_weight")(x, g, kernel_size=(3, 3)),
               native("conv_transpose")(g, w))
    finally:
        _native.C.conv_set_layout_policy(old)
    close(got[0], want[0], F32)
    close(got[1][0], want[1][0], F32)
    close(got[2], want[2], F32)


def test_conv_impl_names_the_implementation():
    x, w = np.ones((2, 8, 10, 10), F32), np.ones((16, 8, 3, 3), F32)
    y = np.empty((2, 16, 8, 8), F32)
    impls = [_native.C.conv_impl(x, w, y, [1, 1], [1, 1], [0, 0], [0, 0], 1, False, i)
             for i in range(3)]
    assert all(isinstance(s, str) and s for s in impls)
    assert not any(s.startswith("ref") for s in impls), impls


def test_conv_binding_errors_name_op_and_shapes():
    C = _native.C
    x, w = np.ones((2, 3, 8, 8), F32), np.ones((4, 3, 3, 3), F32)
    with pytest.raises(ValueError, match=r"conv: the output size .* kernel \[3, 3\]"):
        C.conv_forward(x, w, np.empty((2, 4, 5, 5), F32), None, None, "none", [1, 1], [1, 1],
                       [0, 0], [0, 0], 1, False)
    with pytest.raises(ValueError, match=r"channels of x float32\[2, 3, 8, 8\]"):
        C.conv_forward(x, np.ones((4, 2, 3, 3), F32), np.empty((2, 4, 6, 6), F32), None, None,
                       "none", [1, 1], [1, 1], [0, 0], [0, 0], 1, False)
    with pytest.raises(TypeError, match=r"conv: x float64\[2, 3, 8, 8\] must be float32"):
        C.conv_forward(x.astype(np.float64), w, np.empty((2, 4, 6, 6), F32), None, None,
                       "none", [1, 1], [1, 1], [0, 0], [0, 0], 1, False)


# ---------------------------------------------------------------- pooling
@st.composite
def pool_cases(draw):
    nd = draw(st.integers(1, 3))
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    stride = [draw(st.integers(1, 3)) for _ in range(nd)]
    pads = [(draw(st.integers(0, k // 2)), draw(st.integers(0, k // 2))) for k in ks]
    side = {1: 30, 2: 12, 3: 6}[nd]
    sizes = [draw(st.integers(max(1, k - b - e), side)) for k, (b, e) in zip(ks, pads)]
    n, c = draw(st.integers(1, 3)), draw(st.integers(1, 9))
    cl = draw(st.booleans())
    xs = (n, *sizes, c) if cl else (n, c, *sizes)
    attrs = {"kernel_size": tuple(ks), "stride": tuple(stride),
             "padding": tuple(v for p in pads for v in p), "ceil_mode": draw(st.booleans()),
             "channel_last": cl}
    return xs, attrs


def _pool_input(rng, xs, dtype, special):
    x = rand(rng, xs, dtype, -3, 3)
    if special and x.size > 2:
        flat = x.reshape(-1)
        flat[rng.integers(0, x.size, 2)] = [np.nan, np.inf]
        flat[rng.integers(0, x.size)] = -np.inf
    return x


@settings(max_examples=30, deadline=None)
@given(case=pool_cases(), dtype=dtypes, seed=st.integers(0, 2**16), special=st.booleans())
def test_max_pool_and_mask(case, dtype, seed, special):
    xs, attrs = case
    x = _pool_input(np.random.default_rng(seed), xs, dtype, special)
    out, mask = native("max_pool_with_index")(x, **attrs)
    want_out, want_mask = ref("max_pool_with_index", x, **attrs)
    assert out.dtype == want_out.dtype
    # a max is exact (compared as float32: NumPy's NaN == NaN rule does not know bfloat16)
    np.testing.assert_array_equal(out.astype(F32), want_out.astype(F32))
    np.testing.assert_array_equal(mask, want_mask)
    np.testing.assert_array_equal(native("max_pool")(x, **attrs).astype(F32),
                                  ref("max_pool", x, **attrs).astype(F32))


@pytest.mark.parametrize("cl", [False, True])
def test_max_pool_2x2_fast_path_ties_and_nan(cl):
    """The vectorised 2x2/stride-2 kernel: ties pick the first in row-major order, a NaN
    wins once, odd sizes leave the last row/column out."""
    x = np.zeros((2, 3, 9, 7), F32)
    x[0, 0, 0, 1] = np.nan
    x[0, 1, 2:4, 2:4] = 5.0  # a 4-way tie
    x[1, 2, 3, 3] = np.nan
    x[1, 2, 2, 3] = 7.0
    x[1, 0] = np.random.default_rng(0).uniform(-1, 1, (9, 7))
    if cl:
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    attrs = {"kernel_size": (2, 2), "stride": (2, 2), "padding": 0, "ceil_mode": False,
             "channel_last": cl}
    for got, want in zip(native("max_pool_with_index")(x, **attrs),
                         ref("max_pool_with_index", x, **attrs)):
        np.testing.assert_array_equal(got, want)
    # without indices (inference): the channel-last fast path
    np.testing.assert_array_equal(native("max_pool")(x, **attrs), ref("max_pool", x, **attrs))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3), c=st.sampled_from([1, 3, 4, 6, 16, 17]), h=st.integers(2, 9),
       w=st.integers(2, 9), seed=st.integers(0, 2**16))
def test_max_pool_2x2_channel_last_bits(n, c, h, w, seed):
    """Channel-last 2x2/stride-2 pooling without indices (LeNet after layout_nhwc): the
    reference's values, NaNs and infinities included, and the value max_pool_with_index
    picks bit for bit (of tied zeros the first; the plain reference's np.max may return
    the other sign, as the channel-first kernels do not either)."""
    rng = np.random.default_rng(seed)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, 2.5, -np.inf], F32), (n, h, w, c))
    attrs = {"kernel_size": (2, 2), "stride": (2, 2), "padding": 0, "ceil_mode": False,
             "channel_last": True}
    got = native("max_pool")(x, **attrs)
    np.testing.assert_array_equal(got, ref("max_pool", x, **attrs))
    first = ref("max_pool_with_index", x, **attrs)[0]
    np.testing.assert_array_equal(got.view(np.uint32), first.view(np.uint32))


@settings(max_examples=30, deadline=None)
@given(case=pool_cases(), dtype=dtypes, seed=st.integers(0, 2**16),
       exclusive=st.booleans(), divisor=st.sampled_from([None, None, 2.0, 3.5]))
def test_avg_pool(case, dtype, seed, exclusive, divisor):
    xs, attrs = case
    x = rand(np.random.default_rng(seed), xs, dtype)
    attrs = dict(attrs, exclusive=exclusive, divisor_override=divisor)
    close(native("avg_pool")(x, **attrs), ref("avg_pool", x, **attrs), dtype, f"{attrs}")


@settings(max_examples=30, deadline=None)
@given(nd=st.integers(1, 3), n=st.integers(1, 2), c=st.integers(1, 9), data=st.data(),
       dtype=dtypes, seed=st.integers(0, 2**16), cl=st.booleans())
def test_adaptive_avg_pool_with_dividing_sizes(nd, n, c, data, dtype, seed, cl):
    """Output sizes that divide the input sizes: an average pool's windows, native."""
    outs = data.draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd))
    ks = data.draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd))
    sp = [o * k for o, k in zip(outs, ks)]
    xs = (n, *sp, c) if cl else (n, c, *sp)
    x = rand(np.random.default_rng(seed), xs, dtype)
    attrs = {"output_size": tuple(outs), "channel_last": cl}
    close(native("adaptive_avg_pool")(x, **attrs), ref("adaptive_avg_pool", x, **attrs),
          dtype, f"{xs} {attrs}")


def test_adaptive_avg_pool_uneven_bins_use_the_reference():
    x = np.random.default_rng(0).standard_normal((1, 2, 8, 6)).astype(F32)
    seen = []
    k = FACTORIES["adaptive_avg_pool"](lambda *a, **kw: seen.append(kw) or ref(
        "adaptive_avg_pool", *a, **kw))
    np.testing.assert_array_equal(k(x, output_size=(3, 3)),
                                  ref("adaptive_avg_pool", x, output_size=(3, 3)))
    assert seen == [{"output_size": (3, 3), "channel_last": False}]


@settings(max_examples=30, deadline=None)
@given(case=pool_cases(), dtype=dtypes, seed=st.integers(0, 2**16),
       exclusive=st.booleans(), divisor=st.sampled_from([None, 2.0]))
def test_pool_grads(case, dtype, seed, exclusive, divisor):
    xs, attrs = case
    rng = np.random.default_rng(seed)
    x = rand(rng, xs, dtype)
    out, mask = ref("max_pool_with_index", x, **attrs)
    g = rand(rng, out.shape, dtype)
    sp = list(xs[1:-1] if attrs["channel_last"] else xs[2:])
    cl = attrs["channel_last"]
    close(native("max_pool_grad")(g, mask, input_size=sp, channel_last=cl),
          ref("max_pool_grad", g, mask, input_size=sp, channel_last=cl), dtype, "max_pool_grad")
    a = dict(attrs, exclusive=exclusive, divisor_override=divisor, input_size=sp)
    close(native("avg_pool_grad")(g, **a), ref("avg_pool_grad", g, **a), dtype, f"{a}")


def test_max_pool_grad_rejects_out_of_range_mask():
    g = np.ones((1, 1, 2, 2), F32)
    mask = np.array([[[[0, 1], [2, 9]]]], np.int32)
    with pytest.raises(ValueError, match="mask value 9 is outside the input plane of 9"):
        _native.C.max_pool_backward(g, mask, np.empty((1, 1, 3, 3), F32), False)
    # the op kernel hands it to the reference, which names the valid range
    with pytest.raises(Exception, match=r"mask values must lie in \[0, 9\)"):
        OPS["max_pool_grad"].kernels["cpu"](g, mask, input_size=(3, 3))


# ---------------------------------------------------------------- normalization
@st.composite
def nc_shapes(draw):
    nd = draw(st.integers(2, 5))
    shape = [draw(st.integers(1, 6)) for _ in range(nd)]
    cl = nd > 2 and draw(st.booleans())
    return tuple(shape), cl


@settings(max_examples=30, deadline=None)
@given(case=nc_shapes(), dtype=dtypes, seed=st.integers(0, 2**16), training=st.booleans(),
       affine=st.booleans(), momentum=st.floats(0, 1), eps=st.sampled_from([1e-5, 1e-3]))
def test_batch_norm_and_grad(case, dtype, seed, training, affine, momentum, eps):
    shape, cl = case
    rng = np.random.default_rng(seed)
    c = shape[-1] if cl else shape[1]
    x = rand(rng, shape, dtype, -2, 2)
    rm, rv = rand(rng, (c,), F32), rand(rng, (c,), F32, 0.5, 2)
    w = rand(rng, (c,), F32) if affine else None
    b = rand(rng, (c,), F32) if affine else None
    attrs = {"training": training, "momentum": momentum, "epsilon": eps, "channel_last": cl}
    got = native("batch_norm")(x, rm, rv, w, b, **attrs)
    want = ref("batch_norm", x, rm, rv, w, b, **attrs)
    for k, (a, r) in enumerate(zip(got, want)):
        close(a, r, dtype if k == 0 else F32, f"batch_norm output {k}")
    g = rand(rng, shape, dtype)
    gattrs = {"epsilon": eps, "channel_last": cl, "batch_stats": training}
    got = native("batch_norm_grad")(x, w, want[3], want[4], g, **gattrs)
    wantg = ref("batch_norm_grad", x, w, want[3], want[4], g, **gattrs)
    for k, (a, r) in enumerate(zip(got, wantg)):
        close(a, r, dtype if k == 0 else F32, f"batch_norm_grad output {k}")


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 7), min_size=1, max_size=4), dtype=dtypes,
       seed=st.integers(0, 2**16), data=st.data())
def test_layer_norm_and_grad(shape, dtype, seed, data):
    shape = tuple(shape)
    nd = len(shape)
    b = data.draw(st.integers(0, nd - 1))
    rng = np.random.default_rng(seed)
    x = rand(rng, shape, dtype, -2, 2)
    pshape = shape[b:]
    w = rand(rng, pshape, dtype) if data.draw(st.booleans()) else None
    bias = rand(rng, pshape, dtype) if data.draw(st.booleans()) else None
    eps = data.draw(st.sampled_from([1e-5, 1e-2]))
    got = native("layer_norm")(x, w, bias, epsilon=eps, begin_norm_axis=b)
    want = ref("layer_norm", x, w, bias, epsilon=eps, begin_norm_axis=b)
    for k, (a, r) in enumerate(zip(got, want)):
        close(a, r, dtype if k == 0 else F32, f"layer_norm output {k}")
    g = rand(rng, shape, dtype)
    got = native("layer_norm_grad")(x, w, want[1], want[2], g, epsilon=eps, begin_norm_axis=b)
    wantg = ref("layer_norm_grad", x, w, want[1], want[2], g, epsilon=eps, begin_norm_axis=b)
    for k, (a, r) in enumerate(zip(got, wantg)):
        close(a, r, dtype, f"layer_norm_grad output {k}")


# ---------------------------------------------------------------- softmax
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=4), dtype=dtypes,
       seed=st.integers(0, 2**16), data=st.data(), log=st.booleans(), special=st.booleans())
def test_softmax_and_grad(shape, dtype, seed, data, log, special):
    shape = tuple(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x = rand(rng, shape, dtype, -10, 10)
    if special:  # rows with NaN / +inf / all -inf take the reference's path exactly
        flat = x.reshape(-1)
        flat[rng.integers(0, x.size, 3)] = [np.nan, np.inf, -np.inf]
    name = "log_softmax" if log else "softmax"
    y = native(name)(x, axis=axis)
    want = ref(name, x, axis=axis)
    assert y.dtype == want.dtype
    y32, w32 = y.astype(F32), want.astype(F32)
    np.testing.assert_array_equal(np.isnan(y32), np.isnan(w32))
    close(np.nan_to_num(y32), np.nan_to_num(w32), F32 if dtype == F32 else BF16, name)
    g = rand(rng, shape, dtype)
    yf = np.nan_to_num(w32, nan=0.5, posinf=0.5, neginf=-5).astype(dtype)
    close(native(name + "_grad")(yf, g, axis=axis), ref(name + "_grad", yf, g, axis=axis),
          dtype, name + "_grad")


def test_softmax_rows_of_infinities_match_numpy():
    x = np.array([[1.0, np.inf, 2.0], [-np.inf, -np.inf, -np.inf], [np.nan, 0, 1],
                  [0, 1, 2]], F32)
    for name in ("softmax", "log_softmax"):
        got, want = native(name)(x, axis=-1), ref(name, x, axis=-1)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=2e-5)


# ---------------------------------------------------------------- fallbacks
def _sentinel():
    calls = []

    def reference(*args, **kwargs):
        calls.append(args)
        return "reference"

    return reference, calls


@pytest.mark.parametrize("name,args,attrs", [
    ("conv", [np.ones((1, 2, 4, 4)), np.ones((3, 2, 3, 3)), None], {}),  # float64
    ("conv", [np.ones((1, 2, 4, 4), np.float16), np.ones((3, 2, 3, 3), np.float16), None], {}),
    ("conv", [np.ones((0, 2, 4, 4), F32), np.ones((3, 2, 3, 3), F32), None], {}),  # empty
    ("conv", [np.ones((1, 2, 4, 4), F32), np.ones((3, 2, 3, 3), BF16), None], {}),  # mixed
    ("conv", [np.ones((1, 2, 4, 4, 4, 4), F32), np.ones((3, 2, 1, 1, 1, 1), F32), None], {}),
    ("conv_transpose", [np.ones((1, 1, 3), F32), np.ones((1, 1, 3), F32), None],
     {"stride": (1,), "dilation": (3,), "padding": (0, 0), "output_padding": (2,)}),
    ("max_pool", [np.ones((1, 2, 4, 4))], {"kernel_size": (2, 2)}),
    ("max_pool", [np.ones((1, 0, 4, 4), F32)], {"kernel_size": (2, 2)}),
    ("avg_pool", [np.ones((1, 2, 4, 4), np.float16)], {"kernel_size": (2, 2)}),
    ("max_pool_grad", [np.ones((1, 1, 2, 2), F32), np.full((1, 1, 2, 2), 2**40)],
     {"input_size": (4, 4)}),  # int64 mask beyond int32
    ("batch_norm", [np.ones((2, 3), F32), np.zeros(3), np.ones(3), None, None], {}),  # f64 stats
    ("batch_norm", [np.ones((0, 3), F32), np.zeros(3, F32), np.ones(3, F32), None, None], {}),
    ("layer_norm", [np.ones((2, 3)), None, None], {}),
    ("layer_norm", [np.ones((2, 3), F32), np.ones(3, np.float64), None], {}),
    ("softmax", [np.ones((2, 3))], {}),
    ("softmax", [np.ones((2, 0), F32)], {}),
    ("softmax_grad", [np.ones((2, 3), F32), np.ones((2, 3))], {}),
])
def test_uncovered_cases_fall_back_to_the_reference(name, args, attrs):
    reference, calls = _sentinel()
    kern = FACTORIES[name](reference)
    full = dict(OPS[name].attrs)
    full.update(attrs)
    if OPS[name].canon:
        full = OPS[name].canon(full)
    assert kern(*args, **full) == "reference"
    assert len(calls) == 1


def test_native_results_are_reused_primitives():
    C = _native.C
    C.nn_clear_cache()
    x, w = np.ones((2, 3, 6, 6), F32), np.ones((4, 3, 3, 3), F32)
    for _ in range(3):
        native("conv")(x, w)
    info = C.nn_cache_info()["conv_fwd"]
    assert info["misses"] == 1 and info["hits"] == 2 and info["size"] == 1
    C.nn_set_cache_capacity(0)
    try:
        np.testing.assert_allclose(native("conv")(x, w), ref("conv", x, w), rtol=1e-6)
        assert C.nn_cache_info()["conv_fwd"]["size"] == 0
    finally:
        C.nn_set_cache_capacity(128)


def test_thread_counts_agree():
    rng = np.random.default_rng(1)
    x, w = rand(rng, (8, 16, 20, 20), F32), rand(rng, (16, 16, 3, 3), F32)
    old = _native.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            _native.set_num_threads(n)
            results.append((native("conv")(x, w), native("max_pool")(x, kernel_size=(2, 2)),
                            native("softmax")(x, axis=1)))
    finally:
        _native.set_num_threads(old)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- against PyTorch (optional)
def test_backward_ops_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, w = rand(rng, (4, 6, 11, 10), F32), rand(rng, (8, 3, 3, 2), F32)
    attrs = {"stride": (2, 1), "padding": (1, 0, 2, 1), "dilation": (1, 2), "groups": 2}
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    yt = torch.nn.functional.conv2d(torch.nn.functional.pad(xt, (2, 1, 1, 0)), wt,
                                    stride=(2, 1), dilation=(1, 2), groups=2)
    g = rand(rng, tuple(yt.shape), F32)
    yt.backward(torch.tensor(g))
    close(native("conv")(x, w, **attrs), yt.detach().numpy(), F32)
    gw, gb = native("conv_grad_weight")(x, g, kernel_size=(3, 2), **attrs)
    close(gw, wt.grad.numpy(), F32)
    close(gb, g.sum(axis=(0, 2, 3)), F32)
    # the input gradient is the transposed convolution of the output gradient
    gx = native("conv_transpose")(g, w, output_size=(11, 10), **attrs)
    close(gx, xt.grad.numpy(), F32)

    xt = torch.tensor(x, requires_grad=True)
    lt = torch.nn.functional.layer_norm(xt, (11, 10), eps=1e-5)
    gl = rand(rng, x.shape, F32)
    lt.backward(torch.tensor(gl))
    out, mean, inv = native("layer_norm")(x, None, None, epsilon=1e-5, begin_norm_axis=2)
    close(out, lt.detach().numpy(), F32)
    close(native("layer_norm_grad")(x, None, mean, inv, gl, epsilon=1e-5,
                                    begin_norm_axis=2)[0], xt.grad.numpy(), F32)

    xt = torch.tensor(x, requires_grad=True)
    bt = torch.nn.functional.batch_norm(xt, None, None, training=True, eps=1e-5)
    bt.backward(torch.tensor(gl))
    outs = native("batch_norm")(x, np.zeros(6, F32), np.ones(6, F32), None, None,
                                training=True, epsilon=1e-5)
    close(outs[0], bt.detach().numpy(), F32)
    close(native("batch_norm_grad")(x, None, outs[3], outs[4], gl, epsilon=1e-5)[0],
          xt.grad.numpy(), F32)

    xt = torch.tensor(x, requires_grad=True)
    pt, it = torch.nn.functional.max_pool2d(xt, 3, 2, padding=1, return_indices=True)
    gp = rand(rng, tuple(pt.shape), F32)
    pt.backward(torch.tensor(gp))
    out, mask = native("max_pool_with_index")(x, kernel_size=(3, 3), stride=(2, 2), padding=1)
    np.testing.assert_array_equal(mask, it.numpy())
    close(native("max_pool_grad")(gp, mask, input_size=(11, 10)), xt.grad.numpy(), F32)


@settings(max_examples=40, deadline=None)
@given(nd=st.integers(3, 5), c=st.integers(1, 20), data=st.data(), seed=st.integers(0, 2**16))
def test_contiguous_copy_of_channel_last_views(nd, c, data, seed):
    """The operand copy the native kernels make (`_in`): a channel-last view of a
    channel-first array is copied a channel at a time; every strided array gives what
    np.ascontiguousarray gives, dtype and bits."""
    from fw.core.kernels.cpu._common import _contiguous

    rng = np.random.default_rng(seed)
    shape = [data.draw(st.integers(1, 5)) for _ in range(nd)]
    shape[1] = c
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int32]))
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    perm = data.draw(st.sampled_from([[0, *range(2, nd), 1],
                                      list(data.draw(st.permutations(range(nd))))]))
    v = x.transpose(perm)
    got = _contiguous(v)
    assert got.flags.c_contiguous and got.dtype == v.dtype and got.shape == v.shape
    np.testing.assert_array_equal(got, np.ascontiguousarray(v))
