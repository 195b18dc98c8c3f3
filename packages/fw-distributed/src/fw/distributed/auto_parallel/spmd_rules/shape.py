"""SPMD rules of shape ops: reshape, transpose, squeeze, concat, split, pad, ..."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Partial, Shard
from fw.distributed.auto_parallel.spmd import Plan
from fw.distributed.auto_parallel.spmd_rules._base import (
    R,
    broadcast_labels,
    dims,
    fix_broadcast,
    is_sum_partial,
    label_plan,
    norm_axes,
    register,
    replicate_only,
)

_is_sum_partial = is_sum_partial
_axes = norm_axes


# ------------------------------------------------------------ shape ops
@register("reshape")
def reshape(ctx):
    """A sharded dim that survives the reshape (same size, same number of elements
    before it) stays sharded; so does one that leads a merge (it becomes the outer
    part of a bigger dim) when it splits evenly over its mesh axis, or a split
    whose leading new dim splits evenly (the blocks stay contiguous and
    balanced). The local op gets the local target shape."""
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
        # (an empty block would put a 0 in the local target shape, which reshape
        # reads as "keep this dim": such dims are gathered)
        if isinstance(p, Shard) and sx.shape[p.dim] >= ctx.mesh.shape[a]:
            before = 1
            for s in sx.shape[:p.dim]:
                before *= s
            acc = 1
            for d, s in enumerate(out_shape):
                if acc == before and s == sx.shape[p.dim]:
                    nd_out = d
                    break
                acc *= s
            if nd_out is None and sx.placements.count(p) == 1:
                nd_out = _merge_or_split(sx.shape, p.dim, out_shape, before,
                                         ctx.mesh.shape[a])
        if nd_out is not None and Shard(nd_out) not in outs:
            ins[0].append(p), outs.append(Shard(nd_out))
        else:
            ins[0].append(R), outs.append(R)
    lattrs = dict(ctx.attrs)
    lattrs["shape"] = ctx.local_shape(out_shape, outs)
    return Plan(ins, [outs], attrs=lattrs)


def _merge_or_split(shape, i, out_shape, before, n):
    """The output dim led by input dim `i` in a merge (input dims i..k make it) or
    a split (it and the next output dims make dim i), when the balanced blocks
    line up; else None."""
    acc = 1
    for d, s in enumerate(out_shape):
        if acc == before:
            size = shape[i]
            if s > size and s % size == 0 and size % n == 0:        # merge
                prod = 1
                for k in range(i, len(shape)):
                    prod *= shape[k]
                    if prod == s:
                        return d
                    if prod > s:
                        return None
            if 0 < s < size and size % s == 0 and s % n == 0:        # split
                prod = 1
                for k in range(d, len(out_shape)):
                    prod *= out_shape[k]
                    if prod == size:
                        return d
                    if prod > size:
                        return None
            return None
        if acc > before:
            return None
        acc *= s
    return None


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




# ------------------------------------------------------------ label-based shape ops
def _with_local(plan, ctx, key, k=0):
    """Set attr `key` of the local op to this rank's block of output `k`."""
    if plan is None or ctx.out_shapes is None:
        return None
    lattrs = dict(ctx.attrs)
    lattrs[key] = ctx.local_shape(ctx.out_shapes[k], plan.outputs[k])
    plan.attrs = lattrs
    return plan


@register("squeeze")
def squeeze(ctx):
    """Removed size-1 dims whole; the others keep their labels."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    nd = sx.ndim
    ax = ctx.attrs.get("axis")
    cand = norm_axes(ax, nd) if ax not in (None, (), []) else list(range(nd))
    gone = [d for d in cand if sx.shape[d] == 1]
    out = [f"d{d}" for d in range(nd) if d not in gone]
    if len(out) != len(ctx.out_shapes[0]):
        return None
    # the local op removes exactly the globally removed dims (a sharded dim may be of
    # size 1 in a block; with no dim removed, the local op is a copy)
    if gone:
        return label_plan(ctx, [[None if d in gone else f"d{d}" for d in range(nd)]], [out],
                          attrs=dict(ctx.attrs, axis=tuple(gone)))
    return label_plan(ctx, [dims(nd)], [out], attrs={}, op="assign")


@register("unsqueeze")
def unsqueeze(ctx):
    """New size-1 dims are whole; the input's dims keep their labels."""
    if ctx.out_shapes is None:
        return None
    nd = ctx.specs[0].ndim
    on = len(ctx.out_shapes[0])
    ax = ctx.attrs.get("axis")
    ax = [ax] if isinstance(ax, int) else list(ax or ())
    out = dims(nd)
    for a in ax:                 # inserted one after another, as the op does
        a = int(a)
        out.insert(a if a >= 0 else a + len(out) + 1, None)
    if len(out) != on:
        return None
    return label_plan(ctx, [dims(nd)], [out])


