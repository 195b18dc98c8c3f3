"""Output quantization of a converted (QDQ) program: a ``quantize_linear`` ->
``dequantize_linear`` pair at each quantized layer's *output*, not only at its input.

``PTQ``/``QAT`` ``convert`` quantize what each Conv2D/Linear *reads* (Paddle's
``QuantedConv2D``/``QuantedLinear``). Between one layer's product and the next
layer's quantize sit a batch norm, an activation, a pool or a residual add, which a
runtime that fuses "DequantizeLinear -> op -> QuantizeLinear" groups into int8 kernels
(onnxruntime's QDQ format; also fw's ``fold_qdq``) cannot see through: onnxruntime ran
fw's exported ResNet-18 QDQ file slower than its float export, every conv a float
conv over weights dequantized per run. `quantize_outputs` rewrites the program into the
layout of ONNX's QDQ convention (what onnxruntime's ``quantize_static`` writes, and
Paddle's ``out_threshold`` per quantized layer):

1. an inference ``batch_norm`` after a quantized conv is folded into it: the weight's
   per-channel dequantization scale becomes ``w_scale * |s_bn|`` (codes negated where
   ``s_bn < 0``), the bias ``(b + c) * s_bn + t_bn`` (float64, rounded once to float32).
   The int8 codes do not change, so the weights stay what PTQ/QAT validated;
2. each quantized conv/linear's epilogue (bias, activation) ends in a
   ``quantize_linear`` (the *layer output*), unless its value is the program's output;
3. a residual ``add`` of a layer output and another float value: both operands and
   the sum (after its activation, if one follows) are quantized, so the add reads two
   dequantized values and its result is requantized (onnxruntime's ``QLinearAdd``; fw's
   ``fold_qdq`` fuses it back into the conv as a residual post-op).

Scales: where the layer output already flows into the next layer's input quantization
(directly, or through max pooling and flatten/reshape, which commute with
quantization) it *shares* that quantization's parameters (the same codes: nothing new
to calibrate). Elsewhere (the operands of residual adds, a value read by an average
pool) the abs-max of the calibration batches sets a per-tensor scale. A value that
is non-negative by construction (a relu/relu6 output) is quantized as **uint8 with
zero point 0 over 0..255** (scale ``amax / 255``; an int8 quantization of it that a
reader calibrated is widened to that, the same range with twice the steps): a
quantize whose zero point is the range's minimum lets the runtime drop the relu
before it (onnxruntime's ReluQuantFusion), which a symmetric int8 one (zero point 0,
minimum -128) does not. Everything else is symmetric int8, written (``unsigned=True``,
the default) as uint8 with zero point 128: the same values, so that every activation
has one type (onnxruntime fuses a conv or an add only when its operands and result
agree; ResNet-18 fused either way, MobileNetV2 only this way).

The result computes the QDQ program with the output roundings added: within one
quantization step of each new output per layer (and the finer uint8 steps where a
relu's reader used int8). Validate accuracy on it (examples/quantize_digits.py does).
Concatenations are left as they are (no shared concat scales yet).
"""

from __future__ import annotations

import os

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.fold_batch_norm import batch_norm_affine, captured_array
from fw.core.ir.passes.fuse_conv import channel_bias
from fw.core.ir.passes.fuse_matmul import row_bias
from fw.core.ir.passes.rewrite import Rewriter
from fw.core.ops.fused import activation_of

__all__ = ["quantize_outputs"]

_F32 = np.float32
_NONNEG = ("relu", "relu6")
_PASS_BYTES = ("max_pool", "flatten", "reshape")  # commute with quantization
_PRODUCTS = ("conv", "linear", "matmul")


def _const(prog, v):
    return None if v is None else captured_array(v, prog)


def _int8_weight(prog, rw, w):
    """(codes, scale, axis, dq op) of a weight read through dequantize_linear of
    constant symmetric int8 codes, else None."""
    dq = rw.producer(w)
    if dq is None or dq.name != "dequantize_linear":
        return None
    ops = list(dq.operands) + [None]
    q, s, z = _const(prog, ops[0]), _const(prog, ops[1]), _const(prog, ops[2])
    if q is None or s is None or q.dtype != np.int8 or (z is not None and np.any(z)):
        return None
    return q, s.astype(np.float64).reshape(-1), dq.attrs.get("axis", -1), dq


