"""The executor's per-op cost: a compiled program should cost little more than
its kernels.

`ElementwiseChain` runs 20 elementwise ops (15 unary, 5 multiplies by a
constant) on 8 floats; `time_*_noop` replaces every kernel by a no-op, which
leaves only the executor's own cost. `MLP` is a 3-layer MLP (64-128-128-10,
relu) at batch 1. Divide by the op count (25 and 8) for microseconds per op.
"""

import numpy as np

import fw
from fw.core.ir import TensorType, trace
from fw.core.ir.executor import Compiled
from fw.core.ops import call

_UNARY = ("tanh", "exp", "neg", "sin", "abs")


def _chain(x):
    for i in range(20):
        x = x * 0.5 if i % 4 == 3 else call(_UNARY[i % 5], x)
    return x


class ElementwiseChain:
    def setup(self):
        self.x = np.linspace(-1, 1, 8).astype(np.float32)
        self.t = fw.to_tensor(self.x)
        p = trace(_chain, [TensorType([8], "float32")])
        self.compiled = Compiled(p)
        self.plain = Compiled(p, memory_optimize=False)
        noop = {n: (lambda *a, **k: self.x) for n in _UNARY + ("multiply", "full")}
        self.noop = Compiled(p, kernel_override=noop)

    def time_eager(self):
        _chain(self.t)

    def time_executor(self):
        self.compiled([self.x])

    def time_executor_no_memory_optimize(self):
        self.plain([self.x])

    def time_executor_noop(self):
        self.noop([self.x])


class MLP:
    def setup(self):
        rng = np.random.default_rng(0)

        def param(shape):
            t = fw.to_tensor(rng.standard_normal(shape).astype(np.float32) * 0.1)
            t.trainable = True
            return t

        ws = [param((64, 128)), param((128, 128)), param((128, 10))]
        bs = [param((128,)), param((128,)), param((10,))]

        def mlp(x):
            h = call("relu", fw.matmul(x, ws[0]) + bs[0])
            h = call("relu", fw.matmul(h, ws[1]) + bs[1])
            return fw.matmul(h, ws[2]) + bs[2]

        self.mlp = mlp
        self.x = rng.standard_normal((1, 64)).astype(np.float32)
        self.t = fw.to_tensor(self.x)
        self.compiled = Compiled(trace(mlp, [TensorType([1, 64], "float32")]))

    def time_eager(self):
        self.mlp(self.t)

    def time_executor(self):
        self.compiled([self.x])
