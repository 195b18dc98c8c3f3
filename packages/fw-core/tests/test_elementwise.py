"""Elementwise semantics the generic record tests do not pin down: Paddle's dtype
rules, operators, aliases, in-place variants and edge values."""

import math
import subprocess
import sys

import numpy as np
import pytest

import fw
from fw.core.errors import FwError, InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ops import OPS


def t(data, dtype=None):
    return fw.to_tensor(data, dtype=dtype)


def check(got, want, dtype):
    """Shape, then dtype, then values."""
    want = np.asarray(want)
    assert got.shape == list(want.shape)
    assert got.dtype == dtype, f"{got.dtype} != {dtype}"
    a = got.numpy()
    if got.dtype != fw.bool:
        a = a.astype(np.complex128 if got.dtype.is_complex else np.float64)
    np.testing.assert_allclose(a, want, rtol=1e-6, equal_nan=True)


# ---------------------------------------------------------------- division
def test_integer_division_floors_and_never_warns():
    x = t([7, -7, 7, -7, 5])
    y = t([2, 2, -2, -2, 3])
    check(fw.floor_divide(x, y), [3, -4, -4, 3, 1], fw.int64)
    check(x // y, [3, -4, -4, 3, 1], fw.int64)
    check(fw.remainder(x, y), [1, 1, -1, -1, 2], fw.int64)  # sign of the divisor
    check(x % y, [1, 1, -1, -1, 2], fw.int64)
    # a zero divisor is an error, as in Paddle (see test_input_checks.py)
    with pytest.raises(InvalidArgumentError, match="integer division by zero"):
        x // t([2, 2, -2, -2, 0])
    check(fw.mod(x, 3), [1, 2, 1, 2, 2], fw.int64)
    check(fw.floor_mod(x, -3), [-2, -1, -2, -1, -1], fw.int64)


def test_true_division_of_integers_is_float():
    out = fw.divide(t([1, 2, 3]), t([2, 2, 0]))
    check(out, [0.5, 1.0, np.inf], fw.float32)
    check(t([3], "int32") / 2, [1.5], fw.float32)
    check(1 / t([4], "int64"), [0.25], fw.float32)


def test_float_floor_division_and_remainder():
    x = t([5.5, -5.5, 1.0])
    check(x // 2.0, [2.0, -3.0, 0.5 // 2.0], fw.float32)
    check(x % -2.0, [-0.5, -1.5, -1.0], fw.float32)
    check(fw.remainder(t([1.0]), t([0.0])), [np.nan], fw.float32)
    check(7 // t([2.0]), [3.0], fw.float32)
    check(7.5 % t([2.0]), [1.5], fw.float32)


def test_division_of_bool_is_rejected():
    with pytest.raises(InvalidTypeError, match="floor_divide: 'x' must be .* got bool"):
        fw.floor_divide(t([True]), t([True]))


# ---------------------------------------------------------------- pow
def test_pow_dtypes_follow_weak_scalars():
    i = t([1, 2, 3])
    check(i ** 2, [1, 4, 9], fw.int64)
    check(fw.pow(t([1, 2], "int32"), 3), [1, 8], fw.int32)
    check(i ** 0.5, np.sqrt([1, 2, 3]), fw.float32)
    check(fw.pow(t([4.0], "float64"), 0.5), [2.0], fw.float64)
    check(2 ** t([1.0, 3.0]), [2.0, 8.0], fw.float32)
    check(2 ** t([3]), [8], fw.int64)
    check(t([2.0]) ** t([3], "int32"), [8.0], fw.float32)
    check(fw.pow(t([1.0, 2.0], "float16"), 2), [1.0, 4.0], fw.float16)


def test_integer_pow_with_negative_exponent_truncates():
    x = t([2, 1, -1, -1, 3, 0])
    y = t([-1, -5, -3, -2, 0, 2])
    check(x ** y, [0, 1, -1, 1, 1, 0], fw.int64)


def test_pow_of_bool_is_rejected():
    with pytest.raises(InvalidTypeError, match="pow: .*got bool"):
        fw.pow(t([True]), t([True]))


# ---------------------------------------------------------------- rounding
def test_round_halves_away_from_zero_with_decimals():
    # Paddle's documented example (halves away from zero; NumPy would give -0. and 2.)
    check(fw.round(t([-0.5, -0.2, 0.6, 1.5, 2.5])), [-1.0, -0.0, 1.0, 2.0, 3.0], fw.float32)
    check(fw.round(t([1.25, 1.35], "float64"), decimals=1), [1.3, 1.4], fw.float64)
    check(fw.round(t([1234, -1250, 1249]), decimals=-2), [1200, -1300, 1200], fw.int64)
    assert np.signbit(fw.round(t([-0.4])).numpy()[0])


def test_rounding_keeps_integers_and_low_precision():
    for fn in (fw.floor, fw.ceil, fw.trunc):
        check(fn(t([3, -4], "int32")), [3, -4], fw.int32)
    check(fw.floor(t([1.5, -1.5], "bfloat16")), [1.0, -2.0], fw.bfloat16)
    check(fw.frac(t([1.75, -1.75])), [0.75, -0.75], fw.float32)
    check(fw.frac(t([3])), [0], fw.int64)


# ---------------------------------------------------------------- unary dtypes
def test_abs_of_complex_is_real():
    z = t([3 + 4j, -1j], "complex64")
    check(fw.abs(z), [5.0, 1.0], fw.float32)
    check(abs(t([3 + 4j], "complex128")), [5.0], fw.float64)
    check(abs(t([-2, 3])), [2, 3], fw.int64)


def test_float_math_on_integers_uses_default_float():
    check(fw.exp(t([0, 1])), [1.0, math.e], fw.float32)
    check(fw.sqrt(t([4], "int32")), [2.0], fw.float32)
    check(fw.sigmoid(t([True])), [1 / (1 + math.exp(-1))], fw.float32)
    fw.set_default_dtype("float64")
    try:
        check(fw.log(t([1, 4])), [0.0, math.log(4)], fw.float64)
    finally:
        fw.set_default_dtype("float32")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "pow"])
def test_binary_math_keeps_low_precision(dtype, name):
    x = t([1.5, 2.0, -3.0], dtype)
    y = t([0.5, 4.0, 2.0], dtype)
    out = getattr(fw, name)(x, y)
    assert out.dtype == dtype
    want = getattr(np, {"divide": "true_divide", "pow": "power"}.get(name, name))(
        x.numpy().astype(np.float32), y.numpy().astype(np.float32))
    np.testing.assert_allclose(out.numpy().astype(np.float32), want, rtol=2e-2)
    assert getattr(fw, name)(x, 2.0).dtype == dtype  # a Python number does not upcast


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sin", "tanh", "sigmoid",
                                  "erf", "erfinv", "lgamma", "digamma", "i0e", "abs", "neg",
                                  "square", "reciprocal", "floor", "round", "sign", "stanh",
                                  "logit", "nan_to_num", "scale"])
