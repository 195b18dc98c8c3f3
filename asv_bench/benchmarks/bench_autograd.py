"""Autograd: the cost of recording ops and of the backward pass.

Targets (2-core reference machine): `a + b` on 8 floats with inputs that require
grad <= 2.5 us (PyTorch 1.66 us); per-node backward overhead in the same range
as PyTorch's. The PyTorch twins run when it is installed (`Torch*` classes), so
asv prints both side by side.
"""

import numpy as np

import fw


def _chain(x, mul, act, n=50):
    for _ in range(n):
        x = act(mul(x, 1.0001))
    return x


class RecordAdd:
    """Recording one elementwise op (the hot path of every training step)."""

    def setup(self):
        self.a = fw.to_tensor(np.ones(8, np.float32), stop_gradient=False)
        self.b = fw.to_tensor(np.ones(8, np.float32), stop_gradient=False)
        self.c = fw.to_tensor(np.ones(8, np.float32))

    def time_add_requires_grad(self):
        self.a + self.b

    def time_add_no_grad(self):
        self.c + self.c

    def time_add_under_no_grad(self):
        with fw.no_grad():
            self.a + self.b


class Backward:
    """A 100-node elementwise chain and a small MLP, forward + backward."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.x = fw.to_tensor(np.ones(8, np.float32), stop_gradient=False)
        self.w1 = fw.to_tensor(rng.standard_normal((64, 128)).astype(np.float32),
                               stop_gradient=False)
        self.w2 = fw.to_tensor(rng.standard_normal((128, 10)).astype(np.float32),
                               stop_gradient=False)
        self.inp = fw.to_tensor(rng.standard_normal((32, 64)).astype(np.float32))

    def time_chain_forward(self):
        _chain(self.x, fw.multiply, fw.tanh).sum()

    def time_chain_forward_backward(self):
        _chain(self.x, fw.multiply, fw.tanh).sum().backward()

    def time_mlp_forward_backward(self):
        h = fw.tanh(fw.matmul(self.inp, self.w1))
        fw.mean(fw.matmul(h, self.w2) ** 2).backward()

    def time_grad_of_grad(self):
        (g,) = fw.grad(fw.tanh(self.x).sum(), self.x, create_graph=True)
        fw.grad(g.sum(), self.x)


try:
    import torch
except ImportError:  # the comparison is optional
    torch = None

if torch is not None:

    class TorchRecordAdd:
        def setup(self):
            torch.set_num_threads(1)
            self.a = torch.ones(8, requires_grad=True)
            self.b = torch.ones(8, requires_grad=True)

        def time_add_requires_grad(self):
            self.a + self.b

    class TorchBackward:
        def setup(self):
            torch.set_num_threads(1)
            g = torch.Generator().manual_seed(0)
            self.x = torch.ones(8, requires_grad=True)
            self.w1 = torch.randn(64, 128, generator=g, requires_grad=True)
            self.w2 = torch.randn(128, 10, generator=g, requires_grad=True)
            self.inp = torch.randn(32, 64, generator=g)

        def time_chain_forward(self):
            _chain(self.x, torch.mul, torch.tanh).sum()

        def time_chain_forward_backward(self):
            _chain(self.x, torch.mul, torch.tanh).sum().backward()

        def time_mlp_forward_backward(self):
            h = torch.tanh(self.inp @ self.w1)
            ((h @ self.w2) ** 2).mean().backward()
