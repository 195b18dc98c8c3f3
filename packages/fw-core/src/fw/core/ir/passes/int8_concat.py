"""int8 concatenation for ``fold_qdq``: quantize a concat's operands with the scale of
the concat's output quantization, so the concat runs on bytes.

In a quantized (QDQ) program a concatenation (Inception, DenseNet, SSD heads) reads
float32 values and its result is quantized by the next layer::

    c = concat(a, b, ...)                 a, b: float32 (a layer's output, a pool)
    cq = quantize_linear(c, p)            p: the next layer's input quantization
      -> concat(quantize_linear(a, p), quantize_linear(b, p), ...)

Quantization is elementwise, so both give the same codes exactly; afterwards each
producer's quantize is a ``quantize_linear`` of its own output that ``fold_qdq`` fuses
into the producing int8 conv/matmul as its requantization (one shared scale for every
operand), and the concat moves bytes instead of float32 (4x less memory traffic, no
quantize pass over the concatenated tensor).

Output-quantized programs (``fw.quantization.quantize_outputs``, onnxruntime's QDQ
layout) quantize each operand with its own parameters first::

    concat(dequantize_linear(quantize_linear(u_i, p_i)), ...) -> quantize_linear(p)

There the operand's own quantization is *replaced* by ``p`` (the producers requantize
to one scale) where the scales allow it: an operand whose step
``s_i`` is at most twice ``p``'s. Its codes are then ``quantize(u_i, p)`` clipped to
the range ``p_i`` could represent (its qmin/qmax mapped onto ``p``'s grid), which
differs from the program's ``quantize(dequantize(quantize(u_i, p_i)), p)`` by at most
one step of ``p`` (the two roundings are replaced by one: ``|s_i / 2| <= p``). A
coarser operand keeps its own rounding: its dequantized value is quantized with ``p``
(exact, one extra elementwise op), and so is one whose range mapped onto ``p``'s grid
would change the code type (a relu's uint8 0..255 output under an int8 ``p``:
quantize_linear's result is uint8 exactly when its qmin >= 0). An operand that is read
elsewhere too is quantized with ``p`` where the concat reads it (exact).

Conditions: the concat's result is read only by per-tensor ``quantize_linear`` ops with
one set of constant parameters (different parameters per reader, as an Inception
block's next branches calibrate their own, keep the concat in float32), every operand
is float32, and the concat is in the top-level block.
"""

from __future__ import annotations

import numpy as np

from fw.core.ir.passes.qdq_params import _dq_params, _q_params

__all__ = ["quantize_concat"]

#: an operand's own quantization is replaced by the concat's when its step is at most
#: this many times the concat's (the result then stays within one step of the program)
MAX_STEP_RATIO = 2.0


def _params(rw, op):
    return _q_params(rw, op)


def _own_quantization(rw, v, concat):
    """(quantize op, its params) when float operand `v` is ``dequantize_linear(
    quantize_linear(u))`` with matching per-tensor parameters, both read only on the way
    to `concat`; else None."""
    dq = rw.producer(v)
    if dq is None or dq.name != "dequantize_linear":
        return None
    q = rw.producer(dq.operands[0])
    if q is None or q.name != "quantize_linear":
        return None
    users = rw.users(v)
    if any(u is not concat for u, _ in users) or len(rw.users(q.results[0])) != 1:
        return None
    p = _params(rw, q)
    d = _dq_params(rw, dq)
    if p is None or d is None or d[1].size != 1 or d[2].size != 1 or \
            float(d[1][0]) != p[0] or int(d[2][0]) != p[1]:
        return None
    return q, dq, p


def _mapped_range(p_i, p):
    """qmin/qmax on p's grid covering what p_i can represent (clipped to p's own)."""
    s_i, z_i, lo_i, hi_i = p_i[0], p_i[1], p_i[2], p_i[3]
    s, z, lo, hi = p[0], p[1], p[2], p[3]
    lo2 = z + int(np.rint((lo_i - z_i) * s_i / s))
    hi2 = z + int(np.rint((hi_i - z_i) * s_i / s))
    return max(lo, lo2), min(hi, hi2)


def quantize_concat(rw, op) -> bool:
    """Rewrite concat `op` as a concat of quantized operands (see the module doc);
    returns whether it changed the program."""
    from fw.core import dtypes as _dt

    if op.name != "concat" or op.parent is not rw.program.block:
        return False
    users = rw.users(op.results[0])
    if not users or any(not hasattr(u, "name") or u.name != "quantize_linear" or i != 0
                        for u, i in users):
        return False
    params = [_params(rw, u) for u, _ in users]
    if any(p is None or p[:5] != params[0][:5] for p in params):
        return False
    if any(v.type.dtype is not _dt.float32 for v in op.operands):
        return False
    p = params[0]
    q0 = users[0][0]
    scale_v, zero_v = q0.operands[1], (q0.operands[2] if len(q0.operands) > 2 else None)
    qs = []
    for v in op.operands:
        own = _own_quantization(rw, v, op)
        attrs = dict(q0.attrs)
        src = v
        if own is not None and own[2][0] <= MAX_STEP_RATIO * p[0]:
            lo, hi = _mapped_range(own[2], p)
            # the code type follows qmin's sign (uint8 when qmin >= 0): every operand
            # must keep the shared one (a relu's uint8 0..255 operand mapped onto an
            # int8 grid would not), else the operand is requantized exactly instead
            if lo <= hi and (lo >= 0) == (p[2] >= 0):
                src = own[0].operands[0]
                attrs["qmin"], attrs["qmax"] = lo, hi
        operands = [src, scale_v] + ([zero_v] if zero_v is not None else [])
        qs.append((v, own if src is not v else None, operands, attrs))
    new_ops = [rw.create("quantize_linear", operands, attrs, before=op)
               for _, _, operands, attrs in qs]
    cat = rw.create("concat", [n.results[0] for n in new_ops], dict(op.attrs), before=op)
    for u, _ in users:
        rw.replace_all_uses(u.results[0], cat.results[0])
        rw.erase(u)
    rw.erase(op)
    for _, own, _, _ in qs:
        if own is not None:
            q_i, dq_i, _ = own
            if not rw.has_uses(dq_i.results[0]):
                rw.erase(dq_i)
                if not rw.has_uses(q_i.results[0]):
                    rw.erase(q_i)
    return True
