"""``fold_linear_chain`` (inference): two constant-weight products with nothing
nonlinear between them become one.

Matched::

    fused_matmul(fused_matmul(x, W1, b1?, none), W2, b2?, r?) {act}
        -> fused_matmul(x, W1 @ W2, b1 @ W2 + b2, r) {act}

when the inner product has activation ``none``, no residual, ``alpha == 1`` and
one reader (the outer product, as its left operand, in the same block); both
have ``transpose_x=False`` and the outer ``alpha == 1``; W1, W2 (2-D) and the
biases are block-0 constants (never parameters) of one float32/float64 dtype;
and the folded weight costs no more per row than the two products did
(``K*N2 <= K*N1 + N1*N2`` for W1 ``[K, N1]``, W2 ``[N1, N2]``).

Why: a stack of linear layers without an activation between them (LeNet's
classifier of the zoo: 400 -> 120 -> 84 -> 10) is one linear map; at batch 1
each product is a few microseconds of per-call cost for a few thousand
multiply-adds, and one 400 x 10 product replaces three (the same algebra as the
folding of batch norms into the product before them). W1 @ W2 and the bias are
computed once in float64 and rounded to the weights' dtype, so the result
differs from the chain by float rounding (the chain rounds after every product).
The new weights are NEW constants; ``dce`` drops the old ones if unused.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import constant_array
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.rewrite import apply_patterns

__all__ = ["FoldLinearChain"]

_FOLDABLE = (_dt.float32, _dt.float64)


def _weight(v, program):
    """A constant's array as ``[in, out]`` float64 (never a parameter), or None."""
    return None if v is None else constant_array(v, program, 1 << 62)


def _plain(W, transpose):
    return W.T if transpose else W


def _outer(rw, op):
    h, w2, b2, r2 = op.operands
    inner = rw.producer(h)
    if inner is None or inner.name != "fused_matmul" or single_user(rw, h) is not op or \
            sum(v is h for v in op.operands) != 1 or op.attrs["transpose_x"] or \
            op.attrs["alpha"] != 1.0:
        return False
    x, w1, b1, r1 = inner.operands
    a = inner.attrs
    if r1 is not None or a["activation"] != "none" or a["alpha"] != 1.0 or a["transpose_x"]:
        return False
    dt = h.type.dtype
    if dt not in _FOLDABLE or any(v is not None and v.type.dtype is not dt
                                  for v in (x, w1, b1, w2, b2)):
        return False
    W1, W2 = _weight(w1, rw.program), _weight(w2, rw.program)
    B1 = _weight(b1, rw.program) if b1 is not None else None
    B2 = _weight(b2, rw.program) if b2 is not None else None
    if W1 is None or W2 is None or W1.ndim != 2 or W2.ndim != 2 or \
            (b1 is not None and B1 is None) or (b2 is not None and B2 is None):
        return False
    W1 = _plain(W1, a["transpose_y"]).astype(np.float64)
    W2 = _plain(W2, op.attrs["transpose_y"]).astype(np.float64)
    (k, n1), (m, n2) = W1.shape, W2.shape
    if m != n1 or k * n2 > k * n1 + n1 * n2:
        return False
    W = W1 @ W2
    B = None
    if B1 is not None:
        B = B1.reshape(-1).astype(np.float64) @ W2
    if B2 is not None:
        B = B2.reshape(-1).astype(np.float64) if B is None else B + B2.reshape(-1)
    npdt = dt.np
    wv = rw.add_const(np.ascontiguousarray(W.astype(npdt)), f"{w1.label or 'weight'}.chained")
    bv = None if B is None else rw.add_const(B.astype(npdt),
                                             f"{w2.label or 'weight'}.chained_bias")
    attrs = dict(op.attrs)
    attrs["transpose_y"] = False
    new = rw.create("fused_matmul", [x, wv, bv, r2], attrs, [op.results[0].type], before=op)
    rw.replace_op(op, new.results)
    rw.erase(inner)
    return True


@register_pass
class FoldLinearChain(Pass):
    name = "fold_linear_chain"

    def run(self, program) -> bool:
        return apply_patterns(program, {"fused_matmul": _outer})
