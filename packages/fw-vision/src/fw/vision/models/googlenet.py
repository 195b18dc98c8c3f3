"""GoogLeNet (Inception v1, "Going Deeper with Convolutions", Szegedy et al. 2015)
with Paddle 3.x's layout: sublayer names, argument names, defaults and the tuple
output (main head and the two auxiliary heads) follow
``paddle.vision.models.googlenet`` so Paddle's published ``.pdparams`` file loads
unchanged."""

from __future__ import annotations

import fw
from fw import nn
from fw.nn import functional as F
from fw.nn import initializer as I
from fw.vision.models._utils import check_classifier_input, load_pretrained

__all__ = ["GoogLeNet", "googlenet"]

# Paddle's published ImageNet weights (URL, md5), from Paddle 3.3.1's model file
model_urls: dict[str, tuple[str, str]] = {
    "googlenet": (
        "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
        "GoogLeNet_pretrained.pdparams",
        "80c06f038e905c53ab32c40eca6e26ae"),
}


# the three heads (main and auxiliary): another num_classes (or 0) keeps fresh ones
# when loading Paddle's weights
HEAD = ("_fc_out.", "_conv_o1.", "_fc_o1.", "_out1.", "_conv_o2.", "_fc_o2.", "_out2.")


def _xavier(channels: int, filter_size: int):
    # Paddle's initializer for GoogLeNet's fc layers: U(-s, s), s = sqrt(3 / fan_in)
    stdv = (3.0 / (filter_size**2 * channels)) ** 0.5
    return fw.ParamAttr(initializer=I.Uniform(-stdv, stdv))


