"""VJP rules of the quantization ops (fw.core.ops.quant).

``fake_quantize_dequantize`` is a step function of x, so its true derivative is 0
almost everywhere: QAT trains through it with the straight-through estimator (STE,
Bengio et al. 2013; what Paddle's and PyTorch's fake-quant ops do): the gradient
passes unchanged where the code was not clipped and is 0 where it was. For the
scale it uses LSQ's gradient (Esser et al. 2020, "Learned Step Size Quantization"),
the derivative of ``s * (clip(round(x/s) + z) - z)`` with round's derivative taken
as 1: ``round(x/s) - x/s`` inside the range, ``qmin - z`` / ``qmax - z`` where
clipped. LSQ's gradient-scale factor ``1/sqrt(N * qmax)`` belongs to the learnable
quanter (fw.quantization), not to the op. The zero point is an integer: no gradient.

``weight_only_linear`` is differentiable in x, bias and the weight scales (the int8
codes are constants), so adapters (LoRA) and scale fine-tuning train through it.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import reshape_to
from fw.core.ops import call

_LOW = ("float16", "bfloat16")


def _rint(v):
    """Round half to even (fw.round rounds halves away from zero): floor(v + 0.5),
    one less at an exact tie that landed on an odd number."""
    r = fw.floor(v + 0.5)
    odd_tie = ((r - v) == 0.5) & (fw.remainder(r, fw.full_like(r, 2.0)) != 0)
    return fw.where(odd_tie, r - 1.0, r)


def _per_axis(t, nd, ax):
    """A 0-d/1-d scale or zero point reshaped to broadcast along axis `ax` of a rank-`nd`
    tensor (a 1-element one broadcasts everywhere, as the op reads it)."""
    if nd == 0:
        return reshape_to(t, [])
    shape = [1] * nd
    shape[ax] = -1
    return fw.reshape(t, shape)


@vjp("fake_quantize_dequantize")
def _fake_quantize_dequantize(ctx, g):
    x, s, z = ctx.inputs
    a = ctx.attrs
    qmin, qmax = float(a["qmin"]), float(a["qmax"])
    nd = len(ctx.shape(0))
    ax = a["axis"] % nd if nd else 0
    ct = "float32" if ctx.dtype(0).name in _LOW + ("float32",) else "float64"
    xf = x.astype(ct) if ctx.dtype(0).name != ct else x
    gf = g.astype(ct) if ctx.dtype(0).name != ct else g
    sb = _per_axis(s, nd, ax).astype(ct)
    zb = _per_axis(z, nd, ax).astype(ct)
    v = xf / sb
    r = _rint(v)
    code = r + zb
    below, above = code < qmin, code > qmax
    gx = None
    if ctx.needs(0):
        inside = ~(below | above)
        gx = gf * inside.astype(ct)
    gs = None
    if ctx.needs(1):
        d = fw.where(below, qmin - zb, fw.where(above, qmax - zb, r - v))
        t = gf * d
        other = [i for i in range(nd) if i != ax]
        if ctx.shape(1) and nd:
            gs = fw.sum(t, axis=other) if other else t  # [C]; the engine sums a [1] scale
        else:
            gs = reshape_to(fw.sum(t), list(ctx.shape(1)))
    return gx, gs, None


def _dequant(weight, scale, a, dtype):
    algo = "weight_only_" + a["weight_dtype"]
    return call("weight_dequantize", weight, scale, algo=algo, out_dtype=dtype,
                group_size=a["group_size"])


@vjp("weight_only_linear")
def _weight_only_linear(ctx, g):
    x, weight, bias, scale = ctx.inputs
    a = ctx.attrs
    dt = ctx.dtype(0).name
    gx = gb = gsc = None
    if ctx.needs(0):
        w = _dequant(weight, scale, a, dt)  # [k, n]
        gx = fw.matmul(g, w, transpose_y=True)
    if bias is not None and ctx.needs(2):
        gb = g
    if ctx.needs(3):
        xs = ctx.shape(0)
        k, n = xs[-1], ctx.shape(1)[0]
        m = -1 if -1 in xs[:-1] else int(np.prod(xs[:-1], dtype=np.int64))
        x2 = reshape_to(x, [m, k]).astype("float32")
        g2 = reshape_to(g, [m, n]).astype("float32")
        dw = fw.matmul(x2, g2, transpose_x=True)  # dL/dW, [k, n]
        codes = _dequant(weight, fw.ones_like(scale), a, "float32")
        p = dw * codes
        gsz = a["group_size"]
        if gsz == -1:
            gsc = fw.sum(p, axis=0)
        else:
            gsc = fw.sum(reshape_to(p, [k // gsz, gsz, n]), axis=1)
    return gx, None, gb, gsc
