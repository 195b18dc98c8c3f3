"""Quantize/dequantize ops (``fw.core.ops.quant``) as ONNX QDQ.

fw's ``quantize_linear`` / ``dequantize_linear`` were defined after ONNX
QuantizeLinear / DequantizeLinear (opset 13: true division, round half to even,
saturation, per-tensor or per-axis scale), so they map one to one, with three
differences the lowering bridges:

- fw's ``zero_point`` is int32 whatever the code type; ONNX's zero point has the type of
  the codes (it decides QuantizeLinear's output type), so it is cast to int8/uint8 (a
  constant zero point is converted at export time and checked to fit).
- fw's ``[qmin, qmax]`` may be narrower than the code type (``quant_bits`` < 8); ONNX
  QuantizeLinear saturates to the full int8/uint8 range only, so an int8 ``Clip`` to
  ``[qmin, qmax]`` follows it. Clipping the integer codes is exactly fw's
  ``clip(rint(x / s) + zp, qmin, qmax)`` and keeps the Q -> DQ pair visible to
  onnxruntime's QDQ fusions (a float Clip before Q would split Conv from its Q).
- a per-tensor scale is fw's one-element 1-D tensor; ONNX reads a 1-D scale as per-axis,
  so it is reshaped to a scalar.

``fake_quantize_dequantize`` (a QAT program exported before ``convert``) becomes the
same Q -> DQ pair when its range fits int8/uint8 and x is float32, else the float
arithmetic of its definition (Div, Round, Add, Clip, Sub, Mul: ONNX Round rounds half to
even like fw), which any range and float dtype can use.

Refused, with the op and the attribute named: QuantizeLinear on float64 x (ONNX's
QuantizeLinear takes float32, and float16/bfloat16 only from opset 19; fw computes
float64 in float64, which a cast to float32 would change), a constant scale that is not
> 0, a constant zero point outside the code type, and an int32 ``dequantize_linear``
with a zero point that is not a constant 0 (ONNX DequantizeLinear defines int32 input
with zero point 0 only). fw maps a NaN input to the zero point; ONNX leaves NaN
undefined. A zero point fed at run time is cast to the code type unchecked.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.onnx.lowering._registry import lowers
from onnx import numpy_helper

_RANGES = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255)}


def _const_value(ctx, name):
    """The value of initializer `name` (a captured parameter or constant), else None."""
    for t in ctx.initializers:
        if t.name == name:
            return numpy_helper.to_array(t)
    return None


def _axis(op, i=0):
    nd = op.operands[i].type.ndim
    ax = int(op.attrs["axis"])
    return ax + nd if ax < 0 else ax


def _per_axis(ctx, op):
    n = op.operands[1].type.numel()
    if n == -1:
        ctx.fail(f"the number of elements of 'scale' is unknown at export time (shape "
                 f"{list(op.operands[1].type.shape)}); it decides between ONNX's per-tensor "
                 f"and per-axis forms")
    return n > 1


def _scale(ctx, op, per_axis):
    s = ctx.input(1)
    v = _const_value(ctx, s)
    if v is not None and not bool((v > 0).all()):
        # fw raises on such a scale when it runs; ONNX leaves it undefined
        ctx.fail(f"every 'scale' must be > 0, got {v.reshape(-1).tolist()[:8]}")
    if per_axis:
        return ctx.node("Reshape", [s, ctx.ints([-1])]) if op.operands[1].type.ndim != 1 else s
    if v is not None:
        return ctx.const(np.asarray(v, np.float32).reshape(()), "scale")
    return ctx.node("Reshape", [s, ctx.ints([])])


def _zero_point(ctx, op, per_axis, np_code):
    """fw's int32 zero point as ONNX's, of the code type `np_code`."""
    z = ctx.input(2)
    v = _const_value(ctx, z)
    if v is not None:
        lo, hi = _RANGES.get(np.dtype(np_code), (None, None))
        if lo is not None and (v.min(initial=lo) < lo or v.max(initial=hi) > hi):
            ctx.fail(f"'zero_point' {v.reshape(-1).tolist()[:8]} does not fit the "
                     f"{np.dtype(np_code).name} codes [{lo}, {hi}] that ONNX's zero point must "
                     f"be typed as")
        v = v.astype(np_code)
        return ctx.const(v.reshape(-1) if per_axis else v.reshape(()), "zero_point")
    z = ctx.cast(z, _dt.from_numpy(np.dtype(np_code)))
    return ctx.node("Reshape", [z, ctx.ints([-1] if per_axis else [])])


def _code_dtype(qmin):
    return np.dtype(np.uint8) if qmin >= 0 else np.dtype(np.int8)


def _quantize(ctx, op, x, qmin, qmax):
    """QuantizeLinear (+ an integer Clip when [qmin, qmax] is narrower than the codes)."""
    per_axis = _per_axis(ctx, op)
    code = _code_dtype(qmin)
    s = _scale(ctx, op, per_axis)
    z = _zero_point(ctx, op, per_axis, code)
    attrs = {"axis": _axis(op)} if per_axis else {}
    q = ctx.node("QuantizeLinear", [x, s, z], **attrs)
    if (qmin, qmax) != _RANGES[code]:
        q = ctx.node("Clip", [q, ctx.const(np.asarray(qmin, code), "qmin"),
                              ctx.const(np.asarray(qmax, code), "qmax")])
    return q, s, z, attrs


def _float_x(ctx, op):
    x = ctx.input(0)
    dt = op.operands[0].type.dtype
    if dt == _dt.float32:
        return x
    if dt in (_dt.float16, _dt.bfloat16):
        return ctx.cast(x, _dt.float32)  # exact: every float16/bfloat16 is a float32
    ctx.fail(f"'x' is {dt.name}: ONNX QuantizeLinear takes float32 input (fw quantizes "
             f"float64 in float64, which a cast to float32 would change)")


@lowers("quantize_linear")
def _quantize_linear(op, ctx):
    q, *_ = _quantize(ctx, op, _float_x(ctx, op), int(op.attrs["qmin"]), int(op.attrs["qmax"]))
    return q


@lowers("dequantize_linear")
def _dequantize_linear(op, ctx):
    per_axis = _per_axis(ctx, op)
    code = op.operands[0].type.dtype.np
    s = _scale(ctx, op, per_axis)
    if code == np.int32:
        v = _const_value(ctx, ctx.input(2))
        if v is None or np.any(v != 0):
            ctx.fail("'q' is int32 and 'zero_point' is not a constant 0: ONNX "
                     "DequantizeLinear defines int32 input with a zero point of 0 only")
        z = ctx.const(np.zeros(v.shape if per_axis else (), np.int32).reshape(-1 if per_axis
                                                                             else ()),
                      "zero_point")
    else:
        z = _zero_point(ctx, op, per_axis, code)
    attrs = {"axis": _axis(op)} if per_axis else {}
    return ctx.node("DequantizeLinear", [ctx.input(0), s, z], **attrs)


@lowers("fake_quantize_dequantize")
def _fake_quantize_dequantize(op, ctx):
    qmin, qmax = int(op.attrs["qmin"]), int(op.attrs["qmax"])
    lo, hi = _RANGES[_code_dtype(qmin)]
    if op.operands[0].type.dtype == _dt.float32 and lo <= qmin and qmax <= hi:
        q, s, z, attrs = _quantize(ctx, op, ctx.input(0), qmin, qmax)
        return ctx.node("DequantizeLinear", [q, s, z], **attrs)
    return _fake_float(op, ctx, qmin, qmax)


def _fake_float(op, ctx, qmin, qmax):
    """(clip(round(x / s) + zp, qmin, qmax) - zp) * s in x's dtype, s and zp broadcast
    along `axis` (fw.core.ops.quant's definition, computed in float)."""
    xt = op.operands[0].type
    per_axis = _per_axis(ctx, op)
    shape = [1] * xt.ndim
    if per_axis:
        shape[_axis(op)] = -1
    ct = _dt.float64 if xt.dtype == _dt.float64 else _dt.float32
    x = ctx.input(0)
    if xt.dtype != ct:
        x = ctx.cast(x, ct)
    s = ctx.node("Reshape", [ctx.cast(ctx.input(1), ct), ctx.ints(shape)])
    z = ctx.node("Reshape", [ctx.cast(ctx.input(2), ct), ctx.ints(shape)])
    code = ctx.node("Add", [ctx.node("Round", [ctx.node("Div", [x, s])]), z])
    code = ctx.node("Clip", [code, ctx.scalar(qmin, ct), ctx.scalar(qmax, ct)])
    y = ctx.node("Mul", [ctx.node("Sub", [code, z]), s])
    return y if xt.dtype == ct else ctx.cast(y, xt.dtype)
