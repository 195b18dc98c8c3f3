"""cpu kernels of the int8 family (``fw.core.ops.int8``): ``quantized_conv2d`` and
``quantized_matmul`` on oneDNN's u8/s8 primitives (``csrc/nn_int8.cpp``) with int32
accumulation, runtime scales and zero points, and bias, activation, residual and
requantization fused as attributes and post-ops; ``quantized_max_pool`` on oneDNN's
u8/s8 pooling. (The per-tensor quantize/dequantize at an int8 region's borders are in
``quant.py``, their ops' family.)

Covered natively: x uint8/int8 and weight int8 C-contiguous (copied otherwise), float32
scales/bias/residual, a residual of the output's shape; conv with 1 to 3 spatial dims;
matmul over ``[..., K]`` flattened to rows. Everything else (empty arrays, shape
errors) goes to the reference, which raises the precise message.

Saturation on CPUs without VNNI (``EXACT_U8S8`` False: oneDNN's effective ISA has no
VNNI, e.g. AVX2): oneDNN multiplies u8 x s8 with ``vpmaddubsw``, which adds pairs of
products in int16 with saturation (oneDNN: "Nuances of int8 computations"). Measured
with ``ONEDNN_MAX_CPU_ISA=AVX2`` on the reference machine (tests/test_int8_native.py
runs the same checks on whatever CPU it meets):

- u8 x in 0..127 with any int8 weights: exact (127 * 128 * 2 fits int16). This is what
  ``fold_qdq`` produces for the non-negative output of a relu quantized as int8;
- u8 x above 127: saturates (errors of 10^5 on a 3x3x32 conv of 255s and 127s), so a
  uint8 x is checked (``x.max()``, one pass over bytes) and one above 127 goes to the
  reference;
- s8 x: oneDNN shifts the source to u8 and scales the weights by 1/2 to stay in range,
  which rounds odd weights (errors of ~3000 on the same conv): such CPUs compute an s8
  x with the reference, and ``fold_qdq`` keeps layers with signed inputs in float32
  there.

On the reference machine itself oneDNN reports ``avx512_core_bf16`` (an AMD EPYC with
AVX-512 VNNI): every case above is exact natively.
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.errors import FwError
from fw.core.kernels.cpu._common import C, attach
from fw.core.kernels.frozen import stamp
from fw.core.ops.conv import _check_conv, conv_geometry, join_layout
from fw.core.ops.int8 import QRANGE, qrange
from fw.core.ops.pool import pool_geometry

__all__ = ["EXACT_U8S8", "cpu_isa"]

_U8 = np.dtype(np.uint8)
_S8 = np.dtype(np.int8)
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)
_OUT = {"float32": _F32, "uint8": _U8, "int8": _S8}

#: oneDNN multiplies u8 x s8 exactly (VNNI/AMX): no range rule needed
EXACT_U8S8: bool = bool(C is not None and C.int8_exact_u8s8())


def cpu_isa() -> str:
    """oneDNN's effective ISA name on this CPU ("avx2", "avx512_core", ...), or "" when the
    native extension is not loaded."""
    return "" if C is None else C.int8_cpu_isa()


def _c(a):
    return a if a is None or a.flags.c_contiguous else np.ascontiguousarray(a)


def _f32(a):
    return None if a is None else np.ascontiguousarray(a, _F32).reshape(-1)


def _i32(a):
    return None if a is None else np.ascontiguousarray(a, _I32).reshape(-1)


def _safe_u8(x) -> bool:
    """A uint8 source oneDNN computes exactly here (see the module doc)."""
    return EXACT_U8S8 or x.size == 0 or int(x.max()) <= 127


def _clip(out_dtype, qmin, qmax, ys, yz):
    """The real-domain clip of a range narrower than the output dtype's, or None."""
    if out_dtype == "float32" or (qmin is None and qmax is None):
        return None
    lo, hi = qrange(out_dtype, qmin, qmax)
    if (lo, hi) == QRANGE[out_dtype]:
        return None
    s = np.float32(ys[0])
    z = 0 if yz is None else int(yz[0])
    return float(np.float32(lo - z) * s), float(np.float32(hi - z) * s)


def _operands(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale, y_zero_point,
              out_dtype, qmin, qmax):
    """The native call's operands, or None where the reference must answer."""
    if x.dtype not in (_U8, _S8) or weight.dtype != _S8 or x.size == 0 or weight.size == 0:
        return None
    if (residual is not None and residual.dtype != _F32) or (
            bias is not None and bias.dtype != _F32):
        return None
    if x_scale.dtype != _F32 or w_scale.dtype != _F32 or x_scale.size != 1:
        return None
    if (out_dtype == "float32") != (y_scale is None):
        return None
    xs, xz = _f32(x_scale), _i32(x_zero_point)
    if x.dtype == _S8 and not EXACT_U8S8:
        return None  # inexact natively on CPUs without VNNI (module doc)
    if x.dtype == _U8 and not _safe_u8(x):
        return None
    ys, yz = _f32(y_scale), _i32(y_zero_point)
    return (_c(x), _c(weight), xs, xz, _f32(w_scale), ys, yz, _f32(bias), _c(residual),
            _clip(out_dtype, qmin, qmax, ys, yz))


