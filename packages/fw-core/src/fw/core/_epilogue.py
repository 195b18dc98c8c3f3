"""The epilogue activations: the one table of the activations fused into matmul and
conv (``fused_matmul``/``fused_conv``, ``fw.core._native.matmul``, ``_C.conv_forward``),
and the NumPy formulas they compute.

Each row says: the name, the value of the native enum (``fw::Activation``), the NumPy
function applied to the (widened) product, and the fw op (with attributes) whose
unfused call computes the same thing, which is how the fusion passes recognise it
(:func:`of_op`). ``none`` applies nothing.

To add an epilogue activation, edit exactly two tables (and rebuild: ``hatch run
native``):

1. here: a row of ``TABLE`` (next value; its NumPy function on the product, written
   as the unfused op's reference computes it; the fw op and attributes it replaces),
   and an entry of ``ALIASES`` for any other spelling;
2. ``csrc/activation.hpp``: the row of ``FW_EPILOGUE_ACTIVATIONS`` with the same name
   and value, and the oneDNN eltwise algorithm, alpha and beta computing it (its
   kernel), plus the same aliases in ``FW_EPILOGUE_ALIASES``.

``tests/test_native_epilogue.py`` fails until both agree; the fused records and the
native tests then cover the new row. This module imports only NumPy (SciPy for erf, on
first use), so the extension loader and the op table can both take it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

__all__ = ["ALIASES", "BY_NAME", "NAMES", "TABLE", "Activation", "canonical", "erf", "gelu",
           "of_op", "sigmoid_np", "silu_np"]


# ---------------------------------------------------------------- the NumPy formulas
def erf(x):
    """The error function on NumPy (scipy.special) or CuPy (cupyx) arrays."""
    if type(x).__module__.split(".")[0] == "cupy":  # pragma: no cover - gpu only
        from cupyx.scipy import special as cspecial

        return cspecial.erf(x)
    from scipy import special

    return special.erf(x)


def sigmoid_np(x):
    # exp(-x) overflows to inf for very negative x, giving 1/inf = 0: the right limit
    return 1.0 / (1.0 + np.exp(-x))


def silu_np(x):
    return x * sigmoid_np(x)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x, approximate=False):
    """``x * Phi(x)`` with the erf form, or the tanh approximation when `approximate`."""
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


def _relu(v):
    # the epilogue owns the product it is handed, so a real array is rectified in place
    return np.maximum(v, 0, out=v) if type(v) is np.ndarray and v.ndim else np.maximum(v, 0)


# ---------------------------------------------------------------- the table
class Activation(NamedTuple):
    name: str
    value: int  # fw::Activation in csrc/activation.hpp
    numpy: Callable | None  # on the product; None: the identity
    op: str | None  # the fw op computing it unfused
    attrs: tuple = ()  # that op's attributes, as (name, value) pairs


TABLE: tuple[Activation, ...] = (
    Activation("none", 0, None, None),
    Activation("relu", 1, _relu, "relu"),
    Activation("gelu_tanh", 2, lambda v: gelu(v, True), "gelu", (("approximate", True),)),
    Activation("gelu_erf", 3, lambda v: gelu(v, False), "gelu", (("approximate", False),)),
    Activation("sigmoid", 4, sigmoid_np, "sigmoid"),
    Activation("tanh", 5, np.tanh, "tanh"),
    Activation("silu", 6, silu_np, "silu"),
)

#: other spellings accepted wherever an activation name is (None means none)
ALIASES: dict = {None: "none", "gelu": "gelu_erf", "swish": "silu"}

NAMES: tuple[str, ...] = tuple(a.name for a in TABLE)
BY_NAME: dict[str, Activation] = {a.name: a for a in TABLE}
_BY_OP: dict[str, tuple[Activation, ...]] = {}
for _a in TABLE:
    if _a.op is not None:
        _BY_OP[_a.op] = (*_BY_OP.get(_a.op, ()), _a)


def canonical(name) -> str | None:
    """The table name `name` spells (aliases resolved, any letter case), or None."""
    if isinstance(name, str):
        name = name.lower()
    try:
        name = ALIASES.get(name, name)
    except TypeError:  # unhashable: not a name
        return None
    return name if name in BY_NAME else None


def of_op(op_name: str, attrs) -> str | None:
    """The activation that fw op `op_name` with `attrs` computes, or None (the table's
    attributes are flags: a missing one reads as False)."""
    for a in _BY_OP.get(op_name, ()):
        if all(bool(attrs.get(k)) == v for k, v in a.attrs):
            return a.name
    return None
