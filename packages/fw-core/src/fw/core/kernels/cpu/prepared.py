"""Prepared cpu kernels: one op of a compiled program, its attributes bound, its
geometry resolved once per input shape (what `fw.core.ir.executor.Compiled` runs with
``prepare=True``; a predictor's steady path).

Why: the table's kernels serve every caller (eager ops, traced programs, any attribute
form), so each call re-reads its keyword attributes, builds a plan key, looks it up and
re-checks what the program's types already say. On LeNet at batch 1 (a 50 us run) that
Python was about 5 us per convolution and 2 us per pool, as much as the oneDNN work.
A prepared kernel is made for one op at compile time: the generated code calls it with
the operands only; it keeps the geometry of the shapes it has seen (one dict lookup by
the input's shape) and calls the native kernel directly. As in TVM's or ONNX Runtime's
"prepared" kernels (their kernel objects are created once per node with the node's
attributes), the work that depends only on the node is done when the node is compiled.

What stays the same: the numbers (the same native calls, or the same NumPy steps as the
reference for small products), the NaN/Inf rule of the fused kernels (docs/reliability.md
§2: the result is scanned, the operands where the result cannot tell, through the same
helpers of :mod:`fw.core.kernels.cpu.fused`), and every other case: a dtype, shape or
layout the prepared kernel does not cover, a native failure or a non-finite value goes to
the op's table kernel with the bound attributes, which answers as it always did.

`prepare(op, kernel)` returns None for ops without a preparer; the executor then calls
the table kernel with keyword attributes as before.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fw.core import _native
from fw.core.kernels.checked import remember
from fw.core.kernels.cpu._common import _BF16, _F32, C, _contiguous, _ndarray
from fw.core.kernels.cpu.conv import _conv_plan
from fw.core.kernels.cpu.fused import _finite_operand, _frozen_finite, _scan
from fw.core.kernels.cpu.pool import _adaptive_plan, _pool_plan
from fw.core.kernels.frozen import stamp
from fw.core.ops._shape_np import _flatten_shape

__all__ = ["prepare", "PREPARERS", "FINITE_PRESERVING", "unchecked_ops", "all_finite",
           "conv_plan_impls"]

_GEOMETRIES_MAX = 64  # input shapes kept per op (a predictor sees a few batch sizes)
_NATIVE_ERRORS = (RuntimeError, ValueError, TypeError)
_empty = np.empty


def _geometry_cache(make):
    """``get(shape) -> geometry or None`` remembering `make(shape)` per shape (None when
    `make` declines or raises: the table kernel then decides, with its own errors)."""
    cache: dict = {}

    def get(shape):
        g = cache.get(shape, cache)
        if g is cache:
            try:
                g = make(shape)
            except Exception:  # noqa: BLE001 - the table kernel reports the problem
                g = None
            if len(cache) >= _GEOMETRIES_MAX:
                cache.clear()
            cache[shape] = g
        return g

    get.cache = cache  # for conv_plan_impls
    return get


#: whether prepared convolutions bind a ``C.ConvPlan`` per input shape (read when a
#: kernel is prepared; False: ``C.conv_forward`` per call, for the asv with/without)
USE_CONV_PLAN = True


def _bound_conv(geometry, wshape, has_bias, has_residual, act, groups, cl):
    """``make(x_shape) -> (out_shape, plan) or None``: the conv geometry of an input shape
    and, where the native module has it, a ``C.ConvPlan`` bound to it (the attributes,
    the geometry and the activation converted and checked once, instead of the 13
    arguments of ``C.conv_forward`` on every call; None: ``conv_forward`` then)."""
    plan_cls = getattr(C, "ConvPlan", None) if USE_CONV_PLAN else None

    def make(xs):
        p = geometry(xs)
        if p is None:
            return None
        plan = None
        if plan_cls is not None:
            plan = plan_cls(list(xs), list(wshape), list(p[0]), has_bias, has_residual, act,
                            p[1], p[2], p[3], p[4], groups, cl)
        return p, plan

    return make


def _float32_op(op) -> bool:
    return bool(op.results) and op.results[0].type.dtype.np == _F32 and all(
        v is None or v.type.dtype.np == _F32 for v in op.operands)


# ---------------------------------------------------------------- fused_conv
def _prep_fused_conv(op, kernel, checked=True):
    if C is None or not _float32_op(op):
        return None
    a = dict(op.attrs)
    act, groups, cl = a["activation"], a["groups"], a["channel_last"]
    wshape = op.operands[1].type.shape
    bshape = None if op.operands[2] is None else op.operands[2].type.shape
    if -1 in wshape or (bshape is not None and -1 in bshape):
        return None
    has_bias, has_res = op.operands[2] is not None, op.operands[3] is not None
    geo = _geometry_cache(_bound_conv(
        lambda xs: _conv_plan(xs, wshape, bshape, a["stride"], a["padding"], a["dilation"],
                              groups, cl), wshape, has_bias, has_res, act, groups, cl))
    conv_forward = C.conv_forward
    plain = act == "none"
    # the frozen (read-only, stamped) weight and bias last found finite, with the
    # weight's stamp: a predictor passes the same two arrays on every call
    known = [None, None, 0]

    def fused_conv_prepared(x, weight, bias=None, residual=None):
        pp = geo(x.shape) if x.__class__ is _ndarray and x.dtype is _F32 else None
        if pp is None:
            return kernel(x, weight, bias, residual, **a)
        p, plan = pp
        if weight.shape != wshape or weight.dtype is not _F32 or (
                residual is not None and (residual.shape != p[0] or residual.dtype is not _F32
                                          or not residual.flags.c_contiguous)) or (
                bias is not None and bias.dtype is not _F32) or not weight.flags.c_contiguous:
            return kernel(x, weight, bias, residual, **a)
        xc = x if x.flags.c_contiguous else _contiguous(x)
        if weight is known[0] and bias is known[1] and not weight.flags.writeable and (
                bias is None or not bias.flags.writeable):
            s, wb_finite = known[2], True  # still frozen (stamp() asks the same flag)
        else:
            s, wb_finite = stamp(weight), None
        out = _empty(p[0], _F32)
        try:
            if plan is not None and (bias is not None) == has_bias and (
                    residual is not None) == has_res:
                plan(xc, weight, out, bias, residual, s)
            else:
                conv_forward(xc, weight, out, bias, residual, act, p[1], p[2], p[3], p[4],
                             groups, cl, s)
        except _NATIVE_ERRORS:
            return kernel(x, weight, bias, residual, **a)
        if not checked:  # operands proven finite (see `unchecked_ops`)
            return out
        if wb_finite is None:
            # the fused kernels' NaN/Inf rule (fw.core.kernels.cpu.fused): the weight
            # always (the padding can hide it), the bias where an activation can
            wb_finite = ((s and _frozen_finite.get(s)) or _finite_operand(weight)) and (
                plain or bias is None or _finite_operand(bias))
            if wb_finite and s and (bias is None or stamp(bias)):
                known[:] = weight, bias, s
        # ... and the result, and the operands an activation could hide
        if wb_finite and _scan(out) and (plain or (
                _finite_operand(xc) and (residual is None or _finite_operand(residual)))):
            remember(out)
            return out
        return kernel(x, weight, bias, residual, **a)  # the unfused chain decides

    fused_conv_prepared.conv_plans = lambda: _plans_of(geo)
    if checked:
        return fused_conv_prepared

    def fused_conv_unchecked(x, weight, bias=None, residual=None):
        # The steady path of a predictor (operands proven finite, no scans): the bound
        # plan checks the arrays against its geometry itself (shapes, float32 without
        # conversion, contiguity), so the Python checks above are not repeated; anything
        # it refuses goes the general way.
        if x.__class__ is _ndarray:
            pp = geo(x.shape)
            if pp is not None and pp[1] is not None:
                out = _empty(pp[0][0], _F32)
                try:
                    pp[1](x if x.flags.c_contiguous else _contiguous(x), weight, out, bias,
                          residual, stamp(weight))
                    return out
                except _NATIVE_ERRORS:
                    pass
        return fused_conv_prepared(x, weight, bias, residual)

    fused_conv_unchecked.conv_plans = fused_conv_prepared.conv_plans
    return fused_conv_unchecked


def _prep_conv(op, kernel, checked=True):
    """A convolution the fusion left alone (bias, no activation or residual): the table
    kernel's one native call, which checks no values either."""
    if C is None or not _float32_op(op):
        return None
    a = dict(op.attrs)
    groups, cl = a["groups"], a["channel_last"]
    wshape = op.operands[1].type.shape
    bshape = None if op.operands[2] is None else op.operands[2].type.shape
    if -1 in wshape or (bshape is not None and -1 in bshape):
        return None
    has_bias = op.operands[2] is not None
    geo = _geometry_cache(_bound_conv(
        lambda xs: _conv_plan(xs, wshape, bshape, a["stride"], a["padding"], a["dilation"],
                              groups, cl), wshape, has_bias, False, "none", groups, cl))
    conv_forward = C.conv_forward

    def conv_prepared(x, weight, bias=None):
        pp = geo(x.shape) if x.__class__ is _ndarray and x.dtype is _F32 else None
        if pp is None or weight.shape != wshape or weight.dtype is not _F32 or (
                bias is not None and bias.dtype is not _F32) or not weight.flags.c_contiguous:
            return kernel(x, weight, bias, **a)
        p, plan = pp
        out = _empty(p[0], _F32)
        xc = x if x.flags.c_contiguous else _contiguous(x)
        try:
            if plan is not None and (bias is not None) == has_bias:
                plan(xc, weight, out, bias, None, stamp(weight))
            else:
                conv_forward(xc, weight, out, bias, None, "none", p[1], p[2], p[3], p[4], groups,
                             cl, stamp(weight))
        except _NATIVE_ERRORS:
            return kernel(x, weight, bias, **a)
        return out

    conv_prepared.conv_plans = lambda: _plans_of(geo)
    return conv_prepared


