"""Side-by-side workloads of fw-nn: one eager training step of an MLP, a LeNet and
a 2-layer Transformer encoder in fw, PyTorch and Paddle (see
benchmarks/bench_training.py for the models; fw and PyTorch are built there,
Paddle here, with fw's builder). Registered into side_by_side.py's WORKLOADS when it runs:

    python asv_bench/side_by_side.py --only train_step
"""

from __future__ import annotations

from benchmarks.bench_training import fw_step, paddle_api_step, torch_step
from side_by_side import workload


def paddle_step(name):
    """The same step in Paddle (dynamic mode, CPU)."""
    import paddle

    return paddle_api_step(paddle, name)


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
