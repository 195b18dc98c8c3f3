"""Region-of-interest pooling: ``roi_align`` (Mask R-CNN), ``roi_pool`` (Fast R-CNN),
``psroi_pool`` (R-FCN) and their layers, with Paddle 3.x's arguments and numerics.

Gradients with respect to ``x`` come from composing fw ops that have VJPs, so
autograd needs no op of its own here:

- RoI Align is separable along y and x: every output is ``Wy[r] @ X[b_r] @ Wx[r]^T``
  with interpolation weights built in NumPy from the boxes, so the op is a pair of
  matmuls per image;
- PSRoI pooling gathers each bin's window from its own channel (the gather's VJP
  scatters the gradient back) and averages it;
- RoI max pooling picks its argmax in NumPy and gathers those elements from ``x``:
  the gather's VJP sends each output's gradient to its argmax, as Paddle does.

Boxes get no gradient (Paddle's kernels give none either).
"""

from __future__ import annotations

import numpy as np

import fw
from fw.nn import Layer
from fw.vision.ops._checks import FLOATS, boxes_num_split, check, describe, positive_pair

__all__ = ["roi_align", "roi_pool", "psroi_pool", "RoIAlign", "RoIPool", "PSRoIPool"]


def _inputs(op, x, boxes, boxes_num, output_size):
    xa = check(x, op, "x", dtypes=FLOATS, ndim=4)
    ba = check(boxes, op, "boxes", dtypes=FLOATS, ndim=2, last=4)
    if ba.dtype != xa.dtype:
        raise TypeError(f"{op}: arguments 'x' and 'boxes' must have the same dtype, got x "
                        f"{describe(xa)} and boxes {describe(ba)}")
    batch = boxes_num_split(boxes_num, ba.shape[0], xa.shape[0], op)
    ph, pw = positive_pair(output_size, op, "output_size")
    xt = x if isinstance(x, fw.Tensor) else fw.to_tensor(xa)
    return xt, xa, ba.astype(np.float64), batch, ph, pw


def _per_image(xt, batch, left, right, dtype):
    """``left[r] @ x[batch[r]] @ right[r]`` for every box r: left [R, P, H], right
    [R, W, Q] -> [R, C, P, Q]. Per image, all its boxes' left factors multiply x (as
    [H, C*W]) in one 2-D matmul, then each box's right factor in one batched matmul;
    no intermediate (nor gradient) is box x C x H x W."""
    c, h, w = xt.shape[1:]
    outs = []
    for b in np.unique(batch):
        sel = np.nonzero(batch == b)[0]
        rb, p, q = len(sel), left.shape[1], right.shape[2]
        xb = xt[int(b)].transpose([1, 0, 2]).reshape([h, c * w])  # [H, C*W]
        lt = fw.to_tensor(left[sel].reshape(rb * p, h).astype(dtype))
        t1 = fw.matmul(lt, xb).reshape([rb, p * c, w])  # [Rb, P*C, W]
        rt = fw.to_tensor(right[sel].astype(dtype))  # [Rb, W, Q]
        out = fw.matmul(t1, rt).reshape([rb, p, c, q]).transpose([0, 2, 1, 3])
        outs.append(out)
    return outs[0] if len(outs) == 1 else fw.concat(outs, axis=0)


def _align_weights(lo, bin_size, grid, pooled, size):
    """Interpolation weights [R, pooled, size] along one axis of RoI Align: each bin
    averages ``grid`` bilinear samples (Paddle's bilinear rule: samples beyond one pixel
    outside the map count zero; the rest clamp to the border)."""
    r = lo.shape[0]
    g = max(int(grid.max()), 1) if r else 1
    p = np.arange(pooled)[None, :, None]
    i = np.arange(g)[None, None, :]
    per = np.maximum(grid, 1)[:, None, None]
    step = bin_size[:, None, None]
    pos = lo[:, None, None] + p * step + (i + 0.5) * step / per
    used = (i < grid[:, None, None]) & (pos >= -1.0) & (pos <= size)
    pos = np.where(used, np.clip(pos, 0.0, None), 0.0)
    low = np.floor(pos).astype(np.int64)
    at_end = low >= size - 1
    low = np.where(at_end, size - 1, low)
    high = np.where(at_end, size - 1, low + 1)
    frac = np.where(at_end, 0.0, pos - low)
    w = np.zeros((r, pooled, size))
    rr = np.broadcast_to(np.arange(r)[:, None, None], pos.shape)
    pp = np.broadcast_to(p, pos.shape)
    np.add.at(w, (rr, pp, low), np.where(used, 1.0 - frac, 0.0))
    np.add.at(w, (rr, pp, high), np.where(used, frac, 0.0))
    return w / per