def _plans_of(geo):
    return [g[1] for g in list(geo.cache.values()) if g is not None and g[1] is not None]


def conv_plan_impls(compiled) -> list:
    """The kernel that each bound convolution (``C.ConvPlan``) of a compiled program runs,
    one entry per (convolution, input shape) it has run: oneDNN's implementation name
    (``"brgconv_1x1:avx512_core"``) or fw's own (``"fw_dw3x3_nhwc:avx512"``), for a
    ``fw.core.ir.executor.Compiled`` made with ``prepare=True``. For diagnostics and
    tests (no oneDNN reference kernel may appear)."""
    ns = getattr(compiled, "_ns", {})
    out = []
    for f in list(ns.values()):
        plans = getattr(f, "conv_plans", None)
        if callable(plans):
            out += [p.impl() for p in plans()]
    return out


# ---------------------------------------------------------------- pools
def _pool_geometry(a):
    return lambda xs: _pool_plan(xs, a["kernel_size"], a["stride"], a["padding"],
                                 a["ceil_mode"], a["channel_last"])


def _prep_max_pool(op, kernel, checked=True):
    if C is None or not _float32_op(op):
        return None
    a = dict(op.attrs)
    geo = _geometry_cache(_pool_geometry(a))
    cl = a["channel_last"]
    max_pool_forward = C.max_pool_forward

    def max_pool_prepared(x):
        p = geo(x.shape) if x.__class__ is _ndarray and x.dtype is _F32 else None
        if p is None:
            return kernel(x, **a)
        out = _empty(p[0], _F32)
        try:
            max_pool_forward(x if x.flags.c_contiguous else _contiguous(x), out, None, p[1],
                             p[2], p[3], p[4], cl)
        except _NATIVE_ERRORS:
            return kernel(x, **a)
        return out

    return max_pool_prepared


