"""NumPy reference kernels of the elementwise ops that NumPy has no ufunc for
(fw.core.ops.elementwise): integer pow, heaviside, ldexp, clip, sgn, rounding, the
scipy.special wrappers, nan_to_num, isclose, the value tests, complex parts, bitwise
shifts. The ops themselves, their dtype checks and infer rules are declared in
elementwise.py, whose family they keep.
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ops._xp import xp_of

_BY_NP = _dt._BY_NP


_BOOL, _INT, _FLOAT, _COMPLEX = _dt._BOOL, _dt._INT, _dt._FLOAT, _dt._COMPLEX


_F16_BF16 = (np.dtype(np.float16), _dt.bfloat16.np)


def _kind(a) -> int:
    """fw kind (bool/int/float/complex) of an array or NumPy scalar; bfloat16 is a float
    although NumPy reports kind 'V' for it."""
    return (_BY_NP.get(a.dtype) or _dt.from_numpy(a.dtype)).kind


def _check(check, *arrays, names=("x", "y", "z")):
    """Run a dtype check on kernel arguments that are arrays (Python scalars of the
    fast path are skipped; they follow the tensor's dtype)."""
    for a, n in zip(arrays, names):
        d = getattr(a, "dtype", None)
        if d is not None:
            check(_BY_NP.get(d) or _dt.from_numpy(d), n)


def _int_divide(ufunc, check):
    """The kernel of floor_divide/remainder: `ufunc` behind the dtype `check` (as
    `elementwise._checked` puts it), refusing an integer zero divisor as Paddle does
    ("Integer division by zero"; NumPy would give 0). Float inputs take the same two
    dtype tests as any checked kernel and keep IEEE inf/nan; only integer inputs, off
    that lane, scan y for zeros. x is an array; y an array of x's dtype or a Python
    number following it. ``__wrapped__`` lets the executor pass ``out=`` on."""
    ok = frozenset(d for d in check.np_ok if d.kind in "fc")

    def kernel(x, y, **kw):  # kw: out= from the executor's buffer reuse
        if x.dtype not in ok or getattr(y, "dtype", x.dtype) not in ok:
            _check(check, x, y)
            if x.dtype.kind in "iu" and not np.all(y):
                raise InvalidArgumentError(f"integer division by zero: 'y' holds 0 (integer "
                                           f"{ufunc.__name__} has no value there; float "
                                           f"inputs give inf/nan)")
        return ufunc(x, y, **kw)

    kernel.__name__ = ufunc.__name__
    kernel.__wrapped__ = ufunc
    kernel.checks_dtype = True
    return kernel


def _pow_ref(x, y):
    if x.dtype.kind == "i":
        neg = y < 0
        if np.any(neg):
            # C's pow cast back to an integer: |x| > 1 gives 0, x == ±1 stays ±1
            r = np.power(x, np.where(neg, 0, y).astype(x.dtype))
            one = x.dtype.type(1)
            odd = np.remainder(y, 2) == 1
            alt = np.where(x == 1, one, np.where(x == -1, np.where(odd, -one, one),
                                                  x.dtype.type(0)))
            return np.where(neg, alt, r).astype(x.dtype, copy=False)
    return np.power(x, y)


def _heaviside_ref(x, y):
    t = x.dtype.type
    out = np.where(x > 0, t(1), np.where(x < 0, t(0), y)).astype(x.dtype, copy=False)
    if _kind(x) == _FLOAT:
        out = np.where(np.isnan(x), x, out)
    return out


def _lerp_ref(x, y, weight):
    return x + weight * (y - x)


def _where_ref(condition, x, y):
    c = condition if condition.dtype == np.bool_ else condition.astype(np.bool_)
    return np.where(c, x, y)


def _sgn_ref(x):
    if _kind(x) != _COMPLEX:
        return np.sign(x)
    a = np.abs(x)
    safe = np.where(a == 0, a.dtype.type(1), a)
    return np.where(a == 0, x.dtype.type(0), x / safe)


def _signbit_ref(x):
    if _kind(x) == _FLOAT:
        if type(x) is np.ndarray or isinstance(x, np.generic):
            return np.signbit(x)
        # the sign bit itself, as NumPy reads it (of NaN too): a device's signbit may
        # canonicalise NaN first (CuPy's did, on an H200)
        return x.view(np.dtype(f"i{x.dtype.itemsize}")) < 0
    return x < 0


def _rsqrt_ref(x):
    return np.reciprocal(np.sqrt(x))


def _sigmoid_ref(x):
    return 1 / (1 + np.exp(-x))


def _sinc_ref(x):
    px = np.pi * np.where(x == 0, x.dtype.type(1), x)
    return np.where(x == 0, x.dtype.type(1), np.sin(px) / px).astype(x.dtype, copy=False)


def _integral_passthrough(fn):
    def ref(x):
        if _kind(x) <= _INT:  # already integral: NumPy would give float64
            return x.copy()
        return fn(x)

    ref.__name__ = fn.__name__
    return ref


def _frac_ref(x):
    if _kind(x) <= _INT:
        return np.zeros_like(x)
    return x - np.trunc(x)


def _round_half_away(x):
    """x rounded to integers, halves away from zero (C's round, which Paddle's kernel
    uses; NumPy's round goes to even). x - trunc(x) is exact, so there is no 0.5
    + 0.49999999999999994 == 1.0 trap; the sign of zero is kept (-0.2 -> -0.0)."""
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):  # inf - inf: the inf stays (the test is False)
        away = np.abs(x - t) >= 0.5
    return np.where(away, t + np.sign(x), t)