def test_unary_math_keeps_low_precision(dtype, name):
    x = t([0.25, 0.5, 0.75], dtype)
    out = getattr(fw, name)(x)
    assert out.dtype == dtype
    assert out.shape == [3]


# ---------------------------------------------------------------- comparisons and logic
def test_comparisons_are_bool_and_not_differentiable():
    x = t([1.0, 2.0, 3.0])
    x.stop_gradient = False
    y = t([2.0, 2.0, 2.0])
    for out, want in ((x == y, [0, 1, 0]), (x != y, [1, 0, 1]), (x < y, [1, 0, 0]),
                      (x <= y, [1, 1, 0]), (x > y, [0, 0, 1]), (x >= y, [0, 1, 1]),
                      (x > 1.5, [0, 1, 1]), (2 < x, [0, 0, 1])):
        check(out, np.array(want, bool), fw.bool)
        assert out.stop_gradient
    for name in ("equal", "not_equal", "less_than", "less_equal", "greater_than",
                 "greater_equal", "isnan", "isclose", "logical_and", "bitwise_and"):
        assert not OPS[name].differentiable


def test_short_comparison_aliases():
    x = t([1, 2, 3])
    y = t([1, 3, 2])
    for short, long in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less_than"),
                        ("le", "less_equal"), ("gt", "greater_than"), ("ge", "greater_equal")):
        assert getattr(fw, short) is getattr(fw, long)
        np.testing.assert_array_equal(getattr(x, short)(y).numpy(),
                                      getattr(fw, long)(x, y).numpy())


