"""The layer classes of ``fw.nn`` (Paddle's ``paddle.nn.layer``), one module per kind."""

from fw.nn.layer import (
                         activation,
                         common,
                         container,
                         conv,
                         distance,
                         layers,
                         loss,
                         norm,
                         pooling,
                         rnn,
                         transformer,
                         vision,
)
from fw.nn.layer.layers import Layer
