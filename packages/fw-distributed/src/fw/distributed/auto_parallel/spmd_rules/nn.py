"""SPMD rules of nn ops: embedding, norms, losses, conv and pooling."""

from __future__ import annotations

from fw.distributed.auto_parallel._layout import local_box
from fw.distributed.auto_parallel.placement import Partial, Shard
from fw.distributed.auto_parallel.spmd import Plan
from fw.distributed.auto_parallel.spmd_rules._base import (
    SUM,
    R,
    broadcast_labels,
    dims,
    fix_broadcast,
    label_plan,
    norm_axes,
    register,
)

_axes = norm_axes


# ------------------------------------------------------------ nn ops
@register("embedding")
def embedding(ctx):
    """ids Shard(d) with the table replicated -> Shard(d); a column-split table
    (Shard(1)) with replicated ids -> the hidden dim sharded; a row-split
    (vocabulary-parallel) table with whole ids -> each rank looks up the ids that
    fall in its rows and zeroes the others: a Partial(sum) output (Megatron's
    VocabParallelEmbedding, Paddle's c_embedding), composed of existing ops by
    `_vocab_parallel_lookup` — the table is never gathered."""
    si, sw = ctx.specs
    if si is None or sw is None or sw.ndim != 2:
        return None
    nd = si.ndim
    ins, outs = [[], []], []
    vocab_axis = None
    for a in range(ctx.mesh.ndim):
        pi, pw = si.placements[a], sw.placements[a]
        if isinstance(pw, Shard) and pw.dim == 1:
            w = (R, Shard(1), Shard(nd))
        elif (isinstance(pw, Shard) and pw.dim == 0 and vocab_axis is None
              and sw.shape[0] >= ctx.mesh.shape[a]):     # no empty block of rows
            w = (R, Shard(0), Partial())
            vocab_axis = a
        elif isinstance(pi, Shard):
            w = (pi, R, Shard(pi.dim))
        else:
            w = (R, R, R)
        if isinstance(w[2], Shard) and w[2] in outs:
            w = (R, R, R)
        ins[0].append(w[0]), ins[1].append(w[1]), outs.append(w[2])
    if vocab_axis is None:
        return Plan(ins, [outs])
    (lo, n), _ = local_box(sw.shape, ins[1], ctx.mesh, ctx.coord)
    return Plan(ins, [outs], local=_vocab_parallel_lookup(lo, n, sw.shape[0],
                                                          ctx.attrs.get("padding_idx")))


def _vocab_parallel_lookup(lo, n, vocab, padding_idx):
    """``local(args, attrs)`` of a lookup in rows [lo, lo + n) of a `vocab`-row
    table: ids outside the block read row 0 and are zeroed (their gradient too).
    Built from fw ops, so it runs eagerly and inside a program being built."""
    pad = None
    if padding_idx is not None:
        g = int(padding_idx) + (vocab if int(padding_idx) < 0 else 0)
        pad = g - lo if lo <= g < lo + n else None

    def local(args, attrs):
        import fw
        from fw.core.dispatch import invoke
        from fw.core.internal import OPS

        ids, w = args
        shifted = ids - lo
        inside = fw.logical_and(shifted >= 0, shifted < n)
        safe = fw.where(inside, shifted, fw.zeros_like(shifted))
        out = invoke(OPS["embedding"], [safe, w], dict(attrs, padding_idx=pad))
        return out * fw.cast(inside, out.dtype).unsqueeze(-1)
    return local


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


def _ce_static_count(ctx, per_shape):
    """The divisor of cross entropy's 'mean' when it does not depend on the data:
    the number of per-sample losses (no class weights, and soft labels or an
    ignore_index < 0, which no class index equals); None otherwise (the weighted
    mean divides by the weights of the labels, the ignore_index >= 0 one by the
    count of non-ignored labels: both depend on the labels of every rank)."""
    if ctx.specs[2] is not None:
        return None
    if not ctx.attrs.get("soft_label", False) and int(ctx.attrs.get("ignore_index", -100)) >= 0:
        return None
    n = 1
    for v in per_shape:
        n *= int(v)
    return n if n > 0 else None


