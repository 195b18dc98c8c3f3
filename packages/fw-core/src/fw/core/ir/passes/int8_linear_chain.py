"""Chains of quantized Linear layers with nothing nonlinear between them, run in float32
when that is cheaper (used by ``fold_qdq``).

A QDQ program of a classifier like LeNet's (400 -> 120 -> 84 -> 10, no activation
between the layers) reads::

    y1 = linear(DQ(x_q), DQ(W1), b1); y2 = linear(DQ(Q(y1)), DQ(W2), b2); ...

In float32 the Predictor folds the three products into one 400 x 10 product
(``fold_linear_chain``); in int8 the quantization between the layers forbids that
fold, and three int8 products cost more than the one float product: measured on
LeNet b64 (2-core AMD EPYC, 1 thread, asv_bench/int8_layer_profile.py) 37 + 19 + 12 us
in int8 against 26 us for the folded float32 product.

**The cost rule** (`chain_runs_float`): a chain of ``n >= 2`` products ``[K_i, N_i]``
runs in float32 when ``fold_linear_chain`` folds it into one ``[K_1, N_n]`` product
(its own rule, pairwise: ``K*N2 <= K*N1 + N1*N2``) and

    INT8_MAC_SPEEDUP * K_1 * N_n  <=  sum_i K_i * N_i        (multiply-adds per row)

with ``INT8_MAC_SPEEDUP = 4``: oneDNN's u8 x s8 products retire about four times the
multiply-adds of its f32 ones per cycle here (VNNI: 4 bytes per 32-bit lane), so a folded
float product at most a quarter of the chain's work is no slower, and it saves
``n - 1`` calls (about 10 us each at b64) on top. LeNet's classifier: 58,920 MACs per
row in int8 against 4 * 4,000 folded: float32.

What changes in the values: the chain's input keeps its quantization (the first
layer reads the same codes) and every weight is the dequantized int8 weight PTQ
validated; only the activation quantizations *between* the layers are dropped, so the
result differs from the QDQ program by at most the propagated half steps of those
quantizations, ``sum_j s_j / 2 * |W_{j+1} ... W_n|`` summed over each output column
(the test checks that bound). ``FoldQDQ(float_linear_chains=False)`` keeps every layer
int8. ``fw.quantization.report`` names the rule for each layer of such a chain
(`float_chain_layers`).
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.qdq_params import _const, _dq_params, _q_params

__all__ = ["INT8_MAC_SPEEDUP", "chain_runs_float", "float_chains", "float_chain_layers",
           "drop_chain_qdq", "hoist_chain_input"]

#: multiply-adds per cycle of oneDNN's int8 products over its float32 ones (see the doc)
INT8_MAC_SPEEDUP = 4


def _weight_kn(rw, op):
    """``(K, N)`` of product `op` whose weight is a dequantized int8 constant, else None."""
    if op.name == "linear":
        w = op.operands[1]
    elif op.name == "matmul" and not op.attrs["transpose_x"] and not op.attrs["transpose_y"]:
        w = op.operands[1]
    else:
        return None
    if op.results[0].type.dtype is not _dt.float32:
        return None
    d = _dq_params(rw, rw.producer(w))
    if d is None:
        return None
    wq = _const(rw, d[0])
    if wq is None or wq.ndim != 2 or str(wq.dtype) != "int8":
        return None
    if op.name == "linear" and op.operands[2] is not None and _const(rw, op.operands[2]) is None:
        return None
    return int(wq.shape[0]), int(wq.shape[1])


def _next(rw, op):
    """``(Q, DQ, next product)`` when `op`'s result is read only by a per-tensor
    quantize_linear, read only by a dequantize_linear of the same parameters, read only
    by another quantized product as its input; else None."""
    q = single_user(rw, op.results[0])
    if q is None or q.name != "quantize_linear" or q.operands[0] is not op.results[0]:
        return None
    p = _q_params(rw, q)
    d = single_user(rw, q.results[0])
    if p is None or d is None or d.name != "dequantize_linear" or d.operands[0] is not \
            q.results[0]:
        return None
    dp = _dq_params(rw, d)
    if dp is None or dp[1].size != 1 or dp[2].size != 1 or float(dp[1][0]) != p[0] or \
            int(dp[2][0]) != p[1]:
        return None
    nxt = single_user(rw, d.results[0])
    if nxt is None or nxt.name not in ("linear", "matmul") or nxt.operands[0] is not \
            d.results[0] or nxt.parent is not op.parent:
        return None
    return q, d, nxt


def chain_runs_float(shapes) -> bool:
    """The cost rule (module doc) for products of weight shapes ``[(K_i, N_i), ...]``."""
    if len(shapes) < 2:
        return False
    k, n = shapes[0]
    for m, n2 in shapes[1:]:
        if m != n or k * n2 > k * n + n * n2:  # fold_linear_chain would stop here
            return False
        n = n2
    return INT8_MAC_SPEEDUP * k * n <= sum(a * b for a, b in shapes)


def float_chains(rw, ops) -> list:
    """The chains among product ops `ops` (program order) that the rule runs in float32:
    a list of ``(products, [(Q, DQ) between them], shapes)``."""
    seen, out = set(), []
    for op in ops:
        if op in seen or op.name not in ("linear", "matmul"):
            continue
        kn = _weight_kn(rw, op)
        if kn is None or _dq_params(rw, rw.producer(op.operands[0])) is None:
            continue
        prods, pairs, shapes = [op], [], [kn]
        cur = op
        while True:
            nx = _next(rw, cur)
            if nx is None:
                break
            kn2 = _weight_kn(rw, nx[2])
            if kn2 is None:
                break
            pairs.append(nx[:2])
            prods.append(nx[2])
            shapes.append(kn2)
            cur = nx[2]
        seen.update(prods)
        if chain_runs_float(shapes):
            out.append((prods, pairs, shapes))
    return out


def drop_chain_qdq(rw, chain) -> None:
    """Remove the quantize/dequantize pairs between a chain's products."""
    prods, pairs, _ = chain
    for (q, d), prod in zip(pairs, prods):
        rw.replace_all_uses(d.results[0], prod.results[0])
        rw.erase(d)
        rw.erase(q)


