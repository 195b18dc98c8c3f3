"""``merge_parallel_matmul`` (inference): products of one input with several
constant weights become one product with the weights side by side, then a split.

Matched::

    fused_matmul(x, W1, b1?) ... fused_matmul(x, Wn, bn?)
        -> split(fused_matmul(x, [W1 ... Wn], [b1 ... bn]?), [N1 ... Nn], axis=-1)

for n >= 2 fused_matmuls in one block reading the same x as their left operand,
with ``transpose_x=False``, no residual, and equal ``transpose_y``, ``activation``
and ``alpha`` (activations are elementwise, so each column block gets its own),
whose weights are 2-D block-0 constants of one dtype and contraction size, and
whose biases are all constants or all absent. The merged weight and bias are NEW
constants (the originals are dropped by ``dce`` when nothing else reads them).

Why: a transformer's query, key and value projections are three products of the
same activations; one product with three times the columns reads the activations
once and pays the per-call cost (the Python call, the primitive lookup, the
output's non-finite scan) once instead of three times (the "QKV merge" of ONNX
Runtime's attention fusion and of Megatron-style fused QKV weights). The split
results are views of the merged output (no copy); the products downstream read
strided views already (the heads' transposes). Each output element is the same
dot product as before; oneDNN may block the sums differently for the wider
matrix, so results agree to float rounding, not bit for bit.
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import InternalError
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import constant_array
from fw.core.ir.passes.rewrite import Rewriter, walk_ops

__all__ = ["MergeParallelMatmul"]


def _weight(v, program):
    """The array of a constant (never a parameter: a program that still has
    parameters may be trained, and a copy would not follow)."""
    return constant_array(v, program, 1 << 62)


def _candidate(rw, op, x):
    """(key, W, B) when `op` may join a merge on input `x`, else None."""
    if op.name != "fused_matmul" or op.operands[0] is not x or op.parent is None:
        return None
    _, w, b, r = op.operands
    a = op.attrs
    if r is not None or a["transpose_x"] or w is x or b is x:
        return None
    W = _weight(w, rw.program)
    if W is None or W.ndim != 2 or w.type.dtype is not x.type.dtype:
        return None
    B = None
    if b is not None:
        B = _weight(b, rw.program)
        n = W.shape[0] if a["transpose_y"] else W.shape[1]
        if B is None or B.size != n or b.type.dtype is not w.type.dtype:
            return None
    k = W.shape[1] if a["transpose_y"] else W.shape[0]
    key = (op.parent, a["transpose_y"], a["activation"], a["alpha"], b is None, k, W.dtype)
    return key, W, B


def _merge(rw, x, group):
    """Replace the fused_matmuls of `group` ((op, W, B) in program order, one key)
    by one product of the weights side by side and a split."""
    first = group[0][0]
    ty = first.attrs["transpose_y"]
    axis = 0 if ty else 1
    W = np.ascontiguousarray(np.concatenate([g[1] for g in group], axis=axis))
    sizes = [g[1].shape[axis] for g in group]
    wv = rw.add_const(W, f"{first.operands[1].label or 'weight'}.merged")
    bv = None
    if group[0][2] is not None:
        bv = rw.add_const(np.concatenate([g[2].reshape(-1) for g in group]),
                          f"{first.operands[2].label or 'bias'}.merged")
    # before the first of them: the merged product dominates every use it takes over
    merged = rw.create("fused_matmul", [x, wv, bv, None], dict(first.attrs), before=first)
    parts = rw.create("split", [merged.results[0]], {"num_or_sections": sizes, "axis": -1},
                      before=first)
    for (g, _, _), part in zip(group, parts.results):
        if part.type != g.results[0].type:  # a framework bug, not the user's program
            raise InternalError(f"merge_parallel_matmul: split part {part.type} replaces "
                                f"{g.results[0].type}")
        rw.replace_op(g, [part])


@register_pass
class MergeParallelMatmul(Pass):
    name = "merge_parallel_matmul"

    def run(self, program) -> bool:
        # one walk groups the candidates by (input, key), in program order (linear in
        # the program, however many products read one value)
        rw = Rewriter(program, deferred=True)
        groups: dict = {}
        for op in walk_ops(program.block):
            if op.name == "fused_matmul":
                c = _candidate(rw, op, op.operands[0])
                if c is not None:
                    # by id: comparing Values with == would build an `equal` op
                    groups.setdefault((id(op.operands[0]), c[0]), []).append((op, c[1], c[2]))
        changed = False
        for group in groups.values():
            if len(group) >= 2:
                _merge(rw, group[0][0].operands[0], group)
                changed = True
        rw.flush()
        return changed
