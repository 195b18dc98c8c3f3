"""fw.jit: a converted training step against the eager one.

The workload: an MLP 784-256-256-10 (ReLU), batch 128, cross-entropy, Adam —
``loss.backward(); opt.step(); opt.clear_grad()``. Eagerly that is ~40 dispatched
ops, a taped backward and one fused Adam update over the flat parameter buffer;
converted with ``fw.jit.to_static`` it is ONE program (forward, backward, six
in-place Adam updates) run by fw-core's code-generating executor.

Targets (2-core reference machine): the to_static step <= 1.3 ms (PyTorch eager
1.65 ms) and >= 1.3x faster than fw eager. The second workload, `TrainStepTransformer`,
is the 2-layer Transformer encoder of bench_training (d_model 128, 4 heads, batch 16
of 64 positions, MSE, AdamW): target <= 22 ms to_static (PyTorch eager 28.2 ms).
`time_trace` measures converting and tracing the step once (the first call's cost).
Run as a script for a quick table: ``python asv_bench/benchmarks/bench_jit.py``.
"""

import copy

import numpy as np

import fw


class _MLP(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = fw.nn.Linear(784, 256)
        self.fc2 = fw.nn.Linear(256, 256)
        self.fc3 = fw.nn.Linear(256, 10)

    def forward(self, x):
        h = fw.nn.functional.relu(self.fc1(x))
        h = fw.nn.functional.relu(self.fc2(h))
        return self.fc3(h)


def _train_step(model, opt, loss_fn=fw.nn.functional.cross_entropy):
    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    return step


def _pair(make_model, make_opt, loss_fn, x, y):
    """An eager and a to_static training step over identical copies of one model."""
    eager_model = make_model()
    static_model = copy.deepcopy(eager_model)

    eager = _train_step(eager_model, make_opt(eager_model.parameters()), loss_fn)
    static = fw.jit.to_static(_train_step(static_model, make_opt(static_model.parameters()),
                                          loss_fn))
    for _ in range(3):  # warm up: flat buffers packed, gradients settled, program cached
        eager(x, y)
        static(x, y)
    return eager, static


def _setup_transformer():
    from benchmarks.bench_training import data

    fw.seed(0)
    x, y = (fw.to_tensor(a) for a in data("transformer"))

    def model():
        layer = fw.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0)
        return fw.nn.TransformerEncoder(layer, 2)

    eager, static = _pair(model, lambda ps: fw.optimizer.AdamW(1e-3, parameters=ps),
                          fw.nn.functional.mse_loss, x, y)
    return x, y, eager, static


def _setup():
    fw.seed(0)
    rng = np.random.default_rng(0)
    x = fw.to_tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = fw.to_tensor(rng.integers(0, 10, 128))
    eager, static = _pair(_MLP, lambda ps: fw.optimizer.Adam(1e-3, parameters=ps),
                          fw.nn.functional.cross_entropy, x, y)
    return x, y, eager, static


class TrainStepMLP:
    """MLP 784-256-256-10, batch 128, Adam: eager vs to_static."""

    def setup(self):
        self.x, self.y, self.eager, self.static = _setup()

    def time_eager_step(self):
        self.eager(self.x, self.y)

    def time_to_static_step(self):
        self.static(self.x, self.y)

    def time_trace(self):
        fw.seed(0)
        m = _MLP()
        opt = fw.optimizer.Adam(1e-3, parameters=m.parameters())
        fw.jit.to_static(_train_step(m, opt))(self.x, self.y)


class TrainStepTransformer:
    """Transformer encoder 2L d128 s64 b16, AdamW: eager vs to_static."""

    timeout = 300

    def setup(self):
        self.x, self.y, self.eager, self.static = _setup_transformer()

    def time_eager_step(self):
        self.eager(self.x, self.y)

    def time_to_static_step(self):
        self.static(self.x, self.y)


def _best(fn, n=50, repeat=9):
    import time

    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def _compare(setup, n):
    """Best eager and to_static step times, measured in alternating rounds."""
    x, y, eager, static = setup()
    te = ts = float("inf")
    for _ in range(3):
        te = min(te, _best(lambda: eager(x, y), n, 3))
        ts = min(ts, _best(lambda: static(x, y), n, 3))
    return te, ts


if __name__ == "__main__":
    import sys

    sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])  # for benchmarks.bench_training
    for name, setup, n in (("mlp", _setup, 50), ("transformer", _setup_transformer, 5)):
        te, ts = _compare(setup, n)
        print(f"{name:12s} eager step      {te * 1e3:7.3f} ms")
        print(f"{name:12s} to_static step  {ts * 1e3:7.3f} ms   speed-up {te / ts:4.2f}x")
