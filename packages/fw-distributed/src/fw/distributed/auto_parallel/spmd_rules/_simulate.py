"""Run an op's SPMD rule on simulated ranks in one process (no launcher, no MPI).

`simulate` is the oracle of the rule tests: it asks the rule for a plan on every
rank of a mesh, cuts each dense input into the rank's block per the plan's input
placements (a sum-Partial input is split into random pieces that add up to it, so
a rule that lets a Partial through a non-linear op gives a wrong answer), runs
the op on the blocks through the ordinary dispatcher, and reassembles every
output from the ranks' blocks per the output placements (Partial blocks reduced
by their reduce type; Replicate blocks checked equal across the axis). The result
must equal the op on the dense inputs."""

from __future__ import annotations

import itertools

import numpy as np

from fw.distributed.auto_parallel._layout import local_box
from fw.distributed.auto_parallel.placement import Partial, Replicate, Shard

__all__ = ["simulate", "SimResult"]


class SimResult:
    """What `simulate` found: the plan of rank 0 (``plan``), whether the rule
    declined (``fell_back``), the reassembled outputs as NumPy arrays
    (``outputs``) and the first replica mismatch, if any (``replica_error``)."""

    __slots__ = ("plan", "fell_back", "outputs", "replica_error")

    def __init__(self, plan, fell_back, outputs, replica_error):
        self.plan, self.fell_back = plan, fell_back
        self.outputs, self.replica_error = outputs, replica_error


def _np(t):
    return np.asarray(t.numpy()) if hasattr(t, "numpy") else np.asarray(t)


def _noise(rng, shape, dtype):
    if dtype.kind == "b":
        return np.zeros(shape, dtype)
    if dtype.kind in "iu":
        return rng.integers(-2, 3, size=shape).astype(dtype)
    # multiples of 1/8: exact in every float dtype, so x + r - r loses little
    r = np.round(rng.uniform(-2, 2, size=shape) * 8) / 8
    if dtype.kind == "c":
        r = r + 1j * np.round(rng.uniform(-2, 2, size=shape) * 8) / 8
    return r.astype(dtype)


class _Cutter:
    """The blocks of one dense input under one placement list, for every rank."""

    def __init__(self, dense, placements, mesh, rng):
        self.dense, self.pl, self.mesh = dense, placements, mesh
        self.paxes = [a for a, p in enumerate(placements) if isinstance(p, Partial)]
        self.pieces = {}
        if self.paxes:
            combos = list(itertools.product(*[range(mesh.shape[a]) for a in self.paxes]))
            sums = [a for a in self.paxes if int(placements[a].reduce_type) == 0]
            # sum axes: random pieces adding up to the value; other reduce types:
            # every rank holds the value (max/min/avg), or 1 off coordinate 0 (prod)
            base = dense
            for c in combos[1:]:
                if any(c[self.paxes.index(a)] for a in sums):
                    n = _noise(rng, dense.shape, dense.dtype)
                    self.pieces[c] = n
                    base = base - n if dense.dtype.kind != "b" else base
            self.pieces[combos[0]] = base

    def block(self, coord):
        box = local_box(self.dense.shape, self.pl, self.mesh, coord)
        sl = tuple(slice(s, s + n) for s, n in box)
        if not self.paxes:
            return self.dense[sl]
        c = tuple(coord[a] for a in self.paxes)
        if c in self.pieces:
            return np.asarray(self.pieces[c])[sl]
        # a coordinate off 0 only along non-sum axes
        prods = [a for a in self.paxes if int(self.pl[a].reduce_type) == 3 and coord[a]]
        if prods:
            return np.ones_like(self.dense[sl])
        return self.dense[sl]


def _reduce(blocks, rt):
    st = np.stack(blocks)
    if rt == 0:
        return st.sum(0, dtype=st.dtype)
    if rt == 1:
        return st.max(0)
    if rt == 2:
        return st.min(0)
    if rt == 3:
        return st.prod(0, dtype=st.dtype)
    if rt == 4:
        return (st.sum(0) / len(blocks)).astype(st.dtype)
    if rt == 5:
        return st.any(0)
    return st.all(0)


