"""VJP rules of activations (fw.nn.functional's elementwise and softmax family).

At the kinks of piecewise functions the gradient takes the value of the branch
the forward pass selected (relu'(0) = 0, as in PyTorch and Paddle). Random
activations (rrelu, gumbel_softmax) use the noise the forward pass drew, which
their second output carries.
"""

from __future__ import annotations

import math

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import explicit
from fw.autograd.rules._util import reshape_to, zeros_like
from fw.core.ops import call


def _mask(cond, g):
    return cond.astype(g.dtype)


@vjp("relu", inputs=False, outputs=True)
def _relu(ctx, g):
    if explicit(ctx):
        return call("relu_grad", ctx.outputs[0], g)
    return g * _mask(ctx.outputs[0] > 0, g)


@vjp("relu6")
def _relu6(ctx, g):
    x = ctx.inputs[0]
    return g * _mask((x > 0) & (x < 6), g)


@vjp("leaky_relu")
def _leaky_relu(ctx, g):
    # Paddle's formula is x if x >= 0 else slope * x: at 0 the gradient is 1 (Paddle
    # 3.3's kernel too; PyTorch gives the slope there)
    x = ctx.inputs[0]
    return fw.where(x >= 0, g, g * ctx.attrs["negative_slope"])


@vjp("elu", outputs=True)
def _elu(ctx, g):
    x = ctx.inputs[0]
    a = ctx.attrs["alpha"]
    return fw.where(x > 0, g, g * (ctx.outputs[0] + a))


@vjp("celu")
def _celu(ctx, g):
    x = ctx.inputs[0]
    a = ctx.attrs["alpha"]
    return fw.where(x > 0, g, g * fw.exp(x / a))


@vjp("selu")
def _selu(ctx, g):
    x = ctx.inputs[0]
    s, a = ctx.attrs["scale"], ctx.attrs["alpha"]
    return fw.where(x > 0, g * s, g * (s * a) * fw.exp(x))


_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@vjp("gelu")
def _gelu(ctx, g):
    x = ctx.inputs[0]
    if ctx.attrs["approximate"]:
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        t = fw.tanh(inner)
        dinner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner)
    cdf = 0.5 * (1 + fw.erf(x * _INV_SQRT2))
    pdf = _INV_SQRT2PI * fw.exp(-0.5 * x * x)
    return g * (cdf + x * pdf)


@vjp("silu")
def _silu(ctx, g):
    x = ctx.inputs[0]
    s = fw.sigmoid(x)
    return g * s * (x * (-s + 1.0) + 1.0)


@vjp("mish")
def _mish(ctx, g):
    x = ctx.inputs[0]
    sp = call("softplus", x, beta=1.0, threshold=20.0)
    t = fw.tanh(sp)
    return g * (t + x * (1 - t * t) * fw.sigmoid(x))


@vjp("hardswish")
def _hardswish(ctx, g):
    x = ctx.inputs[0]
    mid = (x > -3) & (x < 3)
    d = fw.where(mid, (2 * x + 3) / 6, _mask(x >= 3, x))
    return g * d


@vjp("hardsigmoid")
def _hardsigmoid(ctx, g):
    x = ctx.inputs[0]
    s, o = ctx.attrs["slope"], ctx.attrs["offset"]
    y = x * s + o
    return g * _mask((y > 0) & (y < 1), g) * s


@vjp("hardtanh")
def _hardtanh(ctx, g):
    x = ctx.inputs[0]
    return g * _mask((x > ctx.attrs["min"]) & (x < ctx.attrs["max"]), g)


@vjp("hardshrink")
def _hardshrink(ctx, g):
    x = ctx.inputs[0]
    return g * _mask(fw.abs(x) > ctx.attrs["threshold"], g)


@vjp("softshrink")
def _softshrink(ctx, g):
    x = ctx.inputs[0]
    return g * _mask(fw.abs(x) > ctx.attrs["threshold"], g)


@vjp("softplus")
def _softplus(ctx, g):
    x = ctx.inputs[0]
    b, th = ctx.attrs["beta"], ctx.attrs["threshold"]
    bx = x * b
    return fw.where(bx > th, g, g * fw.sigmoid(bx))


