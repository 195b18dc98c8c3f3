"""fw-core's native matmul (oneDNN through fw.core._native) against NumPy, float32.

Targets (2-core reference machine): 1024^3 >= 190 GFLOP/s (oneDNN alone reached
208, NumPy/OpenBLAS 201); an 8^3 call within a few microseconds. NumPy is timed
with the BLAS thread count fw leaves it (1 while the native kernels are on), so
`time_numpy` is what fw's NumPy fallback costs, and the crossover between the
two is what fw.core._native.NUMPY_FASTER_BELOW_FLOPS records.
"""

import time

import numpy as np

from fw.core import _native


def _operands(n):
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    return a, b, np.empty((n, n), np.float32)


class MatmulNative:
    params = [64, 256, 1024]
    param_names = ["n"]

    def setup(self, n):
        if not _native.available:
            raise NotImplementedError("FW_DISABLE_NATIVE=1")  # asv skips the benchmark
        self.a, self.b, self.out = _operands(n)
        _native.matmul(self.a, self.b, out=self.out)  # create and cache the primitive

    def time_native(self, n):
        _native.matmul(self.a, self.b, out=self.out)

    def time_numpy(self, n):
        np.matmul(self.a, self.b, out=self.out)

    def track_native_gflops(self, n):
        flops = 2.0 * n**3
        reps = max(3, int(2e9 / flops))  # about a second of work per size at 190 GFLOP/s
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            _native.matmul(self.a, self.b, out=self.out)
            best = min(best, time.perf_counter() - t)
        return flops / best / 1e9

    track_native_gflops.unit = "GFLOP/s"


class MatmulNativeOverhead:
    """Per-call cost where the arithmetic is negligible (8x8x8)."""

    def setup(self):
        if not _native.available:
            raise NotImplementedError("FW_DISABLE_NATIVE=1")
        self.a, self.b, self.out = _operands(8)
        self.bias = np.zeros(8, np.float32)
        _native.matmul(self.a, self.b)
        _native.matmul(self.a, self.b, bias=self.bias, activation="relu")

    def time_native_8(self):
        _native.matmul(self.a, self.b)

    def time_native_raw_8(self):
        _native.C.matmul(self.a, self.b, self.out)

    def time_native_fused_8(self):
        _native.matmul(self.a, self.b, bias=self.bias, activation="relu")

    def time_numpy_8(self):
        np.matmul(self.a, self.b)