def hoist_chain_input(rw, chain) -> None:
    """After fold_qdq's int8 folding (which moves a pool/flatten after the producing
    layer's requantization): dequantize the chain's input before the flatten that
    produces it (`_hoist_dequantize`)."""
    _hoist_dequantize(rw, rw.producer(chain[0][0].operands[0]))


def _hoist_dequantize(rw, d) -> None:
    """``dequantize_linear(flatten(v))`` (per tensor, the flatten read only by it) ->
    ``flatten(dequantize_linear(v))``: the same values (dequantization is elementwise).
    Why: the float chain then reads ``flatten`` of a float value, so the Predictor's
    layout pass (which carries channel-last through per-tensor quantize/dequantize) and
    ``fold_flatten_transpose`` turn the exit transpose into a permutation of the folded
    weight's rows, as in the float32 program, instead of a transposing copy of the bytes
    (14 us of LeNet b64's 0.6 ms)."""
    if d is None or d.name != "dequantize_linear":
        return
    dp = _dq_params(rw, d)
    f = rw.producer(d.operands[0])
    if dp is None or dp[1].size != 1 or dp[2].size != 1 or f is None or \
            f.name != "flatten" or len(f.operands) != 1 or \
            single_user(rw, f.results[0]) is not d:
        return
    nd = rw.create("dequantize_linear", [f.operands[0], *d.operands[1:]], dict(d.attrs),
                   before=d)
    nf = rw.create("flatten", [nd.results[0]], dict(f.attrs), before=d)
    rw.replace_all_uses(d.results[0], nf.results[0])
    rw.erase(d)
    rw.erase(f)


def float_chain_layers(program) -> dict:
    """``{weight label prefix: reason}`` for each layer of `program` (a QDQ program, before
    ``fold_qdq``) that the cost rule runs in float32: what fw.quantization.report says."""
    from fw.core.ir.passes.rewrite import Rewriter, walk_ops

    rw = Rewriter(program)
    top = program.block
    ops = [op for op in walk_ops(top) if op.parent is top]
    found = {}
    for prods, _, shapes in float_chains(rw, ops):
        total = sum(a * b for a, b in shapes)
        folded = shapes[0][0] * shapes[-1][1]
        why = (f"Linear chain {' -> '.join(str(k) for k, _ in shapes)} -> {shapes[-1][1]} "
               f"without activation: {INT8_MAC_SPEEDUP} x {folded:,} folded fp32 MACs <= "
               f"{total:,} int8 MACs per row (fold_qdq's float_linear_chains rule): one "
               "fp32 product, no QDQ between the layers")
        for p in prods:
            d = rw.producer(p.operands[1])
            label = getattr(d.operands[0], "label", None) or ""
            if label.endswith(".weight"):
                found[label[:-len(".weight")]] = why
    return found
