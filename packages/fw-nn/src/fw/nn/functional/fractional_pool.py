"""Fractional max pooling (Graham, "Fractional Max-Pooling", 2015), Paddle's
``fractional_max_pool2d`` / ``fractional_max_pool3d``.

The pooling regions along each spatial axis follow Paddle's pseudo-random sequence
(the index formulas of Paddle's kernel and its op test, facts carried over): with
``alpha = (in - k) / (out - (1 if k else 0))`` and ``u`` the `random_u` draw (scaled
to its admissible range when no kernel size is given),
``start_i = int((i + u) * alpha) - int(u * alpha)`` and ``end_i = start_i + k`` (with a
kernel size) or ``int((i + 1 + u) * alpha) - int(u * alpha)`` (disjoint regions),
clipped to the input, computed in single precision as Paddle's kernel does (the
truncations differ in double). One `u` serves every axis, as in Paddle; without
`random_u` it is drawn from fw's generator (``fw.seed`` makes it reproducible).

The regions are gathered with `index_select` (padded to the longest region by
repeating its last index) and the first maximum is taken with `argmax` /
`take_along_axis`, so the gradient flows to exactly the element the mask names.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.core.errors import InvalidArgumentError

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d"]


_f32 = np.float32  # Paddle's kernel computes the sequence in float: the same truncations


def _rational_u(u, alpha, n_in, n_out, k):
    if k > 0:
        return u
    base = n_in // n_out
    return u * min(_f32(base + 2) / alpha - _f32(1),
                   _f32(n_in + 1 - base) / alpha - _f32(n_out - 1))


def _regions(n_in, n_out, k, u):
    """[n_out, width] indices of each region (padded with its last index)."""
    div = n_out - (1 if k > 0 else 0)
    alpha = _f32(n_in - k) / _f32(div) if div else _f32(0)
    uu = _f32(_rational_u(_f32(u), alpha, n_in, n_out, k))
    starts, ends = [], []
    for i in range(n_out):
        s = int((_f32(i) + uu) * alpha) - int(uu * alpha)
        e = s + k if k > 0 else int((_f32(i + 1) + uu) * alpha) - int(uu * alpha)
        s, e = max(s, 0), min(e, n_in)
        if e <= s:  # an empty region cannot happen for valid sizes; keep one element
            e = s + 1
        starts.append(s)
        ends.append(e)
    width = max(e - s for s, e in zip(starts, ends))
    idx = np.array([[min(s + j, e - 1) for j in range(width)] for s, e in zip(starts, ends)],
                   np.int64)
    return idx


def _size(v, n, name, fn):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise InvalidArgumentError(f"{fn}: {name} must be an int or {n} ints, got {v}")
    return v


def _fractional(fn, x, output_size, kernel_size, random_u, return_mask, nd):
    if not isinstance(x, fw.Tensor) or x.ndim != nd + 2:
        raise InvalidArgumentError(
            f"{fn}: x must be a {nd + 2}-D tensor [N, C, {', '.join('DHW'[3 - nd:])}], got "
            f"{getattr(x, 'shape', type(x).__name__)}")
    if not x.dtype.is_floating_point:
        raise InvalidArgumentError(f"{fn}: x must be a floating tensor, got {x.dtype}")
    spatial = list(x.shape[2:])
    out = _size(output_size, nd, "output_size", fn)
    out = [spatial[i] if o is None else int(o) for i, o in enumerate(out)]
    ks = [0] * nd if kernel_size is None else [int(k) for k in _size(kernel_size, nd,
                                                                        "kernel_size", fn)]
    for i in range(nd):
        if out[i] < 1 or out[i] > spatial[i]:
            raise InvalidArgumentError(f"{fn}: output_size {out} must lie in [1, input size "
                                       f"{spatial}]")
        if ks[i] < 0 or ks[i] > spatial[i]:
            raise InvalidArgumentError(f"{fn}: kernel_size {ks} must lie in [0, input size "
                                       f"{spatial}]")
    if random_u is None:
        u = float(fw.rand([1], "float64").numpy()[0])
        while u <= 0.0:  # (0, 1) open
            u = float(fw.rand([1], "float64").numpy()[0])
    else:
        u = float(random_u)
        if not 0.0 < u < 1.0:
            raise InvalidArgumentError(f"{fn}: random_u must be a float in (0, 1), got "
                                       f"{random_u!r}")
    n, c = x.shape[:2]
    regions = [_regions(spatial[i], out[i], ks[i], u) for i in range(nd)]
    g = x
    for i, r in enumerate(regions):  # axis 2+2i becomes (out_i, width_i)
        ax = 2 + 2 * i
        g = fw.index_select(g, fw.to_tensor(r.ravel()), axis=ax)
        shape = list(g.shape)
        g = g.reshape(shape[:ax] + [r.shape[0], r.shape[1]] + shape[ax + 1:])
    # [N, C, o0, w0, o1, w1, ...] -> [N, C, o0, o1, ..., w0 * w1 * ...]
    perm = [0, 1] + [2 + 2 * i for i in range(nd)] + [3 + 2 * i for i in range(nd)]
    g = g.transpose(perm).reshape([n, c] + out + [-1])
    pos = fw.argmax(g, axis=-1, keepdim=True)
    res = fw.take_along_axis(g, pos, axis=-1).squeeze(-1)
    if not return_mask:
        return res
    # flat input index of each maximum: unravel `pos` over the region widths
    p = pos.squeeze(-1).numpy()
    widths = [r.shape[1] for r in regions]
    sub = np.unravel_index(p, widths)
    flat = np.zeros(p.shape, np.int64)
    grids = np.meshgrid(*[np.arange(o) for o in out], indexing="ij")
    for i, r in enumerate(regions):
        coord = r[grids[i][None, None], sub[i]]
        flat = flat * spatial[i] + coord
    return res, fw.to_tensor(flat.astype(np.int32))


def fractional_max_pool2d(x, output_size, kernel_size=None, random_u=None, return_mask=False,
                          name=None):
    """2-D fractional max pooling over ``[N, C, H, W]`` with pseudo-random regions.

    Args:
        x (Tensor): ``[N, C, H, W]`` floating input.
        output_size (int | list | tuple): ``(H_out, W_out)`` (None keeps that axis).
        kernel_size (int | list | tuple, optional): overlapping regions of this size;
            None: disjoint regions from the random sequence.
        random_u (float, optional): the sequence's random number in (0, 1); drawn
            from fw's generator when None.
        return_mask (bool, optional): also return the flat ``h * W + w`` index of
            each maximum (int32).
        name (str, optional): unused.

    Returns:
        Tensor | tuple: ``[N, C, H_out, W_out]``, and the mask when asked for.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> x = fw.arange(49, dtype="float32").reshape([1, 1, 7, 7])
        >>> F.fractional_max_pool2d(x, output_size=3, random_u=0.3)[0, 0].tolist()
        [[8.0, 11.0, 13.0], [29.0, 32.0, 34.0], [43.0, 46.0, 48.0]]
    """
    return _fractional("fractional_max_pool2d", x, output_size, kernel_size, random_u,
                       return_mask, 2)


def fractional_max_pool3d(x, output_size, kernel_size=None, random_u=None, return_mask=False,
                          name=None):
    """3-D fractional max pooling over ``[N, C, D, H, W]`` with pseudo-random regions.

    Args:
        x (Tensor): ``[N, C, D, H, W]`` floating input.
        output_size (int | list | tuple): ``(D_out, H_out, W_out)`` (None keeps an axis).
        kernel_size (int | list | tuple, optional): overlapping regions of this size;
            None: disjoint regions.
        random_u (float, optional): the random number in (0, 1); drawn when None.
        return_mask (bool, optional): also return the flat ``(d * H + h) * W + w``
            index of each maximum (int32).
        name (str, optional): unused.

    Returns:
        Tensor | tuple: ``[N, C, D_out, H_out, W_out]``, and the mask when asked for.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> x = fw.arange(64, dtype="float32").reshape([1, 1, 4, 4, 4])
        >>> out, mask = F.fractional_max_pool3d(x, 2, random_u=0.5, return_mask=True)
        >>> out.shape, bool((out.flatten() == mask.flatten().astype("float32")).all())
        ([1, 1, 2, 2, 2], True)
    """
    return _fractional("fractional_max_pool3d", x, output_size, kernel_size, random_u,
                       return_mask, 3)
