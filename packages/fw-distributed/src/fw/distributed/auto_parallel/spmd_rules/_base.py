"""The registry and the shared machinery of the SPMD rules.

``RULES = {op name: rule}``; a rule gets a `spmd.Ctx` and returns a `spmd.Plan`
(or None to decline: the replicate fallback runs and is counted). Rules decide
one mesh axis at a time.

Most rules are written as *dim labels* (the einsum view, as in GSPMD and
PyTorch DTensor's einsum-based strategies): every tensor dim that may be
sharded gets a label, shared by the dims of the inputs and outputs that line up
one to one; a dim that must be whole gets None. `label_plan` then follows the
inputs' Shard placements: a label sharded on a mesh axis by some input is
sharded on that axis in every tensor that carries it, Replicate elsewhere; a
label of the inputs that no output carries is *contracted*: sharding it gives a
Partial output, allowed only where the op is linear in it (``contract=`` names
the reduce type)."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Partial, ReduceType, Replicate, Shard
from fw.distributed.auto_parallel.spmd import Plan

__all__ = ["RULES", "REPLICATE_ONLY", "register", "replicate_only", "label_plan", "R"]

RULES: dict = {}
# {op name: why it cannot be sharded}: its rule always asks for whole inputs
REPLICATE_ONLY: dict = {}
R = Replicate()


def register(*names):
    """Decorator: register ``rule(ctx) -> Plan | None`` as the SPMD rule of the ops
    `names` (how their inputs must be placed and what placements the outputs get; None
    falls back to replicating the inputs).

    Args:
        *names (str): op names of the op table.

    Returns:
        callable: the decorator (it returns the rule unchanged).

    Examples:
        >>> import fw
        >>> from fw.distributed.auto_parallel import register
        >>> from fw.distributed.auto_parallel.spmd_rules._base import RULES
        >>> @register("my_custom_op")
        ... def my_rule(ctx):
        ...     return None          # no plan: replicate
        >>> RULES.pop("my_custom_op") is my_rule
        True
    """
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return deco


def replicate_only(reason, *names):
    """Register the explicit replicate rule for `names`: every input whole on
    every rank, outputs Replicate; `reason` (why the op cannot be sharded) is
    listed by `rules_report`."""
    def rule(ctx):
        return _all_replicated(ctx)
    rule.__doc__ = f"Replicate only: {reason}"
    rule.replicate_reason = reason
    for n in names:
        RULES[n] = rule
        REPLICATE_ONLY[n] = reason
    return rule


def _all_replicated(ctx):
    rep = [R] * ctx.mesh.ndim
    ins = [[rep if s is not None else None for s in ss] if isinstance(ss, list)
           else (rep if ss is not None else None) for ss in ctx.specs]
    n = ctx.op.num_outputs
    if n < 0:
        n = len(ctx.out_shapes) if ctx.out_shapes is not None else None
        if n is None:
            return None
    return Plan(ins, [rep] * n)


def is_sum_partial(p):
    return isinstance(p, Partial) and int(p.reduce_type) == 0


def tensor_idx(ctx):
    return [i for i, s in enumerate(ctx.specs) if s is not None]


def fresh(ctx):
    return [[] if s is not None else None for s in ctx.specs]


def norm_axes(attr, nd):
    """Sorted non-negative axes of an ``axis`` attribute (None / () -> all dims)."""
    if attr is None:
        return list(range(nd))
    ax = [attr] if isinstance(attr, int) else list(attr)
    if not ax:
        return list(range(nd))
    return sorted({int(x) % max(nd, 1) for x in ax})


def n_outputs(ctx):
    n = ctx.op.num_outputs
    if n < 0 and ctx.out_shapes is not None:
        n = len(ctx.out_shapes)
    return n


def label_plan(ctx, ins, outs, contract=None, nonempty=(), attrs=None, op=None, shapes=None,
               post=None, additive=(), missing=None):
    """A Plan from dim labels.

    Args:
        ctx: the rule's `spmd.Ctx`.
        ins: per input, a list of labels (one per dim, None = must be whole), None
            for a non-tensor input; for the variadic input, a list of such lists.
        outs: per output, a list of labels (one per dim).
        contract: None (a contracted label may not be sharded) or a ReduceType
            (sharding it makes every output Partial of that type).
        nonempty: labels that may only be sharded when every block is non-empty
            (ops that fail on empty blocks: max, argmax, ...).
        additive: input indices added to the result (a bias): on a mesh axis where
            the outputs are Partial they are Partial too (added once in the sum).
        missing: None, or a ReduceType: an output without a sharded label that
            other outputs carry sums over it (a weight gradient): Partial of this
            type, instead of Replicate.
        attrs, op, shapes, post: passed to the Plan.

    Returns:
        Plan.
    """
    flat = []          # (input slot, index in variadic or None, spec, labels)
    for i, (s, lab) in enumerate(zip(ctx.specs, ins)):
        if isinstance(s, list):
            for j, (x, lx) in enumerate(zip(s, lab or [None] * len(s))):
                if x is not None:
                    flat.append((i, j, x, lx or [None] * x.ndim))
        elif s is not None:
            flat.append((i, None, s, lab if lab is not None else [None] * s.ndim))
    out_labels = set()
    for o in outs:
        out_labels.update(x for x in o if x is not None)
    sizes = {}
    for _, _, s, lab in flat:
        for d, x in enumerate(lab):
            if x is not None:
                sizes.setdefault(x, s.shape[d])
    used = []
    pl_in = [[] for _ in flat]
    pl_out = [[] for _ in outs]
    for a in range(ctx.mesh.ndim):
        pick = None
        for _, _, s, lab in flat:
            p = s.placements[a]
            if isinstance(p, Shard) and p.dim < len(lab):
                x = lab[p.dim]
                if x is None or x in used:
                    continue
                if x not in out_labels and contract is None:
                    continue
                if x in nonempty and sizes[x] < ctx.mesh.shape[a]:   # an empty block
                    continue
                if _consistent(flat, x, sizes[x]):
                    pick = x
                    break
        if pick is None:
            for k in range(len(flat)):
                pl_in[k].append(R)
            for o in pl_out:
                o.append(R)
            continue
        used.append(pick)
        for k, (_, _, _, lab) in enumerate(flat):
            pl_in[k].append(Shard(lab.index(pick)) if pick in lab else R)
        for o, lab in zip(pl_out, outs):
            if pick in lab:
                o.append(Shard(lab.index(pick)))
            elif pick in out_labels:
                # an output without this dim: independent of it (whole on every rank),
                # or a sum over it (`missing`)
                o.append(R if missing is None else Partial(missing))
            else:
                o.append(Partial(contract))
        if pick not in out_labels:
            for k, f in enumerate(flat):
                if f[0] in additive:
                    pl_in[k][-1] = Partial()
    # back into the input slots
    res = [None if s is None else ([None] * len(s) if isinstance(s, list) else None)
           for s in ctx.specs]
    for k, (i, j, _, _) in enumerate(flat):
        if j is None:
            res[i] = pl_in[k]
        else:
            res[i][j] = pl_in[k]
    return Plan(res, pl_out, attrs=attrs, op=op, shapes=shapes, post=post)


def _consistent(flat, x, size):
    for _, _, s, lab in flat:
        if lab.count(x) > 1:
            return False
        if x in lab and s.shape[lab.index(x)] != size:
            return False
    return True


def dims(n, prefix="d"):
    return [f"{prefix}{i}" for i in range(n)]


def broadcast_labels(specs, out_nd):
    """Right-aligned broadcast labels: an input dim of size 1 under a bigger
    output dim broadcasts (None); the others carry the output dim's label."""
    out = []
    for s in specs:
        if s is None:
            out.append(None)
            continue
        lab = []
        for d in range(s.ndim):
            od = d + out_nd - s.ndim
            lab.append(f"d{od}" if od >= 0 else None)
        out.append(lab)
    return out


def fix_broadcast(ins, specs, out_shape):
    """Drop labels of size-1 dims that broadcast against a bigger output dim."""
    for lab, s in zip(ins, specs):
        if lab is None or s is None or isinstance(s, list):
            continue
        for d, x in enumerate(lab):
            if x is not None and x.startswith("d"):
                od = int(x[1:])
                if od < len(out_shape) and s.shape[d] != out_shape[od]:
                    lab[d] = None
    return ins


SUM = ReduceType.kRedSum
