"""Activation ops: the nonlinearities of ``paddle.nn.functional``.

Every op here is exposed only through the op table (``api=False, method=False``):
fw-nn's ``fw.nn.functional`` maps Paddle's functions onto them. Elementwise math
that Paddle also has at top level (``tanh``, ``sigmoid``, ``exp``, ``erf``) belongs to
the elementwise family and is not repeated here.

Conventions shared by the nn families (activation, conv, pool, norm, nn_misc, loss):

- Inputs are real floating tensors; integer inputs are promoted to the default float
  dtype (``to_float``), complex inputs are rejected. float16/bfloat16 inputs are computed
  in float32 and the result is rounded back to the input dtype.
- ``channel_last`` (bool) replaces Paddle's ``data_format`` strings: False is
  ``NCL``/``NCHW``/``NCDHW``, True is ``NLC``/``NHWC``/``NDHWC``. fw-nn maps
  ``data_format[-1] == "C"`` to True.
- Random ops draw from the generator of the device the input lives on
  (`fw.core.random.default_generator`), so ``fw.seed`` makes them reproducible.
  They return what their backward needs (a mask, the noise) as an extra output.

The ops and their exact semantics (x is the input, all formulas elementwise):

==================  =======================================  ==================================
op                  attributes (defaults)                    result
==================  =======================================  ==================================
relu                -                                        max(x, 0)
relu6               -                                        min(max(x, 0), 6)
leaky_relu          negative_slope=0.01                      x if x > 0 else negative_slope*x
elu                 alpha=1.0                                x if x > 0 else alpha*(e^x - 1)
celu                alpha=1.0 (!= 0)                         max(0,x) + min(0,
                                                             alpha*(e^(x/alpha)-1))
selu                scale=1.0507..., alpha=1.6732...         scale*(x if x > 0 else alpha*(e^x-1))
gelu                approximate=False                        x*Phi(x) (erf form); True: tanh form
                                                             0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
silu                -                                        x*sigmoid(x) (Paddle's swish too)
mish                -                                        x*tanh(softplus(x)), softplus
                                                             threshold 20
hardswish           -                                        x*min(max(x+3, 0), 6)/6
hardsigmoid         slope=0.1666667, offset=0.5              min(max(slope*x+offset, 0), 1)
hardtanh            min=-1.0, max=1.0                        min(max(x, min), max)
hardshrink          threshold=0.5                            x if |x| > threshold else 0
softshrink          threshold=0.5 (>= 0)                     x-t if x > t; x+t if x < -t; else 0
softplus            beta=1.0, threshold=20.0                 x if beta*x > threshold else
                                                             log(1+e^(beta*x))/beta
softsign            -                                        x/(1+|x|)
tanhshrink          -                                        x - tanh(x)
log_sigmoid         -                                        log(sigmoid(x)) (stable form)
thresholded_relu    threshold=1.0, value=0.0                 x if x > threshold else value
prelu(x, weight)    channel_last=False                       x if x > 0 else w*x; weight has 1
                                                             element or one per channel (the
                                                             channel axis is 1, or -1 when
                                                             channel_last)
rrelu -> (out,      lower=0.125, upper=1/3, training=True    out = x*noise; noise = 1 where
noise)  [random]                                             x >= 0, else a slope drawn from
                                                             U(lower, upper) per element when
                                                             training, (lower+upper)/2 when not
maxout              groups (required), axis=1                channel c of the result is the max
                                                             of input channels c*groups ..
                                                             c*groups+groups-1 along `axis`
glu                 axis=-1                                  a*sigmoid(b), [a, b] = halves of x
                                                             along axis (its size must be even)
swiglu(x, y?)       -                                        silu(x)*y; without y, x is split
                                                             in halves [a, b] along the last
                                                             axis: silu(a)*b
softmax             axis=-1                                  e^x / sum(e^x) along axis
log_softmax         axis=-1                                  x - logsumexp(x) along axis
gumbel_softmax      temperature=1.0 (> 0), hard=False,       soft = softmax((x + g)/temperature)
-> (out, soft)      axis=-1  [random]                        with g ~ Gumbel(0, 1); out = soft,
                                                             or with hard=True the one-hot of
                                                             argmax(soft) (ties: first index);
                                                             `soft` is returned for the
                                                             straight-through gradient
==================  =======================================  ==================================

Paddle's ``softmax(x, axis, dtype)``/``log_softmax(..., dtype)`` cast x to `dtype`
first: fw-nn does that with ``cast``. ``swish`` is ``silu``; ``relu_``/``elu_`` …
(in-place variants) are fw-nn's business.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from fw.core import dtypes as _dt
from fw.core._epilogue import erf, gelu, sigmoid_np, silu_np
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, shp
from fw.core.ops._registry import defop

__all__ = ["up", "down", "arr", "contiguous", "require_real_float", "rng_for", "erf", "softmax_np",
           "log_softmax_np", "sigmoid_np", "softplus_np", "channel_axis"]

_LOW = frozenset((np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)))
_F32 = np.dtype(np.float32)


# ---------------------------------------------------------------- helpers shared by nn families
def up(x):
    """The array to compute with: float16/bfloat16 are widened to float32 (NumPy's half
    loops are slow and round every intermediate); complex input is rejected."""
    d = x.dtype
    if d in _LOW:
        return x.astype(_F32)
    if d.kind == "c":
        raise InvalidTypeError(f"expected a real floating tensor, got {_dt.from_numpy(d).name}")
    return x


def arr(a, dtype=None):
    """`a` as an array (of `dtype`) on its own device: scalars become 0-d arrays, arrays are
    only cast (np.asarray would pull a CuPy array to the host)."""
    if isinstance(a, np.generic) or not hasattr(a, "ndim"):
        a = np.asarray(a)
    return a if dtype is None or a.dtype == dtype else a.astype(dtype)


def contiguous(a):
    """A C-contiguous `a` (0-d stays 0-d, unlike np.ascontiguousarray)."""
    if isinstance(a, np.generic) or not hasattr(a, "flags"):
        return np.asarray(a)
    return a if a.flags.c_contiguous else a.copy()


def down(r, dtype):
    """`r` in `dtype` (undo `up`, and undo NumPy's habit of widening to float64)."""
    return r if r.dtype == dtype else r.astype(dtype)


def require_real_float(t, arg="x"):
    """infer-side check: a real floating tensor type."""
    if t.dtype.kind != _dt._FLOAT:
        raise InvalidTypeError(f"'{arg}' must be a real floating tensor, got {t.dtype.name}"
                               f"{shp(t.shape)}")


def rng_for(x):
    """The random generator of the device `x` lives on."""
    from fw.core import place as _pl
    from fw.core import random as _rnd

    kind = "cpu" if type(x) is np.ndarray or isinstance(x, np.generic) else \
        _pl.backend_of(x).name
    return _rnd.default_generator(kind).np


def softplus_np(x, beta=1.0, threshold=20.0):
    bx = x * beta if beta != 1.0 else x
    # log1p(exp(bx)) overflows past the threshold, where softplus(x) == x in float precision
    return np.where(bx > threshold, x, np.log1p(np.exp(np.minimum(bx, threshold))) / beta)


def softmax_np(x, axis):
    if x.shape[axis] == 0:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    # a row that is all -inf has max -inf; shifting by 0 keeps it NaN-free until the divide
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax_np(x, axis):
    if x.shape[axis] == 0:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def channel_axis(ndim, channel_last):
    return ndim - 1 if channel_last else min(1, ndim - 1)


def _float_same(x, **_):
    require_real_float(x)
    return x


def _check(cond, msg):
    if not cond:
        raise InvalidArgumentError(msg)


# ---------------------------------------------------------------- declaration helper
def _act(name, fn, attrs=None, *, doc="", canon=None, infer=_float_same):
    """Declare an elementwise activation: `fn(xf, **attrs)` computes on the widened input."""

    def ref(x, **at):
        return down(fn(up(x), **at), x.dtype)

    ref.__name__ = f"_{name}_ref"
    return defop(name, ("x",), attrs or {}, infer=infer, reference=ref, to_float=True,
                 canon=canon, family="activation", api=False, method=False, doc=doc)


def _floats(*names, positive=(), nonneg=(), nonzero=()):
    """A canon converting the named attributes to float and checking their sign."""

    def canon(attrs):
        a = dict(attrs)
        for k in names:
            v = a[k]
            if hasattr(v, "item"):
                v = v.item()
            a[k] = float(v)
        for k in positive:
            _check(a[k] > 0, f"'{k}' must be > 0, got {a[k]}")
        for k in nonneg:
            _check(a[k] >= 0, f"'{k}' must be >= 0, got {a[k]}")
        for k in nonzero:
            _check(a[k] != 0, f"'{k}' must not be 0")
        return a

    return canon


_act("relu", lambda x: np.maximum(x, 0), doc="max(x, 0)")
_act("relu6", lambda x: np.minimum(np.maximum(x, 0), 6), doc="min(max(x, 0), 6)")
_act("leaky_relu", lambda x, negative_slope=0.01: np.where(x > 0, x, x * negative_slope),
     {"negative_slope": 0.01}, canon=_floats("negative_slope"),
     doc="x if x > 0 else negative_slope * x")
_act("elu", lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))),
     {"alpha": 1.0}, canon=_floats("alpha"), doc="x if x > 0 else alpha * (exp(x) - 1)")


