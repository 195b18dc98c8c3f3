"""Side-by-side workloads of fw-nn: one eager training step of an MLP, a LeNet and
a 2-layer Transformer encoder in fw, PyTorch and Paddle (see
benchmarks/bench_training.py for the models; fw and PyTorch are built there,
Paddle here). Registered into side_by_side.py's WORKLOADS when it runs:

    python asv_bench/side_by_side.py --only train_step
"""

from __future__ import annotations

from benchmarks.bench_training import data, fw_step, torch_step
from side_by_side import workload


def _paddle_model(name):
    import paddle.nn as pnn

    if name == "mlp":
        return pnn.Sequential(pnn.Linear(784, 256), pnn.ReLU(), pnn.Linear(256, 256),
                              pnn.ReLU(), pnn.Linear(256, 10))
    if name == "lenet":
        return pnn.Sequential(pnn.Conv2D(1, 6, 5, padding=2), pnn.ReLU(), pnn.MaxPool2D(2, 2),
                              pnn.Conv2D(6, 16, 5), pnn.ReLU(), pnn.MaxPool2D(2, 2),
                              pnn.Flatten(), pnn.Linear(400, 120), pnn.ReLU(),
                              pnn.Linear(120, 84), pnn.ReLU(), pnn.Linear(84, 10))
    layer = pnn.TransformerEncoderLayer(128, 4, 512, dropout=0.0)
    return pnn.TransformerEncoder(layer, 2)


def paddle_step(name):
    """The same step in Paddle (dynamic mode, CPU)."""
    import paddle

    paddle.seed(0)
    model = _paddle_model(name)
    if name == "transformer":
        opt = paddle.optimizer.AdamW(1e-3, parameters=model.parameters())
        loss_fn = paddle.nn.functional.mse_loss
    else:
        opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
        loss_fn = paddle.nn.functional.cross_entropy
    x, y = (paddle.to_tensor(a) for a in data(name))

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return step


def _register(label, name):
    cls = type(f"TrainStep_{name}", (), {
        "fw": staticmethod(lambda: fw_step(name)),
        "torch": staticmethod(lambda: torch_step(name)),
        "paddle": staticmethod(lambda: paddle_step(name)),
    })
    workload(label)(cls)


_register("train_step mlp 784-256-256-10 b128 Adam", "mlp")
_register("train_step lenet b64 Adam", "lenet")
_register("train_step transformer 2L d128 s64 b16 AdamW", "transformer")
