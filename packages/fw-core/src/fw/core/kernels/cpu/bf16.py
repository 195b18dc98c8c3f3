"""bfloat16 on the CPU: whether this CPU runs bfloat16 products natively (what the
inference pass ``cpu_bfloat16``, :mod:`fw.core.ir.passes.cpu_bfloat16`, asks before it
rewrites a program). The native ``cast`` float32 -> bfloat16 at the edges of the
regions that pass makes is ``cast``'s kernel, in its family's module (``creation.py``).

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

from fw.core.kernels.cpu._common import C

__all__ = ["cpu_isa", "NATIVE_BF16_ISAS", "native_bf16"]

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
