"""VJP rules of elementwise ops (arithmetic, math and special functions).

Binary rules return gradients in the broadcast shape; the engine sums them
down to each input's shape. Complex inputs follow the conjugate convention
(see `_util`): a holomorphic f contributes ``g * conj(f'(z))``.

Piecewise-constant functions (floor, sign, …) have zero gradient almost
everywhere and return zeros; at ties ``maximum``/``minimum`` split the
gradient equally between the inputs, as PyTorch does.
"""

from __future__ import annotations

import math

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import explicit
from fw.autograd.rules._util import conj, is_tensor_like, zeros_like
from fw.core.errors import UnsupportedError
from fw.core.ops import entry


def _holo(g, d):
    """g * conj(d): the gradient through a holomorphic (or real) function with
    derivative d."""
    return g * conj(d)


def _unary(name, deriv, inputs=True, outputs=False):
    """Register ``g * conj(deriv(x, out))`` for a unary op."""

    def rule(ctx, g):
        x = ctx.inputs[0] if inputs else None
        out = ctx.outputs[0] if outputs else None
        return _holo(g, deriv(x, out))

    rule.__name__ = f"_{name}_vjp"
    vjp(name, inputs=inputs, outputs=outputs)(rule)


# ---------------------------------------------------------------- arithmetic


@vjp("add", inputs=False)
def _add(ctx, g):
    return g, g


@vjp("subtract", inputs=False)
def _subtract(ctx, g):
    return g, (-g if ctx.needs(1) else None)


@vjp("multiply")
def _multiply(ctx, g):
    x, y = ctx.inputs
    return (g * conj(y) if ctx.needs(0) else None,
            g * conj(x) if ctx.needs(1) else None)


@vjp("divide")
def _divide(ctx, g):
    x, y = ctx.inputs
    gx = g / conj(y)
    return (gx if ctx.needs(0) else None,
            -gx * conj(x) / conj(y) if ctx.needs(1) else None)


@vjp("remainder")
def _remainder(ctx, g):
    x, y = ctx.inputs
    return (g if ctx.needs(0) else None,
            -g * fw.floor_divide(x, y) if ctx.needs(1) else None)


@vjp("pow", outputs=True)
def _pow(ctx, g):
    x, y = ctx.inputs
    gx = gy = None
    if ctx.needs(0):
        if is_tensor_like(y):
            d = fw.where(y == 0, 0.0, y * x ** (y - 1))
        elif y == 0:
            d = zeros_like(x)
        else:
            d = y * x ** (y - 1)
        gx = _holo(g, d)
    if ctx.needs(1):
        out = ctx.outputs[0]
        # 0 ** y has derivative 0 in y for y >= 0 (log(0) would give nan)
        if is_tensor_like(x):
            d = fw.where((x == 0) & (fw.real(y) >= 0), 0.0, out * fw.log(x))
        else:
            d = out * math.log(x) if x != 0 else zeros_like(out)
        gy = _holo(g, d)
    return gx, gy


def _tie_mask(a, b, wins):
    """1 where `a` wins, 0.5 at ties, 0 elsewhere."""
    return fw.where(wins, 1.0, fw.where(a == b, 0.5, 0.0))


@vjp("maximum", "minimum")
def _max_min(ctx, g):
    x, y = ctx.inputs
    greater = ctx.op.name == "maximum"
    gx = gy = None
    if ctx.needs(0):
        gx = g * _tie_mask(x, y, (x > y) if greater else (x < y)).astype(g.dtype)
    if ctx.needs(1):
        gy = g * _tie_mask(y, x, (y > x) if greater else (y < x)).astype(g.dtype)
    return gx, gy


@vjp("fmax", "fmin")
def _fmax_fmin(ctx, g):
    # like maximum/minimum, but a NaN operand loses
    x, y = ctx.inputs
    greater = ctx.op.name == "fmax"
    gx = gy = None
    if ctx.needs(0):
        wins = fw.isnan(y) | ((x > y) if greater else (x < y))
        gx = g * _tie_mask(x, y, wins).astype(g.dtype)
    if ctx.needs(1):
        wins = fw.isnan(x) | ((y > x) if greater else (y < x))
        gy = g * _tie_mask(y, x, wins).astype(g.dtype)
    return gx, gy


