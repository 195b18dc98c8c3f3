"""Partition: the program one rank runs, with local shapes and the reshards.

`partition` re-emits the global program's block 0 for the rank at mesh
coordinate `coord`: each input becomes an input of its local block's shape,
each param/const is captured as the tensor `local_tensor` hands out (the rank's
block), and each operation is emitted on local operands after the reshards its
plan asks for (`reshard.ReshardEmitter`). The rule's local details apply: another
local op (``plan.op``), local attributes (``plan.attrs``: a reshape's local
target) and a post-step (``plan.post``: a sharded mean's division by the global
count). Every result's local shape is checked against its placements, so a wrong
rule fails here, naming it, instead of computing garbage.

The same reshard of one value for several consumers is emitted once. The global
program's state updates become state updates of the local blocks."""

from __future__ import annotations

from fw.core.ir.builder import Builder
from fw.core.ir.types import TensorType
from fw.distributed.auto_parallel._layout import local_shape
from fw.distributed.auto_parallel.static.propagation import _slots, plan_op
from fw.distributed.auto_parallel.static.reshard import ReshardEmitter

__all__ = ["RankProgram", "partition"]


class RankProgram:
    """One rank's program and what it took to build it.

    Attributes:
        program (Program): the local program.
        builder (Builder): its builder (more ops may be appended: an optimizer step).
        values (dict): global Value -> local Value.
        comms (list): the `reshard.Comm` s inserted, in program order.
        coord (list): the rank's mesh coordinate.
        emitter (ReshardEmitter): emits more reshards into `builder` (logged in `comms`).
    """

    def __init__(self, program, builder, values, comms, coord, local, captured, emitter):
        self.program, self.builder, self.values = program, builder, values
        self.comms, self.coord, self.captured = comms, coord, captured
        self._local = local
        self.emitter = emitter

    def local(self, value, placements):
        """The local Value of global `value` resharded to `placements` (inside
        ``with rank_program.builder:``)."""
        return self._local(value, placements)


def _name(v):
    return v.label if v.label is not None else f"%{v.owner.name}.{v.index}" \
        if hasattr(v.owner, "name") else f"%{v._id}"


def partition(program, prop, mesh, coord, group_of, local_tensor, output_placements,
              finish=True):
    """The program of the rank at `coord`.

    Args:
        program (Program): the global program (block 0 straight-line).
        prop (Propagation): `propagation.propagate`'s result for it.
        mesh (ProcessMesh): the mesh.
        coord (list[int]): the rank's mesh coordinate.
        group_of (callable): ``group_of(axis) -> (ring_id, ranks)``.
        local_tensor (callable): ``local_tensor(arg, placements) -> Tensor``: the
            rank's block of a param/const argument (captured by the local program).
        output_placements (list): placements each output of `program` must end in.
        finish (bool): set the outputs (False leaves the builder open for more ops;
            the local outputs are then in ``values``).

    Returns:
        RankProgram.
    """
    from fw.core.internal import OPS

    pl = prop.placements
    b = Builder()
    comms: list = []
    em = ReshardEmitter(mesh, coord, group_of, comms)
    vm: dict = {}
    cache: dict = {}
    captured: dict = {}

    def local(v, want):
        x = vm[v]
        have = pl[v]
        if want is None or list(want) == list(have):
            return x
        key = (v, tuple(str(p) for p in want))
        got = cache.get(key)
        if got is None:
            got = em.reshard(x, list(v.type.shape), have, want, _name(v))
            cache[key] = got
        return got

    with b:
        for a in program.block.args:
            if a.role == "input":
                vm[a] = b.add_input(TensorType(local_shape(a.type.shape, pl[a], mesh, coord),
                                               a.type.dtype), a.label)
            else:
                t = local_tensor(a, pl[a])
                captured[a.label] = t
                vm[a] = b.capture(t)
        for op in program.block.ops:
            plan, _ = plan_op(op, pl, mesh, coord)
            args = []
            for k, s in enumerate(_slots(op)):
                want = plan.inputs[k]
                if isinstance(s, list):
                    args.append([local(x, want[i] if want is not None else None)
                                 for i, x in enumerate(s)])
                else:
                    args.append(None if s is None else local(s, want))
            lop = OPS[plan.op] if plan.op is not None else op.opdef
            attrs = plan.attrs if plan.attrs is not None else dict(op.attrs)
            out = plan.local(args, attrs) if plan.local is not None \
                else b.emit(lop, args, attrs)
            outs = out if isinstance(out, tuple) else (out,)
            if plan.post is not None:
                outs = tuple(plan.post(outs))
            for k, (r, lo) in enumerate(zip(op.results, outs)):
                want_shape = local_shape(r.type.shape, plan.outputs[k], mesh, coord)
                if list(lo.type.shape) != want_shape:
                    raise RuntimeError(
                        f"dist.to_static: the SPMD rule of '{op.name}' gave result {k} "
                        f"placements {plan.outputs[k]} of global shape {list(r.type.shape)}, "
                        f"which needs a local block of shape {want_shape} at mesh coordinate "
                        f"{list(coord)}, but the local op gives {list(lo.type.shape)} (a bug "
                        f"in the rule of '{op.name}' in "
                        f"fw.distributed.auto_parallel.spmd_rules)")
                vm[r] = lo
        for label, v in program.updates:
            arg = next(a for a in program.block.args if a.label == label)
            b.record_update(captured[label], local(v, pl[arg]))
        if finish:
            outs = [local(v, want) for v, want in zip(program.block.outputs, output_placements)]
            b.set_outputs(outs)
    return RankProgram(b.program, b, vm, comms, list(coord), local, captured, em)