def test_equality_with_non_tensors_is_identity():
    x = t([1.0])
    assert (x == None) is False  # noqa: E711 - the point of the test
    assert (x != None) is True  # noqa: E711
    assert (x == "a") is False
    assert x in [x]
    check(x == 1.0, [True], fw.bool)
    check(x == [1.0], [True], fw.bool)


def test_comparison_promotes_mixed_inputs():
    check(t([1, 2]) < 1.5, [True, False], fw.bool)
    check(fw.equal(t([1], "int32"), t([1.0], "float64")), [True], fw.bool)


def test_logical_ops_take_any_dtype():
    check(fw.logical_or(t([0.0, 2.0]), t([0, 0])), [False, True], fw.bool)
    check(fw.logical_xor(t([True, True]), t([0.5, 0.0])), [False, True], fw.bool)
    check(fw.logical_not(t([0, 3])), [True, False], fw.bool)


def test_bitwise_ops_and_operators():
    a = t([-5, -1, 1])
    b = t([4, 2, -3])
    check(a & b, [-5 & 4, -1 & 2, 1 & -3], fw.int64)
    check(a | b, [-5 | 4, -1 | 2, 1 | -3], fw.int64)
    check(a ^ b, [-5 ^ 4, -1 ^ 2, 1 ^ -3], fw.int64)
    check(~a, [4, 0, -2], fw.int64)
    check(a.bitwise_invert(), [4, 0, -2], fw.int64)
    check(~t([True, False]), [False, True], fw.bool)
    check(t([True, False]) & t([True, True]), [True, False], fw.bool)
    check(6 & t([3]), [2], fw.int64)
    check(t([1, -8], "int32") << t([3, 1], "int32"), [8, -16], fw.int32)
    check(t([-8], "int32") >> 1, [-4], fw.int32)
    check(fw.bitwise_right_shift(t([-8], "int32"), t([1], "int32"), is_arithmetic=False),
          [(2 ** 32 - 8) >> 1], fw.int32)
    check(fw.bitwise_left_shift(t([1]), t([64])), [0], fw.int64)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor",
                                  "bitwise_left_shift", "gcd", "lcm"])
def test_integer_only_ops_reject_floats(name):
    with pytest.raises(InvalidTypeError, match=f"{name}: 'x' must be .*got float32"):
        getattr(fw, name)(t([1.0]), t([2.0]))
    with pytest.raises(InvalidTypeError, match="got float32"):
        t([1.0]) & t([2.0])
    with pytest.raises(InvalidTypeError, match="bitwise_not"):
        ~t([1.5])


def test_gcd_lcm_values():
    check(fw.gcd(t([12, -18, 0]), t([8, 12, 5])), [4, 6, 5], fw.int64)
    check(fw.lcm(t([4, -6, 0]), t([6, 4, 5])), [12, 12, 0], fw.int64)


