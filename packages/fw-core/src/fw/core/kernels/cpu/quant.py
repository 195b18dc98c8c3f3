"""cpu kernels of the quant family (``fw.core.ops.quant``): the per-tensor
``quantize_linear`` / ``dequantize_linear`` in one native pass (``csrc/nn_int8.cpp``).

The QDQ ops are what an int8 region leaves at its edges (ResNet: the block outputs,
read by the next block's convs and its residual add). Their NumPy references make three
passes and two temporaries; the native kernels do one pass with the same float32
arithmetic (bit-identical). Per-channel and float64 cases go to the reference.
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
            and zero_point.size == 1 and zero_point.dtype.kind in "iu" and x.size > 0)


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


def register() -> None:
    ok = _native.available and C is not None and hasattr(C, "quantize_per_tensor")
    attach({"quantize_linear": _make_quantize, "dequantize_linear": _make_dequantize},
           when=ok, guard=True)


register()