def _round_ref(x, decimals=0):
    """Paddle's round: halves away from zero (its documented example is
    round([-0.5, -0.2, 0.6, 1.5]) == [-1, -0, 1, 2]); `decimals` scales by 10**decimals
    first, and a negative `decimals` rounds integers to tens, hundreds, ..."""
    k = _kind(x)
    if k == _BOOL or (k == _INT and decimals >= 0):
        return x.copy()
    if k == _COMPLEX:
        return (_round_ref(x.real, decimals) + 1j * _round_ref(x.imag, decimals)).astype(x.dtype)
    if k == _INT:  # exact in integers: |x| to a multiple of p, halves up, sign back
        p = 10 ** (-decimals)
        q, r = np.divmod(np.abs(x), p)
        return (np.sign(x) * (q + (2 * r >= p)) * p).astype(x.dtype)
    y = x.astype(np.float32) if x.dtype.itemsize < 4 else x  # float16/bfloat16
    if decimals:
        f = 10.0 ** decimals
        out = _round_half_away(y * f) / f
    else:
        out = _round_half_away(y)
    return out.astype(x.dtype, copy=False)


_SP = []


def _special(x):
    """scipy.special (imported on first use), or the device's (CuPy's for GPU arrays)."""
    if type(x) is not np.ndarray and not isinstance(x, np.generic):
        from fw.core import place as _pl

        return _pl.backend_of(x).special()
    if not _SP:
        from fw.core._epilogue import scipy_special

        sp = scipy_special()
        if sp is None:
            raise ModuleNotFoundError(
                "this special function needs SciPy, an optional dependency of fw-core: "
                "pip install 'fw-core[special]' (fw-nn installs it; erf and GELU work "
                "without it)", name="scipy")
        _SP.append(sp)
    return _SP[0]


def _compute_dtype(x):
    # SciPy has float32/float64 loops; float16/bfloat16 compute in float32
    return np.float32 if x.dtype in _F16_BF16 else x.dtype


def _erf_ref(x):
    from fw.core._epilogue import erf

    d = x.dtype
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return np.asarray(erf(x.astype(_compute_dtype(x), copy=False))).astype(d, copy=False)
    return _special(x).erf(x).astype(d, copy=False)  # pragma: no cover - gpu


def _scipy_unary(fname):
    if fname == "erf":  # erf has a SciPy-free path (GELU in a deployment without SciPy)
        return _erf_ref

    def ref(x):
        d = x.dtype
        r = getattr(_special(x), fname)(x.astype(_compute_dtype(x), copy=False))
        return r.astype(d, copy=False)

    ref.__name__ = f"_{fname}_ref"
    return ref


def _polygamma_ref(x, n=0):
    sp = _special(x)
    xc = x.astype(_compute_dtype(x), copy=False)
    # n as an array: CuPy's polygamma broadcasts it (a Python int breaks it)
    r = sp.psi(xc) if n == 0 else sp.polygamma(xp_of(xc).asarray(n), xc)
    return r.astype(x.dtype, copy=False)