def _quantized_product(prog, rw, op) -> bool:
    if op.name not in _PRODUCTS or op.results[0].type.dtype is not _dt.float32:
        return False
    x = rw.producer(op.operands[0])
    return x is not None and x.name == "dequantize_linear" and \
        _int8_weight(prog, rw, op.operands[1]) is not None


def _fold_batch_norms(prog, rw) -> int:
    """Step 1 of the module doc. Returns how many were folded."""
    n = 0
    for op in list(prog.block.ops):
        if op.parent is None or op.name != "conv" or not _quantized_product(prog, rw, op):
            continue
        q, s, axis, dq = _int8_weight(prog, rw, op.operands[1])
        t = op.results[0].type
        c = q.shape[0]
        if (s.size > 1 and axis % q.ndim != 0) or op.attrs.get("channel_last"):
            continue
        b = op.operands[2] if len(op.operands) > 2 else None
        bias = np.zeros(c) if b is None else _const(prog, b)
        if bias is None:
            continue
        bias = bias.astype(np.float64).reshape(c)
        chain, cur = [], op.results[0]
        u = single_user(rw, cur)
        if u is not None and u.name == "add":
            other = u.operands[1] if u.operands[0] is cur else u.operands[0]
            arr = _const(prog, other) if channel_bias(other, cur, 1) else None
            if arr is not None:
                bias = bias + arr.astype(np.float64).reshape(c)
                chain.append(u)
                cur = u.results[0]
                u = single_user(rw, cur)
        if u is None or u.name != "batch_norm" or u.results[0].type != t:
            continue
        a = u.attrs
        if (a.get("training") and not a.get("use_global_stats")) or a.get("channel_last") or \
                any(rw.has_uses(r) for r in u.results[1:]):
            continue
        st = batch_norm_affine(rw, u, c)
        if st is None or not np.all(np.isfinite(st[0])) or np.any(st[0] == 0):
            continue
        sbn, tbn = st
        neg = sbn < 0
        if np.any(q[neg] == -128):  # -(-128) is not an int8 code
            continue
        codes = q.copy()
        codes[neg] = -codes[neg]
        scale = (np.broadcast_to(s, (c,)) * np.abs(sbn)).astype(_F32)
        if not np.all(scale > 0) or not np.all(np.isfinite(scale)):
            continue
        label = op.operands[1].label or "qdq.w"
        wq = rw.add_const(codes, f"{label}.bn_folded")
        ws = rw.add_const(scale, f"{label}.bn_folded_scale")
        wz = rw.add_const(np.zeros(c, np.int32), f"{label}.bn_folded_zero_point")
        wd = rw.create("dequantize_linear", [wq, ws, wz], {"axis": 0}, before=op)
        bv = rw.add_const((bias * sbn + tbn).astype(_F32), f"{label}.bn_folded_bias")
        new = rw.create("conv", [op.operands[0], wd.results[0], bv], dict(op.attrs), before=op)
        rw.replace_all_uses(u.results[0], new.results[0])
        for dead in (u, *reversed(chain), op):
            rw.erase(dead)
        if not rw.has_uses(dq.results[0]):
            rw.erase(dq)
        n += 1
    return n


def _epilogue_end(prog, rw, op):
    """(value, non-negative) at the end of product `op`'s epilogue: a constant bias
    add, an inference batch norm, one activation; stops before a residual add."""
    cur = op.results[0]
    t = cur.type
    while True:
        u = single_user(rw, cur)
        if u is None or len(u.results) == 0 or u.results[0].type != t:
            return cur, False
        if u.name == "add":
            other = u.operands[1] if u.operands[0] is cur else u.operands[0]
            is_bias = channel_bias(other, cur, 1) if op.name == "conv" else row_bias(other, cur)
            if not is_bias or _const(prog, other) is None:
                return cur, False
        elif u.name == "batch_norm":
            if any(rw.has_uses(r) for r in u.results[1:]):
                return cur, False
        elif activation_of(u) is not None and len(u.results) == 1:
            return u.results[0], activation_of(u) in _NONNEG
        else:
            return cur, False
        cur = u.results[0]


