"""VJP rules of shape ops: the gradient is moved back to the input's layout.

Reshapes reshape back, permutations permute back, concatenations split and
splits concatenate; broadcasting ops (expand, broadcast_to, …) return the
gradient in the broadcast shape and the engine sums it down. Ops that copy
elements in irregular patterns (pad, tile, repeat_interleave, as_strided) use
`gather_transpose`: the op applied to element indices tells where each output
element came from.
"""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import conj, gather_transpose, reshape_like, reshape_to
from fw.core.errors import UnsupportedError
from fw.core.ops import call


@vjp("reshape", "squeeze", "unsqueeze", "flatten", "unflatten", inputs=False)
def _reshape_like(ctx, g):
    return reshape_like(g, ctx, 0)


@vjp("reshape_dyn")
def _reshape_dyn(ctx, g):
    shape = ctx.shape(0)
    if sum(1 for d in shape if d == -1) <= 1:
        return reshape_to(g, shape), None
    # several sizes known only at run time: reshape to the input's run-time shape
    return call("reshape_dyn", g, fw.shape(ctx.inputs[0]), static_shape=shape), None


@vjp("transpose", inputs=False)
def _transpose(ctx, g):
    perm = ctx.attrs["perm"]
    nd = len(ctx.shape(0))
    if perm is None:
        perm = list(range(nd))[::-1]
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p % nd] = i
    return fw.transpose(g, inv)


@vjp("expand", inputs=False)
def _expand(ctx, g):
    return g  # the engine sums over the broadcast dimensions


@vjp("expand_dyn", inputs=False)
def _expand_dyn(ctx, g):
    return g, None  # the engine sums over the broadcast dimensions


@vjp("expand_as", inputs=False)
def _expand_as(ctx, g):
    return g, None


@vjp("broadcast_tensors", inputs=False)
def _broadcast_tensors(ctx, g):
    return [list(g)]


@vjp("concat", inputs=False)
def _concat(ctx, g):
    n = ctx.count(0)
    nd = len(ctx.shape(0, 0))
    axis = ctx.attrs["axis"] % max(nd, 1)
    sizes = [ctx.shape(0, j)[axis] for j in range(n)]
    if sum(1 for s in sizes if s < 0) > 1:
        raise UnsupportedError("concat: the gradient needs the sizes of the concatenated "
                               f"inputs along axis {axis}; more than one is dynamic ({sizes})")
    if n == 1:
        return [[g]]
    return [list(fw.split(g, sizes, axis=axis))]


@vjp("stack", inputs=False)
def _stack(ctx, g):
    return [list(fw.unbind(g, axis=ctx.attrs["axis"]))]


@vjp("split", inputs=False)
def _split(ctx, g):
    axis = ctx.attrs["axis"]
    return fw.concat(list(g), axis=axis)


@vjp("unbind", inputs=False)
def _unbind(ctx, g):
    return fw.stack(list(g), axis=ctx.attrs["axis"])


@vjp("flip", inputs=False)
def _flip(ctx, g):
    return fw.flip(g, axis=list(ctx.attrs["axis"]))


@vjp("rot90", inputs=False)
def _rot90(ctx, g):
    return fw.rot90(g, k=-ctx.attrs["k"], axes=list(ctx.attrs["axes"]))


@vjp("roll", inputs=False)
def _roll(ctx, g):
    shifts = [-s for s in ctx.attrs["shifts"]]
    axis = ctx.attrs["axis"]
    return fw.roll(g, shifts=shifts, axis=None if axis is None else list(axis))


@vjp("tile", inputs=False)
def _tile(ctx, g):
    return gather_transpose(g, ctx, 0, lambda ids: call("tile", ids, **ctx.attrs))


@vjp("pad", inputs=False)
def _pad(ctx, g):
    attrs = dict(ctx.attrs)
    attrs["value"] = -1
    return gather_transpose(g, ctx, 0, lambda ids: call("pad", ids, **attrs))


@vjp("repeat_interleave")
def _repeat_interleave(ctx, g):
    x, reps = ctx.inputs
    return gather_transpose(
        g, ctx, 0, lambda ids: call("repeat_interleave", ids, reps, **ctx.attrs)), None


@vjp("as_strided", inputs=False)
def _as_strided(ctx, g):
    return gather_transpose(g, ctx, 0, lambda ids: call("as_strided", ids, **ctx.attrs))


@vjp("kron")
def _kron(ctx, g):
    # kron(x, y)[i*p + k, ...] = x[i, ...] * y[k, ...]: view g as [x0, y0, x1, y1, ...]
    x, y = ctx.inputs
    nd = max(x.ndim, y.ndim)
    xs = [1] * (nd - x.ndim) + list(x.shape)
    ys = [1] * (nd - y.ndim) + list(y.shape)
    inter = []
    for a, b in zip(xs, ys):
        inter += [a, b]
    g4 = reshape_to(g, inter)
    xe = reshape_to(x, [d for a in xs for d in (a, 1)])
    ye = reshape_to(y, [d for b in ys for d in (1, b)])
    gx = gy = None
    if ctx.needs(0):
        gx = reshape_to(fw.sum(g4 * conj(ye), axis=[2 * i + 1 for i in range(nd)]), x.shape)
    if ctx.needs(1):
        gy = reshape_to(fw.sum(g4 * conj(xe), axis=[2 * i for i in range(nd)]), y.shape)
    return gx, gy
