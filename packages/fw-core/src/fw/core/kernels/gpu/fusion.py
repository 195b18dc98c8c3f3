"""Elementwise chains of a GPU program in one generated CUDA kernel.

Two halves:

- `fw.core.kernels.gpu.program.fuse_program`: what the executor compiles for a
  device (issue 17): fw-core's own ``fuse_elementwise`` pass run on a clone of the
  program, so one ``fused_elementwise`` op replaces each elementwise chain;
- here, the ``fused_elementwise`` gpu kernel: the op's instruction list becomes the body
  of a ``cupy.ElementwiseKernel`` (`cuda_source`), compiled once per program and
  input dtypes and cached here, so a chain costs one launch instead of one per op
  (each op of the reference is a CuPy call of 10-20 us of Python plus a launch).

Only bool/float32/float64 programs are generated: float16/bfloat16 values would be
kept in float32 registers, which the op allows but which is not what the unfused
chain rounds to, and CuPy's elementwise kernels have no bfloat16 type; those, and
anything `cuda_source` cannot express, run the reference (the ops' own kernels in
order). ``FW_GPU_FUSION=0`` turns both halves off.

Each opcode's formula is the one its fw op computes (``fw.core.ops.fused``'s
table), in the same order of operations, in the instruction's own dtype: IEEE
division and square root (CuPy compiles without fast math), NaN propagating
through ``maximum``/``minimum``/``relu`` as NumPy's ``maximum`` does.
"""

from __future__ import annotations

import math
import os

import numpy as np

from fw.core import dtypes as _dt

__all__ = ["enabled", "cuda_source", "Unsupported", "kernels", "attach"]

_CTYPE = {_dt.bool_: "bool", _dt.float32: "float", _dt.float64: "double"}
_PARAM = {_dt.bool_: "bool", _dt.float32: "float32", _dt.float64: "float64"}
# float function names: the f-suffixed single precision ones for float
_FN = {"exp": ("expf", "exp"), "log": ("logf", "log"), "tanh": ("tanhf", "tanh"),
       "sqrt": ("sqrtf", "sqrt"), "abs": ("fabsf", "fabs"), "erf": ("erff", "erf"),
       "pow": ("powf", "pow")}
_CMP = {"equal": "==", "not_equal": "!=", "less_than": "<", "less_equal": "<=",
        "greater_than": ">", "greater_equal": ">="}
_ARITH = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}


class Unsupported(Exception):
    """The program (or an input dtype) has no generated form: run the reference."""


def enabled() -> bool:
    """``FW_GPU_FUSION`` (default on): generated kernels for elementwise chains."""
    return os.environ.get("FW_GPU_FUSION", "1").strip() not in ("0", "false", "False", "")


def _literal(v, dtype) -> str:
    """A C literal of `v` as `dtype` (bit patterns for the non-finite values)."""
    if dtype is _dt.bool_:
        return "true" if v else "false"
    v = float(v)
    if dtype is _dt.float32:
        if math.isnan(v):
            return "__int_as_float(0x7fc00000)"
        if math.isinf(v):
            return "__int_as_float(0x7f800000)" if v > 0 else "__int_as_float(0xff800000)"
        return f"((float){float(np.float32(v))!r})"  # the float32 value, exactly
    if math.isnan(v):
        return "__longlong_as_double(0x7ff8000000000000LL)"
    if math.isinf(v):
        return ("__longlong_as_double(0x7ff0000000000000LL)" if v > 0 else
                "__longlong_as_double(0xfff0000000000000LL)")
    return f"{v!r}"


