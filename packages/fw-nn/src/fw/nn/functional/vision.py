"""Pixel and channel rearrangements and spatial sampling (``affine_grid``,
``grid_sample``) of ``paddle.nn.functional``."""

from __future__ import annotations

import fw
from fw.core.errors import InvalidArgumentError
from fw.nn.functional._helpers import channel_last, op

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "affine_grid", "grid_sample"]


def pixel_shuffle(x, upscale_factor, data_format="NCHW", name=None):
    """Rearrange ``[N, C * r * r, H, W]`` into ``[N, C, H * r, W * r]`` (sub-pixel
    convolution upsampling, ESPCN).

    Args:
        x (Tensor): the 4-D input.
        upscale_factor (int): the factor r.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, H * r, W * r]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(4, dtype='float32').reshape([1, 4, 1, 1])
        >>> fw.nn.functional.pixel_shuffle(x, 2).tolist()
        [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    cl = channel_last(data_format, ("NCHW", "NHWC"), "pixel_shuffle")
    return op("pixel_shuffle", [x], upscale_factor=upscale_factor, channel_last=cl)


def pixel_unshuffle(x, downscale_factor, data_format="NCHW", name=None):
    """Rearrange ``[N, C, H * r, W * r]`` into ``[N, C * r * r, H, W]``, the inverse of
    `pixel_shuffle`.

    Args:
        x (Tensor): the 4-D input.
        downscale_factor (int): the factor r; must divide H and W.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C * r * r, H, W]``.

    Examples:
        >>> import fw
        >>> x = fw.arange(4, dtype='float32').reshape([1, 1, 2, 2])
        >>> y = fw.nn.functional.pixel_unshuffle(x, 2)
        >>> y.shape, y.flatten().tolist()
        ([1, 4, 1, 1], [0.0, 1.0, 2.0, 3.0])
    """
    cl = channel_last(data_format, ("NCHW", "NHWC"), "pixel_unshuffle")
    return op("pixel_unshuffle", [x], downscale_factor=downscale_factor, channel_last=cl)


def channel_shuffle(x, groups, data_format="NCHW", name=None):
    """Channel shuffle (ShuffleNet): view the channels as ``[groups, C / groups]``,
    transpose that to ``[C / groups, groups]`` and flatten it back.

    Args:
        x (Tensor): the 4-D input.
        groups (int): the number of groups; must divide C.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``'s shape.

    Examples:
        >>> import fw
        >>> x = fw.arange(6, dtype='float32').reshape([1, 6, 1, 1])
        >>> fw.nn.functional.channel_shuffle(x, 2).flatten().tolist()
        [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    cl = channel_last(data_format, ("NCHW", "NHWC"), "channel_shuffle")
    return op("channel_shuffle", [x], groups=groups, channel_last=cl)


def _base_coords(n, align_corners, dtype):
    """Normalised pixel-centre coordinates of an axis of size n in [-1, 1]."""
    if n == 1:
        return fw.zeros([1], dtype=dtype)
    if align_corners:
        return fw.linspace(-1.0, 1.0, n, dtype=dtype)
    return (fw.arange(n, dtype=dtype) * 2.0 + 1.0) / n - 1.0


def affine_grid(theta, out_shape, align_corners=True, name=None):
    """The sampling grid of a batch of affine transforms, for `grid_sample`.

    For a 2-D output, ``theta [N, 2, 3]`` maps each output position (normalised to
    [-1, 1]) to an input position ``(x, y)``; a 3-D output uses ``theta [N, 3, 4]``.

    Args:
        theta (Tensor): the affine matrices ``[N, 2, 3]`` or ``[N, 3, 4]``.
        out_shape (list|Tensor): the output size ``[N, C, H, W]`` or ``[N, C, D, H, W]``.
        align_corners (bool, optional): -1 and 1 are the centres of the corner pixels (else
            their outer edges). Default: True.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, H, W, 2]`` (or ``[N, D, H, W, 3]``) coordinates.

    Examples:
        >>> import fw
        >>> eye = fw.to_tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> grid = fw.nn.functional.affine_grid(eye, [1, 1, 2, 2])
        >>> grid.shape
        [1, 2, 2, 2]
        >>> grid.numpy()[0, 0].tolist()
        [[-1.0, -1.0], [1.0, -1.0]]
    """
    if hasattr(out_shape, "tolist") and not isinstance(out_shape, (list, tuple)):
        out_shape = out_shape.tolist()
    out_shape = [int(s) for s in out_shape]
    nd = len(out_shape) - 2
    if nd not in (2, 3) or list(theta.shape[1:]) != [nd, nd + 1]:
        raise InvalidArgumentError(f"affine_grid: theta {list(theta.shape)} and out_shape "
                                   f"{out_shape} must be [N, 2, 3] with [N, C, H, W] or "
                                   f"[N, 3, 4] with [N, C, D, H, W]")
    dt = theta.dtype
    sizes = out_shape[2:]  # (H, W) or (D, H, W)
    axes = [_base_coords(s, align_corners, dt) for s in sizes]
    mesh = fw.meshgrid(*axes)  # 'ij' order: mesh[k] varies along spatial axis k
    coords = [mesh[k] for k in range(nd - 1, -1, -1)]  # x (last axis) first
    base = fw.stack(coords + [fw.ones(sizes, dtype=dt)], axis=-1)  # [*S, nd+1]
    flat = base.reshape([1, -1, nd + 1])
    grid = fw.matmul(flat, theta, transpose_y=True)  # [N, prod(S), nd]
    return grid.reshape([out_shape[0]] + sizes + [nd])


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1.0) * 0.5 * (size - 1)
    return ((coord + 1.0) * size - 1.0) * 0.5