def _split_ok(size, ctx):
    n = 1
    for m in ctx.mesh.shape:
        n *= m
    return size % n == 0


@register("flatten")
def flatten(ctx):
    """The merged dims [start, stop] become one: its leading dim may stay sharded
    when its size splits evenly over the whole mesh (the blocks stay contiguous and
    balanced); the other merged dims are whole."""
    sx = ctx.specs[0]
    nd = sx.ndim
    if nd == 0:
        return label_plan(ctx, [[]], [[None]])
    a = int(ctx.attrs.get("start_axis", 0)) % nd
    b = int(ctx.attrs.get("stop_axis", -1)) % nd
    lab = []
    for d in range(nd):
        if a < d <= b:
            lab.append(None)
        elif d == a and b > a and not _split_ok(sx.shape[d], ctx):
            lab.append(None)
        else:
            lab.append(f"d{d}")
    out = lab[:a + 1] + lab[b + 1:]
    return label_plan(ctx, [lab], [out])


@register("unflatten")
def unflatten(ctx):
    """One dim split into `shape`: its leading new dim may stay sharded when its
    size splits evenly over the mesh; the local op gets the local sizes."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    nd = sx.ndim
    ax = int(ctx.attrs.get("axis", 0)) % nd
    on = len(ctx.out_shapes[0])
    k = on - nd + 1
    first = ctx.out_shapes[0][ax]
    lab = [f"d{d}" if d != ax or _split_ok(first, ctx) else None for d in range(nd)]
    out = lab[:ax] + [lab[ax]] + [None] * (k - 1) + lab[ax + 1:]
    plan = label_plan(ctx, [lab], [out])
    loc = ctx.local_shape(ctx.out_shapes[0], plan.outputs[0])
    plan.attrs = dict(ctx.attrs, shape=tuple(loc[ax:ax + k]))
    return plan


@register("expand")
def expand(ctx):
    """Broadcast dims (size 1 -> n) and new dims are whole; the others keep their
    labels and the local op expands to the local block."""
    if ctx.out_shapes is None:
        return None
    out_shape = ctx.out_shapes[0]
    ins = broadcast_labels(ctx.specs, len(out_shape))
    fix_broadcast(ins, ctx.specs, out_shape)
    return _with_local(label_plan(ctx, ins, [dims(len(out_shape))]), ctx, "shape")


@register("expand_as", "broadcast_tensors")
def broadcast_to(ctx):
    """Like expand; expand_as's y (read for its shape) is sharded like the output."""
    if ctx.out_shapes is None:
        return None
    out_shape = ctx.out_shapes[0]
    on = len(out_shape)
    if ctx.op.name == "expand_as":
        sx, sy = ctx.specs
        ins = broadcast_labels([sx], on)
        fix_broadcast(ins, [sx], out_shape)
        return label_plan(ctx, [ins[0], dims(on)], [dims(on)])
    (specs,) = ctx.specs
    ins = broadcast_labels(specs, on)
    fix_broadcast(ins, specs, out_shape)
    return label_plan(ctx, [ins], [dims(on)] * len(ctx.out_shapes))


