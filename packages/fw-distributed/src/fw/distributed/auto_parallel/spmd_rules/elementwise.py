"""SPMD rules of the elementwise / broadcast families (a sharded dim stays sharded)."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Partial, Shard
from fw.distributed.auto_parallel.spmd import Plan
from fw.distributed.auto_parallel.spmd_rules._base import (
    R,
    dims,
    fresh,
    is_sum_partial,
    label_plan,
    norm_axes,
    register,
    replicate_only,
    tensor_idx,
)

_is_sum_partial = is_sum_partial
_tensor_idx = tensor_idx
_fresh = fresh
_axes = norm_axes


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

    skip = {"allclose", "equal_all", "prelu", "swiglu"}
    names = []
    for n, op in OPS.items():
        if n in skip or op.variadic >= 0 or not op.input_names:
            continue
        if op.family in ("elementwise", "activation") and "axis" not in op.attrs \
                and "dim" not in op.attrs:
            names.append(n)
    names += ["cast", "assign", "clone", "dropout", "full_like", "to_device",
              "complex", "polar", "shard_index", "randint_like", "uniform_like",
              "gaussian_like", "bernoulli", "poisson", "exponential", "standard_gamma",
              "binomial", "normal", "relu_grad", "tanh_grad", "sigmoid_grad", "dropout_grad"]
    return [n for n in names if n in OPS]


register(*_elementwise_names())(elementwise)



# ------------------------------------------------------------ special cases
@register("prelu")
def prelu(ctx):
    """x with a per-channel weight: every dim but the channel one may be sharded
    (the channel dim too when the weight is a single slope)."""
    sx, sw = ctx.specs
    if sx is None or sw is None:
        return None
    nd = sx.ndim
    ch = (nd - 1 if ctx.attrs.get("channel_last") else 1) if nd > 1 else None
    single = sw.ndim == 0 or (sw.ndim == 1 and sw.shape[0] == 1)
    lab = [None if (d == ch and not single) else f"d{d}" for d in range(nd)]
    return label_plan(ctx, [lab, None], [dims(nd)])


@register("swiglu")
def swiglu(ctx):
    """swiglu(x, y) is elementwise; swiglu(x) halves x's last dim (x[..., :h] and
    x[..., h:] must be on the same rank): the last dim stays whole."""
    sx, sy = ctx.specs
    if sy is not None:
        return elementwise(ctx)
    nd = sx.ndim
    return label_plan(ctx, [dims(nd)[:-1] + [None], None], [dims(nd)[:-1] + [None]])


replicate_only("a whole-tensor boolean verdict: combining the blocks' verdicts needs a "
               "logical-AND all-reduce, which the reshard engine does not offer (it reduces "
               "sum/max/min/prod/avg)", "allclose", "equal_all")
replicate_only("increment adds to a one-element counter: a block of it would be empty on "
               "every rank but one", "increment")