def _reflect(coord, size, align_corners):
    """Reflect unnormalised coordinates into the image (PyTorch's reflection rule)."""
    if align_corners:
        lo, span = 0.0, 2.0 * (size - 1)
    else:
        lo, span = -0.5, 2.0 * size
    if span <= 0:
        return fw.zeros_like(coord)
    c = fw.abs(coord - lo)
    extra = fw.remainder(c, span)
    c = fw.where(extra > span / 2, span - extra, extra) + lo
    return fw.clip(c, 0.0, size - 1.0)


def _round_half_even(v):
    r = fw.floor(v + 0.5)
    tie = (r - v) == 0.5
    odd = fw.remainder(r, fw.full_like(r, 2.0)) != 0
    return fw.where(tie & odd, r - 1.0, r)


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=True,
                name=None):
    """Sample ``x`` at the normalised locations of ``grid``: ``(-1, -1)`` is the top-left
    and ``(1, 1)`` the bottom-right of the input. Differentiable in ``x`` and, for
    bilinear mode, in ``grid``. 4-D input only (fw has no 5-D grid_sample).

    Args:
        x (Tensor): the input ``[N, C, H, W]``.
        grid (Tensor): ``[N, H_out, W_out, 2]`` (x, y) locations.
        mode (str, optional): ``"bilinear"`` or ``"nearest"``. Default: "bilinear".
        padding_mode (str, optional): ``"zeros"`` (taps outside read 0), ``"border"``
            (clamped) or ``"reflection"``. Default: "zeros".
        align_corners (bool, optional): -1 and 1 are the centres of the corner pixels.
            Default: True.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C, H_out, W_out]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
        >>> grid = fw.to_tensor([[[[0.0, 0.0], [1.0, -1.0]]]])
        >>> fw.nn.functional.grid_sample(x, grid).tolist()
        [[[[1.5, 1.0]]]]
        >>> eye = fw.to_tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> same = fw.nn.functional.grid_sample(x, fw.nn.functional.affine_grid(eye, [1, 1, 2, 2]))
        >>> same.tolist() == x.tolist()
        True
    """
    if len(x.shape) != 4 or len(grid.shape) != 4 or grid.shape[-1] != 2:
        raise InvalidArgumentError(f"grid_sample: x must be [N, C, H, W] and grid [N, Ho, Wo, "
                                   f"2]; got {list(x.shape)} and {list(grid.shape)} (5-D "
                                   f"input is not supported)")
    if mode not in ("bilinear", "nearest"):
        raise InvalidArgumentError(f"grid_sample: mode must be 'bilinear' or 'nearest', got "
                                   f"{mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise InvalidArgumentError(f"grid_sample: padding_mode must be 'zeros', 'border' or "
                                   f"'reflection', got {padding_mode!r}")
    n, c, h, w = x.shape
    ho, wo = grid.shape[1], grid.shape[2]
    grid = grid.astype(x.dtype)
    ix = _unnormalize(grid[..., 0], w, align_corners)
    iy = _unnormalize(grid[..., 1], h, align_corners)
    if padding_mode == "border":
        ix, iy = fw.clip(ix, 0.0, w - 1.0), fw.clip(iy, 0.0, h - 1.0)
    elif padding_mode == "reflection":
        ix, iy = _reflect(ix, w, align_corners), _reflect(iy, h, align_corners)
    flat = x.reshape([n, c, h * w])

    def tap(px, py):
        """Values at integer positions (float tensors) with zeros outside the image."""
        inside = (px >= 0) & (px <= w - 1) & (py >= 0) & (py <= h - 1)
        cx = fw.clip(px, 0, w - 1).astype("int64")
        cy = fw.clip(py, 0, h - 1).astype("int64")
        idx = (cy * w + cx).reshape([n, 1, ho * wo]).expand([n, c, ho * wo])
        vals = fw.take_along_axis(flat, idx, axis=2).reshape([n, c, ho, wo])
        return fw.where(inside.unsqueeze(1), vals, fw.zeros_like(vals))

    if mode == "nearest":
        # half-way taps round to even (C's nearbyint), as Paddle's and PyTorch's kernels
        # do: fw.round rounds halves away from zero, which shifts whole rows of an exact
        # quarter-turn rotation
        return tap(_round_half_even(ix), _round_half_even(iy))
    x0, y0 = fw.floor(ix), fw.floor(iy)
    x1, y1 = x0 + 1.0, y0 + 1.0
    wx1, wy1 = ix - x0, iy - y0
    wx0, wy0 = 1.0 - wx1, 1.0 - wy1
    out = (tap(x0, y0) * (wx0 * wy0).unsqueeze(1) + tap(x1, y0) * (wx1 * wy0).unsqueeze(1)
           + tap(x0, y1) * (wx0 * wy1).unsqueeze(1) + tap(x1, y1) * (wx1 * wy1).unsqueeze(1))
    return out
