"""``fold_matmul_scale`` (inference): a scalar multiply after a constant-weight
``fused_matmul`` becomes part of the weights.

Matched::

    multiply(S(fused_matmul(x, W, b?, none)), c)    -> S(fused_matmul(x, W*c, b*c?, none))

where ``S`` is a chain of shape-only ops (``reshape``, ``transpose``, ``flatten``,
``squeeze``, ``unsqueeze``; possibly none), ``c`` a constant whose elements all
equal one float with one element (a ``full`` or a uniform block-0 const), and:

- the fused_matmul has no residual, ``alpha == 1`` and activation ``none`` (or
  ``relu`` when c > 0: relu(z) * c == relu(z * c));
- W and b are block-0 constants (captured NumPy arrays; a predictor's weights
  are, after ``fw.inference`` turns its parameters into constants), W 2-D,
  float32 or float64, and every value on the way has that one reader.

Why: attention scales the queries (``q * head_dim ** -0.5``) after their
projection; that multiply is a full pass over the queries on every call, the
same work as folding it once into the projection's weights (as ONNX Runtime's
and TensorRT's attention fusions do). W*c and b*c are NEW constants (computed in
float64, rounded to W's dtype; the originals may have other readers, ``dce``
drops them otherwise). For a power-of-two c (the usual 1/8 of 64-wide heads)
the result is bit-identical; otherwise it differs by rounding.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import constant_array, uniform_value
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.rewrite import apply_patterns

__all__ = ["FoldMatmulScale"]

_SHAPE_ONLY = frozenset({"reshape", "transpose", "flatten", "squeeze", "unsqueeze"})
_FOLDABLE = (_dt.float32, _dt.float64)


def _weight(v, program):
    """The array of a constant (never a parameter: a program that still has
    parameters may be trained, and a copy would not follow)."""
    return constant_array(v, program, 1 << 62)


def _scale_of(rw, c, v):
    """The float constant `c` multiplies `v` by (one element, v's dtype), or None."""
    if c is None or c.type.dtype is not v.type.dtype or c.type.numel() != 1 or \
            len(c.type.shape) > len(v.type.shape):
        return None
    s = uniform_value(c, rw.program)
    return float(s) if isinstance(s, float) and np.isfinite(s) else None


def _product_before(rw, v):
    """The fused_matmul that `v` is a shape-only view of (every step single-use)."""
    while True:
        op = rw.producer(v)
        if op is None or single_user(rw, v) is None:
            return None
        if op.name == "fused_matmul":
            return op
        if op.name not in _SHAPE_ONLY or len(op.operands) != 1 or len(op.results) != 1:
            return None
        v = op.operands[0]


def _multiply(rw, op):
    res = op.results[0]
    for v, c in ((op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])):
        if v is None or v.type != res.type:
            continue
        s = _scale_of(rw, c, v)
        if s is None:
            continue
        mm = _product_before(rw, v)
        if mm is None:
            continue
        x, w, b, r = mm.operands
        a = mm.attrs
        if r is not None or a["alpha"] != 1.0 or not (
                a["activation"] == "none" or (a["activation"] == "relu" and s > 0)):
            continue
        W = _weight(w, rw.program)
        B = None if b is None else _weight(b, rw.program)
        if W is None or W.ndim != 2 or w.type.dtype not in _FOLDABLE or \
                (b is not None and (B is None or b.type.dtype is not w.type.dtype)):
            continue
        dt = W.dtype
        wv = rw.add_const(np.ascontiguousarray((W.astype(np.float64) * s).astype(dt)),
                          f"{w.label or 'weight'}.scaled")
        rw.set_operand(mm, 1, wv)
        if b is not None:
            bv = rw.add_const((B.astype(np.float64) * s).astype(dt),
                              f"{b.label or 'bias'}.scaled")
            rw.set_operand(mm, 2, bv)
        rw.replace_op(op, [v])
        return True
    return False


@register_pass
class FoldMatmulScale(Pass):
    name = "fold_matmul_scale"

    def run(self, program) -> bool:
        return apply_patterns(program, {"multiply": _multiply})
