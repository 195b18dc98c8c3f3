"""Records for the quantization ops (fw.core.ops.quant)."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes

F32, I32 = np.float32, np.int32
X23 = np.linspace(-2, 2, 6, dtype=F32).reshape(2, 3)
S1, Z1 = np.array([0.1], F32), np.array([0], I32)
RANGES = [(-128, 127), (0, 255), (-127, 127), (-8, 7)]


def _qparams(draw, shape, qmin, qmax, per_channel_ok=True):
    """(scale, zero_point, attrs): per-tensor, or per-channel along a drawn axis."""
    attrs = {}
    n = 1
    if per_channel_ok and len(shape) and draw(st.booleans()):
        ax = draw(st.integers(-len(shape), len(shape) - 1))
        attrs["axis"] = ax
        n = shape[ax]
        if n == 0:
            n = 1
    # (a 0-d scale works too, but the executor test would trace it as a Python scalar)
    scale_shape = (n,)
    scale = arrays(draw, _dt.float32, scale_shape, 0.01, 0.5)
    zp = arrays(draw, _dt.int32, scale_shape, qmin if qmin >= 0 else -10,
                qmin + 10 if qmin >= 0 else 10)
    return scale, np.clip(zp, qmin, qmax).astype(I32), attrs


def _quantize(int8_only):
    def sample(draw, dtype):
        qmin, qmax = draw(st.sampled_from(RANGES if int8_only else RANGES + [(-1000, 1000)]))
        shape = shapes(draw, max_dims=3)
        x = arrays(draw, dtype, shape, -40, 40)
        scale, zp, attrs = _qparams(draw, shape, qmin, qmax)
        attrs.update(qmin=qmin, qmax=qmax)
        return Sample([x, scale, zp], attrs, grad_args=(0, 1))

    return sample


def _np_quantize(x, scale, zero_point, axis=-1, qmin=-128, qmax=127):
    """A loop oracle: each element quantized on its own, with Python's round (half to
    even, as ONNX)."""
    ct = np.float64 if x.dtype == np.float64 else np.float32
    out = np.empty(x.shape, np.int64)
    s, z = scale.reshape(-1), zero_point.reshape(-1)
    for idx in np.ndindex(*x.shape):
        c = idx[axis] if s.size > 1 else 0
        v = ct(x[idx]) / ct(s[c])
        out[idx] = min(max(round(float(v)) + int(z[c]), qmin), qmax)
    return out.astype(np.uint8 if qmin >= 0 else np.int8)


BAD_QDQ = [
    ([X23, S1.astype(np.float64), Z1], {}, InvalidTypeError, "'scale' must be float32"),
    ([X23, S1, Z1.astype(np.int64)], {}, InvalidTypeError, "'zero_point' must be int32"),
    ([X23, np.full(2, 0.1, F32), np.zeros(2, I32)], {}, InvalidArgumentError,
     r"x.shape\[1\]=3"),
    ([X23, S1, np.zeros(2, I32)], {}, InvalidArgumentError, "must match"),
    ([X23, np.array([0.0], F32), Z1], {}, InvalidArgumentError, "'scale' must be > 0"),
    ([X23, S1, Z1], {"qmin": 5, "qmax": 5}, InvalidArgumentError, "must be < 'qmax'"),
]

record("quantize_linear", _quantize(True), dtypes=FLOATS + FLOATS_LOW, grad_order=0,
       oracle=_np_quantize,
       errors=BAD_QDQ + [([X23, S1, Z1], {"qmin": -1000, "qmax": 1000}, InvalidArgumentError,
                          r"must lie in \[-128, 127\]"),
                         ([X23.astype(np.int32), S1, Z1], {}, InvalidTypeError,
                          "real floating")])


def _dequantize(draw, dtype):
    d = _dt.convert_dtype(dtype)
    lo, hi = {"int8": (-128, 127), "uint8": (0, 255)}.get(d.name, (-1000, 1000))
    shape = shapes(draw, max_dims=3)
    q = arrays(draw, dtype, shape, lo, hi)
    scale, zp, attrs = _qparams(draw, shape, lo, hi)
    return Sample([q, scale, zp], attrs)


record("dequantize_linear", _dequantize, dtypes=(_dt.int8, _dt.uint8, _dt.int32), grad_order=0,
       oracle=lambda q, s, z, axis=-1: (
           (q.astype(np.float64) - (z.reshape(-1)[0] if z.size == 1 else
                                    np.moveaxis(np.broadcast_to(z, q.shape[:axis % q.ndim]
                                                                + q.shape[axis % q.ndim + 1:]
                                                                + (z.size,)), -1,
                                                axis % q.ndim)))
           * (s.reshape(-1)[0] if s.size == 1 else
              np.moveaxis(np.broadcast_to(s, q.shape[:axis % q.ndim] + q.shape[axis % q.ndim + 1:]
                                          + (s.size,)), -1, axis % q.ndim))).astype(np.float32),
       errors=[([X23, S1, Z1], {}, InvalidTypeError, "'q' must be int8"),
               ([np.ones((2, 3), np.int8), S1.astype(np.float16), Z1], {}, InvalidTypeError,
                "'scale' must be float32")])

# the straight-through estimator is not the derivative of the step function: gradients
# are checked against the closed form in fw-autograd's tests/test_rules_quant.py
record("fake_quantize_dequantize", _quantize(False), dtypes=FLOATS + FLOATS_LOW, grad_order=0,
       oracle=lambda x, s, z, axis=-1, qmin=-128, qmax=127: _np_fake(x, s, z, axis, qmin, qmax),
       tol={"float16": (1e-2, 2e-2), "bfloat16": (2e-2, 0.25)}, errors=BAD_QDQ)


def _np_fake(x, scale, zero_point, axis, qmin, qmax):
    ct = np.float64 if x.dtype == np.float64 else np.float32
    out = np.empty(x.shape, ct)
    s, z = scale.reshape(-1), zero_point.reshape(-1)
    for idx in np.ndindex(*x.shape):
        c = idx[axis] if s.size > 1 else 0
        q = min(max(round(float(ct(x[idx]) / ct(s[c]))) + int(z[c]), qmin), qmax)
        out[idx] = ct(q - int(z[c])) * ct(s[c])
    return out.astype(x.dtype)


# ---------------------------------------------------------------- weight-only
ALGOS = ["weight_only_int8", "weight_only_int4"]


def _weight(draw, dtype, k=None):
    algo = draw(st.sampled_from(ALGOS))
    k = k if k is not None else 2 * draw(st.integers(0, 4))
    n = draw(st.integers(0, 4))
    gs = draw(st.sampled_from([-1] + [g for g in (2, 4) if k and k % g == 0]))
    return algo, k, n, gs, arrays(draw, dtype, (k, n), -2, 2)


def _wq(draw, dtype):
    algo, _, _, gs, w = _weight(draw, dtype)
    return Sample([w], {"algo": algo, "group_size": gs})


W44 = np.ones((4, 4), F32)
def _np_wq(x, algo="weight_only_int8", group_size=-1):
    """A loop oracle: each (group, column) block scaled by its own absmax."""
    qmax = 127 if algo == "weight_only_int8" else 7
    k, n = x.shape
    g = k if group_size == -1 else group_size
    ng = k // g if k else 1
    scale = np.zeros((ng, n), np.float32)
    codes = np.zeros((n, k), np.int64)
    for j in range(n):
        for b in range(ng):
            rows = range(b * g, min(k, (b + 1) * g))
            m = max((abs(float(x[r, j])) for r in rows), default=0.0)
            scale[b, j] = np.float32(m) / np.float32(qmax)
            for r in rows:
                v = float(np.float32(x[r, j]) / scale[b, j]) if scale[b, j] else 0.0
                codes[j, r] = min(max(round(v), -qmax), qmax)
    if algo == "weight_only_int4":
        packed = np.zeros((n, k // 2), np.int64)
        for j in range(n):
            for r in range(0, k, 2):
                packed[j, r // 2] = (codes[j, r] & 0xF) | ((codes[j, r + 1] & 0xF) << 4)
        codes = np.where(packed >= 128, packed - 256, packed)
    return codes.astype(np.int8), scale.reshape(n) if group_size == -1 else scale


record("weight_quantize", _wq, oracle=_np_wq, dtypes=FLOATS + FLOATS_LOW, grad_order=0,
       errors=[([W44], {"algo": "llm.int8"}, InvalidArgumentError, "not implemented in fw"),
               ([np.ones((3, 4), F32)], {"algo": "weight_only_int4"}, InvalidArgumentError,
                "must be even"),
               ([W44], {"group_size": 3}, InvalidArgumentError, "must divide"),
               ([np.ones(4, F32)], {}, InvalidArgumentError, "2-D"),
               ([W44.astype(np.int32)], {}, InvalidTypeError, "real floating")])


def _quantized(draw, dtype, k=None):
    from fw.core.ops.quant import _wq_ref

    algo, k, n, gs, w = _weight(draw, dtype, k)
    q, s = _wq_ref(w, algo=algo, group_size=gs)
    return algo, gs, q, s, k, n


def _wdq(draw, dtype):
    algo, gs, q, s, _, _ = _quantized(draw, _dt.float32)
    return Sample([q, s], {"algo": algo, "group_size": gs, "out_dtype": dtype})


Q44, S4 = np.ones((4, 4), np.int8), np.ones(4, F32)
def _np_codes(q, algo):
    if algo == "weight_only_int8":
        return q.astype(np.int64)
    n, kp = q.shape
    out = np.zeros((n, 2 * kp), np.int64)
    for j in range(n):
        for c in range(kp):
            b = int(q[j, c]) & 0xFF
            lo, hi = b & 0xF, b >> 4
            out[j, 2 * c], out[j, 2 * c + 1] = lo - 16 * (lo >= 8), hi - 16 * (hi >= 8)
    return out


def _np_wdq(q, s, algo="weight_only_int8", out_dtype=None, group_size=-1):
    codes = _np_codes(q, algo)
    n, k = codes.shape
    w = np.zeros((k, n), np.float32)
    for r in range(k):
        for j in range(n):
            sc = s[j] if group_size == -1 else s[r // group_size, j]
            w[r, j] = np.float32(codes[j, r]) * sc
    return w.astype(np.dtype(out_dtype.np if out_dtype is not None else np.float16))


def _np_wol(x, q, bias=None, s=None, weight_dtype="int8", group_size=-1):
    w = _np_wdq(q, s, "weight_only_" + weight_dtype, _dt.float64, group_size)
    out = x.astype(np.float64) @ w
    return (out if bias is None else out + bias.astype(np.float64)).astype(x.dtype)


record("weight_dequantize", _wdq, oracle=_np_wdq, dtypes=FLOATS + FLOATS_LOW, grad_order=0,
       errors=[([Q44.astype(F32), S4], {}, InvalidTypeError, "int8 result of weight_quantize"),
               ([Q44, np.ones(3, F32)], {}, InvalidArgumentError, r"needs \[4\]"),
               ([Q44, S4], {"out_dtype": "int32"}, InvalidTypeError, "floating dtype")])


def _wol(draw, dtype):
    k = 2 * draw(st.integers(1, 4))
    algo, gs, q, s, k, n = _quantized(draw, _dt.float32, k)
    lead = shapes(draw, max_dims=2, max_side=3)
    x = arrays(draw, dtype, tuple(lead) + (k,), -2, 2)
    bias = arrays(draw, dtype, (n,), -1, 1) if draw(st.booleans()) else None
    return Sample([x, q, bias, s], {"weight_dtype": algo[len("weight_only_"):],
                                    "group_size": gs}, grad_args=(0, 2, 3))


record("weight_only_linear", _wol, oracle=_np_wol, dtypes=FLOATS + FLOATS_LOW, grad_order=1,
       dynamic_ok=False,
       tol={"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)},
       errors=[([np.ones((2, 3), F32), Q44, None, S4], {}, InvalidArgumentError,
                "must equal the weight's k=4"),
               ([np.ones((2, 4), F32), Q44, None, S4], {"weight_dtype": "int2"},
                InvalidArgumentError, "not supported")])