def simulate(op, args, attrs, mesh, placements, seed=0):
    """Run `op` per its SPMD rule on every rank of `mesh`, simulated in-process.

    Args:
        op (OpDef): the op (``fw.core.internal.OPS[name]``).
        args (list): the dense arguments aligned with ``op.inputs`` (Tensors,
            Python scalars, None; a list for the variadic input).
        attrs (dict): the op's attributes.
        mesh (ProcessMesh): the simulated mesh.
        placements (list): the placements of each tensor argument (one list per
            mesh axis entry; None for non-tensors; a list of them for the variadic
            input) — what the rule sees as the inputs' current placements.
        seed (int): seeds the random pieces of Partial inputs.

    Returns:
        SimResult: ``outputs`` are the global outputs reassembled from the ranks.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import fw.distributed as dist
            >>> from fw.core.internal import OPS
            >>> from fw.distributed.auto_parallel.spmd_rules._simulate import simulate
            >>> mesh = dist.ProcessMesh([0, 1], ["x"])
            >>> x, y = fw.ones([4, 3]), fw.ones([3, 2])
            >>> r = simulate(OPS["matmul"], [x, y], {}, mesh, [[dist.Shard(1)], [dist.Shard(0)]])
            >>> r.plan.outputs, r.outputs[0].tolist()[0]
            ([[Partial(reduce_type=ReduceType.kRedSum)]], [3.0, 3.0])
    """
    from fw.core.dispatch import invoke
    from fw.core.internal import OPS
    from fw.core.tensor import Tensor, to_tensor
    from fw.distributed.auto_parallel import spmd
    from fw.distributed.auto_parallel.spmd_rules._base import RULES

    rng = np.random.default_rng(seed)
    specs = []
    for i, a in enumerate(args):
        if i == op.variadic:
            specs.append([spmd.Spec(x.shape, p, x.dtype) if isinstance(x, Tensor) else None
                          for x, p in zip(a, placements[i])])
        elif isinstance(a, Tensor):
            specs.append(spmd.Spec(a.shape, placements[i], a.dtype))
        else:
            specs.append(None)
    if op.canon is not None:
        attrs = op.canon(attrs)
    shapes = spmd._infer_shapes(op, args, specs, attrs)
    coords = [list(c) for c in itertools.product(*[range(n) for n in mesh.shape])]
    rule = RULES.get(op.name)
    if not any(x is not None for ss in specs for x in (ss if isinstance(ss, list) else [ss])):
        rule = None     # no tensor input: spmd never sees the op (nothing is distributed)
    plans = []
    for c in coords:
        plan = rule(spmd.Ctx(op, attrs, specs, mesh, shapes, c)) if rule is not None else None
        plans.append(plan)
    fell_back = plans[0] is None
    if fell_back:
        fb = spmd._fallback(op, specs, mesh)
        if op.num_outputs < 0 and shapes is not None:    # as many results as the attrs say
            fb.outputs = [[Replicate()] * mesh.ndim for _ in shapes]
        plans = [fb] * len(coords)
    for p in plans[1:]:
        if repr(p.inputs) != repr(plans[0].inputs) or repr(p.outputs) != repr(plans[0].outputs):
            raise AssertionError(f"{op.name}: the rule gave different placements on "
                                 f"different ranks: {plans[0].inputs}->{plans[0].outputs} vs "
                                 f"{p.inputs}->{p.outputs}")
    plan0 = plans[0]
    if plan0.shapes is not None:
        shapes = plan0.shapes
    # cut the inputs
    cutters = []
    for i, a in enumerate(args):
        if i == op.variadic:
            cutters.append([_Cutter(_np(x), w, mesh, rng) if isinstance(x, Tensor) else None
                            for x, w in zip(a, plan0.inputs[i])])
        elif isinstance(a, Tensor):
            cutters.append(_Cutter(_np(a), plan0.inputs[i], mesh, rng))
        else:
            cutters.append(None)
    per_rank = []
    for c, plan in zip(coords, plans):
        local = []
        for i, a in enumerate(args):
            if i == op.variadic:
                local.append([to_tensor(k.block(c)) if k is not None else x
                              for x, k in zip(a, cutters[i])])
            elif cutters[i] is not None:
                local.append(to_tensor(cutters[i].block(c)))
            else:
                local.append(a)
        lop = OPS[plan.op] if plan.op is not None else op
        lattrs = plan.attrs if plan.attrs is not None else attrs
        out = plan.local(local, lattrs) if plan.local is not None \
            else invoke(lop, local, lattrs)
        outs = out if isinstance(out, tuple) else (out,)
        if plan.post is not None:
            outs = tuple(plan.post(outs))
        per_rank.append([_np(o) for o in outs])
    if fell_back and (plan0.outputs is None or len(plan0.outputs) != len(per_rank[0])):
        # a variable number of results the infer could not tell: all whole
        plan0.outputs = [[Replicate()] * mesh.ndim for _ in per_rank[0]]
    if shapes is None:
        shapes = [list(o.shape) for o in per_rank[0]]
    results, replica_error = [], None
    for k, pl in enumerate(plan0.outputs):
        shape = [int(s) for s in shapes[k]]
        if any(s < 0 for s in shape) and all(isinstance(p, Replicate) for p in pl):
            shape = list(per_rank[0][k].shape)     # a data-dependent size, whole on every rank
        groups = {}
        first = {}
        for c, outs in zip(coords, per_rank):
            blk = outs[k]
            box = local_box(shape, pl, mesh, c)
            want = [n for _, n in box]
            if list(blk.shape) != want:
                raise AssertionError(f"{op.name}: output {k} of rank {c} has shape "
                                     f"{list(blk.shape)}, but placements {pl} of global shape "
                                     f"{shape} need {want}")
            key = tuple(c[a] if isinstance(p, Shard) else 0 for a, p in enumerate(pl))
            rkey = tuple(0 if isinstance(p, Replicate) else c[a] for a, p in enumerate(pl))
            if rkey in first:
                if replica_error is None and not _same(first[rkey], blk):
                    replica_error = (f"{op.name}: output {k} differs between replicas "
                                     f"{rkey} and {c} (placements {pl})")
                continue
            first[rkey] = blk
            groups.setdefault(key, (box, []))[1].append(blk)
        dt = per_rank[0][k].dtype
        res = np.zeros(shape, dt)
        rts = {int(p.reduce_type) for p in pl if isinstance(p, Partial)}
        rt = rts.pop() if len(rts) == 1 else (0 if not rts else None)
        if rt is None:
            raise AssertionError(f"{op.name}: output {k} mixes reduce types {pl}")
        for box, blocks in groups.values():
            sl = tuple(slice(s, s + n) for s, n in box)
            res[sl] = _reduce(blocks, rt) if len(blocks) > 1 else blocks[0]
        results.append(res)
    return SimResult(plan0, fell_back, results, replica_error)


def _same(a, b):
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))
