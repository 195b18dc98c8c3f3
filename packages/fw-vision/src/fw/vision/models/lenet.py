"""LeNet (Paddle's ``paddle.vision.models.LeNet``: same layers and parameter names)."""

from __future__ import annotations

import fw
from fw import nn
from fw.vision.models._utils import check_classifier_input

__all__ = ["LeNet"]


class LeNet(nn.Layer):
    """LeNet for 1x28x28 digit images, from "Gradient-based learning applied to
    document recognition" (LeCun et al., 1998), in Paddle's layout.

    Args:
        num_classes (int, optional): output size of the last fc layer; if <= 0 the fc
            layers are not built and the forward returns the conv features
            ``[N, 16, 5, 5]``. Default: 10.

    Returns:
        Layer: a LeNet model; input ``[N, 1, 28, 28]``, output ``[N, num_classes]``.

    Examples:
        >>> import fw
        >>> from fw.vision.models import LeNet
        >>> model = LeNet()
        >>> model(fw.rand([1, 1, 28, 28])).shape
        [1, 10]
    """

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        if num_classes > 0:
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84),
                                    nn.Linear(84, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        if self.num_classes > 0:
            check_classifier_input("LeNet", inputs.shape, x, 400,
                                   "LeNet takes [N, 1, 28, 28] images")
            x = fw.flatten(x, 1)
            x = self.fc(x)
        return x
