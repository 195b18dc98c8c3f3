"""Optimizer steps: the fused flat-buffer update of fw.optimizer.

The MLP of the issue's targets (784-256-256-10: 269,322 parameters) with every
gradient present; one `step()` updates all six parameters with ONE call of the
update op's kernel. Target: Adam.step well under 0.2 ms once the native kernels
(one pass over memory, both cores) replace the NumPy ones, which take ~10 passes.
`time_adam_kernel` is the kernel alone on the same flat buffers; the difference to
`time_adam_step` is fw's per-step bookkeeping. The PyTorch twins (foreach and fused
Adam, both cores) run when torch is installed.
"""

import numpy as np

import fw

SIZES = [(784, 256), (256,), (256, 256), (256,), (256, 10), (10,)]


def _params(rng):
    return [fw.nn.Parameter(rng.standard_normal(s).astype(np.float32) * 0.01) for s in SIZES]


class OptimizerStep:
    params = ["sgd", "momentum", "adam", "adamw", "lamb"]
    param_names = ["optimizer"]

    def setup(self, name):
        rng = np.random.default_rng(0)
        self.ps = _params(rng)
        make = {
            "sgd": lambda ps: fw.optimizer.SGD(1e-3, parameters=ps),
            "momentum": lambda ps: fw.optimizer.Momentum(1e-3, parameters=ps),
            "adam": lambda ps: fw.optimizer.Adam(1e-3, parameters=ps),
            "adamw": lambda ps: fw.optimizer.AdamW(1e-3, parameters=ps),
            "lamb": lambda ps: fw.optimizer.Lamb(1e-3, parameters=ps),
        }[name]
        self.opt = make(self.ps)
        for p in self.ps:
            p.grad = fw.to_tensor(rng.standard_normal(p.shape).astype(np.float32) * 1e-2)
        self.opt.step()  # packs the buffers and adopts the gradients

    def time_step(self, name):
        self.opt.step()

    def time_clear_grad(self, name):
        self.opt.clear_grad()


class AdamParts:
    """Adam on the MLP: the whole step, the kernel alone, and with gradient clipping."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.ps = _params(rng)
        self.opt = fw.optimizer.Adam(1e-3, parameters=self.ps)
        self.clipped = fw.optimizer.Adam(1e-3, parameters=_params(rng),
                                         grad_clip=fw.nn.ClipGradByGlobalNorm(1.0))
        for opt in (self.opt, self.clipped):
            for p in opt._parameter_list:
                p.grad = fw.to_tensor(rng.standard_normal(p.shape).astype(np.float32) * 1e-2)
            opt.step()
        fg = self.opt._flat[0]
        self.kern = fw.core.ops.OPS["adam"].kernels["cpu"]
        self.args = (fg.flat, fg.gflat, np.array([1e-3]), fg.state["moment1"],
                     fg.state["moment2"], np.array([0.9], np.float32),
                     np.array([0.999], np.float32), None)
        self.out = (fg.flat, fg.state["moment1"], fg.state["moment2"], None, None, None)

    def time_adam_step(self):
        self.opt.step()

    def time_adam_kernel(self):
        self.kern(*self.args, out=self.out)

    def time_adam_step_global_norm_clip(self):
        self.clipped.step()


try:
    import torch
except ImportError:  # the comparison is optional
    torch = None

if torch is not None:

    class TorchAdamStep:
        params = ["foreach", "fused"]
        param_names = ["impl"]

        def setup(self, impl):
            torch.set_num_threads(2)
            g = torch.Generator().manual_seed(0)
            self.ps = [torch.nn.Parameter(torch.randn(*s, generator=g) * 0.01) for s in SIZES]
            for p in self.ps:
                p.grad = torch.randn(*p.shape, generator=g) * 1e-2
            kw = {"foreach": True} if impl == "foreach" else {"fused": True}
            self.opt = torch.optim.Adam(self.ps, lr=1e-3, **kw)
            self.opt.step()

        def time_step(self, impl):
            self.opt.step()