def _make_qconv(reference):
    plans: dict = {}

    def quantized_conv2d_cpu(x, weight, x_scale, w_scale, bias=None, residual=None,
                             x_zero_point=None, y_scale=None, y_zero_point=None, stride=1,
                             padding=0, dilation=1, groups=1, channel_last=False,
                             activation="none", residual_before_act=False, out_dtype="float32",
                             qmin=None, qmax=None):
        ops = _operands(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                        y_zero_point, out_dtype, qmin, qmax)
        plan = None
        if ops is not None and 3 <= x.ndim <= 5 and weight.ndim == x.ndim:
            key = (x.shape, weight.shape, stride, padding, dilation, groups, channel_last)
            plan = plans.get(key)
            if plan is None:
                n, _, sp, cout, ks = _check_conv(x.shape, weight.shape, None, groups,
                                                 channel_last, False)
                strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
                plan = (tuple(join_layout(n, cout, outs, channel_last)), list(strides),
                        list(dils), [b for b, _ in pads], [e for _, e in pads])
                if len(plans) > 1024:
                    plans.clear()
                plans[key] = plan
            if residual is not None and tuple(residual.shape) != plan[0]:
                plan = None
        if plan is None:
            return reference(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                             y_zero_point, stride=stride, padding=padding, dilation=dilation,
                             groups=groups, channel_last=channel_last, activation=activation,
                             residual_before_act=residual_before_act, out_dtype=out_dtype,
                             qmin=qmin, qmax=qmax)
        xa, wa, xs, xz, ws, ys, yz, b, r, clip = ops
        out = np.empty(plan[0], _OUT[out_dtype])
        C.qconv_forward(xa, wa, out, xs, xz, ws, ys, yz, b, activation, r, residual_before_act,
                        clip, plan[1], plan[2], plan[3], plan[4], groups, channel_last,
                        stamp(weight))
        return out

    quantized_conv2d_cpu.plans = plans
    return quantized_conv2d_cpu


def _make_qmatmul(reference):
    def quantized_matmul_cpu(x, weight, x_scale, w_scale, bias=None, residual=None,
                             x_zero_point=None, y_scale=None, y_zero_point=None,
                             activation="none", residual_before_act=False, out_dtype="float32",
                             qmin=None, qmax=None):
        ops = _operands(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                        y_zero_point, out_dtype, qmin, qmax)
        if ops is None or weight.ndim != 2 or x.ndim < 1 or x.shape[-1] != weight.shape[0] or (
                residual is not None and residual.shape != x.shape[:-1] + weight.shape[1:]):
            return reference(x, weight, x_scale, w_scale, bias, residual, x_zero_point, y_scale,
                             y_zero_point, activation=activation,
                             residual_before_act=residual_before_act, out_dtype=out_dtype,
                             qmin=qmin, qmax=qmax)
        xa, wa, xs, xz, ws, ys, yz, b, r, clip = ops
        k, n = weight.shape
        rows = xa.reshape(-1, k)
        out = np.empty((rows.shape[0], n), _OUT[out_dtype])
        C.qmatmul_forward(rows, wa, out, xs, xz, ws, ys, yz, b, activation,
                          None if r is None else r.reshape(-1, n), residual_before_act, clip,
                          stamp(weight))
        return out.reshape(x.shape[:-1] + (n,))

    return quantized_matmul_cpu


def _make_qmax_pool(reference):
    plans: dict = {}

    def plan(shape, kernel_size, stride, padding, ceil_mode, channel_last):
        sp = shape[1:3] if channel_last else shape[2:4]
        ks, st, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
        # ceil_mode's extra output reads past the right padding: pad further (never wins)
        pr = [(o - 1) * s + k - i - b for o, s, k, i, (b, _) in zip(outs, st, ks, sp, pads)]
        out = (shape[0], *outs, shape[3]) if channel_last else (shape[0], shape[1], *outs)
        return out, list(ks), list(st), [b for b, _ in pads], pr

    def quantized_max_pool_cpu(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                               channel_last=False):
        if x.dtype in (_U8, _S8) and x.ndim == 4 and x.size:
            key = (x.shape, kernel_size, stride, padding, ceil_mode, channel_last)
            p = plans.get(key)
            if p is None:
                try:
                    p = plan(x.shape, kernel_size, stride, padding, ceil_mode, channel_last)
                except FwError:
                    p = False  # the reference raises the precise error
                if len(plans) > 1024:
                    plans.clear()
                plans[key] = p
            if p:
                out = np.empty(p[0], x.dtype)
                C.qmax_pool(_c(x), out, p[1], p[2], p[3], p[4], channel_last)
                return out
        return reference(x, kernel_size, stride, padding, ceil_mode, channel_last)

    return quantized_max_pool_cpu


def register() -> None:
    ok = _native.available and C is not None and hasattr(C, "qconv_forward")
    attach({"quantized_conv2d": _make_qconv, "quantized_matmul": _make_qmatmul}, when=ok,
           guard=True)
    attach({"quantized_max_pool": _make_qmax_pool}, when=ok and hasattr(C, "qmax_pool"),
           guard=True)
    if ok:
        from fw.core.kernels.cpu import int8_prepared

        int8_prepared.register(_clip, EXACT_U8S8)  # the executor's prepared kernels for these ops

register()