def _prep_avg_pool(op, kernel, checked=True):
    if C is None or not _float32_op(op):
        return None
    a = dict(op.attrs)
    div = a["divisor_override"]
    if div is not None and not div > 0:
        return None
    geo = _geometry_cache(_pool_geometry(a))
    cl, exclusive, div = a["channel_last"], a["exclusive"], 0.0 if div is None else div
    avg_pool_forward = C.avg_pool_forward

    def avg_pool_prepared(x):
        p = geo(x.shape) if x.__class__ is _ndarray and x.dtype is _F32 else None
        if p is None:
            return kernel(x, **a)
        out = _empty(p[0], _F32)
        try:
            avg_pool_forward(x if x.flags.c_contiguous else _contiguous(x), out, p[1], p[2],
                             p[3], p[4], exclusive, div, cl)
        except _NATIVE_ERRORS:
            return kernel(x, **a)
        return out

    return avg_pool_prepared


def _prep_adaptive_avg_pool(op, kernel, checked=True):
    if C is None or not _float32_op(op):
        return None
    a = dict(op.attrs)
    cl = a["channel_last"]
    geo = _geometry_cache(lambda xs: _adaptive_plan(xs, a["output_size"], cl))
    avg_pool_forward = C.avg_pool_forward

    def adaptive_avg_pool_prepared(x):
        p = geo(x.shape) if x.__class__ is _ndarray and x.dtype is _F32 else None
        if p is None:
            return kernel(x, **a)
        out = _empty(p[0], _F32)
        try:
            avg_pool_forward(x if x.flags.c_contiguous else _contiguous(x), out, p[1], p[1],
                             p[2], p[2], True, 0.0, cl)
        except _NATIVE_ERRORS:
            return kernel(x, **a)
        return out

    return adaptive_avg_pool_prepared


