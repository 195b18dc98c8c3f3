"""The native weight-only linear kernel (csrc/nn_woq.cpp) against the NumPy reference of
fw.core.ops.quant.weight_only_linear: int8 and packed int4 weights, per-channel and
group-wise scales, the streaming GEMV (blocks of 8 rows, M <= 32) and the dequantize +
oneDNN path (M > 32),
bias, leading batch dims; native input validation; the op's eager path uses it."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core import _native
from fw.core.kernels.cpu._common import FACTORIES
from fw.core.ops import OPS, call

pytestmark = pytest.mark.skipif(not _native.available or _native.C is None or
                                not hasattr(_native.C, "woq_linear_forward"),
                                reason="needs fw-core's native weight-only kernel")

C = _native.C
F32 = np.float32
WOL = OPS["weight_only_linear"]
ALGO = {"int8": "weight_only_int8", "int4": "weight_only_int4"}


def _never(*a, **k):
    raise AssertionError("the native kernel fell back to the reference")


NATIVE = FACTORIES["weight_only_linear"](_never)


def _quantized(rng, k, n, wd, group_size):
    w = rng.standard_normal((k, n)).astype(F32)
    q, s = call("weight_quantize", w, algo=ALGO[wd], group_size=group_size)
    return np.asarray(q), np.asarray(s)


def _tol(x, k):
    # float32 sums in another order: a few ulps of the magnitude of the terms
    return 1e-5 * (np.abs(x).max(initial=1.0) * 8) * k ** 0.5 + 1e-5


@settings(max_examples=40, deadline=None)
@given(m=st.sampled_from([1, 2, 3, 4, 5, 7, 8, 9, 17, 32, 33]), k_half=st.integers(1, 80),
       n=st.integers(1, 40), wd=st.sampled_from(["int8", "int4"]),
       group=st.sampled_from([-1, 2, 4, 8, 16, 32, 64, 128]), bias=st.booleans(),
       seed=st.integers(0, 2**16))
def test_matches_reference(m, k_half, n, wd, group, bias, seed):
    k = 2 * k_half
    if group != -1 and k % group:
        group = -1
    rng = np.random.default_rng(seed)
    q, s = _quantized(rng, k, n, wd, group)
    x = rng.standard_normal((m, k)).astype(F32)
    b = rng.standard_normal(n).astype(F32) if bias else None
    want = WOL.reference(x, q, b, s, weight_dtype=wd, group_size=group)
    got = NATIVE(x, q, b, s, weight_dtype=wd, group_size=group)
    assert got.dtype == np.float32 and got.shape == (m, n)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=_tol(x, k) * np.abs(s).max(initial=1))


@pytest.mark.parametrize("wd", ["int8", "int4"])
@pytest.mark.parametrize("group", [-1, 6, 10])
def test_group_tails_and_odd_int8_k(wd, group):
    """Groups that are no multiple of the SIMD width (scalar tails), and odd K for int8."""
    rng = np.random.default_rng(3)
    for k in ([30, 60] if wd == "int4" else [29, 30, 60]):
        g = group if group == -1 or k % group == 0 else -1
        q, s = _quantized(rng, k, 19, wd, g)
        for m in (1, 3, 8, 12):
            x = rng.standard_normal((m, k)).astype(F32)
            want = WOL.reference(x, q, None, s, weight_dtype=wd, group_size=g)
            got = NATIVE(x, q, None, s, weight_dtype=wd, group_size=g)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_batch_dims_and_large_shapes():
    rng = np.random.default_rng(0)
    q, s = _quantized(rng, 256, 300, "int4", 64)
    b = rng.standard_normal(300).astype(F32)
    for shape in [(256,), (1, 1, 256), (2, 3, 256), (4, 16, 256)]:
        x = rng.standard_normal(shape).astype(F32)
        want = WOL.reference(x, q, b, s, weight_dtype="int4", group_size=64)
        got = NATIVE(x, q, b, s, weight_dtype="int4", group_size=64)
        assert got.shape == shape[:-1] + (300,)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_known_value():
    # codes [[1, -2], [7, -8]] (int4 packed: low nibble = even k), scales [0.5, 2]
    q = np.array([[(-2 & 0xF) << 4 | 1], [(-8 & 0xF) << 4 | 7]], np.uint8).view(np.int8)
    s = np.array([0.5, 2.0], F32)
    x = np.array([[3.0, 1.0]], F32)
    got = NATIVE(x, q, np.array([1.0, -1.0], F32), s, weight_dtype="int4", group_size=-1)
    np.testing.assert_array_equal(got, [[(3 - 2) * 0.5 + 1, (21 - 8) * 2.0 - 1]])


def test_op_uses_the_native_kernel():
    kern = WOL.kernels["cpu"]
    assert getattr(kern, "__wrapped__", kern).__name__ == "weight_only_linear_cpu"


def test_fallbacks_for_other_dtypes():
    """float64 x and int4 with an odd group size are the reference's (exact) business."""
    rng = np.random.default_rng(1)
    q, s = _quantized(rng, 6, 5, "int4", 3)
    x = rng.standard_normal((2, 6))
    calls = []

    def ref(*a, **k):
        calls.append(1)
        return WOL.reference(*a, **k)

    kern = FACTORIES["weight_only_linear"](ref)
    kern(x, q, None, s, weight_dtype="int4", group_size=3)
    kern(x.astype(F32), q, None, s, weight_dtype="int4", group_size=3)
    assert len(calls) == 2


