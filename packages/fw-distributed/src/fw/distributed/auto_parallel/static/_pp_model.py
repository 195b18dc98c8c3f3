"""`DistModel` on a mesh with a "pp" axis: build the stage jobs of this rank
(`pipeline`) and run a step as the schedule's forward/backward jobs per
micro-batch, then the optimizer job (gradients averaged over the micro-batches:
dense training with gradient accumulation)."""

from __future__ import annotations

import numpy as np

from fw.core.ir.builder import Builder
from fw.core.ir.executor import compile_program
from fw.core.ir.types import TensorType
from fw.core.tensor import Tensor, wrap
from fw.distributed.auto_parallel._layout import local_box, local_shape
from fw.distributed.auto_parallel.dist_tensor import DistTensor, make_dist
from fw.distributed.auto_parallel.placement import Replicate
from fw.distributed.auto_parallel.static.partition import partition
from fw.distributed.auto_parallel.static.pipeline import assign_stages, build_jobs, schedule
from fw.distributed.auto_parallel.static.propagation import propagate
from fw.distributed.auto_parallel.static.reshard import ReshardEmitter
from fw.distributed.auto_parallel.static.tracing import trace_step

__all__ = ["build_pipeline", "run_pipeline"]

_FN = "dist.to_static"


class _Job:
    def __init__(self, sub, rp, compiled):
        self.sub, self.rp, self.compiled = sub, rp, compiled


class PipelineBuilt:
    """This rank's pipeline: its stage, jobs, schedule and where values go."""


def _dense(x):
    if isinstance(x, DistTensor):
        from fw.distributed.auto_parallel.api import unshard_dtensor

        x = unshard_dtensor(x)
    return np.asarray(x._data if isinstance(x, Tensor) else x)


