"""Helpers shared by the part-B model families (temporary: replaced by the shared
``_utils.py`` once it is merged)."""

from __future__ import annotations

import fw
from fw import nn


def load_pretrained(model, arch: str, model_urls: dict) -> None:
    """Load Paddle's published ImageNet weights for `arch` into `model`: download (or
    find in the hub cache) the ``.pdparams`` file at ``model_urls[arch]`` with its md5
    checked, read it with fw's restricted unpickler and set the state dict."""
    if arch not in model_urls:
        raise ValueError(f"{arch}: no pretrained weights are published for this "
                         f"architecture; use pretrained=False")
    from fw.utils.download import get_weights_path_from_url

    url, md5 = model_urls[arch]
    model.set_state_dict(fw.load(get_weights_path_from_url(url, md5)))


class ConvNormActivation(nn.Sequential):
    """Conv2D, then a norm layer, then an activation, as Paddle's
    ``paddle.vision.ops.ConvNormActivation`` (sublayers ``0``, ``1``, ``2``)."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2D, activation_layer=nn.ReLU, dilation=1,
                 bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias_attr=None if bias else False)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)