def _ce_label_block(ctx, label_shape, label_pl):
    """``slice(label) -> block``: this rank's block of a whole label under `label_pl`
    (strided slices of the dims the batch is sharded on), in fw ops."""
    box = local_box(list(label_shape), label_pl, ctx.mesh, ctx.coord)
    cuts = [(d, s, n) for d, (s, n) in enumerate(box) if n != label_shape[d]]

    def cut(label):
        from fw.core.ops import call

        for d, st, n in cuts:
            label = call("strided_slice", label, axes=[d], starts=[st], ends=[st + n],
                         strides=[1])
        return label
    return cut


def _ce_denominator(label, weight, attrs, ax, ndim):
    """The divisor of cross entropy's data-dependent 'mean' from the WHOLE labels,
    as fw-core's reference computes it: the sum of the per-sample weights (hard
    labels: ``weight[label]``, 0 where ignored; soft: ``sum(label * weight, ax)``),
    else the count of labels != ignore_index; 0 becomes 1. A 0-D tensor."""
    import fw

    soft = attrs.get("soft_label", False)
    dtype = weight.dtype if weight is not None else None
    if soft:
        shape = [1] * ndim
        shape[ax] = -1
        den = (label * fw.reshape(weight.astype(label.dtype), shape)).sum()
    else:
        kept = fw.not_equal(label, fw.full_like(label, int(attrs.get("ignore_index", -100))))
        if weight is None:
            den = fw.cast(kept, "float32").sum()
        else:
            safe = fw.where(kept, label, fw.zeros_like(label))
            per_w = fw.gather(weight, fw.reshape(safe, [-1]))
            den = (per_w * fw.cast(fw.reshape(kept, [-1]), dtype)).sum()
    return fw.where(den == 0, fw.ones_like(den), den)


@register("cross_entropy_with_softmax")
def cross_entropy(ctx):
    """Batch-sharded logits and labels (the class dim whole): per-sample losses stay
    sharded; reduction='sum' gives a Partial loss; 'mean' runs 'sum' locally and
    divides by the global count of losses (a Partial loss: data parallelism never
    gathers the logits). With class weights or an ignore_index >= 0 the divisor
    depends on every rank's labels (the weighted mean is sum(w*l) / sum(w), the
    ignored labels counting for neither): the labels come whole (an all-gather of
    integers, 1/C of the logits' size), each rank sums the weighted losses of its
    block of logits against its slice of them and divides by the divisor of the
    whole labels (`_ce_denominator`) — still a Partial loss, with no gather of
    the logits and no communication inside the op."""
    sl, slab, sw = ctx.specs
    if sl is None or slab is None or ctx.out_shapes is None:
        return None
    red = ctx.attrs.get("reduction", "mean")
    nd = sl.ndim
    ax = int(ctx.attrs.get("axis", -1)) % nd
    attrs = post = None
    dynamic = False
    if red == "mean":
        soft = ctx.attrs.get("soft_label", False)
        per = [1 if d == ax else n for d, n in enumerate(sl.shape)] if soft else slab.shape
        cnt = _ce_static_count(ctx, per)
        attrs = dict(ctx.attrs, reduction="sum")
        if cnt is None:
            if sw is None and (soft or int(ctx.attrs.get("ignore_index", -100)) < 0):
                return None             # an empty batch (count 0): nothing to shard
            dynamic = True
        else:
            def post(outs, c=float(cnt)):
                return (outs[0] * (1.0 / c),) + tuple(outs[1:])
    elif red not in ("none", "sum"):
        return None
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
    if not dynamic:
        return Plan(ins, [o_loss, o_sm], attrs=attrs, post=post)
    label_pl = ins[1]
    ins[1] = [R] * ctx.mesh.ndim                  # whole labels: the divisor needs them all
    cut = _ce_label_block(ctx, slab.shape, label_pl)

    def local(args, la, nd=nd, ax=ax):
        from fw.core.dispatch import invoke
        from fw.core.internal import OPS

        logits, label, weight = args
        loss, sm = invoke(OPS["cross_entropy_with_softmax"], [logits, cut(label), weight], la)
        den = _ce_denominator(label, weight, ctx.attrs, ax, nd)
        return loss * (1.0 / den).astype(loss.dtype), sm
    return Plan(ins, [o_loss, o_sm], attrs=attrs, local=local)


