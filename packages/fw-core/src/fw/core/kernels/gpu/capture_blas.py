"""Matrix products that a CUDA-graph capture can record.

CuPy refuses every cuBLAS call while a stream is capturing ("calling cuBLAS API
during stream capture is currently unsupported": its ``cublas.setStream`` checks
``cudaStreamIsCapturing``), although cuBLAS itself supports capture when its
workspace is set by the caller (NVIDIA's cuBLAS guide, "CUDA Graphs Support";
PyTorch captures its GEMMs the same way). So while `graphs.GraphedProgram`
captures, ``cupy.matmul`` (which ``np.matmul`` on CuPy arrays and fw's gpu matmul
kernel both resolve at call time) is replaced by `CaptureBlas.matmul`: one
``cublasGemmStridedBatchedEx`` through ctypes on fw's own cuBLAS handle, bound to the
capturing stream, with a workspace from the graph's private pool.

Covered: float16/bfloat16/float32/float64 operands of one dtype, both at least 2-D,
batch dimensions equal or broadcast (a broadcast operand is materialised, or, for a
2-D weight, the batch is folded into the rows). float16/bfloat16 accumulate in
float32 (what CuPy's product does), float32 without TF32 (CuPy's default), float64
in float64. Anything else raises NotImplementedError, which makes the capture fail
and the program run op by op (`graphs` warns once).
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os

import numpy as np

__all__ = ["CaptureBlas", "load_cublas", "gemm_geometry"]

_OP_N = 0
# cudaDataType / cublasComputeType_t values (cuBLAS's ABI)
_R_32F, _R_64F, _R_16F, _R_16BF = 0, 1, 2, 14
_COMPUTE_32F, _COMPUTE_64F = 68, 70
_GEMM_DEFAULT = -1
_WORKSPACE = 32 << 20  # bytes: cuBLAS's largest default workspace on Hopper


def _dtype_codes():
    import ml_dtypes

    return {np.dtype(np.float32): (_R_32F, _COMPUTE_32F, ctypes.c_float),
            np.dtype(np.float64): (_R_64F, _COMPUTE_64F, ctypes.c_double),
            np.dtype(np.float16): (_R_16F, _COMPUTE_32F, ctypes.c_float),
            np.dtype(ml_dtypes.bfloat16): (_R_16BF, _COMPUTE_32F, ctypes.c_float)}


def load_cublas():
    """The cuBLAS shared library CuPy uses (already loaded by then: dlopen of its
    soname returns that copy), else one found next to the nvidia-cublas wheel."""
    names = ["libcublas.so.13", "libcublas.so.12", "libcublas.so"]
    spec = importlib.util.find_spec("nvidia.cublas") if importlib.util.find_spec("nvidia") \
        else None
    if spec is not None and spec.submodule_search_locations:
        for d in spec.submodule_search_locations:
            names += sorted(glob.glob(os.path.join(d, "lib", "libcublas.so*")), reverse=True)
    err = None
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError as e:
            err = e
    raise OSError(f"cuBLAS not found ({err})")


def gemm_geometry(a_shape, b_shape):
    """(batch shape, m, k, n, fold) of ``a @ b`` for operands of at least 2 dims, where
    `fold` is True when `b` is 2-D and `a`'s batch can be folded into its rows (one
    plain GEMM); raises NotImplementedError for what is not covered."""
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise NotImplementedError("a 1-D matmul operand is not captured")
    m, k = a_shape[-2:]
    k2, n = b_shape[-2:]
    if k != k2:
        raise ValueError(f"matmul: {list(a_shape)} @ {list(b_shape)}: inner sizes differ")
    batch = tuple(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))
    fold = len(b_shape) == 2
    return batch, m, k, n, fold


class CaptureBlas:
    """fw's own cuBLAS handle for products inside a capture on `stream`."""

    def __init__(self, cp, stream, workspace):
        self.cp = cp
        self.lib = lib = load_cublas()
        h = ctypes.c_void_p()
        self._check(lib.cublasCreate_v2(ctypes.byref(h)), "cublasCreate")
        self.handle = h
        self._check(lib.cublasSetStream_v2(h, ctypes.c_void_p(stream.ptr)), "cublasSetStream")
        self.workspace = workspace  # kept alive with the graph
        self._check(lib.cublasSetWorkspace_v2(h, ctypes.c_void_p(workspace.data.ptr),
                                              ctypes.c_size_t(workspace.nbytes)),
                    "cublasSetWorkspace")
        self.codes = _dtype_codes()
        f = lib.cublasGemmStridedBatchedEx
        f.restype = ctypes.c_int
        self._gemm = f

    @staticmethod
    def _check(status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed with cuBLAS status {status}")

    @staticmethod
    def workspace_bytes() -> int:
        return _WORKSPACE

    def close(self):
        if self.handle is not None:
            self.lib.cublasDestroy_v2(self.handle)
            self.handle = None

    def matmul(self, a, b, out=None, **kw):
        """``a @ b`` (NumPy's matmul semantics for operands of at least 2 dims)."""
        cp = self.cp
        if kw or out is not None:
            raise NotImplementedError("matmul with out=/keywords is not captured")
        if type(a) is not cp.ndarray or type(b) is not cp.ndarray or a.dtype != b.dtype:
            raise NotImplementedError("matmul of mixed or host operands is not captured")
        codes = self.codes.get(a.dtype)
        if codes is None:
            raise NotImplementedError(f"matmul of {a.dtype} is not captured")
        batch, m, k, n, fold = gemm_geometry(a.shape, b.shape)
        dt, ct, scalar = codes
        nb = int(np.prod(batch, dtype=np.int64)) if batch else 1
        c = cp.empty(batch + (m, n), a.dtype)
        if c.size == 0:
            return c
        if k == 0:
            c[...] = 0
            return c
        b2 = cp.ascontiguousarray(b)
        if fold:  # [..., m, k] @ [k, n]: one GEMM over all rows
            a2 = cp.ascontiguousarray(a)
            rows, count, sa, sb, sc = nb * m, 1, 0, 0, 0
        else:
            a2 = cp.ascontiguousarray(cp.broadcast_to(a, batch + (m, k)))
            b2 = cp.ascontiguousarray(cp.broadcast_to(b2, batch + (k, n)))
            rows, count, sa, sb, sc = m, nb, m * k, k * n, m * n
        one, zero = scalar(1.0), scalar(0.0)
        # row-major C = A @ B is column-major C^T = B^T @ A^T: pass B first
        st = self._gemm(self.handle, _OP_N, _OP_N, ctypes.c_int(n), ctypes.c_int(rows),
                        ctypes.c_int(k), ctypes.byref(one),
                        ctypes.c_void_p(b2.data.ptr), ctypes.c_int(dt), ctypes.c_int(n),
                        ctypes.c_longlong(sb),
                        ctypes.c_void_p(a2.data.ptr), ctypes.c_int(dt), ctypes.c_int(k),
                        ctypes.c_longlong(sa), ctypes.byref(zero),
                        ctypes.c_void_p(c.data.ptr), ctypes.c_int(dt), ctypes.c_int(n),
                        ctypes.c_longlong(sc), ctypes.c_int(count), ctypes.c_int(ct),
                        ctypes.c_int(_GEMM_DEFAULT))
        self._check(st, "cublasGemmStridedBatchedEx")
        return c
