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
        yz = np.array([draw(st.integers(lo, hi))], np.int32) if draw(st.booleans()) else None
        if draw(st.integers(0, 3)) == 0:
            attrs["qmin"] = draw(st.integers(lo, (lo + hi) // 2))
            attrs["qmax"] = draw(st.integers((lo + hi) // 2 + 1, hi))
    return bias, residual, ys, yz, attrs


def _epilogue_acts():
    from fw.core import _epilogue

    return _epilogue.NAMES


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
