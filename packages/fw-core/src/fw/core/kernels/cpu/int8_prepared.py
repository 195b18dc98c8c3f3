"""Prepared cpu kernels of the int8 path (what `fw.core.kernels.cpu.prepared` does for
float32 ops, for the ops ``fold_qdq`` emits): ``quantized_conv2d``, ``quantized_matmul``,
``quantized_max_pool`` and the per-tensor ``quantize_linear`` / ``dequantize_linear`` at
an int8 region's borders.

Why: the table kernels serve every caller, so each call re-reads its keyword
attributes, re-checks and converts every constant operand (scales, zero points, bias:
``np.ascontiguousarray`` + ``reshape`` each), builds a plan key and computes the
output clip. Measured on the 2-core reference machine, that Python was about 3.4 us per
int8 call, against 10-40 us of oneDNN work per call on LeNet b64: a quarter of the
classifier's time. A prepared kernel is made once per op of a compiled program
(the executor calls it with the operands only): it binds the attributes, converts the
constant operands once (kept while the predictor passes the same array objects, checked
by identity) and keeps the geometry per input shape.

``quantized_max_pool`` with a 2x2 window, stride 2, no padding, channel-last (LeNet's
pools, and the common case after a conv) runs as two NumPy maxima over strided views
of the bytes: 2.4x faster than oneDNN's u8 pooling primitive here (38 vs 92 us on
64x10x10x16, 0.24 vs 0.59 ms on 64x28x28x6, loaded machine) - max commutes with the
monotone quantizer, so pooling codes is exact, and NumPy's uint8 maximum is a
vectorised byte loop. Other windows keep oneDNN's primitive.

The numbers are those of the table kernels (the same native calls with the same
arguments); every case a prepared kernel does not cover (dtypes, a uint8 input above
127 on CPUs without VNNI, shapes, a native failure) goes to the table kernel with the
bound attributes.
"""

from __future__ import annotations

import numpy as np

from fw.core.kernels.cpu._common import C
from fw.core.kernels.frozen import stamp

__all__ = ["INT8_PREPARERS", "max_pool_2x2", "register"]

_ndarray = np.ndarray
_U8 = np.dtype(np.uint8)
_S8 = np.dtype(np.int8)
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)
_NATIVE_ERRORS = (RuntimeError, ValueError, TypeError)
#: what the table kernels' module (fw.core.kernels.cpu.int8) hands over in `register`:
#: its output-clip rule and whether this CPU multiplies u8 x s8 exactly (no import back)
_HOST: dict = {"clip": None, "exact": False}


def max_pool_2x2(x):
    """2x2 / stride 2 max pooling of a channel-last ``[N, H, W, C]`` array (odd H or W:
    the last row/column is dropped, as floor mode does): two maxima over views."""
    n, h, w, c = x.shape
    h2, w2 = h // 2, w // 2
    if h % 2 or w % 2:
        x = x[:, :2 * h2, :2 * w2]
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
    v = x.reshape(n, h2, 2, w2, 2, c)
    t = np.maximum(v[:, :, 0], v[:, :, 1])
    return np.maximum(t[:, :, :, 0], t[:, :, :, 1])


def _pair(v):
    """A canonical pool size attribute (an int or a tuple of one or two) as two ints."""
    t = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(e) for e in v)
    return t * 2 if len(t) == 1 else t


def _is_2x2(a) -> bool:
    try:
        k = _pair(a["kernel_size"])
        s = _pair(a["stride"] if a["stride"] is not None else a["kernel_size"])
        p = a["padding"]
        pad0 = p == 0 or (not isinstance(p, str) and all(int(q) == 0 for q in np.ravel(p)))
    except (TypeError, ValueError, KeyError):
        return False
    return k == (2, 2) and s == (2, 2) and pad0 and not a["ceil_mode"] and a["channel_last"]


def _prep_qmax_pool(op, kernel, checked=True):
    a = dict(op.attrs)
    if not _is_2x2(a):
        return None

    def quantized_max_pool_prepared(x):
        if x.__class__ is _ndarray and (x.dtype is _U8 or x.dtype is _S8) and x.ndim == 4 \
                and x.shape[1] >= 2 and x.shape[2] >= 2 and x.size:
            return max_pool_2x2(x)
        return kernel(x, **a)

    return quantized_max_pool_prepared


class _Consts:
    """The converted constant operands of an int8 product, remembered for the array
    objects they came from (a predictor passes the same ones on every call)."""

    __slots__ = ("key", "vals")

    def __init__(self):
        self.key = None
        self.vals = None


def _f32(a):
    return None if a is None else np.ascontiguousarray(a, _F32).reshape(-1)


