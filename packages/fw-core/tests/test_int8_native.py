"""The native int8 kernels (csrc/nn_int8.cpp) against the NumPy references of
fw.core.ops.int8: arbitrary float scales (results within one quantization step for
integer outputs, float32 rounding for float outputs), per-tensor and per-channel weight
scales, zero points, every post-op, the saturation rule of CPUs without VNNI, the
implementation oneDNN picks (never its reference kernels) and weight prepacking."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core import _native
from fw.core.kernels.cpu import int8 as k8
from fw.core.kernels.cpu._common import FACTORIES
from fw.core.kernels.frozen import freeze
from fw.core.ops import OPS

pytestmark = pytest.mark.skipif(not _native.available or _native.C is None or
                                not hasattr(_native.C, "qconv_forward"),
                                reason="needs fw-core's native int8 kernels")

C = _native.C
F32 = np.float32
QCONV = OPS["quantized_conv2d"]
QMM = OPS["quantized_matmul"]


def _never(*a, **k):
    raise AssertionError("the native kernel fell back to the reference")


def _native_only(name):
    """The cpu kernel of `name` built with a reference that fails the test: what it
    returns was computed natively."""
    return FACTORIES[name](_never)


def _close(got, want, out_dtype, what=""):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if out_dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * (np.abs(want).max() + 1),
                                   err_msg=what)
    else:
        d = np.abs(got.astype(np.int32) - want.astype(np.int32))
        assert d.max(initial=0) <= 1, f"{what}: {int(d.max())} quantization steps apart"


def _case(rng, n, c, o, hw, k, groups=1, x_dtype=np.uint8, xmax=127, per_channel=True,
          zp=False):
    lo = -128 if x_dtype == np.int8 else 0
    x = rng.integers(lo, xmax + 1, size=(n, c, hw, hw)).astype(x_dtype)
    w = rng.integers(-128, 128, size=(o, c // groups, k, k)).astype(np.int8)
    xs = np.array([rng.uniform(0.005, 0.05)], F32)
    ws = rng.uniform(0.001, 0.02, size=o if per_channel else 1).astype(F32)
    xz = np.array([rng.integers(lo, lo + 20)], np.int32) if zp else None
    return x, w, xs, ws, xz


def test_isa_is_reported():
    isa = k8.cpu_isa()
    assert isa in ("sse41", "avx", "avx2", "avx2_vnni", "avx2_vnni_2", "avx512_core",
                   "avx512_core_vnni", "avx512_core_bf16", "avx512_core_fp16",
                   "avx512_core_amx", "avx512_core_amx_fp16", "other")
    assert k8.EXACT_U8S8 == (("vnni" in isa) or ("bf16" in isa) or ("fp16" in isa)
                             or ("amx" in isa))


@pytest.mark.parametrize("out_dtype", ["float32", "uint8", "int8"])
@pytest.mark.parametrize("per_channel", [True, False])
def test_conv_u8_full_weight_range_is_exact(out_dtype, per_channel):
    """u8 activations in 0..127 with weights over the whole int8 range: the products
    that would saturate int16 pairs with 8-bit activations are computed exactly."""
    rng = np.random.default_rng(1)
    x, w, xs, ws, _ = _case(rng, 2, 32, 16, 9, 3, per_channel=per_channel)
    x[:] = 127
    w[:, :, :, :] = np.where(rng.random(w.shape) < 0.5, -128, 127).astype(np.int8)
    ys = np.array([4.0], F32) if out_dtype != "float32" else None
    args = [x, w, xs, ws, None, None, None, ys, None]
    attrs = {**QCONV.attrs, "padding": 1, "out_dtype": out_dtype}
    attrs = QCONV.canon(attrs)
    got = _native_only("quantized_conv2d")(*args, **attrs)
    want = QCONV.reference(*args, **attrs)
    _close(got, want, out_dtype)


def test_conv_epilogues_match_the_reference():
    rng = np.random.default_rng(2)
    run = _native_only("quantized_conv2d")
    for act in ("none", "relu", "relu6", "sigmoid", "hardswish"):
        for res, first in ((False, False), (True, False), (True, True)):
            for out_dtype in ("float32", "uint8", "int8"):
                x, w, xs, ws, xz = _case(rng, 1, 16, 24, 8, 3, zp=act == "relu")
                bias = rng.standard_normal(24).astype(F32)
                residual = rng.standard_normal((1, 24, 8, 8)).astype(F32) if res else None
                ys = np.array([0.05], F32) if out_dtype != "float32" else None
                yz = np.array([3], np.int32) if out_dtype == "uint8" else None
                args = [x, w, xs, ws, bias, residual, xz, ys, yz]
                attrs = QCONV.canon({**QCONV.attrs, "padding": 1, "activation": act,
                                     "residual_before_act": first, "out_dtype": out_dtype})
                _close(run(*args, **attrs), QCONV.reference(*args, **attrs), out_dtype,
                       f"{act} residual={res} first={first} {out_dtype}")


def test_conv_narrowed_range_and_channel_last_and_groups():
    rng = np.random.default_rng(3)
    run = _native_only("quantized_conv2d")
    # depthwise (MobileNet), strided, channel-last, an int8 output clipped to 0..127 as
    # uint8 (what fold_qdq writes after a relu)
    x, w, xs, ws, _ = _case(rng, 2, 32, 32, 10, 3, groups=32)
    xcl = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    ys = np.array([0.02], F32)
    for xin, cl in ((x, False), (xcl, True)):
        attrs = QCONV.canon({**QCONV.attrs, "padding": 1, "stride": 2, "groups": 32,
                             "channel_last": cl, "activation": "relu", "out_dtype": "uint8",
                             "qmin": 0, "qmax": 127})
        args = [xin, w, xs, ws, None, None, None, ys, None]
        got = run(*args, **attrs)
        assert got.max() <= 127
        _close(got, QCONV.reference(*args, **attrs), "uint8", f"channel_last={cl}")


def test_u8_above_127_stays_correct():
    """Full-range u8 activations: on CPUs without VNNI the kernel must not hand them to
    the saturating path (it computes them exactly some other way)."""
    rng = np.random.default_rng(4)
    x, w, xs, ws, _ = _case(rng, 1, 16, 16, 6, 3, xmax=255)
    x[:] = 255
    w[:] = 127
    args = [x, w, xs, ws, None, None, None, None, None]
    attrs = QCONV.canon({**QCONV.attrs, "padding": 1})
    got = QCONV.kernels["cpu"](*args, **attrs)
    _close(got, QCONV.reference(*args, **attrs), "float32")


@pytest.mark.parametrize("x_dtype", [np.int8, np.uint8])
def test_s8_and_zero_point_sources(x_dtype):
    rng = np.random.default_rng(5)
    x, w, xs, ws, xz = _case(rng, 1, 24, 8, 7, 3, x_dtype=x_dtype,
                             xmax=127, zp=True)
    for zp in (None, xz):
        args = [x, w, xs, ws, None, None, zp, None, None]
        attrs = QCONV.canon({**QCONV.attrs, "padding": 1})
        _close(QCONV.kernels["cpu"](*args, **attrs), QCONV.reference(*args, **attrs),
               "float32", f"{np.dtype(x_dtype).name} zp={zp}")


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_matmul_random_scales(data):
    d = data.draw
    m, k, n = d(st.integers(1, 33)), d(st.integers(1, 70)), d(st.integers(1, 40))
    seed = d(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 128, size=(m, k)).astype(np.uint8)
    w = rng.integers(-128, 128, size=(k, n)).astype(np.int8)
    xs = np.array([rng.uniform(0.001, 0.1)], F32)
    ws = rng.uniform(0.001, 0.05, size=d(st.sampled_from([1, n]))).astype(F32)
    out_dtype = d(st.sampled_from(["float32", "uint8", "int8"]))
    ys = np.array([rng.uniform(0.01, 1.0)], F32) if out_dtype != "float32" else None
    bias = rng.standard_normal(n).astype(F32) if d(st.booleans()) else None
    residual = rng.standard_normal((m, n)).astype(F32) if d(st.booleans()) else None
    act = d(st.sampled_from(["none", "relu", "relu6", "gelu_tanh"]))
    attrs = QMM.canon({**QMM.attrs, "activation": act, "out_dtype": out_dtype,
                       "residual_before_act": d(st.booleans())})
    args = [x, w, xs, ws, bias, residual, None, ys, None]
    _close(_native_only("quantized_matmul")(*args, **attrs), QMM.reference(*args, **attrs),
           out_dtype)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_conv_random_shapes_and_scales(data):
    d = data.draw
    groups = d(st.sampled_from([1, 1, 2, 4]))
    c, o = groups * d(st.integers(1, 6)), groups * d(st.integers(1, 6))
    k, s, p = d(st.integers(1, 3)), d(st.integers(1, 2)), d(st.integers(0, 1))
    hw = d(st.integers(k, 9))
    rng = np.random.default_rng(d(st.integers(0, 2**31)))
    x, w, xs, ws, xz = _case(rng, d(st.integers(1, 3)), c, o, hw, k, groups=groups,
                             per_channel=d(st.booleans()), zp=d(st.booleans()))
    out_dtype = d(st.sampled_from(["float32", "uint8", "int8"]))
    ys = np.array([rng.uniform(0.01, 0.5)], F32) if out_dtype != "float32" else None
    attrs = QCONV.canon({**QCONV.attrs, "stride": s, "padding": p, "groups": groups,
                         "activation": d(st.sampled_from(["none", "relu"])),
                         "out_dtype": out_dtype})
    args = [x, w, xs, ws, None, None, xz, ys, None]
    _close(_native_only("quantized_conv2d")(*args, **attrs), QCONV.reference(*args, **attrs),
           out_dtype)


def test_primitives_are_optimized_and_weights_packed_once():
    """Every int8 primitive of typical layers (ResNet 3x3 and 1x1, strided, residual;
    MobileNet depthwise; a classifier) is a oneDNN optimized kernel, never `ref`, and
    frozen weights are reordered once."""
    C.nn_clear_cache()
    rng = np.random.default_rng(6)
    conv = _native_only("quantized_conv2d")
    mm = _native_only("quantized_matmul")
    ys = np.array([0.05], F32)
    layers = [(64, 64, 3, 1, 1, 8), (64, 128, 1, 2, 1, 8), (32, 32, 3, 1, 32, 8),
              (3, 32, 3, 2, 1, 16), (96, 24, 1, 1, 1, 8)]
    for c, o, k, s, g, hw in layers:
        x, w, xs, ws, _ = _case(rng, 1, c, o, hw, k, groups=g)
        freeze(w)
        hw_out = (hw + 2 * (k // 2) - k) // s + 1
        res = rng.standard_normal((1, o, hw_out, hw_out)).astype(F32)
        for out_dtype, residual in (("uint8", None), ("float32", res), ("int8", res)):
            attrs = QCONV.canon({**QCONV.attrs, "stride": s, "padding": k // 2, "groups": g,
                                 "activation": "relu", "out_dtype": out_dtype,
                                 "residual_before_act": True})
            args = [x, w, xs, ws, None, residual, None,
                    None if out_dtype == "float32" else ys, None]
            for _ in range(2):
                got = conv(*args, **attrs)
            _close(got, QCONV.reference(*args, **attrs), out_dtype)
    x = rng.integers(0, 128, size=(4, 512)).astype(np.uint8)
    w = rng.integers(-128, 128, size=(512, 10)).astype(np.int8)
    mm(x, w, np.ones(1, F32), np.ones(10, F32), None, None, None, None, None)
    impls = _native.primitive_impls()
    got = impls["int8_conv"] + impls["int8_matmul"]
    assert len(impls["int8_conv"]) >= len(layers) and impls["int8_matmul"], impls
    assert not [i for i in got if i.startswith("ref")], f"oneDNN reference kernels: {got}"
    packed = C.nn_packed_constants()
    assert packed > 0
    x, w, xs, ws, _ = _case(np.random.default_rng(6), 1, 64, 64, 8, 3)
    for _ in range(3):
        conv(x, w, xs, ws, None, None, None, None, None,
             **QCONV.canon({**QCONV.attrs, "padding": 1}))
    assert C.nn_packed_constants() == packed  # not frozen: reordered per call, not kept


def test_bad_native_arguments_are_named():
    x = np.zeros((1, 4, 5, 5), np.uint8)
    w = np.zeros((2, 4, 3, 3), np.int8)
    out = np.empty((1, 2, 3, 3), F32)
    one = np.ones(1, F32)
    with pytest.raises(TypeError, match="quantized_conv2d: weight .* must be int8"):
        C.qconv_forward(x, w.view(np.uint8), out, one, None, one, None, None, None, "none", None,
                        False, None, [1, 1], [1, 1], [0, 0], [0, 0], 1, False)
    with pytest.raises(ValueError, match="quantized_conv2d: w_scale .* 1 or 2 elements"):
        C.qconv_forward(x, w, out, one, None, np.ones(3, F32), None, None, None, "none", None,
                        False, None, [1, 1], [1, 1], [0, 0], [0, 0], 1, False)
    with pytest.raises(ValueError, match="quantized_matmul: x .* must be \\[M, K\\]"):
        C.qmatmul_forward(np.zeros((2, 3), np.uint8), np.zeros((4, 2), np.int8),
                          np.empty((2, 2), F32), one, None, one, None, None, None, "none", None,
                          False, None)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 63, 4096 + 5, (1 << 14) * 2 + 13])
@pytest.mark.parametrize("dtype,zp,qmin,qmax", [("int8", 0, -128, 127), ("int8", 3, -100, 90),
                                                ("uint8", 0, 0, 255), ("uint8", 128, 0, 255),
                                                ("uint8", 0, 0, 127)])
def test_native_quantize_dequantize_bit_identical(n, dtype, zp, qmin, qmax):
    """quantize_linear / dequantize_linear per tensor: the native loops (AVX2, 8 values a
    step, and their scalar tail) give the NumPy reference's exact codes and floats for
    every length (tails, several parallel pieces), rounding ties, values past the range,
    NaN, +-inf and -0.0."""
    qop, dqop = OPS["quantize_linear"], OPS["dequantize_linear"]
    rng = np.random.default_rng(n)
    scale = F32(0.0371)
    x = (rng.standard_normal(n) * 80 * scale).astype(F32)
    x[::5] = (np.round(x[::5] / scale) + 0.5) * scale  # ties (up to float32 rounding)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30, -1e30], F32)
    x[:min(n, special.size)] = special[:min(n, special.size)]
    s = np.array([scale], F32)
    z = np.array([zp], np.int32)
    attrs = {"axis": -1, "qmin": qmin, "qmax": qmax}
    q = FACTORIES["quantize_linear"](_never)(x, s, z, **attrs)
    want = qop.reference(x, s, z, **attrs)
    assert q.dtype == np.dtype(dtype) and want.dtype == q.dtype
    np.testing.assert_array_equal(q, want)
    d = FACTORIES["dequantize_linear"](_never)(q, s, z, axis=-1)
    np.testing.assert_array_equal(d, dqop.reference(q, s, z, axis=-1))