def _celu(x, alpha=1.0):
    return np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(x / alpha))


_act("celu", _celu, {"alpha": 1.0}, canon=_floats("alpha", nonzero=("alpha",)),
     doc="max(0, x) + min(0, alpha * (exp(x / alpha) - 1))")

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _selu(x, scale=_SELU_SCALE, alpha=_SELU_ALPHA):
    return scale * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _selu_canon(attrs):
    a = _floats("scale", "alpha", nonneg=("alpha",))(attrs)
    _check(a["scale"] > 1.0, f"'scale' must be > 1, got {a['scale']}")
    return a


_act("selu", _selu, {"scale": _SELU_SCALE, "alpha": _SELU_ALPHA}, canon=_selu_canon,
     doc="scale * (x if x > 0 else alpha * (exp(x) - 1))")

_act("gelu", gelu, {"approximate": False},
     canon=lambda a: {"approximate": bool(a["approximate"])},
     doc="x * Phi(x) with the erf form, or the tanh approximation when approximate=True")
_act("silu", silu_np, doc="x * sigmoid(x) (also Paddle's swish)")
_act("mish", lambda x: x * np.tanh(softplus_np(x)), doc="x * tanh(softplus(x))")
_act("hardswish", lambda x: x * np.minimum(np.maximum(x + 3.0, 0), 6.0) / 6.0,
     doc="x * min(max(x + 3, 0), 6) / 6")
