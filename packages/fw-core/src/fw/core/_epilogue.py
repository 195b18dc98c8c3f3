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
    """The error function on NumPy (scipy.special, else NumPy formulas) or CuPy arrays.

    SciPy is optional in fw-core (`pip install fw-core[special]`): a deployment
    (fw-core + fw-inference) does not install it, and GELU must still run there."""
    if type(x) is not np.ndarray and not isinstance(x, np.generic):  # a device's array
        from fw.core import place as _pl

        return _pl.backend_of(x).special().erf(x)
    special = scipy_special()
    if special is not None:
        return special.erf(x)
    return erf_numpy(x)


_SCIPY: list = []


def scipy_special():
    """scipy.special, imported on first use, or None when SciPy is not installed."""
    if not _SCIPY:
        try:
            from scipy import special
        except ImportError:
            special = None
        _SCIPY.append(special)
    return _SCIPY[0]


# Abramowitz & Stegun, Handbook of Mathematical Functions, 7.1.26: |error| <= 1.5e-7
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# Maclaurin series of erf (A&S 7.1.5) for |x| < 0.5, where 7.1.26's absolute error
# would be a large relative one: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
_TAYLOR = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(8))


def erf_numpy(x):
    """erf without SciPy. float64: exact (math.erf per element: slow, but float64
    inference is rare); other float dtypes: in float64 with the series below 0.5 and
    A&S 7.1.26 above (relative error < 3e-7, about 2 float32 ulps), rounded once."""
    a = np.asarray(x)
    if a.dtype == np.float64:
        return np.frompyfunc(math.erf, 1, 1)(a).astype(np.float64)
    v = a.astype(np.float64)
    ax = np.abs(v)
    t = 1.0 / (1.0 + _AS_P * ax)
    poly = t * (_AS_A[0] + t * (_AS_A[1] + t * (_AS_A[2] + t * (_AS_A[3] + t * _AS_A[4]))))
    big = np.copysign(1.0 - poly * np.exp(-ax * ax), v)
    x2 = v * v
    series = np.zeros_like(v)
    for c in reversed(_TAYLOR):
        series = series * x2 + c
    small = (2.0 / math.sqrt(math.pi)) * v * series
    return np.where(ax < 0.5, small, big).astype(a.dtype if a.dtype.kind == "f" else np.float64)


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


def _clip(v, lo, hi):
    # as the unfused ops compute it (min of max), so NaN propagates the same way
    return np.minimum(np.maximum(v, lo), hi)


#: Paddle's default hardsigmoid slope (0.1666667, not 1/6: the op's default attribute)
_HS_SLOPE = 0.1666667


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
    Activation("relu6", 7, lambda v: _clip(v, 0.0, 6.0), "relu6"),
    Activation("hardswish", 8, lambda v: v * _clip(v + 3.0, 0.0, 6.0) / 6.0, "hardswish"),
    # only Paddle's default slope/offset: the native row bakes them in as its alpha/beta
    Activation("hardsigmoid", 9, lambda v: _clip(v * _HS_SLOPE + 0.5, 0.0, 1.0),
               "hardsigmoid", (("slope", _HS_SLOPE), ("offset", 0.5))),
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


def _attr_matches(attrs, k, v) -> bool:
    if isinstance(v, bool):  # a flag: a missing one reads as False
        return bool(attrs.get(k)) == v
    got = attrs.get(k)  # a number: only the exact value the native row bakes in
    return isinstance(got, (int, float)) and float(got) == v


def of_op(op_name: str, attrs) -> str | None:
    """The activation that fw op `op_name` with `attrs` computes, or None (a flag
    attribute that is missing reads as False; a numeric one must equal the row's)."""
    for a in _BY_OP.get(op_name, ()):
        if all(_attr_matches(attrs, k, v) for k, v in a.attrs):
            return a.name
    return None
