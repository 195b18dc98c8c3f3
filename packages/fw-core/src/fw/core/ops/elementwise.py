"""Elementwise ops: arithmetic, math functions, comparisons, logic.

Binary ops broadcast and promote both inputs to one dtype (see fw.core.dtypes).
Ops marked ``to_float`` compute in the default float dtype for integer input.
"""

from __future__ import annotations

import numpy as np

from fw.core.ops._infer import binary, compare, same
from fw.core.ops._registry import defop


def _binary(name, ref, *, dunders=(), to_float=False, differentiable=True, out_bool=False,
            aliases=(), doc="", inplace=True):
    return defop(name, ("x", "y"), infer=compare if out_bool else binary, reference=ref,
                 fast="binary", to_float=to_float, differentiable=differentiable and not out_bool,
                 dunders=dunders, aliases=aliases, family="elementwise", doc=doc,
                 inplace=inplace and not out_bool)


def _unary(name, ref, *, to_float=False, differentiable=True, dunders=(), aliases=(), doc="",
           infer=same, inplace=True):
    return defop(name, ("x",), infer=infer, reference=ref, fast="unary", to_float=to_float,
                 differentiable=differentiable, dunders=dunders, aliases=aliases,
                 family="elementwise", doc=doc, inplace=inplace)


# ---------------------------------------------------------------- arithmetic
_binary("add", np.add, dunders=("__add__", "__radd__"), doc="x + y, broadcast.")
_binary("subtract", np.subtract, dunders=("__sub__", "__rsub__"), aliases=("sub",),
        doc="x - y, broadcast.")
_binary("multiply", np.multiply, dunders=("__mul__", "__rmul__"), aliases=("mul",),
        doc="x * y, broadcast.")
_binary("divide", np.true_divide, dunders=("__truediv__", "__rtruediv__"), to_float=True,
        aliases=("div", "true_divide"), doc="x / y (true division), broadcast.")

# ---------------------------------------------------------------- unary
_unary("neg", np.negative, dunders=("__neg__",), aliases=("negative",), doc="-x")
_unary("exp", np.exp, to_float=True, doc="e ** x")
_unary("log", np.log, to_float=True, doc="natural logarithm")
_unary("tanh", np.tanh, to_float=True, doc="hyperbolic tangent")

# ---------------------------------------------------------------- comparisons
_binary("equal", np.equal, out_bool=True, dunders=("__eq__",), doc="x == y")
_binary("less_than", np.less, out_bool=True, dunders=("__lt__",), doc="x < y")
