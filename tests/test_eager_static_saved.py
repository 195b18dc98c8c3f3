"""Cross-package property: a model gives the same outputs eagerly, converted with
fw.jit.to_static, and saved with fw.jit.save then loaded (fw.jit.load).

The ways of running a model are the entries of `RUNNERS`: ``name -> run(model,
example_input, workdir) -> output tensor or array``. Every runner is compared
with eager execution on hypothesis-drawn models (MLPs and convnets, with and
without tensor-dependent control flow, with batch norm). A package that adds a
way to run a saved model (e.g. fw-inference's Predictor) adds one entry here.
"""

from __future__ import annotations

import copy
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.static import InputSpec


# ------------------------------------------------------------------ models
class MLP(fw.nn.Layer):
    def __init__(self, sizes, act, control):
        super().__init__()
        self.layers = fw.nn.LayerList([fw.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
        self.act = act
        self.control = control

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = getattr(fw.nn.functional, self.act)(x)
                if self.control and x.mean() > 0.1:
                    x = x * 0.5
        return x


class ConvNet(fw.nn.Layer):
    def __init__(self, cin, cout, hw, ncls, bn, control):
        super().__init__()
        self.conv = fw.nn.Conv2D(cin, cout, 3, padding=1)
        self.bn = fw.nn.BatchNorm2D(cout) if bn else None
        self.pool = fw.nn.MaxPool2D(2)
        self.fc = fw.nn.Linear(cout * (hw // 2) * (hw // 2), ncls)
        self.control = control

    def forward(self, x):
        h = self.conv(x)
        if self.bn is not None:
            h = self.bn(h)
        h = fw.nn.functional.relu(h)
        if self.control:
            s = h.sum()
            while s > 10.0:
                h = h * 0.5
                s = h.sum()
        return self.fc(self.pool(h).flatten(1))


@st.composite
def model_cases(draw):
    """(model in eval mode with settled batch-norm statistics, example input, spec)."""
    seed = draw(st.integers(0, 2**16), label="seed")
    fw.seed(seed)
    rng = np.random.RandomState(seed)
    control = draw(st.booleans(), label="control flow")
    if draw(st.sampled_from(["mlp", "convnet"]), label="kind") == "mlp":
        n = draw(st.integers(2, 4), label="layers")
        sizes = [draw(st.integers(1, 12), label="width") for _ in range(n)]
        act = draw(st.sampled_from(["relu", "tanh", "sigmoid"]), label="activation")
        model = MLP(sizes, act, control)
        batch = draw(st.integers(1, 5), label="batch")
        x = rng.randn(batch, sizes[0]).astype("float32")
        spec = [InputSpec([None, sizes[0]], name="x")]
    else:
        cin = draw(st.integers(1, 3), label="in channels")
        cout = draw(st.integers(1, 4), label="out channels")
        hw = draw(st.sampled_from([4, 6]), label="size")
        bn = draw(st.booleans(), label="batch norm")
        model = ConvNet(cin, cout, hw, draw(st.integers(1, 4), label="classes"), bn, control)
        batch = draw(st.integers(1, 3), label="batch")
        x = rng.randn(batch, cin, hw, hw).astype("float32")
        spec = [InputSpec([None, cin, hw, hw], name="x")]
        if bn:  # settle non-trivial running statistics
            model.train()
            with fw.no_grad():
                model(fw.to_tensor(rng.randn(4, cin, hw, hw).astype("float32") * 2 + 1))
    model.eval()
    return model, x, spec


# ------------------------------------------------------------------ runners
def run_eager(model, x, spec, workdir):
    return model(fw.to_tensor(x))


def run_static(model, x, spec, workdir):
    m = fw.jit.to_static(copy.deepcopy(model), input_spec=spec)
    return m(fw.to_tensor(x))


def run_saved(model, x, spec, workdir):
    path = fw.jit.save(model, os.path.join(workdir, "model"), spec)
    return fw.jit.load(path)(fw.to_tensor(x))


RUNNERS = {
    "static": run_static,
    "saved": run_saved,
}


def _np(out):
    return out.numpy() if isinstance(out, fw.Tensor) else np.asarray(out)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@settings(deadline=None)
@given(case=model_cases())
def test_runner_matches_eager(runner, case):
    model, x, spec = case
    want = _np(run_eager(model, x, spec, None))
    with tempfile.TemporaryDirectory() as d:
        got = _np(RUNNERS[runner](model, x, spec, d))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@settings(deadline=None, max_examples=4)
@given(case=model_cases())
def test_saved_model_accepts_other_batch_sizes(case):
    model, x, spec = case
    with tempfile.TemporaryDirectory() as d:
        loaded = fw.jit.load(fw.jit.save(model, os.path.join(d, "m"), spec))
        x2 = np.concatenate([x, x * 0.5], axis=0)
        np.testing.assert_allclose(_np(loaded(fw.to_tensor(x2))),
                                   _np(model(fw.to_tensor(x2))), rtol=1e-5, atol=1e-6)
