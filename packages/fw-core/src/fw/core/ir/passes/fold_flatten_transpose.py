"""``fold_flatten_transpose`` (inference): a transpose before a flatten that only
constant-weight products read becomes a permutation of those weights' rows.

Matched::

    fused_matmul(flatten(transpose(y, perm)), W, ...)  -> fused_matmul(flatten(y), W', ...)

where the flatten joins every axis after the first (``start_axis=1``,
``stop_axis=-1``, either spelled from the other end), ``perm`` keeps axis 0 (the
batch) first, y's other dims are static, the transpose's result is read by the
flatten alone, and every reader of the flatten is a ``fused_matmul`` (or an int8
``quantized_matmul``) taking it as its left operand (``transpose_x=False``) with a
2-D block-0 constant weight (never a parameter). W' holds W's rows in y's order
(columns when ``transpose_y``), a NEW constant.

Why: ``layout_nhwc`` converts back to NCHW where a conv region ends; before a
classifier that is ``transpose`` + ``flatten``, and the flatten of the transposed
view copies it (LeNet's 16x5x5 features, two ops of Python per call at batch 1).
Reading the features in NHWC order and permuting the classifier's weight rows once
computes the same dot products with the terms in another order (float rounding),
the folding ONNX Runtime's NHWC transformer and TensorRT do for the same pattern.
"""

from __future__ import annotations

import math

import numpy as np

from fw.core.ir.core import Operation
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import constant_array
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.rewrite import apply_patterns

__all__ = ["FoldFlattenTranspose"]

# the products whose left operand may be read in another order (quantized_matmul's int8
# weight rows permute exactly; its scales are per column)
_PRODUCTS = ("fused_matmul", "quantized_matmul")


def _readers(rw, v):
    """The ops reading `v`, when every use is an operand of an op (else None)."""
    out = []
    for owner, i in rw.users(v):
        if not isinstance(owner, Operation):  # a block output or a state update
            return None
        out.append((owner, i))
    return out


def _flatten(rw, op):
    t = rw.producer(op.operands[0])
    if t is None or t.name != "transpose" or single_user(rw, t.results[0]) is not op:
        return False
    y = t.operands[0]
    ys = y.type.shape
    perm = t.attrs["perm"]
    nd = len(ys)
    if nd < 3 or perm is None or len(perm) != nd or perm[0] != 0 or \
            op.attrs["start_axis"] not in (1, 1 - nd) or \
            op.attrs["stop_axis"] not in (-1, nd - 1) or \
            any(d == -1 for d in ys[1:]):
        return False
    readers = _readers(rw, op.results[0])
    if not readers:
        return False
    weights = []
    for mm, i in readers:
        if mm.name not in _PRODUCTS or i != 0 or mm.attrs.get("transpose_x") or \
                any(v is op.results[0] for v in mm.operands[1:]):
            return False
        W = constant_array(mm.operands[1], rw.program, 1 << 62)
        if W is None or W.ndim != 2 or W.shape[1 if mm.attrs.get("transpose_y") else 0] != \
                math.prod(ys[1:]):
            return False
        weights.append(W)
    n = math.prod(ys[1:])
    # position t of the transposed features holds y's feature idx[t]: W'[idx[t]] = W[t]
    idx = np.arange(n).reshape(ys[1:]).transpose([p - 1 for p in perm[1:]]).reshape(-1)
    flat = rw.create("flatten", [y], {"start_axis": 1, "stop_axis": -1}, before=op)
    if flat.results[0].type != op.results[0].type:  # an unexpected type: leave it be
        rw.erase(flat)
        return False
    for (mm, _), W in zip(readers, weights):
        ty = mm.attrs.get("transpose_y", False)
        Wp = np.empty_like(W)
        if ty:
            Wp[:, idx] = W
        else:
            Wp[idx] = W
        wv = rw.add_const(Wp, f"{mm.operands[1].label or 'weight'}.permuted")
        rw.set_operand(mm, 1, wv)
    rw.replace_op(op, flat.results)
    rw.erase(t)
    return True


@register_pass
class FoldFlattenTranspose(Pass):
    name = "fold_flatten_transpose"

    def run(self, program) -> bool:
        return apply_patterns(program, {"flatten": _flatten})
