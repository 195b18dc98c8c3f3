"""Records for the int8 ops (fw.core.ops.int8): uint8/int8 activations (with and without
a zero point), int8 weights with per-tensor or per-channel scales, every conv form of
the conv records (1 to 3 spatial dims, groups, padding forms, channel-last), bias,
activation, residual before/after the activation, float32 or requantized uint8/int8
outputs (also a narrowed qmin/qmax).

Scales are powers of two and biases/residuals multiples of 1/8, so every float32 step of
the epilogue is exact and a kernel that folds the scale product or multiplies by
``1 / y_scale`` (oneDNN) must agree with the reference bit for bit; the integer outputs
use the activations that are exact in float32 (none, relu, relu6).
tests/test_int8_ops.py checks arbitrary scales within one quantization step."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ops import OPS
from fw.core.ops.int8 import QRANGE
from fw.core.testing import Sample, record
from fw.core.testing.records.conv import _conv_case

F32 = np.float32
QDTYPES = (_dt.uint8, _dt.int8)
_EXACT_ACTS = ("none", "relu", "relu6")
_FLOAT_TOL = {"uint8": (1e-5, 1e-5), "int8": (1e-5, 1e-5)}


def _ints(draw, dtype, shape, lo, hi):
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).integers(lo, hi + 1, size=shape).astype(dtype)


def _pow2(draw, lo=-6, hi=0):
    return F32(2.0 ** draw(st.integers(lo, hi)))


def _eighths(draw, shape):
    seed = draw(st.integers(0, 2**32 - 1))
    return (np.random.default_rng(seed).integers(-32, 33, size=shape) / 8).astype(F32)


def quant_case(draw, dtype, x_shape, w_shape, channels):
    """(x, weight, x_scale, w_scale, x_zero_point) with exact float32 products."""
    dt = dtype.np
    lo, hi = QRANGE[dtype.name]
    # uint8 mostly in 0..127: the range CPUs without VNNI multiply exactly natively
    top = draw(st.sampled_from([min(hi, 127), hi]))
    x = _ints(draw, dt, x_shape, lo, top)
    w = _ints(draw, np.int8, w_shape, -128, 127)
    xs = np.array([_pow2(draw)], F32)
    per_channel = draw(st.booleans())
    ws = np.array([_pow2(draw) for _ in range(channels if per_channel else 1)], F32)
    xz = np.array([draw(st.integers(lo, hi))], np.int32) if draw(st.booleans()) else None
    return x, w, xs, ws, xz


def epilogue_case(draw, out_shape, channels):
    """(bias, residual, y_scale, y_zero_point, attrs)."""
    out_dtype = draw(st.sampled_from(["float32", "uint8", "int8"]))
    acts = _epilogue_acts() if out_dtype == "float32" else _EXACT_ACTS
    attrs = {"activation": draw(st.sampled_from(acts)), "out_dtype": out_dtype,
             "residual_before_act": draw(st.booleans())}
    bias = _eighths(draw, (channels,)) if draw(st.booleans()) else None
    residual = _eighths(draw, out_shape) if draw(st.booleans()) else None
    ys = yz = None
    if out_dtype != "float32":
        lo, hi = QRANGE[out_dtype]
        ys = np.array([_pow2(draw, -4, 2)], F32)
        # even zero points: oneDNN adds the output zero point before rounding, which
        # rounds an exact tie the other way for an odd one (see fw.core.ops.int8)
        yz = np.array([2 * draw(st.integers(-(-lo // 2), hi // 2))], np.int32) \
            if draw(st.booleans()) else None
        if draw(st.integers(0, 3)) == 0:
            attrs["qmin"] = draw(st.integers(lo, (lo + hi) // 2))
            attrs["qmax"] = draw(st.integers((lo + hi) // 2 + 1, hi))
    return bias, residual, ys, yz, attrs


def _epilogue_acts():
    from fw.core import _epilogue

    return _epilogue.NAMES


# ---------------------------------------------------------------- oracles
# The QDQ program the int8 ops replace, computed in float64 from dequantized operands
# (the references instead accumulate integers and scale once):
# dequantize x and the weight, run the float op's reference, the epilogue, quantize.
def _dequant(q, scale, zero_point=None, axis=None, ndim=None):
    v = q.astype(np.float64) - (0.0 if zero_point is None else float(zero_point.reshape(-1)[0]))
    s = scale.astype(np.float64).reshape(-1)
    if s.size > 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        s = s.reshape(shape)
    return v * s


def _epilogue_oracle(v, bias, residual, activation, residual_before_act, y_scale, y_zero_point,
                     out_dtype, qmin, qmax, channel_axis):
    from fw.core import _epilogue

    if bias is not None:
        shape = [1] * v.ndim
        shape[channel_axis] = -1
        v = v + bias.astype(np.float64).reshape(shape)
    if residual is not None and residual_before_act:
        v = v + residual
    a = _epilogue.BY_NAME[_epilogue.canonical(activation)]
    if a.op is not None:
        v = OPS[a.op].reference(v, **dict(a.attrs))
    if residual is not None and not residual_before_act:
        v = v + residual
    if out_dtype == "float32":
        return v.astype(F32)
    lo, hi = QRANGE[out_dtype]
    lo, hi = max(lo, lo if qmin is None else qmin), min(hi, hi if qmax is None else qmax)
    z = 0 if y_zero_point is None else int(y_zero_point.reshape(-1)[0])
    q = np.rint(v / float(y_scale.reshape(-1)[0])) + z
    return np.clip(q, lo, hi).astype(np.dtype(out_dtype))


def qconv_oracle(x, weight, x_scale, w_scale, bias=None, residual=None, x_zero_point=None,
                 y_scale=None, y_zero_point=None, activation="none", residual_before_act=False,
                 out_dtype="float32", qmin=None, qmax=None, **conv):
    c = OPS["conv"]
    attrs = c.canon({**c.attrs, **{k: conv[k] for k in c.attrs if k in conv}})
    v = c.reference(_dequant(x, x_scale, x_zero_point), _dequant(weight, w_scale, axis=0),
                    None, **attrs)
    return _epilogue_oracle(v, bias, residual, activation, residual_before_act, y_scale,
                            y_zero_point, out_dtype, qmin, qmax,
                            v.ndim - 1 if attrs["channel_last"] else 1)


def qmatmul_oracle(x, weight, x_scale, w_scale, bias=None, residual=None, x_zero_point=None,
                   y_scale=None, y_zero_point=None, activation="none", residual_before_act=False,
                   out_dtype="float32", qmin=None, qmax=None):
    v = np.matmul(_dequant(x, x_scale, x_zero_point), _dequant(weight, w_scale, axis=1))
    return _epilogue_oracle(v, bias, residual, activation, residual_before_act, y_scale,
                            y_zero_point, out_dtype, qmin, qmax, v.ndim - 1)


def qmax_pool_oracle(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                     channel_last=False):
    """Plain loops over the windows (padding never wins)."""
    from fw.core.ops.pool import pool_geometry

    xt = np.moveaxis(x, -1, 1) if channel_last else x
    ks, st, pads, outs = pool_geometry(xt.shape[2:], kernel_size, stride,
                                       OPS["max_pool"].canon({**OPS["max_pool"].attrs,
                                                              "kernel_size": kernel_size,
                                                              "padding": padding,
                                                              "channel_last": False})["padding"],
                                       ceil_mode)
    out = np.empty(xt.shape[:2] + tuple(outs), x.dtype)
    for i in range(outs[0]):
        for j in range(outs[1]):
            h0, w0 = i * st[0] - pads[0][0], j * st[1] - pads[1][0]
            win = xt[:, :, max(h0, 0):min(h0 + ks[0], xt.shape[2]),
                     max(w0, 0):min(w0 + ks[1], xt.shape[3])]
            out[:, :, i, j] = win.max(axis=(2, 3)) if win.size else np.iinfo(x.dtype).min
    return np.ascontiguousarray(np.moveaxis(out, 1, -1)) if channel_last else out


# ---------------------------------------------------------------- quantized_conv2d
def _qconv(draw, dtype):
    args, attrs, _ = _conv_case(draw, _dt.float32, False)
    xf, wf = args[0], args[1]
    cout = wf.shape[0]
    x, w, xs, ws, xz = quant_case(draw, dtype, xf.shape, wf.shape, cout)
    conv = OPS["conv"]
    out_shape = conv.reference(xf, wf, None, **conv.canon({**conv.attrs, **attrs})).shape
    bias, residual, ys, yz, ep = epilogue_case(draw, out_shape, cout)
    attrs.update(ep)
    return Sample([x, w, xs, ws, bias, residual, xz, ys, yz], attrs)


_XQ = np.ones((1, 2, 5, 5), np.uint8)
_WQ = np.ones((3, 2, 3, 3), np.int8)
_S1 = np.ones(1, F32)


record("quantized_conv2d", _qconv, dtypes=QDTYPES, grad_order=0, tol=_FLOAT_TOL,
       oracle=qconv_oracle,
       errors=[([_XQ.astype(F32), _WQ, _S1, _S1, None, None, None, None, None], {},
                InvalidTypeError, "'x' must be uint8 or int8"),
               ([_XQ, _WQ, _S1, np.ones(2, F32), None, None, None, None, None], {},
                InvalidArgumentError, "w_scale.*1 element or 3"),
               ([_XQ, _WQ, _S1, _S1, None, None, None, None, None], {"out_dtype": "int8"},
                InvalidArgumentError, "needs y_scale"),
               ([_XQ, _WQ, _S1, _S1, None, None, None, None, None], {"out_dtype": "int4"},
                InvalidArgumentError, "out_dtype must be one of"),
               ([_XQ, _WQ, _S1, _S1, None, np.ones((1, 3, 2, 2), F32), None, None, None], {},
                InvalidArgumentError, "residual .* must have the output's shape")])


# ---------------------------------------------------------------- quantized_matmul
def _qmatmul(draw, dtype):
    lead = draw(st.sampled_from([(), (3,), (2, 3), (0,)]))
    if lead == ():
        lead = (draw(st.integers(1, 4)),)
    k, n = draw(st.integers(1, 40)), draw(st.integers(1, 12))
    x, w, xs, ws, xz = quant_case(draw, dtype, lead + (k,), (k, n), n)
    bias, residual, ys, yz, attrs = epilogue_case(draw, lead + (n,), n)
    return Sample([x, w, xs, ws, bias, residual, xz, ys, yz], attrs)


_XM = np.ones((2, 4), np.int8)
_WM = np.ones((4, 3), np.int8)
record("quantized_matmul", _qmatmul, dtypes=QDTYPES, grad_order=0, tol=_FLOAT_TOL,
       oracle=qmatmul_oracle,
       errors=[([_XM, np.ones((5, 3), np.int8), _S1, _S1, None, None, None, None, None], {},
                InvalidArgumentError, "last dimension of x"),
               ([_XM, _WM.astype(np.uint8), _S1, _S1, None, None, None, None, None], {},
                InvalidTypeError, "'weight' must be int8"),
               ([_XM, _WM, _S1, _S1, np.ones(4, F32), None, None, None, None], {},
                InvalidArgumentError, r"bias \[4\] must be \[3\]"),
               ([_XM, _WM, _S1, _S1, None, None, None, _S1, None], {},
                InvalidArgumentError, "float32 output takes no y_scale"),
               ([_XM, _WM, _S1, _S1, None, None, None, _S1, None],
                {"out_dtype": "uint8", "qmin": 9, "qmax": 3}, InvalidArgumentError,
                "leave no uint8 value")])


# ---------------------------------------------------------------- quantized_max_pool
def _qmax_pool(draw, dtype):
    k = draw(st.integers(1, 3))
    s = draw(st.integers(1, 3))
    p = draw(st.integers(0, k // 2))
    cl = draw(st.booleans())
    hw = [draw(st.integers(max(1, k - 2 * p), 7)) for _ in range(2)]
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 5))
    shape = (n, *hw, c) if cl else (n, c, *hw)
    lo, hi = QRANGE[dtype.name]
    x = _ints(draw, dtype.np, shape, lo, hi)
    attrs = {"kernel_size": k, "stride": draw(st.sampled_from([None, s])), "padding": p,
             "ceil_mode": draw(st.booleans()), "channel_last": cl}
    return Sample([x], attrs)


record("quantized_max_pool", _qmax_pool, dtypes=QDTYPES, grad_order=0, dynamic_ok=False,
       oracle=qmax_pool_oracle,
       errors=[([np.ones((1, 2, 4, 4), F32)], {"kernel_size": 2}, InvalidTypeError,
                "'x' must be uint8 or int8"),
               ([_XQ], {"kernel_size": None}, InvalidArgumentError, "'kernel_size' is required")])
