"""SPMD rules of indexing ops: gather/scatter-like ops along an axis keep the
other dims sharded; the indexed dim is whole (or, for gathers, the index's own
dims carry the sharding); data-dependent ops are replicate-only."""

from __future__ import annotations

from fw.distributed.auto_parallel.spmd_rules._base import (
    SUM,
    broadcast_labels,
    dims,
    fix_broadcast,
    label_plan,
    norm_axes,
    register,
    replicate_only,
)


@register("gather")
def gather(ctx):
    """x gathered along `axis` by a 1-D/0-D index: x's other dims and the index's
    dims stay sharded."""
    sx, si = ctx.specs
    if ctx.out_shapes is None or sx.ndim == 0:
        return None
    nd = sx.ndim
    ax = int(ctx.attrs.get("axis") or 0) % nd
    lx = [None if d == ax else f"d{d}" for d in range(nd)]
    li = [f"i{k}" for k in range(si.ndim)]
    out = lx[:ax] + li + lx[ax + 1:]
    if len(out) != len(ctx.out_shapes[0]):
        return None
    return label_plan(ctx, [lx, li], [out])


@register("take_along_axis")
def take_along_axis(ctx):
    """Along `axis` whole; the other dims sharded alike in arr, indices and out."""
    sa, si = ctx.specs
    if ctx.out_shapes is None:
        return None
    nd = sa.ndim
    ax = int(ctx.attrs.get("axis", 0)) % max(nd, 1)
    out_shape = ctx.out_shapes[0]
    if si.ndim != nd or len(out_shape) != nd:
        return None
    # a dim is sharded only where arr, indices and out agree (gather semantics read
    # arr[..., k] at the output's own k; a broadcast or longer arr dim is whole)
    lab = [None if d == ax or not (sa.shape[d] == si.shape[d] == out_shape[d]) else f"d{d}"
           for d in range(nd)]
    return label_plan(ctx, [list(lab), list(lab)], [lab])


@register("put_along_axis")
def put_along_axis(ctx):
    """Written along `axis` (whole); the other dims sharded alike."""
    sa, si, sv = ctx.specs
    nd = sa.ndim
    ax = int(ctx.attrs.get("axis", 0)) % max(nd, 1)
    if si.ndim != nd or (sv is not None and sv.ndim not in (0, nd)):
        return None
    # sharded only where arr, indices and values agree (no broadcast, same length)
    lab = [None if d == ax or si.shape[d] != sa.shape[d]
           or (sv is not None and sv.ndim and sv.shape[d] != sa.shape[d]) else f"d{d}"
           for d in range(nd)]
    lv = list(lab) if sv is not None and sv.ndim == nd else None
    return label_plan(ctx, [lab, list(lab), lv], [lab])


@register("take")
def take(ctx):
    """x read at flat positions: x whole, the index (and out) sharded."""
    sx, si = ctx.specs
    if sx is None or si is None:
        return None
    # (an empty index block makes the local take return one element: blocks non-empty)
    return label_plan(ctx, [None, dims(si.ndim)], [dims(si.ndim)], nonempty=dims(si.ndim))


@register("gather_nd")
def gather_nd(ctx):
    """index[..., k] addresses x's first k dims (whole); the index's leading dims
    and x's trailing dims stay sharded."""
    sx, si = ctx.specs
    if ctx.out_shapes is None or si.ndim == 0:
        return None
    k = si.shape[-1]
    lx = [None] * k + [f"x{d}" for d in range(k, sx.ndim)]
    li = [f"i{d}" for d in range(si.ndim - 1)] + [None]
    out = li[:-1] + lx[k:]
    if len(out) != len(ctx.out_shapes[0]):
        return None
    return label_plan(ctx, [lx, li], [out])


@register("scatter")
def scatter(ctx):
    """Rows of x replaced/added by index along dim 0 (whole); the other dims sharded
    alike in x and updates."""
    sx, si, su = ctx.specs
    nd = sx.ndim
    lab = [None] + [f"d{d}" for d in range(1, nd)]
    lu = list(lab) if su.ndim == nd else None
    return label_plan(ctx, [lab, None, lu], [lab])


@register("scatter_nd_add")
def scatter_nd_add(ctx):
    """index[..., k] addresses x's first k dims (whole); x's trailing dims are
    sharded alike with the updates' trailing dims."""
    sx, si, su = ctx.specs
    if si.ndim == 0:
        return None
    k = si.shape[-1]
    lx = [None] * k + [f"x{d}" for d in range(k, sx.ndim)]
    tail = sx.ndim - k
    lu = [None] * (su.ndim - tail) + lx[k:] if su.ndim >= tail else None
    return label_plan(ctx, [lx, None, lu], [lx])


