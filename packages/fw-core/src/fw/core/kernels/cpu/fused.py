"""cpu kernels of the fused family (``fw.core.ops.fused``, what the fusion passes emit):
``fused_elementwise`` (own C++ interpreter), ``fused_matmul`` and ``fused_conv``
(oneDNN with post-ops).

- **fused_elementwise**: programs over bool/float16/bfloat16/float32 values (any
  float64 value keeps the NumPy reference) are compiled once per program tuple into
  an ``EwProgram`` and run in L1-sized tiles on both cores. Inputs must have the
  result's size (full), one element (scalar) or be one row of the last dimension
  (a bias); other broadcasts and 0-size results use the reference. Registered only
  when the CPU has AVX2/FMA/F16C (``_C.fused_supported()``).
- **fused_matmul**: float32/bfloat16 through ``fw.core._native.matmul`` (oneDNN with
  bias, activation and residual post-ops) from about 64x64x64 on, with the same
  small-problem crossover as :mod:`fw.core.kernels.cpu.linalg`. ``alpha`` scales the
  smaller operand first (exact for powers of two, otherwise within float rounding of
  the reference); a residual that broadcasts (rather than having the product's shape),
  float16/float64 and small products use the reference.
- **fused_conv**: as ``conv`` (:mod:`fw.core.kernels.cpu.conv`) with the bias,
  activation and residual as oneDNN post-ops; a residual that broadcasts goes to NumPy.

The activations of fused_matmul and fused_conv are the table of
:mod:`fw.core._epilogue`.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from fw.core import _epilogue, _native
from fw.core import dtypes as _dt
from fw.core.ir.types import TensorType
from fw.core.kernels.checked import is_remembered, remember
from fw.core.kernels.cpu._common import (
    _BF16,
    _F32,
    _U16,
    C,
    _bits,
    _float,
    _in,
    _ndarray,
    _rounded,
    attach,
    ew_opcodes,
    fused_available,
)
from fw.core.kernels.cpu.conv import _conv_plan, _conv_plans
from fw.core.kernels.frozen import stamp
from fw.core.ops._registry import OPS
from fw.core.tensor import array_version

__all__ = ["compile_program", "register"]

_EW_DT = {_dt.bool_: 0, _dt.float16: 1, _dt.bfloat16: 2, _dt.float32: 3}
_EW_NP = frozenset(d.np for d in _EW_DT)
_EW_CACHE_MAX = 4096


def compile_program(program, n_inputs):
    """The `_C.EwProgram` of a (validated) fused_elementwise program, or None when it
    computes on float64 values (left to the NumPy reference)."""
    names = ew_opcodes()
    code = []
    for opcode, dtype, operands, scalars in program:
        dc = _EW_DT.get(dtype)
        if dc is None:
            return None
        imm = 0.0
        name = opcode
        if opcode == "gelu":
            name = "gelu_tanh" if scalars[0] else "gelu_erf"
        elif opcode in ("const", "pow"):
            imm = _rounded(scalars[0], dtype)
        ops = tuple(operands) + (-1,) * (3 - len(operands))
        code.append((names[name], dc, *ops, imm))
    return C.EwProgram(n_inputs, code)


def _make_fused_elementwise(reference):
    from fw.core.ops.fused import check_program

    cache: dict = {}  # (id(program), out_dtype, input dtypes) -> (program, EwProgram|None)
    full_kinds: dict = {}
    broadcast_shapes = np.broadcast_shapes
    prod = math.prod

    def prepare(inputs, program, out_dtype, key):
        # validates exactly as the reference does (raises its errors)
        check_program([TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in inputs], program,
                      out_dtype)
        native = None
        if all(a.dtype in _EW_NP for a in inputs):
            native = compile_program(program, len(inputs))
        if len(cache) >= _EW_CACHE_MAX:
            cache.clear()
        ent = cache[key] = (program, native)
        return ent

    def fused_elementwise_cpu(inputs, program=(), out_dtype=None):
        if not inputs or not all(type(a) is _ndarray for a in inputs):
            return reference(inputs, program=program, out_dtype=out_dtype)
        key = (id(program), out_dtype, *[a.dtype for a in inputs])
        ent = cache.get(key)
        if ent is None or ent[0] is not program:
            ent = prepare(inputs, program, out_dtype, key)
        prog = ent[1]
        if prog is None:
            return reference(inputs, program=program, out_dtype=out_dtype)
        n = len(inputs)
        shape = inputs[0].shape
        if all(a.shape == shape for a in inputs):
            kinds = full_kinds.get(n) or full_kinds.setdefault(n, [0] * n)
            size = prod(shape)
            row = 0
        else:
            try:
                shape = broadcast_shapes(*[a.shape for a in inputs])
            except ValueError:
                return reference(inputs, program=program, out_dtype=out_dtype)
            size = prod(shape)
            row = shape[-1] if shape else 1
            kinds = []
            for a in inputs:
                s = a.size
                if s == size:
                    kinds.append(0)
                elif s == 1:
                    kinds.append(1)
                elif s == row and a.shape[-1] == row and row <= 65536:
                    kinds.append(2)
                else:  # another broadcast: the reference
                    return reference(inputs, program=program, out_dtype=out_dtype)
        if size == 0:
            return reference(inputs, program=program, out_dtype=out_dtype)
        arrays = []
        for a, k in zip(inputs, kinds):
            if k != 1 and not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            arrays.append(a.view(_U16) if a.dtype == _BF16 else a)
        out = np.empty(shape, dtype=out_dtype.np)
        prog.run(arrays, kinds, row, out.view(_U16) if out.dtype == _BF16 else out)
        return out

    fused_elementwise_cpu.cache = cache
    return fused_elementwise_cpu


# ================================================================ non-finite values
# oneDNN's fused epilogues do not follow NumPy on NaN/Inf (its relu post-op maps NaN to 0
# on some kernels, its gelu_erf maps -inf to 0 where the unfused chain gives NaN, a
# residual added after inf * 0 ...). The promise (docs/reliability.md) is that a fused
# op gives exactly what the unfused eager ops give, NaN/Inf included: when an input or
# the native result holds a non-finite value, the fused kernels recompute with the
# unfused chain, each op on its own cpu kernel, as eager mode runs it.
#
# What finite data (the hot path) pays: one vectorised pass over the result, and over
# the operands only where the result cannot tell. A matmul without activation needs no
# operand pass: a NaN or infinity in x, y, the bias or the residual always reaches the
# result (inf * 0 is NaN, NaN + anything is NaN). An activation can hide one (relu(NaN)
# is 0 on some oneDNN kernels), and so can a convolution's padding, so those check the
# operands too. A large operand that comes back call after call (a Predictor's
# weights: 784x256 floats cost more to scan than the batch-1 product takes) is
# remembered as finite per array object until fw's in-place version counter of its
# memory moves (every fw in-place op and optimizer update bumps it; a write through a
# raw NumPy view of the weights does not, and is not seen here).
#
# A convolution without activation needs no pass over x either: every input element it
# reads reaches some output through a product (NaN * 0 is NaN), and a sum with a
# non-finite term is non-finite. What its padding can hide is a non-finite *weight*
# (the reference multiplies the zero padding by it, oneDNN skips the padding), so the
# weight is checked (once per frozen weight, see below).
#
# The operand of one fused call is usually the result of the previous one (a CNN's
# conv chain, an MLP), which was scanned a moment ago: the last result that passed its
# checks is remembered per thread (fw.core.kernels.checked) and not scanned again as
# the next call's operand (MobileNetV2 b1: its activations are scanned once instead of
# twice; the x and result scans cost ~1.5 ms of a 12 ms run before).
_REMEMBER_FROM = 1 << 14  # elements: smaller operands are scanned (cheaper than a lookup)
_known_finite: dict = {}  # id(array) -> (weakref to it, its version when scanned)
# A frozen array (fw.core.kernels.frozen: a predictor's weights, hoisted constants) never
# changes while it holds its stamp, and a stamp is never reused: its scan is kept by stamp,
# whatever its size (a conv's 2,400 weights were rescanned on every call of LeNet's conv2).
_frozen_finite: dict = {}  # stamp -> bool
_FROZEN_MAX = 1 << 14


def _scan(a) -> bool:
    # float32 C-contiguous (the common case) goes straight to the native scan
    return C.all_finite(a if a.dtype is _F32 and a.flags.c_contiguous else _in(a))


def _finite_operand(a) -> bool:
    if is_remembered(a):
        return True
    s = stamp(a)
    if s:
        r = _frozen_finite.get(s)
        if r is None:
            if len(_frozen_finite) >= _FROZEN_MAX:
                _frozen_finite.clear()
            r = _frozen_finite[s] = _scan(a)
        return r
    if a.size < _REMEMBER_FROM:
        return _scan(a)
    key = id(a)
    rec = _known_finite.get(key)
    version = array_version(a)
    if rec is not None and rec[0]() is a and rec[1] == version:
        return True
    if not _scan(a):
        return False
    try:
        ref = weakref.ref(a, lambda _r, k=key: _known_finite.pop(k, None))
    except TypeError:  # an array type without weak references: scanned every call
        return True
    _known_finite[key] = (ref, version)
    return True


def _finite(out, *operands) -> bool:
    """Whether the native result and the operands (None: absent) are all finite."""
    if not _scan(out):
        return False
    for a in operands:
        if a is not None and not _finite_operand(a):
            return False
    remember(out)
    return True


def _kernel(name):
    op = OPS[name]
    return op.kernels.get("cpu", op.reference)


def _activate(v, activation):
    act = _epilogue.BY_NAME[_epilogue.canonical(activation)]
    if act.op is None:
        return v
    return _kernel(act.op)(v, **{**OPS[act.op].attrs, **dict(act.attrs)})


def _unfused_matmul(x, y, bias, residual, transpose_x, transpose_y, activation, alpha):
    v = _kernel("matmul")(x, y, transpose_x, transpose_y)
    if alpha != 1.0:
        v = _kernel("multiply")(v, np.full((), alpha, v.dtype))
    if bias is not None:
        v = _kernel("add")(v, bias)
    v = _activate(v, activation)
    return v if residual is None else _kernel("add")(v, residual)


def _unfused_conv(x, weight, bias, residual, activation, conv_attrs):
    op = OPS["conv"]
    v = _activate(_kernel("conv")(x, weight, bias, **op.canon({**op.attrs, **conv_attrs})),
                  activation)
    return v if residual is None else _kernel("add")(v, residual)


# ================================================================ fused_matmul
def _make_fused_matmul(reference):
    native = _native.matmul
    threshold = _native.NUMPY_FASTER_BELOW_FLOPS

    def product_shape(x, y, tx, ty):
        """The product's shape, or None when the reference must decide (errors)."""
        k = (x.shape[-2] if tx else x.shape[-1]) if x.ndim >= 2 else x.shape[-1]
        if k != (y.shape[-1] if ty else y.shape[-2]):
            return None
        n = y.shape[-2] if ty else y.shape[-1]
        if x.ndim == 1:
            return (*y.shape[:-2], n)
        try:
            batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        except ValueError:
            return None
        return (*batch, x.shape[-1] if tx else x.shape[-2], n)

    def fused_matmul_cpu(x, y, bias=None, residual=None, transpose_x=False, transpose_y=False,
                         activation="none", alpha=1.0):
        d = x.dtype
        if type(x) is _ndarray and type(y) is _ndarray and (d is _F32 or d == _BF16) and \
                y.dtype == d and y.ndim >= 2 and x.ndim >= 1 and x.size and y.size and \
                (bias is None or bias.dtype == d) and (residual is None or residual.dtype == d):
            n = y.shape[-2] if transpose_y else y.shape[-1]
            if 2 * x.size * n >= threshold:
                shape = product_shape(x, y, transpose_x, transpose_y)
                if shape is not None and \
                        (residual is None or residual.shape == shape) and \
                        (bias is None or (bias.size == n and 1 <= bias.ndim <= len(shape) and
                                          bias.shape[-1] == n)):
                    x0, y0 = x, y
                    if alpha != 1.0:  # alpha (x @ y) == (alpha x) @ y: scale the smaller one
                        if x.size <= y.size:
                            x = x * np.asarray(alpha, dtype=d)
                        else:
                            y = y * np.asarray(alpha, dtype=d)
                    out = native(x, y, transpose_x, transpose_y,
                                 bias=None if bias is None else bias.reshape(-1),
                                 activation=None if activation == "none" else activation,
                                 residual=residual)
                    if activation == "none":
                        if _scan(out):
                            remember(out)
                            return out
                    elif _finite(out, x0, y0, bias, residual):
                        return out
                    return _unfused_matmul(x0, y0, bias, residual, transpose_x, transpose_y,
                                           activation, alpha)
        return reference(x, y, bias, residual, transpose_x=transpose_x, transpose_y=transpose_y,
                         activation=activation, alpha=alpha)

    return fused_matmul_cpu



