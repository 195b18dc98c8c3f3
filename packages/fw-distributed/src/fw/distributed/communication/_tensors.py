"""Tensor <-> buffer glue: the array behind a tensor (zero-copy), the buffer an
in-place op writes into, reduction plans per dtype, and new result tensors.

Uses fw.core.internal's ABI: a tensor's array is ``t._data`` (NumPy on cpu, CuPy
on gpu), results are wrapped with `make_tensor` (no copy), and an op that writes
into a tensor's array bumps its version (`bump_version`) so autograd can tell.
"""
from __future__ import annotations

import numpy as np

from fw.core import Tensor
from fw.core.internal import bump_version, make_tensor
from fw.core.ir import Value
from fw.distributed.communication.reduce_op import ReduceOp

__all__ = ["array_of", "inplace_buffer", "send_buffer", "reduce_plan", "new_tensor",
           "describe", "is_host"]

_HALF = (np.dtype(np.float16),)
try:
    import ml_dtypes

    _HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
except ImportError:  # pragma: no cover - fw-core depends on ml_dtypes
    pass

_REDUCIBLE = {np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64,
                                    np.float32, np.float64, np.complex64, np.complex128)}


def describe(a) -> str:
    return f"{a.dtype}{list(a.shape)}"


def is_host(a) -> bool:
    return isinstance(a, np.ndarray)


def array_of(t, fn, arg):
    """The array of tensor `t` (no copy), or a TypeError naming `fn` and `arg`."""
    if not isinstance(t, Tensor):
        if isinstance(t, Value):
            from fw.distributed.communication._lowering import refuse

            refuse(fn)
        raise TypeError(f"fw.distributed.{fn}: {arg} must be a fw Tensor, "
                        f"got {type(t).__name__}")
    return t._data


def inplace_buffer(t, fn, arg):
    """(buffer, done) for an op writing into `t`: its own array when C-contiguous
    (zero-copy), else a contiguous copy that `done()` writes back. `done()` also
    bumps the tensor's version."""
    a = array_of(t, fn, arg)
    if not is_host(a):      # a device array: the engine of its device decides
        return a, lambda: bump_version(t)
    if not a.flags.writeable:
        raise ValueError(f"fw.distributed.{fn}: {arg} ({describe(a)}) is read-only; the op "
                         "writes its result into it")
    if a.flags.c_contiguous:
        return a, lambda: bump_version(t)
    tmp = a.copy(order="C")

    def done():
        a[...] = tmp
        bump_version(t)

    return tmp, done


def send_buffer(t, fn, arg):
    """A C-contiguous array with `t`'s values (its own when possible)."""
    a = array_of(t, fn, arg)
    return a if not is_host(a) or a.flags.c_contiguous else a.copy(order="C")


def reduce_plan(a, op, fn, nranks):
    """(work array, engine op, post(work)) of a reduction of `a`.

    float16/bfloat16 are reduced in float32 (a copy: MPI has no 16-bit float
    types), which also makes the result the float32 sum rounded once, the same
    on every rank and for every reduction order. AVG is SUM then a division, for
    floating dtypes only. bool SUM/MAX are logical or, MIN/PROD logical and."""
    op = ReduceOp.check(op, fn)
    dt = a.dtype
    if dt in _HALF:
        work = a.astype(np.float32)
    elif dt in _REDUCIBLE:
        work = a
    else:
        raise TypeError(f"fw.distributed.{fn}: cannot reduce dtype {dt} (tensor {describe(a)})")
    if op == ReduceOp.AVG and dt.kind not in "fc" and dt not in _HALF:
        raise TypeError(f"fw.distributed.{fn}: ReduceOp.AVG needs a floating tensor, got "
                        f"{describe(a)} (use SUM and divide)")
    if op in (ReduceOp.MAX, ReduceOp.MIN) and dt.kind == "c":
        raise TypeError(f"fw.distributed.{fn}: ReduceOp.{ReduceOp.name_of(op)} is not defined "
                        f"for complex tensors ({describe(a)})")
    mop = ReduceOp.SUM if op == ReduceOp.AVG else op
    avg = op == ReduceOp.AVG

    def post(target):
        """Write the reduced `work` into `target` (a's buffer)."""
        if avg:
            np.divide(work, nranks, out=work)
        if work is not target:
            np.copyto(target, work, casting="unsafe")

    return work, mop, post


def new_tensor(array):
    return make_tensor(array)
