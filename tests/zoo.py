"""The deployment zoo: the models that fw.inference, fw.onnx and the side-by-side
benchmarks are measured on (LeNet, ResNet-18/50, MobileNetV2, a BERT-style encoder).

Why one module: the tests (eager == saved == served == exported), the asv
benchmarks and asv_bench's side-by-side scripts must run the *same* architectures.
Every builder takes the API module it builds with -- ``fw`` or ``paddle`` -- so
one definition runs on both (fw follows Paddle's API); PyTorch twins, used only by
the side-by-side scripts, live in asv_bench.

    import fw
    from zoo import build, example_input
    model = build(fw, "resnet18")
    x = example_input(fw, "resnet18", batch=1)

Architectures follow paddle.vision.models (LeNet, ResNet BasicBlock, MobileNetV2
with width 1.0) so that, once fw.vision exists, these match it parameter for
parameter. Random weights: the seed is fixed by the caller (``api.seed``).
"""

from __future__ import annotations

import numpy as np

# name -> (input shape without batch, input dtype, default spatial size note)
INPUTS = {
    "lenet": ((1, 28, 28), "float32"),
    "resnet18": ((3, 224, 224), "float32"),
    "resnet50": ((3, 224, 224), "float32"),
    "mobilenet_v2": ((3, 224, 224), "float32"),
    "bert_encoder": ((128,), "int64"),
}
BERT_VOCAB = 8000


def names():
    return list(INPUTS)


def example_input(api, name, batch=1, hw=None, seed=0):
    """A deterministic input for `name` as an ``api`` tensor; `hw` overrides the
    spatial size of the image models (e.g. 64 for the 16x3x64x64 row)."""
    shape, dtype = INPUTS[name]
    rng = np.random.default_rng(seed)
    if dtype == "int64":
        arr = rng.integers(0, BERT_VOCAB, size=(batch, *shape)).astype("int64")
    else:
        if hw is not None:
            shape = (shape[0], hw, hw)
        arr = rng.standard_normal((batch, *shape)).astype("float32")
    return api.to_tensor(arr)


def build(api, name, **kw):
    """The model `name` built with ``api`` (``fw`` or ``paddle``), in eval mode."""
    model = {"lenet": _lenet, "resnet18": _resnet18, "resnet50": _resnet50,
             "mobilenet_v2": _mobilenet_v2, "bert_encoder": _bert_encoder}[name](api.nn, **kw)
    model.eval()
    return model


def _lenet(nn, num_classes=10):
    class LeNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
                nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84),
                                    nn.Linear(84, num_classes))

        def forward(self, x):
            x = self.features(x)
            x = x.flatten(1)
            return self.fc(x)

    return LeNet()


def _resnet18(nn, num_classes=1000):
    return _resnet(nn, "basic", (2, 2, 2, 2), num_classes)


def _resnet50(nn, num_classes=1000):
    return _resnet(nn, "bottleneck", (3, 4, 6, 3), num_classes)


def _resnet(nn, kind, depths, num_classes):
    """ResNet v1.5 (stride in the 3x3 conv of a bottleneck), as paddle.vision.models."""

    def conv_bn(cin, cout, k, stride=1):
        return [nn.Conv2D(cin, cout, k, stride=stride, padding=k // 2, bias_attr=False),
                nn.BatchNorm2D(cout)]

    class Block(nn.Layer):
        def __init__(self, cin, width, stride):
            super().__init__()
            if kind == "basic":
                cout = width
                layers = conv_bn(cin, width, 3, stride) + [nn.ReLU()] + conv_bn(width, width, 3)
            else:
                cout = width * 4
                layers = (conv_bn(cin, width, 1) + [nn.ReLU()] + conv_bn(width, width, 3, stride)
                          + [nn.ReLU()] + conv_bn(width, cout, 1))
            self.body = nn.Sequential(*layers)
            self.relu = nn.ReLU()
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(*conv_bn(cin, cout, 1, stride))
            self.cout = cout

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(self.body(x) + identity)

    class ResNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(*conv_bn(3, 64, 7, 2), nn.ReLU(),
                                      nn.MaxPool2D(3, stride=2, padding=1))
            blocks, cin = [], 64
            for i, (width, n) in enumerate(zip((64, 128, 256, 512), depths)):
                for j in range(n):
                    blocks.append(Block(cin, width, 2 if (i > 0 and j == 0) else 1))
                    cin = blocks[-1].cout
            self.layers = nn.Sequential(*blocks)
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
            self.fc = nn.Linear(cin, num_classes)

        def forward(self, x):
            x = self.avgpool(self.layers(self.stem(x)))
            return self.fc(x.flatten(1))

    return ResNet()


def _mobilenet_v2(nn, num_classes=1000):
    def conv_bn(cin, cout, k, stride, groups=1, act=True):
        layers = [nn.Conv2D(cin, cout, k, stride=stride, padding=(k - 1) // 2, groups=groups,
                            bias_attr=False), nn.BatchNorm2D(cout)]
        if act:
            layers.append(nn.ReLU6())
        return layers

    class InvertedResidual(nn.Layer):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            layers = conv_bn(cin, hidden, 1, 1) if expand != 1 else []
            layers += conv_bn(hidden, hidden, 3, stride, groups=hidden)
            layers += conv_bn(hidden, cout, 1, 1, act=False)
            self.conv = nn.Sequential(*layers)
            self.use_res = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.conv(x) if self.use_res else self.conv(x)

    class MobileNetV2(nn.Layer):
        def __init__(self):
            super().__init__()
            # (expansion t, channels c, repeats n, first stride s), as in the paper
            # (Sandler et al. 2018, table 2) and paddle.vision.models.MobileNetV2
            cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                   (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
            layers, cin = conv_bn(3, 32, 3, 2), 32
            for t, c, n, s in cfg:
                for i in range(n):
                    layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers += conv_bn(cin, 1280, 1, 1)
            self.features = nn.Sequential(*layers)
            self.pool = nn.AdaptiveAvgPool2D(1)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

        def forward(self, x):
            x = self.pool(self.features(x))
            return self.classifier(x.flatten(1))

    return MobileNetV2()


def _bert_encoder(nn, layers=4, d_model=256, heads=4, seq=128, vocab=BERT_VOCAB):
    class BertEncoder(nn.Layer):
        def __init__(self):
            super().__init__()
            self.word = nn.Embedding(vocab, d_model)
            self.pos = nn.Embedding(seq, d_model)
            self.norm = nn.LayerNorm(d_model)
            block = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0,
                                               activation="gelu")
            self.encoder = nn.TransformerEncoder(block, layers)

        def forward(self, ids):
            # positions 0..seq-1, built from the ids' own length so the batch stays dynamic
            pos = self.pos.weight[: ids.shape[1]]
            return self.encoder(self.norm(self.word(ids) + pos))

    return BertEncoder()
