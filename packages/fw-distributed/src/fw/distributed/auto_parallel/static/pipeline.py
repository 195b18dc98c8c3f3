"""Pipeline-stage split: the global program cut into stages along the mesh's
"pp" axis, each stage run per micro-batch as forward and backward *jobs* by a
schedule (1F1B or FThenB), values crossing stages sent rank to rank.

This follows the shape of Paddle 3's static pipeline (its pipeline scheduler
passes split the program into forward/backward/optimizer job types and the
executor runs a plan of jobs per micro-batch); fw-core's op table has no
point-to-point ops, so the transfers are made between jobs, on this rank's
engine (non-blocking sends, blocking receives).

- **stages**: the forward ops (up to the loss) are cut into ``n`` contiguous
  runs holding about the same number of parameter elements; a backward op goes
  to the lowest stage among its operands' (it reads the forward values of its
  own stage and gradients from the later ones); an op with no tensor operand
  (a constant) is copied into every job that uses it. Any assignment is correct
  — a value used on another stage is sent there — this one keeps the transfers
  to the activations at the cuts and their gradients.
- **jobs**: each stage has a forward and a backward sub-program (`SubProgram`):
  block-0 values it reads from elsewhere become its inputs, values read
  elsewhere its outputs. Each is partitioned over the stage's slice of the mesh
  (the other axes: dp/mp sharding inside a stage works as without pp).
- **schedule**: `schedule` gives each stage's job order; a receiver takes the
  messages of a peer in the order the peer's own schedule sends them (buffering
  those it needs later), so any valid order is deadlock-free.
"""

from __future__ import annotations

from fw.core.ir.builder import Builder

__all__ = ["assign_stages", "SubProgram", "build_jobs", "schedule"]


def _is_const_op(op):
    return not any(v is not None for v in op.operands)


def assign_stages(program, n_stages, loss):
    """(stage of each op, index of the last forward op). Forward ops are cut by
    parameter elements; backward ops take the lowest stage of their operands."""
    blk = program.block
    ops = blk.ops
    last_fwd = next(i for i, op in enumerate(ops) if any(r is loss for r in op.results))
    seen = set()
    weight = []
    for op in ops[:last_fwd + 1]:
        w = 1
        for v in op.operands:
            if v is not None and v.role == "param" and v not in seen:
                seen.add(v)
                w += v.type.numel()
        weight.append(w)
    total = float(sum(weight))
    stage_of: dict = {}
    value_stage: dict = {}
    acc = 0.0
    for i, op in enumerate(ops[:last_fwd + 1]):
        s = min(int(acc * n_stages / total), n_stages - 1)
        acc += weight[i]
        if _is_const_op(op):
            stage_of[op] = None
            continue
        stage_of[op] = s
        for r in op.results:
            value_stage[r] = s
        for v in op.operands:
            if v is not None and v.role == "param" and v not in value_stage:
                value_stage[v] = s
    for op in ops[last_fwd + 1:]:
        if _is_const_op(op):
            stage_of[op] = None
            continue
        st = [value_stage[v] for v in op.operands if v is not None and v in value_stage]
        s = min(st) if st else n_stages - 1
        stage_of[op] = s
        for r in op.results:
            value_stage[r] = s
    return stage_of, last_fwd, value_stage


class SubProgram:
    """One job's program: ``program`` (global shapes); ``inputs`` the global
    Values its inputs stand for; ``outputs`` the global Values it returns."""

    def __init__(self, program, inputs, outputs):
        self.program, self.inputs, self.outputs = program, inputs, outputs


def _subprogram(program, ops, produced_elsewhere, needed_outside, const_ops):
    b = Builder()
    vm: dict = {}
    inputs = []
    with b:
        def val(v):
            got = vm.get(v)
            if got is not None:
                return got
            if v.role in ("param", "const") and v.owner is program.block:
                nv = b.capture(program.captured[v.label])
            elif v.owner is program.block or v in produced_elsewhere:
                nv = b.add_input(v.type, f"in_{len(inputs)}")
                inputs.append(v)
            else:                       # a constant op's result: emitted here too
                op = const_ops[v]
                new = b.append_op(op.opdef, [], op.attrs, [r.type for r in op.results])
                for r, nr in zip(op.results, new.results):
                    vm[r] = nr
                return vm[v]
            vm[v] = nv
            return nv

        for op in ops:
            operands = [None if v is None else val(v) for v in op.operands]
            new = b.append_op(op.opdef, operands, op.attrs, [r.type for r in op.results])
            for r, nr in zip(op.results, new.results):
                nr._sg = r._sg
                vm[r] = nr
        outs = [v for v in needed_outside if v in vm]
        b.set_outputs([vm[v] for v in outs])
    return SubProgram(b.program, inputs, outs)


def build_jobs(program, stage_of, last_fwd, extra_outputs):
    """{(stage, "F"|"B"): SubProgram}. `extra_outputs` (global Values: the loss,
    the parameters' gradients) are outputs of whichever job computes them."""
    blk = program.block
    const_ops = {}
    for op in blk.ops:
        if stage_of[op] is None:
            for r in op.results:
                const_ops[r] = op
    job_of: dict = {}
    for i, op in enumerate(blk.ops):
        if stage_of[op] is not None:
            job_of[op] = (stage_of[op], "F" if i <= last_fwd else "B")
    producer = {}
    for op, job in job_of.items():
        for r in op.results:
            producer[r] = job
    consumers: dict = {}
    for op, job in job_of.items():
        for v in op.operands:
            if v is not None and v in producer and producer[v] != job:
                consumers.setdefault(v, set()).add(job)
    jobs = {}
    for job in sorted(set(job_of.values())):
        ops = [op for op in blk.ops if job_of.get(op) == job]
        elsewhere = {v for v, j in producer.items() if j != job}
        outside = [v for v in producer if producer[v] == job and v in consumers]
        have = {id(v) for v in outside}
        for v in extra_outputs:          # (Values compare elementwise: ids, not ==)
            if producer.get(v) == job and id(v) not in have:
                outside.append(v)
                have.add(id(v))
        jobs[job] = _subprogram(program, ops, elsewhere, outside, const_ops)
    return jobs, producer


def schedule(mode, n_stages, stage, n_micro, train=True):
    """This stage's job order: [("F"|"B", micro-batch)].

    1F1B: ``n_stages - stage - 1`` warm-up forwards, then one forward and one
    backward in turn, then the remaining backwards; FThenB: every forward, then
    every backward (in micro-batch order)."""
    if not train:
        return [("F", i) for i in range(n_micro)]
    if mode == "FThenB":
        return [("F", i) for i in range(n_micro)] + [("B", i) for i in range(n_micro)]
    if mode != "1F1B":
        raise NotImplementedError(f"dist.to_static: pipeline schedule_mode={mode!r} is not "
                                  f"supported by dist.to_static yet (1F1B and FThenB are)")
    warm = min(n_stages - stage - 1, n_micro)
    out = [("F", i) for i in range(warm)]
    f, bw = warm, 0
    while f < n_micro:
        out.append(("F", f))
        f += 1
        out.append(("B", bw))
        bw += 1
    out += [("B", i) for i in range(bw, n_micro)]
    return out
