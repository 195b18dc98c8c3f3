"""cpu kernels: oneDNN matmul for ``matmul`` and ``linear``.

Below ``_native.NUMPY_FASTER_BELOW_FLOPS`` (about 64x64x64) NumPy's single BLAS
thread answers sooner than a oneDNN call, so small problems stay on NumPy.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from fw.core import _native
from fw.core.ops._registry import OPS

_F32 = np.dtype(np.float32)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_THRESHOLD = _native.NUMPY_FASTER_BELOW_FLOPS


def _native_dtype(d) -> bool:
    return d == _F32 or d == _BF16


def _make_matmul(reference):
    native = _native.matmul

    def matmul_cpu(x, y, transpose_x=False, transpose_y=False):
        if x.ndim >= 2 and y.ndim >= 2 and x.dtype == y.dtype and _native_dtype(x.dtype):
            k = x.shape[-2] if transpose_x else x.shape[-1]
            n = y.shape[-2] if transpose_y else y.shape[-1]
            # batch*M*K*N*2 with the batch of x (the usual, larger, side)
            if k and 2 * x.size * n >= _THRESHOLD:
                return native(x, y, transpose_x, transpose_y)
        return reference(x, y, transpose_x=transpose_x, transpose_y=transpose_y)

    return matmul_cpu


def _make_linear(reference):
    native = _native.matmul

    def linear_cpu(x, weight, bias=None):
        if weight.ndim == 2 and x.ndim >= 1 and x.dtype == weight.dtype and \
                _native_dtype(x.dtype) and (bias is None or bias.dtype == x.dtype) and \
                x.shape[-1] == weight.shape[0] and x.size:
            if 2 * x.size * weight.shape[1] >= _THRESHOLD and x.ndim >= 2:
                return native(x, weight, bias=None if bias is None else bias.reshape(-1))
            if x.dtype == _F32:
                out = np.matmul(x, weight)
                if bias is not None:
                    out += bias.reshape(-1)
                return out
        return reference(x, weight, bias)

    return linear_cpu


def register() -> None:
    if not _native.available:
        return
    for name, make in (("matmul", _make_matmul), ("linear", _make_linear)):
        op = OPS.get(name)
        if op is not None and "cpu" not in op.kernels:
            op.kernels["cpu"] = make(op.reference)


register()