# ---------------------------------------------------------------- clip / where / lerp
def test_clip_bounds():
    x = t([-2.0, 0.5, 3.0])
    check(fw.clip(x, -1, 1), [-1.0, 0.5, 1.0], fw.float32)
    check(fw.clip(x, min=0.0), [0.0, 0.5, 3.0], fw.float32)
    check(fw.clip(x, max=t(0.0)), [-2.0, 0.0, 0.0], fw.float32)
    check(fw.clip(x, t([0.0, 1.0, 2.0]), 2.5), [0.0, 1.0, 2.5], fw.float32)
    check(fw.clip(x, 2.0, -2.0), [-2.0, -2.0, -2.0], fw.float32)  # min > max: max wins
    check(fw.clip(t([1, 5]), 2, 3), [2, 3], fw.int64)
    check(fw.clip(t([1, 5]), 1.5, 3), [1.5, 3.0], fw.float32)
    check(fw.clip(t([np.nan])), [np.nan], fw.float32)
    assert fw.clamp is fw.clip
    y = t([5.0, -5.0])
    assert y.clip_(-1, 1) is y
    check(y, [1.0, -1.0], fw.float32)
    y.clamp_(max=0.5)
    check(y, [0.5, -1.0], fw.float32)


def test_where_promotes_x_and_y_only():
    cond = t([True, False, True])
    check(fw.where(cond, t([1, 2, 3]), t([0.5, 0.5, 0.5])), [1.0, 0.5, 3.0], fw.float32)
    check(fw.where(cond, t([1, 2, 3], "int32"), 0), [1, 0, 3], fw.int32)
    check(fw.where(t([1, 0, 2]), 1.0, -1.0), [1.0, -1.0, 1.0], fw.float32)
    check(fw.where(t([[True], [False]]), t([1.0, 2.0]), t(0.0)), [[1.0, 2.0], [0.0, 0.0]],
          fw.float32)
    x = t([0.9383, 3.2])
    check(fw.where(x > 1, x, t([1.0, 1.0])), [1.0, 3.2], fw.float32)
    with pytest.raises(InvalidArgumentError, match="both x and y"):
        fw.where(cond, t([1.0]))


def test_where_with_only_a_condition_is_nonzero():
    cond = t([[True, False], [False, True]])
    if "nonzero" not in OPS:
        with pytest.raises(UnsupportedError, match="nonzero"):
            fw.where(cond)
        return
    rows, cols = fw.where(cond)  # Paddle 3.3.1 gives each as a 1-D [N] tensor (2.x: [N, 1])
    assert rows.shape == [2] and cols.shape == [2]
    assert rows.numpy().reshape(-1).tolist() == [0, 1]
    assert cols.numpy().reshape(-1).tolist() == [0, 1]
    assert rows.dtype == fw.int64


def test_where_inplace_writes_into_x():
    x = t([1.0, 2.0, 3.0])
    out = fw.where_(t([True, False, True]), x, t([0.0, 0.0, 0.0]))
    assert out is x
    check(x, [1.0, 0.0, 3.0], fw.float32)


def test_lerp_with_number_and_tensor_weight():
    x, y = t([0.0, 10.0]), t([10.0, 20.0])
    check(fw.lerp(x, y, 0.5), [5.0, 15.0], fw.float32)
    check(fw.lerp(x, y, t([0.0, 1.0])), [0.0, 20.0], fw.float32)
    check(x.lerp(y, 0.25), [2.5, 12.5], fw.float32)


