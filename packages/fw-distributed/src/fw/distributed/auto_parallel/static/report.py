"""The text of `DistModel.report()` / ``print(dist_model)``: the placement chosen
for every parameter and activation, every communication inserted on this rank
(with the bytes it sends), and the ops that fell back to replicate."""

from __future__ import annotations

from collections import Counter

from fw.distributed.auto_parallel._layout import local_shape

__all__ = ["format_report", "format_placements"]


def format_placements(pl) -> str:
    return "[" + ", ".join(str(p) for p in pl) + "]"


def _value_name(v, names):
    n = names.get(v)
    if n is None:
        n = v.label if v.label is not None else f"%{len(names)}"
        names[v] = n
    return n


def format_pipeline(mode, built, mesh) -> str:
    from collections import Counter as _C

    traced, prop = built.traced, built.prop
    per_stage = _C(s for s in built.stage_of.values() if s is not None)
    lines = [f"DistModel [{mode}] on {mesh}: pipeline of {built.n_stages} stages "
             f"({built.schedule_mode}, {built.m} micro-batches); this rank: stage "
             f"{built.stage}, mesh coordinate {built.coord}",
             "  ops per stage: " + ", ".join(f"{k}: {v}" for k, v in sorted(per_stage.items())),
             "  schedule of this stage: "
             + " ".join(f"{k}{i}" for k, i in built.sched)]
    lines.append("  parameters of this stage (global shape: placements on the stage mesh):")
    for lab in built.owned:
        a = next(x for x in traced.program.block.args if x.label == lab)
        lines.append(f"    {lab}: {list(a.type.shape)}: {format_placements(prop.placements[a])}")
    sent = [v for v in built.dests if built.producer[v][0] == built.stage]
    nbytes = sum(v.type.numel() * v.type.dtype.itemsize for v in sent)
    lines.append(f"  sent to other stages per micro-batch: {len(sent)} value(s), "
                 f"{nbytes} bytes (global)")
    for v in sent:
        lines.append(f"    {list(v.type.shape)} {format_placements(prop.placements[v])} -> "
                     f"stage(s) {built.dests[v]}")
    lines.append(f"  collectives inside this stage's jobs: {len(built.comms)}, "
                 f"{sum(c.nbytes for c in built.comms)} bytes")
    if prop.fallbacks:
        lines.append("  replicate fallback: " + ", ".join(
            f"{n} x{k}" for n, k in sorted(prop.fallbacks.items())))
    return "\n".join(lines)


def format_report(mode, built, mesh) -> str:
    if hasattr(built, "jobs"):
        return format_pipeline(mode, built, mesh)
    prop, rp, traced = built.prop, built.rank_prog, built.traced
    prog = traced.program
    coord = rp.coord
    lines = [f"DistModel [{mode}] on {mesh} (this rank: mesh coordinate {coord})",
             f"  propagation: {prop.sweeps} sweep(s); {len(prop.adopted)} leaf placement(s) "
             f"inferred backwards"]
    names: dict = {}
    lines.append("  parameters (global shape -> local shape: placements):")
    for a in prog.block.args:
        if a.role == "param":
            pl = prop.placements[a]
            how = "annotated" if a in traced.annotations else (
                "inferred" if a in prop.adopted else "default")
            lines.append(f"    {a.label}: {list(a.type.shape)} -> "
                         f"{local_shape(a.type.shape, pl, mesh, coord)}: "
                         f"{format_placements(pl)} ({how})")
    lines.append("  inputs:")
    for a in prog.inputs():
        lines.append(f"    {a.label}: {list(a.type.shape)}: "
                     f"{format_placements(prop.placements[a])}")
    lines.append("  activations (op -> result placements):")
    for op in prog.block.ops:
        res = ", ".join(f"{_value_name(r, names)}{list(r.type.shape)} "
                        f"{format_placements(prop.placements[r])}" for r in op.results)
        lines.append(f"    {op.name}: {res}")
    total = sum(c.nbytes for c in rp.comms)
    kinds = Counter(c.kind for c in rp.comms)
    lines.append(f"  communication on this rank: {len(rp.comms)} collective(s), {total} bytes "
                 f"sent ({', '.join(f'{k} x{n}' for k, n in sorted(kinds.items())) or 'none'})")
    for c in rp.comms:
        lines.append(f"    {c.kind} axis {c.axis} {list(c.ranks)}: {c.value} "
                     f"{list(c.shape)} {format_placements(c.src)} -> "
                     f"{format_placements(c.dst)}: {c.nbytes} B")
    if built.extra.get("recomputed"):
        lines.append(f"  recompute: {built.extra['recomputed']} forward op(s) recomputed in "
                     f"the backward")
    zero = built.extra.get("zero")
    if zero is not None:
        lines.append(f"  sharding stage {zero['stage']} over mesh axis {zero['axis']}: "
                     f"{zero['n']} parameter(s) updated by blocks"
                     + (f"; updated whole: {', '.join(zero['skipped'])}"
                        if zero["skipped"] else ""))
    if prop.fallbacks:
        lines.append("  replicate fallback (no SPMD rule, or the rule declined): " + ", ".join(
            f"{n} x{k}" for n, k in sorted(prop.fallbacks.items())))
    else:
        lines.append("  replicate fallback: none")
    if prop.replicate_only:
        lines.append("  replicated by their rule (replicate-only ops): " + ", ".join(
            f"{n} x{k}" for n, k in sorted(prop.replicate_only.items())))
    return "\n".join(lines)
