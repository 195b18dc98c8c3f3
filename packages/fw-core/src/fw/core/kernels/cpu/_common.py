"""What the cpu kernel families share: the native extension handle, the dtypes it takes,
operand adapters, the plan cache, the fallback guard and registration.

Every family module builds its kernels with factories ``make(reference) -> kernel``
(the kernel runs natively where its case is covered and calls ``reference``, the op's
NumPy kernel, otherwise) and hands them to :func:`attach`.

The oneDNN nn kernels (conv, pool, norm, softmax and their backward ops, on
`fw.core._native.C`: oneDNN primitives, and own C++ for pooling) share one policy:

- dtypes float32 and bfloat16 (bfloat16 computed in float32 inside the native kernel on
  CPUs without bf16 support, rounded once on the way out); float64, float16 and mixed
  dtypes go to NumPy;
- non-empty arrays of the op's usual ranks (conv/pool: 1 to 3 spatial dims);
- there is no size threshold: measured on the 2-core reference machine
  (asv_bench/benchmarks/bench_nn_ops.py), a cached native call (5-15 us) beats the NumPy
  reference at every size tried, down to a 2x10 softmax and a 4x4 convolution;
- shape errors are left to the reference, which raises the precise message; so is any
  native failure (`attach(..., guard=True)`). The resolved geometry of each (shapes,
  attributes) pair is cached (`_Plans`), so a hit costs one dict lookup in Python
  before the native call.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np

from fw.core import _native
from fw.core.errors import FwError
from fw.core.ops._registry import OPS

C = _native.C
#: The own-C++ kernels (fused elementwise interpreter, optimizer loops) need AVX2/FMA/F16C.
fused_available: bool = C is not None and bool(C.fused_supported())

_ndarray = np.ndarray
_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_U16 = np.dtype(np.uint16)
_I32 = np.dtype(np.int32)

#: dtype codes of the elementwise interpreter (``_C.EwProgram``, ``_C.ew_unary``)
_EW_DTYPE_CODES = {_F32: 3, _F16: 1, _BF16: 2}

#: op name -> the factory of its cpu kernel, for every family (filled by `attach`,
#: also when the extension is off): tests build kernels that cannot fall back from it.
FACTORIES: dict[str, Callable] = {}


def _float(d) -> bool:
    """float32 or bfloat16: the dtypes the oneDNN kernels take."""
    return d is _F32 or d == _BF16


def _bits(a):
    """bfloat16 arrays as their uint16 bits (how _C reads bfloat16)."""
    return a.view(_U16) if a.dtype == _BF16 else a


def _contiguous(a):
    """A C-contiguous copy of the strided array `a`.

    The channel-last view of a channel-first array with few channels (the NCHW -> NHWC
    transpose that ``layout_nhwc`` puts in front of a network's 3-channel stem) is copied
    one channel at a time: NumPy's generic copy walks such a view element by element
    (194 us for 1x3x224x224 on the 2-core EPYC), a strided store per channel takes 49 us.
    """
    if 3 <= a.ndim <= 5 and a.shape[-1] <= 16:
        cf = np.moveaxis(a, -1, 1)
        if cf.flags.c_contiguous:
            out = np.empty(a.shape, a.dtype)
            for c in range(a.shape[-1]):
                out[..., c] = cf[:, c]
            return out
    return np.ascontiguousarray(a)


def _c(a):
    return a if a.flags.c_contiguous else _contiguous(a)


def _in(a):
    """A C-contiguous native operand (bfloat16 as its uint16 bits)."""
    if not a.flags.c_contiguous:
        a = _contiguous(a)
    return a.view(_U16) if a.dtype == _BF16 else a


def _f32(a):
    return a if a.dtype is _F32 and a.flags.c_contiguous else np.ascontiguousarray(a, _F32)


def ew_opcodes() -> dict[str, int]:
    """The elementwise interpreter's opcode numbers by name."""
    return {n: i for i, n in enumerate(C.ew_opcode_names())}


def _rounded(value, dtype) -> float:
    """`value` as the op's reference holds it: a 0-d array of `dtype`, read as float."""
    return float(np.asarray(value, dtype=dtype.np).astype(np.float32))


class _Plans(dict):
    """Resolved geometry per (shapes, attributes); None marks an uncovered case. Bounded:
    cleared when it grows past 1024 entries (shapes of a training loop repeat)."""

    def get_or(self, key, make):
        try:
            p = self.get(key, self)
        except TypeError:  # attributes not in canonical (hashable) form: the reference
            return None
        if p is self:
            try:
                p = make()
            except Exception:  # noqa: BLE001 - the reference reports the problem
                p = None
            if len(self) > 1024:
                self.clear()
            self[key] = p
        return p


def _guarded(kernel, reference):
    """`kernel`, answering with the reference when the native call fails (oneDNN cannot
    build a primitive for an unusual geometry, an argument check in _C disagrees with
    the Python one): the result stays right, and bad input gets the reference's error."""

    def guarded(*args, **attrs):
        try:
            return kernel(*args, **attrs)
        except FwError:
            raise
        except (RuntimeError, ValueError, TypeError):
            return reference(*args, **attrs)

    guarded.__wrapped__ = kernel
    return guarded


def attach(factories: dict[str, Callable], *, when: bool, guard: bool = False) -> None:
    """Attach ``make(op.reference)`` as the cpu kernel of each op in `factories` when
    `when` holds (the extension, or the part of it the kernels call, is loaded); with
    `guard`, native failures answer with the reference (see `_guarded`). Idempotent."""
    FACTORIES.update(factories)
    if not when:
        return
    for name, make in factories.items():
        op = OPS.get(name)
        if op is not None:
            kernel = make(op.reference)
            op.kernels["cpu"] = _guarded(kernel, op.reference) if guard else kernel