@vjp("softsign")
def _softsign(ctx, g):
    x = ctx.inputs[0]
    d = 1 + fw.abs(x)
    return g / (d * d)


@vjp("tanhshrink")
def _tanhshrink(ctx, g):
    t = fw.tanh(ctx.inputs[0])
    return g * t * t


@vjp("log_sigmoid")
def _log_sigmoid(ctx, g):
    return g * fw.sigmoid(-ctx.inputs[0])


@vjp("thresholded_relu")
def _thresholded_relu(ctx, g):
    x = ctx.inputs[0]
    return g * _mask(x > ctx.attrs["threshold"], g)


@vjp("prelu")
def _prelu(ctx, g):
    x, w = ctx.inputs
    nd = x.ndim
    n = w.size
    shape = [1] * nd
    if n != 1:
        shape[nd - 1 if ctx.attrs["channel_last"] else 1] = n
    wb = reshape_to(w, shape)
    pos = x > 0
    gx = fw.where(pos, g, g * wb) if ctx.needs(0) else None
    gw = None
    if ctx.needs(1):
        gw = reshape_to(fw.where(pos, zeros_like(g), g * x), list(x.shape))
        # the engine sums over the broadcast dims; reshape to the weight's layout
        axes = [i for i in range(nd) if shape[i] == 1]
        gw = reshape_to(fw.sum(gw, axis=axes) if axes else gw, list(w.shape))
    return gx, gw


@vjp("rrelu", inputs=False, outputs=True)
def _rrelu(ctx, g):
    return g[0] * ctx.outputs[1]


@vjp("maxout", outputs=True)
def _maxout(ctx, g):
    # the gradient goes to the (first) maximum of each group
    x = ctx.inputs[0]
    groups = ctx.attrs["groups"]
    ax = ctx.attrs["axis"] % x.ndim
    shape = list(x.shape)
    split = shape[:ax] + [shape[ax] // groups, groups] + shape[ax + 1:]
    xs = reshape_to(x, split)
    out = fw.unsqueeze(ctx.outputs[0], ax + 1)
    hit = _mask(xs == out, g)
    # keep only the first maximum: cumsum of hits along the group axis == 1
    first = hit * _mask(fw.cumsum(hit, axis=ax + 1) == 1, g)
    return reshape_to(first * fw.unsqueeze(g, ax + 1), shape)


@vjp("glu")
def _glu(ctx, g):
    x = ctx.inputs[0]
    ax = ctx.attrs["axis"]
    a, b = fw.split(x, 2, axis=ax)
    s = fw.sigmoid(b)
    return fw.concat([g * s, g * a * s * (1 - s)], axis=ax)


@vjp("swiglu")
def _swiglu(ctx, g):
    x, y = ctx.inputs
    if y is None:
        a, b = fw.split(x, 2, axis=-1)
    else:
        a, b = x, y
    s = fw.sigmoid(a)
    silu = a * s
    ga = g * b * s * (1 + a * (1 - s))
    gb = g * silu
    if y is None:
        return fw.concat([ga, gb], axis=-1), None
    return (ga if ctx.needs(0) else None), (gb if ctx.needs(1) else None)


def _softmax_vjp(s, g, axis):
    return s * (g - fw.sum(g * s, axis=axis, keepdim=True))


@vjp("softmax", inputs=False, outputs=True)
def _softmax(ctx, g):
    if explicit(ctx):  # one native kernel (see _explicit)
        return call("softmax_grad", ctx.outputs[0], g, axis=ctx.attrs["axis"])
    return _softmax_vjp(ctx.outputs[0], g, ctx.attrs["axis"])


@vjp("log_softmax", inputs=False, outputs=True)
def _log_softmax(ctx, g):
    out = ctx.outputs[0]
    if explicit(ctx):
        return call("log_softmax_grad", out, g, axis=ctx.attrs["axis"])
    return g - fw.exp(out) * fw.sum(g, axis=ctx.attrs["axis"], keepdim=True)


@vjp("gumbel_softmax", inputs=False, outputs=True)
def _gumbel_softmax(ctx, g):
    # straight-through: both outputs are differentiated as the soft sample
    gout, gsoft = g
    soft = ctx.outputs[1]
    total = gout + gsoft
    return _softmax_vjp(soft, total, ctx.attrs["axis"]) / ctx.attrs["temperature"]