@vjp("atan2")
def _atan2(ctx, g):
    # atan2(x, y) = atan(x / y): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2)
    x, y = ctx.inputs
    r2 = x * x + y * y
    return (g * y / r2 if ctx.needs(0) else None,
            -g * x / r2 if ctx.needs(1) else None)


@vjp("hypot", outputs=True)
def _hypot(ctx, g):
    x, y = ctx.inputs
    out = ctx.outputs[0]
    return (g * x / out if ctx.needs(0) else None,
            g * y / out if ctx.needs(1) else None)


@vjp("logaddexp", outputs=True)
def _logaddexp(ctx, g):
    x, y = ctx.inputs
    out = ctx.outputs[0]
    return (g * fw.exp(x - out) if ctx.needs(0) else None,
            g * fw.exp(y - out) if ctx.needs(1) else None)


@vjp("copysign")
def _copysign(ctx, g):
    # |x| * sign(y): d/dx = sign(x) * sign(y); piecewise constant in y
    x, y = ctx.inputs
    gx = gy = None
    if ctx.needs(0):
        sy = fw.copysign(fw.ones_like(x), y) if is_tensor_like(y) else math.copysign(1.0, y)
        gx = g * fw.sign(x) * sy
    if ctx.needs(1):
        gy = zeros_like(g)
    return gx, gy


@vjp("heaviside")
def _heaviside(ctx, g):
    x, y = ctx.inputs
    return (zeros_like(g) if ctx.needs(0) else None,
            g * (x == 0).astype(g.dtype) if ctx.needs(1) else None)


@vjp("ldexp")
def _ldexp(ctx, g):
    x, y = ctx.inputs
    return fw.ldexp(g, y), None


@vjp("lerp")
def _lerp(ctx, g):
    x, y, w = ctx.inputs
    cw = conj(w)
    return (g * (1 - cw) if ctx.needs(0) else None,
            g * cw if ctx.needs(1) else None,
            g * conj(y - x) if ctx.needs(2) else None)


@vjp("where")
def _where(ctx, g):
    c, x, y = ctx.inputs
    z = zeros_like(g)
    return (None,
            fw.where(c, g, z) if ctx.needs(1) else None,
            fw.where(c, z, g) if ctx.needs(2) else None)


@vjp("clip")
def _clip(ctx, g):
    x, lo, hi = ctx.inputs
    # x gets the gradient strictly inside [lo, hi] (Paddle's clip_grad kernels: none
    # at a bound, where the result stops following x)
    keep = None
    if lo is not None:
        keep = x > lo
    if hi is not None:
        keep = (x < hi) if keep is None else keep & (x < hi)
    gx = g if keep is None else g * keep.astype(g.dtype)
    glo = ghi = None
    if lo is not None and ctx.needs(1):
        glo = g * (x < lo).astype(g.dtype)
    if hi is not None and ctx.needs(2):
        below = x > hi
        if lo is not None:  # an empty interval clips to hi
            below = below | (lo > hi)
        ghi = g * below.astype(g.dtype)
        if glo is not None:
            glo = glo * (lo <= hi).astype(g.dtype)
    return (gx if ctx.needs(0) else None), glo, ghi


# ---------------------------------------------------------------- unary arithmetic


@vjp("neg", inputs=False)
def _neg(ctx, g):
    return -g


@vjp("positive", inputs=False)
def _positive(ctx, g):
    return g


@vjp("abs")
def _abs(ctx, g):
    x = ctx.inputs[0]
    if x.dtype.is_complex:
        return g * fw.sgn(x)
    return g * fw.sign(x)


@vjp("sgn", outputs=True)
def _sgn(ctx, g):
    x = ctx.inputs[0]
    if not x.dtype.is_complex:
        return zeros_like(g)
    # f = z/|z| moves only along the circle: grad = (g - s Re(g conj(s))) / |z|
    s = ctx.outputs[0]
    a = fw.abs(x)
    num = g - s * fw.real(g * fw.conj(s))
    safe = fw.where(a == 0, 1.0, a)
    return fw.where(a == 0, 0.0, num / safe)


@vjp("sign", "floor", "ceil", "trunc", "round", inputs=False)
def _piecewise_constant(ctx, g):
    return zeros_like(g)


