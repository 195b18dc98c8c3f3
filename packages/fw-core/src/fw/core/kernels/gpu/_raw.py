"""What the RawKernel families (conv, pool, softmax, norm) share: the switch that turns
each fast kernel off, the dtypes they take, the CUDA preamble that loads and stores
them, and the compiled-module cache.

The switch (read when the gpu backend attaches its kernels):

- ``FW_GPU_RAW=0`` turns every RawKernel of these families off: their ops run the
  NumPy reference on CuPy arrays, the path the device tests verified first;
- ``FW_GPU_DISABLE=conv,max_pool_grad`` turns off single ops or whole families (an op
  name, or a module name: ``conv``, ``pool``, ``softmax``, ``norm``);
- ``DEFAULT_OFF`` lists kernels that are off unless ``FW_GPU_ENABLE`` names them: a
  kernel that failed on a GPU stays there until a run verifies its fix.

The CUDA source is header-free (NVRTC with no include path): float16 converts through
PTX ``cvt`` and bfloat16 through its bits, so the same source compiles with any CUDA
toolkit CuPy was built for. Every kernel is compiled once per dtype (one module per
(family, dtype), cached for the process).
"""

from __future__ import annotations

import functools
import os
import re
import warnings

import ml_dtypes
import numpy as np

__all__ = ["DEFAULT_OFF", "FAILURES", "enabled", "ctype", "PREAMBLE", "module", "available",
           "blocks", "memo"]

# kernels a GPU run found wrong, off until a later run verifies them (op names)
DEFAULT_OFF: frozenset = frozenset()

_BF16 = np.dtype(ml_dtypes.bfloat16)
# storage type, accumulation type of each dtype the kernels take
_CTYPES = {np.dtype(np.float32): ("float", "float"), np.dtype(np.float64): ("double", "double"),
           np.dtype(np.float16): ("fw_h16", "float"), _BF16: ("fw_b16", "float")}


def _names(v):
    return {s.strip() for s in (v or "").split(",") if s.strip()}


