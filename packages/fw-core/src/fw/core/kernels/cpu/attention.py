"""cpu kernel of ``fused_attention`` (``fw.core.ops.attention``): two oneDNN batched
products over the heads and an in-place oneDNN softmax, with no transposed copy.

The unfused chain a predictor ran per attention layer was nine kernel calls (three
reshape + transpose pairs, the scores product, softmax into a new buffer, the context
product, its transpose and a reshape that copies the transposed context back to
``[B, S, D]``). Here the heads are strided views of q, k and v (the products read
them in place, as ONNX Runtime's and oneDNN's own attention examples do), the
softmax overwrites the scores, and the context product writes each head straight
into its columns of the ``[B, S, D]`` result through a strided ``out`` view, so the
only buffers are the scores and the result. The float32 results equal the chain's
up to the order oneDNN sums in (the same primitives as eager's matmul and softmax).

float32 only; other dtypes, a mask that does not broadcast in place onto the
scores, or a native failure run the reference.
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.kernels.cpu._common import _F32, C, attach

__all__ = ["make_attention"]

_ndarray = np.ndarray


def make_attention(reference):
    """The cpu kernel of ``fused_attention`` given its reference."""
    matmul = _native.matmul
    softmax = C.softmax_forward if C is not None else None
    empty = np.empty

    def fused_attention_cpu(q, k, v, mask=None, num_heads=1, scale=1.0):
        if q.__class__ is not _ndarray or k.__class__ is not _ndarray or \
                v.__class__ is not _ndarray or q.dtype is not _F32 or k.dtype is not _F32 or \
                v.dtype is not _F32 or q.ndim != 3 or k.ndim != 3 or v.ndim != 3:
            return reference(q, k, v, mask, num_heads=num_heads, scale=scale)
        b, s, d = q.shape
        t = k.shape[1]
        h = num_heads
        if d % h or k.shape != (b, t, d) or v.shape != (b, t, d) or not (b and s and t and d):
            return reference(q, k, v, mask, num_heads=num_heads, scale=scale)
        dh = d // h
        if mask is not None and (mask.__class__ is not _ndarray or mask.dtype is not _F32 or
                                 mask.ndim > 4 or np.broadcast_shapes(
                                     (b, h, s, t), mask.shape) != (b, h, s, t)):
            return reference(q, k, v, mask, num_heads=num_heads, scale=scale)
        # head views (no copy when the feature axis is unit-stride, e.g. split's parts)
        qh = q.reshape(b, s, h, dh).transpose(0, 2, 1, 3)
        kh = k.reshape(b, t, h, dh).transpose(0, 2, 1, 3)
        vh = v.reshape(b, t, h, dh).transpose(0, 2, 1, 3)
        scores = matmul(qh, kh, False, True)  # [b, h, s, t], a fresh C-contiguous array
        if scale != 1.0:
            scores *= _F32.type(scale)
        if mask is not None:
            scores += mask
        softmax(scores, scores, 3, False)  # in place: oneDNN's softmax allows src == dst
        out = empty((b, s, d), _F32)
        matmul(scores, vh, out=out.reshape(b, s, h, dh).transpose(0, 2, 1, 3))
        return out

    fused_attention_cpu.__name__ = fused_attention_cpu.__qualname__ = "fused_attention_cpu"
    return fused_attention_cpu


attach({"fused_attention": make_attention}, when=_native.available, guard=True)
