"""cpu kernels of the conv family on oneDNN: ``conv`` and ``conv_transpose`` (the
fused form, ``fused_conv``, is in :mod:`fw.core.kernels.cpu.fused`, the weight gradient,
``conv_grad_weight``, in :mod:`fw.core.kernels.cpu.nn_grad`).

Native for float32/bfloat16 operands of one dtype, non-empty, with 1 to 3 spatial dims;
conv_transpose for the geometries that a convolution with non-negative padding expresses
(all but an output_padding of at least stride + end padding). Everything else, and any
native failure, goes to the reference (see :mod:`fw.core.kernels.cpu._common` for the
policy the oneDNN nn kernels share, with its measurements).
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.kernels.cpu._common import _F32, C, _bits, _float, _in, _Plans, attach
from fw.core.kernels.frozen import stamp
from fw.core.ops.conv import _check_conv, conv_geometry, conv_transpose_geometry, join_layout
from fw.core.ops.nn_grad import conv_transpose_pads

__all__ = ["register"]

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
                               p[3], p[4], groups, channel_last, stamp(weight))
                return out
        return reference(x, weight, bias, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, channel_last=channel_last)

    return conv_cpu



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



def register() -> None:
    attach({"conv": _make_conv, "conv_transpose": _make_conv_transpose},
           when=_native.available, guard=True)


register()
