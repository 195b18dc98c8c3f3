"""``fused_attention``: scaled dot-product attention over heads, as the inference
pass ``fuse_attention`` (``fw.core.ir.passes.fuse_attention``) emits it.

No user code calls it (``api=False, method=False``); like the ops of
``fw.core.ops.fused`` it exists for inference programs, is not differentiable,
and its NumPy reference below is the specification the cpu kernel
(``fw.core.kernels.cpu.attention``) is tested against.

``fused_attention(q, k, v, mask?) -> out``
    Attributes ``num_heads=1, scale=1.0``. q, k, v: ``[B, S, D]`` (k and v may
    have another sequence length T), D divisible by ``num_heads``; each is split
    into ``num_heads`` heads of ``D / num_heads`` features (row-major: head h holds
    features ``h*Dh ... (h+1)*Dh - 1``, what ``reshape([0, 0, H, Dh])`` gives)::

        s   = (q_h @ k_h^T) * scale + mask        # [B, H, S, T]
        out = softmax(s, axis=-1) @ v_h           # heads back side by side: [B, S, D]

    in this order, the unfused chain's (reshape, transpose, matmul with
    ``transpose_y``, multiply, add, softmax, matmul, transpose, reshape): for
    float32/float64 the reference makes the same NumPy calls in the same order as
    the chain's references, so it is bit-identical to them. ``scale == 1.0`` is no
    multiply. mask: optional, x's dtype, broadcasting against ``[B, H, S, T]``
    (additive: 0 keeps, a large negative number or -inf masks). float16/bfloat16
    are computed in float32 and rounded once.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import broadcast_shapes, shp
from fw.core.ops._registry import defop
from fw.core.ops.activation import down, require_real_float, softmax_np, up

__all__ = ["attention_ref"]


def _fa_canon(attrs):
    a = dict(attrs)
    h = a["num_heads"]
    if isinstance(h, bool) or int(h) != h or int(h) < 1:
        raise InvalidArgumentError(f"fused_attention: num_heads must be a positive int, got {h!r}")
    a["num_heads"] = int(h)
    s = a["scale"]
    a["scale"] = float(s.item() if hasattr(s, "item") else s)
    return a


def _dim_eq(a, b) -> bool:
    return a == DYN or b == DYN or a == b


def _fa_infer(q, k, v, mask=None, num_heads=1, scale=1.0):
    require_real_float(q)
    for name, t in (("k", k), ("v", v), ("mask", mask)):
        if t is not None and t.dtype is not q.dtype:
            raise InvalidArgumentError(f"fused_attention: {name} has dtype {t.dtype}, q has "
                                       f"{q.dtype}")
    qs, ks, vs = list(q.shape), list(k.shape), list(v.shape)
    if len(qs) != 3 or len(ks) != 3 or len(vs) != 3:
        raise InvalidArgumentError(f"fused_attention: q {shp(qs)}, k {shp(ks)} and v {shp(vs)} "
                                   f"must be [batch, seq, features]")
    d = qs[2]
    if not (_dim_eq(ks[2], d) and _dim_eq(vs[2], d) and _dim_eq(ks[0], qs[0]) and
            _dim_eq(vs[0], qs[0]) and _dim_eq(ks[1], vs[1])):
        raise InvalidArgumentError(f"fused_attention: q {shp(qs)}, k {shp(ks)} and v {shp(vs)} "
                                   f"do not match (k and v one length, one feature width)")
    if d != DYN and d % num_heads:
        raise InvalidArgumentError(f"fused_attention: {d} features do not split into "
                                   f"num_heads={num_heads} heads")
    if mask is not None:
        scores = [qs[0], num_heads, qs[1], ks[1]]
        if len(mask.shape) > 4:
            raise InvalidArgumentError(f"fused_attention: mask {shp(mask.shape)} has more than "
                                       f"4 dimensions (scores {shp(scores)})")
        try:
            broadcast_shapes(scores, list(mask.shape))
        except InvalidArgumentError:
            raise InvalidArgumentError(f"fused_attention: mask {shp(mask.shape)} does not "
                                       f"broadcast to the scores {shp(scores)}") from None
    b = qs[0] if qs[0] != DYN else (ks[0] if ks[0] != DYN else vs[0])
    return TensorType([b, qs[1], d], q.dtype)


def _heads(x, h):
    b, s, d = x.shape
    return x.reshape(b, s, h, d // h).transpose(0, 2, 1, 3)


def _mask_fits(mask, scores, dtype) -> bool:
    if mask.dtype != dtype or mask.ndim > 4:
        return False
    try:
        return np.broadcast_shapes(scores, mask.shape) == scores
    except ValueError:
        return False


def attention_ref(q, k, v, mask=None, num_heads=1, scale=1.0):
    """The reference: the unfused chain's NumPy steps (see the module text)."""
    if not (q.ndim == k.ndim == v.ndim == 3) or q.dtype != k.dtype or q.dtype != v.dtype or \
            q.shape[2] % num_heads or k.shape[2] != q.shape[2] or v.shape[2] != q.shape[2] or \
            k.shape[1] != v.shape[1] or (mask is not None and not _mask_fits(
                mask, (q.shape[0], num_heads, q.shape[1], k.shape[1]), q.dtype)):
        ts = [None if a is None else TensorType(list(a.shape), _dt.from_numpy(a.dtype))
              for a in (q, k, v, mask)]
        _fa_infer(*ts, num_heads=num_heads, scale=scale)
        raise InvalidArgumentError(f"fused_attention: unsupported inputs {[str(t) for t in ts]}")
    d = q.dtype
    qh, kh, vh = (_heads(up(a), num_heads) for a in (q, k, v))
    s = np.matmul(qh, kh.transpose(0, 1, 3, 2))
    if scale != 1.0:
        s = s * scale  # a Python float: NumPy keeps s's dtype (the chain's constant)
    if mask is not None:
        s = s + up(mask)
    p = softmax_np(s, 3)
    o = np.matmul(p, vh).transpose(0, 2, 1, 3)
    return down(o.reshape(q.shape[0], q.shape[1], q.shape[2]), d)


defop("fused_attention", ("q", "k", "v", "mask?"), {"num_heads": 1, "scale": 1.0},
      infer=_fa_infer, reference=attention_ref, canon=_fa_canon, promote=None,
      differentiable=False, family="attention", api=False, method=False,
      doc="softmax(q_h @ k_h^T * scale + mask) @ v_h over num_heads heads; see "
          "fw.core.ops.attention.")