_act("hardsigmoid",
     lambda x, slope=0.1666667, offset=0.5: np.minimum(np.maximum(x * slope + offset, 0), 1),
     {"slope": 0.1666667, "offset": 0.5}, canon=_floats("slope", "offset"),
     doc="min(max(slope * x + offset, 0), 1)")


def _hardtanh_canon(attrs):
    a = _floats("min", "max")(attrs)
    _check(a["min"] <= a["max"], f"'min'={a['min']} must be <= 'max'={a['max']}")
    return a


_act("hardtanh", lambda x, min=-1.0, max=1.0: np.minimum(np.maximum(x, min), max),
     {"min": -1.0, "max": 1.0}, canon=_hardtanh_canon, doc="clip(x, min, max)")
_act("hardshrink", lambda x, threshold=0.5: np.where(np.abs(x) > threshold, x, 0),
     {"threshold": 0.5}, canon=_floats("threshold"), doc="x if |x| > threshold else 0")


def _softshrink(x, threshold=0.5):
    return np.where(x > threshold, x - threshold, np.where(x < -threshold, x + threshold, 0))


_act("softshrink", _softshrink, {"threshold": 0.5},
     canon=_floats("threshold", nonneg=("threshold",)),
     doc="x - t if x > t, x + t if x < -t, else 0")
_act("softplus", softplus_np, {"beta": 1.0, "threshold": 20.0},
     canon=_floats("beta", "threshold", nonzero=("beta",)),
     doc="log(1 + exp(beta * x)) / beta, or x where beta * x > threshold")
_act("softsign", lambda x: x / (1.0 + np.abs(x)), doc="x / (1 + |x|)")
_act("tanhshrink", lambda x: x - np.tanh(x), doc="x - tanh(x)")
_act("log_sigmoid", lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))),
     doc="log(sigmoid(x)), computed as min(x, 0) - log(1 + exp(-|x|))")
_act("thresholded_relu", lambda x, threshold=1.0, value=0.0: np.where(x > threshold, x, value),
     {"threshold": 1.0, "value": 0.0}, canon=_floats("threshold", "value"),
     doc="x if x > threshold else value")


# ---------------------------------------------------------------- prelu
def _prelu_weight_shape(xshape, n, channel_last):
    """The shape `weight` broadcasts as: all ones, or C on the channel axis."""
    nd = len(xshape)
    if n == 1:
        return (1,) * nd
    ax = channel_axis(nd, channel_last)
    c = xshape[ax]
    _check(nd >= 2 and (c == DYN or n == DYN or c == n),
           f"'weight' has {n} elements; it must have 1 element or one per channel "
           f"(x has shape {shp(xshape)}, channel axis {ax})")
    s = [1] * nd
    s[ax] = n
    return tuple(s)


