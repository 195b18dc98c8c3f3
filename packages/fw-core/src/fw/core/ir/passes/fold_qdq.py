"""``fold_qdq`` (inference): run a quantized (QDQ) program on int8 kernels.

A model converted by fw.quantization (PTQ/QAT) and saved with ``fw.jit.save`` holds,
per quantized layer, int8 weight constants read through ``dequantize_linear`` and
``quantize_linear`` -> ``dequantize_linear`` pairs on activations (the ONNX "QDQ"
form). Executed as written, it computes in float32 with extra ops. This pass turns
each quantized product into one int8 op of ``fw.core.ops.int8``::

    xq  = <int8/uint8 value>                      (a quantize_linear, or an int8 op)
    y   = conv(dequantize_linear(xq, sx, zx),
               dequantize_linear(Wq, sw, 0, axis=0), b?)          [+ c] [batch_norm]
          [+ r] [act] [+ r]
    ->  quantized_conv2d(xq, Wq, sx, sw', b', r, zx) {conv attrs, act, ...}

and likewise ``linear(x, W [in, out], b?)`` / ``matmul(x, W)`` (weights per output
column, ``axis=1``) -> ``quantized_matmul``. Matched:

- the activation's ``dequantize_linear`` has a per-tensor constant scale and zero
  point; the weight is a block-0 int8 constant (or parameter) with a constant scale
  (per tensor, or per output channel on the output axis) and zero points all 0;
- the epilogue, each value having one reader: a per-channel constant bias add, an
  inference ``batch_norm`` (conv only, folded exactly into the per-channel scale and
  bias: ``scale * s_bn``, ``bias * s_bn + t_bn`` in float64), a residual add of a
  same-typed float value before and/or an activation of the epilogue table (relu,
  relu6, ...), or a residual after it (oneDNN post-ops in that order);
- requantization: when every reader of the result is a ``quantize_linear`` with the
  same per-tensor constant scale, zero point and range, the int8 op writes the
  quantized value itself (one op instead of three; consecutive int8 layers then hand
  each other int8 activations) and the quantize ops go. When the result is
  non-negative by construction (relu/relu6 last) and quantized symmetrically as int8,
  it is written as **uint8 with values 0..127**: the same numbers, and the operand
  kind oneDNN multiplies exactly on CPUs without VNNI (u8 x s8 through
  ``vpmaddubsw`` saturates int16 for u8 values above 127; see nn_int8.hpp).
  Otherwise the int8 op writes float32 (dequantized), the explicit border. For the
  same reason a symmetric int8 ``quantize_linear`` of a relu/relu6 output read only by
  ``dequantize_linear`` becomes a uint8 one with qmax 127 (identical codes) first. A 2-D
  ``max_pool`` and ``flatten``/``reshape``
  between the layer and those quantize ops move after the requantization (the pool as
  ``quantized_max_pool``): quantization is monotone and elementwise, so pooling and
  reshaping the bytes give exactly the quantized pooled value (LeNet's conv -> relu ->
  pool -> flatten -> classifier stays in bytes).
- a ``concat`` whose result is quantized (by one set of parameters) first becomes a
  concat of its operands quantized with those parameters (``int8_concat``: the same
  codes; an operand's own output quantization is replaced by the shared one where its
  step is at most twice the shared step): each producing int8 layer then requantizes to
  the shared scale and the concat moves bytes (Inception/DenseNet blocks).
- output-quantized programs (``fw.quantization.quantize_outputs``, onnxruntime's QDQ
  layout): ``quantize_linear(v, p) -> dequantize_linear -> [max_pool | flatten |
  reshape]+ -> quantize_linear(p)`` with the same parameters collapses to the chain on
  ``v`` followed by that one quantize (the same codes: quantization is monotone), so
  the rules above apply; and a layer output quantized only to be dequantized by a
  residual ``add`` (``conv -> Q -> DQ -> add(r) -> relu -> Q``) is fused like the
  plain residual: the int8 op adds ``r`` as a post-op and requantizes once, skipping
  that pre-add rounding (``fuse_residual_qdq=False`` keeps it: int8 output, float add).

Where int8 does not pay, the layer stays float32 (onnxruntime's int8 LeNet b64 runs at
0.4x of its float model: fixed per-call costs that tiny layers do not amortise):

- a product of fewer than ``min_macs`` multiply-adds per sample (default 2**13; a
  dynamic batch counts as 1): measured per layer with the native kernels, int8 won
  from about 0.5 M MACs per call (a 64x120x84 matmul 1.5x) and lost on a 64x84x10 one
  (0.5x): LeNet's last classifier (840 per sample) would stay float
  (unless its input already comes out of an int8 op: then one int8 op is cheaper than a
  dequantize and a float product);
- a chain of quantized Linear layers with no activation between them (each read
  through a Q -> DQ pair) whose folded float product costs at most a quarter of the
  chain's int8 multiply-adds (``fw.core.ir.passes.int8_linear_chain``: LeNet's
  400 -> 120 -> 84 -> 10 classifier): the quantizations between the layers go and the
  chain runs as one float32 product, as in the float program (``float_linear_chains``);
- a conv with ``C_in/groups * C_out/groups < min_channel_pairs`` (default
  ``MIN_CONV_CHANNEL_PAIRS`` = 64) that is not depthwise (LeNet's 1 -> 6 stem: oneDNN pads
  such channels to 4-16 byte blocks; 1.7x slower in int8). A rule on the layer's shape,
  decided from measurements, never timed inside the pass; fw.quantization.report names
  the rule for each layer it keeps in float32 (``narrow_conv`` is the test).

For a layer left in float32 the pass removes its activation's fake quantization when the
``quantize_linear`` -> ``dequantize_linear`` pair feeds only float ops
(``keep_fp32_qdq=False``): the layer then computes what the float model computes
(no slower than fp32), differing from the QDQ program by at most the activation's
quantization error. Weight ``dequantize_linear`` of constants left in float are
folded to float32 constants (the exact values dequantize_linear computes), so no
layer dequantizes its weights per call.

Results equal the QDQ program within one quantization step of each requantized
output (float32 rounding of the folded scales may move a value lying on a rounding
tie); float outputs within float32 rounding of the scales (a few ulp relative).
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.fold_batch_norm import batch_norm_affine
from fw.core.ir.passes.fuse_conv import channel_bias
from fw.core.ir.passes.fuse_matmul import row_bias
from fw.core.ir.passes.qdq_params import _const, _dq_params, _q_params
from fw.core.ir.passes.rewrite import Rewriter, walk_ops
from fw.core.ops.fused import activation_of

__all__ = ["FoldQDQ", "MIN_CONV_CHANNEL_PAIRS", "narrow_conv"]

_NONNEG = ("relu", "relu6")
_F32 = np.float32


def _macs(op, weight_shape) -> int:
    """Multiply-adds of one call of product `op` (a dynamic batch counts as 1)."""
    out = [d if d > 0 else 1 for d in op.results[0].type.shape]
    if op.name == "conv":
        per_out = int(np.prod(weight_shape[1:]))  # C_in/groups * kernel
    else:
        per_out = int(weight_shape[0])  # K
    return int(np.prod(out)) * per_out


#: A (non-depthwise) conv with fewer input x output channels per group than this stays
#: float32: oneDNN's int8 conv pads the channels to its 4-16 byte blocks (LeNet's 1 -> 6
#: stem: 6 channel pairs, most of each block padding) and the layer's quantize of a
#: float input costs a pass of its own, so int8 lost at every batch measured
#: (asv_bench/int8_side_by_side.py, LeNet b64 on the 2-core reference machine).
MIN_CONV_CHANNEL_PAIRS = 64


def narrow_conv(weight_shape, groups=1, min_pairs=MIN_CONV_CHANNEL_PAIRS) -> bool:
    """Whether fold_qdq keeps a conv with this ``[C_out, C_in/groups, *k]`` weight in
    float32: ``C_in/groups * C_out/groups < min_pairs`` and not depthwise (depthwise
    convs have their own int8 kernels and always run int8)."""
    cin_g = int(weight_shape[1])
    cout_g = int(weight_shape[0]) // max(int(groups), 1)
    depthwise = groups > 1 and cin_g == 1
    return not depthwise and cin_g * cout_g < min_pairs


class _Match:
    __slots__ = ("head", "kind", "xq", "x_scale", "x_zp", "wq", "w_scale", "bias", "ops",
                 "act", "residual", "res_first", "channels", "skipped_qdq")


def _x_ok(rw, xq, signed_inputs) -> bool:
    """Whether activation `xq` runs exactly on the int8 kernels of this CPU: anything
    with VNNI; without it only uint8 values 0..127 (see fw.core.kernels.cpu.int8)."""
    if signed_inputs:
        return True
    if xq.type.dtype is not _dt.uint8:
        return False
    p = rw.producer(xq)
    return p is not None and p.name in ("quantize_linear", "quantized_conv2d",
                                        "quantized_matmul") and \
        p.attrs.get("qmax") is not None and p.attrs["qmax"] <= 127


def _int8_fed(rw, xq) -> bool:
    """Whether activation `xq` already comes out of an int8 op (no quantize_linear to
    pay): then even a tiny product is cheaper in int8 than dequantizing for a float
    one (LeNet's last classifier: one op instead of a dequantize and a float product)."""
    p = rw.producer(xq)
    while p is not None and p.name in (*_RESHAPES, "transpose"):
        p = rw.producer(p.operands[0])
    return p is not None and p.name in ("quantized_conv2d", "quantized_matmul",
                                        "quantized_max_pool")


def _match_product(rw, op, min_macs, signed_inputs=True, min_pairs=MIN_CONV_CHANNEL_PAIRS):
    """The quantized operands of product `op`, or None."""
    if op.name == "conv":
        if len(op.results[0].type.shape) != 4:
            return None
        x, w, b = op.operands
        w_axis = 0
    elif op.name == "linear":
        x, w, b = op.operands
        w_axis = 1
    elif op.name == "matmul":
        x, w = op.operands
        b = None
        w_axis = 1
        if op.attrs["transpose_x"] or op.attrs["transpose_y"] or w.type.ndim != 2:
            return None
    else:
        return None
    if op.results[0].type.dtype is not _dt.float32:
        return None
    xd = _dq_params(rw, rw.producer(x))
    wd = _dq_params(rw, rw.producer(w))
    if xd is None or wd is None or xd[1].size != 1 or xd[2].size != 1 or \
            not _x_ok(rw, xd[0], signed_inputs):
        return None
    wq_v, ws, wz, waxis = wd
    wq = _const(rw, wq_v)
    if wq is None or wq.dtype != np.int8 or np.any(wz):
        return None
    if op.name != "conv" and wq.ndim != 2:
        return None
    channels = wq.shape[w_axis]
    if ws.size not in (1, channels):
        return None
    if ws.size > 1 and waxis % wq.ndim != w_axis:
        return None
    if b is not None and (_const(rw, b) is None or b.type.dtype is not _dt.float32):
        return None
    if _macs(op, wq.shape) < min_macs and not _int8_fed(rw, xd[0]):
        return None
    if op.name == "conv" and narrow_conv(wq.shape, op.attrs.get("groups", 1), min_pairs):
        return None
    m = _Match()
    m.head, m.kind = op, ("conv" if op.name == "conv" else "matmul")
    m.xq, m.x_scale, m.x_zp = xd[0], xd[1], xd[2]
    m.wq, m.w_scale = wq_v, ws
    m.bias = None if b is None else _const(rw, b).astype(np.float64).reshape(-1)
    m.channels = channels
    return m


def _residual_qdq(rw, q, cur):
    """The dequantize_linear of `q` = quantize_linear(cur) (per tensor, one reader, the
    same parameters) when what reads it is a residual add of another float value of
    cur's type: the layer-output quantization quantize_outputs puts before a residual
    add (onnxruntime's QLinearAdd reads it). Else None."""
    p = _q_params(rw, q)
    d = single_user(rw, q.results[0])
    if p is None or d is None or d.name != "dequantize_linear" or d.operands[0] is not \
            q.results[0]:
        return None
    dp = _dq_params(rw, d)
    if dp is None or dp[1].size != 1 or dp[2].size != 1 or float(dp[1][0]) != p[0] or \
            int(dp[2][0]) != p[1] or d.results[0].type != cur.type:
        return None
    a = single_user(rw, d.results[0])
    if a is None or a.name != "add" or a.results[0].type != cur.type:
        return None
    other = a.operands[1] if a.operands[0] is d.results[0] else a.operands[0]
    if other is d.results[0] or other.type != cur.type or _const(rw, other) is not None:
        return None
    return d


def _epilogue(rw, m, fuse_residual_qdq=True):
    """Walk the epilogue after the product (see the module doc)."""
    head = m.head
    cur = head.results[0]
    t = cur.type
    conv = m.kind == "conv"
    axis = (t.ndim - 1 if head.attrs.get("channel_last") else 1) if conv else t.ndim - 1
    c = m.channels
    scale = np.broadcast_to(m.w_scale.astype(np.float64), (c,)).copy()
    bias = np.zeros(c) if m.bias is None else m.bias.copy()
    m.ops, m.act, m.residual, m.res_first = [], "none", None, False
    m.skipped_qdq = False
    stage = 0  # 0: bias/bn allowed; 2: residual-before-act seen; 3: act seen
    while True:
        u = single_user(rw, cur)
        if u is not None and u.name == "quantize_linear" and stage < 2 and fuse_residual_qdq:
            dq = _residual_qdq(rw, u, cur)
            if dq is None:
                break
            m.ops += [u, dq]  # the layer-output rounding before a residual add: skipped
            m.skipped_qdq = True
            cur = dq.results[0]
            continue
        if u is None or not u.results or u.results[0].type != t:
            break
        name = u.name
        other = None
        if name == "add":
            a, b2 = u.operands
            other = b2 if a is cur else a
        if name == "add" and stage == 0 and (channel_bias(other, cur, axis) if conv
                                             else row_bias(other, cur)):
            arr = _const(rw, other)
            if arr is None:
                break
            bias = bias + arr.astype(np.float64).reshape(c)
        elif name == "batch_norm" and conv and stage == 0:
            a_ = u.attrs
            bn_axis = t.ndim - 1 if a_["channel_last"] else 1
            if (a_.get("training") and not a_.get("use_global_stats")) or bn_axis != axis or \
                    any(rw.has_uses(r) for r in u.results[1:]):
                break
            st = batch_norm_affine(rw, u, c)
            if st is None:
                break
            s, sh = st
            scale, bias = scale * s, bias * s + sh
        elif name == "add" and stage < 2 and other is not None and other.type == t and \
                other is not cur:
            m.residual, m.res_first, stage = other, True, 2
        elif stage < 3 and len(u.results) == 1 and activation_of(u) is not None:
            m.act, stage = activation_of(u), 3
        elif name == "add" and stage == 3 and m.residual is None and other is not None and \
                other.type == t and other is not cur:
            m.residual, m.res_first = other, False
            m.ops.append(u)
            break
        else:
            break
        m.ops.append(u)
        cur = u.results[0]
    return scale, bias


def _requant(rw, m, last):
    """Per-tensor quantize_linear readers of `last` sharing one set of parameters:
    (their ops, params), else None."""
    users = rw.users(last)
    if not users:
        return None
    qs, params = [], None
    for op, idx in users:
        if not hasattr(op, "name") or op.name != "quantize_linear" or idx != 0 or \
                op.parent is not m.head.parent:
            return None
        p = _q_params(rw, op)
        if p is None or (params is not None and p[:5] != params[:5]):
            return None
        params = params or p
        qs.append(op)
    return qs, params


_RESHAPES = ("flatten", "reshape")
_SIGN_KEEPING = ("max_pool", "avg_pool", "adaptive_avg_pool", "transpose", *_RESHAPES)


def _byte_ops(rw, m, last):
    """The chain of single readers after `last` that commute with quantization and run
    on bytes: 2-D max_pools and flatten/reshape; empty when there is none."""
    chain = []
    cur = last
    while True:
        u = single_user(rw, cur)
        if u is None or u.parent is not m.head.parent or len(u.results) != 1:
            break
        if u.name == "max_pool":
            if u.results[0].type.ndim != 4:
                break
        elif u.name not in _RESHAPES or len(u.operands) != 1:
            break
        chain.append(u)
        cur = u.results[0]
    return chain


def _only_dequantized(rw, qs) -> bool:
    for q in qs:
        for op, idx in rw.users(q.results[0]):
            if not hasattr(op, "name") or op.name != "dequantize_linear" or idx != 0:
                return False
    return True


def _fold(rw, m, scale, bias):
    head = m.head
    last_op = m.ops[-1] if m.ops else head
    last = last_op.results[0]
    anchor = last_op
    xs = rw.add_const(np.asarray(m.x_scale, _F32).reshape(1), "int8.x_scale")
    xz = None if not m.x_zp.any() else rw.add_const(m.x_zp.astype(np.int32).reshape(1),
                                                    "int8.x_zero_point")
    ws = rw.add_const(scale.astype(_F32), "int8.w_scale")
    b = None if not bias.any() else rw.add_const(bias.astype(_F32), "int8.bias")
    attrs = {"activation": m.act, "residual_before_act": m.res_first}
    if m.kind == "conv":
        attrs.update({k: head.attrs[k] for k in ("stride", "padding", "dilation", "groups",
                                                 "channel_last")})
    name = "quantized_conv2d" if m.kind == "conv" else "quantized_matmul"
    rq = _requant(rw, m, last)
    moved = []
    if rq is None:
        # quantize(max_pool(v)) == max_pool(quantize(v)) (quantization is monotone), and
        # reshapes commute with it: requantize first, pool and reshape the bytes
        moved = _byte_ops(rw, m, last)
        rq = _requant(rw, m, moved[-1].results[0]) if moved else None
        if rq is None:
            moved = []
    ys = yz = None
    qs = []
    if rq is not None:
        qs, (s, z, qmin, qmax, dt, s_v, z_v) = rq
        ys, yz = s_v, (z_v if z else None)
        if dt == "int8" and z == 0 and m.act in _NONNEG and not (
                m.residual is not None and not m.res_first) and qmin <= 0 and \
                _only_dequantized(rw, qs):
            dt, qmin, qmax = "uint8", 0, min(qmax, 127)
        attrs.update({"out_dtype": dt, "qmin": qmin, "qmax": qmax})
    new = rw.create(name, [m.xq, m.wq, xs, ws, b, m.residual, xz, ys, yz], attrs,
                    before=anchor)
    out = new.results[0]
    for op in moved:
        out = rw.create("quantized_max_pool" if op.name == "max_pool" else op.name, [out],
                        dict(op.attrs), before=anchor).results[0]
    if qs:
        for q in qs:
            rw.replace_all_uses(q.results[0], out)
            rw.erase(q)
        for op in reversed(moved):
            rw.erase(op)
    else:
        rw.replace_all_uses(last, out)
    dqs = [rw.producer(v) for v in head.operands[:2]]
    for op in reversed(m.ops):
        rw.erase(op)
    rw.erase(head)
    # the dequantize ops that fed the float product, now unread (later passes must not
    # see them as readers: fold_flatten_transpose wants a flatten read by products only)
    for dq in dqs:
        if dq is not None and dq.parent is not None and not rw.has_uses(dq.results[0]):
            rw.erase(dq)


def _unsigned_quantize(rw, op) -> bool:
    """quantize_linear(relu(v)) (also through pools, flatten/reshape/transpose) as
    symmetric int8 -> the same codes as uint8 0..127
    (a non-negative value never uses the negative half), when only dequantize_linear
    reads them: the operand kind every CPU multiplies exactly (see the module doc)."""
    prod = rw.producer(op.operands[0])
    while prod is not None and prod.name in _SIGN_KEEPING:
        prod = rw.producer(prod.operands[0])  # pools and reshapes keep the sign
    if prod is None or activation_of(prod) not in _NONNEG:
        return False
    p = _q_params(rw, op)
    if p is None or p[1] != 0 or p[4] != "int8" or p[2] > 0 or not _only_dequantized(rw, [op]):
        return False
    new = rw.create("quantize_linear", list(op.operands),
                    {**op.attrs, "qmin": 0, "qmax": min(p[3], 127)}, before=op)
    rw.replace_all_uses(op.results[0], new.results[0])
    rw.erase(op)
    return True


def _collapse_requant(rw, op) -> bool:
    """``dequantize_linear(quantize_linear(v, p))`` read by a single-reader chain of 2-D
    max pools and flatten/reshape ending in ``quantize_linear(p)`` (the same per-tensor
    parameters) -> the chain on `v` itself, then that quantize: quantization is
    monotone and elementwise, so the codes are the same, and the pool runs once on
    float32 (or, after an int8 layer, on its requantized bytes) instead of around an
    extra quantize/dequantize. quantize_outputs writes such chains (the output of
    LeNet's conv -> relu quantized before its pool, as onnxruntime's int8 pool wants)."""
    qop = rw.producer(op.operands[0])
    if qop is None or qop.name != "quantize_linear" or single_user(rw, qop.results[0]) is not op:
        return False
    p = _q_params(rw, qop)
    d = _dq_params(rw, op)
    if p is None or d is None or d[1].size != 1 or d[2].size != 1 or \
            float(d[1][0]) != p[0] or int(d[2][0]) != p[1]:
        return False
    chain, cur = [], op.results[0]
    while True:
        u = single_user(rw, cur)
        if u is None or len(u.results) != 1 or u.operands[0] is not cur:
            return False
        if u.name == "quantize_linear":
            p2 = _q_params(rw, u)
            if not chain or p2 is None or p2[:5] != p[:5]:
                return False
            break
        if not ((u.name == "max_pool" and u.results[0].type.ndim == 4) or
                (u.name in _RESHAPES and len(u.operands) == 1)):
            return False
        chain.append(u)
        cur = u.results[0]
    rw.set_operand(chain[0], 0, qop.operands[0])
    rw.erase(op)
    rw.erase(qop)
    return True


def _fold_weight_dequant(rw, op) -> bool:
    """A dequantize_linear of constants -> the float32 constant it computes."""
    q, s, z = (list(op.operands) + [None])[:3]
    arrs = [_const(rw, v) for v in (q, s)] + [None if z is None else _const(rw, z)]
    if arrs[0] is None or arrs[1] is None or (z is not None and arrs[2] is None):
        return False
    val = op.opdef.reference(*arrs, **op.attrs)
    c = rw.add_const(np.asarray(val), "int8.dequantized")
    rw.replace_all_uses(op.results[0], c)
    rw.erase(op)
    return True


def _drop_fake_quant(rw, op) -> bool:
    """dequantize_linear(quantize_linear(x)) feeding float ops -> x (see the module doc)."""
    qop = rw.producer(op.operands[0])
    if qop is None or qop.name != "quantize_linear":
        return False
    p = _q_params(rw, qop)
    d = _dq_params(rw, op)
    if p is None or d is None or d[1].size != 1 or d[2].size != 1:
        return False
    if float(d[1][0]) != p[0] or int(d[2][0]) != p[1]:
        return False
    x = qop.operands[0]
    if x.type != op.results[0].type:
        return False
    rw.replace_all_uses(op.results[0], x)
    rw.erase(op)
    if not rw.has_uses(qop.results[0]):
        rw.erase(qop)
    return True


@register_pass
class FoldQDQ(Pass):
    """Options: ``min_macs`` (default 2**13): smaller products stay float32;
    ``min_channel_pairs`` (default ``MIN_CONV_CHANNEL_PAIRS``, 64): non-depthwise convs with
    fewer ``C_in/groups * C_out/groups`` stay float32 (0: no such rule);
    ``keep_fp32_qdq`` (default True): keep the fake quantization of layers left in
    float32 (False: drop it, computing what the float model computes); ``signed_inputs`` (default:
    whether this CPU multiplies u8 x s8 exactly, i.e. has VNNI): whether layers whose
    input is int8 (signed) or uint8 above 127 may run in int8 — without VNNI only a uint8
    input in 0..127 does (a relu's output), the others stay float32;
    ``fuse_residual_qdq`` (default True): a layer output quantized only to be
    dequantized by a residual add (what ``fw.quantization.quantize_outputs`` writes for
    onnxruntime's QLinearAdd) is fused as the int8 op's residual post-op, skipping that
    one rounding (the result then differs from the QDQ program by up to half a step of
    that quantization before the add; False keeps it exact: int8 output, float add);
    ``int8_concat`` (default True): a concat whose result is quantized runs on bytes, its
    operands quantized with that one scale (``fw.core.ir.passes.int8_concat``);
    ``float_linear_chains`` (default True): a chain of quantized Linear layers without an
    activation between them runs as float32 (one folded product) where the cost rule of
    ``fw.core.ir.passes.int8_linear_chain`` says int8 loses (LeNet's classifier)."""

    name = "fold_qdq"

    def __init__(self, min_macs: int = 1 << 13, keep_fp32_qdq: bool = True,
                 signed_inputs: bool | None = None,
                 min_channel_pairs: int = MIN_CONV_CHANNEL_PAIRS,
                 fuse_residual_qdq: bool = True, int8_concat: bool = True,
                 float_linear_chains: bool = True):
        self.min_macs = int(min_macs)
        self.float_linear_chains = bool(float_linear_chains)
        self.int8_concat = bool(int8_concat)
        self.fuse_residual_qdq = bool(fuse_residual_qdq)
        self.min_channel_pairs = int(min_channel_pairs)
        self.keep_fp32_qdq = bool(keep_fp32_qdq)
        self.signed_inputs = signed_inputs

    def run(self, program) -> bool:
        if not any(op.name == "dequantize_linear" for op in program.block.ops):
            return False
        signed = self.signed_inputs
        if signed is None:
            from fw.core.kernels.cpu.int8 import EXACT_U8S8

            signed = EXACT_U8S8
        rw = Rewriter(program, deferred=True)
        changed = False
        top = program.block
        if self.int8_concat:
            from fw.core.ir.passes.int8_concat import quantize_concat

            for op in walk_ops(top):
                if op.parent is top and op.name == "concat" and quantize_concat(rw, op):
                    changed = True
            rw.flush()
        for op in walk_ops(top):
            if op.parent is top and op.name == "dequantize_linear" and _collapse_requant(rw, op):
                changed = True
        rw.flush()
        for op in walk_ops(top):
            if op.parent is top and op.name == "quantize_linear" and _unsigned_quantize(rw, op):
                changed = True
        rw.flush()
        stay_float, chains = set(), []
        if self.float_linear_chains:
            from fw.core.ir.passes.int8_linear_chain import drop_chain_qdq, float_chains

            chains = float_chains(rw, [op for op in walk_ops(top) if op.parent is top])
            for chain in chains:
                drop_chain_qdq(rw, chain)
                stay_float.update(chain[0])
                changed = True
            rw.flush()
        for op in walk_ops(top):
            if op.parent is not top or op.name not in ("conv", "linear", "matmul") or \
                    op in stay_float:
                continue
            m = _match_product(rw, op, self.min_macs, signed, self.min_channel_pairs)
            if m is None:
                continue
            scale, bias = _epilogue(rw, m, self.fuse_residual_qdq)
            _fold(rw, m, scale, bias)
            changed = True
        for op in walk_ops(top):
            if op.parent is not top or op.name != "dequantize_linear":
                continue
            if _fold_weight_dequant(rw, op):
                changed = True
            elif not self.keep_fp32_qdq and _drop_fake_quant(rw, op):
                changed = True
        rw.flush()
        if chains:
            from fw.core.ir.passes.int8_linear_chain import hoist_chain_input

            for chain in chains:
                hoist_chain_input(rw, chain)
            rw.flush()
        return changed
