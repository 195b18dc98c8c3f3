"""Elementwise ops: arithmetic, math functions, comparisons, logic, bitwise.

Binary ops broadcast their inputs and promote them to one dtype by the table in
fw.core.dtypes (Python scalars are weak: ``int_tensor ** 2`` stays integer,
``int_tensor * 0.5`` is float32). Ops marked ``to_float`` compute in the default
float dtype for integer/bool input (``exp``, ``divide``, ``atan2``).

Semantics worth knowing (they follow Paddle 3.x unless noted):

- ``divide`` is true division (ints -> float); ``floor_divide`` (``//``) floors
  and ``remainder``/``mod``/``floor_mod`` (``%``) takes the sign of the divisor,
  as Python does. An integer division by zero is an error (Paddle's "Integer division
  by zero"); float division by zero gives inf/nan.
- ``pow`` of an integer by a negative integer truncates toward zero like C's
  ``pow`` cast back to int (``2 ** -1 == 0``, ``1 ** -3 == 1``, ``-1 ** -3 == -1``).
- ``round`` rounds halves away from zero, as Paddle's kernel (C's round) and its
  documented example do (NumPy and PyTorch round half to even).
- ``abs``/``real``/``imag``/``angle`` of a complex tensor are real tensors.
- ``clip(x, min, max)`` is ``minimum(maximum(x, min), max)``: when min > max
  every element becomes max (NumPy and PyTorch agree).
- comparisons, ``is*`` tests, logical ops -> bool, non-differentiable; bitwise
  ops and ``gcd``/``lcm`` take integer (bitwise: also bool) tensors only.
- special functions NumPy lacks come from ``scipy.special`` (imported on first
  use, so ``import fw`` does not load SciPy); float16/bfloat16 compute in
  float32 and round back.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import TensorType
from fw.core.ops._elementwise_np import (
    _BOOL,
    _COMPLEX,
    _FLOAT,
    _INT,
    _angle_ref,
    _bitwise,
    _bitwise_not_ref,
    _check,
    _conj_ref,
    _equal_all_ref,
    _frac_ref,
    _heaviside_ref,
    _imag_ref,
    _int_divide,
    _integral_passthrough,
    _isclose_ref,
    _isfinite_ref,
    _isneginf_ref,
    _isposinf_ref,
    _isreal_ref,
    _kind,
    _left_shift_ref,
    _lerp_ref,
    _logit_ref,
    _nan_to_num_ref,
    _not_float_false,
    _polygamma_ref,
    _pow_ref,
    _real_ref,
    _right_shift_ref,
    _round_ref,
    _rsqrt_ref,
    _scipy_binary,
    _scipy_unary,
    _sgn_ref,
    _sigmoid_ref,
    _signbit_ref,
    _sinc_ref,
    _stanh_ref,
    _where_ref,
)
from fw.core.ops._infer import broadcast_shapes, real_of
from fw.core.ops._registry import defop
from fw.core.ops.creation import number_arg


# ---------------------------------------------------------------- dtype helpers
def _promote(types, to_float=False):
    d = None
    for t in types:
        if t is not None:
            d = t.dtype if d is None else _dt.promote_types(d, t.dtype)
    if to_float and d.kind < _FLOAT:
        d = _dt.get_default_dtype()
    return d


def _allow(*, bool_=True, int_=True, float_=True, complex_=True):
    """A dtype check shared by infer (on DTypes) and kernels (via `_check`)."""
    ok = {_BOOL: bool_, _INT: int_, _FLOAT: float_, _COMPLEX: complex_}
    kinds = [n for k, n in ((_BOOL, "bool"), (_INT, "integer"), (_FLOAT, "floating"),
                            (_COMPLEX, "complex")) if ok[k]]
    want = " or ".join(kinds)
    want = ("an " if want[0] in "aeiou" else "a ") + want

    def check(d: _dt.DType, arg="x"):
        if not ok[d.kind]:
            raise InvalidTypeError(f"'{arg}' must be {want} tensor, got {d.name}")

    # the NumPy dtypes that pass, for a cheap test in kernels
    check.np_ok = frozenset(d.np for d in _dt.ALL_DTYPES if ok[d.kind])
    return check


_REAL = dict(complex_=False)
_NUMERIC = dict(bool_=False)
_REAL_NUMERIC = dict(bool_=False, complex_=False)
_INTEGRAL = dict(bool_=False, float_=False, complex_=False)
_BITS = dict(float_=False, complex_=False)


def _infer(names, *, to_float=False, promote=None, out=None, check=None):
    """An `infer` for elementwise ops: broadcast every (present) input, promote the
    inputs at `promote` (default all), then map the dtype with `out` (a DType, or a
    function of the promoted DType)."""

    def rule(*types, **_attrs):
        idx = range(len(types)) if promote is None else promote
        d = _promote([types[i] for i in idx if i < len(types)], to_float)
        if check is not None:
            # the kernel sees the promoted dtype: name the input that brought it in
            arg = next((names[i] for i in idx if i < len(types) and types[i] is not None
                        and types[i].dtype is d), names[0])
            check(d, arg)
        shapes = [t.shape for t in types if t is not None]
        present = [n for n, t in zip(names, types) if t is not None]
        shape = broadcast_shapes(*shapes, names=present)
        od = d if out is None else (out if isinstance(out, _dt.DType) else out(d))
        return TensorType(shape, od)

    return rule


# ---------------------------------------------------------------- declaration helpers
def _checked(ref, check, n):
    """The kernel with the dtype check in front: NumPy would quietly compute many
    disallowed cases (fmax of complex, square of bool as int8). A kernel that checks
    dtypes itself (``checks_dtype``, see `_int_divide`) is used as it is."""
    if check is None or getattr(ref, "checks_dtype", False):
        return ref
    ok = check.np_ok
    if n == 1:
        def kernel(x, **attrs):
            if x.dtype not in ok:
                _check(check, x)
            return ref(x, **attrs)
    else:
        def kernel(x, y, **attrs):
            # y may be a Python number on the fast path: it follows x's dtype
            if x.dtype not in ok or getattr(y, "dtype", x.dtype) not in ok:
                _check(check, x, y)
            return ref(x, y, **attrs)

    kernel.__name__ = getattr(ref, "__name__", "kernel")
    kernel.__wrapped__ = ref
    return kernel


def _binary(name, ref, *, dunders=(), to_float=False, differentiable=True, out=None,
            aliases=(), doc="", inplace=True, check=None, promote="all", attrs=None,
            canon=None, method=True):
    """A two-input elementwise op. Without attributes it gets the fast entry point."""
    infer = _infer(("x", "y"), to_float=to_float, out=out, check=check,
                   promote=None if promote == "all" else promote)
    return defop(name, ("x", "y"), attrs, infer=infer, reference=_checked(ref, check, 2),
                 fast=None if attrs else "binary", to_float=to_float,
                 differentiable=differentiable, dunders=dunders, aliases=aliases,
                 family="elementwise", doc=doc, inplace=inplace, promote=promote, canon=canon,
                 method=method)


def _unary(name, ref, *, to_float=False, differentiable=True, dunders=(), aliases=(), doc="",
           out=None, inplace=True, check=None, attrs=None, canon=None, promote="all",
           method=True):
    """A one-input elementwise op. Without attributes it gets the fast entry point."""
    infer = _infer(("x",), to_float=to_float, out=out, check=check)
    return defop(name, ("x",), attrs, infer=infer, reference=_checked(ref, check, 1),
                 fast=None if attrs else "unary", to_float=to_float,
                 differentiable=differentiable, dunders=dunders, aliases=aliases,
                 family="elementwise", doc=doc, inplace=inplace, canon=canon,
                 promote=promote if to_float else None, method=method)


# ---------------------------------------------------------------- arithmetic
_binary("add", np.add, dunders=("__add__", "__radd__"),
        doc="Add x and y elementwise: x + y, with broadcasting.")
_binary("subtract", np.subtract, dunders=("__sub__", "__rsub__"), aliases=("sub",),
        doc="Subtract y from x elementwise: x - y, with broadcasting.")
_binary("multiply", np.multiply, dunders=("__mul__", "__rmul__"), aliases=("mul",),
        doc="Multiply x and y elementwise: x * y, with broadcasting.")
_binary("divide", np.true_divide, dunders=("__truediv__", "__rtruediv__"), to_float=True,
        aliases=("div", "true_divide"),
        doc="Divide x by y elementwise: x / y (true division; integers give floats).")

_no_bool_real = _allow(**_REAL_NUMERIC)


_binary("floor_divide", _int_divide(np.floor_divide, _no_bool_real),
        dunders=("__floordiv__", "__rfloordiv__"),
        differentiable=False, check=_no_bool_real,
        doc="floor(x / y): integer inputs stay integer (an integer division by zero is an "
            "error).")


_binary("remainder", _int_divide(np.remainder, _no_bool_real), dunders=("__mod__", "__rmod__"),
        aliases=("mod", "floor_mod"), check=_no_bool_real,
        doc="x - floor(x / y) * y: the result has the sign of y (Python's %).")

_no_bool = _allow(**_NUMERIC)


_binary("pow", _pow_ref, dunders=("__pow__", "__rpow__"), check=_no_bool,
        doc="x to the power y, elementwise: x ** y, with broadcasting; an integer tensor to an "
            "integer power stays integer.")


_binary("maximum", np.maximum, inplace=False,
        doc="Elementwise maximum; NaN wins (use fmax to ignore NaN).")
_binary("minimum", np.minimum, inplace=False,
        doc="Elementwise minimum; NaN wins (use fmin to ignore NaN).")
_binary("fmax", np.fmax, inplace=False, check=_allow(complex_=False),
        doc="Elementwise maximum ignoring NaN (NaN only when both are NaN).")
_binary("fmin", np.fmin, inplace=False, check=_allow(complex_=False),
        doc="Elementwise minimum ignoring NaN (NaN only when both are NaN).")

_real_float = _allow(**_REAL)
_binary("atan2", np.arctan2, to_float=True, inplace=False, check=_real_float,
        doc="atan(x / y) in the quadrant of the point (y, x): the two-argument arctangent "
            "with x as the numerator, as Paddle orders it.")
_binary("hypot", np.hypot, to_float=True, check=_real_float,
        doc="The hypotenuse sqrt(x**2 + y**2), elementwise, without overflow.")
_binary("logaddexp", np.logaddexp, to_float=True, inplace=False, check=_real_float,
        doc="log(exp(x) + exp(y)) without overflow.")
_binary("copysign", np.copysign, to_float=True, check=_real_float,
        doc="|x| with the sign of y (including the sign of -0.0).")
_binary("nextafter", np.nextafter, to_float=True, inplace=False, differentiable=False,
        check=_real_float, doc="The next representable float after x toward y.")

_heaviside_check = _allow(**_REAL_NUMERIC)


_binary("heaviside", _heaviside_ref, inplace=False, check=_heaviside_check,
        doc="0 where x < 0, 1 where x > 0, y where x == 0 (NaN stays NaN).")

_int_only = _allow(**_INTEGRAL)


_binary("gcd", np.gcd, differentiable=False, check=_int_only,
        doc="Greatest common divisor (non-negative) of integer tensors.")
_binary("lcm", np.lcm, differentiable=False, check=_int_only,
        doc="Least common multiple (non-negative) of integer tensors.")


def _ldexp_infer(x, y, **_):
    d = x.dtype if x.dtype.kind >= _FLOAT else _dt.get_default_dtype()
    _real_float(d, "x")
    if y.dtype.kind != _INT:
        raise InvalidTypeError(f"'y' must be an integer tensor, got {y.dtype.name}")
    return TensorType(broadcast_shapes(x.shape, y.shape, names=("x", "y")), d)


def _ldexp_ref(x, y):
    _check(_real_float, x)
    if getattr(y, "dtype", np.dtype(np.int64)).kind not in "iu":
        raise InvalidTypeError(f"'y' must be an integer tensor, got {y.dtype}")
    # exponents beyond +-100000 over/underflow every float type anyway
    e = np.clip(y, -100000, 100000).astype(np.int32)
    return np.ldexp(x, e)


defop("ldexp", ("x", "y"), infer=_ldexp_infer, reference=_ldexp_ref, promote=(0,),
      to_float=True, family="elementwise", inplace=True,
      doc="x * 2**y for an integer tensor y (integer x computes in the default float).")


defop("lerp", ("x", "y", "weight"), infer=_infer(("x", "y", "weight"), to_float=True,
                                                 check=_allow(bool_=False)),
      reference=_lerp_ref, to_float=True, family="elementwise", inplace=True,
      doc="x + weight * (y - x), broadcast over all three (weight may be a number).")


# ---------------------------------------------------------------- where / clip
where_op = defop("where", ("condition", "x", "y"),
                 infer=_infer(("condition", "x", "y"), promote=(1, 2)),
                 reference=_where_ref, promote=(1, 2), family="elementwise",
                 doc="x where condition is true, else y; x and y are promoted together.")


_clip_check = _allow(bool_=False, complex_=False)


def _clip_ref(x, min=None, max=None):
    _check(_clip_check, x, min, max, names=("x", "min", "max"))
    out = x
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    return out.copy() if out is x else out


defop("clip", ("x", "min?", "max?"),
      infer=_infer(("x", "min", "max"), check=_clip_check),
      reference=_clip_ref, family="elementwise", inplace=True, aliases=("clamp",),
      doc="minimum(maximum(x, min), max); min and max may be numbers or tensors and are "
          "optional. A float bound on an integer tensor gives a float result.")


# ---------------------------------------------------------------- unary arithmetic
_unary("neg", np.negative, dunders=("__neg__",), aliases=("negative",),
       doc="Negate x, elementwise: -x.",
       check=_allow(bool_=False))


_unary("positive", np.positive, dunders=("__pos__",), inplace=False,
       check=_allow(bool_=False), doc="+x (a copy); bool tensors are rejected.")
_unary("abs", np.absolute, dunders=("__abs__",), out=real_of,
       doc="Absolute value of x, elementwise: |x| (the magnitude for complex x).")


_unary("sign", np.sign, check=_allow(bool_=False, complex_=False),
       doc="-1, 0 or 1 by the sign of x (NaN stays NaN).")


_unary("sgn", _sgn_ref, inplace=False, check=_allow(bool_=False),
       doc="sign(x) for real x; x / |x| (0 at 0) for complex x.")


_unary("signbit", _signbit_ref, out=_dt.bool_, differentiable=False, inplace=False,
       check=_allow(complex_=False),
       doc="True where the sign bit is set (also for -0.0 and -NaN).")


_unary("square", np.square, check=_allow(bool_=False),
       doc="x * x (integer tensors stay integer).")


_real_float_unary = _allow(complex_=False)

for _name, _fn, _doc in (
        ("exp", np.exp, "Exponential of x, elementwise: e ** x."),
        ("expm1", np.expm1, "exp(x) - 1, elementwise, accurate for x near 0."),
        ("exp2", np.exp2, "Base-2 exponential, elementwise: 2 ** x."),
        ("log", np.log, "Natural logarithm of x, elementwise."),
        ("log2", np.log2, "Base-2 logarithm of x, elementwise."),
        ("log10", np.log10, "Base-10 logarithm of x, elementwise."),
        ("log1p", np.log1p, "log(1 + x), elementwise, accurate for x near 0."),
        ("sqrt", np.sqrt, "Square root of x, elementwise."),
        ("rsqrt", _rsqrt_ref, "Reciprocal square root, elementwise: 1 / sqrt(x)."),
        ("reciprocal", np.reciprocal, "Reciprocal, elementwise: 1 / x."),
        ("sin", np.sin, "Sine of x (in radians), elementwise."),
        ("cos", np.cos, "Cosine of x (in radians), elementwise."),
        ("tan", np.tan, "Tangent of x (in radians), elementwise."),
        ("asin", np.arcsin, "Inverse sine (arcsine) of x, elementwise, in radians."),
        ("acos", np.arccos, "Inverse cosine (arccosine) of x, elementwise, in radians."),
        ("atan", np.arctan, "Inverse tangent (arctangent) of x, elementwise, in radians."),
        ("sinh", np.sinh, "Hyperbolic sine of x, elementwise."),
        ("cosh", np.cosh, "Hyperbolic cosine of x, elementwise."),
        ("tanh", np.tanh, "Hyperbolic tangent of x, elementwise."),
        ("asinh", np.arcsinh, "Inverse hyperbolic sine of x, elementwise."),
        ("acosh", np.arccosh, "Inverse hyperbolic cosine of x, elementwise."),
        ("atanh", np.arctanh, "Inverse hyperbolic tangent of x, elementwise.")):
    _unary(_name, _fn, to_float=True, doc=_doc)

_unary("deg2rad", np.deg2rad, to_float=True, inplace=False, check=_real_float_unary,
       doc="Convert angles from degrees to radians, elementwise.")
_unary("rad2deg", np.rad2deg, to_float=True, inplace=False, check=_real_float_unary,
       doc="Convert angles from radians to degrees, elementwise.")


_unary("sigmoid", _sigmoid_ref, to_float=True,
       doc="The logistic sigmoid, elementwise: 1 / (1 + exp(-x)).")


_unary("sinc", _sinc_ref, to_float=True, check=_real_float_unary,
       doc="sin(pi x) / (pi x), 1 at 0 (the normalized sinc).")


# ---------------------------------------------------------------- rounding
_rounding_check = _allow(complex_=False)


_unary("floor", _integral_passthrough(np.floor), check=_rounding_check,
       doc="Largest integer <= x (integer tensors are returned unchanged).")
_unary("ceil", _integral_passthrough(np.ceil), check=_rounding_check,
       doc="Smallest integer >= x (integer tensors are returned unchanged).")
_unary("trunc", _integral_passthrough(np.trunc), check=_rounding_check,
       doc="x rounded toward zero (integer tensors are returned unchanged).")


_unary("frac", _frac_ref, check=_allow(bool_=False, complex_=False),
       doc="x - trunc(x), the fractional part with the sign of x.")


def _round_canon(attrs):
    d = attrs["decimals"]
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise InvalidTypeError(f"'decimals' must be an int, got {type(d).__name__}")
    return {"decimals": int(d)}


_unary("round", _round_ref, attrs={"decimals": 0}, canon=_round_canon,
       doc="Round to `decimals` places, halves away from zero ([-0.5, -0.2, 0.6, 1.5, 2.5] -> "
           "[-1, -0, 1, 2, 3]).")


# ---------------------------------------------------------------- special functions
for _name, _sp_name, _doc, _alias in (
        ("erf", "erf", "The Gauss error function of x, elementwise.", ()),
        ("erfinv", "erfinv", "Inverse of erf on (-1, 1); +-inf at +-1.", ()),
        ("digamma", "psi", "The logarithmic derivative of the gamma function.", ()),
        ("lgamma", "gammaln", "log |gamma(x)|, elementwise.", ("gammaln",)),
        ("i0", "i0", "Modified Bessel function of the first kind, order 0.", ()),
        ("i0e", "i0e", "Exponentially scaled i0: exp(-|x|) * i0(x).", ()),
        ("i1", "i1", "Modified Bessel function of the first kind, order 1.", ()),
        ("i1e", "i1e", "Exponentially scaled i1: exp(-|x|) * i1(x).", ())):
    _unary(_name, _scipy_unary(_sp_name), to_float=True, check=_real_float_unary, doc=_doc,
           aliases=_alias)


def _polygamma_canon(attrs):
    n = attrs["n"]
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise InvalidTypeError(f"'n' must be a non-negative int, got {type(n).__name__}")
    if n < 0:
        raise InvalidArgumentError(f"'n' must be >= 0, got {n}")
    return {"n": int(n)}


_unary("polygamma", _polygamma_ref, to_float=True, attrs={"n": 0}, canon=_polygamma_canon,
       check=_real_float_unary, doc="The n-th derivative of digamma (polygamma(x, 0) is "
                                    "digamma(x)).")


_binary("gammainc", _scipy_binary("gammainc"), to_float=True, check=_real_float,
        doc="Regularized lower incomplete gamma P(x, y) (x: shape >= 0, y: bound >= 0).")
_binary("gammaincc", _scipy_binary("gammaincc"), to_float=True, check=_real_float,
        doc="Regularized upper incomplete gamma Q(x, y) = 1 - P(x, y).")


def _logit_canon(attrs):
    e = attrs["eps"]
    return {"eps": None if e is None else float(number_arg(e, "eps"))}


_unary("logit", _logit_ref, to_float=True, attrs={"eps": None}, canon=_logit_canon,
       check=_real_float_unary,
       doc="log(x / (1 - x)); with eps, x is first clipped to [eps, 1 - eps].")


def _floats_canon(*names):
    def canon(attrs):
        a = dict(attrs)
        for n in names:
            a[n] = float(number_arg(a[n], n))
        return a

    return canon


_unary("stanh", _stanh_ref, to_float=True, attrs={"scale_a": 0.67, "scale_b": 1.7159},
       canon=_floats_canon("scale_a", "scale_b"), inplace=False, check=_real_float_unary,
       doc="The scaled tanh, elementwise: scale_b * tanh(scale_a * x).")


def _nan_to_num_canon(attrs):
    return {k: None if v is None else float(number_arg(v, k)) for k, v in attrs.items()}


_unary("nan_to_num", _nan_to_num_ref, attrs={"nan": 0.0, "posinf": None, "neginf": None},
       canon=_nan_to_num_canon, check=_allow(bool_=False),
       doc="Replace NaN with `nan`, +inf with `posinf` and -inf with `neginf` (None: the "
           "largest / lowest finite value of the dtype).")


def _frexp_ref(x):
    _check(_real_float_unary, x)
    m, e = np.frexp(x)
    return m, e.astype(x.dtype)


def _frexp_infer(x):
    t = _infer(("x",), to_float=True, check=_real_float_unary)(x)
    return t, t


defop("frexp", ("x",), outputs=("mantissa", "exponent"), infer=_frexp_infer,
      reference=_frexp_ref, to_float=True, differentiable=False, family="elementwise",
      doc="Split x into mantissa in [0.5, 1) (by magnitude) and exponent with "
          "x = mantissa * 2**exponent; both have x's dtype.")


# ---------------------------------------------------------------- scale
def _scale_canon(attrs):
    a = _floats_canon("scale", "bias")(attrs)
    a["bias_after_scale"] = bool(a["bias_after_scale"])
    return a


_scale_check = _allow(bool_=False)


def _scale_ref(x, scale=1.0, bias=0.0, bias_after_scale=True):
    _check(_scale_check, x)
    if _kind(x) == _INT:  # Paddle casts scale and bias to the tensor's type first
        t = x.dtype.type
        s, b = t(int(scale)), t(int(bias))
    else:
        s, b = scale, bias
    out = x * s + b if bias_after_scale else (x + b) * s
    return out.astype(x.dtype, copy=False)  # bfloat16 * Python float is float32


scale_op = defop("scale", ("x",), {"scale": 1.0, "bias": 0.0, "bias_after_scale": True},
                 infer=_infer(("x",), check=_scale_check),
                 reference=_scale_ref, canon=_scale_canon, promote=None, inplace=True,
                 family="elementwise",
                 doc="scale * x + bias (or (x + bias) * scale when bias_after_scale=False).")


# ---------------------------------------------------------------- comparisons
_compare_check = _allow()


def _compare(name, ref, alias, dunder, doc):
    _binary(name, ref, out=_dt.bool_, differentiable=False, aliases=(alias,),
            dunders=dunder, doc=doc)


_compare("equal", np.equal, "eq", (), "Compare elementwise: x == y, as a bool tensor.")
_compare("not_equal", np.not_equal, "ne", (), "Compare elementwise: x != y, as a bool tensor.")
_compare("less_than", np.less, "lt", ("__lt__",), "Compare elementwise: x < y, as a bool tensor.")
_compare("less_equal", np.less_equal, "le", ("__le__",),
         "Compare elementwise: x <= y, as a bool tensor.")
_compare("greater_than", np.greater, "gt", ("__gt__",),
         "Compare elementwise: x > y, as a bool tensor.")
_compare("greater_equal", np.greater_equal, "ge", ("__ge__",),
         "Compare elementwise: x >= y, as a bool tensor.")


def _isclose_canon(attrs):
    a = _floats_canon("rtol", "atol")(attrs)
    a["equal_nan"] = bool(a["equal_nan"])
    return a


_CLOSE_ATTRS = {"rtol": 1e-05, "atol": 1e-08, "equal_nan": False}
_close_check = _allow(bool_=False)
_binary("isclose", _isclose_ref, out=_dt.bool_, differentiable=False, inplace=False,
        attrs=dict(_CLOSE_ATTRS), canon=_isclose_canon, check=_close_check,
        doc="|x - y| <= atol + rtol * |y| elementwise (inf equals inf of the same sign; "
            "NaN equals NaN only with equal_nan).")


def _allclose_infer(x, y, **attrs):
    _infer(("x", "y"), check=_close_check)(x, y)
    return TensorType((), _dt.bool_)


def _allclose_ref(x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    _check(_close_check, x, y)
    return _isclose_ref(x, y, rtol, atol, equal_nan).all()


defop("allclose", ("x", "y"), dict(_CLOSE_ATTRS), infer=_allclose_infer,
      reference=_allclose_ref, canon=_isclose_canon, differentiable=False,
      family="elementwise", doc="True (a 0-D bool tensor) when isclose holds everywhere.")


def _equal_all_infer(x, y, **_):
    _promote([x, y])
    return TensorType((), _dt.bool_)


defop("equal_all", ("x", "y"), infer=_equal_all_infer, reference=_equal_all_ref,
      differentiable=False, family="elementwise",
      doc="True (a 0-D bool tensor) when x and y have the same shape and values.")


# ---------------------------------------------------------------- tests on values
for _name, _fn, _doc, _chk in (
        ("isnan", _not_float_false(np.isnan), "True where x is NaN.", None),
        ("isinf", _not_float_false(np.isinf), "True where x is +inf or -inf.", None),
        ("isfinite", _isfinite_ref, "True where x is neither NaN nor infinite.", None),
        ("isposinf", _not_float_false(_isposinf_ref), "True where x is +inf.",
         _allow(complex_=False)),
        ("isneginf", _not_float_false(_isneginf_ref), "True where x is -inf.",
         _allow(complex_=False)),
        ("isreal", _isreal_ref, "True where x has no imaginary part (always for real "
                                "dtypes).", None)):
    _unary(_name, _fn, out=_dt.bool_, differentiable=False, inplace=False, check=_chk,
           doc=_doc)


# ---------------------------------------------------------------- complex parts
_unary("real", _real_ref, out=real_of, inplace=False, doc="The real part (x for real x).")
_unary("imag", _imag_ref, out=real_of, inplace=False,
       doc="The imaginary part (zeros for real x).")
_unary("conj", _conj_ref, inplace=False, doc="The complex conjugate (x for real x).")
_unary("angle", _angle_ref, to_float=True, out=real_of, inplace=False,
       doc="The argument of x in (-pi, pi]; for real x: pi where x < 0, else 0.")


# ---------------------------------------------------------------- logic
def _logical_not_ref(x):
    # x == 0 for complex x: the same truth, and CuPy's logical_not has no complex loop
    return x == 0 if x.dtype.kind == "c" else np.logical_not(x)


def _logical(name, ref, doc):
    defop(name, ("x", "y"), infer=_logical_infer, reference=ref, promote=None, fast="binary",
          differentiable=False, family="elementwise", inplace=True, doc=doc)


def _logical_infer(x, y, **_):
    return TensorType(broadcast_shapes(x.shape, y.shape, names=("x", "y")), _dt.bool_)


_logical("logical_and", np.logical_and, "x and y, elementwise (nonzero is true) -> bool.")
_logical("logical_or", np.logical_or, "x or y, elementwise (nonzero is true) -> bool.")
_logical("logical_xor", np.logical_xor, "x xor y, elementwise (nonzero is true) -> bool.")
_unary("logical_not", _logical_not_ref, out=_dt.bool_, differentiable=False,
       doc="not x, elementwise (nonzero is true) -> bool.")

_bits = _allow(**_BITS)


_binary("bitwise_and", _bitwise(np.bitwise_and), dunders=("__and__", "__rand__"),
        differentiable=False, check=_bits, doc="x & y for integer or bool tensors.")
_binary("bitwise_or", _bitwise(np.bitwise_or), dunders=("__or__", "__ror__"),
        differentiable=False, check=_bits, doc="x | y for integer or bool tensors.")
_binary("bitwise_xor", _bitwise(np.bitwise_xor), dunders=("__xor__", "__rxor__"),
        differentiable=False, check=_bits, doc="x ^ y for integer or bool tensors.")


_unary("bitwise_not", _bitwise_not_ref, dunders=("__invert__",), aliases=("bitwise_invert",),
       differentiable=False, check=_bits, doc="~x for integer or bool tensors.")

_shift_check = _allow(**_INTEGRAL)


def _shift_canon(attrs):
    return {"is_arithmetic": bool(attrs["is_arithmetic"])}


_binary("bitwise_left_shift", _left_shift_ref, attrs={"is_arithmetic": True},
        canon=_shift_canon, differentiable=False, check=_shift_check,
        doc="x << y for integer tensors (shifts >= the bit width give 0).")
_binary("bitwise_right_shift", _right_shift_ref, attrs={"is_arithmetic": True},
        canon=_shift_canon, differentiable=False, check=_shift_check,
        doc="x >> y; arithmetic (sign-filling) by default, logical with "
            "is_arithmetic=False.")

