"""Fast cpu kernels of the ``creation`` family (``fw/core/ops/creation.py``): ``cast``
float32 -> bfloat16, the conversion at the edges of the regions the inference pass
``cpu_bfloat16`` makes (the ISA question that pass asks is in ``bf16.py``)."""

from __future__ import annotations

import numpy as np

from fw.core.kernels.cpu._common import C, attach, fused_available

__all__ = ["register"]

# The edges of the bf16 pass's regions convert activations (a ResNet-18 stem output is
# 800K elements). ml_dtypes' astype rounds one element at a time through Python's
# ufunc loop (0.42 ns/element here); the elementwise interpreter's cast (csrc
# fused_elementwise.cpp, vectorised, round to nearest even, NaN kept quiet with its
# sign - the same bits as ml_dtypes, which the records check) takes about half that.
# The other direction is a shift NumPy already does at memory speed: left to it.
_MIN_NATIVE_CAST = 1 << 12  # elements; below, the interpreter's call costs more


def _make_cast(reference):
    from fw.core import dtypes as _dt
    from fw.core.kernels.cpu._common import _F32, _U16, _ndarray, ew_opcodes

    bf16 = _dt.bfloat16
    prog = C.EwProgram(1, [(ew_opcodes()["cast"], 2, 0, -1, -1, 0.0)])
    run, empty = prog.run, np.empty

    def cast_cpu(x, dtype=None):
        if dtype is bf16 and x.__class__ is _ndarray and x.dtype is _F32 and \
                x.size >= _MIN_NATIVE_CAST and x.flags.c_contiguous:
            out = empty(x.shape, _U16)
            run([x], [0], 0, out)
            return out.view(bf16.np)
        return reference(x, dtype=dtype)

    return cast_cpu


def register() -> None:
    attach({"cast": _make_cast}, when=fused_available)


register()
