"""Records for elementwise ops."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import (
    ALL_NUMERIC,
    COMPLEX,
    FLOATS,
    FLOATS_LOW,
    INTS,
    Sample,
    arrays,
    broadcast_pair,
    record,
    shapes,
)

BOOL = (_dt.bool_,)
SMALL_INTS = (_dt.int8, _dt.uint8, _dt.int16)
FLOATS_ALL = FLOATS + FLOATS_LOW
F32 = np.float32


def binary(lo=-3.0, hi=3.0, special=False, y_lo=None, y_hi=None, attrs=None):
    def sample(draw, dtype):
        sx, sy = broadcast_pair(draw)
        return Sample([arrays(draw, dtype, sx, lo, hi, special),
                       arrays(draw, dtype, sy, y_lo if y_lo is not None else lo,
                              y_hi if y_hi is not None else hi, special)],
                      dict(attrs(draw) if callable(attrs) else (attrs or {})))
    return sample


def unary(lo=-3.0, hi=3.0, special=False, attrs=None):
    def sample(draw, dtype):
        return Sample([arrays(draw, dtype, shapes(draw), lo, hi, special)],
                      dict(attrs(draw) if callable(attrs) else (attrs or {})))
    return sample


def bad_broadcast(dtype=F32):
    return ([np.ones((2, 3), dtype), np.ones((4, 3), dtype)], {}, InvalidArgumentError,
            "cannot broadcast")


BAD_BROADCAST = bad_broadcast()
INT_BAD_BROADCAST = bad_broadcast(np.int32)
FLOAT_PAIR = [np.ones(2, F32), np.ones(2, F32)]
BOOL_PAIR = [np.array([True, False]), np.array([True, True])]
COMPLEX_PAIR = [np.ones(2, np.complex64), np.ones(2, np.complex64)]


def scalar_or_array(draw, dtype, shape, lo=-3.0, hi=3.0):
    """A Python number where the generic infer check can type it (the record tests
    type a number by its own default dtype, while dispatch treats it as weak), else
    an array of `dtype`."""
    if draw(st.booleans()):
        if dtype in (_dt.float32, _dt.float64):
            return draw(st.floats(lo, hi))
        if dtype is _dt.int64:
            return draw(st.integers(int(lo), int(hi)))
    return arrays(draw, dtype, shape, lo, hi)


def _bad(args, pattern, exc=InvalidTypeError, attrs=None):
    return (args, attrs or {}, exc, pattern)


# ---------------------------------------------------------------- arithmetic
record("add", binary(special=True), dtypes=ALL_NUMERIC + (_dt.float16,), grad_order=2,
       errors=[BAD_BROADCAST])
record("subtract", binary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX,
       grad_order=2, errors=[BAD_BROADCAST])
record("multiply", binary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX + BOOL,
       grad_order=2, errors=[BAD_BROADCAST])
record("divide", binary(y_lo=0.5, y_hi=3.0), dtypes=FLOATS, grad_order=2,
       errors=[BAD_BROADCAST])
# integers divide in the default float dtype; a zero divisor gives inf/nan
record("divide", binary(-5, 5), dtypes=INTS + FLOATS_LOW + COMPLEX, grad_order=0)

_INT_DIV = ALL_NUMERIC + SMALL_INTS + FLOATS_LOW


def _int_div(special=False):
    """x // y and x % y samples: integer divisors are nonzero (an integer division by
    zero is an error, see _INT_BY_ZERO); float divisors may be 0 (inf/nan)."""
    base = binary(-6, 6, y_lo=-3, y_hi=3, special=special)

    def sample(draw, dtype):
        s = base(draw, dtype)
        x, y = s.args
        if y.dtype.kind in "iu":
            y = np.where(y == 0, np.ones((), y.dtype), y)
        return Sample([x, y], s.attrs)

    return sample


_INT_BY_ZERO = ([np.array([5, -7, 3], np.int32), np.array([1, 0, 2], np.int32)], {},
                InvalidArgumentError, "integer division by zero")
record("floor_divide", _int_div(), dtypes=_INT_DIV, grad_order=0,
       errors=[BAD_BROADCAST, _bad(BOOL_PAIR, "must be an integer or floating tensor"),
               _bad(COMPLEX_PAIR, "got complex64"), _INT_BY_ZERO],
       note="float division by zero gives inf/nan")
record("remainder", _int_div(special=True), dtypes=_INT_DIV,
       grad_order=1, errors=[BAD_BROADCAST, _bad(BOOL_PAIR, "got bool"), _INT_BY_ZERO])


def _pow_sample(draw, dtype):
    sx, sy = broadcast_pair(draw)
    if dtype.kind == _dt._INT:
        lo = 0 if dtype is _dt.uint8 else -3
        return Sample([arrays(draw, dtype, sx, lo, 3), arrays(draw, dtype, sy, lo, 3)])
    if dtype.kind == _dt._COMPLEX:
        return Sample([arrays(draw, dtype, sx, -2, 2), arrays(draw, dtype, sy, -1, 1)])
    return Sample([arrays(draw, dtype, sx, 0.5, 3.0), arrays(draw, dtype, sy, -2.0, 2.0)])


record("pow", _pow_sample, dtypes=ALL_NUMERIC + SMALL_INTS + FLOATS_LOW + COMPLEX,
       grad_order=2, grad_dtypes=(_dt.float64,),
       errors=[BAD_BROADCAST, _bad(BOOL_PAIR, "must not|got bool")],
       note="integer samples include negative exponents (truncating, like C's pow)")

for _n in ("maximum", "minimum"):
    record(_n, binary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + BOOL, grad_order=1,
           errors=[BAD_BROADCAST])
for _n in ("fmax", "fmin"):
    record(_n, binary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=1,
           errors=[BAD_BROADCAST, _bad(COMPLEX_PAIR, "got complex64")])

_REAL_MATH = FLOATS_ALL + INTS
record("atan2", binary(special=True), dtypes=_REAL_MATH, grad_order=2,
       errors=[BAD_BROADCAST, _bad(COMPLEX_PAIR, "got complex64")])
record("hypot", binary(special=True), dtypes=_REAL_MATH, grad_order=2, errors=[BAD_BROADCAST])
record("logaddexp", binary(-30, 30, special=True), dtypes=_REAL_MATH, grad_order=2,
       errors=[BAD_BROADCAST])
record("copysign", binary(special=True), dtypes=_REAL_MATH, grad_order=1,
       errors=[BAD_BROADCAST])
record("nextafter", binary(special=True), dtypes=_REAL_MATH, grad_order=0,
       errors=[BAD_BROADCAST, _bad(COMPLEX_PAIR, "got complex64")])


def _heaviside_sample(draw, dtype):
    sx, sy = broadcast_pair(draw)
    x = arrays(draw, dtype, sx, -2, 2, special=True)
    if x.size and draw(st.booleans()):
        x.reshape(-1)[0] = 0  # the x == 0 branch takes y
    return Sample([x, arrays(draw, dtype, sy, -2, 2)])


record("heaviside", _heaviside_sample, dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=0,
       errors=[BAD_BROADCAST, _bad(BOOL_PAIR, "got bool")])
for _n in ("gcd", "lcm"):
    record(_n, binary(-20, 20), dtypes=INTS + SMALL_INTS, grad_order=0,
           errors=[INT_BAD_BROADCAST,
                   _bad(FLOAT_PAIR, "must be an integer tensor, got float32")])


def _ldexp_sample(draw, dtype):
    sx, sy = broadcast_pair(draw)
    yd = draw(st.sampled_from([_dt.int32, _dt.int64]))
    return Sample([arrays(draw, dtype, sx, -3, 3, special=True), arrays(draw, yd, sy, -8, 8)])


record("ldexp", _ldexp_sample, dtypes=_REAL_MATH, grad_order=1,
       errors=[_bad(FLOAT_PAIR, "'y' must be an integer tensor"),
               ([np.ones((2, 3), F32), np.ones((4, 3), np.int32)], {}, InvalidArgumentError,
                "cannot broadcast")])


def _lerp_sample(draw, dtype):
    a, b, c = broadcast_pair(draw, num=3)
    w = scalar_or_array(draw, dtype, c, 0, 1)
    return Sample([arrays(draw, dtype, a), arrays(draw, dtype, b), w])


record("lerp", _lerp_sample, dtypes=FLOATS_ALL, grad_order=2,
       errors=[([np.ones((2, 3), F32), np.ones((4, 3), F32), 0.5], {}, InvalidArgumentError,
                "cannot broadcast")])


def _where_sample(draw, dtype):
    a, b, c = broadcast_pair(draw, num=3)
    cond = arrays(draw, _dt.bool_, a)
    if draw(st.integers(0, 3)) == 0:
        cond = cond.astype(np.int32)  # nonzero means true
    x = arrays(draw, dtype, b, special=True)
    y = scalar_or_array(draw, dtype, c)
    return Sample([cond, x, y])


record("where", _where_sample, dtypes=ALL_NUMERIC + FLOATS_LOW + BOOL, grad_order=1,
       errors=[([np.ones((2, 3), bool), np.ones((4, 3), F32), 1.0], {}, InvalidArgumentError,
                "cannot broadcast")])


def _clip_sample(draw, dtype):
    shape = shapes(draw)

    def bound(lo, hi):
        kind = draw(st.sampled_from(["none", "number", "tensor"]))
        if kind == "none":
            return None
        if kind == "number":
            return scalar_or_array(draw, dtype, (), lo, hi)
        return arrays(draw, dtype, shape[-1:] if shape and draw(st.booleans()) else (), lo, hi)

    # the upper bound may fall below the lower one: then every element becomes max
    return Sample([arrays(draw, dtype, shape, -3, 3, special=True), bound(-2, 0), bound(-1, 2)])


record("clip", _clip_sample, dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=1,
       errors=[_bad([np.ones(2, np.complex64), 0.0, 1.0], "got complex64"),
               _bad([np.array([True]), False, True], "got bool")])

# ---------------------------------------------------------------- unary math
record("neg", unary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX, grad_order=2,
       errors=[_bad([[True, False]], "got bool")])
record("positive", unary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX,
       grad_order=1, errors=[_bad([[True, False]], "got bool")])
record("abs", unary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX + SMALL_INTS,
       grad_order=1)
record("sign", unary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=1,
       errors=[_bad([[1 + 1j]], "got complex")])
record("sgn", unary(special=True), dtypes=ALL_NUMERIC + COMPLEX, grad_order=1)


def _signed_zeros(draw, dtype):
    x = arrays(draw, dtype, shapes(draw), special=True)
    if x.size and dtype.kind == _dt._FLOAT:
        x.reshape(-1)[0] = -0.0
    return Sample([x])


record("signbit", _signed_zeros, dtypes=ALL_NUMERIC + FLOATS_LOW + BOOL + (_dt.uint8,),
       grad_order=0, errors=[_bad([[1 + 1j]], "got complex")])
record("square", unary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX, grad_order=2,
       errors=[_bad([[True]], "got bool")])

_FLOAT_MATH = FLOATS_ALL + INTS + BOOL
_DOMAINS = {
    "exp": (-3, 3), "expm1": (-3, 3), "exp2": (-3, 3), "log": (0.1, 5), "log2": (0.1, 5),
    "log10": (0.1, 5), "log1p": (-0.5, 5), "sqrt": (0.1, 5), "rsqrt": (0.2, 5),
    "reciprocal": (0.5, 3), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
    "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-3, 3),
    "cosh": (-3, 3), "tanh": (-3, 3), "asinh": (-3, 3), "acosh": (1.1, 5),
    "atanh": (-0.9, 0.9), "sigmoid": (-6, 6),
}
for _n, (_lo, _hi) in _DOMAINS.items():
    record(_n, unary(_lo, _hi), dtypes=FLOATS_ALL, grad_order=2)
    # out-of-domain values, NaN/Inf, integer and complex input (promoted/complex math)
    record(_n, unary(-4, 4, special=True), dtypes=INTS + BOOL + COMPLEX, grad_order=0)

for _n in ("deg2rad", "rad2deg"):
    record(_n, unary(special=True), dtypes=FLOATS_ALL + INTS, grad_order=1,
           errors=[_bad([[1 + 1j]], "got complex")])
record("sinc", unary(special=True), dtypes=FLOATS_ALL + INTS, grad_order=2)


def _with_integers(draw, dtype):
    x = arrays(draw, dtype, shapes(draw), -4, 4, special=True)
    if x.size and dtype.kind == _dt._FLOAT and draw(st.booleans()):
        ties = [-2.5, -0.5, 0.5, 1.5, 2.0, -0.0]  # exact halves, an integer, a signed zero
        flat = x.reshape(-1)
        k = min(flat.size, len(ties))
        flat[:k] = ties[:k]
    return Sample([x])


for _n in ("floor", "ceil", "trunc", "frac"):
    record(_n, _with_integers, dtypes=ALL_NUMERIC + FLOATS_LOW + SMALL_INTS, grad_order=1,
           errors=[_bad([[1 + 1j]], "got complex")])


def _round_sample(draw, dtype):
    s = _with_integers(draw, dtype)
    s.attrs = {"decimals": draw(st.sampled_from([0, 0, 1, 2, -1]))}
    return s


record("round", _round_sample, dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX, grad_order=1,
       errors=[([[1.5]], {"decimals": 0.5}, InvalidTypeError, "'decimals' must be an int")])

_SPECIAL_DOMAINS = {
    "erf": (-3, 3), "erfinv": (-0.95, 0.95), "digamma": (0.2, 5), "lgamma": (0.2, 5),
    "i0": (-3, 3), "i0e": (-3, 3), "i1": (-3, 3), "i1e": (-3, 3),
}
for _n, (_lo, _hi) in _SPECIAL_DOMAINS.items():
    record(_n, unary(_lo, _hi), dtypes=FLOATS_ALL, grad_order=1)
    record(_n, unary(-4, 4, special=True), dtypes=INTS, grad_order=0,
           errors=[_bad([[1 + 1j]], "got complex")])


def _polygamma_sample(draw, dtype):
    lo = 0.2 if dtype.kind == _dt._FLOAT else 1
    return Sample([arrays(draw, dtype, shapes(draw), lo, 5)], {"n": draw(st.integers(0, 3))})


record("polygamma", _polygamma_sample, dtypes=FLOATS_ALL + INTS, grad_order=1,
       errors=[([[1.0]], {"n": -1}, InvalidArgumentError, "'n' must be >= 0"),
               ([[1.0]], {"n": 1.5}, InvalidTypeError, "'n' must be a non-negative int")])
for _n in ("gammainc", "gammaincc"):
    record(_n, binary(0.1, 5), dtypes=FLOATS_ALL, grad_order=1, errors=[BAD_BROADCAST])
    record(_n, binary(-1, 5, special=True), dtypes=INTS, grad_order=0,
           errors=[_bad(COMPLEX_PAIR, "got complex64")])
record("logit", unary(0.05, 0.95, attrs=lambda d: {"eps": d(st.sampled_from([None, 0.1]))}),
       dtypes=FLOATS_ALL, grad_order=1)
record("logit", unary(-1, 2, special=True, attrs={"eps": None}), dtypes=FLOATS + INTS,
       grad_order=0, errors=[_bad([[1 + 1j]], "got complex", attrs={"eps": None})])
record("stanh", unary(special=True, attrs=lambda d: {"scale_a": d(st.floats(-2, 2)),
                                                     "scale_b": d(st.floats(-2, 2))}),
       dtypes=FLOATS_ALL + INTS, grad_order=2)


def _nan_to_num_sample(draw, dtype):
    x = arrays(draw, dtype, shapes(draw), special=True)
    if x.size >= 3 and dtype.kind >= _dt._FLOAT:
        x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    opt = st.sampled_from([None, 5.0, -7.5])
    return Sample([x], {"nan": draw(st.sampled_from([0.0, 1.0, -2.5])), "posinf": draw(opt),
                        "neginf": draw(opt)})


record("nan_to_num", _nan_to_num_sample, dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX,
       grad_order=1, errors=[_bad([[True]], "got bool")])
record("frexp", unary(-100, 100, special=True), dtypes=FLOATS_ALL + INTS, grad_order=0,
       errors=[_bad([[1 + 1j]], "got complex")])


def _scale_sample(draw, dtype):
    return Sample([arrays(draw, dtype, shapes(draw), special=True)],
                  {"scale": draw(st.sampled_from([2.0, -0.5, 3])),
                   "bias": draw(st.sampled_from([0.0, 1.0, -2])),
                   "bias_after_scale": draw(st.booleans())})


record("scale", _scale_sample, dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX, grad_order=2,
       errors=[([[True]], {}, InvalidTypeError, "got bool"),
               ([[1.0]], {"scale": np.ones(2)}, InvalidArgumentError, "one element")])

# ---------------------------------------------------------------- comparisons and tests
_COMPARED = ALL_NUMERIC + FLOATS_LOW + BOOL + SMALL_INTS
for _n in ("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal"):
    record(_n, binary(-2, 2, special=True), dtypes=_COMPARED, grad_order=0,
           errors=[BAD_BROADCAST])


def _close_sample(draw, dtype):
    sx, sy = broadcast_pair(draw)
    x = arrays(draw, dtype, sx, -2, 2, special=True)
    y = arrays(draw, dtype, sy, -2, 2, special=True)
    if draw(st.booleans()):  # near-equal values exercise the tolerances
        y = (np.broadcast_to(x, np.broadcast_shapes(sx, sy)) * 1.000001).astype(x.dtype)
    return Sample([x, y], {"rtol": draw(st.sampled_from([1e-5, 1e-3])),
                           "atol": draw(st.sampled_from([1e-8, 1e-2])),
                           "equal_nan": draw(st.booleans())})


for _n in ("isclose", "allclose"):
    record(_n, _close_sample, dtypes=ALL_NUMERIC + FLOATS_LOW + COMPLEX, grad_order=0,
           errors=[BAD_BROADCAST, _bad(BOOL_PAIR, "got bool")])


def _equal_all_sample(draw, dtype):
    sx, sy = broadcast_pair(draw)
    x = arrays(draw, dtype, sx, -1, 1)
    y = x.copy() if draw(st.booleans()) else arrays(draw, dtype, sy, -1, 1)
    return Sample([x, y])


record("equal_all", _equal_all_sample, dtypes=ALL_NUMERIC + BOOL + FLOATS_LOW, grad_order=0)

for _n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
    record(_n, unary(special=True), dtypes=ALL_NUMERIC + FLOATS_LOW + BOOL, grad_order=0)
for _n in ("isnan", "isinf", "isfinite", "isreal"):
    record(_n, unary(special=True), dtypes=COMPLEX + FLOATS, grad_order=0)
for _n in ("isposinf", "isneginf"):
    record(_n, unary(), dtypes=INTS, grad_order=0, errors=[_bad([[1 + 1j]], "got complex")])

# ---------------------------------------------------------------- complex parts
for _n in ("real", "imag", "conj"):
    record(_n, unary(special=True), dtypes=COMPLEX + ALL_NUMERIC + FLOATS_LOW, grad_order=1)
record("angle", unary(special=True), dtypes=COMPLEX + FLOATS_ALL + INTS, grad_order=1)

# ---------------------------------------------------------------- logic and bits
_LOGICAL = BOOL + ALL_NUMERIC + FLOATS_LOW
for _n in ("logical_and", "logical_or", "logical_xor"):
    record(_n, binary(-1, 1, special=True), dtypes=_LOGICAL, grad_order=0,
           errors=[BAD_BROADCAST])
record("logical_not", unary(-1, 1, special=True), dtypes=_LOGICAL + COMPLEX, grad_order=0)

_BITS = BOOL + INTS + SMALL_INTS
for _n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    record(_n, binary(-100, 100), dtypes=_BITS, grad_order=0,
           errors=[INT_BAD_BROADCAST,
                   _bad(FLOAT_PAIR, "must be a bool or integer tensor, got float32")])
record("bitwise_not", unary(-100, 100), dtypes=_BITS, grad_order=0,
       errors=[_bad([[1.5]], "must be a bool or integer tensor")])


def _shift_sample(draw, dtype):
    sx, sy = broadcast_pair(draw)
    bits = np.dtype(dtype.np).itemsize * 8
    return Sample([arrays(draw, dtype, sx, -100, 100), arrays(draw, dtype, sy, 0, bits + 2)],
                  {"is_arithmetic": draw(st.booleans())})


for _n in ("bitwise_left_shift", "bitwise_right_shift"):
    record(_n, _shift_sample, dtypes=INTS + SMALL_INTS, grad_order=0,
           errors=[INT_BAD_BROADCAST, _bad(FLOAT_PAIR, "must be an integer tensor"),
                   _bad(BOOL_PAIR, "got bool")])
