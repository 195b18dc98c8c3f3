"""Quantization ops: quantize/dequantize pairs (QDQ) and weight-only quantization.

These ops are what fw-slim's PTQ/QAT write into a program and what fw-inference's
int8 passes fold into int8 kernels, so their semantics are fixed exactly here.
``quantize_linear``/``dequantize_linear`` follow ONNX QuantizeLinear /
DequantizeLinear (opset 13, per-axis form) so an export is exact; the weight-only
ops follow Paddle's ``paddle.nn.quant.weight_quantize`` / ``weight_dequantize`` /
``weight_only_linear`` (names, arguments, the transposed ``[n, k]`` result).

None of them is exposed at top level (``api=False, method=False``): ``fw.quantization``
(fw-slim) and ``fw.nn.quant`` (fw-nn) are the user-facing functions.

Scale and zero point (the QDQ ops)
    ``scale`` is float32 with 1 element (per-tensor) or ``x.shape[axis]`` elements
    (per-channel along ``axis``), every element > 0; ``zero_point`` is int32 with as
    many elements as ``scale`` (0 for symmetric quantization). ``axis`` is ignored
    for a per-tensor scale. The arithmetic is float32 (float64 for float64 x), with
    a true division, as ONNX specifies.

==========================  ==============================  ================================
op                          attributes (defaults)           result
==========================  ==============================  ================================
quantize_linear(x, scale,   axis=-1, qmin=-128, qmax=127    clip(round_half_even(x / scale)
zero_point)                                                 + zero_point, qmin, qmax); int8,
                                                            uint8 when qmin >= 0
dequantize_linear(q,        axis=-1                         (q - zero_point) * scale, float32
scale, zero_point)
fake_quantize_dequantize    axis=-1, qmin=-128, qmax=127    dequantize_linear(quantize_linear
(x, scale, zero_point)                                      (x)) computed in float, x's dtype;
                                                            any integer range qmin < qmax
weight_quantize(x)          algo="weight_only_int8",        (out, scale): x [k, n] float ->
-> (out, scale)             group_size=-1                   out [n, k] int8 (int4: two values
                                                            per byte, [n, k/2]); scale
                                                            float32 [n] or [k/g, n]
weight_dequantize(x,        algo="weight_only_int8",        [k, n] of out_dtype: the inverse
scale)                      out_dtype=float16,              of weight_quantize up to rounding
                            group_size=-1
weight_only_linear(x,       weight_dtype="int8",            x @ weight_dequantize(weight) +
weight, bias?,              group_size=-1                   bias, in x's dtype
weight_scale)
==========================  ==============================  ================================

Gradients (fw-autograd ``rules/quant.py``): ``fake_quantize_dequantize`` has the
straight-through estimator for x (1 where ``qmin <= round(x/scale) + zp <= qmax``,
else 0) and the LSQ gradient for scale (Esser et al. 2020, "Learned Step Size
Quantization": ``round(x/s) - x/s`` inside the range, ``qmin - zp`` / ``qmax - zp``
where clipped); ``weight_only_linear`` is differentiable in x, bias and weight_scale.
``quantize_linear``/``dequantize_linear``/``weight_quantize``/``weight_dequantize``
are not differentiable (integer results or integer inputs: conversion, not math).

Weight-only quantization (symmetric, per output channel or per group of ``group_size``
rows of the ``[k, n]`` weight): ``scale = absmax / qmax`` with qmax 127 (int8) or 7
(int4), ``q = clip(round_half_even(w / scale), -qmax, qmax)``; a column (group) of
zeros has scale 0 and codes 0. int4 codes are packed two per int8 byte along k: the
even row in the low nibble, the odd row in the high nibble (two's complement
nibbles; k must be even). Paddle packs int4 in a GPU-specific interleaved
layout chosen by ``arch``; fw has one portable layout and ignores ``arch``. Paddle
documents group sizes 64 and 128 only; fw takes any positive group size that divides
k. ``llm.int8`` and ``w4a8`` are not supported (an error says so).
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, numel, shp
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of

__all__ = ["qparams_shape", "WEIGHT_ALGOS", "weight_qmax"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _check(cond, msg, exc=InvalidArgumentError):
    if not cond:
        raise exc(msg)


def _types(*arrays):
    """The TensorTypes of arrays (None stays None): references check what infer checks."""
    return [None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]


# ---------------------------------------------------------------- QDQ: shared rules
def _range_canon(int8_only):
    def canon(attrs):
        a = {"axis": -1, "qmin": -128, "qmax": 127, **attrs}
        for k in ("qmin", "qmax"):
            v = a[k]
            _check(isinstance(v, (int, np.integer)) and not isinstance(v, bool),
                   f"'{k}' must be an int, got {v!r}", InvalidTypeError)
            a[k] = int(v)
        _check(a["qmin"] < a["qmax"], f"'qmin'={a['qmin']} must be < 'qmax'={a['qmax']}")
        if int8_only:
            lo, hi = (0, 255) if a["qmin"] >= 0 else (-128, 127)
            _check(lo <= a["qmin"] and a["qmax"] <= hi,
                   f"['qmin', 'qmax']=[{a['qmin']}, {a['qmax']}] must lie in [{lo}, {hi}] "
                   f"(the result is {'uint8' if lo == 0 else 'int8'})")
        a["axis"] = _int_attr(a["axis"], "axis")
        return a

    return canon


def _int_attr(v, name):
    _check(isinstance(v, (int, np.integer)) and not isinstance(v, bool),
           f"'{name}' must be an int, got {v!r}", InvalidTypeError)
    return int(v)


def _axis_canon(attrs):
    return {"axis": _int_attr(attrs.get("axis", -1), "axis")}


def qparams_shape(xshape, n, axis):
    """The shape `scale`/`zero_point` broadcast as against x: all ones for a
    per-tensor scale (n == 1), else n on the (normalised) `axis`."""
    nd = len(xshape)
    if n == 1:
        return (1,) * nd
    ax = norm_axis(axis, nd)
    c = xshape[ax]
    _check(c == DYN or c == n,
           f"'scale' has {n} elements; it must have 1 element (per-tensor) or x.shape[{ax}]"
           f"={c} (per-channel along axis={axis}); x has shape {shp(xshape)}")
    s = [1] * nd
    s[ax] = n
    return tuple(s)


def _qdq_infer_common(x, scale, zero_point, axis, xname="x", float_x=True):
    if float_x:
        _check(x.dtype.kind == _dt._FLOAT,
               f"'{xname}' must be a real floating tensor, got {x.dtype.name}{shp(x.shape)}",
               InvalidTypeError)
    _check(scale.dtype == _dt.float32,
           f"'scale' must be float32, got {scale.dtype.name}{shp(scale.shape)}", InvalidTypeError)
    _check(zero_point.dtype == _dt.int32,
           f"'zero_point' must be int32, got {zero_point.dtype.name}{shp(zero_point.shape)}",
           InvalidTypeError)
    _check(scale.ndim <= 1 and zero_point.ndim <= 1,
           f"'scale' and 'zero_point' must be 0-d or 1-d, got shapes {shp(scale.shape)} and "
           f"{shp(zero_point.shape)}")
    ns, nz = numel(scale.shape), numel(zero_point.shape)
    _check(ns == DYN or nz == DYN or ns == nz,
           f"'zero_point' has {nz} elements and 'scale' {ns}: they must match "
           f"(shapes {shp(zero_point.shape)} and {shp(scale.shape)})")
    if ns != DYN:
        _check(ns >= 1, "'scale' is empty")
        if ns > 1:
            qparams_shape(x.shape, ns, axis)
    elif x.ndim:
        norm_axis(axis, x.ndim)


def _check_arrays(x, scale, zero_point, axis, xname="x", float_x=True):
    """The eager path runs no infer: the reference checks what infer checks."""
    _qdq_infer_common(*_types(x, scale, zero_point), axis, xname, float_x)


def _qparams(x, scale, zero_point, axis, ctype):
    """scale / zero_point reshaped to broadcast against x, in the compute dtype; every
    scale must be positive (a zero scale would divide by zero)."""
    s = scale.astype(ctype, copy=False)
    if s.size and not bool((s > 0).all()):
        raise InvalidArgumentError(f"every 'scale' must be > 0, got {np.asarray(scale).tolist()}")
    shape = qparams_shape(x.shape, s.size, axis)
    return s.reshape(shape), zero_point.astype(ctype).reshape(shape)


def _ctype(x):
    return _F64 if x.dtype == _F64 else _F32


def _quant_codes(x, scale, zero_point, axis, qmin, qmax):
    """clip(rint(x / scale) + zp, qmin, qmax) as floats in the compute dtype."""
    _check_arrays(x, scale, zero_point, axis)
    ct = _ctype(x)
    s, z = _qparams(x, scale, zero_point, axis, ct)
    xf = x.astype(ct, copy=False)
    with np.errstate(invalid="ignore"):
        return np.clip(np.rint(xf / s) + z, qmin, qmax), s, z


# ---------------------------------------------------------------- quantize_linear
def _q_dtype(qmin):
    return _dt.uint8 if qmin >= 0 else _dt.int8


def _quantize_infer(x, scale, zero_point, axis=-1, qmin=-128, qmax=127):
    _qdq_infer_common(x, scale, zero_point, axis)
    return TensorType(x.shape, _q_dtype(qmin))


def _quantize_ref(x, scale, zero_point, axis=-1, qmin=-128, qmax=127):
    q, _, z = _quant_codes(x, scale, zero_point, axis, qmin, qmax)
    # NaN has no integer code (ONNX leaves it undefined): fw maps it to the zero point
    q = np.where(np.isnan(q), z, q)
    return q.astype(_q_dtype(qmin).np)


defop("quantize_linear", ("x", "scale", "zero_point"), {"axis": -1, "qmin": -128, "qmax": 127},
      infer=_quantize_infer, reference=_quantize_ref, canon=_range_canon(True), promote=None,
      differentiable=False, family="quant", api=False, method=False,
      doc="clip(round_half_even(x / scale) + zero_point, qmin, qmax) as int8 (uint8 when "
          "qmin >= 0); ONNX QuantizeLinear, per-tensor or per-channel along axis.")


# ---------------------------------------------------------------- dequantize_linear
def _dequantize_infer(q, scale, zero_point, axis=-1):
    _check(q.dtype in (_dt.int8, _dt.uint8, _dt.int32),
           f"'q' must be int8, uint8 or int32, got {q.dtype.name}{shp(q.shape)}", InvalidTypeError)
    _qdq_infer_common(q, scale, zero_point, axis, "q", float_x=False)
    return TensorType(q.shape, _dt.float32)


def _dequantize_ref(q, scale, zero_point, axis=-1):
    _check(q.dtype in (np.int8, np.uint8, np.int32),
           f"'q' must be int8, uint8 or int32, got {q.dtype}{shp(q.shape)}", InvalidTypeError)
    _check_arrays(q, scale, zero_point, axis, "q", float_x=False)
    s, z = _qparams(q, scale, zero_point, axis, _F32)
    return ((q.astype(_F32) - z) * s).astype(_F32, copy=False)


defop("dequantize_linear", ("q", "scale", "zero_point"), {"axis": -1},
      infer=_dequantize_infer, reference=_dequantize_ref, canon=_axis_canon, promote=None,
      differentiable=False, family="quant", api=False, method=False,
      doc="(q - zero_point) * scale as float32; ONNX DequantizeLinear, per-tensor or "
          "per-channel along axis.")


# ---------------------------------------------------------------- fake_quantize_dequantize
def _fake_infer(x, scale, zero_point, axis=-1, qmin=-128, qmax=127):
    _qdq_infer_common(x, scale, zero_point, axis)
    return x


def _fake_ref(x, scale, zero_point, axis=-1, qmin=-128, qmax=127):
    q, s, z = _quant_codes(x, scale, zero_point, axis, qmin, qmax)
    return ((q - z) * s).astype(x.dtype, copy=False)


defop("fake_quantize_dequantize", ("x", "scale", "zero_point"),
      {"axis": -1, "qmin": -128, "qmax": 127}, infer=_fake_infer, reference=_fake_ref,
      canon=_range_canon(False), promote=None, family="quant", api=False, method=False,
      doc="dequantize_linear(quantize_linear(x)) computed in float, in x's dtype; the "
          "straight-through estimator for x and LSQ's gradient for scale.")


# ---------------------------------------------------------------- weight-only quantization
WEIGHT_ALGOS = {"weight_only_int8": 127, "weight_only_int4": 7}
_WEIGHT_DTYPES = {"int8": "weight_only_int8", "int4": "weight_only_int4"}


def weight_qmax(algo) -> int:
    """The largest code of a weight-only algorithm (127 for int8, 7 for int4)."""
    try:
        return WEIGHT_ALGOS[algo]
    except KeyError:
        raise InvalidArgumentError(
            f"'algo'={algo!r} is not supported; expected one of {sorted(WEIGHT_ALGOS)} "
            "(Paddle's 'llm.int8' and 'w4a8' are not implemented in fw)") from None


def _group_canon(a):
    g = _int_attr(a["group_size"], "group_size")
    _check(g == -1 or g > 0, f"'group_size' must be -1 (per channel) or > 0, got {g}")
    a["group_size"] = g
    return a


def _wq_canon(attrs):
    a = {"algo": "weight_only_int8", "group_size": -1, **attrs}
    weight_qmax(a["algo"])
    return _group_canon(a)


def _wdq_canon(attrs):
    a = _wq_canon(attrs)
    a["out_dtype"] = _dt.convert_dtype(a.get("out_dtype", _dt.float16))
    _check(a["out_dtype"].kind == _dt._FLOAT,
           f"'out_dtype' must be a floating dtype, got {a['out_dtype'].name}", InvalidTypeError)
    return a


def _wol_canon(attrs):
    a = {"weight_dtype": "int8", "group_size": -1, **attrs}
    wd = a["weight_dtype"]
    _check(wd in _WEIGHT_DTYPES,
           f"'weight_dtype'={wd!r} is not supported; expected 'int8' or 'int4'")
    return _group_canon(a)


def _n_groups(k, group_size):
    if k == DYN:
        return DYN
    return 1 if group_size == -1 else k // group_size


def _packed_k(k, algo):
    if k == DYN:
        return DYN
    return k if algo == "weight_only_int8" else k // 2


def _scale_shape(k, n, group_size):
    return (n,) if group_size == -1 else (_n_groups(k, group_size), n)


def _wq_infer(x, algo="weight_only_int8", group_size=-1):
    _check(x.dtype.kind == _dt._FLOAT,
           f"'x' must be a real floating tensor, got {x.dtype.name}{shp(x.shape)}",
           InvalidTypeError)
    _check(x.ndim == 2, f"'x' must be a 2-D [k, n] weight, got shape {shp(x.shape)}")
    k, n = x.shape
    _check(algo == "weight_only_int8" or k == DYN or k % 2 == 0,
           f"a weight_only_int4 weight packs two rows per byte: its k={k} must be even "
           f"(x has shape {shp(x.shape)})")
    _check(group_size == -1 or k == DYN or k % group_size == 0,
           f"'group_size'={group_size} must divide the weight's k={k} (x has shape "
           f"{shp(x.shape)})")
    return (TensorType((n, _packed_k(k, algo)), _dt.int8),
            TensorType(_scale_shape(k, n, group_size), _dt.float32))


def pack_int4(codes):
    """[n, k] int codes in [-8, 7] (k even) -> [n, k/2] int8, two per byte along k."""
    c = codes.astype(np.int16)
    lo, hi = c[:, 0::2] & 0xF, c[:, 1::2] & 0xF
    # C order whatever the codes' layout (weight_quantize packs a transposed view): the
    # native weight_only_linear reads rows of k, and a strided weight costs a copy per call
    return xp_of(codes).ascontiguousarray((lo | (hi << 4)).astype(np.uint8).view(np.int8))


def unpack_int4(packed):
    """The inverse of `pack_int4`: [n, k/2] int8 -> [n, k] int8 codes."""
    b = packed.view(np.uint8).astype(np.int16)
    lo, hi = b & 0xF, (b >> 4) & 0xF
    codes = np.stack([lo, hi], axis=-1).reshape(packed.shape[0], 2 * packed.shape[1])
    return np.where(codes >= 8, codes - 16, codes).astype(np.int8)


def _group_rows(k, group_size):
    """The group index of each of the k rows."""
    g = k if group_size == -1 else group_size
    return np.arange(k) // max(g, 1)


def _wq_ref(x, algo="weight_only_int8", group_size=-1):
    _wq_infer(*_types(x), algo, group_size)
    qmax = weight_qmax(algo)
    w = x.astype(_F32)
    k, n = w.shape
    if group_size == -1 or k == 0:
        amax = np.abs(w).max(axis=0) if k else np.zeros_like(w, shape=(n,))
        scale = (amax / qmax).astype(_F32)
        srows = np.broadcast_to(scale, (k, n))
    else:
        amax = np.abs(w.reshape(k // group_size, group_size, n)).max(axis=1)
        scale = (amax / qmax).astype(_F32)
        srows = scale[_group_rows(k, group_size)]
    safe = np.where(srows > 0, srows, 1)
    codes = np.clip(np.rint(w / safe), -qmax, qmax).astype(np.int8).T  # [n, k]
    out = codes.copy() if algo == "weight_only_int8" else pack_int4(codes)
    return out, scale.reshape(_scale_shape(k, n, group_size))


defop("weight_quantize", ("x",), {"algo": "weight_only_int8", "group_size": -1},
      outputs=("out", "scale"), infer=_wq_infer, reference=_wq_ref, canon=_wq_canon,
      promote=None, differentiable=False, family="quant", api=False, method=False,
      doc="Symmetric weight-only quantization of a [k, n] weight: int8 (or packed int4) "
          "codes [n, k] and float32 scales per output channel or per group of rows.")


def _codes(x, k, algo):
    """The [n, k] int8 codes held by a weight_quantize result."""
    return x if algo == "weight_only_int8" else unpack_int4(x)


def _k_of(x, algo):
    """The unpacked k of a quantized [n, k] weight (int4 holds two rows per byte)."""
    kp = x.shape[1]
    return kp if algo == "weight_only_int8" or kp == DYN else 2 * kp


def _check_weight(x, scale, algo, group_size, what="x"):
    _check(x.dtype == _dt.int8,
           f"'{what}' must be the int8 result of weight_quantize, got {x.dtype.name}"
           f"{shp(x.shape)}", InvalidTypeError)
    _check(x.ndim == 2, f"'{what}' must be a 2-D [n, k] quantized weight, got {shp(x.shape)}")
    _check(scale.dtype == _dt.float32,
           f"'scale' must be float32, got {scale.dtype.name}{shp(scale.shape)}", InvalidTypeError)
    n = x.shape[0]
    k = _k_of(x, algo)
    _check(group_size == -1 or k == DYN or k % group_size == 0,
           f"'group_size'={group_size} must divide the weight's k={k} ('{what}' has shape "
           f"{shp(x.shape)} [n, k])")
    want = _scale_shape(k, n, group_size)
    ok = len(scale.shape) == len(want) and all(
        a == b or DYN in (a, b) for a, b in zip(scale.shape, want))
    _check(ok, f"'scale' has shape {shp(scale.shape)}; a [n, k]={shp((n, k))} {algo} weight "
               f"with group_size={group_size} needs {shp(want)}")
    return k, n


def _wdq_infer(x, scale, algo="weight_only_int8", out_dtype=_dt.float16, group_size=-1):
    k, n = _check_weight(x, scale, algo, group_size)
    return TensorType((k, n), out_dtype)


def _dequant_weight(x, scale, algo, group_size, k):
    """The float32 [k, n] weight a quantized weight stands for."""
    want = _scale_shape(k, x.shape[0], group_size)
    _check(tuple(scale.shape) == want and (group_size == -1 or k % group_size == 0),
           f"'scale' has shape {shp(scale.shape)}; a [n, k]={shp((x.shape[0], k))} {algo} "
           f"weight with group_size={group_size} needs {shp(want)}")
    codes = _codes(x, k, algo).astype(_F32).T  # [k, n]
    s = scale.astype(_F32, copy=False)
    if group_size == -1:
        return codes * s.reshape(1, -1)
    return codes * s[_group_rows(k, group_size)]


def _wdq_ref(x, scale, algo="weight_only_int8", out_dtype=_dt.float16, group_size=-1):
    _wdq_infer(*_types(x, scale), algo, out_dtype, group_size)
    k = _k_of(x, algo)
    return _dequant_weight(x, scale, algo, group_size, k).astype(out_dtype.np)


defop("weight_dequantize", ("x", "scale"),
      {"algo": "weight_only_int8", "out_dtype": _dt.float16, "group_size": -1},
      infer=_wdq_infer, reference=_wdq_ref, canon=_wdq_canon, promote=None,
      differentiable=False, family="quant", api=False, method=False,
      doc="The [k, n] float weight of a weight_quantize result: codes * scale, in out_dtype.")


def _wol_infer(x, weight, bias=None, weight_scale=None, weight_dtype="int8", group_size=-1):
    _check(x.dtype.kind == _dt._FLOAT,
           f"'x' must be a real floating tensor, got {x.dtype.name}{shp(x.shape)}",
           InvalidTypeError)
    _check(x.ndim >= 1, "'x' must have at least 1 dimension")
    _check(weight_scale is not None, "'weight_scale' is required")
    algo = _WEIGHT_DTYPES[weight_dtype]
    k, n = _check_weight(weight, weight_scale, algo, group_size, "weight")
    kx = x.shape[-1]
    _check(kx == DYN or k == DYN or kx == k,
           f"x's last dimension {kx} must equal the weight's k={k} (x {shp(x.shape)}, "
           f"weight {shp(weight.shape)} [n, k])")
    if bias is not None:
        _check(bias.dtype == x.dtype,
               f"'bias' must have x's dtype {x.dtype.name}, got {bias.dtype.name}",
               InvalidTypeError)
        _check(bias.ndim == 1 and bias.shape[0] in (n, DYN) or n == DYN,
               f"'bias' must have shape [{n}], got {shp(bias.shape)}")
    return TensorType(tuple(x.shape[:-1]) + (n,), x.dtype)


def _wol_ref(x, weight, bias=None, weight_scale=None, weight_dtype="int8", group_size=-1):
    _wol_infer(*_types(x, weight, bias, weight_scale), weight_dtype, group_size)
    algo = _WEIGHT_DTYPES[weight_dtype]
    k = x.shape[-1]
    w = _dequant_weight(weight, weight_scale, algo, group_size, k)
    out = x.astype(_F32, copy=False) @ w if x.dtype != _F64 else x @ w.astype(_F64)
    if bias is not None:
        out = out + bias.astype(out.dtype, copy=False)
    return out.astype(x.dtype, copy=False)


defop("weight_only_linear", ("x", "weight", "bias?", "weight_scale"),
      {"weight_dtype": "int8", "group_size": -1}, infer=_wol_infer, reference=_wol_ref,
      canon=_wol_canon, promote=None, family="quant", api=False, method=False,
      doc="x @ weight_dequantize(weight, weight_scale) + bias with an int8/int4 weight "
          "[n, k]; computed in float32 (float64 for float64 x), in x's dtype.")