def enabled(op: str, family: str, env=None) -> bool:
    """Whether the fast kernel of `op` (in module `family`) is on under the switches
    of this module's docstring (`env`: os.environ by default)."""
    env = os.environ if env is None else env
    if env.get("FW_GPU_RAW", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    off = _names(env.get("FW_GPU_DISABLE"))
    if op in off or family in off:
        return False
    if op in DEFAULT_OFF:
        on = _names(env.get("FW_GPU_ENABLE"))
        return op in on or family in on
    return True


def ctype(dtype):
    """(storage C type, accumulation C type) of a NumPy dtype, or None when the
    kernels do not take it (the op then runs its reference)."""
    return _CTYPES.get(np.dtype(dtype))


PREAMBLE = r"""
struct fw_h16 { unsigned short x; };
struct fw_b16 { unsigned short x; };
typedef long long i64;

__device__ __forceinline__ float fw_ld(const float* p, i64 i) { return p[i]; }
__device__ __forceinline__ double fw_ld(const double* p, i64 i) { return p[i]; }
__device__ __forceinline__ float fw_ld(const fw_h16* p, i64 i) {
    float f; unsigned short h = p[i].x;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ float fw_ld(const fw_b16* p, i64 i) {
    return __uint_as_float(((unsigned int)p[i].x) << 16);
}
__device__ __forceinline__ void fw_st(float* p, i64 i, float v) { p[i] = v; }
__device__ __forceinline__ void fw_st(double* p, i64 i, double v) { p[i] = v; }
__device__ __forceinline__ void fw_st(fw_h16* p, i64 i, float v) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    p[i].x = h;
}
__device__ __forceinline__ void fw_st(fw_b16* p, i64 i, float v) {
    unsigned int u = __float_as_uint(v);
    unsigned short r;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        r = (unsigned short)((u >> 16) | 0x40u);  /* NaN stays a quiet NaN */
    } else {
        r = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  /* to nearest even */
    }
    p[i].x = r;
}
__device__ __forceinline__ float fw_exp(float v) { return expf(v); }
__device__ __forceinline__ double fw_exp(double v) { return exp(v); }
__device__ __forceinline__ float fw_log(float v) { return logf(v); }
__device__ __forceinline__ double fw_log(double v) { return log(v); }
__device__ __forceinline__ float fw_sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double fw_sqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float fw_ninf(float) { return -__int_as_float(0x7f800000); }
__device__ __forceinline__ double fw_ninf(double) {
    return -__longlong_as_double(0x7ff0000000000000LL);
}
__device__ __forceinline__ float fw_max(float a, float b) { return a > b ? a : b; }
__device__ __forceinline__ double fw_max(double a, double b) { return a > b ? a : b; }
"""

_MODULES: dict = {}
# (array module name, family, dtype) -> why its source did not compile: the family's
# ops then run the reference for that dtype (the tests fail on any entry)
FAILURES: dict = {}


def module(cp, family: str, dtype, source: str):
    """The RawModule of `source` (a family's kernels, written against the typedefs
    ``T`` (storage) and ``A`` (accumulation)) for `dtype`, compiled once."""
    # (keyed by the array module too: the CPU tests compile these sources for an
    # emulator that stands in for CuPy)
    key = (getattr(cp, "__name__", type(cp).__name__), family, _key(dtype))
    mod = _MODULES.get(key)
    if mod is None:
        st, acc = ctype(dtype)
        code = f"{PREAMBLE}\ntypedef {st} T;\ntypedef {acc} A;\n{source}"
        mod = _Module(cp.RawModule(code=code))
        _MODULES[key] = mod
    return mod


class _Module:
    """A compiled module whose functions are looked up once (CuPy makes a new
    Function object per get_function call)."""

    def __init__(self, raw):
        self.raw = raw
        self.functions: dict = {}

    def get_function(self, name):
        f = self.functions.get(name)
        if f is None:
            f = self.functions[name] = self.raw.get_function(name)
        return f


def available(cp, family: str, dtype, source: str) -> bool:
    """Whether `family`'s kernels compiled for `dtype` (compiling them on first use).
    A compile failure is recorded in `FAILURES`, warned about once, and makes the
    family's ops run the reference for that dtype instead of failing."""
    key = (getattr(cp, "__name__", type(cp).__name__), family, _key(dtype))
    if key in FAILURES:
        return False
    if key in _MODULES:
        return True
    try:
        mod = module(cp, family, dtype, source)
        name = re.search(r'extern "C" __global__ void (\w+)', source).group(1)
        mod.get_function(name)  # CuPy compiles the module here
        return True
    except Exception as e:  # NVRTC's CompileException, a missing driver function, ...
        _MODULES.pop(key, None)
        FAILURES[key] = f"{type(e).__name__}: {e}"[:2000]
        warnings.warn(f"fw gpu kernels: the {family} kernels did not compile for "
                      f"{np.dtype(dtype).name} ({type(e).__name__}); their ops run the "
                      f"reference", RuntimeWarning, stacklevel=2)
        return False


def _key(dtype):
    d = np.dtype(dtype)
    return "bf16" if d == _BF16 else d.str


def memo(fn):
    """`fn` cached on its arguments (plans are pure functions of shapes and canonical
    attributes; computing one costs tens of microseconds per call), computed afresh
    when an argument is unhashable (a list where a tuple was expected)."""
    cached = functools.lru_cache(maxsize=1024)(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return cached(*args, **kwargs)
        except TypeError as e:
            if "unhashable" not in str(e):
                raise
            return fn(*args, **kwargs)

    call.cache_clear = cached.cache_clear
    return call


def blocks(n: int, threads: int = 256, cap: int = 65536) -> int:
    """Blocks for a grid-stride loop over `n` items (at least 1, at most `cap`)."""
    return max(1, min((int(n) + threads - 1) // threads, cap))