def _i32(a):
    return None if a is None else np.ascontiguousarray(a, _I32).reshape(-1)


def _convert(weight, x_scale, w_scale, bias, x_zero_point, y_scale, y_zero_point, out_dtype,
             qmin, qmax):
    """The native call's constant arguments, or None where the table kernel must answer
    (the same checks as fw.core.kernels.cpu.int8._operands on these operands)."""
    if weight.__class__ is not _ndarray or weight.dtype != _S8 or weight.size == 0 or \
            not weight.flags.c_contiguous:
        return None
    if bias is not None and bias.dtype != _F32:
        return None
    if x_scale.dtype != _F32 or w_scale.dtype != _F32 or x_scale.size != 1:
        return None
    if (out_dtype == "float32") != (y_scale is None):
        return None
    ys, yz = _f32(y_scale), _i32(y_zero_point)
    return (_f32(x_scale), _i32(x_zero_point), _f32(w_scale), ys, yz, _f32(bias),
            _HOST["clip"](out_dtype, qmin, qmax, ys, yz))


def _x_native(x):
    if x.__class__ is not _ndarray or x.size == 0:
        return False
    if x.dtype is _U8:
        return _HOST["exact"] or int(x.max()) <= 127
    return x.dtype is _S8 and _HOST["exact"]


def _prep_qmatmul(op, kernel, checked=True):
    if C is None or not hasattr(C, "qmatmul_forward"):
        return None
    a = dict(op.attrs)
    act, rba, out_dtype = a["activation"], a["residual_before_act"], a["out_dtype"]
    qmin, qmax = a["qmin"], a["qmax"]
    odt = {"float32": _F32, "uint8": _U8, "int8": _S8}.get(out_dtype)
    if odt is None:
        return None
    consts = _Consts()
    qmatmul_forward = C.qmatmul_forward

    def quantized_matmul_prepared(x, weight, x_scale, w_scale, bias=None, residual=None,
                                  x_zero_point=None, y_scale=None, y_zero_point=None):
        key = (weight, x_scale, w_scale, bias, x_zero_point, y_scale, y_zero_point)
        k = consts.key
        if k is None or any(p is not q for p, q in zip(k, key)):
            consts.vals = _convert(weight, x_scale, w_scale, bias, x_zero_point, y_scale,
                                   y_zero_point, out_dtype, qmin, qmax)
            consts.key = key
        c = consts.vals
        if c is None or weight.ndim != 2 or not _x_native(x) or x.shape[-1] != \
                weight.shape[0] or residual is not None:
            return kernel(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                          y_zero_point, **a)
        kk, n = weight.shape
        rows = (x if x.flags.c_contiguous else np.ascontiguousarray(x)).reshape(-1, kk)
        out = np.empty((rows.shape[0], n), odt)
        try:
            qmatmul_forward(rows, weight, out, c[0], c[1], c[2], c[3], c[4], c[5], act, None,
                            rba, c[6], stamp(weight))
        except _NATIVE_ERRORS:
            return kernel(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                          y_zero_point, **a)
        return out if x.ndim == 2 else out.reshape(x.shape[:-1] + (n,))

    return quantized_matmul_prepared


def _prep_qconv(op, kernel, checked=True):
    if C is None or not hasattr(C, "qconv_forward"):
        return None
    from fw.core.ops.conv import _check_conv, conv_geometry, join_layout

    a = dict(op.attrs)
    act, rba, out_dtype = a["activation"], a["residual_before_act"], a["out_dtype"]
    qmin, qmax = a["qmin"], a["qmax"]
    groups, cl = a["groups"], a["channel_last"]
    odt = {"float32": _F32, "uint8": _U8, "int8": _S8}.get(out_dtype)
    if odt is None:
        return None
    consts = _Consts()
    geos: dict = {}
    qconv_forward = C.qconv_forward

    def geometry(xshape, wshape):
        g = geos.get((xshape, wshape), geos)
        if g is geos:
            try:
                n, _, sp, cout, ks = _check_conv(xshape, wshape, None, groups, cl, False)
                strides, pads, dils, outs = conv_geometry(sp, ks, a["stride"], a["padding"],
                                                          a["dilation"])
                g = (tuple(join_layout(n, cout, outs, cl)), list(strides), list(dils),
                     [b for b, _ in pads], [e for _, e in pads])
            except Exception:  # noqa: BLE001 - the table kernel raises the precise error
                g = None
            if len(geos) >= 64:
                geos.clear()
            geos[(xshape, wshape)] = g
        return g

    def quantized_conv2d_prepared(x, weight, x_scale, w_scale, bias=None, residual=None,
                                  x_zero_point=None, y_scale=None, y_zero_point=None):
        key = (weight, x_scale, w_scale, bias, x_zero_point, y_scale, y_zero_point)
        k = consts.key
        if k is None or any(p is not q for p, q in zip(k, key)):
            consts.vals = _convert(weight, x_scale, w_scale, bias, x_zero_point, y_scale,
                                   y_zero_point, out_dtype, qmin, qmax)
            consts.key = key
        c = consts.vals
        p = None
        if c is not None and _x_native(x) and 3 <= x.ndim <= 5 and weight.ndim == x.ndim:
            p = geometry(x.shape, weight.shape)
        if p is None or (residual is not None and (
                residual.__class__ is not _ndarray or residual.dtype != _F32 or
                tuple(residual.shape) != p[0])):
            return kernel(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                          y_zero_point, **a)
        if residual is not None and not residual.flags.c_contiguous:
            residual = np.ascontiguousarray(residual)
        out = np.empty(p[0], odt)
        try:
            qconv_forward(x if x.flags.c_contiguous else np.ascontiguousarray(x), weight, out,
                          c[0], c[1], c[2], c[3], c[4], c[5], act, residual, rba, c[6], p[1],
                          p[2], p[3], p[4], groups, cl, stamp(weight))
        except _NATIVE_ERRORS:
            return kernel(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                          y_zero_point, **a)
        return out

    return quantized_conv2d_prepared