# ------------------------------------------------------------ conv / pool
def _chan(ctx, nd):
    return nd - 1 if ctx.attrs.get("channel_last") else 1


@register("conv", "fused_conv")
def conv(ctx):
    """Batch dim sharded (data parallel); out channels (weight dim 0, bias) sharded
    with groups=1; in channels (x's channel dim and weight dim 1) sharded with
    groups=1 give Partial(sum), the bias (and residual) added once. A fused
    activation is not linear: no in-channel split there."""
    sx, sw = ctx.specs[0], ctx.specs[1]
    if sx is None or sw is None or sx.ndim < 3:
        return None
    nd = sx.ndim
    c = _chan(ctx, nd)
    g1 = int(ctx.attrs.get("groups", 1)) == 1
    lin = ctx.attrs.get("activation", "none") in ("none", None, "")
    lx = [None] * nd
    lx[0] = "n"
    lx[c] = "c" if g1 and lin else None
    lw = ["o" if g1 else None, "c" if g1 and lin else None] + [None] * (sw.ndim - 2)
    out = [None] * nd
    out[0] = "n"
    out[c] = "o" if g1 else None
    ins = [lx, lw]
    if len(ctx.specs) > 2:
        ins.append(["o" if g1 else None] if ctx.specs[2] is not None else None)
    if len(ctx.specs) > 3:
        ins.append(list(out) if ctx.specs[3] is not None else None)
    return label_plan(ctx, ins, [out], contract=SUM, additive=(2, 3))


@register("conv_transpose")
def conv_transpose(ctx):
    """Batch sharded; weight [C_in, C_out/g, k...]: in channels give Partial(sum)
    (bias added once), out channels stay sharded (groups=1)."""
    sx, sw, sb = ctx.specs
    nd = sx.ndim
    c = _chan(ctx, nd)
    g1 = int(ctx.attrs.get("groups", 1)) == 1
    lx = [None] * nd
    lx[0] = "n"
    lx[c] = "c" if g1 else None
    lw = ["c" if g1 else None, "o" if g1 else None] + [None] * (sw.ndim - 2)
    out = [None] * nd
    out[0] = "n"
    out[c] = "o" if g1 else None
    lb = ["o" if g1 else None] if sb is not None else None
    return label_plan(ctx, [lx, lw, lb], [out], contract=SUM, additive=(2,))


@register("conv_grad_weight")
def conv_grad_weight(ctx):
    """dW and db sum over the batch: a batch-sharded x and grad give Partial(sum);
    channels (groups=1) stay sharded."""
    sx, sg = ctx.specs
    nd = sx.ndim
    c = _chan(ctx, nd)
    g1 = int(ctx.attrs.get("groups", 1)) == 1
    lx = [None] * nd
    lx[0] = "n"
    lx[c] = "c" if g1 else None
    lg = [None] * nd
    lg[0] = "n"
    lg[c] = "o" if g1 else None
    if ctx.out_shapes is None:
        return None
    kw = len(ctx.out_shapes[0])
    return label_plan(ctx, [lx, lg], [["o" if g1 else None, "c" if g1 else None]
                                      + [None] * (kw - 2), ["o" if g1 else None]],
                      contract=SUM)


def _nc(ctx, n_extra_in=0, spatial=False):
    sx = ctx.specs[0]
    nd = sx.ndim
    c = _chan(ctx, nd)
    lab = [f"d{d}" if (d in (0, c) or spatial) else None for d in range(nd)]
    return lab


@register("max_pool", "max_pool_with_index", "avg_pool", "lp_pool", "adaptive_avg_pool",
          "adaptive_max_pool", "max_unpool", "quantized_max_pool", "max_pool_grad",
          "avg_pool_grad", "interpolate")
def pool(ctx):
    """Windows over the spatial dims (whole); batch and channel dims sharded."""
    if ctx.out_shapes is None:
        return None
    lab = _nc(ctx)
    ins = [list(lab) if s is not None and s.ndim == len(lab) else None for s in ctx.specs]
    return label_plan(ctx, ins, [lab] * len(ctx.out_shapes))