def _expr(opcode, dtype, a, scalars, in_dtypes) -> str:
    """The C expression of one instruction over the C names `a` of its operands."""
    ct = _CTYPE[dtype]
    f32 = dtype is _dt.float32

    def fn(name):
        return _FN[name][0 if f32 else 1]

    def c(x):  # a constant in the instruction's type
        return _literal(x, dtype)

    if opcode in _ARITH:
        return f"({a[0]} {_ARITH[opcode]} {a[1]})"
    if opcode == "maximum":  # NumPy: the first NaN, else the larger
        return f"(({a[0]} != {a[0]}) ? {a[0]} : (({a[1]} != {a[1]}) ? {a[1]} : " \
               f"(({a[0]} >= {a[1]}) ? {a[0]} : {a[1]})))"
    if opcode == "minimum":
        return f"(({a[0]} != {a[0]}) ? {a[0]} : (({a[1]} != {a[1]}) ? {a[1]} : " \
               f"(({a[0]} <= {a[1]}) ? {a[0]} : {a[1]})))"
    if opcode in _CMP:
        return f"({a[0]} {_CMP[opcode]} {a[1]})"
    if opcode == "neg":
        return f"(-{a[0]})"
    if opcode in ("exp", "log", "tanh", "sqrt", "abs"):
        return f"{fn(opcode)}({a[0]})"
    if opcode == "rsqrt":
        return f"({c(1.0)} / {fn('sqrt')}({a[0]}))"
    if opcode == "sigmoid":  # 1 / (1 + e^-x): e^-x = inf gives 0, the right limit
        return f"({c(1.0)} / ({c(1.0)} + {fn('exp')}(-{a[0]})))"
    if opcode == "silu":  # x * sigmoid(x), in that order
        return f"({a[0]} * ({c(1.0)} / ({c(1.0)} + {fn('exp')}(-{a[0]}))))"
    if opcode == "relu":  # np.maximum(x, 0): NaN stays NaN
        return f"(({a[0]} != {a[0]}) ? {a[0]} : (({a[0]} >= {c(0.0)}) ? {a[0]} : {c(0.0)}))"
    if opcode == "gelu":
        if scalars[0]:  # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x * x * x)))
            k = c(math.sqrt(2.0 / math.pi))
            return (f"(({c(0.5)} * {a[0]}) * ({c(1.0)} + {fn('tanh')}({k} * ({a[0]} + "
                    f"(({c(0.044715)} * {a[0]}) * {a[0]}) * {a[0]}))))")
        return (f"(({c(0.5)} * {a[0]}) * ({c(1.0)} + {fn('erf')}({a[0]} * "
                f"{c(1.0 / math.sqrt(2.0))})))")
    if opcode == "pow":
        # NumPy's power has fast paths for these exponents (square, sqrt, reciprocal),
        # which differ from pow() at the edges (pow(-inf, 0.5) is inf, sqrt(-inf) NaN)
        e = float(scalars[0])
        if e == 1.0:
            return f"({a[0]})"
        if e == 2.0:
            return f"({a[0]} * {a[0]})"
        if e == 0.5:
            return f"{fn('sqrt')}({a[0]})"
        if e == -1.0:
            return f"({c(1.0)} / {a[0]})"
        return f"{fn('pow')}({a[0]}, {c(e)})"
    if opcode == "where":
        return f"({a[0]} ? {a[1]} : {a[2]})"
    if opcode == "cast":
        src = in_dtypes[0]
        if dtype is _dt.bool_:
            return f"({a[0]} != 0)"
        if src is _dt.bool_:
            return f"({a[0]} ? {c(1.0)} : {c(0.0)})"
        return f"(({ct}){a[0]})"
    raise Unsupported(f"opcode {opcode!r} has no CUDA form")


def cuda_source(program, in_dtypes, out_dtype):
    """(in_params, out_params, body) of the ``cupy.ElementwiseKernel`` computing a
    ``fused_elementwise`` program over inputs of `in_dtypes` (fw DTypes); raises
    `Unsupported` for dtypes or opcodes without a generated form."""
    for d in list(in_dtypes) + [out_dtype] + [ins[1] for ins in program]:
        if d not in _CTYPE:
            raise Unsupported(f"dtype {d.name} is not generated (bool/float32/float64 are)")
    n = len(in_dtypes)
    dtypes = list(in_dtypes)
    lines = []
    for i, d in enumerate(in_dtypes):
        lines.append(f"const {_CTYPE[d]} v{i} = x{i};")
    for k, (opcode, dtype, operands, scalars) in enumerate(program):
        names = [f"v{i}" for i in operands]
        if opcode == "const":
            e = _literal(scalars[0], dtype)
        else:
            e = _expr(opcode, dtype, names, scalars, [dtypes[i] for i in operands])
        lines.append(f"const {_CTYPE[dtype]} v{n + k} = {e};")
        dtypes.append(dtype)
    lines.append(f"y = v{n + len(program) - 1};")
    in_params = ", ".join(f"{_PARAM[d]} x{i}" for i, d in enumerate(in_dtypes))
    return in_params, f"{_PARAM[out_dtype]} y", "\n".join(lines)


def kernels(cp):
    """{"fused_elementwise": the generated-kernel form} for CuPy module `cp`."""
    from fw.core.ops._registry import OPS

    ref = OPS["fused_elementwise"].reference
    cache: dict = {}  # (id(program), input dtypes) -> (program, kernel or None)

    def fused_elementwise(inputs, program=(), out_dtype=None):
        if not enabled() or not inputs:
            return ref(inputs, program=program, out_dtype=out_dtype)
        key = (id(program), tuple(a.dtype for a in inputs))
        hit = cache.get(key)
        if hit is None or hit[0] is not program:
            kern = None
            try:
                ref_check(inputs, program, out_dtype)
                ins = [_dt.from_numpy(a.dtype) for a in inputs]
                src = cuda_source(program, ins, out_dtype)
                kern = cp.ElementwiseKernel(*src, f"fw_fused_{len(cache)}")
            except Unsupported:
                pass
            if len(cache) > 1024:
                cache.clear()
            hit = cache[key] = (program, kern)
        kern = hit[1]
        if kern is None:
            return ref(inputs, program=program, out_dtype=out_dtype)
        return kern(*inputs)

    return {"fused_elementwise": fused_elementwise}


def ref_check(inputs, program, out_dtype):
    """The reference's validation of a program for these inputs (errors name it)."""
    from fw.core.ir.types import TensorType
    from fw.core.ops.fused import check_program

    check_program([TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in inputs], program,
                  out_dtype)


def attach(be) -> None:
    """Register the kernel on the op table (called by `fw.core.kernels.gpu.attach` when
    the gpu backend is made)."""
    from fw.core.ops._registry import OPS

    for name, fn in kernels(be.cp).items():
        OPS[name].kernels["gpu"] = fn