# ---------------------------------------------------------------- special values
def test_special_functions_match_known_values():
    from scipy import special as sp

    x = t([0.5, 1.0, 2.5], "float64")
    check(fw.erf(x), [math.erf(v) for v in (0.5, 1.0, 2.5)], fw.float64)
    check(fw.erfinv(t([0.0, 0.5, -1.0])), [0.0, 0.4769362762, -np.inf], fw.float32)
    check(fw.lgamma(x), [math.lgamma(v) for v in (0.5, 1.0, 2.5)], fw.float64)
    assert fw.gammaln is fw.lgamma
    check(fw.digamma(t([1.0, 0.0])), [-0.5772156649, -np.inf], fw.float32)
    check(fw.polygamma(t([2.0, 3.0]), 1), [math.pi ** 2 / 6 - 1, math.pi ** 2 / 6 - 1.25],
          fw.float32)
    check(fw.polygamma(t([2.0]), 0), fw.digamma(t([2.0])).numpy(), fw.float32)
    check(fw.gammainc(t([0.5, 0.5]), t([0.0, 1.0])), [0.0, math.erf(1.0)], fw.float32)
    check(fw.gammaincc(t([0.5]), t([1.0])), [1 - math.erf(1.0)], fw.float32)
    v = np.array([0.0, 1.0, 4.0])
    for name in ("i0", "i0e", "i1", "i1e"):
        check(getattr(fw, name)(t(v, "float64")), getattr(sp, name)(v), fw.float64)
    check(fw.sinc(t([0.0, 0.5])), [1.0, 2 / math.pi], fw.float32)


def test_importing_fw_does_not_import_scipy():
    code = ("import sys, fw; x = fw.to_tensor([1.0]); fw.exp(x); fw.abs(x); "
            "assert 'scipy.special' not in sys.modules; fw.erf(x); "
            "assert 'scipy.special' in sys.modules")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_binary_math_values():
    check(fw.atan2(t([-1.0, 1.0]), t([-1.0, -1.0])), [-3 * math.pi / 4, 3 * math.pi / 4],
          fw.float32)
    check(fw.atan2(t([1]), t([1])), [math.pi / 4], fw.float32)
    check(fw.hypot(t([3.0]), t([4.0])), [5.0], fw.float32)
    check(fw.logaddexp(t([1000.0]), t([1000.0])), [1000 + math.log(2)], fw.float32)
    check(fw.copysign(t([2.0, 2.0]), t([-0.0, 1.0])), [-2.0, 2.0], fw.float32)
    check(fw.heaviside(t([-1.0, 0.0, 2.0, np.nan]), t([0.5])), [0.0, 0.5, 1.0, np.nan],
          fw.float32)
    out = fw.nextafter(t([1.0, 2.0]), t([2.0, 1.0]))
    check(out, [np.nextafter(np.float32(1), np.float32(2)),
                np.nextafter(np.float32(2), np.float32(1))], fw.float32)
    check(fw.ldexp(t([1.0, 3.0]), t([2, -1], "int32")), [4.0, 1.5], fw.float32)
    check(fw.ldexp(t([1, 2]), t([3])), [8.0, 16.0], fw.float32)
    with pytest.raises(InvalidTypeError, match="ldexp: 'y' must be an integer"):
        fw.ldexp(t([1.0]), t([1.0]))
    check(fw.fmax(t([1.0, np.nan]), t([np.nan, np.nan])), [1.0, np.nan], fw.float32)
    check(fw.maximum(t([1.0, 3.0]), t([np.nan, 2.0])), [np.nan, 3.0], fw.float32)
    check(fw.fmin(t([1, 5]), t([3, 0])), [1, 0], fw.int64)


def test_frexp_gives_float_exponents():
    m, e = fw.frexp(t([[1.0, 2.0, 3.0, 4.0]]))
    check(m, [[0.5, 0.5, 0.75, 0.5]], fw.float32)
    check(e, [[1.0, 2.0, 2.0, 3.0]], fw.float32)
    m, e = fw.frexp(t([8], "int64"))
    check(e, [4.0], fw.float32)


def test_value_tests():
    x = t([-0.0, np.inf, -2.1, -np.inf, np.nan])
    check(fw.isneginf(x), [False, False, False, True, False], fw.bool)
    check(fw.isposinf(x), [False, True, False, False, False], fw.bool)
    check(fw.isnan(x), [False, False, False, False, True], fw.bool)
    check(fw.isfinite(x), [True, False, True, False, False], fw.bool)
    check(fw.signbit(x), [True, False, True, True, False], fw.bool)
    check(fw.signbit(t([-5, 3], "int32")), [True, False], fw.bool)
    check(fw.isreal(t([1 + 0j, 1j])), [True, False], fw.bool)
    check(fw.isreal(t([1.0])), [True], fw.bool)
    check(fw.isinf(t([1, 2])), [False, False], fw.bool)


