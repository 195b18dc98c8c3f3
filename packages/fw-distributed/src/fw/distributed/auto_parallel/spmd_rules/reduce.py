"""SPMD rules of reductions, cumulative ops and ops along one axis (softmax, sort)."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Partial, Shard
from fw.distributed.auto_parallel.spmd import Plan
from fw.distributed.auto_parallel.spmd_rules._base import (
    SUM,
    R,
    fix_broadcast,
    is_sum_partial,
    label_plan,
    n_outputs,
    norm_axes,
    register,
)

_is_sum_partial = is_sum_partial
_axes = norm_axes


# ------------------------------------------------------------ reductions
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
        if count == 0:       # the mean of nothing (NaN): not worth a plan
            return None
        lattrs = {"axis": ctx.attrs.get("axis"), "dtype": None, "keepdim": keep}

        def post(outs_, c=float(count)):
            return (outs_[0] * (1.0 / c),)
        return Plan(ins, [outs], attrs=lattrs, op="sum", shapes=[shape], post=post)
    return Plan(ins, [outs], shapes=[shape])



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




# ------------------------------------------------------------ generic reductions
def reduce_plan(ctx, axes, keep, contract=None, extra_out=0, n_out=None):
    """x reduced over `axes`: the kept dims keep their labels; a reduced dim is
    contracted (Partial of `contract`) or, for a non-linear reduction, whole.
    `extra_out` leading output dims (quantile's q) are whole."""
    sx = ctx.specs[0]
    nd = sx.ndim
    lab = [None if (d in axes and contract is None) else f"d{d}" for d in range(nd)]
    if keep:
        out = [None if d in axes else f"d{d}" for d in range(nd)]
    else:
        out = [f"d{d}" for d in range(nd) if d not in axes]
    out = [None] * extra_out + out
    n = n_outputs(ctx) if n_out is None else n_out
    if ctx.out_shapes is not None and any(len(s) != len(out) for s in ctx.out_shapes[:n]):
        return None
    ins = [lab] + [None] * (len(ctx.specs) - 1)
    return label_plan(ctx, ins, [out] * n, contract=contract)


def _reducer(contract=None, axis="axis"):
    def rule(ctx):
        nd = ctx.specs[0].ndim
        return reduce_plan(ctx, norm_axes(ctx.attrs.get(axis), nd),
                           bool(ctx.attrs.get("keepdim", False)), contract)
    rule.__doc__ = ("Reduction: kept dims stay sharded; a sharded reduced dim gives "
                    + ("a Partial(sum) result." if contract is not None else
                       "nothing local (the reduction is not linear): it is gathered."))
    return rule


register("nansum", "count_nonzero")(_reducer(SUM))
register("prod", "nanmean", "max", "min", "amax", "amin", "all", "any", "var", "std",
         "logsumexp", "median", "nanmedian", "vector_norm", "matrix_norm")(_reducer())


@register("argmax", "argmin")
def arg_reduce(ctx):
    """Indices along a whole axis (axis=None flattens: every dim whole)."""
    nd = ctx.specs[0].ndim
    ax = ctx.attrs.get("axis")
    return reduce_plan(ctx, norm_axes(ax, nd), bool(ctx.attrs.get("keepdim", False)))


@register("quantile", "nanquantile")
def quantile(ctx):
    """Quantiles over whole axes; a list of q adds a leading (whole) output dim."""
    nd = ctx.specs[0].ndim
    axes = norm_axes(ctx.attrs.get("axis"), nd)
    keep = bool(ctx.attrs.get("keepdim", False))
    q = ctx.attrs.get("q")
    extra = 1 if isinstance(q, (list, tuple)) or (ctx.specs[1:2] and ctx.specs[1] is not None) \
        else 0
    return reduce_plan(ctx, axes, keep, extra_out=extra)


@register("reduce_as")
def reduce_as(ctx):
    """Sum x down to target's shape: summed dims give Partial(sum); target (read
    for its shape only) is sharded like the output."""
    sx, st = ctx.specs
    nx, nt = sx.ndim, st.ndim
    lab_x = [f"d{d}" for d in range(nx)]
    out = []
    for j in range(nt):
        d = j + nx - nt
        out.append(f"d{d}" if sx.shape[d] == st.shape[j] else None)
    return label_plan(ctx, [lab_x, list(out)], [out], contract=SUM)


# ------------------------------------------------------------ along one axis
def along_plan(ctx, axes, n_in=None, out_axes=None):
    """Ops that mix values along `axes` only (cumulative, sort, flip, fft): those
    dims whole, every other dim sharded alike in the inputs and outputs (which
    have the input's rank)."""
    sx = ctx.specs[0]
    nd = sx.ndim
    lab = [None if d in axes else f"d{d}" for d in range(nd)]
    ins = []
    for s in ctx.specs:
        if s is None:
            ins.append(None)
        elif s.ndim == nd:
            ins.append(list(lab))
        else:
            ins.append(None)
    oax = axes if out_axes is None else out_axes
    out = [None if d in oax else f"d{d}" for d in range(nd)]
    n = n_outputs(ctx)
    if ctx.out_shapes is not None and any(len(s) != nd for s in ctx.out_shapes[:n]):
        return None
    return label_plan(ctx, ins, [out] * n)


def _along(attr="axis", default=None, none_all=True):
    def rule(ctx):
        nd = ctx.specs[0].ndim
        a = ctx.attrs.get(attr, default)
        if a is None and not none_all:
            a = default
        return along_plan(ctx, norm_axes(a, nd) if nd else [])
    rule.__doc__ = (f"Mixes values along ``{attr}`` only: that dim whole (None: every "
                    f"dim), the others stay sharded.")
    return rule


register("cumsum", "logcumsumexp", "cummax", "cummin", "sort", "argsort", "roll",
         "fftshift")(_along("axis"))
register("cumprod")(_along("dim"))
register("flip")(_along("axis"))
register("fft_c2c", "fft_r2c", "fft_c2r")(_along("axes"))
register("normalize", "maxout")(_along("axis", 1, none_all=False))
register("glu", "softmax_grad", "log_softmax_grad", "gumbel_softmax")(_along("axis", -1, False))


@register("cumulative_trapezoid", "diff")
def along_sized(ctx):
    """Along one axis whose size changes (diff, cumulative_trapezoid): that dim
    whole; prepend/append/x (full rank) sharded alike."""
    nd = ctx.specs[0].ndim
    ax = int(ctx.attrs.get("axis", -1)) % max(nd, 1)
    return along_plan(ctx, [ax] if nd else [])


@register("trapezoid")
def trapezoid(ctx):
    """Integration along a whole axis (removed); the other dims stay sharded."""
    sy = ctx.specs[0]
    nd = sy.ndim
    ax = int(ctx.attrs.get("axis", -1)) % max(nd, 1)
    lab = [None if d == ax else f"d{d}" for d in range(nd)]
    sx = ctx.specs[1]
    lx = None if sx is None or sx.ndim != nd else list(lab)
    if lx is not None:
        fix_broadcast([lx], [sx], sy.shape)
    return label_plan(ctx, [lab, lx], [[f"d{d}" for d in range(nd) if d != ax]])


@register("topk", "kthvalue", "mode")
def topk(ctx):
    """Selection along a whole axis; the other dims stay sharded (kthvalue/mode
    drop the axis unless keepdim)."""
    nd = ctx.specs[0].ndim
    ax = ctx.attrs.get("axis", -1)
    ax = int(-1 if ax is None else ax) % max(nd, 1)
    if ctx.op.name == "topk":
        return along_plan(ctx, [ax] if nd else [])
    return reduce_plan(ctx, [ax] if nd else [], bool(ctx.attrs.get("keepdim", False)))


@register("cosine_similarity", "pairwise_distance")
def pair_reduce(ctx):
    """A norm/dot along one axis of two broadcast inputs: that axis whole."""
    if ctx.out_shapes is None:
        return None
    s1, s2 = ctx.specs
    nd = max(s1.ndim, s2.ndim)
    if ctx.op.name == "cosine_similarity":
        ax = int(ctx.attrs.get("axis", 1)) % max(nd, 1)
        keep = False
    else:
        ax = nd - 1
        keep = bool(ctx.attrs.get("keepdim", False))
    full = [None if d == ax else f"d{d}" for d in range(nd)]
    ins = []
    for s in (s1, s2):
        lab = full[nd - s.ndim:]
        ins.append(lab)
    shape = [max(a, b) for a, b in zip([1] * (nd - s1.ndim) + s1.shape,
                                       [1] * (nd - s2.ndim) + s2.shape)]
    fix_broadcast(ins, [s1, s2], shape)
    out = full if keep else [x for d, x in enumerate(full) if d != ax]
    if len(ctx.out_shapes[0]) != len(out):
        return None
    return label_plan(ctx, ins, [out])


@register("vecdot")
def vecdot(ctx):
    """sum(conj(x) * y) along an axis: a sharded axis gives Partial(sum)."""
    if ctx.out_shapes is None:
        return None
    s1, s2 = ctx.specs
    nd = max(s1.ndim, s2.ndim)
    ax = int(ctx.attrs.get("axis", -1)) % max(nd, 1)
    full = [f"d{d}" for d in range(nd)]
    ins = [full[nd - s1.ndim:], full[nd - s2.ndim:]]
    shape = [max(a, b) for a, b in zip([1] * (nd - s1.ndim) + s1.shape,
                                       [1] * (nd - s2.ndim) + s2.shape)]
    fix_broadcast(ins, [s1, s2], shape)
    out = [x for d, x in enumerate(full) if d != ax]
    return label_plan(ctx, ins, [out], contract=SUM)
