"""``fold_batch_norm`` (inference only): fold an inference-mode batch norm into the
conv, linear or matmul in front of it.

Matched::

    batch_norm(conv(x, W, b0?) [+ c], mean, var, gamma?, beta?)   -> conv(x, W', b')
    batch_norm(linear(x, W, b0?) [+ c], ...)                       -> linear(x, W', b')
    batch_norm(matmul(x, W) [+ c], ...)                            -> linear(x, W', b')

(``+ c``: an optional bias add in between, either operand order, c a parameter or
constant shaped like the fusion passes' biases: ``[N]``/``[1, ..., N]`` after a
linear or matmul, one value per channel after a conv; it joins ``b0``)

when the batch norm uses its running statistics (``training=False``, or
``use_global_stats=True``), only its first result (``out``) is used, the
product's result has no other reader, the product's channel axis is the batch
norm's channel axis (conv: the same layout; linear/matmul: the last axis, i.e. a
2-D ``[N, C]`` input or ``channel_last=True``), and ``W``, ``b0``, ``mean``,
``var``, ``gamma``, ``beta`` are block-0 parameters or constants holding NumPy
arrays (the program's captured values) or ``full`` results. A matmul folds only with a 2-D
right-hand side and ``transpose_x=False`` (``transpose_y`` is applied to the
folded copy).

With ``s = gamma / sqrt(var + epsilon)`` and ``t = beta - mean * s`` (computed
in float64): ``W' = W * s`` along the output-channel axis (conv: axis 0 of
``[C_out, C_in/groups, *K]``; linear: the columns of ``[in, out]``) and ``b' =
(b0 + c) * s + t``. W' and b' are NEW block-0 constants (``<W label>.bn_folded``,
``<W label>.bn_folded_bias``), rounded to W's dtype; the original parameters and
constants are never modified (other ops may share them; ``dce`` drops consts
nobody reads, parameters stay in the signature). Only float32/float64 weights
are folded (rounding the folded weights to float16 would lose the statistics'
precision). The folded program equals the original up to rounding (a few ulp).
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import constant_array
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.fuse_conv import channel_bias
from fw.core.ir.passes.fuse_matmul import row_bias
from fw.core.ir.passes.rewrite import apply_patterns

__all__ = ["FoldBatchNorm", "captured_array"]

_FOLDABLE = (_dt.float32, _dt.float64)
_PRODUCTS = ("conv", "linear", "matmul")


def captured_array(v, program):
    """The NumPy value of a block-0 parameter or constant, or of a ``full`` result
    (what constant folding leaves for a uniform weight), else None."""
    if v is not None and v.role == "result":
        return constant_array(v, program, 1 << 62)
    if v is None or v.role not in ("param", "const") or v.owner is not program.block:
        return None
    ups = getattr(program, "updates", None)
    if ups and v.label in ups.labels:  # the program itself changes it between runs
        return None
    t = program.captured.get(v.label)
    a = getattr(t, "_data", t)
    if not isinstance(a, np.ndarray) or a.shape != v.type.shape or a.dtype != v.type.dtype.np:
        return None
    return a


def batch_norm_affine(rw, bn, c):
    """A batch norm in inference form as a per-channel affine map: (scale s, shift t) in
    float64 with y = s * x + t, or None when its statistics are not captured constants
    of size c (shared with fw-slim's quantize_outputs, which folds it into int8 scales)."""
    prog = rw.program
    _, mean, var, gamma, beta = bn.operands
    arrs = [captured_array(v, prog) for v in (mean, var)]
    if any(a is None or a.size != c for a in arrs):
        return None
    m, v = (a.astype(np.float64).reshape(c) for a in arrs)
    g = np.ones(c) if gamma is None else captured_array(gamma, prog)
    b = np.zeros(c) if beta is None else captured_array(beta, prog)
    if g is None or b is None or g.size != c or b.size != c:
        return None
    s = g.astype(np.float64).reshape(c) / np.sqrt(v + bn.attrs["epsilon"])
    return s, b.astype(np.float64).reshape(c) - m * s


def _label(v, suffix):
    return f"{v.label}.{suffix}"


def _batch_norm(rw, bn):
    a = bn.attrs
    if a.get("training") and not a.get("use_global_stats"):
        return False
    if any(rw.has_uses(r) for r in bn.results[1:]):
        return False
    x = bn.operands[0]
    prod = rw.producer(x)
    if prod is None or single_user(rw, x) is not bn:
        return False
    add = extra = None  # a bias `extra` added between the product and the batch norm
    if prod.name == "add":
        add, prod = prod, None
        for v, b in (add.operands, add.operands[::-1]):
            p = rw.producer(v)
            if p is not None and p.name in _PRODUCTS and single_user(rw, v) is add and \
                    v.type == x.type:
                prod, extra = p, b
                break
    if prod is None or prod.name not in _PRODUCTS:
        return False
    out_t = x.type
    nd = out_t.ndim
    bn_axis = nd - 1 if a["channel_last"] else min(1, nd - 1)
    prog = rw.program
    if prod.name == "conv":
        inp, w, b0 = prod.operands
        axis = nd - 1 if prod.attrs["channel_last"] else 1
    elif prod.name == "linear":
        inp, w, b0 = prod.operands
        axis = nd - 1
    else:
        inp, w = prod.operands
        b0 = None
        axis = nd - 1
        if prod.attrs["transpose_x"] or w.type.ndim != 2:
            return False
    if axis != bn_axis or out_t.dtype not in _FOLDABLE or w.type.dtype is not out_t.dtype:
        return False
    c = out_t.shape[axis]
    W = captured_array(w, prog)
    if c == -1 or W is None:
        return False
    if prod.name == "matmul" and prod.attrs["transpose_y"]:
        W = W.T
    B0 = np.zeros(c) if b0 is None else captured_array(b0, prog)
    if B0 is None or B0.size != c:
        return False
    B0 = B0.astype(np.float64).reshape(c)
    if add is not None:
        ok = channel_bias(extra, x, axis) if prod.name == "conv" else row_bias(extra, x)
        E = captured_array(extra, prog) if ok else None
        if E is None:
            return False
        B0 = B0 + E.astype(np.float64).reshape(c)
    st = batch_norm_affine(rw, bn, c)
    if st is None:
        return False
    s, t = st
    if prod.name == "conv":
        w_new = W.astype(np.float64) * s.reshape((c,) + (1,) * (W.ndim - 1))
    else:
        w_new = W.astype(np.float64) * s
    b_new = B0 * s + t
    dt = W.dtype
    wv = rw.add_const(np.ascontiguousarray(w_new.astype(dt)), _label(w, "bn_folded"))
    bv = rw.add_const(b_new.astype(dt), _label(w, "bn_folded_bias"))
    if prod.name == "conv":
        new = rw.create("conv", [inp, wv, bv], dict(prod.attrs), [bn.results[0].type],
                        before=bn)
    else:
        new = rw.create("linear", [inp, wv, bv], {}, [bn.results[0].type], before=bn)
    rw.replace_all_uses(bn.results[0], new.results[0])
    rw.erase(bn)
    if add is not None:
        rw.erase(add)
    rw.erase(prod)
    return True


@register_pass
class FoldBatchNorm(Pass):
    name = "fold_batch_norm"

    def run(self, program) -> bool:
        return apply_patterns(program, {"batch_norm": _batch_norm})