# ---------------------------------------------------------------- fused_matmul
def _prep_fused_matmul(op, kernel, checked=True):
    """Small float32 products (below the NumPy/oneDNN crossover, where the table kernel
    runs the reference) as the reference's own steps; unchecked (operands proven finite),
    the larger ones as the table kernel's one native call without its scan; everything
    else the table kernel."""
    if not _float32_op(op):
        return None
    a = dict(op.attrs)
    threshold = _native.NUMPY_FASTER_BELOW_FLOPS
    tx, ty, act = a["transpose_x"], a["transpose_y"], a["activation"]
    if a["alpha"] != 1.0:
        return None
    y_t = op.operands[1].type
    if y_t.ndim != 2 or -1 in y_t.shape:
        return None
    n = y_t.shape[0] if ty else y_t.shape[1]
    k = y_t.shape[1] if ty else y_t.shape[0]
    small = not tx and not ty and act in ("none", "relu") and op.operands[3] is None
    if not small and checked:
        return None
    relu = act == "relu"
    # One row against a large constant weight (MobileNetV2's 1280x1000 classifier at
    # batch 1) is a matrix-vector product bound by reading the weight: NumPy's BLAS
    # GEMV reads it faster than oneDNN's brgemm matmul (cold weight, one thread, this
    # 2-core Zen 4 VM: 266 against 331 us; onnxruntime's MLAS 336 us in its profile).
    # It sums in another order than the table kernel's oneDNN call, so the prepared
    # result differs from the table kernel's by float rounding there (relative ~1e-6;
    # tests/test_predictor_prepared.py allows it for exactly these products). Only on
    # the unchecked path, where the NaN/Inf rule's scan is not needed.
    gemv = small and not checked
    matmul, maximum, native = np.matmul, np.maximum, _native.matmul
    native_act = None if act == "none" else act

    def fused_matmul_prepared(x, y, bias=None, residual=None):
        if x.__class__ is not _ndarray or y.__class__ is not _ndarray or x.dtype is not _F32 \
                or y.dtype is not _F32 or x.ndim < 2 or y.shape != y_t.shape or \
                x.shape[-2 if tx else -1] != k or (bias is not None and (
                    bias.dtype is not _F32 or bias.shape != (n,))):
            return kernel(x, y, bias, residual, **a)
        if 2 * x.size * n < threshold or (gemv and x.size == k):
            if small and residual is None:
                # the reference's fast case (fw.core.ops.fused._fm_ref), as the table
                # kernel runs it below the crossover: same NumPy calls, same results
                out = matmul(x, y)
                if bias is not None:
                    out += bias
                return maximum(out, 0, out=out) if relu else out
        elif not checked and (residual is None or (
                residual.__class__ is _ndarray and residual.dtype is _F32 and
                residual.shape == (*x.shape[:-2], x.shape[-1] if tx else x.shape[-2], n))):
            # the table kernel's native call (fw.core.kernels.cpu.fused), without the
            # scan its NaN/Inf rule needs only for operands not proven finite
            return native(x, y, tx, ty, bias=bias, activation=native_act, residual=residual)
        return kernel(x, y, bias, residual, **a)

    return fused_matmul_prepared


# ---------------------------------------------------------------- shape ops
def _prep_flatten(op, kernel, checked=True):
    a = dict(op.attrs)
    start, stop = a["start_axis"], a["stop_axis"]
    geo = _geometry_cache(lambda xs: tuple(_flatten_shape(xs, start, stop)))

    def flatten_prepared(x):
        s = geo(x.shape) if x.__class__ is _ndarray else None
        return x.reshape(s) if s is not None else kernel(x, **a)

    return flatten_prepared


def _prep_transpose(op, kernel, checked=True):
    a = dict(op.attrs)
    perm = a["perm"]
    if perm is None or op.operands[0].type.ndim != len(perm):
        return None
    perm = tuple(perm)
    nd = len(perm)

    def transpose_prepared(x):
        if x.__class__ is _ndarray and x.ndim == nd:
            return x.transpose(perm)
        return kernel(x, **a)

    return transpose_prepared


