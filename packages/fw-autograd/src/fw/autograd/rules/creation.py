"""VJP rules of the creation family's differentiable ops: casts and copies,
diagonal/triangular constructions, complex numbers from parts, meshgrid."""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import reshape_like, reshape_to
from fw.core.ops import call


@vjp("cast", inputs=False)
def _cast(ctx, g):
    # the engine casts back to the input dtype (taking the real part for a real input)
    return g


@vjp("assign", inputs=False)
def _assign(ctx, g):
    return g


@vjp("to_device")
def _to_device(ctx, g):
    x = ctx.inputs[0]
    if not isinstance(x, fw.Tensor):
        return g  # a program runs on one device
    return call("to_device", g, place=str(x.place))


@vjp("tril", "triu", inputs=False)
def _tri(ctx, g):
    return call(ctx.op.name, g, diagonal=ctx.attrs["diagonal"])


@vjp("diag", inputs=False)
def _diag(ctx, g):
    off = ctx.attrs["offset"]
    if len(ctx.shape(0)) == 1:  # vector -> matrix: read the diagonal back
        return fw.diagonal(g, offset=off)
    return fw.diagonal_scatter(fw.zeros(ctx.shape(0), dtype=g.dtype), g, offset=off)


@vjp("diagflat", inputs=False)
def _diagflat(ctx, g):
    return reshape_like(fw.diagonal(g, offset=ctx.attrs["offset"]), ctx, 0)


@vjp("diag_embed", inputs=False)
def _diag_embed(ctx, g):
    a = ctx.attrs
    return fw.diagonal(g, offset=a["offset"], axis1=a["dim1"], axis2=a["dim2"])


@vjp("complex", inputs=False)
def _complex(ctx, g):
    # the engine keeps the real part for `real`; `imag` gets Im(g)
    return g, (fw.imag(g) if ctx.needs(1) else None)


@vjp("polar", outputs=True)
def _polar(ctx, g):
    # out = r e^{i t}: dL/dr = Re(conj(g) e^{i t}), dL/dt = Re(conj(g) i out)
    r, t = ctx.inputs
    out = ctx.outputs[0]
    cg = fw.conj(g)
    gr = fw.real(cg * fw.polar(fw.ones_like(t), t)) if ctx.needs(0) else None
    gt = fw.real(cg * out * 1j) if ctx.needs(1) else None
    return gr, gt


@vjp("meshgrid", inputs=False)
def _meshgrid(ctx, g):
    n = ctx.count(0)
    xy = ctx.attrs["indexing"] == "xy"
    grads = []
    for i, gi in enumerate(g):
        if not ctx.needs(0, i):
            grads.append(None)
            continue
        ax = (1 - i) if (xy and n >= 2 and i < 2) else i
        others = [a for a in range(n) if a != ax]
        s = fw.sum(gi, axis=others) if others else gi
        grads.append(reshape_to(s, ctx.shape(0, i)))
    return [grads]