def _make_fused_conv(reference):
    def fused_conv_cpu(x, weight, bias=None, residual=None, stride=1, padding=0, dilation=1,
                       groups=1, channel_last=False, activation="none"):
        d = x.dtype
        if _float(d) and weight.dtype == d and (
                bias is None or (bias.dtype == d and bias.ndim == 1)) and (
                residual is None or residual.dtype == d):
            key = (x.shape, weight.shape, bias is None, stride, padding, dilation, groups,
                   channel_last)
            p = _conv_plans.get_or(key, lambda: _conv_plan(
                x.shape, weight.shape, None if bias is None else bias.shape, stride, padding,
                dilation, groups, channel_last))
            # the residual must have the result's shape (a broadcast one goes to NumPy)
            if p is not None and (residual is None or residual.shape == p[0]):
                out = np.empty(p[0], d)
                # one contiguous copy of a strided input (the NCHW -> NHWC transpose in
                # front of a network's stem): the native call and the scan share it
                xc = _in(x)
                C.conv_forward(xc, _in(weight), _bits(out),
                               None if bias is None else _in(bias),
                               None if residual is None else _in(residual), activation,
                               p[1], p[2], p[3], p[4], groups, channel_last, stamp(weight))
                # non-finite data: the unfused chain decides (see _unfused_conv); without
                # an activation only the result and the weight tell (see above)
                if activation == "none":
                    if _finite(out, weight):
                        return out
                elif _finite(out, xc if xc.dtype == d else x, weight, bias, residual):
                    return out
                return _unfused_conv(x, weight, bias, residual, activation,
                                     {"stride": stride, "padding": padding,
                                      "dilation": dilation, "groups": groups,
                                      "channel_last": channel_last})
        return reference(x, weight, bias, residual, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, channel_last=channel_last,
                         activation=activation)

    return fused_conv_cpu



def register() -> None:
    attach({"fused_elementwise": _make_fused_elementwise, "fused_matmul": _make_fused_matmul},
           when=fused_available)
    attach({"fused_conv": _make_fused_conv}, when=_native.available, guard=True)


register()
