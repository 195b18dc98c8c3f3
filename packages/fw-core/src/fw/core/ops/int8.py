"""int8 ops: what the inference pass ``fold_qdq`` (``fw.core.ir.passes.fold_qdq``) emits
for a quantize/dequantize (QDQ) program, and what oneDNN's u8/s8 kernels run
(``csrc/nn_int8.cpp``, attached in :mod:`fw.core.kernels.cpu.int8`).

No user code calls them (``api=False, method=False``) and they are not differentiable:
they exist for inference programs after quantization. The NumPy references below are
the specification the native kernels are tested against.

Quantization follows ONNX's QuantizeLinear/DequantizeLinear (and fw's
``quantize_linear`` / ``dequantize_linear``): a real value is ``scale * (q - zero_point)``.

``quantized_conv2d(x, weight, x_scale, w_scale, bias?, residual?, x_zero_point?,
y_scale?, y_zero_point?) -> out``
    Attributes ``stride=1, padding=0, dilation=1, groups=1, channel_last=False,
    activation="none", residual_before_act=False, out_dtype="float32", qmin=None,
    qmax=None``::

        acc = conv(x - x_zero_point, weight)                 exact integer sums
        v   = float32(acc) * float32(x_scale * w_scale) + bias
        v   = act(v + residual)        (residual_before_act)
              act(v) + residual        (otherwise)
        out = v                                                  out_dtype float32
        out = clip(round_half_even(v / y_scale) + y_zero_point,  out_dtype uint8/int8
                   lo, hi)

    where ``[lo, hi]`` is the output dtype's range (0..255 for uint8, -128..127 for
    int8) narrowed by ``qmin``/``qmax`` when given (what a ``quantize_linear`` with a
    narrower range computes, or 0..127 for the uint8 output of a relu quantized as
    int8; only for an integer out_dtype).

    - x: uint8 or int8 ``[N, C, H, W]`` (``[N, H, W, C]`` with channel_last); 1 to 3
      spatial dimensions are accepted, as for ``conv``.
    - weight: int8 ``[C_out, C_in/groups, *K]`` (symmetric: no weight zero point).
    - x_scale: float32, 1 element; x_zero_point: int32, 1 element (absent: 0).
    - w_scale: float32, 1 element (per tensor) or C_out elements (per output channel).
    - bias: float32 ``[C_out]`` (real values, added after scaling); residual: float32 of
      the output's shape (real values).
    - y_scale / y_zero_point: float32 / int32, 1 element; required (y_scale) for an
      integer out_dtype, not allowed for float32.
    - stride, padding, dilation, groups mean what they mean for ``conv``; activation is
      a name of the epilogue table ``fw.core._epilogue`` (relu, relu6, ...).

``quantized_matmul(x, weight, x_scale, w_scale, bias?, residual?, x_zero_point?,
y_scale?, y_zero_point?) -> out``
    Attributes ``activation="none", residual_before_act=False, out_dtype="float32",
    qmin=None, qmax=None``:
    the same epilogue over ``acc = (x - x_zero_point) @ weight`` with x uint8/int8
    ``[..., K]``, weight int8 ``[K, N]`` (Paddle's Linear layout), w_scale 1 or N
    elements, bias ``[N]``, residual and out ``[..., N]``.

Precision: the reference computes in float32 as written; a kernel may fold the scale
product or divide by ``y_scale`` as a multiplication by its reciprocal, so an integer
output may differ from the reference by one unit in the last place where
``v / y_scale`` lies within float32 rounding of a tie (records allow 1).
"""

from __future__ import annotations

import numpy as np

from fw.core import _epilogue
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import shp
from fw.core.ops._registry import defop
from fw.core.ops.conv import _check_conv, _conv_canon, _conv_ref, conv_geometry, join_layout

__all__ = ["OUT_DTYPES", "QRANGE", "qrange", "requantize"]

OUT_DTYPES = ("float32", "uint8", "int8")
#: the integer range of each quantized dtype
QRANGE = {"uint8": (0, 255), "int8": (-128, 127)}
_Q_NP = {"uint8": np.uint8, "int8": np.int8}
_ACT_FNS = {a.name: a.numpy for a in _epilogue.TABLE}
_F32 = np.float32


def _canon_common(a):
    v = _epilogue.canonical(a.get("activation", "none"))
    if v is None:
        raise InvalidArgumentError(f"unknown activation {a.get('activation')!r}; expected one of "
                                   f"{list(_epilogue.NAMES)}")
    a["activation"] = v
    a["residual_before_act"] = bool(a.get("residual_before_act", False))
    d = a.get("out_dtype", "float32")
    d = getattr(d, "name", d)
    if d not in OUT_DTYPES:
        raise InvalidArgumentError(f"out_dtype must be one of {list(OUT_DTYPES)}, got {d!r}")
    a["out_dtype"] = d
    for k in ("qmin", "qmax"):
        v = a.get(k)
        if v is not None:
            v = v.item() if hasattr(v, "item") else v
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InvalidArgumentError(f"{k} must be an integer or None, got {v!r}")
            v = int(v)
        a[k] = v
    if d == "float32" and (a["qmin"] is not None or a["qmax"] is not None):
        raise InvalidArgumentError("qmin/qmax apply to a uint8/int8 out_dtype only")
    if d != "float32":
        lo, hi = qrange(d, a["qmin"], a["qmax"])
        if lo > hi:
            raise InvalidArgumentError(f"qmin={a['qmin']}, qmax={a['qmax']} leave no "
                                       f"{d} value")
    return a


