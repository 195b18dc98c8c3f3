"""The fused kernel family of fw.core._C against the NumPy kernels it replaces.

- ``OptimizerKernels``: each update op's cpu kernel on the flat buffers of the MLP
  784-256-256-10 (269,322 float32 parameters), in place as fw.optimizer calls it:
  the native kernel (``native``) and the NumPy kernel it falls back to (``numpy``).
  ``bench_optimizer.AdamParts`` times the whole ``Adam.step``.
- ``FusedChain``: a 20-instruction ``fused_elementwise`` program over 1M float32
  elements (two inputs and a bias row): the native interpreter, the op's NumPy
  reference, and the same chain written as plain NumPy ufunc calls (what unfused
  eager code costs at best).
- ``FusedMatmul``: ``fused_matmul`` with bias + gelu + residual through oneDNN vs the
  reference.
"""

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ops import OPS

N_MLP = 784 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10  # 269,322


def _update_args(rule, rng, n):
    p = (rng.standard_normal(n) * 0.05).astype(np.float32)
    g = (rng.standard_normal(n) * 1e-2).astype(np.float32)
    lr = np.array([1e-3])

    def state():
        return np.abs(rng.standard_normal(n).astype(np.float32)) * 1e-3

    pw = (np.array([0.9 ** 5], np.float32), np.array([0.999 ** 5], np.float32))
    states = {"sgd": [], "momentum": [state()], "adam": [state(), state()],
              "adamw": [state(), state()], "lamb": [state(), state()],
              "rmsprop": [state(), state()], "adagrad": [state()]}[rule]
    args = [p, g, lr, *states]
    if rule in ("adam", "adamw"):
        args += [*pw, None]
    elif rule == "lamb":
        args += list(pw)
    elif rule == "rmsprop":
        args += [None]
    n_out = {"sgd": 1, "momentum": 2, "adam": 6, "adamw": 6, "lamb": 5, "rmsprop": 4,
             "adagrad": 2}[rule]
    out = [None] * n_out
    out[0] = p
    for i, s in enumerate(states, 1):
        out[i] = s
    return args, tuple(out)


class OptimizerKernels:
    params = (["sgd", "momentum", "adam", "adamw", "lamb", "rmsprop", "adagrad"],
              ["native", "numpy"])
    param_names = ["rule", "kernel"]

    def setup(self, rule, kernel):
        k = OPS[rule].kernels["cpu"]
        if kernel == "numpy":
            k = getattr(k, "numpy_kernel", k)
        elif not hasattr(k, "numpy_kernel"):
            raise NotImplementedError("native fused kernels are not available")
        self.kern = k
        self.args, self.out = _update_args(rule, np.random.default_rng(0), N_MLP)

    def time_update(self, rule, kernel):
        self.kern(*self.args, out=self.out)


F32 = _dt.float32
# 20 instructions (2 constants not counted) over x, y (full) and b (a row): a
# GELU-MLP-style epilogue with a gated residual
CHAIN = (
    ("add", F32, (0, 2), ()),            # 3  x + b
    ("const", F32, (), (0.5,)),          # 4
    ("multiply", F32, (3, 4), ()),       # 5
    ("tanh", F32, (5,), ()),             # 6
    ("multiply", F32, (6, 1), ()),       # 7  * y
    ("gelu", F32, (7,), (False,)),       # 8
    ("subtract", F32, (8, 0), ()),       # 9
    ("abs", F32, (9,), ()),              # 10
    ("neg", F32, (10,), ()),             # 11
    ("exp", F32, (11,), ()),             # 12
    ("sigmoid", F32, (9,), ()),          # 13
    ("multiply", F32, (12, 13), ()),     # 14
    ("maximum", F32, (14, 1), ()),       # 15
    ("sqrt", F32, (10,), ()),            # 16
    ("divide", F32, (15, 16), ()),       # 17  (NaN/Inf where sqrt is 0: fine)
    ("const", F32, (), (1.0,)),          # 18
    ("add", F32, (17, 18), ()),          # 19
    ("log", F32, (10,), ()),             # 20
    ("silu", F32, (20,), ()),            # 21
    ("greater_than", _dt.bool_, (19, 21), ()),  # 22
    ("where", F32, (22, 19, 21), ()),    # 23
    ("minimum", F32, (23, 7), ()),       # 24
)


def _chain_numpy(x, y, b):
    """CHAIN as plain NumPy calls (each a new array: the unfused cost)."""
    from scipy.special import erf

    h3 = x + b
    h6 = np.tanh(h3 * np.float32(0.5))
    h7 = h6 * y
    h8 = np.float32(0.5) * h7 * (np.float32(1) + erf(h7 * np.float32(0.70710677)))
    h9 = h8 - x
    h10 = np.abs(h9)
    h12 = np.exp(np.negative(h10))
    h13 = 1 / (1 + np.exp(-h9))
    h15 = np.maximum(h12 * h13, y)
    h17 = h15 / np.sqrt(h10)
    h19 = h17 + np.float32(1)
    h20 = np.log(h10)
    h21 = h20 * (1 / (1 + np.exp(-h20)))
    return np.minimum(np.where(h19 > h21, h19, h21), h7)


class FusedChain:
    params = ["native", "reference", "numpy_ufuncs"]
    param_names = ["kernel"]

    def setup(self, kernel):
        rng = np.random.default_rng(0)
        n = 1 << 20
        self.x = rng.standard_normal((1024, n // 1024)).astype(np.float32)
        self.y = rng.standard_normal((1024, n // 1024)).astype(np.float32)
        self.b = rng.standard_normal(n // 1024).astype(np.float32)
        op = OPS["fused_elementwise"]
        if kernel == "native":
            if "cpu" not in op.kernels:
                raise NotImplementedError("native fused kernels are not available")
            self.fn = op.kernels["cpu"]
        else:
            self.fn = op.reference
        self.fn([self.x, self.y, self.b], program=CHAIN, out_dtype=F32)  # compile

    def time_chain(self, kernel):
        if kernel == "numpy_ufuncs":
            _chain_numpy(self.x, self.y, self.b)
        else:
            self.fn([self.x, self.y, self.b], program=CHAIN, out_dtype=F32)


class FusedMatmul:
    params = ["native", "reference"]
    param_names = ["kernel"]

    def setup(self, kernel):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((256, 512)).astype(np.float32)
        self.w = (rng.standard_normal((512, 512)) * 0.05).astype(np.float32)
        self.b = rng.standard_normal(512).astype(np.float32)
        self.r = rng.standard_normal((256, 512)).astype(np.float32)
        op = OPS["fused_matmul"]
        self.fn = op.kernels.get("cpu") if kernel == "native" else op.reference
        if self.fn is None:
            raise NotImplementedError("no native fused_matmul kernel")

    def time_bias_gelu_residual(self, kernel):
        self.fn(self.x, self.w, self.b, self.r, activation="gelu_erf")

