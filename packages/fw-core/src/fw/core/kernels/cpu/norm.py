"""cpu kernels of the norm family on oneDNN: ``batch_norm`` and ``layer_norm``
(float32/bfloat16 input, float32 statistics; their gradients are in
:mod:`fw.core.kernels.cpu.nn_grad`; the shared policy of the nn kernels, with its
measurements, in :mod:`fw.core.kernels.cpu._common`).
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import _native
from fw.core.kernels.cpu._common import _F32, C, _bits, _f32, _float, _in, attach

__all__ = ["register"]


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



def register() -> None:
    attach({"batch_norm": _make_batch_norm, "layer_norm": _make_layer_norm},
           when=_native.available, guard=True)


register()