@register("tile")
def tile(ctx):
    """Repeated dims are whole (a tiled block is not a block of the tiling); dims
    repeated once keep their labels."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    on = len(ctx.out_shapes[0])
    reps = [int(r) for r in (ctx.attrs.get("repeat_times") or ())]
    reps = [1] * (on - len(reps)) + reps
    lab = [f"d{d + on - sx.ndim}" if reps[d + on - sx.ndim] == 1 else None
           for d in range(sx.ndim)]
    return label_plan(ctx, [lab], [dims(on)])


@register("concat")
def concat(ctx):
    """Joined along `axis` (whole); the other dims sharded alike in every input."""
    (specs,) = ctx.specs
    live = [s for s in specs if s is not None]
    if not live:
        return None
    nd = live[0].ndim
    ax = int(ctx.attrs.get("axis", 0)) % max(nd, 1)
    lab = [None if d == ax else f"d{d}" for d in range(nd)]
    return label_plan(ctx, [[list(lab) if s is not None else None for s in specs]], [lab])


@register("stack")
def stack(ctx):
    """A new (whole) dim at `axis`; the inputs' dims keep their labels."""
    (specs,) = ctx.specs
    live = [s for s in specs if s is not None]
    if not live:
        return None
    nd = live[0].ndim
    ax = int(ctx.attrs.get("axis", 0)) % (nd + 1)
    lab = dims(nd)
    out = lab[:ax] + [None] + lab[ax:]
    return label_plan(ctx, [[list(lab) if s is not None else None for s in specs]], [out])


@register("split", "unbind")
def split(ctx):
    """Cut along `axis` (whole); every piece keeps the other dims' sharding."""
    if ctx.out_shapes is None:
        return None
    nd = ctx.specs[0].ndim
    ax = int(ctx.attrs.get("axis", 0)) % max(nd, 1)
    lab = [None if d == ax else f"d{d}" for d in range(nd)]
    out = lab if ctx.op.name == "split" else [x for d, x in enumerate(lab) if d != ax]
    return label_plan(ctx, [lab], [out] * len(ctx.out_shapes))


@register("repeat_interleave")
def repeat_interleave(ctx):
    """Repeated along `axis` (whole; axis=None flattens: every dim whole)."""
    if ctx.specs[0] is None:
        return None
    nd = ctx.specs[0].ndim
    if ctx.specs[1] is not None:   # per-element repeats: a data-dependent output size
        return label_plan(ctx, [[None] * nd, [None] * ctx.specs[1].ndim],
                          [[None] * (len(ctx.out_shapes[0]) if ctx.out_shapes else 1)])
    ax = ctx.attrs.get("axis")
    axes = list(range(nd)) if ax is None else [int(ax) % max(nd, 1)]
    if ax is None:
        return label_plan(ctx, [[None] * nd, None], [[None]])
    lab = [None if d in axes else f"d{d}" for d in range(nd)]
    return label_plan(ctx, [lab, None], [lab])


@register("rot90")
def rot90(ctx):
    """The two rotated dims whole; the others keep their labels."""
    nd = ctx.specs[0].ndim
    axes = [int(a) % nd for a in (ctx.attrs.get("axes") or (0, 1))]
    lab = [None if d in axes else f"d{d}" for d in range(nd)]
    return label_plan(ctx, [lab], [lab])


@register("pad")
def pad(ctx):
    """Padded dims whole (a block's edge is not the tensor's); dims of unchanged
    size keep their labels."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    out_shape = ctx.out_shapes[0]
    if len(out_shape) != sx.ndim:
        return None
    lab = [f"d{d}" if sx.shape[d] == out_shape[d] else None for d in range(sx.ndim)]
    # reflect/replicate/circular padding reads the edges of every padded dim only
    return label_plan(ctx, [lab] + [None] * (len(ctx.specs) - 1), [lab])


@register("kron")
def kron(ctx):
    """kron(x, y): a dim of x that splits evenly over the mesh stays sharded (its
    blocks times y are contiguous blocks of the result); y is whole."""
    sx, sy = ctx.specs
    on = max(sx.ndim, sy.ndim)
    lab = [f"d{d + on - sx.ndim}" if _split_ok(sx.shape[d], ctx) else None
           for d in range(sx.ndim)]
    return label_plan(ctx, [lab, None], [dims(on)])


@register("view_dtype")
def view_dtype(ctx):
    """Reinterpreting the bytes changes the last dim: it is whole."""
    nd = ctx.specs[0].ndim
    lab = dims(nd)[:-1] + [None] if nd else []
    return label_plan(ctx, [lab], [lab])


replicate_only("as_strided reads arbitrary elements of the flat storage (strides and offset "
               "address the whole tensor), so no block of the output comes from one block "
               "of the input", "as_strided")
replicate_only("a dynamic-shape op of traced programs: its target shape is a tensor "
               "computed at run time, so the global shape a placement splits is unknown "
               "when the plan is made", "reshape_dyn", "expand_dyn", "full_dyn", "arange_dyn")
