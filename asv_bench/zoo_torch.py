"""PyTorch twins of the deployment zoo (tests/zoo.py), for the side-by-side scripts
only: same layers, shapes and order, random weights. Imported only when torch is
installed; CI never needs it."""

from __future__ import annotations

import torch
from torch import nn


def build(name):
    model = {"lenet": _lenet, "resnet18": lambda: _resnet("basic", (2, 2, 2, 2)),
             "resnet50": lambda: _resnet("bottleneck", (3, 4, 6, 3)),
             "mobilenet_v2": _mobilenet_v2, "bert_encoder": _bert_encoder}[name]()
    return model.eval()


def _lenet():
    return nn.Sequential(
        nn.Conv2d(1, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(1),
        nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10))


def _conv_bn(cin, cout, k, stride=1, groups=1):
    return [nn.Conv2d(cin, cout, k, stride=stride, padding=(k - 1) // 2, groups=groups,
                      bias=False), nn.BatchNorm2d(cout)]


def _resnet(kind, depths, num_classes=1000):
    class Block(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            if kind == "basic":
                cout = width
                layers = _conv_bn(cin, width, 3, stride) + [nn.ReLU()] + _conv_bn(width, width, 3)
            else:
                cout = width * 4
                layers = (_conv_bn(cin, width, 1) + [nn.ReLU()] + _conv_bn(width, width, 3, stride)
                          + [nn.ReLU()] + _conv_bn(width, cout, 1))
            self.body = nn.Sequential(*layers)
            self.relu = nn.ReLU()
            self.downsample = (nn.Sequential(*_conv_bn(cin, cout, 1, stride))
                               if stride != 1 or cin != cout else None)
            self.cout = cout

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(self.body(x) + identity)

    blocks, cin = [], 64
    for i, (width, n) in enumerate(zip((64, 128, 256, 512), depths)):
        for j in range(n):
            blocks.append(Block(cin, width, 2 if (i > 0 and j == 0) else 1))
            cin = blocks[-1].cout
    return nn.Sequential(*_conv_bn(3, 64, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1), *blocks,
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(cin, num_classes))


def _mobilenet_v2(num_classes=1000):
    def cbr(cin, cout, k, stride, groups=1, act=True):
        return _conv_bn(cin, cout, k, stride, groups) + ([nn.ReLU6()] if act else [])

    class Inverted(nn.Module):
        def __init__(self, cin, cout, stride, t):
            super().__init__()
            hidden = cin * t
            layers = cbr(cin, hidden, 1, 1) if t != 1 else []
            layers += cbr(hidden, hidden, 3, stride, hidden) + cbr(hidden, cout, 1, 1, act=False)
            self.conv = nn.Sequential(*layers)
            self.res = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.conv(x) if self.res else self.conv(x)

    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
           (6, 160, 3, 2), (6, 320, 1, 1)]
    layers, cin = cbr(3, 32, 3, 2), 32
    for t, c, n, s in cfg:
        for i in range(n):
            layers.append(Inverted(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += cbr(cin, 1280, 1, 1)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Dropout(0.2),
                         nn.Linear(1280, num_classes))


def _bert_encoder(layers=4, d_model=256, heads=4, seq=128, vocab=8000):
    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.word = nn.Embedding(vocab, d_model)
            self.pos = nn.Embedding(seq, d_model)
            self.norm = nn.LayerNorm(d_model)
            block = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0,
                                               activation="gelu", batch_first=True)
            self.encoder = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)

        def forward(self, ids):
            return self.encoder(self.norm(self.word(ids) + self.pos.weight[: ids.shape[1]]))

    return Bert()


def example_input(name, batch, hw=None):
    import numpy as np
    import zoo

    shape, dtype = zoo.INPUTS[name]
    rng = np.random.default_rng(0)
    if dtype == "int64":
        return torch.from_numpy(rng.integers(0, zoo.BERT_VOCAB, (batch, *shape)))
    if hw is not None:
        shape = (shape[0], hw, hw)
    return torch.from_numpy(rng.standard_normal((batch, *shape)).astype("float32"))
