"""Pixel and channel rearrangement layers."""

from __future__ import annotations

from fw.nn import functional as F
from fw.nn.layer.layers import Layer

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Layer):
    """Rearrange ``[N, C * r * r, H, W]`` into ``[N, C, H * r, W * r]`` (sub-pixel
    upsampling); see `fw.nn.functional.pixel_shuffle`.

    Args:
        upscale_factor (int): the factor r.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input: ``[N, C * r * r, H, W]``; output: ``[N, C, H * r, W * r]``.

    Examples:
        >>> import fw
        >>> fw.nn.PixelShuffle(3)(fw.ones([2, 9, 4, 4])).shape
        [2, 1, 12, 12]
    """

    def __init__(self, upscale_factor, data_format="NCHW", name=None):
        super().__init__()
        self._upscale_factor = upscale_factor
        self._data_format = data_format

    def forward(self, x):
        return F.pixel_shuffle(x, self._upscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return f"upscale_factor={self._upscale_factor}"


class PixelUnshuffle(Layer):
    """Rearrange ``[N, C, H * r, W * r]`` into ``[N, C * r * r, H, W]``, the inverse of
    `PixelShuffle`.

    Args:
        downscale_factor (int): the factor r; must divide H and W.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input: ``[N, C, H * r, W * r]``; output: ``[N, C * r * r, H, W]``.

    Examples:
        >>> import fw
        >>> fw.nn.PixelUnshuffle(2)(fw.ones([2, 1, 8, 8])).shape
        [2, 4, 4, 4]
    """

    def __init__(self, downscale_factor, data_format="NCHW", name=None):
        super().__init__()
        self._downscale_factor = downscale_factor
        self._data_format = data_format

    def forward(self, x):
        return F.pixel_unshuffle(x, self._downscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return f"downscale_factor={self._downscale_factor}"


class ChannelShuffle(Layer):
    """Channel shuffle (ShuffleNet): view the channels as ``[groups, C / groups]``,
    transpose to ``[C / groups, groups]`` and flatten back.

    Args:
        groups (int): the number of groups; must divide C.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".
        name (str, optional): a name for the layer. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: the same shape.

    Examples:
        >>> import fw
        >>> x = fw.arange(6, dtype='float32').reshape([1, 6, 1, 1])
        >>> fw.nn.ChannelShuffle(3)(x).flatten().tolist()
        [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    """

    def __init__(self, groups, data_format="NCHW", name=None):
        super().__init__()
        self._groups = groups
        self._data_format = data_format

    def forward(self, x):
        return F.channel_shuffle(x, self._groups, self._data_format)

    def extra_repr(self) -> str:
        return f"groups={self._groups}"
