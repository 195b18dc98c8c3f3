"""The SPMD rules of eager auto-parallel: ``RULES = {op name: rule}``.

A rule gets a `spmd.Ctx` (the op, its attrs, a `Spec` per tensor input, the mesh,
the global output shapes) and returns a `spmd.Plan` — the placements each input
must be resharded to and the placements of the outputs — or None to decline
(the replicate fallback then runs, and is counted). Rules decide one mesh axis
at a time. To add one: write ``def rule(ctx) -> Plan | None`` below and register
it with ``@register("op_name", ...)``; `spmd._run` checks every output's local
shape against its placements, so a wrong rule fails loudly, never silently.

Partial placements survive only linear ops (sum of partials, partial times a
replicated factor, sums/means, reshapes/transposes, matmul with one partial
factor); any other use reduces them first."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Partial, Replicate, Shard
from fw.distributed.auto_parallel.spmd import Plan

__all__ = ["RULES", "register"]

RULES: dict = {}
R = Replicate()


def register(*names):
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return deco


def _is_sum_partial(p):
    return isinstance(p, Partial) and int(p.reduce_type) == 0


def _tensor_idx(ctx):
    return [i for i, s in enumerate(ctx.specs) if s is not None]


def _fresh(ctx):
    return [[] if s is not None else None for s in ctx.specs]


# ------------------------------------------------------------ elementwise
_LINEAR_ALL = {"add", "subtract"}                    # partial op partial
_LINEAR_ONE = {"multiply", "scale", "neg", "positive", "real", "imag", "conj"}
_LINEAR_FIRST = {"divide"}


def elementwise(ctx):
    """Broadcasting elementwise ops: a sharded dim stays sharded (every input that
    has the dim at full size is sharded alike; broadcast inputs are replicated)."""
    if ctx.out_shapes is None or len(ctx.out_shapes) != ctx.op.num_outputs:
        return None
    out_shape = ctx.out_shapes[0]
    if any(list(s) != list(out_shape) for s in ctx.out_shapes):
        return None
    nd = len(out_shape)
    idx = _tensor_idx(ctx)
    if any(ctx.specs[i].ndim > nd for i in idx):
        return None
    name = ctx.op.name
    scalars_only = len(idx) == len(ctx.op.input_names)   # no Python-number operand
    ins = _fresh(ctx)
    outs = []
    for a in range(ctx.mesh.ndim):
        parts = [i for i in idx if isinstance(ctx.specs[i].placements[a], Partial)]
        lin = False
        if parts and all(_is_sum_partial(ctx.specs[i].placements[a]) for i in parts):
            if name in _LINEAR_ALL:
                lin = len(parts) == len(idx) and scalars_only
            elif name in _LINEAR_ONE:
                lin = len(parts) == 1 and (name != "scale" or ctx.attrs.get("bias", 0) == 0)
            elif name in _LINEAR_FIRST:
                lin = parts == [idx[0]] and len(parts) == 1
        if lin:
            for i in idx:
                ins[i].append(Partial() if i in parts else R)
            outs.append(Partial())
            continue
        od = None
        for i in idx:
            p = ctx.specs[i].placements[a]
            if isinstance(p, Shard):
                d = p.dim + nd - ctx.specs[i].ndim
                if ctx.specs[i].shape[p.dim] == out_shape[d] and Shard(d) not in outs:
                    od = d
                    break
        for i in idx:
            s = ctx.specs[i]
            d = None if od is None else od - (nd - s.ndim)
            ok = d is not None and d >= 0 and s.shape[d] == out_shape[od]
            ins[i].append(Shard(d) if ok else R)
        outs.append(Shard(od) if od is not None else R)
    return Plan(ins, [outs] * ctx.op.num_outputs)


def _elementwise_names():
    from fw.core.internal import OPS

    skip = {"allclose", "equal_all", "frexp"}
    names = []
    for n, op in OPS.items():
        if n in skip or op.variadic >= 0 or not op.input_names:
            continue
        if op.family in ("elementwise", "activation") and "axis" not in op.attrs \
                and "dim" not in op.attrs:
            names.append(n)
    names += ["cast", "assign", "clone", "dropout"]
    return [n for n in names if n in OPS]


register(*_elementwise_names())(elementwise)


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


# ------------------------------------------------------------ reductions
def _axes(attr, nd):
    if attr is None:
        return list(range(nd))
    ax = [attr] if isinstance(attr, int) else list(attr)
    if not ax:
        return list(range(nd))
    return sorted({int(x) % max(nd, 1) for x in ax})


@register("sum", "mean")
def reduce_sum_mean(ctx):
    """Sum/mean over a sharded dim -> Partial (a mean sums locally and divides by the
    global count, so uneven blocks are right); other sharded dims stay sharded."""
    (sx,) = ctx.specs
    nd = sx.ndim
    axes = _axes(ctx.attrs.get("axis"), nd)
    keep = bool(ctx.attrs.get("keepdim", False))
    shape = [1 if d in axes else s for d, s in enumerate(sx.shape)] if keep else \
        [s for d, s in enumerate(sx.shape) if d not in axes]
    ins, outs = [[]], []
    partial_from_shard = False
    for a in range(ctx.mesh.ndim):
        p = sx.placements[a]
        if isinstance(p, Partial):
            if _is_sum_partial(p):
                ins[0].append(p), outs.append(Partial())
            else:
                ins[0].append(R), outs.append(R)
        elif isinstance(p, Shard):
            ins[0].append(p)
            if p.dim in axes:
                outs.append(Partial())
                partial_from_shard = True
            else:
                outs.append(Shard(p.dim if keep else p.dim - sum(1 for d in axes if d < p.dim)))
        else:
            ins[0].append(R), outs.append(R)
    if ctx.op.name == "mean" and partial_from_shard:
        count = 1
        for d in axes:
            count *= sx.shape[d]
        lattrs = {"axis": ctx.attrs.get("axis"), "dtype": None, "keepdim": keep}

        def post(outs_, c=float(count)):
            return (outs_[0] * (1.0 / c),)
        return Plan(ins, [outs], attrs=lattrs, op="sum", shapes=[shape], post=post)
    return Plan(ins, [outs], shapes=[shape])


# ------------------------------------------------------------ shape ops
@register("reshape")
def reshape(ctx):
    """A sharded dim that survives the reshape (same size, same number of elements
    before it) stays sharded; the local op gets the local target shape."""
    (sx,) = ctx.specs
    if ctx.out_shapes is None:
        return None
    out_shape = ctx.out_shapes[0]
    ins, outs = [[]], []
    for a in range(ctx.mesh.ndim):
        p = sx.placements[a]
        if isinstance(p, Partial):
            ins[0].append(p if _is_sum_partial(p) else R)
            outs.append(Partial() if _is_sum_partial(p) else R)
            continue
        nd_out = None
        if isinstance(p, Shard):
            before = 1
            for s in sx.shape[:p.dim]:
                before *= s
            acc = 1
            for d, s in enumerate(out_shape):
                if acc == before and s == sx.shape[p.dim]:
                    nd_out = d
                    break
                acc *= s
        if nd_out is not None and Shard(nd_out) not in outs:
            ins[0].append(p), outs.append(Shard(nd_out))
        else:
            ins[0].append(R), outs.append(R)
    lattrs = dict(ctx.attrs)
    lattrs["shape"] = ctx.local_shape(out_shape, outs)
    return Plan(ins, [outs], attrs=lattrs)


@register("transpose")
def transpose(ctx):
    (sx,) = ctx.specs
    perm = ctx.attrs.get("perm")
    nd = sx.ndim
    perm = list(range(nd))[::-1] if perm is None else [int(p) % nd for p in perm]
    ins, outs = [[]], []
    for a in range(ctx.mesh.ndim):
        p = sx.placements[a]
        if isinstance(p, Shard):
            ins[0].append(p), outs.append(Shard(perm.index(p.dim)))
        elif _is_sum_partial(p):
            ins[0].append(p), outs.append(Partial())
        else:
            ins[0].append(R), outs.append(R)
    return Plan(ins, [outs])


@register("softmax", "log_softmax")
def softmax(ctx):
    """Softmax along a dim that is not sharded: local; the softmax dim is gathered."""
    (sx,) = ctx.specs
    nd = sx.ndim
    ax = int(ctx.attrs.get("axis", -1)) % max(nd, 1)
    ins, outs = [[]], []
    for a in range(ctx.mesh.ndim):
        p = sx.placements[a]
        if isinstance(p, Shard) and p.dim != ax:
            ins[0].append(p), outs.append(p)
        else:
            ins[0].append(R), outs.append(R)
    return Plan(ins, [outs])


# ------------------------------------------------------------ nn ops
@register("embedding")
def embedding(ctx):
    """ids Shard(d) with the table replicated -> Shard(d); a column-split table
    (Shard(1)) with replicated ids -> the hidden dim sharded; a row-split
    (vocabulary) table is gathered."""
    si, sw = ctx.specs
    if si is None or sw is None or sw.ndim != 2:
        return None
    nd = si.ndim
    ins, outs = [[], []], []
    for a in range(ctx.mesh.ndim):
        pi, pw = si.placements[a], sw.placements[a]
        if isinstance(pw, Shard) and pw.dim == 1:
            w = (R, Shard(1), Shard(nd))
        elif isinstance(pi, Shard):
            w = (pi, R, Shard(pi.dim))
        else:
            w = (R, R, R)
        if isinstance(w[2], Shard) and w[2] in outs:
            w = (R, R, R)
        ins[0].append(w[0]), ins[1].append(w[1]), outs.append(w[2])
    return Plan(ins, [outs])


@register("layer_norm")
def layer_norm(ctx):
    """Normalising over unsharded trailing dims: batch-sharded x stays sharded (the
    mean/variance outputs too); a sharded normalised dim is gathered."""
    sx, sw, sb = ctx.specs
    if ctx.out_shapes is None:
        return None
    begin = int(ctx.attrs.get("begin_norm_axis", 1)) % max(sx.ndim, 1)
    stat_nd = len(ctx.out_shapes[1])
    ins = [[], [] if sw is not None else None, [] if sb is not None else None]
    o0, o1 = [], []
    for a in range(ctx.mesh.ndim):
        p = sx.placements[a]
        ok = isinstance(p, Shard) and p.dim < begin and p.dim < stat_nd and Shard(p.dim) not in o0
        ins[0].append(p if ok else R)
        for k in (1, 2):
            if ins[k] is not None:
                ins[k].append(R)
        o0.append(p if ok else R)
        o1.append(p if ok else R)
    return Plan(ins, [o0, o1, o1])


@register("cross_entropy_with_softmax")
def cross_entropy(ctx):
    """Batch-sharded logits and labels (the class dim whole): per-sample losses stay
    sharded; reduction='sum' gives a Partial loss; 'mean' (its divisor depends on
    the ignored labels of every rank) declines to the fallback."""
    sl, slab, sw = ctx.specs
    if sl is None or slab is None or ctx.out_shapes is None:
        return None
    red = ctx.attrs.get("reduction", "mean")
    if red not in ("none", "sum"):
        return None
    nd = sl.ndim
    ax = int(ctx.attrs.get("axis", -1)) % nd
    ins = [[], [], [] if sw is not None else None]
    o_loss, o_sm = [], []
    for a in range(ctx.mesh.ndim):
        p = sl.placements[a]
        ok = (isinstance(p, Shard) and p.dim != ax and p.dim < slab.ndim
              and slab.shape[p.dim] == sl.shape[p.dim] and Shard(p.dim) not in o_sm)
        ins[0].append(p if ok else R)
        ins[1].append(p if ok else R)
        if ins[2] is not None:
            ins[2].append(R)
        o_sm.append(p if ok else R)
        o_loss.append((p if red == "none" else Partial()) if ok else R)
    return Plan(ins, [o_loss, o_sm])