def _prelu_infer(x, weight, channel_last=False):
    require_real_float(x)
    require_real_float(weight, "weight")
    n = 1
    for d in weight.shape:
        n = DYN if (d == DYN or n == DYN) else n * d
    if n != DYN:
        _prelu_weight_shape(x.shape, n, channel_last)
    return x


def _prelu_ref(x, weight, channel_last=False):
    xf = up(x)
    w = up(weight).reshape(_prelu_weight_shape(x.shape, weight.size, channel_last))
    return down(np.where(xf > 0, xf, w * xf), x.dtype)


defop("prelu", ("x", "weight"), {"channel_last": False}, infer=_prelu_infer,
      reference=_prelu_ref, to_float=True, family="activation", api=False, method=False,
      doc="x if x > 0 else weight * x; weight has 1 element or one per channel.")


# ---------------------------------------------------------------- rrelu (random)
def _rrelu_canon(attrs):
    a = _floats("lower", "upper")(attrs)
    a["training"] = bool(a["training"])
    _check(0.0 <= a["lower"] <= a["upper"] <= 1.0,
           f"need 0 <= lower <= upper <= 1, got lower={a['lower']}, upper={a['upper']}")
    return a


def _rrelu_infer(x, lower=0.125, upper=1 / 3, training=True):
    require_real_float(x)
    return x, x


def _rrelu_ref(x, lower=0.125, upper=1 / 3, training=True):
    xf = up(x)
    if training:
        slope = lower + (upper - lower) * rng_for(x).random(x.shape)
    else:
        slope = (lower + upper) / 2.0
    noise = np.where(xf >= 0, 1.0, slope)
    return down(xf * noise, x.dtype), down(arr(noise), x.dtype)


defop("rrelu", ("x",), {"lower": 0.125, "upper": 1.0 / 3.0, "training": True},
      outputs=("out", "noise"), infer=_rrelu_infer, reference=_rrelu_ref, canon=_rrelu_canon,
      to_float=True, random=True, family="activation", api=False, method=False,
      doc="Randomized leaky relu: out = x * noise (noise = 1 where x >= 0, a random slope "
          "in [lower, upper] elsewhere while training, their mean otherwise).")


# ---------------------------------------------------------------- maxout / glu / swiglu
def _int_canon(*names):
    def canon(attrs):
        a = dict(attrs)
        for k in names:
            v = a[k]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InvalidTypeError(f"'{k}' must be an int, got {v!r}")
            a[k] = int(v)
        return a

    return canon


def _maxout_infer(x, groups=None, axis=1):
    require_real_float(x)
    nd = len(x.shape)
    _check(nd >= 1, "x must have at least one dimension")
    ax = norm_axis(axis, nd)
    _check(groups is not None and groups > 0, f"'groups' must be a positive int, got {groups}")
    c = x.shape[ax]
    if c != DYN:
        _check(c % groups == 0, f"the size of axis {axis} of x (shape {shp(x.shape)}) is {c}, "
                                f"which 'groups'={groups} does not divide")
    s = list(x.shape)
    s[ax] = DYN if c == DYN else c // groups
    return TensorType(s, x.dtype)


