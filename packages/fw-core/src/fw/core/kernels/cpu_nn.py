"""cpu kernels of the nn op families: convolution, pooling, normalization, softmax and
their explicit backward ops (``fw.core.ops.nn_grad``), on the native extension
(`fw.core._native.C`: oneDNN primitives, and own C++ for pooling).

Each kernel takes the arrays and attributes of its op, runs natively when the case is
covered and falls back to the op's NumPy reference otherwise:

- dtypes float32 and bfloat16 (bfloat16 computed in float32 inside the native kernel on
  CPUs without bf16 support, rounded once on the way out); float64, float16 and mixed
  dtypes go to NumPy;
- non-empty arrays of the op's usual ranks (conv/pool: 1 to 3 spatial dims);
- conv_transpose / conv_grad_weight: geometries that a convolution with non-negative
  padding expresses (all but an output_padding of at least stride + end padding);
- max_pool_grad: int32 masks (int64 ones are narrowed when they fit).

There is no size threshold: measured on the 2-core reference machine
(asv_bench/benchmarks/bench_nn_ops.py), a cached native call (5-15 us) beats the NumPy
reference at every size tried, down to a 2x10 softmax and a 4x4 convolution.

Shape errors are left to the reference, which raises the precise message; so is any
native failure (see `register`). The resolved geometry of each (shapes, attributes)
pair is cached, so a hit costs one dict lookup in Python before the native call.

Bias gradients are not a separate op: conv_grad_weight returns grad_bias with the
weight gradient (oneDNN computes it in the same pass).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from fw.core import _native
from fw.core.errors import FwError
from fw.core.ops._registry import OPS
from fw.core.ops.conv import (
    _check_conv,
    conv_geometry,
    conv_transpose_geometry,
    join_layout,
    split_layout,
)
from fw.core.ops.nn_grad import conv_transpose_pads
from fw.core.ops.pool import pool_geometry

__all__ = ["register"]

C = _native.C
_F32 = np.dtype(np.float32)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_U16 = np.dtype(np.uint16)
_I32 = np.dtype(np.int32)
_ndarray = np.ndarray

_ACTS = {"none": "none", "relu": "relu", "gelu_tanh": "gelu_tanh", "gelu_erf": "gelu_erf",
         "sigmoid": "sigmoid", "tanh": "tanh", "silu": "swish"}


def _float(d) -> bool:
    return d is _F32 or d == _BF16


def _bits(a):
    return a.view(_U16) if a.dtype == _BF16 else a


def _c(a):
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _in(a):
    """A C-contiguous native operand (bfloat16 as its uint16 bits)."""
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a.view(_U16) if a.dtype == _BF16 else a


def _f32(a):
    return a if a.dtype is _F32 and a.flags.c_contiguous else np.ascontiguousarray(a, _F32)


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


# ---------------------------------------------------------------- convolution
_conv_plans = _Plans()


def _conv_plan(xs, ws, bs, stride, padding, dilation, groups, channel_last):
    n, c, sp, cout, ks = _check_conv(xs, ws, bs, groups, channel_last, False)
    if len(sp) > 3 or n == 0 or c == 0 or cout == 0:
        return None
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    return (join_layout(n, cout, outs, channel_last), list(strides), list(dils),
            [b for b, _ in pads], [e for _, e in pads])


def _make_conv(reference):
    def conv_cpu(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                 channel_last=False):
        d = x.dtype
        if _float(d) and weight.dtype == d and (bias is None or bias.dtype == d):
            key = (x.shape, weight.shape, bias is None, stride, padding, dilation, groups,
                   channel_last)
            p = _conv_plans.get_or(key, lambda: _conv_plan(
                x.shape, weight.shape, None if bias is None else bias.shape, stride, padding,
                dilation, groups, channel_last))
            if p is not None:
                out = np.empty(p[0], d)
                C.conv_forward(_in(x), _in(weight), _bits(out),
                               None if bias is None else _in(bias), None, "none", p[1], p[2],
                               p[3], p[4], groups, channel_last)
                return out
        return reference(x, weight, bias, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, channel_last=channel_last)

    return conv_cpu


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
                C.conv_forward(_in(x), _in(weight), _bits(out),
                               None if bias is None else _in(bias),
                               None if residual is None else _in(residual), _ACTS[activation],
                               p[1], p[2], p[3], p[4], groups, channel_last)
                # oneDNN's relu maps -inf (from infinite input) to NaN, NumPy's to 0: a NaN
                # in the result sends the call to NumPy, which also gets NaN input right
                if activation != "relu" or not C.any_nan(_bits(out)):
                    return out
        return reference(x, weight, bias, residual, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, channel_last=channel_last,
                         activation=activation)

    return fused_conv_cpu


_convt_plans = _Plans()


def _convt_plan(xs, ws, bs, stride, padding, output_padding, dilation, groups, output_size,
                channel_last):
    n, c, sp, cout, ks = _check_conv(xs, ws, bs, groups, channel_last, True)
    if len(sp) > 3 or n == 0 or c == 0 or cout == 0:
        return None
    strides, pads, dils, outs = conv_transpose_geometry(sp, ks, stride, padding, output_padding,
                                                        dilation, output_size)
    cp = conv_transpose_pads(sp, outs, ks, strides, dils, pads)
    if cp is None:
        return None
    bshape = (1,) * (len(sp) + 1) + (cout,) if channel_last else (1, cout) + (1,) * len(sp)
    return (join_layout(n, cout, outs, channel_last), list(strides), list(dils),
            [b for b, _ in cp], [e for _, e in cp], bshape)


def _make_conv_transpose(reference):
    def conv_transpose_cpu(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                           dilation=1, groups=1, output_size=None, channel_last=False):
        d = x.dtype
        if _float(d) and weight.dtype == d and (bias is None or bias.dtype == d):
            key = (x.shape, weight.shape, bias is None, stride, padding, output_padding,
                   dilation, groups, output_size, channel_last)
            p = _convt_plans.get_or(key, lambda: _convt_plan(
                x.shape, weight.shape, None if bias is None else bias.shape, stride, padding,
                output_padding, dilation, groups, output_size, channel_last))
            if p is not None:
                out = np.empty(p[0], d)
                # the transposed convolution is the data gradient of the convolution it
                # is the adjoint of: x plays that convolution's output gradient
                C.conv_backward_data(_in(x), _in(weight), _bits(out), p[1], p[2], p[3], p[4],
                                     groups, channel_last)
                if bias is not None:
                    if d is _F32:
                        out += bias.reshape(p[5])
                    else:
                        out = (out.astype(_F32) + bias.astype(_F32).reshape(p[5])).astype(d)
                return out
        return reference(x, weight, bias, stride=stride, padding=padding,
                         output_padding=output_padding, dilation=dilation, groups=groups,
                         output_size=output_size, channel_last=channel_last)

    return conv_transpose_cpu


_cgw_plans = _Plans()


def _cgw_plan(xs, gs, kernel_size, stride, padding, dilation, groups, channel_last):
    n, c, sp = split_layout(xs, channel_last)
    nd = len(sp)
    if not 1 <= nd <= 3 or len(gs) != len(xs) or n == 0 or c == 0:
        return None
    ks = tuple(kernel_size) * nd if len(kernel_size) == 1 else tuple(kernel_size)
    gn, cout, gsp = split_layout(gs, channel_last)
    if len(ks) != nd or gn != n or cout == 0 or c % groups or cout % groups:
        return None
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    if tuple(outs) != tuple(gsp):
        return None
    return ((cout, c // groups) + ks, cout, list(strides), list(dils), [b for b, _ in pads],
            [e for _, e in pads])


def _make_conv_grad_weight(reference):
    def conv_grad_weight_cpu(x, grad_out, kernel_size=None, stride=1, padding=0, dilation=1,
                             groups=1, channel_last=False):
        d = x.dtype
        if _float(d) and grad_out.dtype == d:
            key = (x.shape, grad_out.shape, kernel_size, stride, padding, dilation, groups,
                   channel_last)
            p = _cgw_plans.get_or(key, lambda: _cgw_plan(
                x.shape, grad_out.shape, kernel_size, stride, padding, dilation, groups,
                channel_last))
            if p is not None:
                gw = np.empty(p[0], d)
                gb = np.empty(p[1], d)
                C.conv_backward_weights(_in(x), _in(grad_out), _bits(gw), _bits(gb), p[2], p[3],
                                        p[4], p[5], groups, channel_last)
                return gw, gb
        return reference(x, grad_out, kernel_size=kernel_size, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, channel_last=channel_last)

    return conv_grad_weight_cpu


# ---------------------------------------------------------------- pooling
_pool_plans = _Plans()


def _pool_plan(xs, kernel_size, stride, padding, ceil_mode, channel_last):
    if not 3 <= len(xs) <= 5:
        return None
    n, c, sp = split_layout(xs, channel_last)
    if n == 0 or c == 0 or 0 in sp:
        return None
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    if 0 in outs:
        return None
    return (join_layout(n, c, outs, channel_last), list(ks), list(strides),
            [b for b, _ in pads], [e for _, e in pads])


def _pool_key(x, kernel_size, stride, padding, ceil_mode, channel_last):
    return (x.shape, kernel_size, stride, padding, ceil_mode, channel_last)


def _plan_for(x, kernel_size, stride, padding, ceil_mode, channel_last):
    return _pool_plans.get_or(
        _pool_key(x, kernel_size, stride, padding, ceil_mode, channel_last),
        lambda: _pool_plan(x.shape, kernel_size, stride, padding, ceil_mode, channel_last))


def _make_max_pool(reference, with_index):
    def max_pool_cpu(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                     channel_last=False):
        if _float(x.dtype):
            p = _plan_for(x, kernel_size, stride, padding, ceil_mode, channel_last)
            if p is not None:
                out = np.empty(p[0], x.dtype)
                mask = np.empty(p[0], _I32) if with_index else None
                C.max_pool_forward(_in(x), _bits(out), mask, p[1], p[2], p[3], p[4],
                                   channel_last)
                return (out, mask) if with_index else out
        return reference(x, kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, channel_last=channel_last)

    return max_pool_cpu


def _make_avg_pool(reference):
    def avg_pool_cpu(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                     exclusive=True, divisor_override=None, channel_last=False):
        if _float(x.dtype):
            p = _plan_for(x, kernel_size, stride, padding, ceil_mode, channel_last)
            if p is not None and (divisor_override is None or divisor_override > 0):
                out = np.empty(p[0], x.dtype)
                C.avg_pool_forward(_in(x), _bits(out), p[1], p[2], p[3], p[4], exclusive,
                                   0.0 if divisor_override is None else divisor_override,
                                   channel_last)
                return out
        return reference(x, kernel_size=kernel_size, stride=stride, padding=padding,
                         ceil_mode=ceil_mode, exclusive=exclusive,
                         divisor_override=divisor_override, channel_last=channel_last)

    return avg_pool_cpu


def _grad_x_shape(gs, input_size, channel_last):
    n, c, sp = split_layout(gs, channel_last)
    if len(input_size) != len(sp) or not 1 <= len(sp) <= 3 or n == 0 or c == 0:
        return None
    return join_layout(n, c, tuple(input_size), channel_last)


def _make_max_pool_grad(reference):
    def max_pool_grad_cpu(grad_out, mask, input_size=None, channel_last=False):
        d = grad_out.dtype
        if _float(d) and mask.shape == grad_out.shape and mask.dtype.kind == "i":
            shape = _grad_x_shape(grad_out.shape, input_size, channel_last)
            if shape is not None and mask.dtype != _I32:
                m = mask.astype(_I32)
                mask = m if (m == mask).all() else None  # values beyond int32: NumPy
            if shape is not None and mask is not None:
                gx = np.empty(shape, _F32)
                # a mask value out of range raises ValueError: the guard (see register)
                # hands the call to the reference, which names the valid range
                C.max_pool_backward(_f32(grad_out), _c(mask), gx, channel_last)
                return gx if d is _F32 else gx.astype(d)
        return reference(grad_out, mask, input_size=input_size, channel_last=channel_last)

    return max_pool_grad_cpu


def _make_avg_pool_grad(reference):
    def avg_pool_grad_cpu(grad_out, input_size=None, kernel_size=None, stride=None, padding=0,
                          ceil_mode=False, exclusive=True, divisor_override=None,
                          channel_last=False):
        d = grad_out.dtype
        if _float(d) and (divisor_override is None or divisor_override > 0):
            shape = _grad_x_shape(grad_out.shape, input_size, channel_last)
            p = None if shape is None else _pool_plans.get_or(
                ("grad", shape, kernel_size, stride, padding, ceil_mode, channel_last),
                lambda: _pool_plan(shape, kernel_size, stride, padding, ceil_mode,
                                   channel_last))
            if p is not None and p[0] == grad_out.shape:
                gx = np.empty(shape, _F32)
                C.avg_pool_backward(_f32(grad_out), gx, p[1], p[2], p[3], p[4], exclusive,
                                    0.0 if divisor_override is None else divisor_override,
                                    channel_last)
                return gx if d is _F32 else gx.astype(d)
        return reference(grad_out, input_size=input_size, kernel_size=kernel_size,
                         stride=stride, padding=padding, ceil_mode=ceil_mode,
                         exclusive=exclusive, divisor_override=divisor_override,
                         channel_last=channel_last)

    return avg_pool_grad_cpu


# ---------------------------------------------------------------- normalization
def _stat_ok(*arrays, n):
    """float32 vectors of n elements (None allowed)."""
    return all(a is None or (a.dtype is _F32 and a.shape == (n,)) for a in arrays)


def _channels(x, channel_last):
    return x.shape[-1] if channel_last else x.shape[1]


def _make_batch_norm(reference):
    def batch_norm_cpu(x, running_mean, running_var, weight=None, bias=None, training=False,
                       momentum=0.9, epsilon=1e-5, channel_last=False, use_global_stats=None):
        if _float(x.dtype) and x.ndim >= 2 and x.size:
            c = _channels(x, channel_last)
            if _stat_ok(running_mean, running_var, weight, bias, n=c):
                batch = bool(training and not use_global_stats)
                out = np.empty(x.shape, x.dtype)
                mean_out, var_out, saved_mean, saved_inv = (np.empty(c, _F32) for _ in range(4))
                C.batch_norm_forward(_in(x), _bits(out), weight, bias, running_mean, running_var,
                                     mean_out, var_out, saved_mean, saved_inv, epsilon, momentum,
                                     batch, channel_last)
                return out, mean_out, var_out, saved_mean, saved_inv
        return reference(x, running_mean, running_var, weight, bias, training=training,
                         momentum=momentum, epsilon=epsilon, channel_last=channel_last,
                         use_global_stats=use_global_stats)

    return batch_norm_cpu


def _make_batch_norm_grad(reference):
    def batch_norm_grad_cpu(x, weight, saved_mean, saved_inv_std, grad_out, epsilon=1e-5,
                            channel_last=False, batch_stats=True):
        d = x.dtype
        if _float(d) and grad_out.dtype == d and x.ndim >= 2 and x.size and \
                grad_out.shape == x.shape:
            c = _channels(x, channel_last)
            if _stat_ok(weight, saved_mean, saved_inv_std, n=c):
                gx = np.empty(x.shape, d)
                gw = np.empty(c, _F32)
                gb = np.empty(c, _F32)
                C.batch_norm_backward(_in(x), _in(grad_out), weight, saved_mean, saved_inv_std,
                                      _bits(gx), gw, gb, epsilon, batch_stats, channel_last)
                return gx, gw, gb
        return reference(x, weight, saved_mean, saved_inv_std, grad_out, epsilon=epsilon,
                         channel_last=channel_last, batch_stats=batch_stats)

    return batch_norm_grad_cpu


def _ln_begin(x, begin_norm_axis):
    nd = x.ndim
    if nd == 0 or not -nd <= begin_norm_axis < nd:
        return None
    return begin_norm_axis % nd


def _param(a, d):
    """A layer-norm weight/bias as a flat float32 vector of d elements, or False."""
    if a is None:
        return None
    if a.size != d or not _float(a.dtype):
        return False
    return _f32(a.reshape(-1))


def _make_layer_norm(reference):
    def layer_norm_cpu(x, weight=None, bias=None, epsilon=1e-5, begin_norm_axis=1):
        if _float(x.dtype) and x.size:
            b = _ln_begin(x, begin_norm_axis)
            if b is not None:
                lead = x.shape[:b]
                m = math.prod(lead)
                dn = x.size // m
                w, bb = _param(weight, dn), _param(bias, dn)
                if w is not False and bb is not False and (
                        weight is None or weight.dtype == x.dtype) and (
                        bias is None or bias.dtype == x.dtype):
                    out = np.empty(x.shape, x.dtype)
                    mean = np.empty(lead, _F32)
                    inv = np.empty(lead, _F32)
                    C.layer_norm_forward(_in(x), _bits(out), w, bb, mean, inv, epsilon, b)
                    return out, mean, inv
        return reference(x, weight, bias, epsilon=epsilon, begin_norm_axis=begin_norm_axis)

    return layer_norm_cpu


def _make_layer_norm_grad(reference):
    def layer_norm_grad_cpu(x, weight, mean, inv_std, grad_out, epsilon=1e-5, begin_norm_axis=1):
        d = x.dtype
        if _float(d) and grad_out.dtype == d and grad_out.shape == x.shape and x.size:
            b = _ln_begin(x, begin_norm_axis)
            if b is not None and mean.dtype is _F32 and inv_std.dtype is _F32 and \
                    mean.shape == x.shape[:b] and inv_std.shape == x.shape[:b]:
                dn = x.size // math.prod(x.shape[:b])
                w = _param(weight, dn)
                if w is not False and (weight is None or weight.dtype == d):
                    gx = np.empty(x.shape, d)
                    gw = np.empty(dn, _F32)
                    gb = np.empty(dn, _F32)
                    C.layer_norm_backward(_in(x), _in(grad_out), w, _c(mean), _c(inv_std),
                                          _bits(gx), gw, gb, epsilon, b)
                    if d is not _F32:
                        gw, gb = gw.astype(d), gb.astype(d)
                    return gx, gw, gb
        return reference(x, weight, mean, inv_std, grad_out, epsilon=epsilon,
                         begin_norm_axis=begin_norm_axis)

    return layer_norm_grad_cpu


# ---------------------------------------------------------------- softmax
def _axis(x, axis):
    nd = x.ndim
    if nd == 0 or not -nd <= axis < nd:
        return None
    return axis % nd


def _make_softmax(reference, log):
    def softmax_cpu(x, axis=-1):
        if _float(x.dtype) and x.size:
            ax = _axis(x, axis)
            if ax is not None:
                out = np.empty(x.shape, x.dtype)
                C.softmax_forward(_in(x), _bits(out), ax, log)
                return out
        return reference(x, axis=axis)

    return softmax_cpu


def _make_softmax_grad(reference, log):
    def softmax_grad_cpu(out, grad_out, axis=-1):
        d = out.dtype
        if _float(d) and grad_out.dtype == d and grad_out.shape == out.shape and out.size:
            ax = _axis(out, axis)
            if ax is not None:  # the native backward is float32 (bf16 is widened here)
                gx = np.empty(out.shape, _F32)
                C.softmax_backward(_f32(out), _f32(grad_out), gx, ax, log)
                return gx if d is _F32 else gx.astype(d)
        return reference(out, grad_out, axis=axis)

    return softmax_grad_cpu


_KERNELS = {
    "conv": _make_conv,
    "fused_conv": _make_fused_conv,
    "conv_transpose": _make_conv_transpose,
    "conv_grad_weight": _make_conv_grad_weight,
    "max_pool": lambda ref: _make_max_pool(ref, False),
    "max_pool_with_index": lambda ref: _make_max_pool(ref, True),
    "avg_pool": _make_avg_pool,
    "max_pool_grad": _make_max_pool_grad,
    "avg_pool_grad": _make_avg_pool_grad,
    "batch_norm": _make_batch_norm,
    "batch_norm_grad": _make_batch_norm_grad,
    "layer_norm": _make_layer_norm,
    "layer_norm_grad": _make_layer_norm_grad,
    "softmax": lambda ref: _make_softmax(ref, False),
    "log_softmax": lambda ref: _make_softmax(ref, True),
    "softmax_grad": lambda ref: _make_softmax_grad(ref, False),
    "log_softmax_grad": lambda ref: _make_softmax_grad(ref, True),
}


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


def register() -> None:
    """Attach the kernels (when the native extension is loaded)."""
    if not _native.available:
        return
    for name, make in _KERNELS.items():
        op = OPS.get(name)
        if op is not None and "cpu" not in op.kernels:
            op.kernels["cpu"] = _guarded(make(op.reference), op.reference)


register()
