"""Deformable convolution v1 / v2 (Paddle's ``paddle.vision.ops.deform_conv2d`` and
``DeformConv2D``): every kernel tap samples ``x`` bilinearly at its regular position
plus a learned offset (v2: times a learned mask), then the samples are contracted
with the weight like an im2col convolution.

The op is composed from fw ops with VJPs, so autograd differentiates it with
respect to x, offset, mask, weight and bias: the integer corners of each sample
are found in NumPy (they are piecewise constant in the offsets), and the corner
values (a gather from ``x``) are blended with weights that are fw expressions of
the offsets, so the offsets get the bilinear derivative Paddle's kernel gives.
"""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.nn import Layer
from fw.vision.ops._checks import FLOATS, check, describe, pair

__all__ = ["deform_conv2d", "DeformConv2D"]


def deform_conv2d(x, offset, weight, bias=None, stride=1, padding=0, dilation=1,
                  deformable_groups=1, groups=1, mask=None, name=None):
    """Deformable convolution (v1 without ``mask``, v2 with it).

    Args:
        x (Tensor): [N, C, H, W] input, float32 or float64.
        offset (Tensor): [N, 2 * deformable_groups * kh * kw, Ho, Wo] sampling offsets,
            (dy, dx) per kernel tap.
        weight (Tensor): [Cout, C / groups, kh, kw] kernel.
        bias (Tensor, optional): [Cout] bias. Default None.
        stride (int|tuple[int, int], optional): Default 1.
        padding (int|tuple[int, int], optional): Default 0.
        dilation (int|tuple[int, int], optional): Default 1.
        deformable_groups (int, optional): channel groups sharing one offset field. Default 1.
        groups (int, optional): convolution groups. Default 1.
        mask (Tensor, optional): [N, deformable_groups * kh * kw, Ho, Wo] modulation
            (v2). Default None.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [N, Cout, Ho, Wo].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.ones([1, 2, 5, 5])
            >>> w = fw.ones([4, 2, 3, 3])
            >>> offset = fw.zeros([1, 18, 3, 3])
            >>> fw.vision.ops.deform_conv2d(x, offset, w).shape
            [1, 4, 3, 3]
    """
    op = "deform_conv2d"
    xa = check(x, op, "x", dtypes=FLOATS, ndim=4)
    oa = check(offset, op, "offset", dtypes=FLOATS, ndim=4)
    wa = check(weight, op, "weight", dtypes=FLOATS, ndim=4)
    ma = check(mask, op, "mask", dtypes=FLOATS, ndim=4, optional=True)
    ba = check(bias, op, "bias", dtypes=FLOATS, ndim=1, optional=True)
    sh, sw = pair(stride, op, "stride")
    ph, pw = pair(padding, op, "padding")
    dh, dw = pair(dilation, op, "dilation")
    if min(sh, sw, dh, dw) <= 0 or min(ph, pw) < 0:
        raise ValueError(f"deform_conv2d: stride and dilation must be positive and padding "
                         f"non-negative, got stride={stride!r}, padding={padding!r}, "
                         f"dilation={dilation!r}")
    n, c, h, w = xa.shape
    cout, cg, kh, kw = wa.shape
    dg = int(deformable_groups)
    if groups <= 0 or c % groups or cout % groups or cg != c // groups:
        raise ValueError(f"deform_conv2d: 'weight' must be [Cout, C / groups, kh, kw] with "
                         f"Cout divisible by groups={groups}; got x {describe(xa)} and "
                         f"weight {describe(wa)}")
    if dg <= 0 or c % dg:
        raise ValueError(f"deform_conv2d: the channels of 'x' ({c}) must be divisible by "
                         f"deformable_groups={deformable_groups}")
    ho = (h + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    wo = (w + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    k = kh * kw
    if oa.shape != (n, 2 * dg * k, ho, wo):
        raise ValueError(f"deform_conv2d: 'offset' must be [{n}, {2 * dg * k}, {ho}, {wo}] "
                         f"for x {describe(xa)} and weight {describe(wa)}, got "
                         f"{describe(oa)}")
    if ma is not None and ma.shape != (n, dg * k, ho, wo):
        raise ValueError(f"deform_conv2d: 'mask' must be [{n}, {dg * k}, {ho}, {wo}], got "
                         f"{describe(ma)}")
    if ba is not None and ba.shape != (cout,):
        raise ValueError(f"deform_conv2d: 'bias' must be [{cout}], got {describe(ba)}")
    dtype = xa.dtype

    def tensor(v, a):
        return v if isinstance(v, fw.Tensor) else fw.to_tensor(a)

    xt, ot, wt = tensor(x, xa), tensor(offset, oa), tensor(weight, wa)
    # sampling positions [N, dg, K, Ho, Wo]: the regular grid plus the offsets
    ky, kx = np.divmod(np.arange(k), kw)
    base_y = (np.arange(ho) * sh - ph)[None, :, None] + (ky * dh)[:, None, None]
    base_x = (np.arange(wo) * sw - pw)[None, None, :] + (kx * dw)[:, None, None]
    off = ot.reshape([n, dg, k, 2, ho, wo])
    oy, ox = off[:, :, :, 0], off[:, :, :, 1]
    oya = oa.reshape(n, dg, k, 2, ho, wo)
    py = base_y[None, None] + oya[:, :, :, 0].astype(np.float64)
    px = base_x[None, None] + oya[:, :, :, 1].astype(np.float64)
    inside = (py > -1) & (px > -1) & (py < h) & (px < w)
    y0 = np.floor(py)
    x0 = np.floor(px)
    # fractional parts as fw expressions of the offsets (the floors are constants)
    ly = oy + fw.to_tensor((base_y[None, None] - y0).astype(dtype))
    lx = ox + fw.to_tensor((base_x[None, None] - x0).astype(dtype))
    hy, hx = 1.0 - ly, 1.0 - lx
    y0 = y0.astype(np.int64)
    x0 = x0.astype(np.int64)
    cpg = c // dg  # channels per deformable group
    chan = (np.arange(n)[:, None] * c + np.arange(c)[None]).reshape(n, dg, cpg)
    xflat = xt.reshape([-1])
    val = None
    for dy, dx, wy, wx in ((0, 0, hy, hx), (0, 1, hy, lx), (1, 0, ly, hx), (1, 1, ly, lx)):
        yy, xx = y0 + dy, x0 + dx
        ok = inside & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        pix = np.where(ok, np.clip(yy, 0, h - 1) * w + np.clip(xx, 0, w - 1), 0)
        # [N, dg, cpg, K*Ho*Wo] indices into x.flatten()
        idx = chan[..., None] * (h * w) + pix.reshape(n, dg, 1, -1)
        corner = fw.gather(xflat, fw.to_tensor(idx.reshape(-1))).reshape(
            [n, dg, cpg, k, ho, wo])
        blend = wy * wx * fw.to_tensor(ok.astype(dtype))  # [N, dg, K, Ho, Wo]
        term = corner * blend.unsqueeze(2)
        val = term if val is None else val + term
    if mask is not None:
        mt = tensor(mask, ma).reshape([n, dg, 1, k, ho, wo])
        val = val * mt
    # columns [N, groups, C/groups * K, Ho*Wo], channel-major then kernel tap, like the
    # weight's [Cout, C/groups, kh, kw] layout
    cols = val.reshape([n, groups, cg * k, ho * wo])
    wmat = wt.reshape([1, groups, cout // groups, cg * k])
    out = fw.matmul(wmat, cols).reshape([n, cout, ho, wo])
    if bias is not None:
        out = out + tensor(bias, ba).reshape([1, cout, 1, 1])
    return out


class DeformConv2D(Layer):
    """Deformable convolution layer (Paddle's ``paddle.vision.ops.DeformConv2D``):
    holds ``weight`` [out_channels, in_channels / groups, kh, kw] and ``bias``; the
    forward takes ``(x, offset, mask=None)``.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|tuple[int, int]): kernel size.
        stride, padding, dilation (int|tuple[int, int], optional): as in Conv2D.
        deformable_groups (int, optional): Default 1.
        groups (int, optional): Default 1.
        weight_attr (ParamAttr, optional): weight attribute. Default None.
        bias_attr (ParamAttr|bool, optional): bias attribute; False: no bias. Default None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> conv = fw.vision.ops.DeformConv2D(2, 4, 3, padding=1)
            >>> x = fw.ones([1, 2, 5, 5])
            >>> conv(x, fw.zeros([1, 18, 5, 5])).shape
            [1, 4, 5, 5]
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, deformable_groups=1, groups=1, weight_attr=None, bias_attr=None):
        super().__init__()
        kh, kw = pair(kernel_size, "DeformConv2D", "kernel_size")
        if in_channels % groups:
            raise ValueError(f"DeformConv2D: in_channels ({in_channels}) must be divisible "
                             f"by groups ({groups})")
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._deformable_groups, self._groups = deformable_groups, groups
        # Paddle's default init: normal with std sqrt(2 / (kh * kw * in_channels))
        fan_in = in_channels * kh * kw
        from fw.nn.initializer import Normal

        self.weight = self.create_parameter(
            shape=[out_channels, in_channels // groups, kh, kw], attr=weight_attr,
            default_initializer=Normal(0.0, math.sqrt(2.0 / fan_in)))
        self.bias = self.create_parameter(shape=[out_channels], attr=bias_attr,
                                          is_bias=True)

    def forward(self, x, offset, mask=None):
        return deform_conv2d(x, offset, self.weight, self.bias, self._stride, self._padding,
                             self._dilation, self._deformable_groups, self._groups, mask)
