"""Sharding propagation over a program: a placement for every value of block 0.

The rules are eager SPMD's (`spmd_rules.RULES`, one per op): each op's `Ctx` is
built from the IR value types (global shapes, dtypes) and the placements found
so far, and the rule's `Plan` gives the placements its operands must have and
those of its results. No second set of rules exists for programs.

The walk (iterated to a fixpoint, like the forward/backward sweeps of Paddle's
static completion pass):

- **forward**: ops in program order; a result gets the placements its op's plan
  gives; an op without a rule, or whose rule declines, gets the replicate
  fallback (every operand gathered whole, Replicate results) and is listed in
  `Propagation.fallbacks` — never silently;
- **backward**: a *free* leaf (a block-0 input/param/const that was not
  annotated) adopts the placements the first op reading it wants (a weight read
  by a row-split matmul becomes row-split instead of being sliced on every run);
  annotated values never change.

Each free leaf adopts at most once, so the sweeps end after at most one more
forward sweep than there are leaves (usually two or three).

Ops with no tensor operand (``full``, ``arange``: creation) are Replicate, not
fallbacks. State-updating optimizer ops (family ``optimizer``) take the
placements of the parameter they update when the registry has no rule for them:
a parameter's update happens where its block lives (see README, "dist.to_static")."""

from __future__ import annotations

from collections import Counter

from fw.distributed.auto_parallel.placement import Partial, Replicate
from fw.distributed.auto_parallel.spmd import Ctx, Plan, Spec

__all__ = ["Propagation", "propagate", "plan_op"]


class Propagation:
    """The result of `propagate`.

    Attributes:
        placements (dict): Value -> list of placements (one per mesh axis).
        plans (dict): Operation -> `spmd.Plan` (inputs per operand slot).
        fallbacks (Counter): op name -> ops of the program that fell back to replicate.
        fallback_ops (list): those operations.
        replicate_only (Counter): op name -> ops whose rule is an explicit
            "replicate only" entry of the registry (when it has such entries).
        adopted (dict): free leaf Value -> the placements it adopted (backward sweep).
        sweeps (int): forward sweeps run until the fixpoint.
    """

    def __init__(self, mesh):
        self.mesh = mesh
        self.placements: dict = {}
        self.plans: dict = {}
        self.fallbacks: Counter = Counter()
        self.fallback_ops: list = []
        self.replicate_only: Counter = Counter()
        self.adopted: dict = {}
        self.sweeps = 0


def _slots(op):
    """The operands of `op` grouped per input slot (a list for the variadic one)."""
    d = op.opdef
    v = d.variadic
    ops = op.operands
    if v < 0:
        return list(ops)
    k = len(ops) - (len(d.input_names) - 1)
    return list(ops[:v]) + [list(ops[v:v + k])] + list(ops[v + k:])


def _spec(v, pl):
    if v is None:
        return None
    return Spec(v.type.shape, pl[v], v.type.dtype)


def plan_op(op, placements, mesh, coord):
    """(plan, fell_back) of operation `op` given the operands' placements.

    The plan's ``inputs`` has one entry per input slot (a list for a variadic slot)."""
    from fw.distributed.auto_parallel.spmd_rules import RULES

    slots = _slots(op)
    specs = [[_spec(x, placements) for x in s] if isinstance(s, list) else _spec(s, placements)
             for s in slots]
    rep = [Replicate()] * mesh.ndim
    n_out = len(op.results)
    flat = [s for ss in specs for s in (ss if isinstance(ss, list) else [ss])]
    if all(s is None for s in flat):          # creation op: the same on every rank
        return Plan([None] * len(specs), [rep] * n_out), False
    rule = RULES.get(op.name)
    plan = None
    if rule is None and op.opdef.family == "optimizer":
        plan = _optimizer_plan(op, specs, mesh)
    elif rule is not None:
        out_shapes = [list(r.type.shape) for r in op.results]
        plan = rule(Ctx(op.opdef, dict(op.attrs), specs, mesh, out_shapes, coord))
    if plan is not None and len(plan.outputs) == n_out:
        return plan, False
    ins = [[rep if s is not None else None for s in ss] if isinstance(ss, list)
           else (rep if ss is not None else None) for ss in specs]
    return Plan(ins, [rep] * n_out), True


