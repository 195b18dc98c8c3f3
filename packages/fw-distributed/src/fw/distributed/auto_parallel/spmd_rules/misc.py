"""SPMD rules of creation, metadata, fft, quantization, statistics, collective and
control ops (many replicate-only, each with its reason)."""

from __future__ import annotations

import numpy as np

from fw.distributed.auto_parallel.spmd_rules._base import (
    SUM,
    dims,
    label_plan,
    register,
    replicate_only,
)

replicate_only("no tensor input: it never sees a distributed tensor; every rank creates the "
               "whole value (random draws agree because every rank seeds alike)",
               "full", "arange", "linspace", "logspace", "eye", "tril_indices", "triu_indices",
               "fftfreq", "uniform", "gaussian", "randint", "randperm")
replicate_only("a collective of the process-group API: it already works on each rank's "
               "whole local tensor with its own communication, so auto-parallel placements do "
               "not apply to it", "c_allreduce", "c_broadcast", "c_reduce", "c_allgather",
               "c_reducescatter", "all_to_all")
replicate_only("control flow: its sub-blocks are propagated op by op by the static passes; "
               "the op itself passes whole values", "cond", "while")
replicate_only("diag/diagflat move a vector onto a matrix diagonal (or back): a block of "
               "rows of one is scattered over both dims of the other", "diag", "diagflat")
replicate_only("the output length/edges depend on the global data (the largest value, or "
               "the global min/max when no range is given)", "bincount",
               "histogram_bin_edges", "histogramdd", "histogramdd_bin_edges")
replicate_only("multinomial draws without replacement along a row: rows could be sharded, "
               "but the draws of a block are not the block of the dense draw and the RNG "
               "streams would repeat across ranks (see the RNG note)", "multinomial")
replicate_only("weight-only quantization converts a whole weight once (offline); the layout "
               "and per-channel scales are left to the serving path", "weight_quantize",
               "weight_dequantize")


def _meta_post(value):
    def post(outs):
        import fw

        o = outs[0]
        return (fw.to_tensor(np.asarray(value, dtype=o.numpy().dtype)),)
    return post


@register("numel", "shape", "is_empty")
def metadata(ctx):
    """Needs no data: the input keeps its placements and the result is the global
    metadata (the local op's answer describes the block; it is replaced)."""
    sx = ctx.specs[0]
    n = int(np.prod(sx.shape)) if sx.ndim else 1
    value = {"numel": n, "shape": list(sx.shape), "is_empty": n == 0}[ctx.op.name]
    plan = label_plan(ctx, [None], [[None] * (1 if ctx.op.name == "shape" else 0)])
    plan.inputs = [list(sx.placements)]
    plan.post = _meta_post(value)
    return plan


@register("meshgrid")
def meshgrid(ctx):
    """Input i (1-D) becomes dim i of every output ('xy' swaps the first two): a
    sharded input shards that dim of every output."""
    (specs,) = ctx.specs
    if any(s is None or s.ndim > 1 for s in specs) or ctx.out_shapes is None:
        return None
    n = len(specs)
    labs = [f"i{k}" for k in range(n)]
    order = list(labs)
    if ctx.attrs.get("indexing", "ij") == "xy" and n >= 2:
        order[0], order[1] = order[1], order[0]
    return label_plan(ctx, [[[x] if s.ndim == 1 else [] for x, s in zip(labs, specs)]],
                      [list(order)] * n)


@register("histogram")
def histogram(ctx):
    """With an explicit range (min < max) and counts (density=False), the
    histogram of the blocks adds up: any sharding gives Partial(sum)."""
    si, sw = ctx.specs
    lo, hi = ctx.attrs.get("min", 0.0), ctx.attrs.get("max", 0.0)
    if not (lo < hi) or ctx.attrs.get("density", False):
        return label_plan(ctx, [None, None], [[None]])
    lab = dims(si.ndim)
    return label_plan(ctx, [lab, list(lab) if sw is not None else None], [[None]],
                      contract=SUM)


def _qaxis(ctx):
    sx, ss = ctx.specs[0], ctx.specs[1]
    nd = sx.ndim
    ax = int(ctx.attrs.get("axis", -1)) % max(nd, 1) if nd else 0
    lab = dims(nd)
    per_ch = ss is not None and ss.ndim == 1 and nd and ss.shape[0] == sx.shape[ax] \
        and ss.shape[0] > 1
    ls = [lab[ax]] if per_ch else None
    return label_plan(ctx, [lab, ls, list(ls) if (ls and ctx.specs[2] is not None
                                                  and ctx.specs[2].ndim == 1) else None],
                      [lab])


register("quantize_linear", "dequantize_linear", "fake_quantize_dequantize")(_qaxis)
_qaxis.__doc__ = ("Elementwise with a per-tensor or per-channel scale: every dim sharded; "
                  "a per-channel scale/zero point follows the channel dim.")


@register("fused_elementwise")
def fused_elementwise(ctx):
    """A fused chain of elementwise ops over broadcast inputs: every output dim
    sharded alike in the inputs that have it at full size."""
    (specs,) = ctx.specs
    if ctx.out_shapes is None or any(s is None for s in specs):
        return None
    out_shape = ctx.out_shapes[0]
    on = len(out_shape)
    ins = []
    for s in specs:
        if s.ndim > on:
            return None
        ins.append([f"d{d + on - s.ndim}" if s.shape[d] == out_shape[d + on - s.ndim]
                    else None for d in range(s.ndim)])
    return label_plan(ctx, [ins], [dims(on)])