def _maxout_ref(x, groups=None, axis=1):
    _maxout_infer(TensorType(x.shape, _dt.from_numpy(x.dtype)), groups, axis)
    ax = axis % x.ndim
    s = x.shape[:ax] + (x.shape[ax] // groups, groups) + x.shape[ax + 1:]
    # the reduced axis has `groups` > 0 entries, so max is defined even for empty x
    return np.max(x.reshape(s), axis=ax + 1)


defop("maxout", ("x",), {"groups": None, "axis": 1}, infer=_maxout_infer,
      reference=_maxout_ref, canon=_int_canon("groups", "axis"), to_float=True,
      family="activation", api=False, method=False,
      doc="Max over consecutive groups of `groups` channels along `axis`.")


def _halves_infer(x, axis=-1):
    require_real_float(x)
    nd = len(x.shape)
    _check(nd >= 1, "x must have at least one dimension")
    ax = norm_axis(axis, nd)
    c = x.shape[ax]
    if c != DYN:
        _check(c % 2 == 0, f"the size of axis {axis} of x (shape {shp(x.shape)}) must be even "
                           f"to split it in halves, got {c}")
    s = list(x.shape)
    s[ax] = DYN if c == DYN else c // 2
    return TensorType(s, x.dtype)


def _glu_ref(x, axis=-1):
    _halves_infer(TensorType(x.shape, _dt.from_numpy(x.dtype)), axis)
    a, b = np.split(up(x), 2, axis=axis)
    return down(a * sigmoid_np(b), x.dtype)


defop("glu", ("x",), {"axis": -1}, infer=_halves_infer, reference=_glu_ref,
      canon=_int_canon("axis"), to_float=True, family="activation", api=False, method=False,
      doc="Gated linear unit: a * sigmoid(b) for the halves [a, b] of x along axis.")


def _swiglu_infer(x, y=None):
    if y is None:
        return _halves_infer(x, -1)
    require_real_float(x)
    require_real_float(y, "y")
    if x.shape != y.shape and DYN not in x.shape + y.shape:
        raise InvalidArgumentError(f"x {shp(x.shape)} and y {shp(y.shape)} must have one shape")
    return x


def _swiglu_ref(x, y=None):
    if y is None:
        _halves_infer(TensorType(x.shape, _dt.from_numpy(x.dtype)), -1)
        a, b = np.split(up(x), 2, axis=-1)
    else:
        _swiglu_infer(TensorType(x.shape, _dt.from_numpy(x.dtype)),
                      TensorType(y.shape, _dt.from_numpy(y.dtype)))
        a, b = up(x), up(y)
    return down(a * sigmoid_np(a) * b, x.dtype)


defop("swiglu", ("x", "y?"), infer=_swiglu_infer, reference=_swiglu_ref, to_float=True,
      family="activation", api=False, method=False,
      doc="silu(x) * y; with y None, silu(a) * b for the halves [a, b] of x's last axis.")


# ---------------------------------------------------------------- softmax family
def _axis_infer(x, axis=-1):
    require_real_float(x)
    norm_axis(axis, len(x.shape))
    return x


def _softmax_ref(x, axis=-1):
    return down(softmax_np(up(x), norm_axis(axis, x.ndim)), x.dtype)


def _log_softmax_ref(x, axis=-1):
    return down(log_softmax_np(up(x), norm_axis(axis, x.ndim)), x.dtype)


defop("softmax", ("x",), {"axis": -1}, infer=_axis_infer, reference=_softmax_ref,
      canon=_int_canon("axis"), to_float=True, family="activation", api=False, method=False,
      doc="exp(x) / sum(exp(x)) along axis (max-shifted for stability).")
defop("log_softmax", ("x",), {"axis": -1}, infer=_axis_infer, reference=_log_softmax_ref,
      canon=_int_canon("axis"), to_float=True, family="activation", api=False, method=False,
      doc="x - logsumexp(x) along axis.")


def _gumbel_canon(attrs):
    a = _int_canon("axis")(attrs)
    t = a["temperature"]
    a["temperature"] = float(t.item() if hasattr(t, "item") else t)
    _check(a["temperature"] > 0, f"'temperature' must be > 0, got {a['temperature']}")
    a["hard"] = bool(a["hard"])
    return a


def _gumbel_infer(x, temperature=1.0, hard=False, axis=-1):
    _axis_infer(x, axis)
    return x, x


def _gumbel_ref(x, temperature=1.0, hard=False, axis=-1):
    ax = norm_axis(axis, x.ndim)
    xf = up(x)
    u = rng_for(x).random(x.shape)
    # u == 0 would give log(0); the smallest normal keeps the noise finite
    u = np.maximum(u, np.finfo(np.float64).tiny)
    g = -np.log(-np.log(u))
    soft = softmax_np((xf + g) / temperature, ax)
    if not hard or x.size == 0:
        out = soft
    else:
        idx = np.expand_dims(np.argmax(soft, axis=ax), ax)
        out = np.zeros_like(soft)
        np.put_along_axis(out, idx, 1.0, axis=ax)
    return down(arr(out), x.dtype), down(arr(soft), x.dtype)


defop("gumbel_softmax", ("x",), {"temperature": 1.0, "hard": False, "axis": -1},
      outputs=("out", "soft"), infer=_gumbel_infer, reference=_gumbel_ref, canon=_gumbel_canon,
      to_float=True, random=True, family="activation", api=False, method=False,
      doc="softmax((x + Gumbel noise) / temperature) along axis; hard=True gives its one-hot "
          "argmax. Also returns the soft sample (for the straight-through gradient).")