def _is_output(prog, v) -> bool:
    return any(o is v for o in prog.block.outputs)


def _q_params(prog, qop):
    """(scale, zero point, qmin, qmax) of a per-tensor constant quantize_linear."""
    if qop.name != "quantize_linear":
        return None
    x, s, z = (list(qop.operands) + [None])[:3]
    sa, za = _const(prog, s), (np.zeros(1, np.int32) if z is None else _const(prog, z))
    if sa is None or za is None or sa.size != 1 or za.size != 1:
        return None
    return (float(sa.reshape(-1)[0]), int(za.reshape(-1)[0]), int(qop.attrs["qmin"]),
            int(qop.attrs["qmax"]))


def _reader_quantizes(prog, rw, v):
    """The quantize_linear ops that read `v` directly or through a single-reader chain of
    max pools / flatten / reshape, when they share one set of per-tensor parameters:
    (ops, params, whether they are all of `v`'s readers); None when there is none."""
    found, params, alone = [], None, True
    stack = [v]
    while stack:
        cur = stack.pop()
        users = rw.users(cur)
        if not users:
            alone = False
        for op, idx in users:
            if not hasattr(op, "name") or idx != 0:
                alone = False
            elif op.name == "quantize_linear":
                p = _q_params(prog, op)
                if p is None or (params is not None and p != params):
                    return None
                params = params or p
                found.append(op)
            elif op.name in _PASS_BYTES and len(op.results) == 1 and (
                    op.name != "max_pool" or op.results[0].type.ndim == 4) and cur is v:
                stack.append(op.results[0])
            elif op.name in _PASS_BYTES and len(op.results) == 1 and \
                    single_user(rw, cur) is op and (op.name != "max_pool" or
                                                     op.results[0].type.ndim == 4):
                stack.append(op.results[0])
            else:
                alone = False
    return (found, params, alone) if found else None


def _nonneg(rw, v) -> bool:
    """Whether `v` is a relu/relu6 output, also through pools and reshapes."""
    p = rw.producer(v)
    while p is not None and p.name in ("max_pool", "avg_pool", "adaptive_avg_pool",
                                       "flatten", "reshape", "transpose"):
        p = rw.producer(p.operands[0])
    return p is not None and activation_of(p) in _NONNEG


def _dq_same(prog, op, p):
    """Whether dequantize_linear `op` has the per-tensor parameters of p."""
    s, z = (list(op.operands) + [None])[1:3]
    sa, za = _const(prog, s), (np.zeros(1, np.int32) if z is None else _const(prog, z))
    return sa is not None and za is not None and sa.size == 1 and za.size == 1 and \
        float(sa.reshape(-1)[0]) == p[0] and int(za.reshape(-1)[0]) == p[1]


def _widen_unsigned(p):
    """A symmetric int8 quantization of a non-negative value -> uint8 over the same
    range with zero point 0 and twice the steps (see the module doc)."""
    s, z, qmin, qmax = p
    if z == 0 and qmin < 0:
        return (s * qmax / 255.0, 0, 0, 255)
    return p


def _calibrate(prog, values, calibration):
    """abs-max of each value over the calibration batches."""
    from fw.core.ir import run
    from fw.core.tensor import to_tensor

    probe = prog.clone()
    # the clone has new Value objects in the same places: map by position
    index = {id(r): (i, k) for i, op in enumerate(prog.block.ops) for k, r in
             enumerate(op.results)}
    pos = [index[id(v)] for v in values]
    probe.block.outputs = [probe.block.ops[i].results[k] for i, k in pos]
    amax = np.zeros(len(values))
    for batch in calibration:
        batch = batch if isinstance(batch, (list, tuple)) else [batch]
        outs = run(probe, *[to_tensor(np.asarray(b)) for b in batch])
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for i, o in enumerate(outs):
            amax[i] = max(amax[i], float(np.abs(np.asarray(o.numpy(), np.float64)).max(
                initial=0.0)))
    return amax


