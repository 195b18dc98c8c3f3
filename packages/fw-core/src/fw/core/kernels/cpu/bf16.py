"""bfloat16 on the CPU: whether this CPU runs bfloat16 products natively (what the
inference pass ``cpu_bfloat16``, :mod:`fw.core.ir.passes.cpu_bfloat16`, asks before it
rewrites a program), and the native ``cast`` float32 -> bfloat16 at the edges of the
regions that pass makes (see below).

oneDNN runs a bf16 matmul or convolution on any AVX-512 CPU, but below
``avx512_core_bf16`` it emulates the bf16 dot products with AVX-512 integer and float
instructions (and on AVX2 fw's matmul falls back to float32 and converts, see
``csrc/matmul.cpp``): slower than float32, so bf16 only pays where the CPU has the
``vdpbf16ps`` instruction (AVX512_BF16: Cooper Lake, Sapphire Rapids, AMD Zen 4 and
later) or AMX tiles. The question is put to oneDNN itself
(``dnnl::get_effective_cpu_isa``, through the native extension): it is what picks the
kernels, and it honours ``ONEDNN_MAX_CPU_ISA`` (so a user who caps the ISA for oneDNN
caps it for this test too), where ``/proc/cpuinfo`` would not. Paddle Inference makes the
same check (``MayIUse(avx512_bf16)`` is its "fast performance" test,
``supports_bfloat16_fast_performance``).
"""

from __future__ import annotations

import numpy as np

from fw.core.kernels.cpu._common import C, attach, fused_available

__all__ = ["cpu_isa", "NATIVE_BF16_ISAS", "native_bf16", "register"]

#: oneDNN's ISA names (``dnnl::cpu_isa``) at or above which bf16 dot products are native
NATIVE_BF16_ISAS = frozenset({"avx512_core_bf16", "avx512_core_fp16", "avx512_core_amx",
                              "avx512_core_amx_fp16"})


def cpu_isa() -> str:
    """oneDNN's effective ISA on this CPU (``"avx2"``, ``"avx512_core_bf16"``, ...), or
    ``""`` when the native extension is not loaded.

    Returns:
        str: the name of ``dnnl::get_effective_cpu_isa()``.

    Examples:
        >>> import fw
        >>> from fw.core.kernels.cpu.bf16 import cpu_isa
        >>> isinstance(cpu_isa(), str)
        True
    """
    return "" if C is None else C.int8_cpu_isa()


def native_bf16(isa: str | None = None) -> bool:
    """Whether oneDNN runs bfloat16 dot products natively on this CPU (``isa``: a oneDNN
    ISA name to judge instead of this CPU's).

    Args:
        isa (str, optional): an ISA name as `cpu_isa` returns it. Default: this CPU's.

    Returns:
        bool: True for AVX512_BF16, AVX512_FP16 or AMX; False otherwise (AVX2, plain
        AVX-512, no native extension).

    Examples:
        >>> import fw
        >>> from fw.core.kernels.cpu.bf16 import native_bf16
        >>> native_bf16("avx2"), native_bf16("avx512_core_bf16")
        (False, True)
    """
    return (cpu_isa() if isa is None else isa) in NATIVE_BF16_ISAS


# ---------------------------------------------------------------- cast float32 -> bf16
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