def _per_tensor_args(scale, zero_point):
    if scale.__class__ is not _ndarray or zero_point.__class__ is not _ndarray or \
            scale.size != 1 or scale.dtype != _F32 or zero_point.size != 1 or \
            zero_point.dtype != _I32:
        return None
    s = float(scale.reshape(-1)[0])
    return (s, int(zero_point.reshape(-1)[0])) if s > 0 else None


def _prep_quantize(op, kernel, checked=True):
    if C is None or not hasattr(C, "quantize_per_tensor"):
        return None
    a = dict(op.attrs)
    qmin, qmax = a["qmin"], a["qmax"]
    odt = _U8 if qmin >= 0 else _S8
    known = [None, None, None]
    quantize = C.quantize_per_tensor

    def quantize_linear_prepared(x, scale, zero_point):
        if scale is not known[0] or zero_point is not known[1]:
            known[:] = scale, zero_point, _per_tensor_args(scale, zero_point)
        sz = known[2]
        if sz is None or x.__class__ is not _ndarray or x.dtype is not _F32 or x.size == 0:
            return kernel(x, scale, zero_point, **a)
        q = np.empty(x.shape, odt)
        quantize(x if x.flags.c_contiguous else np.ascontiguousarray(x), q, sz[0], sz[1],
                 qmin, qmax)
        return q

    return quantize_linear_prepared


def _prep_dequantize(op, kernel, checked=True):
    if C is None or not hasattr(C, "dequantize_per_tensor"):
        return None
    a = dict(op.attrs)
    known = [None, None, None]
    dequantize = C.dequantize_per_tensor

    def dequantize_linear_prepared(q, scale, zero_point):
        if scale is not known[0] or zero_point is not known[1]:
            known[:] = scale, zero_point, _per_tensor_args(scale, zero_point)
        sz = known[2]
        if sz is None or q.__class__ is not _ndarray or (q.dtype is not _U8 and
                                                         q.dtype is not _S8) or q.size == 0:
            return kernel(q, scale, zero_point, **a)
        x = np.empty(q.shape, _F32)
        dequantize(q if q.flags.c_contiguous else np.ascontiguousarray(q), x, sz[0], sz[1])
        return x

    return dequantize_linear_prepared


#: op name -> preparer (added to `fw.core.kernels.cpu.prepared.PREPARERS` by `register`)
INT8_PREPARERS = {
    "quantized_conv2d": _prep_qconv,
    "quantized_matmul": _prep_qmatmul,
    "quantized_max_pool": _prep_qmax_pool,
    "quantize_linear": _prep_quantize,
    "dequantize_linear": _prep_dequantize,
}


def register(clip, exact_u8s8: bool) -> None:
    """Add the int8 preparers to the executor's table (additive: the float32 entries
    stay; the int8 ops are in `prepared.FINITE_PRESERVING` with the others). `clip` and
    `exact_u8s8` are fw.core.kernels.cpu.int8's ``_clip`` and ``EXACT_U8S8``."""
    from fw.core.kernels.cpu import prepared

    _HOST["clip"], _HOST["exact"] = clip, bool(exact_u8s8)

    for name, make in INT8_PREPARERS.items():
        prepared.PREPARERS.setdefault(name, make)
