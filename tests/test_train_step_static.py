"""Cross-package property: a training step converted with fw.jit.to_static (one
program: forward, backward, optimizer update, running statistics) equals the
eager step — losses and parameters after several steps, for hypothesis-drawn
MLPs and convnets (with and without tensor-dependent control flow, with batch
norm) and SGD / Momentum / Adam / AdamW."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fw


class MLP(fw.nn.Layer):
    def __init__(self, sizes, control):
        super().__init__()
        self.layers = fw.nn.LayerList([fw.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
        self.control = control

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = fw.nn.functional.relu(x)
                if self.control and x.mean() > 0.2:
                    x = x * 0.5
        return x


class ConvNet(fw.nn.Layer):
    def __init__(self, cin, cout, ncls, bn, control):
        super().__init__()
        self.conv = fw.nn.Conv2D(cin, cout, 3, padding=1)
        self.bn = fw.nn.BatchNorm2D(cout) if bn else None
        self.fc = fw.nn.Linear(cout * 4 * 4, ncls)
        self.control = control

    def forward(self, x):
        h = self.conv(x)
        if self.bn is not None:
            h = self.bn(h)
        h = fw.nn.functional.relu(h)
        if self.control and h.mean() > 0.3:
            h = h - 0.1
        return self.fc(h.flatten(1))


OPTIMIZERS = {
    "sgd": lambda ps: fw.optimizer.SGD(0.05, parameters=ps),
    "momentum": lambda ps: fw.optimizer.Momentum(0.05, 0.9, parameters=ps),
    "adam": lambda ps: fw.optimizer.Adam(0.01, parameters=ps),
    "adamw": lambda ps: fw.optimizer.AdamW(0.01, parameters=ps),
}


@st.composite
def cases(draw):
    seed = draw(st.integers(0, 2**16), label="seed")
    fw.seed(seed)
    rng = np.random.RandomState(seed)
    control = draw(st.booleans(), label="control flow")
    batch = draw(st.integers(2, 6), label="batch")
    if draw(st.booleans(), label="convnet"):
        cin = draw(st.integers(1, 2), label="in channels")
        ncls = draw(st.integers(2, 4), label="classes")
        model = ConvNet(cin, draw(st.integers(1, 3), label="out channels"), ncls,
                        draw(st.booleans(), label="batch norm"), control)
        xs = [rng.randn(batch, cin, 4, 4).astype("float32") for _ in range(3)]
    else:
        sizes = [draw(st.integers(1, 10), label="width") for _ in range(draw(st.integers(2, 4)))]
        ncls = max(sizes[-1], 1)
        sizes[-1] = ncls = max(ncls, 2)
        model = MLP(sizes, control)
        xs = [rng.randn(batch, sizes[0]).astype("float32") for _ in range(3)]
    ys = [rng.randint(0, ncls, batch) for _ in xs]
    opt = draw(st.sampled_from(sorted(OPTIMIZERS)), label="optimizer")
    return model, opt, xs, ys


@settings(deadline=None)
@given(case=cases())
def test_static_train_step_equals_eager(case):
    model, opt_name, xs, ys = case
    a, b = model, copy.deepcopy(model)
    oa, ob = OPTIMIZERS[opt_name](a.parameters()), OPTIMIZERS[opt_name](b.parameters())

    def step(m, o):
        def f(x, y):
            loss = fw.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            o.clear_grad()
            return loss
        return f

    eager, static = step(a, oa), fw.jit.to_static(step(b, ob))
    for k in range(5):
        x, y = fw.to_tensor(xs[k % 3]), fw.to_tensor(ys[k % 3])
        le, ls = float(eager(x, y)), float(static(x, y))
        np.testing.assert_allclose(ls, le, rtol=1e-5, atol=1e-6)
        for (n, p), q in zip(a.named_parameters(), b.parameters()):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{opt_name}: {n} after step {k}")
    for (n, p), q in zip(a.named_buffers(), b.buffers()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)