def qrange(out_dtype, qmin=None, qmax=None):
    """The integer range of an output: the dtype's, narrowed by qmin/qmax."""
    lo, hi = QRANGE[out_dtype]
    return (lo if qmin is None else max(lo, qmin)), (hi if qmax is None else min(hi, qmax))


def _need(t, arg, dtypes):
    if t.dtype.name not in dtypes:
        raise InvalidTypeError(f"'{arg}' must be {' or '.join(dtypes)}, got "
                               f"{t.dtype.name}{shp(t.shape)}")


def _one(t, arg, n=None):
    """A 1-element tensor (or, with `n`, also n elements: per channel)."""
    size = 1
    for d in t.shape:
        if d == DYN:
            return
        size *= d
    if size != 1 and (n is None or n == DYN or size != n):
        raise InvalidArgumentError(f"'{arg}' {shp(t.shape)} must have 1 element"
                                   + (f" or {n} (one per output channel)" if n is not None else ""))


def _check_quant_types(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                       y_zero_point, out_dtype, channels):
    _need(x, "x", ("uint8", "int8"))
    _need(weight, "weight", ("int8",))
    _need(x_scale, "x_scale", ("float32",))
    _one(x_scale, "x_scale")
    _need(w_scale, "w_scale", ("float32",))
    _one(w_scale, "w_scale", channels)
    if x_zero_point is not None:
        _need(x_zero_point, "x_zero_point", ("int32",))
        _one(x_zero_point, "x_zero_point")
    if bias is not None:
        _need(bias, "bias", ("float32",))
        if len(bias.shape) != 1 or (bias.shape[0] != DYN and channels != DYN
                                    and bias.shape[0] != channels):
            raise InvalidArgumentError(f"bias {shp(bias.shape)} must be [{channels}]")
    if residual is not None:
        _need(residual, "residual", ("float32",))
    if out_dtype == "float32":
        if y_scale is not None or y_zero_point is not None:
            raise InvalidArgumentError("a float32 output takes no y_scale / y_zero_point")
    else:
        if y_scale is None:
            raise InvalidArgumentError(f"out_dtype {out_dtype} needs y_scale")
        _need(y_scale, "y_scale", ("float32",))
        _one(y_scale, "y_scale")
        if y_zero_point is not None:
            _need(y_zero_point, "y_zero_point", ("int32",))
            _one(y_zero_point, "y_zero_point")


def _check_residual(residual, shape):
    if residual is not None and len(residual.shape) == len(shape) and all(
            a == b or DYN in (a, b) for a, b in zip(residual.shape, shape)):
        return
    if residual is not None:
        raise InvalidArgumentError(f"residual {shp(residual.shape)} must have the output's "
                                   f"shape {shp(shape)}")


def requantize(v, y_scale, y_zero_point, out_dtype, qmin=None, qmax=None):
    """The epilogue's last step: float32 `v` as `out_dtype` (see the module doc)."""
    if out_dtype == "float32":
        return v.astype(_F32, copy=False)
    lo, hi = qrange(out_dtype, qmin, qmax)
    zp = 0 if y_zero_point is None else int(np.asarray(y_zero_point).reshape(-1)[0])
    q = np.rint(v / _F32(np.asarray(y_scale).reshape(-1)[0])) + zp
    return np.clip(q, lo, hi).astype(_Q_NP[out_dtype])


def _epilogue_ref(acc, scale, bias, residual, activation, residual_before_act, y_scale,
                  y_zero_point, out_dtype, qmin, qmax, channel_axis):
    """acc: float64 exact integer sums; scale: float32 per-channel (broadcast along
    `channel_axis`) or scalar."""
    shape = [1] * acc.ndim
    shape[channel_axis] = -1
    v = acc.astype(_F32) * scale.reshape(shape)
    if bias is not None:
        v = v + bias.astype(_F32).reshape(shape)
    fn = _ACT_FNS[activation]
    if residual is not None and residual_before_act:
        v = v + residual
    if fn is not None:
        v = fn(v).astype(_F32, copy=False)
    if residual is not None and not residual_before_act:
        v = v + residual
    return requantize(v, y_scale, y_zero_point, out_dtype, qmin, qmax)


def _scale(x_scale, w_scale):
    return (_F32(np.asarray(x_scale).reshape(-1)[0]) * np.asarray(w_scale, _F32).reshape(-1)
            ).astype(_F32)


def _centered(x, x_zero_point):
    v = x.astype(np.float64)
    if x_zero_point is not None:
        v -= float(np.asarray(x_zero_point).reshape(-1)[0])
    return v