class ConvLayer(nn.Layer):
    """A bias-free 'same'-padded convolution (no normalization, no activation)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=(filter_size - 1) // 2, groups=groups, bias_attr=False)

    def forward(self, inputs):
        return self._conv(inputs)


class Inception(nn.Layer):
    """An Inception module: 1x1, 1x1->3x3, 1x1->5x5 and maxpool->1x1 branches,
    concatenated, then ReLU."""

    def __init__(self, input_channels, output_channels, filter1, filter3R, filter3, filter5R,
                 filter5, proj):
        super().__init__()
        self._conv1 = ConvLayer(input_channels, filter1, 1)
        self._conv3r = ConvLayer(input_channels, filter3R, 1)
        self._conv3 = ConvLayer(filter3R, filter3, 3)
        self._conv5r = ConvLayer(input_channels, filter5R, 1)
        self._conv5 = ConvLayer(filter5R, filter5, 5)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = ConvLayer(input_channels, proj, 1)

    def forward(self, inputs):
        cat = fw.concat([self._conv1(inputs), self._conv3(self._conv3r(inputs)),
                         self._conv5(self._conv5r(inputs)),
                         self._convprj(self._pool(inputs))], axis=1)
        return F.relu(cat)


class GoogLeNet(nn.Layer):
    """GoogLeNet (Inception v1) model from "Going Deeper with Convolutions"
    (https://arxiv.org/abs/1409.4842).

    The forward returns a tuple ``(out, out1, out2)``: the main head and the two
    auxiliary heads (on the outputs of inception 4a and 4d), as Paddle's.

    Args:
        num_classes (int, optional): output size of the three heads; if <= 0 the heads
            are not defined and the three (pooled) feature maps are returned. Default: 1000.
        with_pool (bool, optional): pool before the heads (global average pooling for the
            main head, 5x5/3 average pooling for the auxiliary ones). Default: True.

    Returns:
        fw.nn.Layer: a GoogLeNet model.

    Note:
        The auxiliary heads' fc layers take ``128 * 3 * 3`` inputs, so with the heads
        (``num_classes > 0``) the input must be 189 to 236 pixels wide and high
        (inception 4a's map 11 to 13 pixels wide), e.g. 224x224.

    Examples:
        >>> import fw
        >>> from fw.vision.models import GoogLeNet
        >>> out, aux1, aux2 = GoogLeNet(num_classes=10)(fw.rand([1, 3, 224, 224]))
        >>> out.shape, aux1.shape, aux2.shape
        ([1, 10], [1, 10], [1, 10])
    """

    def __init__(self, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        self._conv = ConvLayer(3, 64, 7, 2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2)
        self._conv_1 = ConvLayer(64, 64, 1)
        self._conv_2 = ConvLayer(64, 192, 3)
        self._ince3a = Inception(192, 192, 64, 96, 128, 16, 32, 32)
        self._ince3b = Inception(256, 256, 128, 128, 192, 32, 96, 64)
        self._ince4a = Inception(480, 480, 192, 96, 208, 16, 48, 64)
        self._ince4b = Inception(512, 512, 160, 112, 224, 24, 64, 64)
        self._ince4c = Inception(512, 512, 128, 128, 256, 24, 64, 64)
        self._ince4d = Inception(512, 512, 112, 144, 288, 32, 64, 64)
        self._ince4e = Inception(528, 528, 256, 160, 320, 32, 128, 128)
        self._ince5a = Inception(832, 832, 256, 160, 320, 32, 128, 128)
        self._ince5b = Inception(832, 832, 384, 192, 384, 48, 128, 128)
        if with_pool:
            self._pool_5 = nn.AdaptiveAvgPool2D(1)
            self._pool_o1 = nn.AvgPool2D(kernel_size=5, stride=3)
            self._pool_o2 = nn.AvgPool2D(kernel_size=5, stride=3)
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.4, mode="downscale_in_infer")
            self._fc_out = nn.Linear(1024, num_classes, weight_attr=_xavier(1024, 1))
            self._conv_o1 = ConvLayer(512, 128, 1)
            self._fc_o1 = nn.Linear(1152, 1024, weight_attr=_xavier(2048, 1))
            self._drop_o1 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out1 = nn.Linear(1024, num_classes, weight_attr=_xavier(1024, 1))
            self._conv_o2 = ConvLayer(528, 128, 1)
            self._fc_o2 = nn.Linear(1152, 1024, weight_attr=_xavier(2048, 1))
            self._drop_o2 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out2 = nn.Linear(1024, num_classes, weight_attr=_xavier(1024, 1))

    @staticmethod
    def _aux_input(inputs, x, which: str):
        """Flatten an auxiliary head's map, checked against its 1152-input fc layer
        (a clear error instead of a matmul shape mismatch deep inside)."""
        check_classifier_input(f"GoogLeNet (auxiliary head {which})", inputs.shape, x, 1152,
                               "use inputs of 189 to 236 pixels, e.g. 224x224")
        return fw.flatten(x, start_axis=1, stop_axis=-1)

    def forward(self, inputs):
        x = self._pool(self._conv(inputs))
        x = self._pool(self._conv_2(self._conv_1(x)))
        x = self._pool(self._ince3b(self._ince3a(x)))
        ince4a = self._ince4a(x)
        ince4d = self._ince4d(self._ince4c(self._ince4b(ince4a)))
        x = self._pool(self._ince4e(ince4d))
        ince5b = self._ince5b(self._ince5a(x))
        out, out1, out2 = ince5b, ince4a, ince4d
        if self.with_pool:
            out = self._pool_5(out)
            out1 = self._pool_o1(out1)
            out2 = self._pool_o2(out2)
        if self.num_classes > 0:
            out = self._fc_out(fw.squeeze(self._drop(out), axis=[2, 3]))
            out1 = self._aux_input(inputs, self._conv_o1(out1), "1, after inception 4a")
            out1 = self._out1(self._drop_o1(F.relu(self._fc_o1(out1))))
            # the second auxiliary head has no ReLU after its first fc layer in Paddle's
            # definition (its weights were trained that way)
            out2 = self._aux_input(inputs, self._conv_o2(out2), "2, after inception 4d")
            out2 = self._out2(self._drop_o2(self._fc_o2(out2)))
        return out, out1, out2


def googlenet(pretrained: bool = False, **kwargs) -> GoogLeNet:
    """GoogLeNet (Inception v1) from "Going Deeper with Convolutions"
    (https://arxiv.org/abs/1409.4842); its forward returns ``(out, aux1, aux2)``.

    Args:
        pretrained (bool, optional): load Paddle's published ImageNet weights (through
            fw.hub's cache, md5 checked). Default: False.
        **kwargs: `GoogLeNet`'s arguments (num_classes, with_pool).

    Returns:
        fw.nn.Layer: a `GoogLeNet`.

    Examples:
        >>> import fw
        >>> from fw.vision.models import googlenet
        >>> out, aux1, aux2 = googlenet()(fw.rand([1, 3, 224, 224]))
        >>> out.shape
        [1, 1000]
    """
    model = GoogLeNet(**kwargs)
    if pretrained:
        load_pretrained(model, "googlenet", "googlenet", model_urls, head=HEAD)
    return model
