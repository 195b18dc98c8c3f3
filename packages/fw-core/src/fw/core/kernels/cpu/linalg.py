"""cpu kernel of the linalg family: oneDNN matmul for ``matmul``.

Below ``_native.NUMPY_FASTER_BELOW_FLOPS`` (about 64x64x64) NumPy's single BLAS
thread answers sooner than a oneDNN call, so small problems stay on NumPy (``linear``,
in :mod:`fw.core.kernels.cpu.nn_misc`, and ``fused_matmul``, in
:mod:`fw.core.kernels.cpu.fused`, use the same crossover).
"""

from __future__ import annotations

from fw.core import _native
from fw.core.kernels.cpu._common import _float, attach

__all__ = ["register"]

_THRESHOLD = _native.NUMPY_FASTER_BELOW_FLOPS


def _make_matmul(reference):
    native = _native.matmul

    def matmul_cpu(x, y, transpose_x=False, transpose_y=False):
        if x.ndim >= 2 and y.ndim >= 2 and x.dtype == y.dtype and _float(x.dtype):
            k = x.shape[-2] if transpose_x else x.shape[-1]
            n = y.shape[-2] if transpose_y else y.shape[-1]
            # batch*M*K*N*2 with the batch of x (the usual, larger, side)
            if k and 2 * x.size * n >= _THRESHOLD:
                return native(x, y, transpose_x, transpose_y)
        return reference(x, y, transpose_x=transpose_x, transpose_y=transpose_y)

    return matmul_cpu


def register() -> None:
    attach({"matmul": _make_matmul}, when=_native.available)


register()
