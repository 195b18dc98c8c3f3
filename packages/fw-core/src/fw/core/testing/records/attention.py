"""Records for ``fused_attention`` (fw.core.ops.attention): packed and separate
q/k/v, query and key lengths that differ, one to four heads, a scale, and additive
masks of the key-padding form ``[B, 1, 1, T]`` or full ``[B, H, S, T]``.

The ``oracle`` loops over batch and heads in float64 (not the reference's batched
NumPy calls), so tests/test_record_oracles.py checks the head split and the order
of scale, mask and softmax independently."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError
from fw.core.testing import FLOATS, Sample, arrays, record

F32 = np.float32


def attention_oracle(q, k, v, mask=None, num_heads=1, scale=1.0):
    b, s, d = q.shape
    dh = d // num_heads
    out = np.zeros((b, s, d))
    m = None if mask is None else np.broadcast_to(mask.astype(np.float64),
                                                  (b, num_heads, s, k.shape[1]))
    for i in range(b):
        for h in range(num_heads):
            cols = slice(h * dh, (h + 1) * dh)
            sc = q[i, :, cols].astype(np.float64) @ k[i, :, cols].astype(np.float64).T * scale
            if m is not None:
                sc = sc + m[i, h]
            e = np.exp(sc - sc.max(-1, keepdims=True))
            out[i, :, cols] = (e / e.sum(-1, keepdims=True)) @ v[i, :, cols].astype(np.float64)
    return out.astype(q.dtype)


def _fused_attention(draw, dtype):
    b, s, t = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    heads, dh = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    d = heads * dh
    q = arrays(draw, dtype, (b, s, d))
    k, v = arrays(draw, dtype, (b, t, d)), arrays(draw, dtype, (b, t, d))
    mask = None
    kind = draw(st.sampled_from([None, "key", "full"]))
    if kind == "key":
        mask = arrays(draw, dtype, (b, 1, 1, t), -4.0, 0.0)
    elif kind == "full":
        mask = arrays(draw, dtype, (b, heads, s, t), -4.0, 0.0)
    return Sample([q, k, v, mask], {"num_heads": heads,
                                    "scale": draw(st.sampled_from([1.0, 0.125, 0.4]))})


Q = np.ones((1, 4, 6), F32)
record("fused_attention", _fused_attention, dtypes=FLOATS, grad_order=0,
       oracle=attention_oracle,
       errors=[([Q, Q, Q, None], {"num_heads": 4}, InvalidArgumentError,
                r"6 features do not split into num_heads=4"),
               ([Q, np.ones((1, 4, 8), F32), Q, None], {"num_heads": 2}, InvalidArgumentError,
                r"do not match"),
               ([Q, Q, Q, np.ones((1, 1, 3, 4), F32)], {"num_heads": 2}, InvalidArgumentError,
                r"does not broadcast"),
               ([Q, Q, Q, None], {"num_heads": 0}, InvalidArgumentError,
                r"num_heads must be a positive int")])
