"""Matrix products on cuBLAS (through CuPy).

The reference multiplies float16/bfloat16 by upcasting to float32 (NumPy has no
low-precision GEMM); on a GPU that costs 13x (49 vs 683 TFLOP/s for bf16 8192^3 on
an H200). cuBLAS multiplies them natively with float32 accumulation, which is
what the reference computes, rounded once at the end. CuPy 14's bfloat16 support
covers 2-D products only ("data type 'E' not understood" for batched ones): those
take the reference's float32 route."""

from __future__ import annotations

import ml_dtypes
import numpy as np

_BF16 = np.dtype(ml_dtypes.bfloat16)


def kernels(cp):
    def matmul(x, y, transpose_x=False, transpose_y=False):
        if transpose_x and x.ndim >= 2:
            x = cp.swapaxes(x, -1, -2)
        if transpose_y and y.ndim >= 2:
            y = cp.swapaxes(y, -1, -2)
        if x.dtype == _BF16 and (x.ndim > 2 or y.ndim > 2):
            return cp.matmul(x.astype(cp.float32), y.astype(cp.float32)).astype(x.dtype)
        r = cp.matmul(x, y)
        return r if r.dtype == x.dtype else r.astype(x.dtype)

    return {"matmul": matmul}