@register("pixel_shuffle", "pixel_unshuffle", "unfold", "fold", "group_norm")
def batch_only(ctx):
    """Channels and space are rearranged (or normalised in groups): only the batch
    dim stays sharded."""
    if ctx.out_shapes is None:
        return None
    nd = ctx.specs[0].ndim
    ins = [["n"] + [None] * (nd - 1)] + [None] * (len(ctx.specs) - 1)
    return label_plan(ctx, ins, [["n"] + [None] * (len(s) - 1) for s in ctx.out_shapes])


@register("channel_shuffle", "local_response_norm")
def channels_whole(ctx):
    """Mixes channels only: the channel dim whole, batch and space sharded."""
    nd = ctx.specs[0].ndim
    c = _chan(ctx, nd)
    lab = [None if d == c else f"d{d}" for d in range(nd)]
    return label_plan(ctx, [lab], [lab])


@register("instance_norm")
def instance_norm(ctx):
    """Statistics per (sample, channel): batch and channel sharded; weight/bias
    follow the channel."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    nd = sx.ndim
    c = _chan(ctx, nd)
    lab = [None] * nd
    lab[0], lab[c] = "n", "c"
    ins = [lab] + [["c"] if s is not None else None for s in ctx.specs[1:]]
    outs = [lab]
    for shp in ctx.out_shapes[1:]:
        if len(shp) == 2:
            outs.append(["n", "c"])
        else:
            return None
    return label_plan(ctx, ins, outs, nonempty=("n", "c"))


@register("batch_norm")
def batch_norm(ctx):
    """Channel sharded everywhere (statistics are per channel); the batch and
    spatial dims only in inference (running statistics): training statistics
    need every sample."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    nd = sx.ndim
    c = _chan(ctx, nd)
    ugs = ctx.attrs.get("use_global_stats")
    infer = ugs if ugs is not None else not ctx.attrs.get("training", False)
    lab = [("c" if d == c else (f"d{d}" if infer else None)) for d in range(nd)]
    ins = [lab] + [["c"] if s is not None else None for s in ctx.specs[1:]]
    outs = [lab] + [["c"] if len(s) == 1 else [None] * len(s) for s in ctx.out_shapes[1:]]
    return label_plan(ctx, ins, outs)


@register("batch_norm_grad")
def batch_norm_grad(ctx):
    """Per-channel statistics: the channel dim sharded in x, grad and the
    per-channel tensors."""
    sx = ctx.specs[0]
    nd = sx.ndim
    c = _chan(ctx, nd)
    lab = ["c" if d == c else None for d in range(nd)]
    ins = [lab, ["c"] if ctx.specs[1] is not None else None, ["c"], ["c"], lab]
    return label_plan(ctx, ins, [lab, ["c"], ["c"]])


@register("rms_norm")
def rms_norm(ctx):
    """Normalised over trailing dims (whole); leading dims sharded (inv_rms too)."""
    sx = ctx.specs[0]
    nd = sx.ndim
    b = int(ctx.attrs.get("begin_norm_axis", -1)) % max(nd, 1)
    lab = [f"d{d}" if d < b else None for d in range(nd)]
    ins = [lab] + [None] * (len(ctx.specs) - 1)
    return label_plan(ctx, ins, [lab, lab[:b]])


