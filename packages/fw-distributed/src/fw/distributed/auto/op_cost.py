"""FLOP and byte counts of fw-core's ops: one formula per op family, plus the
few ops whose work is not proportional to their tensors' sizes (products,
convolutions, attention, decompositions).

A rule gets the op's name, its operand types (None for an absent optional
input), its result types and its attributes, and returns an `OpCost`: FLOPs,
bytes read + written, and the `kind` of unit that does the arithmetic
("matmul", "conv", "vector"), or "view" for ops that move no data, or "comm" for
collectives (costed by the communication model, not here); "bmm" is a batched
matmul (a stack of small products, priced at its own calibrated rate) and
"scatter" a scatter-add (priced by its bytes at the scatter bandwidth). The time of
an op is then a roofline: ``overhead + max(flops / rate(kind, dtype), bytes /
bandwidth)``. An op that runs as a sequence of kernels of different kinds
(attention: two batched matmuls and the softmax's memory passes between them)
lists them as `parts`; its time is the sum of their rooflines (one overhead).

Where to add an op's cost: a family rule covers every op of its family (an op
added to ``fw/core/ops/<family>.py`` is costed at once); an op that needs its own
formula gets ``@register("op_name")`` below. An op with no formula at all
(`cost_of` returns None) is listed in `Estimate.uncovered`, never costed as zero.
Counting conventions: a multiply-add is 2 FLOPs; a transcendental function
(exp, log, tanh, erf, ...) counts `TRANSCENDENTAL` FLOPs per element.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fw.core.ops import OPS

__all__ = ["OpCost", "cost_of", "register", "FAMILY_RULES", "OP_RULES", "coverage",
           "TRANSCENDENTAL"]

TRANSCENDENTAL = 8  # FLOPs per element of exp/log/tanh/erf/... (a polynomial of ~8 terms)


@dataclass
class OpCost:
    """Work of one op: `flops`, `bytes` (read + written) and the unit `kind`.

    Args:
        flops (float): floating-point operations.
        bytes (float): bytes read and written.
        kind (str, optional): matmul, bmm, conv, vector, scatter, view or comm.
            Default: "vector".
        dtype (str, optional): the element type. Default: "float32".
        parts (tuple, optional): the `OpCost` of each kernel the op runs in
            sequence, priced one by one; empty when the op is one kernel.
            Default: ().

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import OpCost
        >>> OpCost(10, 4, "matmul") + OpCost(5, 2)
        OpCost(flops=15, bytes=6, kind='matmul', dtype='float32')
    """

    flops: float
    bytes: float
    kind: str = "vector"  # matmul | bmm | conv | vector | scatter | view | comm
    dtype: str = "float32"
    parts: tuple = field(default=(), repr=False)

    def __add__(self, o):
        parts = (self.parts or (self,)) + (o.parts or (o,)) if (self.parts or o.parts) else ()
        return OpCost(self.flops + o.flops, self.bytes + o.bytes, self.kind, self.dtype, parts)


FAMILY_RULES: dict = {}
OP_RULES: dict = {}


def register(*names):
    """Decorator: ``@register("matmul")`` makes the function the cost rule of those ops
    (``rule(name, ins, outs, attrs) -> OpCost | None``)."""

    def deco(fn):
        for n in names:
            OP_RULES[n] = fn
        return fn

    return deco


def _family(*fams):
    def deco(fn):
        for f in fams:
            FAMILY_RULES[f] = fn
        return fn

    return deco


# ---------------------------------------------------------------- helpers
def _numel(t) -> int:
    if t is None:
        return 0
    n = 1
    for d in t.shape:
        n *= max(int(d), 1) if d != -1 else 1  # a dynamic dim counts as 1 (costed per row)
    return n


def _nbytes(t) -> int:
    return 0 if t is None else _numel(t) * t.dtype.itemsize


def _io_bytes(ins, outs) -> int:
    return sum(_nbytes(t) for t in ins) + sum(_nbytes(t) for t in outs)


def _dtype(ins, outs) -> str:
    for t in list(outs) + list(ins):
        if t is not None and t.dtype.name not in ("bool", "int64", "int32"):
            return t.dtype.name
    for t in list(outs) + list(ins):
        if t is not None:
            return t.dtype.name
    return "float32"


def _out_numel(outs) -> int:
    return max((_numel(t) for t in outs), default=0)


_TRANSC = {"exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "cos", "tan",
           "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
           "atan2", "erf", "erfinv", "sigmoid", "logit", "pow", "sqrt", "rsqrt", "lgamma",
           "digamma", "polygamma", "i0", "i0e", "i1", "i1e", "gammainc", "gammaincc",
           "logaddexp", "sinc", "stanh", "hypot", "gelu", "silu", "mish", "softplus", "elu",
           "selu", "celu", "log_sigmoid", "swiglu", "tanhshrink", "softsign"}


# ---------------------------------------------------------------- family rules
@_family("elementwise", "activation")
def _elementwise(name, ins, outs, attrs):
    n = _out_numel(outs)
    per = TRANSCENDENTAL if name in _TRANSC else 1
    if name in ("softmax", "log_softmax", "gumbel_softmax"):
        per = TRANSCENDENTAL + 4  # max, subtract, exp, sum, divide
    return OpCost(per * n, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


@_family("reduce", "statistics", "cumulative", "search")
def _reduce(name, ins, outs, attrs):
    n = max((_numel(t) for t in ins if t is not None), default=0)
    per = 1
    if name in ("sort", "argsort", "unique", "median", "nanmedian", "quantile", "nanquantile",
                "kthvalue", "mode", "topk", "unique_consecutive"):
        per = max(1, int(math.log2(max(n, 2))))  # comparison sorts
    elif name in ("std", "var", "logsumexp", "logcumsumexp"):
        per = 3 if name in ("std", "var") else TRANSCENDENTAL + 2
    return OpCost(per * n, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


_VIEWS = {"reshape", "reshape_dyn", "squeeze", "unsqueeze", "flatten", "unflatten",
          "view_dtype", "as_strided", "expand", "expand_as", "expand_dyn",
          "broadcast_tensors", "shape", "numel", "is_empty", "real", "imag", "diagonal"}


@_family("shape", "indexing", "creation", "random", "quant", "fft", "optimizer")
def _moves(name, ins, outs, attrs):
    """Data movement (copies, gathers, creation): bytes in + out; views move nothing."""
    if name in _VIEWS:
        return OpCost(0, 0, "view", _dtype(ins, outs))
    n = _out_numel(outs)
    op = OPS[name]
    flops = 0
    if op.family == "random":
        flops = 10 * n  # a counter-based generator: ~10 integer/float ops per draw
    elif op.family == "optimizer":
        flops = 12 * max((_numel(t) for t in ins if t is not None), default=0)
    elif op.family == "quant":
        flops = 4 * n
    elif op.family == "fft":
        m = max((_numel(t) for t in ins if t is not None), default=1)
        flops = 5 * m * math.log2(max(m, 2))  # Cooley-Tukey: 5 N log2 N
    if name in ("full", "full_like", "arange", "linspace", "logspace", "eye", "zeros"):
        return OpCost(0, _nbytes(outs[0]) if outs else 0, "vector", _dtype(ins, outs))
    return OpCost(flops, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


@_family("norm")
def _norm(name, ins, outs, attrs):
    n = max((_numel(t) for t in ins if t is not None), default=0)
    # mean, variance, normalise, scale, shift: ~8 FLOPs per element (+ a rsqrt per row)
    return OpCost(8 * n, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


@_family("pool", "int8")
def _pool(name, ins, outs, attrs):
    k = attrs.get("kernel_size")
    taps = 1
    if isinstance(k, (list, tuple)):
        for v in k:
            taps *= int(v)
    elif isinstance(k, int):
        nd = max(len(ins[0].shape) - 2, 1) if ins and ins[0] is not None else 2
        taps = k ** nd
    else:  # adaptive pools: every input element is read once
        return OpCost(_numel(ins[0]), _io_bytes(ins, outs), "vector", _dtype(ins, outs))
    return OpCost(_out_numel(outs) * taps, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


@_family("loss", "nn_grad")
def _loss(name, ins, outs, attrs):
    n = max((_numel(t) for t in list(ins) + list(outs) if t is not None), default=0)
    per = TRANSCENDENTAL + 4 if ("entropy" in name or "softmax" in name or name in (
        "kl_div", "sigmoid_focal_loss", "ctc_loss", "hsigmoid_loss")) else 4
    return OpCost(per * n, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


@_family("collective")
def _collective(name, ins, outs, attrs):
    # priced by the communication model (comm.py) from the message size
    return OpCost(0, _io_bytes(ins, outs), "comm", _dtype(ins, outs))


@_family("nn_misc")
def _nn_misc(name, ins, outs, attrs):
    n = _out_numel(outs)
    return OpCost(2 * n, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


# ---------------------------------------------------------------- per-op rules
def _mm_dims(x, y, tx, ty):
    xs, ys = list(x.shape), list(y.shape)
    if len(xs) == 1:
        xs = [1] + xs
    if len(ys) == 1:
        ys = ys + [1]
    m, k = (xs[-1], xs[-2]) if tx else (xs[-2], xs[-1])
    n = ys[-2] if ty else ys[-1]
    return m, k, n


@register("matmul", "fused_matmul", "quantized_matmul", "vecdot", "bilinear")
def _matmul(name, ins, outs, attrs):
    x, y = ins[0], ins[1]
    if name == "vecdot":
        n = _numel(x)
        return OpCost(2 * n, _io_bytes(ins, outs), "vector", _dtype(ins, outs))
    if name == "bilinear":  # x1 W x2 per output feature: 2 * B * in1 * in2 * out
        b, i1 = x.shape[0], x.shape[-1]
        w = ins[2]
        return OpCost(2 * max(b, 1) * i1 * y.shape[-1] * w.shape[0], _io_bytes(ins, outs),
                      "matmul", _dtype(ins, outs))
    m, k, n = _mm_dims(x, y, attrs.get("transpose_x", False), attrs.get("transpose_y", False))
    batch = max(_numel(outs[0]) // max(m * n, 1), 1)
    flops = 2 * batch * m * k * n
    if len(ins) > 2 and ins[2] is not None:  # bias / fused epilogue
        flops += _numel(outs[0])
    # a stack of products (both operands batched: attention's per-head matmuls) runs
    # one small GEMM per slice, slower than one large GEMM; a batched left operand
    # against a plain matrix is one GEMM over the flattened rows
    kind = "bmm" if batch > 1 and len(x.shape) > 2 and len(y.shape) > 2 else "matmul"
    return OpCost(flops, _io_bytes(ins, outs), kind, _dtype(ins, outs))


@register("linear", "weight_only_linear")
def _linear(name, ins, outs, attrs):
    x = ins[0]
    k = x.shape[-1]
    flops = 2 * _numel(outs[0]) * k
    if len(ins) > 2 and ins[2] is not None:
        flops += _numel(outs[0])
    return OpCost(flops, _io_bytes(ins, outs), "matmul", _dtype([x], outs))


@register("conv", "fused_conv", "quantized_conv2d", "conv_grad_weight")
def _conv(name, ins, outs, attrs):
    w = ins[1]
    if name == "conv_grad_weight":  # dW = x (*) dy: the forward's FLOPs
        taps = _numel(outs[0]) // max(outs[0].shape[0], 1)  # Cin/g * prod(kernel)
        dy = ins[1]
        return OpCost(2 * _numel(dy) * taps, _io_bytes(ins, outs), "conv", _dtype(ins, outs))
    # weight [Cout, Cin/groups, *k]: each output element takes Cin/groups * prod(k) MACs
    taps = _numel(w) // max(w.shape[0], 1)
    flops = 2 * _numel(outs[0]) * taps
    return OpCost(flops, _io_bytes(ins, outs), "conv", _dtype(ins, outs))


@register("conv_transpose")
def _conv_t(name, ins, outs, attrs):
    x, w = ins[0], ins[1]
    # weight [Cin, Cout/groups, *k]: each input element scatters into Cout/g * prod(k)
    taps = _numel(w) // max(w.shape[0], 1)
    return OpCost(2 * _numel(x) * taps, _io_bytes(ins, outs), "conv", _dtype(ins, outs))


def attention_parts(b, h, tq, tk, d, dv, itemsize, dtype, causal=False, mask_bytes=0,
                    qkv_bytes=0, out_bytes=0):
    """The kernels of eager attention ``softmax(q k^T * scale + mask) v``, one `OpCost`
    each, in the order fw's kernel runs them (fw.core.ops.nn_misc): the heads are
    split (q, k, v copied to [B, H, T, D]), ``q k^T`` as a batched matmul, the scale,
    the causal mask (a [Tq, Tk] triangle and a select) and/or the given mask, the
    softmax's memory passes (max, subtract, exp, sum, divide), ``p v`` as a batched
    matmul and the heads merged back (a copy of the output).

    Args:
        b, h, tq, tk, d, dv (int): batch, heads, query and key lengths, the q/k and
            the v head dims.
        itemsize (int): bytes per element; dtype (str): the element type.
        causal (bool): a causal mask. mask_bytes (int): bytes of an explicit mask.
        qkv_bytes, out_bytes (int): bytes of q + k + v and of the output.

    Returns:
        list: the parts' `OpCost` s.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto.op_cost import attention_parts
        >>> [p.kind for p in attention_parts(1, 1, 4, 4, 2, 2, 4, "float32")][:3]
        ['vector', 'bmm', 'vector']
    """
    n = b * h * tq * tk  # scores
    sb = n * itemsize
    parts = [OpCost(0, 2 * qkv_bytes, "vector", dtype),                   # head split
             OpCost(2 * n * d, qkv_bytes * (2 * d) // max(2 * d + dv, 1) + sb, "bmm", dtype),
             OpCost(n, 2 * sb, "vector", dtype)]                          # * scale
    if causal:  # the boolean triangle, then where(tri, s, -inf)
        parts.append(OpCost(n, 2 * sb + 2 * tq * tk, "vector", dtype))
    if mask_bytes:
        parts.append(OpCost(n, 2 * sb + mask_bytes, "vector", dtype))
    # softmax: max (read), subtract (read + write), exp (read + write), sum (read),
    # divide (read + write): 7 passes over the scores
    parts.append(OpCost((TRANSCENDENTAL + 4) * n, 7 * sb, "vector", dtype))
    parts.append(OpCost(2 * n * dv, sb + qkv_bytes * dv // max(2 * d + dv, 1) + out_bytes,
                        "bmm", dtype))                                    # p v
    parts.append(OpCost(0, 2 * out_bytes, "vector", dtype))               # heads merged
    return parts


@register("scaled_dot_product_attention")
def _sdpa(name, ins, outs, attrs):
    q, k, v = ins[0], ins[1], ins[2]  # [B, T, H, D] (Paddle's layout)
    if len(q.shape) == 3:
        (tq, h, d), b = q.shape, 1
    else:
        b, tq, h, d = q.shape
    tk, dv = k.shape[-3], v.shape[-1]
    mask = ins[3] if len(ins) > 3 else None
    dt = _dtype(ins, outs)
    parts = attention_parts(max(b, 1), h, tq, tk, d, dv, q.dtype.itemsize, dt,
                            bool(attrs.get("is_causal", False)), _nbytes(mask),
                            _nbytes(q) + _nbytes(k) + _nbytes(v), _nbytes(outs[0]))
    total = OpCost(sum(p.flops for p in parts), sum(p.bytes for p in parts), "bmm", dt,
                   tuple(parts))
    return total


@register("fused_attention")
def _fused_attention(name, ins, outs, attrs):
    q, k = ins[0], ins[1]  # [B, S, D] and [B, T, D], heads packed in D (the inference op)
    b, tq, dm = q.shape
    tk = k.shape[1]
    h = int(attrs.get("num_heads", 1))
    # the same arithmetic as scaled_dot_product_attention with D = dm / h per head
    flops = 4 * b * tq * tk * dm + (TRANSCENDENTAL + 4) * b * h * tq * tk
    scores = b * h * tq * tk * q.dtype.itemsize
    return OpCost(flops, _io_bytes(ins, outs) + 2 * scores, "matmul", _dtype(ins, outs))


@register("einsum")
def _einsum(name, ins, outs, attrs):
    eq = str(attrs.get("equation", ""))
    lhs = eq.split("->")[0].replace(" ", "")
    sizes = {}
    for spec, t in zip(lhs.split(","), [t for t in ins if t is not None]):
        if "." in spec:
            return None  # ellipsis: dims not attributable; listed, not guessed
        for c, dim in zip(spec, t.shape):
            sizes[c] = max(int(dim), 1)
    flops = 2 * math.prod(sizes.values()) if sizes else 0
    return OpCost(flops, _io_bytes(ins, outs), "matmul", _dtype(ins, outs))


@register("embedding")
def _embedding(name, ins, outs, attrs):
    # a gather: reads the ids and the selected rows, writes them
    return OpCost(0, _nbytes(ins[0]) + 2 * _nbytes(outs[0]), "vector", _dtype(ins, outs))


@register("index_add")
def _index_add(name, ins, outs, attrs):
    # fw copies x, then adds each value slice into its row one at a time
    # (np.add.at): a copy pass, then a scatter priced by the added values' bytes
    x, value = ins[0], ins[2] if len(ins) > 2 else None
    dt = _dtype(ins, outs)
    parts = (OpCost(0, 2 * _nbytes(x), "vector", dt),
             OpCost(_numel(value), _nbytes(value) + _nbytes(ins[1]), "scatter", dt))
    return OpCost(sum(p.flops for p in parts), sum(p.bytes for p in parts), "scatter", dt,
                  parts)


@register("cholesky", "lu", "qr", "eigh", "eig", "svd", "householder_product", "ormqr",
          "lu_unpack", "det", "slogdet", "inv", "solve", "triangular_solve", "cholesky_solve",
          "cholesky_inverse", "lu_solve", "lstsq", "pinv", "matrix_exp", "matrix_power",
          "matrix_rank", "matrix_norm")
def _dense_la(name, ins, outs, attrs):
    a = ins[0]
    n = max(a.shape[-1], a.shape[-2] if len(a.shape) > 1 else 1, 1)
    batch = max(_numel(a) // max(a.shape[-1] * (a.shape[-2] if len(a.shape) > 1 else 1), 1), 1)
    # textbook operation counts (Golub & Van Loan): LU 2/3 n^3, Cholesky 1/3 n^3,
    # QR 4/3 n^3, symmetric eig ~9 n^3, SVD / general eig ~22 n^3, solves 2 n^2 per rhs
    c = {"cholesky": 1 / 3, "lu": 2 / 3, "det": 2 / 3, "slogdet": 2 / 3, "qr": 4 / 3,
         "householder_product": 4 / 3, "ormqr": 4 / 3, "eigh": 9, "eig": 22, "svd": 22,
         "pinv": 22, "matrix_rank": 22, "lstsq": 4 / 3, "inv": 2, "solve": 2 / 3,
         "cholesky_inverse": 1, "matrix_exp": 12, "matrix_norm": 22, "lu_unpack": 0}.get(name)
    if c is None:  # triangular / factored solves, matrix_power: n^2 per rhs column / a GEMM
        rhs = ins[1] if len(ins) > 1 and ins[1] is not None else a
        flops = 2 * batch * n * max(_numel(rhs) // max(batch, 1), n)
        if name == "matrix_power":
            p = abs(int(attrs.get("n", 2)))
            flops = 2 * batch * n ** 3 * max(math.ceil(math.log2(max(p, 2))) * 2, 1)
    else:
        flops = c * batch * n ** 3
        if name == "matrix_norm" and str(attrs.get("p", "fro")) in ("fro", "1", "-1", "inf"):
            flops = 2 * _numel(a)
    return OpCost(flops, _io_bytes(ins, outs), "matmul", _dtype(ins, outs))


@register("cdist", "pairwise_distance", "cosine_similarity", "cov", "corrcoef", "kron",
          "trace", "cross", "vector_norm", "normalize")
def _small_la(name, ins, outs, attrs):
    x = ins[0]
    if name == "cdist":  # [.., P, M] x [.., R, M] -> P*R distances of M terms
        m = x.shape[-1]
        return OpCost(3 * _numel(outs[0]) * m, _io_bytes(ins, outs), "vector",
                      _dtype(ins, outs))
    if name in ("cov", "corrcoef"):  # [V, N] -> V x V products of length N
        v = x.shape[0] if x.shape else 1
        nn = x.shape[-1] if x.shape else 1
        return OpCost(2 * v * v * nn, _io_bytes(ins, outs), "matmul", _dtype(ins, outs))
    n = max((_numel(t) for t in list(ins) + list(outs) if t is not None), default=0)
    return OpCost(3 * n, _io_bytes(ins, outs), "vector", _dtype(ins, outs))


@register("fused_elementwise")
def _fused_ew(name, ins, outs, attrs):
    # one pass over memory for the whole chain; a few FLOPs per element per fused op
    chain = attrs.get("program") or ()
    k = max(len(chain), 1) if isinstance(chain, (list, tuple)) else 1
    return OpCost(k * _out_numel(outs), _io_bytes(ins, outs), "vector", _dtype(ins, outs))


@register("cond", "while")
def _control(name, ins, outs, attrs):
    return None  # nested blocks: costed by walking them (estimate.py); a while's trip
    # count is unknown statically, so the estimate lists it


# ---------------------------------------------------------------- lookup
def cost_of(name, ins, outs, attrs) -> OpCost | None:
    """The cost of one op application, or None when fw has no formula for it.

    Args:
        name (str): the op's name in fw-core's table.
        ins (list): operand `TensorType`\\ s (None for an absent optional input).
        outs (list): result `TensorType`\\ s.
        attrs (dict): the op's attributes.

    Returns:
        OpCost | None

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.core.ir import TensorType
            >>> from fw.distributed.auto.op_cost import cost_of
            >>> c = cost_of("matmul", [TensorType([64, 32], "float32"),
            ...                        TensorType([32, 16], "float32")],
            ...             [TensorType([64, 16], "float32")], {})
            >>> c.flops, c.bytes, c.kind
            (65536, 14336, 'matmul')
    """
    rule = OP_RULES.get(name)
    if rule is None:
        op = OPS.get(name)
        if op is None:
            raise KeyError(f"cost_of: no op named {name!r} in fw-core's op table")
        rule = FAMILY_RULES.get(op.family)
    if rule is None:
        return None
    return rule(name, list(ins), list(outs), dict(attrs))


def coverage() -> dict:
    """``{"formula": [...], "none": [...]}``: the ops of fw-core's table with a cost
    rule (their own or their family's) and those without one (``cond``/``while``,
    whose nested blocks are walked instead, and any family without a rule).

    Returns:
        dict: ``{"formula": [op names], "none": [op names]}``.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import coverage
        >>> cov = coverage()
        >>> "matmul" in cov["formula"], "while" in cov["none"]
        (True, True)
    """
    have, none = [], []
    for name, op in sorted(OPS.items()):
        rule = OP_RULES.get(name) or FAMILY_RULES.get(op.family)
        (have if rule is not None and name not in ("cond", "while") else none).append(name)
    return {"formula": have, "none": none}