@vjp("frac", inputs=False)
def _frac(ctx, g):
    return g


@vjp("square")
def _square(ctx, g):
    return _holo(g, 2 * ctx.inputs[0])


@vjp("scale", inputs=False)
def _scale(ctx, g):
    return g * ctx.attrs["scale"]


@vjp("nan_to_num")
def _nan_to_num(ctx, g):
    x = ctx.inputs[0]
    return fw.where(fw.isfinite(x), g, zeros_like(g))


# ---------------------------------------------------------------- exp / log / powers

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

_unary("exp", lambda x, out: out, inputs=False, outputs=True)
_unary("expm1", lambda x, out: out + 1, inputs=False, outputs=True)
_unary("exp2", lambda x, out: out * _LN2, inputs=False, outputs=True)
_unary("rsqrt", lambda x, out: out * out * out * -0.5, inputs=False, outputs=True)
_unary("reciprocal", lambda x, out: -(out * out), inputs=False, outputs=True)
_unary("tan", lambda x, out: out * out + 1.0, inputs=False, outputs=True)


# The hot ones: a first-order backward of a real tanh/sigmoid is one explicit op
# (fw.core.ops.nn_grad, same arithmetic); the differentiable form is written
# tensor-first (a Python number on the left of an operator takes fw-core's slower
# general path).
_tanh_grad = entry("tanh_grad")
_sigmoid_grad = entry("sigmoid_grad")


@vjp("tanh", inputs=False, outputs=True)
def _tanh(ctx, g):
    out = ctx.outputs[0]
    if explicit(ctx) and not out.dtype.is_complex:
        return _tanh_grad(out, g)
    out = conj(out)
    return g - g * out * out


@vjp("sigmoid", inputs=False, outputs=True)
def _sigmoid(ctx, g):
    out = ctx.outputs[0]
    if explicit(ctx) and not out.dtype.is_complex:
        return _sigmoid_grad(out, g)
    return g * conj(out - out * out)


@vjp("sqrt", inputs=False, outputs=True)
def _sqrt(ctx, g):
    return g / (conj(ctx.outputs[0]) * 2.0)


@vjp("log")
def _log(ctx, g):
    return g / conj(ctx.inputs[0])


@vjp("log2")
def _log2(ctx, g):
    return g / conj(ctx.inputs[0] * _LN2)


@vjp("log10")
def _log10(ctx, g):
    return g / conj(ctx.inputs[0] * _LN10)


@vjp("log1p")
def _log1p(ctx, g):
    return g / conj(ctx.inputs[0] + 1.0)


# ---------------------------------------------------------------- trigonometric

_unary("sin", lambda x, out: fw.cos(x))
_unary("cos", lambda x, out: -fw.sin(x))
_unary("sinh", lambda x, out: fw.cosh(x))
_unary("cosh", lambda x, out: fw.sinh(x))


@vjp("asin")
def _asin(ctx, g):
    x = ctx.inputs[0]
    return g / conj(fw.sqrt(-(x * x) + 1.0))


@vjp("acos")
def _acos(ctx, g):
    x = ctx.inputs[0]
    return -g / conj(fw.sqrt(-(x * x) + 1.0))


@vjp("atan")
def _atan(ctx, g):
    x = ctx.inputs[0]
    return g / conj(x * x + 1.0)


@vjp("asinh")
def _asinh(ctx, g):
    x = ctx.inputs[0]
    return g / conj(fw.sqrt(x * x + 1.0))


@vjp("acosh")
def _acosh(ctx, g):
    # sqrt(x - 1) * sqrt(x + 1) (not sqrt(x^2 - 1)) is right on the complex branch too
    x = ctx.inputs[0]
    return g / conj(fw.sqrt(x - 1) * fw.sqrt(x + 1))


@vjp("atanh")
def _atanh(ctx, g):
    x = ctx.inputs[0]
    return g / conj(-(x * x) + 1.0)


@vjp("deg2rad", inputs=False)
def _deg2rad(ctx, g):
    return g * (math.pi / 180.0)


@vjp("rad2deg", inputs=False)
def _rad2deg(ctx, g):
    return g * (180.0 / math.pi)


