"""cpu kernels of the pool family: ``max_pool``, ``max_pool_with_index`` and
``avg_pool`` on the native extension (own C++), float32/bfloat16, 1 to 3 spatial dims,
non-empty input and output, and ``adaptive_avg_pool`` where every output size divides
its input size (the bins are then a plain average pool's windows: the global pool
ending MobileNet and ResNet, 0.9 ms of a MobileNetV2 run on the NumPy reference's
gathers, ~10 us here) (their gradients are in :mod:`fw.core.kernels.cpu.nn_grad`;
the shared policy of the nn kernels, with its measurements, in
:mod:`fw.core.kernels.cpu._common`).
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.kernels.cpu._common import _I32, C, _bits, _float, _in, _Plans, attach
from fw.core.ops.conv import join_layout, split_layout
from fw.core.ops.pool import _adaptive_sizes, pool_geometry

__all__ = ["register"]

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


_adaptive_plans = _Plans()


def _adaptive_plan(xs, output_size, channel_last):
    if not 3 <= len(xs) <= 5:
        return None
    n, c, sp = split_layout(xs, channel_last)
    outs = _adaptive_sizes(sp, output_size)
    if n == 0 or c == 0 or 0 in sp or 0 in outs or any(s % o for s, o in zip(sp, outs)):
        return None
    ks = [s // o for s, o in zip(sp, outs)]
    return join_layout(n, c, outs, channel_last), ks, [0] * len(sp)


def _make_adaptive_avg_pool(reference):
    def adaptive_avg_pool_cpu(x, output_size=None, channel_last=False):
        if _float(x.dtype):
            p = _adaptive_plans.get_or((x.shape, output_size, channel_last),
                                       lambda: _adaptive_plan(x.shape, output_size,
                                                              channel_last))
            if p is not None:
                out = np.empty(p[0], x.dtype)
                C.avg_pool_forward(_in(x), _bits(out), p[1], p[1], p[2], p[2], True, 0.0,
                                   channel_last)
                return out
        return reference(x, output_size=output_size, channel_last=channel_last)

    return adaptive_avg_pool_cpu


def register() -> None:
    attach({"max_pool": lambda ref: _make_max_pool(ref, False),
            "max_pool_with_index": lambda ref: _make_max_pool(ref, True),
            "avg_pool": _make_avg_pool, "adaptive_avg_pool": _make_adaptive_avg_pool},
           when=_native.available, guard=True)


register()