def roi_align(x, boxes, boxes_num, output_size, spatial_scale=1.0, sampling_ratio=-1,
              aligned=True, name=None):
    """RoI Align (Paddle's ``paddle.vision.ops.roi_align``, from Mask R-CNN): each box
    is split into ``output_size`` bins and each bin averages bilinear samples of ``x``.

    Args:
        x (Tensor): [N, C, H, W] feature map, float32 or float64.
        boxes (Tensor): [R, 4] boxes (x1, y1, x2, y2) in input-image coordinates.
        boxes_num (Tensor): [N] int32 number of boxes of each image (boxes are grouped
            by image, in order).
        output_size (int|tuple[int, int]): pooled (height, width).
        spatial_scale (float, optional): scale from box to feature coordinates. Default 1.0.
        sampling_ratio (int, optional): samples per bin along each axis; <= 0 takes
            ceil(box size / output size). Default -1.
        aligned (bool, optional): shift boxes by -0.5 pixel (continuous coordinates);
            an empty box then pools to 0 (Paddle's kernel gives NaN). Default True.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [R, C, output_size[0], output_size[1]]; differentiable in ``x``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.arange(16, dtype="float32").reshape([1, 1, 4, 4])
            >>> boxes = fw.to_tensor([[0., 0., 4., 4.]])
            >>> out = fw.vision.ops.roi_align(x, boxes, fw.to_tensor([1], dtype="int32"), 2)
            >>> out.shape
            [1, 1, 2, 2]
    """
    xt, xa, b, batch, ph, pw = _inputs("roi_align", x, boxes, boxes_num, output_size)
    shape = xa.shape
    h, w = shape[2:]
    off = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (b[:, k] * spatial_scale - off for k in range(4))
    rw, rh = x2 - x1, y2 - y1
    if not aligned:  # legacy mode: boxes at least one pixel
        rw, rh = np.maximum(rw, 1.0), np.maximum(rh, 1.0)
    bh, bw = rh / ph, rw / pw
    if sampling_ratio > 0:
        gh = np.full(len(b), int(sampling_ratio))
        gw = gh
    else:
        # an empty or inverted box (aligned=True) gets no sample: output 0, where
        # Paddle's kernel divides 0 by 0 (NaN)
        gh = np.maximum(np.ceil(rh / ph), 0).astype(np.int64)
        gw = np.maximum(np.ceil(rw / pw), 0).astype(np.int64)
    if len(b) == 0:
        return fw.zeros([0, shape[1], ph, pw], dtype=str(xa.dtype))
    wy = _align_weights(y1, bh, gh, ph, h)  # [R, ph, H]
    wx = _align_weights(x1, bw, gw, pw, w)  # [R, pw, W]
    return _per_image(xt, batch, wy, wx.transpose(0, 2, 1), xa.dtype)


