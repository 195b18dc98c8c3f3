"""``fuse_attention`` (inference): the scaled dot-product attention chain of a
transformer layer becomes one ``fused_attention`` op (``fw.core.ops.attention``).

Matched (every intermediate value has this one reader)::

    H(x) = transpose(reshape(x, [B, S, heads, Dh]), perm=[0, 2, 1, 3])     # x: [B, S, D]
    s = matmul(H(q), H(k), transpose_y=True)
    s = multiply(s, c)           # optional: c a constant holding one float (the scale)
    s = add(s, mask)             # optional: mask broadcasting onto s (s's type kept)
    p = softmax(s, axis=-1)
    o = reshape(transpose(matmul(p, H(v)), perm=[0, 2, 1, 3]), [B, S, D])
                             ->  o = fused_attention(q, k, v, mask?, num_heads=heads, scale=c)

The shapes are read from the types: ``heads * Dh == D`` static, the reshapes keep
B and S. q, k and v are any ``[B, S, D]`` values: after ``merge_parallel_matmul``
they are the three parts of one packed projection's ``split`` (views of one
array, which the kernel reads in place).

Why: per encoder layer the chain is eleven kernel calls in the generated code and a
copy of the transposed context (its last reshape); the fused op is one call whose
kernel makes two oneDNN products over strided head views and an in-place softmax
(``fw.core.kernels.cpu.attention``), as ONNX Runtime's ``Attention`` fusion and
oneDNN's SDPA graph pattern do. The NumPy reference of the op makes the chain's
NumPy steps in the chain's order, so the rewritten program computes the same
numbers on the references.
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import uniform_value
from fw.core.ir.passes.epilogue import single_user
from fw.core.ir.passes.rewrite import apply_patterns
from fw.core.ir.types import DYN

__all__ = ["FuseAttention"]

_HEAD_PERM = (0, 2, 1, 3)
_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def _perm_is_heads(op) -> bool:
    perm = op.attrs.get("perm")
    return perm is not None and tuple(perm) == _HEAD_PERM


def _heads_source(rw, v, trail):
    """``(x, heads)`` when `v` is ``transpose(reshape(x))`` splitting x's features into
    heads (each step single-use), else None; the two ops are appended to `trail`."""
    tr = rw.producer(v)
    if tr is None or tr.name != "transpose" or not _perm_is_heads(tr) or \
            single_user(rw, v) is None:
        return None
    r = tr.operands[0]
    rs = rw.producer(r)
    if rs is None or rs.name != "reshape" or single_user(rw, r) is None or \
            len(rs.operands) != 1:
        return None
    x = rs.operands[0]
    xs, hs = x.type.shape, r.type.shape
    if len(xs) != 3 or len(hs) != 4 or DYN in xs[1:] or DYN in hs[1:] or \
            hs[1] != xs[1] or hs[2] * hs[3] != xs[2]:
        return None
    trail += [tr, rs]
    return x, hs[2]


def _scale_of(rw, op, s):
    """The float a ``multiply(s, c)`` scales `s` by, else None."""
    for a, c in ((op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])):
        if a is s and c is not None and c is not s and c.type.dtype is s.type.dtype and \
                c.type.numel() == 1 and len(c.type.shape) <= len(s.type.shape):
            u = uniform_value(c, rw.program)
            if isinstance(u, float):
                return u
    return None


def _softmax(rw, sm):
    if sm.attrs.get("axis") not in (-1, 3):
        return False
    s = sm.operands[0]
    st = s.type
    if len(st.shape) != 4 or st.dtype not in _FLOATS or single_user(rw, s) is None:
        return False
    trail = [sm]
    mask, scale = None, 1.0
    op = rw.producer(s)
    if op is not None and op.name == "add" and op.results[0].type == st:
        a, b = op.operands
        for cand, other in ((a, b), (b, a)):
            p = rw.producer(cand)
            if p is not None and p.name in ("matmul", "multiply") and other is not cand and \
                    other.type.dtype is st.dtype and single_user(rw, cand) is not None:
                mask, s = other, cand
                trail.append(op)
                op = p
                break
        else:
            return False
    if op is not None and op.name == "multiply" and op.results[0].type == s.type:
        inner = next((v for v in op.operands if rw.producer(v) is not None and
                      rw.producer(v).name == "matmul"), None)
        sc = None if inner is None or single_user(rw, inner) is None else \
            _scale_of(rw, op, inner)
        if sc is None:
            return False
        scale = sc
        trail.append(op)
        op = rw.producer(inner)
    if op is None or op.name != "matmul" or op.attrs.get("transpose_x") or \
            not op.attrs.get("transpose_y"):
        return False
    trail.append(op)
    qs = _heads_source(rw, op.operands[0], trail)
    ks = _heads_source(rw, op.operands[1], trail)
    if qs is None or ks is None or qs[1] != ks[1]:
        return False
    # the context product, its head transpose and the merging reshape
    p = sm.results[0]
    ctx = single_user(rw, p)
    if ctx is None or ctx.name != "matmul" or ctx.operands[0] is not p or \
            ctx.attrs.get("transpose_x") or ctx.attrs.get("transpose_y"):
        return False
    vs = _heads_source(rw, ctx.operands[1], trail)
    if vs is None or vs[1] != qs[1]:
        return False
    tr = single_user(rw, ctx.results[0])
    if tr is None or tr.name != "transpose" or not _perm_is_heads(tr):
        return False
    rs = single_user(rw, tr.results[0])
    q, k, v = qs[0], ks[0], vs[0]
    if rs is None or rs.name != "reshape" or rs.results[0].type != q.type or \
            k.type.shape[1:] != v.type.shape[1:] or k.type.shape[2] != q.type.shape[2] or \
            not (q.type.dtype is k.type.dtype is v.type.dtype is st.dtype):
        return False
    fused = rw.create("fused_attention", [q, k, v, mask],
                      {"num_heads": qs[1], "scale": scale}, before=rs)
    if fused.results[0].type != rs.results[0].type:
        return False  # pragma: no cover - the type checks above imply equality
    rw.replace_op(rs, [fused.results[0]])
    for dead in [tr, ctx] + trail:  # users before producers
        if dead.parent is not None and not any(rw.has_uses(r) for r in dead.results):
            rw.erase(dead)
    return True


@register_pass
class FuseAttention(Pass):
    name = "fuse_attention"

    def run(self, program) -> bool:
        return apply_patterns(program, {"softmax": _softmax})
