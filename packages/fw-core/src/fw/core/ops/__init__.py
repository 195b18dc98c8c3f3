"""The op table (`OPS`) and the public functions derived from it.

Each family module declares its ops with `defop`; hand-written public wrappers
live in `fw.core.api.<family>` and register with `public`. Importing this
package loads every family, then every api module, then `_api.install()`
generates the functions and attaches Tensor/Value methods. Add a family by
adding its module to `FAMILIES` (and to `fw.core.api.FAMILIES` if it has
wrappers).
"""

from __future__ import annotations

import importlib

from fw.core import api as _api_modules
from fw.core import dispatch as _dispatch
from fw.core.ops import _api
from fw.core.ops._registry import OPS, OpDef, defop, get_op, register_kernel

FAMILIES = ("creation", "elementwise", "reduce", "cumulative", "statistics", "shape", "indexing",
            "search", "linalg", "decomp", "solve", "fft", "random", "control", "activation", "conv",
            "pool", "norm", "nn_misc", "loss", "optimizer", "fused", "attention", "nn_grad",
            "dynamic_shape", "quant", "int8", "collective")

for _m in FAMILIES:
    importlib.import_module(f"fw.core.ops.{_m}")
for _m in _api_modules.FAMILIES:  # the hand-written wrappers, registered before install()
    importlib.import_module(f"fw.core.api.{_m}")

_dispatch._CAST = OPS["cast"]

from fw.core import kernels as _kernels  # noqa: E402,F401  (attaches fast cpu kernels)

FUNCTIONS = _api.install()
call = _api.call
entry = _api.entry

__all__ = ["OPS", "OpDef", "defop", "get_op", "register_kernel", "FUNCTIONS", "call", "entry",
           "FAMILIES"]