def _round(v):
    """C's round(): halves away from zero (NumPy's round is to even)."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def roi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """RoI max pooling (Paddle's ``paddle.vision.ops.roi_pool``, from Fast R-CNN): each
    box, rounded to feature pixels, is split into ``output_size`` bins and each bin
    takes the maximum of ``x`` (0 for an empty bin).

    Args:
        x (Tensor): [N, C, H, W] feature map, float32 or float64.
        boxes (Tensor): [R, 4] boxes (x1, y1, x2, y2).
        boxes_num (Tensor): [N] int32 number of boxes of each image.
        output_size (int|tuple[int, int]): pooled (height, width).
        spatial_scale (float, optional): scale from box to feature coordinates. Default 1.0.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [R, C, output_size[0], output_size[1]]; differentiable in ``x`` (the
        gradient goes to each bin's argmax).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.arange(16, dtype="float32").reshape([1, 1, 4, 4])
            >>> boxes = fw.to_tensor([[0., 0., 3., 3.]])
            >>> fw.vision.ops.roi_pool(x, boxes, fw.to_tensor([1], dtype="int32"), 2).tolist()
            [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    xt, xa, b, batch, ph, pw = _inputs("roi_pool", x, boxes, boxes_num, output_size)
    shape = xa.shape
    n, c, h, w = shape
    r = len(b)
    sx, sy, ex, ey = (_round(b[:, k] * spatial_scale) for k in range(4))
    rh = np.maximum(ey - sy + 1, 1.0)
    rw = np.maximum(ex - sx + 1, 1.0)
    hs = np.clip(np.floor(np.arange(ph)[None] * (rh / ph)[:, None]) + sy[:, None], 0, h)
    he = np.clip(np.ceil(np.arange(1, ph + 1)[None] * (rh / ph)[:, None]) + sy[:, None], 0, h)
    ws = np.clip(np.floor(np.arange(pw)[None] * (rw / pw)[:, None]) + sx[:, None], 0, w)
    we = np.clip(np.ceil(np.arange(1, pw + 1)[None] * (rw / pw)[:, None]) + sx[:, None], 0, w)
    hs, he, ws, we = (v.astype(np.int64) for v in (hs, he, ws, we))
    if r == 0:
        return fw.zeros([0, c, ph, pw], dtype=str(xa.dtype))
    flat = np.zeros((r, c, ph, pw), np.int64)  # argmax as an index into x.flatten()
    empty = np.zeros((r, ph, pw), bool)
    base = (batch[:, None] * c + np.arange(c)[None]) * h * w  # [R, C]
    # pixels-major copy, so each gathered pixel brings its C channels contiguously
    xpix = np.ascontiguousarray(xa.reshape(n, c, h * w).transpose(0, 2, 1))  # [N, HW, C]
    for i in range(ph):  # one vectorized step per bin, over all boxes and channels
        kh = max(int((he[:, i] - hs[:, i]).max()), 1)
        yy = hs[:, i, None] + np.arange(kh)[None]  # [R, kh]
        yok = yy < he[:, i, None]
        for j in range(pw):
            kw = max(int((we[:, j] - ws[:, j]).max()), 1)
            xx = ws[:, j, None] + np.arange(kw)[None]
            xok = xx < we[:, j, None]
            ok = (yok[:, :, None] & xok[:, None, :]).reshape(r, -1)  # [R, K]
            pix = (np.minimum(yy, h - 1)[:, :, None] * w +
                   np.minimum(xx, w - 1)[:, None, :]).reshape(r, -1)
            vals = np.where(ok[:, :, None], xpix[batch[:, None], pix], -np.inf)  # [R, K, C]
            arg = np.argmax(vals, axis=1)  # first maximum in row-major order, as Paddle
            flat[:, :, i, j] = base + np.take_along_axis(pix, arg, axis=1)
            empty[:, i, j] = ~ok.any(axis=1)
    out = fw.gather(xt.reshape([-1]), fw.to_tensor(flat.reshape(-1))).reshape([r, c, ph, pw])
    if empty.any():
        out = out * fw.to_tensor((~empty[:, None]).astype(xa.dtype))
    return out


def psroi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """Position-sensitive RoI average pooling (Paddle's ``paddle.vision.ops.psroi_pool``,
    from R-FCN): bin (i, j) of output channel k averages input channel
    ``(k * ph + i) * pw + j`` over the bin.

    Args:
        x (Tensor): [N, C, H, W] feature map, C divisible by ph * pw; float32 or float64.
        boxes (Tensor): [R, 4] boxes (x1, y1, x2, y2).
        boxes_num (Tensor): [N] int32 number of boxes of each image.
        output_size (int|tuple[int, int]): pooled (ph, pw).
        spatial_scale (float, optional): scale from box to feature coordinates. Default 1.0.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [R, C / (ph * pw), ph, pw]; differentiable in ``x``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.ones([1, 8, 4, 4])
            >>> boxes = fw.to_tensor([[0., 0., 3., 3.]])
            >>> fw.vision.ops.psroi_pool(x, boxes, fw.to_tensor([1], dtype="int32"), 2).shape
            [1, 2, 2, 2]
    """
    xt, xa, b, batch, ph, pw = _inputs("psroi_pool", x, boxes, boxes_num, output_size)
    shape = xa.shape
    n, c, h, w = shape
    if c % (ph * pw):
        raise ValueError(f"psroi_pool: the channels of 'x' must be divisible by output "
                         f"size {ph}x{pw}, got x {describe(xa)}")
    co = c // (ph * pw)
    r = len(b)
    if r == 0:
        return fw.zeros([0, co, ph, pw], dtype=str(xa.dtype))
    sx, sy = _round(b[:, 0]) * spatial_scale, _round(b[:, 1]) * spatial_scale
    ex, ey = (_round(b[:, 2]) + 1.0) * spatial_scale, (_round(b[:, 3]) + 1.0) * spatial_scale
    bh = np.maximum(ey - sy, 0.1) / ph
    bw = np.maximum(ex - sx, 0.1) / pw
    hs = np.clip(np.floor(np.arange(ph)[None] * bh[:, None] + sy[:, None]), 0, h)
    he = np.clip(np.ceil(np.arange(1, ph + 1)[None] * bh[:, None] + sy[:, None]), 0, h)
    ws = np.clip(np.floor(np.arange(pw)[None] * bw[:, None] + sx[:, None]), 0, w)
    we = np.clip(np.ceil(np.arange(1, pw + 1)[None] * bw[:, None] + sx[:, None]), 0, w)
    area = (he - hs)[:, :, None] * (we - ws)[:, None, :]  # [R, ph, pw]
    # bin (i, j) of output channel k averages input channel (k, i, j) over its window:
    # gather each window's pixels (padded to the largest window, padding weighted 0)
    hs, he, ws, we = (v.astype(np.int64) for v in (hs, he, ws, we))
    kh = max(int((he - hs).max()), 1)
    kw = max(int((we - ws).max()), 1)
    yy = hs[:, :, None] + np.arange(kh)  # [R, ph, kh]
    xx = ws[:, :, None] + np.arange(kw)  # [R, pw, kw]
    inside = (yy < he[:, :, None])[:, :, None, :, None] & \
        (xx < we[:, :, None])[:, None, :, None, :]  # [R, ph, pw, kh, kw]
    pix = (np.minimum(yy, h - 1)[:, :, None, :, None] * w +
           np.minimum(xx, w - 1)[:, None, :, None, :])  # [R, ph, pw, kh, kw]
    ch = (np.arange(co)[:, None, None] * ph + np.arange(ph)[:, None]) * pw + np.arange(pw)
    plane = (batch[:, None, None, None] * c + ch[None]) * (h * w)  # [R, co, ph, pw]
    idx = plane[..., None, None] + pix[:, None]  # [R, co, ph, pw, kh, kw]
    wts = np.broadcast_to(inside[:, None], idx.shape).astype(xa.dtype)
    vals = fw.gather(xt.reshape([-1]), fw.to_tensor(idx.reshape(-1)))
    picked = (vals.reshape(list(idx.shape)) * fw.to_tensor(np.ascontiguousarray(wts))).sum(
        axis=[-2, -1])
    scale = np.where(area > 0, 1.0 / np.maximum(area, 1e-12), 0.0)[:, None]
    return picked * fw.to_tensor(scale.astype(xa.dtype))


class RoIAlign(Layer):
    """Layer form of `roi_align` (Paddle's ``paddle.vision.ops.RoIAlign``).

    Args:
        output_size (int|tuple[int, int]): pooled (height, width).
        spatial_scale (float, optional): box to feature scale. Default 1.0.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> layer = fw.vision.ops.RoIAlign(output_size=2)
            >>> out = layer(fw.ones([1, 3, 8, 8]), fw.to_tensor([[1., 1., 5., 5.]]),
            ...             fw.to_tensor([1], dtype="int32"))
            >>> out.shape
            [1, 3, 2, 2]
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x, boxes, boxes_num, aligned=True):
        return roi_align(x, boxes, boxes_num, self._output_size, self._spatial_scale,
                         aligned=aligned)


class RoIPool(Layer):
    """Layer form of `roi_pool` (Paddle's ``paddle.vision.ops.RoIPool``).

    Args:
        output_size (int|tuple[int, int]): pooled (height, width).
        spatial_scale (float, optional): box to feature scale. Default 1.0.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> layer = fw.vision.ops.RoIPool(output_size=2)
            >>> layer(fw.ones([1, 3, 8, 8]), fw.to_tensor([[1., 1., 5., 5.]]),
            ...       fw.to_tensor([1], dtype="int32")).shape
            [1, 3, 2, 2]
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x, boxes, boxes_num):
        return roi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)


class PSRoIPool(Layer):
    """Layer form of `psroi_pool` (Paddle's ``paddle.vision.ops.PSRoIPool``).

    Args:
        output_size (int|tuple[int, int]): pooled (height, width).
        spatial_scale (float, optional): box to feature scale. Default 1.0.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> layer = fw.vision.ops.PSRoIPool(output_size=2)
            >>> layer(fw.ones([1, 8, 8, 8]), fw.to_tensor([[1., 1., 5., 5.]]),
            ...       fw.to_tensor([1], dtype="int32")).shape
            [1, 2, 2, 2]
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, x, boxes, boxes_num):
        return psroi_pool(x, boxes, boxes_num, self.output_size, self.spatial_scale)
