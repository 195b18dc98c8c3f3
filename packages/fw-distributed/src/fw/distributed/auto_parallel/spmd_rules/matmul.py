"""SPMD rules of matmul-like ops: contractions give Partial, free dims stay sharded."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Partial, Shard
from fw.distributed.auto_parallel.spmd import Plan
from fw.distributed.auto_parallel.spmd_rules._base import (
    R,
    is_sum_partial,
    norm_axes,
    register,
)

_is_sum_partial = is_sum_partial
_axes = norm_axes


# ------------------------------------------------------------ matmul / linear
@register("matmul")
def matmul(ctx):
    """x[..., m, k] @ y[..., k, n]: Shard(k)@Shard(k) -> Partial, Shard(m)@R -> Shard(m),
    R@Shard(n) -> Shard(n), batch dims follow x (or y)."""
    sx, sy = ctx.specs
    if sx is None or sy is None or sx.ndim < 2 or sy.ndim < 2 or ctx.out_shapes is None:
        return None
    tx, ty = ctx.attrs.get("transpose_x", False), ctx.attrs.get("transpose_y", False)
    nx, ny = sx.ndim, sy.ndim
    on = len(ctx.out_shapes[0])
    mx, kx = (nx - 1, nx - 2) if tx else (nx - 2, nx - 1)
    ky, ny_ = (ny - 1, ny - 2) if ty else (ny - 2, ny - 1)
    out_shape = ctx.out_shapes[0]
    ins = [[], []]
    outs = []

    def batch_of(spec, d, n):
        o = d + on - n
        return o if d < n - 2 and spec.shape[d] == out_shape[o] and out_shape[o] > 1 else None

    def other_batch(spec, o, n):
        d = o - (on - n)
        if d < 0:
            return R
        return Shard(d) if spec.shape[d] == out_shape[o] else R

    for a in range(ctx.mesh.ndim):
        px, py = sx.placements[a], sy.placements[a]
        if isinstance(px, Partial) or isinstance(py, Partial):
            if _is_sum_partial(px) and not isinstance(py, (Partial, Shard)):
                ins[0].append(px), ins[1].append(R), outs.append(Partial())
                continue
            if _is_sum_partial(py) and not isinstance(px, (Partial, Shard)):
                ins[0].append(R), ins[1].append(py), outs.append(Partial())
                continue
            px = R if isinstance(px, Partial) else px
            py = R if isinstance(py, Partial) else py
        dx = px.dim if isinstance(px, Shard) else None
        dy = py.dim if isinstance(py, Shard) else None
        bx = batch_of(sx, dx, nx) if dx is not None else None
        by = batch_of(sy, dy, ny) if dy is not None else None
        if dx == kx and dy == ky:
            w = (Shard(kx), Shard(ky), Partial())
        elif dx == mx:
            w = (Shard(mx), R, Shard(on - 2))
        elif dy == ny_:
            w = (R, Shard(ny_), Shard(on - 1))
        elif bx is not None and Shard(bx) not in outs:
            w = (Shard(dx), other_batch(sy, bx, ny), Shard(bx))
        elif by is not None and Shard(by) not in outs:
            w = (other_batch(sx, by, nx), Shard(dy), Shard(by))
        elif dx == kx or dy == ky:
            w = (Shard(kx), Shard(ky), Partial())
        else:
            w = (R, R, R)
        if isinstance(w[2], Shard) and w[2] in outs:   # a dim already split by another axis
            w = (R, R, R)
        ins[0].append(w[0]), ins[1].append(w[1]), outs.append(w[2])
    return Plan(ins, [outs])


@register("linear")
def linear(ctx):
    """x[..., in] @ W[in, out] + b[out]: column (W Shard(1), b Shard(0)), row (x
    Shard(-1), W Shard(0) -> Partial, b added once) and batch (x Shard(d))."""
    sx, sw, sb = ctx.specs
    if sx is None or sw is None or sw.ndim != 2 or sx.ndim < 1:
        return None
    nd = sx.ndim
    ins = [[], [], [] if sb is not None else None]
    outs = []
    for a in range(ctx.mesh.ndim):
        px, pw = sx.placements[a], sw.placements[a]
        pb = sb.placements[a] if sb is not None else R
        if any(isinstance(p, Partial) for p in (px, pw, pb)):
            if _is_sum_partial(px) and not isinstance(pw, (Partial, Shard)) \
                    and not isinstance(pb, Shard):
                w = (px, R, Partial(), Partial())
            else:
                px = R if isinstance(px, Partial) else px
                pw = R if isinstance(pw, Partial) else pw
                w = None
        else:
            w = None
        if w is None:
            dx = px.dim if isinstance(px, Shard) else None
            dw = pw.dim if isinstance(pw, Shard) else None
            if dw == 1:
                w = (R, Shard(1), Shard(0), Shard(nd - 1))
            elif dx == nd - 1 or dw == 0:
                w = (Shard(nd - 1), Shard(0), Partial(), Partial())
            elif dx is not None and Shard(dx) not in outs:
                w = (Shard(dx), R, R, Shard(dx))
            else:
                w = (R, R, R, R)
        if isinstance(w[3], Shard) and w[3] in outs:
            w = (R, R, R, R)
        ins[0].append(w[0]), ins[1].append(w[1])
        if sb is not None:
            ins[2].append(w[2])
        outs.append(w[3])
    return Plan(ins, [outs])