def _insert_qdq(prog, rw, v, p, after):
    """quantize_linear -> dequantize_linear of `v` with params p, right after op
    `after`; every other reader of `v` reads the dequantized value."""
    s, z, qmin, qmax = p
    blk = prog.block
    nxt = blk.ops[blk.ops.index(after) + 1]
    sv = rw.add_const(np.array([s], _F32), "qdq.out_scale")
    zv = rw.add_const(np.array([z], np.int32), "qdq.out_zero_point")
    q = rw.create("quantize_linear", [v, sv, zv], {"qmin": qmin, "qmax": qmax}, before=nxt)
    d = rw.create("dequantize_linear", [q.results[0], sv, zv], {}, before=nxt)
    rw.replace_all_uses(v, d.results[0])
    rw.set_operand(q, 0, v)
    return q, d


def _set_params(prog, rw, qop, p):
    """Rewrite quantize_linear `qop` (and the dequantize_linear ops reading it) to
    params p."""
    s, z, qmin, qmax = p
    sv = rw.add_const(np.array([s], _F32), "qdq.out_scale")
    zv = rw.add_const(np.array([z], np.int32), "qdq.out_zero_point")
    q = rw.create("quantize_linear", [qop.operands[0], sv, zv], {"qmin": qmin, "qmax": qmax},
                  before=qop)
    for op, idx in rw.users(qop.results[0]):
        if op.name != "dequantize_linear" or idx != 0:
            raise ValueError(f"quantize_outputs: {op.name} reads a quantize_linear's codes; "
                             "only dequantize_linear may")
        d = rw.create("dequantize_linear", [q.results[0], sv, zv], {}, before=op)
        rw.replace_all_uses(op.results[0], d.results[0])
        rw.erase(op)
    rw.erase(qop)
    return q


