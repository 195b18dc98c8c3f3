"""fw.quantization.quanter: a user quanter declared by name, used through QuantConfig."""

import numpy as np
import pytest

import fw
from fw.quantization import QAT, BaseQuanter, QuantConfig, quanter


@quanter("ScaleQuanter")
class ScaleQuanterLayer(BaseQuanter):
    def __init__(self, layer, scale=0.5, offset=0.0):
        super().__init__()
        self.scale, self.offset = scale, offset
        self.layer_type = type(layer).__name__

    def forward(self, x):
        return x * self.scale + self.offset


def test_the_declared_factory_builds_one_quanter_per_layer_with_the_layer_first():
    fw.seed(3)
    model = fw.nn.Sequential(fw.nn.Linear(4, 3), fw.nn.ReLU(), fw.nn.Linear(3, 2))
    factory = ScaleQuanter(0.25, offset=1.0)  # noqa: F821 - declared by @quanter
    assert repr(factory) == "ScaleQuanter(0.25, offset=1.0)"
    q = QAT(QuantConfig(activation=factory, weight=None)).quantize(model, inplace=False)
    quanters = [m for m in q.sublayers() if isinstance(m, ScaleQuanterLayer)]
    assert len(quanters) == 2 and all(m.layer_type == "Linear" for m in quanters)
    assert quanters[0] is not quanters[1]
    x = fw.to_tensor(np.random.default_rng(0).standard_normal((5, 4)).astype("float32"))
    l0, l1 = model[0], model[2]
    want = l1(fw.nn.functional.relu(l0(x * 0.25 + 1.0)) * 0.25 + 1.0)
    np.testing.assert_allclose(q(x).numpy(), want.numpy(), rtol=1e-6)


def test_bad_declarations_raise():
    with pytest.raises(ValueError, match="class_name"):
        quanter("not a name")
    with pytest.raises(TypeError, match="BaseQuanter"):
        quanter("Nope")(int)
