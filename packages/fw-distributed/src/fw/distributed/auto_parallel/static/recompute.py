"""Recompute (activation checkpointing) as a program rewrite.

The backward section of a traced training program reads forward activations;
the executor keeps each alive until its last reader, so every activation the
backward reads lives through the whole forward. With recompute the backward
reads its own copies: each forward value a backward op reads, unless it is a
*checkpoint*, is recomputed by clones of its producing ops emitted just before
that backward op (recursively, down to checkpoints). Checkpoints, as in
selective activation checkpointing (Korthikanti et al., 2022, "Reducing
Activation Recomputation in Large Transformer Models"): the program's inputs,
parameters and constants, and the results of ops that read a parameter (the
matmuls/linears/embeddings/norms: costly to recompute, and their outputs bound
the cheap elementwise chains between them). Random and side-effecting ops are
never recomputed (their results are checkpoints too).

The forward values that only the backward read then die at the end of the
forward's own last use; the gradients are unchanged (the same ops on the same
values)."""

from __future__ import annotations

from fw.core.ir.core import Operation

__all__ = ["apply_recompute"]


def _checkpoint_op(op) -> bool:
    d = op.opdef
    if getattr(d, "side_effect", False) or getattr(d, "random", False) \
            or d.family in ("random", "collective"):
        return True
    return any(v is not None and v.role == "param" for v in op.operands)


def apply_recompute(program, loss):
    """Rewrite the training `program` in place: the ops after the one computing
    `loss` are the backward. Returns the number of forward ops cloned into it."""
    blk = program.block
    ops = list(blk.ops)
    last_fwd = next(i for i, op in enumerate(ops) if any(r is loss for r in op.results))
    fwd = ops[:last_fwd + 1]
    producer = {}
    for op in fwd:
        for r in op.results:
            producer[r] = op
    keep = set()
    for op in fwd:
        if _checkpoint_op(op) or op.blocks:
            keep.update(op.results)
    new_ops = list(fwd)
    cloned = 0

    def clone(v, memo):
        nonlocal cloned
        if v is None or v not in producer or v in keep:
            return v
        got = memo.get(v)
        if got is not None:
            return got
        op = producer[v]
        operands = [clone(x, memo) for x in op.operands]
        new = Operation(op.opdef, operands, dict(op.attrs), [r.type for r in op.results],
                        (), op.loc)
        new.parent = blk
        new_ops.append(new)
        cloned += 1
        for r, nr in zip(op.results, new.results):
            nr._sg = r._sg
            memo[r] = nr
        return memo[v]

    memo: dict = {}          # one recomputation serves every later backward op
    for op in ops[last_fwd + 1:]:
        op.operands = [clone(v, memo) for v in op.operands]
        new_ops.append(op)
    outs = list(blk.outputs)
    blk.ops = new_ops
    blk.outputs = outs
    program.touch()
    return cloned