def _types(arrays):
    return [None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]


# ---------------------------------------------------------------- quantized_conv2d
def _qc_canon(attrs):
    return _canon_common(_conv_canon(attrs))


def _qc_infer(x, weight, x_scale, w_scale, bias=None, residual=None, x_zero_point=None,
              y_scale=None, y_zero_point=None, stride=1, padding=0, dilation=1, groups=1,
              channel_last=False, activation="none", residual_before_act=False,
              out_dtype="float32", qmin=None, qmax=None):
    cout = weight.shape[0] if weight.shape else DYN
    _check_quant_types(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                       y_zero_point, out_dtype, cout)
    n, _, sp, cout, ks = _check_conv(x.shape, weight.shape, None if bias is None else
                                     bias.shape, groups, channel_last, False)
    _, _, _, outs = conv_geometry(sp, ks, stride, padding, dilation)
    shape = join_layout(n, cout, outs, channel_last)
    _check_residual(residual, shape)
    return TensorType(shape, _dt.convert_dtype(out_dtype))


def _qc_ref(x, weight, x_scale, w_scale, bias=None, residual=None, x_zero_point=None,
            y_scale=None, y_zero_point=None, stride=1, padding=0, dilation=1, groups=1,
            channel_last=False, activation="none", residual_before_act=False,
            out_dtype="float32", qmin=None, qmax=None):
    _qc_infer(*_types((x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                       y_zero_point)), stride=stride, padding=padding, dilation=dilation,
              groups=groups, channel_last=channel_last, activation=activation,
              residual_before_act=residual_before_act, out_dtype=out_dtype, qmin=qmin,
              qmax=qmax)
    # float64 holds the integer sums exactly (|sum| < 2^53)
    acc = _conv_ref(_centered(x, x_zero_point), weight.astype(np.float64), None, stride,
                    padding, dilation, groups, channel_last)
    return _epilogue_ref(acc, _scale(x_scale, w_scale), bias, residual, activation,
                         residual_before_act, y_scale, y_zero_point, out_dtype, qmin, qmax,
                         acc.ndim - 1 if channel_last else 1)


_QIN = ("x", "weight", "x_scale", "w_scale", "bias?", "residual?", "x_zero_point?", "y_scale?",
        "y_zero_point?")

defop("quantized_conv2d", _QIN,
      {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, "channel_last": False,
       "activation": "none", "residual_before_act": False, "out_dtype": "float32",
       "qmin": None, "qmax": None},
      infer=_qc_infer, reference=_qc_ref, canon=_qc_canon, promote=None,
      differentiable=False, family="int8", api=False, method=False,
      doc="int8 convolution with scales, bias, activation, residual and requantization; "
          "see fw.core.ops.int8.")


# ---------------------------------------------------------------- quantized_matmul
def _qm_canon(attrs):
    return _canon_common(dict(attrs))


def _qm_infer(x, weight, x_scale, w_scale, bias=None, residual=None, x_zero_point=None,
              y_scale=None, y_zero_point=None, activation="none", residual_before_act=False,
              out_dtype="float32", qmin=None, qmax=None):
    if len(weight.shape) != 2 or len(x.shape) < 1:
        raise InvalidArgumentError(f"x {shp(x.shape)} @ weight {shp(weight.shape)}: x must be "
                                   f"[..., K] and weight [K, N]")
    k, n = weight.shape
    if x.shape[-1] != DYN and k != DYN and x.shape[-1] != k:
        raise InvalidArgumentError(f"x {shp(x.shape)} @ weight {shp(weight.shape)}: the last "
                                   f"dimension of x must be weight's first ({k})")
    _check_quant_types(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                       y_zero_point, out_dtype, n)
    shape = list(x.shape[:-1]) + [n]
    _check_residual(residual, shape)
    return TensorType(shape, _dt.convert_dtype(out_dtype))


def _qm_ref(x, weight, x_scale, w_scale, bias=None, residual=None, x_zero_point=None,
            y_scale=None, y_zero_point=None, activation="none", residual_before_act=False,
            out_dtype="float32", qmin=None, qmax=None):
    _qm_infer(*_types((x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                       y_zero_point)), activation=activation,
              residual_before_act=residual_before_act, out_dtype=out_dtype, qmin=qmin,
              qmax=qmax)
    acc = np.matmul(_centered(x, x_zero_point), weight.astype(np.float64))
    return _epilogue_ref(acc, _scale(x_scale, w_scale), bias, residual, activation,
                         residual_before_act, y_scale, y_zero_point, out_dtype, qmin, qmax,
                         acc.ndim - 1)


defop("quantized_matmul", _QIN,
      {"activation": "none", "residual_before_act": False, "out_dtype": "float32",
       "qmin": None, "qmax": None},
      infer=_qm_infer, reference=_qm_ref, canon=_qm_canon, promote=None,
      differentiable=False, family="int8", api=False, method=False,
      doc="int8 matmul x @ weight [K, N] with scales, bias, activation, residual and "
          "requantization; see fw.core.ops.int8.")