def build_pipeline(dm, mode, batch):
    """Trace, propagate on the stage mesh, split into jobs, partition this rank's."""
    from fw.distributed.auto_parallel import _comm
    from fw.distributed.auto_parallel.static.dist_model import _unsupported

    mesh, st = dm._mesh, dm._strategy
    pa = mesh.dim_names.index("pp")
    n = mesh.shape[pa]
    pipe = st.pipeline
    if not pipe.enable:
        raise ValueError(f"{_FN}: the mesh has a 'pp' axis ({mesh}); enable "
                         f"strategy.pipeline (pp_degree={n}, accumulate_steps, schedule_mode)")
    if pipe.pp_degree != n:
        raise ValueError(f"{_FN}: strategy.pipeline.pp_degree={pipe.pp_degree} but the 'pp' "
                         f"axis of {mesh} has {n} ranks")
    if st.gradient_merge.enable or st.sharding.enable:
        raise _unsupported("gradient_merge or sharding together with a pipeline")
    if mode == "predict":
        raise _unsupported("predict() with a pipeline (train and eval are)")
    m = pipe.accumulate_steps
    dense = [_dense(x) for x in batch]
    if any(d.ndim == 0 or d.shape[0] % m for d in dense):
        raise ValueError(f"{_FN}: the batch dim of every batch element must be a multiple of "
                         f"strategy.pipeline.accumulate_steps={m}; got shapes "
                         f"{[list(d.shape) for d in dense]}")
    # trace one micro-batch (global shapes; placements of the distributed elements)
    micro = []
    for x, d in zip(batch, dense):
        shape = [d.shape[0] // m] + list(d.shape[1:])
        z = wrap(np.zeros(shape, d.dtype))
        micro.append(make_dist(z, mesh, list(x.placements), shape)
                     if isinstance(x, DistTensor) else z)
    from fw.distributed.auto_parallel.static.dist_model import _amp_context

    amp_ctx, loss_scale = _amp_context(st.amp)
    traced = trace_step(dm._layer, dm._loss, micro, mode, mesh, amp=amp_ctx,
                        loss_scale=loss_scale)
    prog = traced.program
    if mode == "train" and st.recompute.enable:
        from fw.distributed.auto_parallel.static.recompute import apply_recompute

        dm._recomputed = apply_recompute(prog, prog.block.outputs[0])
    coord = _comm.my_coord(mesh)
    s = coord[pa]
    sub_mesh = mesh.get_mesh_with_dim("pp", s)
    sub_coord = [c for a, c in enumerate(coord) if a != pa]
    full_axis = [a for a in range(mesh.ndim) if a != pa]
    for a in range(mesh.ndim):          # every rank makes every group, in one order
        _comm.axis_group(mesh, a)

    def group_of(axis):
        g = _comm.axis_group(mesh, full_axis[axis])
        return g.id, list(g.ranks)

    def drop(pl):
        return [p for a, p in enumerate(pl) if a != pa]

    prop = propagate(prog, sub_mesh, {a: drop(pl) for a, pl in traced.annotations.items()})
    loss = prog.block.outputs[0]
    grads = dict(zip(traced.grads, prog.block.outputs[traced.n_outputs:]))
    stage_of, last_fwd, value_stage = assign_stages(prog, n, loss)
    jobs, producer = build_jobs(prog, stage_of, last_fwd, [loss] + list(grads.values()))
    by_label = {a.label: a for a in prog.block.args}
    owned = {}
    for label, gv in grads.items():
        owner = value_stage.get(by_label[label])
        if producer.get(gv, (owner,))[0] != owner:
            raise _unsupported(f"parameter {label!r} used on several pipeline stages (tied "
                               f"weights across stages)")
        if owner == s:
            owned[label] = gv

    def local_tensor(sub, arg, pl):
        orig = traced.params.get(arg.label)
        if orig is not None:
            full = list(pl)
            full.insert(pa, Replicate())
            return dm._local_tensor(arg, full, traced, coord)
        t = sub.program.captured[arg.label]
        if all(isinstance(p, Replicate) for p in pl):
            return t
        box = local_box(t._data.shape, pl, sub_mesh, sub_coord)
        return wrap(np.ascontiguousarray(t._data[tuple(slice(a, a + k) for a, k in box)]))

    dm._replaced = {}
    mine = {}
    captured = {}
    comms = []
    for kind in ("F", "B"):
        sub = jobs.get((s, kind))
        if sub is None:
            continue
        ann = {}
        for a in sub.program.block.args:
            if a.role == "input":
                ann[a] = prop.placements[sub.inputs[int(a.label.split("_")[1])]]
            else:
                ann[a] = prop.placements[by_label[a.label]] if a.label in by_label else \
                    [Replicate()] * sub_mesh.ndim
        sp = propagate(sub.program, sub_mesh, ann)
        outs_pl = [prop.placements[v] for v in sub.outputs]
        rp = partition(sub.program, sp, sub_mesh, sub_coord, group_of,
                       lambda a, pl, sub=sub: local_tensor(sub, a, pl), outs_pl)
        captured.update(rp.captured)
        comms.extend(rp.comms)
        mine[kind] = _Job(sub, rp, compile_program(rp.program))
    built = PipelineBuilt()
    built.mode, built.traced, built.prop, built.stage, built.n_stages = mode, traced, prop, s, n
    built.jobs, built.mine, built.producer, built.loss, built.grads = jobs, mine, producer, loss, \
        grads
    built.m, built.sub_mesh, built.sub_coord, built.pa = m, sub_mesh, sub_coord, pa
    built.schedule_mode = pipe.schedule_mode
    built.sched = schedule(pipe.schedule_mode, n, s, m, mode == "train")
    built.comms, built.coord = comms, coord
    built.stage_of = stage_of
    # where each job output goes (stages other than its own)
    dests = {}
    for job, sub in jobs.items():
        for v in sub.inputs:
            pj = producer.get(v)
            if pj is not None and pj[0] != job[0]:
                dests.setdefault(v, set()).add(job[0])
    built.dests = {v: sorted(d) for v, d in dests.items()}
    built.recv_order = {}
    for peer in range(n):
        if peer == s:
            continue
        order = []
        for kind, i in schedule(pipe.schedule_mode, n, peer, m, mode == "train"):
            sub = jobs.get((peer, kind))
            if sub is None:
                continue
            for v in sub.outputs:
                if s in built.dests.get(v, ()):
                    order.append((v, i))
        built.recv_order[peer] = order
    built.owned = owned
    built.opt = _optimizer_job(dm, built, captured, owned, by_label, group_of) \
        if mode == "train" else None
    return built


def _optimizer_job(dm, built, captured, owned, by_label, group_of):
    """The update of this stage's parameters from their accumulated gradients."""
    from fw.distributed.auto_parallel.static.dist_model import _unsupported

    class _RP:        # what _localize_optimizer reads
        pass

    rp = _RP()
    rp.captured = captured
    dm._localize_optimizer(built.traced, rp)
    plan = dm._opt.update_plan()
    if plan.clip is not None:
        raise _unsupported("gradient clipping with a pipeline")
    label_of = {id(t): lab for lab, t in captured.items()}
    prop, mesh, coord = built.prop, built.sub_mesh, built.sub_coord
    b = Builder()
    order = []
    with b:
        em = ReshardEmitter(mesh, coord, group_of, built.comms)
        for grp in plan.groups:
            for i, p in enumerate(grp.params):
                lab = label_of.get(id(p))
                if lab not in owned:
                    continue
                gv = owned[lab]
                gpl = prop.placements[gv]
                ppl = prop.placements[by_label[lab]]
                g = b.add_input(TensorType(local_shape(gv.type.shape, gpl, mesh, coord),
                                           gv.type.dtype), f"grad_{len(order)}")
                g = em.reshard(g, list(gv.type.shape), gpl, ppl, f"grad of {lab}")
                order.append(lab)
                pv = b.current_value(p)
                g = grp.regularize(pv, g)
                lr = b.current_value(dm._lr_tensor(plan, float(grp.lr_mult)))
                states = {name: dm._state(grp, i, name, p, None) for name in grp.states}
                new_p, new_states = grp.update(pv, g, lr, {k: b.current_value(t)
                                                           for k, t in states.items()})
                b.record_update(p, new_p)
                for k, v in new_states.items():
                    b.record_update(states[k], v)
        b.set_outputs([])
    return order, compile_program(b.program)


def run_pipeline(dm, built, batch):
    """One step: the schedule's jobs per micro-batch, then the optimizer job."""
    from fw.distributed import _fleet_comm as comm
    from fw.distributed.auto_parallel import _comm

    mesh, s, m = dm._mesh, built.stage, built.m
    dense = [_dense(x) for x in batch]
    mb = [d.shape[0] // m for d in dense]
    ins_idx = {a: k for k, a in enumerate(built.traced.program.inputs())}
    saved, buffer, sends = {}, {}, []
    losses = []
    acc = {}
    coord = list(built.coord)

    def peer(stage):
        c = list(coord)
        c[built.pa] = stage
        return int(np.asarray(mesh.mesh)[tuple(c)])

    def recv(stage, key):
        while key not in buffer:
            v, i = built.recv_order[stage].pop(0) if built.recv_order[stage] else (None, None)
            if v is None:
                raise RuntimeError(f"{_FN}: pipeline stage {s} waits for a value stage {stage} "
                                   f"never sends (a schedule bug)")
            shape = local_shape(v.type.shape, built.prop.placements[v], built.sub_mesh,
                                built.sub_coord)
            arr = np.empty(shape, v.type.dtype.np)
            comm.recv(arr, peer(stage))
            buffer[(v, i)] = arr
        return buffer.pop(key)

    orders = {p: list(o) for p, o in built.recv_order.items()}
    saved_orders = built.recv_order
    built.recv_order = orders
    try:
        for kind, i in built.sched:
            job = built.mine[kind]
            arrays = []
            for v in job.sub.inputs:
                if v in ins_idx:
                    d = dense[ins_idx[v]][i * mb[ins_idx[v]]:(i + 1) * mb[ins_idx[v]]]
                    box = local_box(d.shape, built.prop.placements[v], built.sub_mesh,
                                    built.sub_coord)
                    arrays.append(np.ascontiguousarray(d[tuple(slice(a, a + k)
                                                               for a, k in box)]))
                elif built.producer[v][0] == s:
                    arrays.append(saved[(v, i)])
                else:
                    arrays.append(recv(built.producer[v][0], (v, i)))
            outs = job.compiled(arrays)
            for v, o in zip(job.sub.outputs, outs):
                o = np.require(o, requirements="C")   # (keeps a 0-d loss 0-d)
                saved[(v, i)] = o
                for dst in built.dests.get(v, ()):
                    sends.append((comm.send(o, peer(dst), sync_op=False), o))
                if v is built.loss:
                    losses.append(float(o.reshape(())))
                for lab, gv in built.owned.items():
                    if gv is v:
                        acc[lab] = o.copy() if lab not in acc else acc[lab] + o
        for task, _o in sends:
            comm.wait(task)
    finally:
        built.recv_order = saved_orders
    if built.opt is not None:
        order, compiled = built.opt
        for mult, t in dm._lr.items():
            t._data[0] = dm._opt.get_lr() * mult
        compiled([(acc[lab] / m).astype(acc[lab].dtype) for lab in order])
    out = np.array([np.mean(losses) if losses else 0.0], dtype=np.float32)
    g = _comm.axis_group(mesh, built.pa)
    if g is not None:
        comm.broadcast(out, src=built.n_stages - 1, group=g)
    return wrap(out.reshape([]))