def _c_args(m=1, k=8, n=4, wd="int8", group=-1):
    rng = np.random.default_rng(0)
    q, s = _quantized(rng, k, n, wd, group)
    return [rng.standard_normal((m, k)).astype(F32), q, s, None, np.empty((m, n), F32), wd, group]


@pytest.mark.parametrize("mutate, needle", [
    (lambda a: a.__setitem__(0, a[0][:, :6].copy()), "K=6"),
    (lambda a: a.__setitem__(1, a[1].astype(np.uint8)), "weight uint8"),
    (lambda a: a.__setitem__(2, a[2][:3].copy()), "weight_scale float32[3]"),
    (lambda a: a.__setitem__(3, np.zeros(5, F32)), "bias float32[5]"),
    (lambda a: a.__setitem__(4, np.empty((1, 5), F32)), "out float32[1, 5]"),
    (lambda a: a.__setitem__(5, "int2"), "weight_dtype='int2'"),
    (lambda a: a.__setitem__(6, 3), "group_size=3"),
    (lambda a: a.__setitem__(0, a[0].astype(np.float64)), "x float64[1, 8]"),
])
def test_native_validation(mutate, needle):
    args = _c_args()
    mutate(args)
    with pytest.raises(ValueError, match="weight_only_linear") as e:
        C.woq_linear_forward(*args)
    assert needle in str(e.value)


def test_native_rejects_odd_int4_group_and_k():
    args = _c_args(k=12, wd="int4", group=4)
    args[6] = 3
    with pytest.raises(ValueError, match="group_size=3"):
        C.woq_linear_forward(*args)


def test_threads_agree():
    """Calls from several Python threads at once (the GIL is released) give the same
    answers as one call."""
    rng = np.random.default_rng(2)
    q, s = _quantized(rng, 512, 256, "int8", 128)
    xs = [rng.standard_normal((m, 512)).astype(F32) for m in (1, 4, 8, 16)] * 3
    want = [NATIVE(x, q, None, s, weight_dtype="int8", group_size=128) for x in xs]
    got = [None] * len(xs)

    def run(i):
        got[i] = NATIVE(xs[i], q, None, s, weight_dtype="int8", group_size=128)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(xs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=60)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_weight_quantize_int4_is_c_contiguous():
    """The packed codes come out in C order (a strided weight would be copied per call)."""
    w = np.random.default_rng(5).standard_normal((64, 48)).astype(F32)
    q, _ = call("weight_quantize", w, algo="weight_only_int4")
    assert np.asarray(q).flags.c_contiguous


def test_strided_operands():
    """Fortran-ordered x and a transposed-view weight are read correctly (copied)."""
    rng = np.random.default_rng(6)
    q, s = _quantized(rng, 32, 24, "int8", 8)
    x = np.asfortranarray(rng.standard_normal((5, 32)).astype(F32))
    qt = np.ascontiguousarray(q.T).T  # the same values, column-major
    want = WOL.reference(x, q, None, s, weight_dtype="int8", group_size=8)
    got = NATIVE(x, qt, None, s, weight_dtype="int8", group_size=8)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
