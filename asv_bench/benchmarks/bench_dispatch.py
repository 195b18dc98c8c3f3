"""Eager dispatch: the per-op cost users feel in every program.

Targets (2-core reference machine): `a + b` on 8 floats <= 1.5 us
(PyTorch 2.13: 1.14 us, Paddle 3.3.1: 2.0 us)."""

import numpy as np

import fw


class EagerDispatch:
    def setup(self):
        self.a = fw.to_tensor(np.ones(8, np.float32))
        self.b = fw.to_tensor(np.ones(8, np.float32))
        self.m = fw.to_tensor(np.ones((8, 8), np.float32))

    def time_add_8(self):
        self.a + self.b

    def time_mul_scalar_8(self):
        self.a * 2.0

    def time_exp_8(self):
        fw.exp(self.a)

    def time_sum_8(self):
        self.a.sum()

    def time_reshape(self):
        self.m.reshape([4, 16])

    def time_matmul_8x8(self):
        fw.matmul(self.m, self.m)

    def time_getitem_row(self):
        self.m[0]