@vjp("sinc", outputs=True)
def _sinc(ctx, g):
    # d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x, 0 at x = 0
    x = ctx.inputs[0]
    out = ctx.outputs[0]
    safe = fw.where(x == 0, 1.0, x)
    d = fw.where(x == 0, 0.0, (fw.cos(math.pi * x) - out) / safe)
    return g * d


@vjp("stanh")
def _stanh(ctx, g):
    a, b = ctx.attrs["scale_a"], ctx.attrs["scale_b"]
    t = fw.tanh(a * ctx.inputs[0])
    return g * (a * b) * (1 - t * t)


@vjp("logit")
def _logit(ctx, g):
    x = ctx.inputs[0]
    eps = ctx.attrs["eps"]
    d = g / (x * (1 - x))
    if eps is not None:
        d = fw.where((x < eps) | (x > 1 - eps), 0.0, d)
    return d


# ---------------------------------------------------------------- special functions

_SQRT_PI = math.sqrt(math.pi)


@vjp("erf")
def _erf(ctx, g):
    x = ctx.inputs[0]
    return g * (2.0 / _SQRT_PI) * fw.exp(-x * x)


@vjp("erfinv", inputs=False, outputs=True)
def _erfinv(ctx, g):
    out = ctx.outputs[0]
    return g * (_SQRT_PI / 2.0) * fw.exp(out * out)


@vjp("digamma")
def _digamma(ctx, g):
    return g * fw.polygamma(ctx.inputs[0], 1)


@vjp("lgamma")
def _lgamma(ctx, g):
    return g * fw.digamma(ctx.inputs[0])


@vjp("polygamma")
def _polygamma(ctx, g):
    return g * fw.polygamma(ctx.inputs[0], ctx.attrs["n"] + 1)


@vjp("i0")
def _i0(ctx, g):
    return g * fw.i1(ctx.inputs[0])


@vjp("i0e", outputs=True)
def _i0e(ctx, g):
    x = ctx.inputs[0]
    return g * (fw.i1e(x) - fw.sign(x) * ctx.outputs[0])


def _i1_over_x(x, i1x, at_zero):
    safe = fw.where(x == 0, 1.0, x)
    return fw.where(x == 0, at_zero, i1x / safe)


@vjp("i1", outputs=True)
def _i1(ctx, g):
    # I1'(x) = I0(x) - I1(x)/x, 1/2 at 0
    x = ctx.inputs[0]
    d = fw.i0(x) - _i1_over_x(x, ctx.outputs[0], 0.5)
    return g * d


@vjp("i1e", outputs=True)
def _i1e(ctx, g):
    x = ctx.inputs[0]
    out = ctx.outputs[0]
    d = fw.i0e(x) - _i1_over_x(x, out, 0.5) - fw.sign(x) * out
    return g * d


def _gammainc_dx(a, x):
    """d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a)."""
    return fw.exp((a - 1) * fw.log(x) - x - fw.lgamma(a))


@vjp("gammainc", "gammaincc")
def _gammainc(ctx, g):
    a, x = ctx.inputs
    if ctx.needs(0):
        raise UnsupportedError(
            f"{ctx.op.name}: the gradient with respect to the shape parameter 'x' has no closed "
            f"form and is not implemented (as in PyTorch); only 'y' is differentiable")
    d = _gammainc_dx(a, x)
    return None, (g * d if ctx.op.name == "gammainc" else -g * d)


# ---------------------------------------------------------------- complex parts


@vjp("real", inputs=False)
def _real(ctx, g):
    # for a complex input the engine turns the real gradient into a complex one
    return g


@vjp("imag", inputs=False)
def _imag(ctx, g):
    if not ctx.dtype(0).is_complex:
        return zeros_like(g)
    return g * 1j


@vjp("conj", inputs=False)
def _conj(ctx, g):
    return conj(g)


@vjp("angle")
def _angle(ctx, g):
    x = ctx.inputs[0]
    if not x.dtype.is_complex:
        return zeros_like(g)
    # angle = atan2(Im z, Re z): grad = g * i z / |z|^2 (0 at z = 0)
    a2 = fw.real(x * fw.conj(x))
    safe = fw.where(a2 == 0, 1.0, a2)
    return fw.where(a2 == 0, 0.0, g * (x * 1j) / safe)
