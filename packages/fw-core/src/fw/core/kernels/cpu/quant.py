"""cpu kernels of the quant family (``fw.core.ops.quant``): the per-tensor
``quantize_linear`` / ``dequantize_linear`` in one native pass (``csrc/nn_int8.cpp``),
and ``weight_only_linear`` (``csrc/nn_woq.cpp``).

The QDQ ops are what an int8 region leaves at its edges (ResNet: the block outputs,
read by the next block's convs and its residual add). Their NumPy references make three
passes and two temporaries; the native kernels do one pass with the same float32
arithmetic (bit-identical). Per-channel and float64 cases go to the reference.

``weight_only_linear`` with float32 x streams the int8 / packed int4 codes once per block
of 8 rows of x, for up to ``_C.woq_gemv_max_m`` (32) rows (the decode step of a language
model: memory-bound, so 4x / 8x fewer weight bytes than a float32 GEMV), and dequantizes
into a scratch buffer for oneDNN's f32 matmul above that. It sums in a different order than
the NumPy reference (float32 rounding differences only). float64 / float16 x, empty
arrays and int4 with an odd group size (groups that split a byte) go to the reference.
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.kernels.cpu._common import C, attach

__all__: list[str] = []

_U8 = np.dtype(np.uint8)
_S8 = np.dtype(np.int8)
_F32 = np.dtype(np.float32)


def _c(a):
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _per_tensor(x, scale, zero_point):
    return (scale.size == 1 and scale.dtype == _F32 and float(scale.reshape(-1)[0]) > 0
            and zero_point.size == 1 and zero_point.dtype == np.int32 and x.size > 0)


def _make_quantize(reference):
    def quantize_linear_cpu(x, scale, zero_point, axis=-1, qmin=-128, qmax=127):
        if x.dtype != _F32 or not _per_tensor(x, scale, zero_point):
            return reference(x, scale, zero_point, axis=axis, qmin=qmin, qmax=qmax)
        q = np.empty(x.shape, _U8 if qmin >= 0 else _S8)
        C.quantize_per_tensor(_c(x), q, float(scale.reshape(-1)[0]),
                              int(zero_point.reshape(-1)[0]), qmin, qmax)
        return q

    return quantize_linear_cpu


def _make_dequantize(reference):
    def dequantize_linear_cpu(q, scale, zero_point, axis=-1):
        if q.dtype not in (_U8, _S8) or not _per_tensor(q, scale, zero_point):
            return reference(q, scale, zero_point, axis=axis)
        x = np.empty(q.shape, _F32)
        C.dequantize_per_tensor(_c(q), x, float(scale.reshape(-1)[0]),
                                int(zero_point.reshape(-1)[0]))
        return x

    return dequantize_linear_cpu


def _make_weight_only_linear(reference):
    def weight_only_linear_cpu(x, weight, bias=None, weight_scale=None, weight_dtype="int8",
                               group_size=-1):
        # (this runs once per Linear per decode step: cheap tests first, few calls)
        if (x.dtype != _F32 or weight.dtype != _S8 or weight_scale is None
                or weight_scale.dtype != _F32 or (bias is not None and bias.dtype != _F32)
                or x.ndim < 1 or x.size == 0 or weight.ndim != 2 or weight.size == 0
                or (weight_dtype == "int4" and group_size > 0 and group_size % 2)):
            return reference(x, weight, bias, weight_scale, weight_dtype=weight_dtype,
                             group_size=group_size)
        n = weight.shape[0]
        x2 = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])
        out = np.empty((x2.shape[0], n), _F32)
        # A shape the kernel rejects raises ValueError: the guard answers with the
        # reference, whose message names the op's arguments. Non-contiguous arrays are
        # copied by the binding (its arguments are C-contiguous ndarrays).
        C.woq_linear_forward(x2, weight, weight_scale, bias, out, weight_dtype, group_size)
        return out if x.ndim == 2 else out.reshape(x.shape[:-1] + (n,))

    return weight_only_linear_cpu


def register() -> None:
    ok = _native.available and C is not None and hasattr(C, "quantize_per_tensor")
    attach({"quantize_linear": _make_quantize, "dequantize_linear": _make_dequantize},
           when=ok, guard=True)
    attach({"weight_only_linear": _make_weight_only_linear},
           when=_native.available and C is not None and hasattr(C, "woq_linear_forward"),
           guard=True)


register()