def _scipy_binary(fname):
    def ref(x, y):
        c = np.dtype(_compute_dtype(x))
        yc = y.astype(c, copy=False) if hasattr(y, "astype") else c.type(y)
        return getattr(_special(x), fname)(x.astype(c, copy=False), yc).astype(x.dtype,
                                                                              copy=False)

    ref.__name__ = f"_{fname}_ref"
    return ref


def _logit_ref(x, eps=None):
    d = x.dtype
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    # Python floats do not keep bfloat16 (ml_dtypes promotes to float32): round back
    return np.log(x / (1 - x)).astype(d, copy=False)


def _stanh_ref(x, scale_a=0.67, scale_b=1.7159):
    return (scale_b * np.tanh(scale_a * x)).astype(x.dtype, copy=False)


def _finfo(dt):
    import ml_dtypes

    return ml_dtypes.finfo(dt) if dt == _dt.bfloat16.np else np.finfo(dt)


def _nan_to_num_ref(x, nan=0.0, posinf=None, neginf=None):
    k = _kind(x)
    if k <= _INT:
        return x.copy()
    if k == _COMPLEX:
        out = x.copy()
        out.real = _nan_to_num_ref(x.real, nan, posinf, neginf)
        out.imag = _nan_to_num_ref(x.imag, nan, posinf, neginf)
        return out
    t = x.dtype.type
    info = _finfo(x.dtype)
    hi = t(info.max if posinf is None else posinf)
    lo = t(info.min if neginf is None else neginf)
    inf = np.isinf(x)
    out = np.where(np.isnan(x), t(nan), x)
    out = np.where(inf & (x > 0), hi, out)
    return np.where(inf & (x < 0), lo, out)


def _isclose_ref(x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    # compare in double precision so that tolerances below float16/32 resolution
    # behave the same for every input dtype
    w = np.complex128 if _kind(x) == _COMPLEX else np.float64
    a = x.astype(w)
    b = y.astype(w)
    finite = np.isfinite(a) & np.isfinite(b)
    close = np.abs(a - b) <= atol + rtol * np.abs(b)
    out = np.where(finite, close, a == b)
    if equal_nan:
        out = out | (np.isnan(a) & np.isnan(b))
    return out


def _equal_all_ref(x, y):
    if np.shape(x) != np.shape(y):  # Paddle: different shapes are simply not equal
        return xp_of(x).zeros((), dtype=np.bool_)  # (CuPy reads shape=() as "x's shape")
    return (x == y).all()


def _not_float_false(fn):
    def ref(x):
        if _kind(x) <= _INT:
            return np.zeros(np.shape(x), dtype=np.bool_) if isinstance(x, np.generic) \
                else np.zeros_like(x, order="C", dtype=np.bool_)
        return fn(x)

    return ref


def _isfinite_ref(x):
    if _kind(x) <= _INT:
        return np.ones_like(x, order="C", dtype=np.bool_)
    return np.isfinite(x)


def _isposinf_ref(x):
    return np.isinf(x) & (x > 0)


def _isneginf_ref(x):
    return np.isinf(x) & (x < 0)


def _isreal_ref(x):
    if _kind(x) == _COMPLEX:
        return x.imag == 0
    return np.ones_like(x, order="C", dtype=np.bool_)


def _real_ref(x):
    return x.real.copy() if _kind(x) == _COMPLEX else x.copy()


def _imag_ref(x):
    return x.imag.copy() if _kind(x) == _COMPLEX else np.zeros_like(x)


def _conj_ref(x):
    return np.conjugate(x) if _kind(x) == _COMPLEX else x.copy()


def _angle_ref(x):
    if _kind(x) == _COMPLEX:
        return np.angle(x)
    t = x.dtype.type
    out = np.where(x < 0, t(math.pi), t(0))
    return np.where(np.isnan(x), x, out)


def _bitwise(fn):
    def ref(x, y):
        return fn(x, y)

    ref.__name__ = fn.__name__
    return ref


def _bitwise_not_ref(x):
    return np.invert(x)


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _left_shift_ref(x, y, is_arithmetic=True):
    return np.left_shift(x, y)


def _right_shift_ref(x, y, is_arithmetic=True):
    if is_arithmetic or x.dtype.kind == "u":
        return np.right_shift(x, y)
    # a logical shift fills with zeros: shift the same bits as an unsigned type
    u = np.dtype(_UNSIGNED[x.dtype.itemsize])
    return np.right_shift(x.view(u), y.astype(u)).view(x.dtype)
