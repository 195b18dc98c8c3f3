"""Model files for the fw-inference tests: programs built with fw ops and traced by
fw-core (fw-inference must work with fw-core alone), saved with fw.core.ir.save."""

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, save, trace
from fw.core.ops import call


def param(rng, shape, name, scale=0.3):
    t = fw.to_tensor((rng.standard_normal(shape) * scale).astype(np.float32))
    t.name = name
    t.persistable = True
    t.trainable = True
    return t


def buffer(array, name):
    t = fw.to_tensor(array)
    t.name = name
    t.persistable = True
    return t


def mlp_program(sizes=(8, 16, 4), seed=0, batch=-1):
    """linear + relu layers (the last without activation); input "x"."""
    rng = np.random.default_rng(seed)
    layers = [(param(rng, (a, b), f"fc{i}.weight"), param(rng, (b,), f"fc{i}.bias"))
              for i, (a, b) in enumerate(zip(sizes, sizes[1:]))]

    def f(x):
        for i, (w, b) in enumerate(layers):
            x = call("linear", x, w, b)
            if i < len(layers) - 1:
                x = call("relu", x)
        return x

    return trace(f, [TensorType([batch, sizes[0]], "float32")], ["x"])


def convbn_program(seed=0):
    """conv -> batch_norm (inference) -> relu -> mean -> linear, and a second output;
    inputs "image" and "scale"."""
    rng = np.random.default_rng(seed)
    w = param(rng, (4, 3, 3, 3), "conv.weight")
    stats = (buffer(rng.standard_normal(4).astype(np.float32), "bn.mean"),
             buffer((rng.random(4) + 0.5).astype(np.float32), "bn.var"),
             param(rng, (4,), "bn.weight"), param(rng, (4,), "bn.bias"))
    fw_, fb = param(rng, (4, 3), "fc.weight"), param(rng, (3,), "fc.bias")

    def f(image, scale):
        h = call("conv", image, w, None, padding=1)
        h = call("relu", call("batch_norm", h, *stats)[0])
        h = h.mean(axis=[2, 3])
        y = call("linear", h, fw_, fb)
        return y, (y * scale).tanh()

    return trace(f, [TensorType([-1, 3, 6, 6], "float32"), TensorType([3], "float32")],
                 ["image", "scale"])


@pytest.fixture
def mlp_file(tmp_path):
    p = mlp_program()
    path = tmp_path / "mlp.fwmodel"
    save(p, path)
    return p, path


@pytest.fixture
def convbn_file(tmp_path):
    p = convbn_program()
    path = tmp_path / "convbn.fwmodel"
    save(p, path)
    return p, path


class _Models:
    """The builders, for tests that need a variant (``models.mlp(sizes=...)``)."""

    mlp = staticmethod(mlp_program)
    convbn = staticmethod(convbn_program)
    param = staticmethod(param)
    buffer = staticmethod(buffer)


@pytest.fixture
def models():
    return _Models