@register("layer_norm_grad")
def layer_norm_grad(ctx):
    """Leading dims sharded: grad_x stays sharded, grad_weight/grad_bias (sums over
    them) are Partial(sum)."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    nd = sx.ndim
    b = int(ctx.attrs.get("begin_norm_axis", 1)) % max(nd, 1)
    lab = [f"d{d}" if d < b else None for d in range(nd)]
    stat = ctx.specs[2]
    ls = lab[:stat.ndim] if stat.ndim <= b else None
    ins = [lab, None, ls, list(ls) if ls is not None else None, lab]
    outs = [lab] + [[None] * len(s) for s in ctx.out_shapes[1:]]
    return label_plan(ctx, ins, outs, missing=SUM)


# ------------------------------------------------------------ losses
def _reduced_loss(ctx, ins, lab, n_elems):
    """Per-element losses with labels `lab`: 'none' keeps them, 'sum' gives
    Partial(sum), 'mean' runs 'sum' locally and divides by the global count."""
    red = ctx.attrs.get("reduction", "mean")
    if red == "none":
        return label_plan(ctx, ins, [lab])
    if red == "sum":
        return label_plan(ctx, ins, [[]], contract=SUM)
    if red in ("mean", "batchmean"):
        cnt = float(n_elems if red == "mean" else (ctx.specs[0].shape[0]
                                                   if ctx.specs[0].ndim else 1))
        if cnt == 0:
            return None
        attrs = dict(ctx.attrs, reduction="sum")

        def post(outs, c=cnt):
            return (outs[0] * (1.0 / c),)
        return label_plan(ctx, ins, [[]], contract=SUM, attrs=attrs, post=post)
    return None


@register("binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
          "smooth_l1_loss", "margin_ranking_loss", "sigmoid_focal_loss")
def pointwise_loss(ctx):
    """Elementwise losses over broadcast inputs, then the reduction: any dim
    sharded ('sum' -> Partial, 'mean' -> local sum / global count)."""
    if ctx.out_shapes is None:
        return None
    shape = list(ctx.specs[0].shape)
    for s in ctx.specs[1:]:
        if s is not None and s.ndim > len(shape):
            return None
    on = len(shape)
    ins = broadcast_labels(ctx.specs, on)
    if ctx.op.name == "sigmoid_focal_loss" and len(ins) > 2:
        ins[2] = None                       # the normalizer divides every element
    fix_broadcast(ins, ctx.specs, shape)
    n = 1
    for v in shape:
        n *= v
    return _reduced_loss(ctx, ins, dims(on), n)


@register("nll_loss")
def nll_loss(ctx):
    """input [N, C, d...], label [N, d...]: N and d sharded, C whole; 'sum' ->
    Partial; 'mean' (divided by the weights of the non-ignored labels, a data-
    dependent count) declines to the fallback."""
    si, sl, sw = ctx.specs
    if ctx.attrs.get("reduction", "mean") == "mean" or si.ndim < 2:
        return None
    li = ["n", None] + [f"s{d}" for d in range(2, si.ndim)]
    ll = ["n"] + [f"s{d}" for d in range(2, si.ndim)]
    return _reduced_loss(ctx, [li, ll, None], ll, 0)


@register("hsigmoid_loss")
def hsigmoid_loss(ctx):
    """Per-sample losses: the batch dim sharded (input, label, paths, out)."""
    if ctx.out_shapes is None:
        return None
    ins = [["n"] + [None] * (s.ndim - 1) if (s is not None and k in (0, 1, 4, 5)) else None
           for k, s in enumerate(ctx.specs)]
    return label_plan(ctx, ins, [["n"] + [None] * (len(ctx.out_shapes[0]) - 1)])


@register("cross_entropy_with_softmax_grad")
def cross_entropy_grad(ctx):
    """The class axis whole; batch dims sharded alike. 'mean' runs 'sum' locally
    and divides by the global count of losses when that count is static (as the
    forward rule); with class weights or an ignore_index >= 0 the labels come
    whole and each rank scales its block's 'sum' gradient by 1 / the divisor of
    the whole labels (`_ce_denominator`, as the forward rule)."""
    ss, sl, sw, sg = ctx.specs
    nd = ss.ndim
    ax = int(ctx.attrs.get("axis", -1)) % nd
    attrs = post = None
    dynamic = False
    if ctx.attrs.get("reduction", "mean") == "mean":
        cnt = _ce_static_count(ctx, [1 if d == ax else n for d, n in enumerate(ss.shape)])
        attrs = dict(ctx.attrs, reduction="sum")
        if cnt is None:
            if sw is None and (ctx.attrs.get("soft_label", False)
                               or int(ctx.attrs.get("ignore_index", -100)) < 0):
                return None             # an empty batch (count 0): nothing to shard
            dynamic = True
        else:
            def post(outs, c=float(cnt)):
                return (outs[0] * (1.0 / c),)
    lab = [None if d == ax else f"d{d}" for d in range(nd)]
    def follow(s):
        # a label/grad has the class axis of size 1 (same rank) or removed (rank - 1)
        if s is None or s.ndim == 0:
            return None
        if s.ndim == nd:
            pos = list(range(nd))
        elif s.ndim == nd - 1:
            pos = [d if d < ax else d + 1 for d in range(s.ndim)]
        else:
            return None
        return [lab[p] if s.shape[j] == ss.shape[p] else None for j, p in enumerate(pos)]
    if not dynamic:
        return label_plan(ctx, [lab, follow(sl), None, follow(sg)], [lab], attrs=attrs,
                          post=post)
    plan = label_plan(ctx, [lab, follow(sl), None, follow(sg)], [lab], attrs=attrs)
    if plan is None:
        return None
    label_pl = plan.inputs[1]
    plan.inputs[1] = [R] * ctx.mesh.ndim          # whole labels, as the forward rule
    cut = _ce_label_block(ctx, sl.shape, label_pl)

    def local(args, la, nd=nd, ax=ax):
        from fw.core.dispatch import invoke
        from fw.core.internal import OPS

        sm, label, weight, g = args
        gx = invoke(OPS["cross_entropy_with_softmax_grad"], [sm, cut(label), weight, g], la)
        den = _ce_denominator(label, weight, ctx.attrs, ax, nd)
        return gx * (1.0 / den).astype(gx.dtype)
    plan.local = local
    return plan


@register("ctc_loss")
def ctc_loss(ctx):
    """logits [T, B, C], labels [B, L], lengths [B]: the batch dim sharded."""
    if ctx.out_shapes is None:
        return None
    sl = ctx.specs[0]
    ins = [[None, "b", None], ["b"] + [None] * (ctx.specs[1].ndim - 1), ["b"], ["b"]]
    if sl.ndim != 3:
        return None
    outs = []
    for shp in ctx.out_shapes:
        if len(shp) == 3:
            outs.append([None, "b", None])
        elif len(shp) >= 1 and shp[0] == sl.shape[1]:
            outs.append(["b"] + [None] * (len(shp) - 1))
        else:
            return None
    return label_plan(ctx, ins, outs)


# ------------------------------------------------------------ misc nn
@register("bilinear")
def bilinear(ctx):
    """x1 [N, I], x2 [N, J], W [O, I, J]: N and O sharded; I (x1 and W) gives
    Partial(sum), the bias added once."""
    s1, s2, sw, sb = ctx.specs
    if s1.ndim != 2 or s2.ndim != 2 or sw.ndim != 3:
        return None
    lb = [None, "o"] if sb is not None and sb.ndim == 2 else (["o"] if sb is not None else None)
    return label_plan(ctx, [["n", "i"], ["n", None], ["o", "i", None], lb], [["n", "o"]],
                      contract=SUM, additive=(3,))


@register("scaled_dot_product_attention")
def sdpa(ctx):
    """q/k/v [B, L, H, D]: batch and heads sharded (each head attends alone); the
    mask follows them on its non-broadcast dims."""
    sq, sk, sv, sm = ctx.specs
    if sq.ndim != 4:
        return None
    lab = ["b", None, "h", None]
    lm = None
    if sm is not None:
        lm = [None] * sm.ndim
        if sm.ndim == 4:
            lm[0] = "b" if sm.shape[0] == sq.shape[0] else None
            lm[1] = "h" if sm.shape[1] == sq.shape[2] else None
    return label_plan(ctx, [lab, list(lab), list(lab), lm], [lab])


@register("fused_attention")
def fused_attention(ctx):
    """q/k/v [B, S, D] with the heads packed in D (the inference pass's fused op):
    the batch is sharded; D stays whole (a block of D would cut heads apart unless
    the block held whole heads, which the rule does not check); the mask follows the
    batch when it has it."""
    sq, sk, sv = ctx.specs[:3]
    sm = ctx.specs[3] if len(ctx.specs) > 3 else None
    if sq.ndim != 3 or sk.ndim != 3 or sv.ndim != 3:
        return None
    lab = ["b", None, None]
    ins = [lab, list(lab), list(lab)]
    if len(ctx.specs) > 3:
        lm = None
        if sm is not None:
            lm = [None] * sm.ndim
            if sm.ndim == 4 and sm.shape[0] == sq.shape[0] and sq.shape[0] != 1:
                lm[0] = "b"
        ins.append(lm)
    return label_plan(ctx, ins, [lab])


@register("label_smooth")
def label_smooth(ctx):
    """Uses the class count (the last dim): it is whole; other dims sharded."""
    nd = ctx.specs[0].ndim
    lab = dims(nd)[:-1] + [None]
    return label_plan(ctx, [lab, None], [lab])


@register("alpha_dropout")
def alpha_dropout(ctx):
    """Random: the placements are kept (see the RNG note in the package doc)."""
    if ctx.out_shapes is None:
        return None
    nd = ctx.specs[0].ndim
    if ctx.attrs.get("axis") is not None:
        return label_plan(ctx, [[None] * nd], [[None] * len(s) for s in ctx.out_shapes])
    return label_plan(ctx, [dims(nd)], [dims(len(s)) for s in ctx.out_shapes])


@register("fused_matmul")
def fused_matmul(ctx):
    """act(x @ y + bias) + residual: m and n dims and the batch dims sharded; the
    contraction dim gives Partial(sum) only without an activation (bias and
    residual added once)."""
    sx, sy = ctx.specs[0], ctx.specs[1]
    if sx.ndim < 2 or sy.ndim < 2 or ctx.out_shapes is None:
        return None
    tx, ty = ctx.attrs.get("transpose_x", False), ctx.attrs.get("transpose_y", False)
    lin = ctx.attrs.get("activation", "none") in ("none", None, "")
    on = len(ctx.out_shapes[0])
    out_shape = ctx.out_shapes[0]
    k = "k" if lin else None

    def lab(s, mat):
        b = [f"b{j + on - s.ndim}" if s.shape[j] == out_shape[j + on - s.ndim] else None
             for j in range(s.ndim - 2)]
        return b + mat
    lx = lab(sx, [k, "m"] if tx else ["m", k])
    ly = lab(sy, ["n", k] if ty else [k, "n"])
    out = [f"b{j}" for j in range(on - 2)] + ["m", "n"]
    sb, sr = ctx.specs[2], ctx.specs[3]
    lb = None
    if sb is not None:
        lb = [None] * (sb.ndim - 1) + (["n"] if sb.ndim and sb.shape[-1] == out_shape[-1]
                                        else [None])
        if sb.ndim == 0:
            lb = []
    lr = None
    if sr is not None:
        lr = [out[d + on - sr.ndim] if sr.shape[d] == out_shape[d + on - sr.ndim] else None
              for d in range(sr.ndim)]
    return label_plan(ctx, [lx, ly, lb, lr], [out], contract=SUM, additive=(2, 3))


@register("quantized_matmul", "weight_only_linear")
def quantized_linear(ctx):
    """Rows of x (every dim but the last) sharded; the quantized weight, its scales
    and zero points whole (per-tensor or per-output-channel)."""
    if ctx.out_shapes is None:
        return None
    sx = ctx.specs[0]
    on = len(ctx.out_shapes[0])
    if sx.ndim != on:
        return None
    lab = dims(on)[:-1] + [None]
    ins = [lab] + [None] * (len(ctx.specs) - 1)
    names = ctx.op.input_names
    if "residual" in names:
        r = names.index("residual")
        s = ctx.specs[r]
        if s is not None:
            ins[r] = [lab[d + on - s.ndim] if s.shape[d] == ctx.out_shapes[0][d + on - s.ndim]
                      else None for d in range(s.ndim)]
    return label_plan(ctx, ins, [lab])


@register("quantized_conv2d")
def quantized_conv(ctx):
    """The batch dim sharded; weights, scales and zero points whole."""
    if ctx.out_shapes is None:
        return None
    nd = ctx.specs[0].ndim
    ins = [["n"] + [None] * (nd - 1)] + [None] * (len(ctx.specs) - 1)
    names = ctx.op.input_names
    r = names.index("residual")
    if ctx.specs[r] is not None and ctx.specs[r].ndim == nd:
        ins[r] = ["n"] + [None] * (nd - 1)
    return label_plan(ctx, ins, [["n"] + [None] * (nd - 1)])
