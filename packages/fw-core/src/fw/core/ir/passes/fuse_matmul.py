"""``fuse_matmul_bias_act``: a matmul or linear and its epilogue -> one ``fused_matmul``.

Matched (see `fw.core.ir.passes.epilogue` for the walk)::

    matmul(x, y) [* c] [+ b] [act] [+ r]       -> fused_matmul(x, y, b, r) {alpha=c, act}
    linear(x, w, b?)      [+ b] [act] [+ r]    -> fused_matmul(x, w, b, r) {act}

- x and y have one real floating dtype and y is at least 2-D (a weight, or the
  right-hand side of a batched product); transpose flags carry over.
- ``c``: a constant whose elements all equal one float (a ``full`` or a uniform
  block-0 const) with one element, only directly after the product.
- ``b``: a value of the product's dtype with shape ``[N]`` or ``[1, ..., 1, N]``
  (N the product's last dimension, static), added to the product (either operand
  order) without changing its type; only when the linear has no bias.
- act: ``relu``, ``gelu`` (either form), ``sigmoid``, ``tanh``, ``silu``.
- ``r``: a value of exactly the running value's type added last (either order).

Every intermediate value must have one reader, in the same block. A matmul
must absorb at least one op (a bare matmul stays a matmul); a linear always
becomes a fused_matmul, with or without an epilogue (it computes ``x @ W + b``
already), so that inference kernels need only attach to fused_matmul. A
residual added *before* the activation (``act(P + b + r)``) is not the fused
op's formula: that chain fuses up to the bias and keeps the rest.
For float32/float64 the result is bit-identical (the reference kernel runs the
same NumPy calls in the same order); float16/bfloat16 are rounded once instead
of after every op.
"""

from __future__ import annotations

from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.epilogue import fuse_epilogue, is_float, match_epilogue
from fw.core.ir.passes.rewrite import apply_patterns

__all__ = ["FuseMatmulBiasAct", "row_bias"]


def row_bias(b, p) -> bool:
    """`b` is a bias vector for product `p`: [N] or [1, ..., 1, N], p's dtype."""
    bs, ps = b.type.shape, p.type.shape
    n = ps[-1] if ps else -1
    return (b.type.dtype is p.type.dtype and 1 <= len(bs) <= len(ps) and n != -1 and
            bs[-1] == n and all(d == 1 for d in bs[:-1]))


def _attrs(ep, tx=False, ty=False):
    return {"transpose_x": tx, "transpose_y": ty, "activation": ep.activation,
            "alpha": ep.alpha}


def _matmul(rw, op):
    x, y = op.operands
    if not (is_float(x) and y.type.dtype is x.type.dtype and y.type.ndim >= 2):
        return False
    ep = match_epilogue(rw, op, bias_test=row_bias, allow_alpha=True)
    if not ep.ops:
        return False
    fuse_epilogue(rw, op, ep, "fused_matmul", [x, y, ep.bias, ep.residual],
                  _attrs(ep, op.attrs["transpose_x"], op.attrs["transpose_y"]))
    return True


def _linear(rw, op):
    x, w, b = op.operands
    if not (is_float(x) and w.type.dtype is x.type.dtype):
        return False
    ep = match_epilogue(rw, op, bias_test=row_bias, has_bias=b is not None)
    if not ep.ops:  # a linear is a fused matmul already: give it the fused op's kernel
        new = rw.create("fused_matmul", [x, w, b, None], _attrs(ep), [op.results[0].type],
                        before=op)
        rw.replace_op(op, new.results)
        return True
    fuse_epilogue(rw, op, ep, "fused_matmul", [x, w, b if b is not None else ep.bias,
                                               ep.residual], _attrs(ep))
    return True


@register_pass
class FuseMatmulBiasAct(Pass):
    name = "fuse_matmul_bias_act"

    def run(self, program) -> bool:
        return apply_patterns(program, {"matmul": _matmul, "linear": _linear})