def test_isclose_allclose_equal_all():
    x = t([10000.0, 1e-07])
    y = t([10000.1, 1e-08])
    check(fw.isclose(x, y), [True, False], fw.bool)
    n = t([1.0, np.nan])
    check(fw.isclose(n, n), [True, False], fw.bool)
    check(fw.isclose(n, n, equal_nan=True), [True, True], fw.bool)
    check(fw.isclose(t([np.inf, -np.inf]), t([np.inf, np.inf])), [True, False], fw.bool)
    a = fw.allclose(t([1.0, 2.0]), t([1.0, 2.000001]))
    assert a.shape == [] and a.dtype == fw.bool and bool(a)
    assert not bool(fw.allclose(n, n))
    assert bool(fw.equal_all(t([1, 2]), t([1, 2])))
    assert not bool(fw.equal_all(t([1, 2]), t([1, 3])))
    assert not bool(fw.equal_all(t([1, 2]), t([[1, 2]])))  # other shape: not equal


def test_nan_to_num_defaults_and_inplace():
    x = t([np.nan, 0.3, np.inf, -np.inf])
    fmax = float(np.finfo(np.float32).max)
    check(fw.nan_to_num(x), [0.0, 0.3, fmax, -fmax], fw.float32)
    check(fw.nan_to_num(x, nan=10, neginf=-99), [10.0, 0.3, fmax, -99.0], fw.float32)
    check(fw.nan_to_num(t([complex(np.nan, np.inf)])), [complex(0, fmax)], fw.complex64)
    x.nan_to_num_(posinf=5)
    check(x, [0.0, 0.3, 5.0, -fmax], fw.float32)


def test_complex_parts_and_angle():
    z = t([[1 + 6j, -2 - 5j]])
    check(fw.real(z), [[1.0, -2.0]], fw.float32)
    check(z.imag(), [[6.0, -5.0]], fw.float32)
    check(fw.conj(z), [[1 - 6j, -2 + 5j]], fw.complex64)
    check(fw.angle(z), np.angle([[1 + 6j, -2 - 5j]]), fw.float32)
    check(fw.angle(t([-2.0, 0.0, 3.0, np.nan])), [math.pi, 0.0, 0.0, np.nan], fw.float32)
    check(fw.imag(t([1.0])), [0.0], fw.float32)
    check(fw.sgn(t([3 + 4j, 0j])), [0.6 + 0.8j, 0j], fw.complex64)
    check(fw.sgn(t([-2.0, 0.0])), [-1.0, 0.0], fw.float32)
    r = fw.real(z)
    r += 1  # a copy, not a view of z
    assert z.numpy()[0, 0] == 1 + 6j


def test_scale_and_stanh():
    data = fw.arange(6).astype("float32").reshape([2, 3])
    check(fw.scale(data, scale=2.0, bias=1.0), [[1, 3, 5], [7, 9, 11]], fw.float32)
    check(fw.scale(data, scale=t([2.0]), bias=1.0, bias_after_scale=False),
          [[2, 4, 6], [8, 10, 12]], fw.float32)
    check(fw.scale(t([1, 2]), 2.5, 1), [3, 5], fw.int64)  # Paddle casts scale to int
    check(fw.scale(t([0.0]), 1.0, 1.0, act="tanh"), [math.tanh(1.0)], fw.float32)
    # activations that are ops but not fw.<name> functions (values from Paddle 3.3.1)
    check(fw.scale(t([-1.0, 2.0]), scale=2.0, act="relu"), [0.0, 4.0], fw.float32)
    with pytest.raises(UnsupportedError, match="unknown activation"):
        fw.scale(t([1.0]), act="nope")
    check(fw.stanh(t([1.0]), scale_a=0.67, scale_b=1.72), [1.72 * math.tanh(0.67)],
          fw.float32)
    check(fw.logit(t([0.0, 0.5]), eps=0.25), [math.log(1 / 3), 0.0], fw.float32)