def quantize_outputs(program, calibration, save_path=None, unsigned=True):
    """Quantize the outputs of a converted (QDQ) program's quantized layers (see the
    module doc): batch norms folded into the int8 convs, a quantize/dequantize pair at
    each layer output and around residual adds, relu outputs as uint8.

    Args:
        program: a ``fw.core.ir.Program`` in the QDQ form ``PTQ.convert`` /
            ``QAT.convert`` models save as (rewritten in place), or the path of such a
            saved model file (``fw.jit.save``'s), rewritten into `save_path`.
        calibration: an iterable of input arrays (or lists of them, one per program
            input) for the scales nothing else fixes (residual adds, average pools).
        save_path: where a rewritten model file goes (default: over `program`'s path);
            only with a path.
        unsigned (bool): also re-express every symmetric int8 activation quantization
            (zero point 0, -128..127) as uint8 with zero point 128 (0..255): the same
            values, one activation type throughout, which onnxruntime needs to fuse a
            conv or add whose operands would otherwise mix int8 and uint8 (MobileNetV2:
            37 of 52 convs and none of its 10 residual adds fused without it, all with it).

    Returns:
        dict: ``{"batch_norms_folded": n, "outputs": n, "shared": n, "calibrated": n}``
        (layer outputs quantized, of them with a reader's parameters, calibrated).

    Examples:
        >>> import fw
        >>> import os, tempfile
        >>> import numpy as np, fw, fw.nn as nn
        >>> from fw.quantization import PTQ, QuantConfig, quantize_outputs
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> net = nn.Sequential(nn.Conv2D(3, 8, 3), nn.BatchNorm2D(8), nn.ReLU(),
        ...                     nn.Conv2D(8, 8, 3))
        >>> ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
        >>> q = ptq.quantize(net)
        >>> _ = q(fw.randn([2, 3, 8, 8]))
        >>> path = fw.jit.save(ptq.convert(q), os.path.join(tempfile.mkdtemp(), "m"),
        ...                    input_spec=[fw.jit.InputSpec([-1, 3, 8, 8])])
        >>> quantize_outputs(path, [np.random.rand(2, 3, 8, 8).astype("float32")])
        {'batch_norms_folded': 1, 'outputs': 1, 'shared': 1, 'calibrated': 0}
    """
    from fw.core.ir import Program, load, save

    if isinstance(program, (str, os.PathLike)):
        prog, _ = load(os.fspath(program))
        stats = quantize_outputs(prog, calibration, unsigned=unsigned)
        save(prog, os.fspath(save_path if save_path is not None else program))
        return stats
    if save_path is not None:
        raise ValueError("quantize_outputs: 'save_path' is for a model file path; a Program "
                         "is rewritten in place")
    if not isinstance(program, Program):
        raise TypeError(f"quantize_outputs: 'program' must be a fw.core.ir.Program or a model "
                        f"file path, got {type(program).__name__}")
    calibration = list(calibration)
    rw = Rewriter(program)
    folded = _fold_batch_norms(program, rw)
    # which values become layer outputs (program order: a block's output is known
    # before the next block's residual add reads it)
    outs: dict = {}  # value -> (non-negative, producing op)
    for op in list(program.block.ops):
        if op.parent is None:
            continue
        if _quantized_product(program, rw, op):
            v, nonneg = _epilogue_end(program, rw, op)
            if not _is_output(program, v):
                outs[v] = (nonneg, v.owner)
        elif op.name == "add" and len(op.results) == 1 and \
                op.results[0].type.dtype is _dt.float32:
            a, b = op.operands
            if a is b or a.type != b.type or not (a in outs or b in outs):
                continue
            if any(_const(program, x) is not None for x in (a, b)):
                continue
            for x in (a, b):
                p = rw.producer(x)
                if x not in outs and p is not None and p.name != "dequantize_linear":
                    outs[x] = (_nonneg(rw, x), p)
            end, nonneg = op.results[0], False
            u = single_user(rw, end)
            if u is not None and activation_of(u) is not None and len(u.results) == 1 and \
                    u.results[0].type == end.type:
                end, nonneg = u.results[0], activation_of(u) in _NONNEG
            if not _is_output(program, end):
                outs[end] = (nonneg, end.owner)
    plan, need = [], []
    for v, (nonneg, after) in outs.items():
        rq = _reader_quantizes(program, rw, v)
        if rq is None:
            plan.append((v, after, None, ()))
            need.append(v)
            continue
        qs, params, alone = rq
        p = _widen_unsigned(params) if nonneg else params
        if p == params and alone and all(q.operands[0] is v for q in qs):
            continue  # already quantized right there with these parameters
        plan.append((v, after, p, qs))
    amax = dict(zip(need, _calibrate(program, need, calibration))) if need else {}
    shared = 0
    replaced: dict = {}  # a reader quantize rewritten to new parameters -> its successor
    for v, after, p, readers in plan:
        if p is None:
            a = max(amax[v], 1e-8)
            p = (a / 255.0, 0, 0, 255) if outs[v][0] else (a / 127.0, 0, -128, 127)
        else:
            shared += 1
            readers = [replaced.get(q, q) for q in readers]
            for i, q in enumerate(readers):
                if _q_params(program, q) != p:
                    readers[i] = replaced[q] = _set_params(program, rw, q, p)
        direct = [q for q in readers if q.operands[0] is v]
        if direct and len(direct) == len(rw.users(v)):
            continue  # its readers are that quantization already
        q, d = _insert_qdq(program, rw, v, p, after)
        for other in direct:  # the same codes: one quantize, one dequantize
            for op, _ in rw.users(other.results[0]):
                if op.name == "dequantize_linear" and _dq_same(program, op, p):
                    rw.replace_all_uses(op.results[0], d.results[0])
                    rw.erase(op)
            rw.replace_all_uses(other.results[0], q.results[0])
            rw.erase(other)
    if unsigned:
        for op in list(program.block.ops):
            if op.parent is not None and op.name == "quantize_linear":
                p = _q_params(program, op)
                if p is not None and p[1:] == (0, -128, 127):
                    _set_params(program, rw, op, (p[0], 128, 0, 255))
    return {"batch_norms_folded": folded, "outputs": len(plan), "shared": shared,
            "calibrated": len(need)}
