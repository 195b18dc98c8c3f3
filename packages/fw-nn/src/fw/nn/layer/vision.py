"""Pixel and channel rearrangement layers."""

from __future__ import annotations

from fw.nn import functional as F
from fw.nn.layer.layers import Layer

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Layer):
    """``[N, C*r*r, H, W] -> [N, C, H*r, W*r]``.

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
    """``[N, C, H*r, W*r] -> [N, C*r*r, H, W]``."""

    def __init__(self, downscale_factor, data_format="NCHW", name=None):
        super().__init__()
        self._downscale_factor = downscale_factor
        self._data_format = data_format

    def forward(self, x):
        return F.pixel_unshuffle(x, self._downscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return f"downscale_factor={self._downscale_factor}"


class ChannelShuffle(Layer):
    """Shuffle channels in `groups` groups."""

    def __init__(self, groups, data_format="NCHW", name=None):
        super().__init__()
        self._groups = groups
        self._data_format = data_format

    def forward(self, x):
        return F.channel_shuffle(x, self._groups, self._data_format)

    def extra_repr(self) -> str:
        return f"groups={self._groups}"
