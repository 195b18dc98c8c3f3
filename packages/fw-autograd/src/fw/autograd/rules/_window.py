"""The window index of a sliding-window op, shared by the convolution and pooling
rules (`conv`, `pool`): an integer table ``F[p, k]`` giving, for output position
p and kernel offset k, the flat input position it reads (-1 for padding).
Gathering ``x[..., F]`` turns a convolution into an einsum and a pooling into a
reduction over k, both of which have rules.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.autograd.rules._util import reshape_to


def window_index(in_sizes, ks, strides, dils, pads, outs):
    """F [prod(outs), prod(ks)]: flat row-major input index read by (output position,
    kernel offset), -1 where that falls in the padding."""
    nd = len(in_sizes)
    flat = np.zeros([1] * (2 * nd), dtype=np.int64)
    valid = np.ones([1] * (2 * nd), dtype=bool)
    for d in range(nd):
        o = np.arange(outs[d]) * strides[d] - pads[d][0]
        k = np.arange(ks[d]) * dils[d]
        pos = o[:, None] + k[None, :]  # [O_d, K_d]
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = outs[d], ks[d]
        pos = pos.reshape(shape)
        flat = flat * in_sizes[d] + pos
        valid = valid & (pos >= 0) & (pos < in_sizes[d])
    flat = np.where(valid, flat, -1)
    return flat.reshape(int(np.prod(outs)), int(np.prod(ks)))


def channels_first(x, channel_last):
    return fw.moveaxis(x, -1, 1) if channel_last else x


def channels_back(x, channel_last):
    return fw.moveaxis(x, 1, -1) if channel_last else x


def gather_windows(xt, index):
    """[N, C, *S] -> [N, C, P, K] window values (0 in the padding)."""
    n, c = xt.shape[0], xt.shape[1]
    xf = reshape_to(xt, [n, c, -1])
    safe = np.where(index >= 0, index, 0)
    pt = xf[:, :, fw.to_tensor(safe)]
    if (index < 0).any():
        pt = pt * fw.to_tensor((index >= 0).astype(np.float64), dtype=pt.dtype)
    return pt
