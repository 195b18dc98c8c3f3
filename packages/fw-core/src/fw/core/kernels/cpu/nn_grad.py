"""cpu kernels of the explicit backward ops (``fw.core.ops.nn_grad``) on the native
extension: ``conv_grad_weight``, ``max_pool_grad``, ``avg_pool_grad``,
``batch_norm_grad``, ``layer_norm_grad``, ``softmax_grad``/``log_softmax_grad`` (oneDNN
and own C++; the shared policy of the nn kernels, with its measurements, in
:mod:`fw.core.kernels.cpu._common`), ``cross_entropy_with_softmax_grad`` (NumPy, the
hard-label case of :mod:`fw.core.kernels.cpu.loss`) and ``relu_grad``/``dropout_grad``
(fixed programs of the elementwise interpreter).

- conv_grad_weight returns grad_bias with the weight gradient (oneDNN computes it in
  the same pass): bias gradients are not a separate op;
- max_pool_grad: int32 masks (int64 ones are narrowed when they fit);
- the softmax and pool backward passes are float32 (bfloat16 is widened here).
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import _native
from fw.core import dtypes as _dt
from fw.core.kernels.cpu._common import (
    _EW_DTYPE_CODES,
    _F32,
    _I32,
    C,
    _bits,
    _c,
    _f32,
    _float,
    _in,
    _ndarray,
    _Plans,
    _rounded,
    attach,
    ew_opcodes,
    fused_available,
)
from fw.core.kernels.cpu.activation import _axis
from fw.core.kernels.cpu.loss import _flat_index, _plain_rows
from fw.core.kernels.cpu.norm import _channels, _ln_begin, _param, _stat_ok
from fw.core.kernels.cpu.pool import _pool_plan, _pool_plans
from fw.core.ops.conv import conv_geometry, join_layout, split_layout

__all__ = ["register"]

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



# ---------------------------------------------------------------- cross entropy
def _ce_grad_fast(softmax, label, weight, grad_loss, soft_label, ignore_index, reduction, axis):
    """The logits' gradient, or None where the reference must answer."""
    plain = _plain_rows(softmax, label, weight, soft_label, axis, ignore_index)
    if plain is None or type(grad_loss) is not _ndarray or grad_loss.dtype != softmax.dtype:
        return None
    n, c, lab = plain
    if reduction == "none":
        if grad_loss.size != n:
            return None
        f = grad_loss.reshape(n, 1)
        f_at_label = f[:, 0]
    elif grad_loss.shape != ():
        return None
    else:
        f = f_at_label = grad_loss / softmax.dtype.type(n) if reduction == "mean" else grad_loss
    # a new C-ordered array (the softmax stays intact): an F-ordered softmax (the
    # transpose of a gathered block) would give an F-ordered product, whose
    # reshape(-1) below is a copy, and the label term would be lost
    g = np.multiply(softmax.reshape(n, c), f, order="C")
    g.reshape(-1)[_flat_index(lab, n, c)] -= f_at_label
    return g.reshape(softmax.shape)


def _make_ce_grad(reference):
    def cross_entropy_with_softmax_grad_cpu(softmax, label, weight, grad_loss, soft_label=False,
                                            ignore_index=-100, reduction="mean", axis=-1):
        r = _ce_grad_fast(softmax, label, weight, grad_loss, soft_label, ignore_index,
                          reduction, axis)
        if r is None:
            r = reference(softmax, label, weight, grad_loss, soft_label=soft_label,
                          ignore_index=ignore_index, reduction=reduction, axis=axis)
        return r

    return cross_entropy_with_softmax_grad_cpu



# ---------------------------------------------------------------- mask gradients
def _make_mask_grad(reference, with_scale):
    """relu_grad (``grad_out * (out > 0)``) and dropout_grad (``grad_out * mask *
    scale``) as fixed interpreter programs: one pass over memory instead of NumPy's
    compare, cast and multiply. The mask is cast and multiplied (not selected), so NaN
    and Inf gradients behave exactly as in the reference."""
    names = ew_opcodes()
    programs: dict = {}

    def program(dtype, scale):
        key = (dtype, scale)
        prog = programs.get(key)
        if prog is None:
            dc = _EW_DTYPE_CODES[dtype]
            if with_scale:  # inputs: mask (bool), grad_out
                code = [(names["cast"], dc, 0, -1, -1, 0.0), (names["multiply"], dc, 1, 2, -1, 0.0)]
                if scale != 1.0:
                    code += [(names["const"], dc, -1, -1, -1, _rounded(scale, _dt.from_numpy(
                        dtype))), (names["multiply"], dc, 3, 4, -1, 0.0)]
            else:  # inputs: out, grad_out
                code = [(names["const"], dc, -1, -1, -1, 0.0),
                        (names["greater_than"], 0, 0, 2, -1, 0.0),
                        (names["cast"], dc, 3, -1, -1, 0.0),
                        (names["multiply"], dc, 1, 4, -1, 0.0)]
            prog = programs[key] = C.EwProgram(2, code)
        return prog

    def native(first, grad_out, scale):
        if (type(first) is _ndarray and type(grad_out) is _ndarray
                and first.shape == grad_out.shape and grad_out.dtype in _EW_DTYPE_CODES
                and (first.dtype == bool if with_scale else first.dtype == grad_out.dtype)
                and grad_out.size and first.flags.c_contiguous and grad_out.flags.c_contiguous):
            out = np.empty(grad_out.shape, grad_out.dtype)
            program(grad_out.dtype, scale).run([_bits(first), _bits(grad_out)], [0, 0], 0,
                                               _bits(out))
            return out
        return None

    if with_scale:
        def dropout_grad_cpu(mask, grad_out, scale=1.0):
            out = native(mask, grad_out, float(scale))
            return reference(mask, grad_out, scale=scale) if out is None else out

        return dropout_grad_cpu

    def relu_grad_cpu(out, grad_out):
        res = native(out, grad_out, 1.0)
        return reference(out, grad_out) if res is None else res

    return relu_grad_cpu



def register() -> None:
    attach({
        "conv_grad_weight": _make_conv_grad_weight,
        "max_pool_grad": _make_max_pool_grad,
        "avg_pool_grad": _make_avg_pool_grad,
        "batch_norm_grad": _make_batch_norm_grad,
        "layer_norm_grad": _make_layer_norm_grad,
        "softmax_grad": lambda ref: _make_softmax_grad(ref, False),
        "log_softmax_grad": lambda ref: _make_softmax_grad(ref, True),
    }, when=_native.available, guard=True)
    attach({"relu_grad": lambda ref: _make_mask_grad(ref, False),
            "dropout_grad": lambda ref: _make_mask_grad(ref, True)}, when=fused_available)
    attach({"cross_entropy_with_softmax_grad": _make_ce_grad}, when=True)


register()