def _prep_fused_attention(op, kernel, checked=True):
    """The attention kernel with its two attributes bound (positional call: no keyword
    dict per call); the kernel itself picks native or reference per call."""
    a = dict(op.attrs)
    heads, scale = a["num_heads"], a["scale"]

    def fused_attention_prepared(q, k, v, mask=None):
        return kernel(q, k, v, mask, heads, scale)

    return fused_attention_prepared


#: op name -> ``make(op, table kernel) -> prepared kernel or None``
PREPARERS: dict[str, Callable] = {
    "fused_conv": _prep_fused_conv,
    "conv": _prep_conv,
    "max_pool": _prep_max_pool,
    "avg_pool": _prep_avg_pool,
    "adaptive_avg_pool": _prep_adaptive_avg_pool,
    "fused_matmul": _prep_fused_matmul,
    "flatten": _prep_flatten,
    "transpose": _prep_transpose,
    "fused_attention": _prep_fused_attention,
}


def prepare(op, kernel, checked=True):
    """The prepared kernel of `op` (called with its operands only), or None when its op
    has no preparer or the preparer declines (then the executor calls `kernel`, the
    table's, with keyword attributes). Only the table's cpu kernels are prepared: an
    overridden kernel (``disable_mkldnn``'s references) is called as given. With
    ``checked=False`` (an op of `unchecked_ops`, whose operands are proven finite) the
    fused kernels skip the NaN/Inf scans of their rule."""
    make = PREPARERS.get(op.name)
    if make is None or op.blocks or kernel is not op.opdef.kernels.get("cpu", kernel):
        return None
    return make(op, kernel, checked)


# ---------------------------------------------------------------- NaN/Inf out of the hot path
# The fused kernels' rule (docs/reliability.md §2) scans each result, and the operands an
# activation could hide, on every call: 2.8 us of LeNet's 37 us batch-1 run, 85 us of its
# batch-64 run and 0.55 ms of MobileNetV2's 11.4 ms (the activations are megabytes). In
# a predictor the operands of most fused ops come from the program's inputs and its
# constants through ops that give finite results for finite operands; then one check of
# the inputs per run (and of the constants once) says what those scans would say, up to
# a float32 overflow inside the network (the rule's documented gap, of the same kind).
# The executor runs such a program unchecked when its inputs are finite, and on the
# checked kernels otherwise (Compiled.bind_params).

#: ops whose results are finite when their operands are (float32 overflow aside)
FINITE_PRESERVING = frozenset({
    "conv", "fused_conv", "matmul", "fused_matmul", "linear", "max_pool", "avg_pool",
    "adaptive_avg_pool", "relu", "relu6", "hardswish", "hardsigmoid", "sigmoid", "tanh",
    "gelu", "silu", "softmax", "layer_norm", "add", "subtract", "multiply", "maximum",
    "minimum", "flatten", "reshape", "transpose", "split", "concat", "squeeze", "unsqueeze",
    "getitem", "slice", "embedding", "expand", "broadcast_to", "assign", "mean", "sum",
    "fused_attention",
    # the int8 path: integer codes, or ``(q - z) * s`` / ``acc * s + b`` of finite scales
    # and biases; without them a float op after a dequantize (LeNet's float stem after
    # the input's QDQ) runs its NaN/Inf scans every call (40 us of LeNet b64, measured)
    "quantize_linear", "dequantize_linear", "fake_quantize_dequantize", "quantized_conv2d",
    "quantized_matmul", "quantized_max_pool",
})
#: the ops whose prepared kernels check operands and results for the fused-kernel rule
_RULE_OPS = frozenset({"fused_conv", "fused_matmul"})


def unchecked_ops(program) -> set:
    """The fused ops of `program`'s top block whose operands are finite whenever the
    program's inputs and constants are: every operand is an input, a constant, or the
    result of an op of `FINITE_PRESERVING` whose own operands are such values."""
    blk = program.block
    finite = set(blk.args)
    out = set()
    for op in blk.ops:
        if op.blocks or not all(v is None or v in finite for v in op.operands):
            continue
        if op.name in _RULE_OPS:
            out.add(op)
        if op.name in FINITE_PRESERVING:
            finite.update(op.results)
    return out


def all_finite(a) -> bool:
    """Whether an input or constant array holds only finite values (True for integers)."""
    if a.__class__ is not _ndarray:
        return True
    if a.dtype == _BF16:
        a = a.astype(_F32)
    elif a.dtype.kind not in "fc":
        return True
    if C is not None and a.dtype is _F32:
        return bool(_scan(a))
    return bool(np.isfinite(a).all())