@register("index_add", "index_fill")
def index_add(ctx):
    """Slices along `axis` (whole) selected by index; the other dims sharded alike
    in x and value. index_add is also linear in (index, value) split along `axis`:
    each rank adds its slices, x once (a Partial x), and the result is Partial(sum)
    — the embedding gradient of a batch-sharded lookup stays on its rank until the
    data-parallel reduction instead of being gathered."""
    sx, si, sv = ctx.specs
    nd = sx.ndim
    ax = int(ctx.attrs.get("axis", 0)) % max(nd, 1)
    lab = [None if d == ax else f"d{d}" for d in range(nd)]
    lv = list(lab) if sv is not None and sv.ndim == nd else None
    li = None
    if ctx.op.name == "index_add" and lv is not None and si is not None and si.ndim == 1 \
            and sv.shape[ax] == si.shape[0]:
        lv[ax], li = "k", ["k"]
    ins = [lab, li, lv]
    fix_broadcast(ins, ctx.specs, sx.shape)
    if li is None:
        return label_plan(ctx, ins, [lab])
    return label_plan(ctx, ins, [lab], contract=SUM, additive=(0,))


@register("masked_fill")
def masked_fill(ctx):
    """Elementwise with broadcasting (x, mask, value)."""
    if ctx.out_shapes is None:
        return None
    on = len(ctx.out_shapes[0])
    ins = broadcast_labels(ctx.specs, on)
    fix_broadcast(ins, ctx.specs, ctx.out_shapes[0])
    return label_plan(ctx, ins, [dims(on)])


@register("strided_slice")
def strided_slice(ctx):
    """Sliced dims whole; the others keep their labels."""
    nd = ctx.specs[0].ndim
    axes = norm_axes(list(ctx.attrs.get("axes") or ()) or [], nd) \
        if ctx.attrs.get("axes") else []
    lab = [None if d in axes else f"d{d}" for d in range(nd)]
    return label_plan(ctx, [lab], [lab])


@register("slice_scatter")
def slice_scatter(ctx):
    """Sliced dims whole; the others sharded alike in x and value."""
    sx, sv = ctx.specs
    nd = sx.ndim
    axes = norm_axes(list(ctx.attrs.get("axes") or ()), nd) if ctx.attrs.get("axes") else []
    lab = [None if d in axes else f"d{d}" for d in range(nd)]
    return label_plan(ctx, [lab, list(lab) if sv.ndim == nd else None], [lab])


def _diag_axes(ctx, nd):
    a1 = int(ctx.attrs.get("axis1", 0)) % nd
    a2 = int(ctx.attrs.get("axis2", 1)) % nd
    return a1, a2


@register("diagonal", "trace")
def diagonal(ctx):
    """The two diagonal dims whole; the others keep their labels (the diagonal is
    appended last; trace sums it away)."""
    nd = ctx.specs[0].ndim
    a1, a2 = _diag_axes(ctx, nd)
    lab = [None if d in (a1, a2) else f"d{d}" for d in range(nd)]
    rest = [x for x in lab if x is not None]
    out = rest + [None] if ctx.op.name == "diagonal" else rest
    return label_plan(ctx, [lab], [out])


@register("diagonal_scatter")
def diagonal_scatter(ctx):
    """Like diagonal: y (the diagonal) sharded like x's other dims."""
    sx, sy = ctx.specs
    nd = sx.ndim
    a1, a2 = _diag_axes(ctx, nd)
    lab = [None if d in (a1, a2) else f"d{d}" for d in range(nd)]
    ly = [x for x in lab if x is not None] + [None]
    return label_plan(ctx, [lab, ly if sy.ndim == len(ly) else None], [lab])


@register("one_hot")
def one_hot(ctx):
    """A new (whole) class dim after x's dims, which keep their labels."""
    nd = ctx.specs[0].ndim
    return label_plan(ctx, [dims(nd)], [dims(nd) + [None]])


@register("multiplex")
def multiplex(ctx):
    """Row i of out is row i of inputs[index[i]]: rows sharded alike everywhere."""
    specs, si = ctx.specs
    live = [s for s in specs if s is not None]
    if not live:
        return None
    nd = live[0].ndim
    lab = ["r"] + [None] * (nd - 1)
    return label_plan(ctx, [[list(lab) if s is not None else None for s in specs],
                            ["r"] + [None] * (si.ndim - 1)], [lab])


@register("searchsorted")
def searchsorted(ctx):
    """The sorted sequence's last dim is whole; batch dims (and a 1-D sequence's
    values) stay sharded."""
    ss, sv = ctx.specs
    if ss.ndim == 1:
        return label_plan(ctx, [[None], dims(sv.ndim)], [dims(sv.ndim)])
    lab = dims(ss.ndim - 1)
    return label_plan(ctx, [lab + [None], lab + [None]], [lab + [None]])


replicate_only("the output's size depends on the values (how many elements are selected / "
               "distinct), so no placement of it is known before the op runs",
               "masked_select", "nonzero", "unique", "unique_consecutive")
replicate_only("masked_scatter consumes `value` in the order of the mask's True entries over "
               "the whole tensor: a block's entries start at a data-dependent offset",
               "masked_scatter")
replicate_only("a general index key (slices, ints, tensors, None, Ellipsis, booleans) mixes "
               "basic and advanced indexing; positions of the result are not blocks of the "
               "input (a sliced or tensor-indexed dim); a per-key rule is future work",
               "getitem", "setitem", "index_put")