def _optimizer_plan(op, specs, mesh):
    """An update op runs where its parameter's block lives: every operand of the
    parameter's shape takes its placements (a Partial gradient is reduced first);
    the one-element ones (learning rate, beta powers) are Replicate."""
    p = specs[0]
    if p is None or any(isinstance(x, Partial) for x in p.placements):
        return None
    rep = [Replicate()] * mesh.ndim
    ins = []
    for s in specs:
        if s is None:
            ins.append(None)
        elif list(s.shape) == list(p.shape):
            ins.append(list(p.placements))
        else:
            ins.append(rep)
    outs = []
    for r in op.results:
        outs.append(list(p.placements) if list(r.type.shape) == list(p.shape) else rep)
    return Plan(ins, outs)


def _replicate_only():
    """The registry's explicit replicate-only entries (a registry may have none)."""
    from fw.distributed.auto_parallel import spmd_rules

    return getattr(spmd_rules, "REPLICATE_ONLY", {})


def propagate(program, mesh, annotations, max_sweeps=None, coord=None):
    """Placements for every value of `program`'s block 0.

    Args:
        program (fw.core.ir.Program): a straight-line program (no cond/while).
        mesh (ProcessMesh): the mesh every value lives on.
        annotations (dict): block-0 argument Value -> placements (fixed).
        max_sweeps (int, optional): bound on the forward sweeps (default: one
            more than the number of free leaves, plus one).
        coord (list, optional): a mesh coordinate for rules that look at one
            (placements do not depend on it); default the first.

    Returns:
        Propagation.
    """
    from fw.core.errors import UnsupportedError

    blk = program.block
    for op in blk.ops:
        if op.blocks:
            raise UnsupportedError(f"dist.to_static: the program has a '{op.name}' op with "
                                   f"nested blocks (tensor-dependent if/while); control flow "
                                   f"is not supported by dist.to_static yet")
    coord = list(coord) if coord is not None else [0] * mesh.ndim
    res = Propagation(mesh)
    rep = [Replicate()] * mesh.ndim
    pl = res.placements
    free = []
    for a in blk.args:
        if a in annotations:
            pl[a] = list(annotations[a])
        else:
            pl[a] = list(rep)
            free.append(a)
    first_use: dict = {}
    for op in blk.ops:
        for k, s in enumerate(_slots(op)):
            for x in (s if isinstance(s, list) else [s]):
                if x is not None and x not in first_use:
                    first_use[x] = (op, k, s if isinstance(s, list) else None)
    limit = max_sweeps if max_sweeps is not None else len(free) + 2
    while True:
        res.sweeps += 1
        res.plans.clear()
        res.fallbacks.clear()
        res.fallback_ops.clear()
        res.replicate_only.clear()
        rep_only = _replicate_only()
        for op in blk.ops:
            plan, fell = plan_op(op, pl, mesh, coord)
            res.plans[op] = plan
            if fell:
                res.fallbacks[op.name] += 1
                res.fallback_ops.append(op)
            elif op.name in rep_only:
                res.replicate_only[op.name] += 1
            for r, p in zip(op.results, plan.outputs):
                pl[r] = list(p)
        changed = False
        for a in free:
            if a in res.adopted or a not in first_use:
                continue
            op, k, group = first_use[a]
            want = res.plans[op].inputs[k]
            if group is not None:
                want = want[next(i for i, x in enumerate(group) if x is a)] \
                    if want is not None else None
            if want is None or any(isinstance(p, Partial) for p in want):
                continue
            if list(want) != pl[a]:
                pl[a] = list(want)
                res.adopted[a] = list(want)
                changed = True
        if not changed or res.sweeps >= limit:
            break
    return res
