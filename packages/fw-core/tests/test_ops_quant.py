"""The quantization ops' exact semantics (fw.core.ops.quant): ONNX QuantizeLinear /
DequantizeLinear examples, ties, per-channel axes, and weight-only round trips.
(The generic record tests also run every op against a loop oracle.)"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.ops import call
from fw.core.ops.quant import pack_int4, unpack_int4

F32, I32 = np.float32, np.int32


def _t(a):
    return fw.to_tensor(np.asarray(a))


def _q(x, s, z, **kw):
    return call("quantize_linear", _t(np.asarray(x, F32)), _t(np.asarray(s, F32)),
                _t(np.asarray(z, I32)), **kw).numpy()


def test_onnx_quantize_linear_example():
    # the example of the ONNX QuantizeLinear operator page (uint8, zero point 128)
    x = [0, 2, 3, 1000, -254, -1000]
    got = _q(x, [2.0], [128], qmin=0, qmax=255)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, [128, 129, 130, 255, 1, 0])


def test_ties_round_half_to_even():
    got = _q([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], [1.0], [0])
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, [0, 2, 2, 0, -2, -2])


def test_per_channel_axis_and_dequantize():
    x = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], F32)
    s, z = np.array([0.5, 2.0], F32), np.array([1, -3], I32)
    q = _q(x, s, z, axis=0)
    np.testing.assert_array_equal(q, [[3, -3, 7], [-1, -1, -6]])  # 5/2 = 2.5 -> 2
    d = call("dequantize_linear", _t(q), _t(s), _t(z), axis=0).numpy()
    assert d.dtype == np.float32
    np.testing.assert_array_equal(d, (q.astype(F32) - z[:, None]) * s[:, None])
    # the same along axis=1 of the transpose, and a per-channel scale of the wrong size
    np.testing.assert_array_equal(_q(x.T, s, z, axis=1), q.T)
    with pytest.raises(InvalidArgumentError, match=r"x.shape\[1\]=3"):
        _q(x, s, z, axis=1)


def test_fake_quantize_equals_dequantize_of_quantize():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, (4, 5)).astype(F32)
    s, z = np.full(5, 0.05, F32), rng.integers(-5, 5, 5).astype(I32)
    q = call("quantize_linear", _t(x), _t(s), _t(z), axis=1)
    want = call("dequantize_linear", q, _t(s), _t(z), axis=1).numpy()
    got = call("fake_quantize_dequantize", _t(x), _t(s), _t(z), axis=1).numpy()
    np.testing.assert_array_equal(got, want)
    # float64 stays float64; a wider (int16) range than int8 is allowed for fake quant
    g64 = call("fake_quantize_dequantize", _t(x.astype(np.float64)), _t(s), _t(z), axis=1,
               qmin=-32768, qmax=32767).numpy()
    assert g64.dtype == np.float64
    assert np.abs(g64 - x).max() <= 0.025 + 1e-9


def test_nan_maps_to_the_zero_point():
    np.testing.assert_array_equal(_q([np.nan, 1.0], [1.0], [3]), [3, 4])


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 6).map(lambda v: 2 * v), n=st.integers(1, 5),
       algo=st.sampled_from(["weight_only_int8", "weight_only_int4"]),
       grouped=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_weight_only_round_trip_within_half_a_step(k, n, algo, grouped, seed):
    w = np.random.default_rng(seed).normal(0, 1, (k, n)).astype(F32)
    gs = 2 if grouped else -1
    q, s = call("weight_quantize", _t(w), algo=algo, group_size=gs)
    assert q.dtype == fw.int8 and s.dtype == fw.float32
    assert q.shape == [n, k if algo == "weight_only_int8" else k // 2]
    assert s.shape == ([n] if gs == -1 else [k // 2, n])
    back = call("weight_dequantize", q, s, algo=algo, out_dtype="float32", group_size=gs).numpy()
    step = s.numpy() if gs == -1 else np.repeat(s.numpy(), 2, axis=0)
    assert np.all(np.abs(back - w) <= step / 2 + 1e-6)
    # the largest magnitude of each block is exact: it is qmax codes
    qmax = 127 if algo == "weight_only_int8" else 7
    np.testing.assert_allclose(np.abs(w).max(axis=0) if gs == -1 else
                               np.abs(w.reshape(k // 2, 2, n)).max(axis=1),
                               s.numpy() * qmax, rtol=1e-6)


def test_int4_packing_layout():
    codes = np.array([[-8, 7, 0, -1], [1, 2, 3, 4]], np.int8)
    packed = pack_int4(codes)
    # even row in the low nibble, odd row in the high nibble (two's complement)
    np.testing.assert_array_equal(packed.view(np.uint8), [[0x78, 0xF0], [0x21, 0x43]])
    np.testing.assert_array_equal(unpack_int4(packed), codes)


def test_weight_only_linear_matches_the_dequantized_matmul():
    rng = np.random.default_rng(1)
    w = rng.normal(0, 1, (8, 3)).astype(F32)
    x, b = rng.normal(0, 1, (2, 5, 8)).astype(F32), rng.normal(0, 1, 3).astype(F32)
    for algo, wd in (("weight_only_int8", "int8"), ("weight_only_int4", "int4")):
        q, s = call("weight_quantize", _t(w), algo=algo, group_size=4)
        deq = call("weight_dequantize", q, s, algo=algo, out_dtype="float32", group_size=4)
        got = call("weight_only_linear", _t(x), q, _t(b), s, weight_dtype=wd, group_size=4)
        np.testing.assert_allclose(got.numpy(), x @ deq.numpy() + b, rtol=1e-5, atol=1e-5)


def test_errors_name_the_op_and_argument():
    with pytest.raises(InvalidArgumentError, match="weight_quantize: 'algo'='llm.int8'"):
        call("weight_quantize", _t(np.ones((4, 4), F32)), algo="llm.int8")
    with pytest.raises(InvalidArgumentError, match=r"quantize_linear: .*must lie in \[0, 255\]"):
        _q([1.0], [1.0], [0], qmin=0, qmax=300)