def test_positive_negative_and_unary_operators():
    x = t([-1, 0, 1])
    check(fw.positive(x), [-1, 0, 1], fw.int64)
    check(+x, [-1, 0, 1], fw.int64)
    check(-x, [1, 0, -1], fw.int64)
    check(fw.negative(x), [1, 0, -1], fw.int64)
    with pytest.raises(InvalidTypeError, match="positive: .*got bool"):
        fw.positive(t([True]))
    with pytest.raises(FwError):
        -t([True])


# ---------------------------------------------------------------- fast paths and in-place
def test_scalar_fast_paths_match_the_general_path():
    x = t([0.5, 1.5, -2.0])
    for name in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow",
                 "maximum", "minimum", "atan2", "hypot", "copysign", "heaviside",
                 "gammainc", "less_than", "equal"):
        fn = getattr(fw, name)
        a = fn(x, 2.0)
        b = fn(x, t([2.0]))
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


@pytest.mark.parametrize("name", ["exp_", "sqrt_", "tanh_", "floor_", "round_", "abs_",
                                  "erfinv_", "sigmoid_", "square_"])
def test_unary_inplace_variants(name):
    x = t([0.25, 0.5])
    want = getattr(fw, name[:-1])(x).numpy()
    assert getattr(x, name)() is x
    np.testing.assert_allclose(x.numpy(), want)


@pytest.mark.parametrize("name", ["add_", "subtract_", "multiply_", "divide_", "pow_",
                                  "remainder_", "mod_", "floor_mod_", "floor_divide_",
                                  "hypot_", "lerp_", "less_than_", "logical_and_"])
def test_binary_inplace_variants(name):
    x = t([3.0, 4.0])
    args = (t([2.0, 2.0]),) + ((0.5,) if name == "lerp_" else ())
    base = name[:-1] if name not in ("mod_", "floor_mod_") else "remainder"
    want = getattr(fw, base)(x, *args).numpy().astype(np.float32)
    assert getattr(fw, name)(x, *args) is x
    np.testing.assert_allclose(x.numpy(), want)


def test_bitwise_invert_inplace_and_ints():
    x = t([-5, -1, 1])
    x.bitwise_invert_()
    assert x.tolist() == [4, 0, -2]


# ---------------------------------------------------------------- programs
def test_attribute_ops_build_print_parse_and_run():
    from fw.core.ir import TensorType, parse, run, trace
    from fw.core.ir.printer import print_program

    def fn(x, i):
        a = fw.clip(fw.nan_to_num(x, neginf=-1.0), max=2.0)
        b = fw.round(a, decimals=1)
        c = fw.where(fw.isclose(b, a, rtol=1e-3, equal_nan=True), b, 0.0)
        d = fw.bitwise_right_shift(i, i, is_arithmetic=False) + (i << 1)
        m, e = fw.frexp(x)
        return c, d, m + e, fw.polygamma(x, 2), fw.scale(x, 2.0, 1.0), fw.logit(x, eps=0.1)

    prog = trace(fn, [TensorType([-1, 3], "float32"), TensorType([-1], "int32")])
    text = print_program(prog)
    assert "nan_to_num(%arg0) {nan=0.0, posinf=none, neginf=-1.0}" in text
    assert print_program(parse(text)) == text
    x = t(np.array([[np.nan, 1.26, np.inf], [0.5, -3.0, 0.25]], np.float32))
    i = t([1, 2, -8], "int32")
    for got, want in zip(run(prog, x, i), fn(x, i)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())
