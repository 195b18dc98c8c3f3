"""fw.jit: a converted training step against the eager one.

The workload: an MLP 784-256-256-10 (ReLU), batch 128, cross-entropy, Adam —
``loss.backward(); opt.step(); opt.clear_grad()``. Eagerly that is ~40 dispatched
ops, a taped backward and one fused Adam update over the flat parameter buffer;
converted with ``fw.jit.to_static`` it is ONE program (forward, backward, six
in-place Adam updates) run by fw-core's code-generating executor.

Targets (2-core reference machine): the to_static step <= 1.3 ms (PyTorch eager
1.65 ms) and >= 1.3x faster than fw eager. `time_trace` measures converting and
tracing the step once (the first call's cost). Run as a script for a quick table:
``python asv_bench/benchmarks/bench_jit.py``.
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


def _train_step(model, opt):
    def step(x, y):
        loss = fw.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    return step


def _setup():
    fw.seed(0)
    rng = np.random.default_rng(0)
    x = fw.to_tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = fw.to_tensor(rng.integers(0, 10, 128))
    eager_model = _MLP()
    static_model = copy.deepcopy(eager_model)
    eager = _train_step(eager_model, fw.optimizer.Adam(1e-3,
                                                       parameters=eager_model.parameters()))
    static = fw.jit.to_static(_train_step(static_model, fw.optimizer.Adam(
        1e-3, parameters=static_model.parameters())))
    for _ in range(3):  # warm up: flat buffers packed, gradients settled, program cached
        eager(x, y)
        static(x, y)
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


def _best(fn, n=50, repeat=9):
    import time

    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


if __name__ == "__main__":
    x, y, eager, static = _setup()
    te = _best(lambda: eager(x, y))
    ts = _best(lambda: static(x, y))
    print(f"eager step      {te * 1e3:7.3f} ms")
    print(f"to_static step  {ts * 1e3:7.3f} ms   speed-up {te / ts:4.2f}x")
