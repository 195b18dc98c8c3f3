"""``fuse_attention`` and the ``fused_attention`` op: the reference against a
per-head float64 oracle, the cpu kernel against the reference, and the pass on
traced programs (packed QKV split, separate q/k/v, with and without a scale and an
additive mask) keeping the outputs. The zoo BERT predictor is checked against eager
in tests/test_predictor_kernels.py and tests/test_predictor_attention.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.passes import PIPELINES, PassManager
from fw.core.ops import OPS, call
from fw.core.testing import as_tuple

T = TensorType
F32 = np.float32
OP = OPS["fused_attention"]


def _oracle(q, k, v, mask, heads, scale):
    """Per batch, per head, in float64: softmax(q_h k_h^T * scale + mask) v_h."""
    b, s, d = q.shape
    dh = d // heads
    out = np.zeros((b, s, d))
    for i in range(b):
        for h in range(heads):
            cols = slice(h * dh, (h + 1) * dh)
            sc = q[i, :, cols].astype(np.float64) @ k[i, :, cols].astype(np.float64).T * scale
            if mask is not None:
                sc = sc + np.broadcast_to(mask, (b, heads, s, k.shape[1]))[i, h]
            e = np.exp(sc - sc.max(-1, keepdims=True))
            out[i, :, cols] = (e / e.sum(-1, keepdims=True)) @ v[i, :, cols]
    return out


def _draw(rng, b, s, t, heads, dh, mask_kind):
    d = heads * dh
    qkv = rng.standard_normal((b, s, 3 * d)).astype(F32)
    q = qkv[..., :d]  # strided views, as merge_parallel_matmul's split hands them over
    k = rng.standard_normal((b, t, d)).astype(F32)
    v = rng.standard_normal((b, t, d)).astype(F32)
    if s == t:
        k, v = qkv[..., d:2 * d], qkv[..., 2 * d:]
    mask = None
    if mask_kind == "key":
        mask = np.where(rng.random((b, 1, 1, t)) < 0.3, -1e4, 0).astype(F32)
        mask[..., 0] = 0  # every row keeps a key
    elif mask_kind == "full":
        mask = rng.standard_normal((b, heads, s, t)).astype(F32)
    return q, k, v, mask


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 3), s=st.integers(1, 9), t=st.integers(1, 9), heads=st.integers(1, 4),
       dh=st.integers(1, 8), scale=st.sampled_from([1.0, 0.125, 0.37]),
       mask_kind=st.sampled_from([None, "key", "full"]), seed=st.integers(0, 2**16))
def test_reference_and_cpu_kernel_match_the_oracle(b, s, t, heads, dh, scale, mask_kind, seed):
    q, k, v, mask = _draw(np.random.default_rng(seed), b, s, t, heads, dh, mask_kind)
    want = _oracle(q, k, v, mask, heads, scale)
    ref = OP.reference(q, k, v, mask, num_heads=heads, scale=scale)
    got = OP.kernels["cpu"](q, k, v, mask, num_heads=heads, scale=scale)
    assert ref.shape == got.shape == q.shape and got.dtype == F32
    np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_cpu_kernel_is_native_and_never_copies_the_heads():
    """The kernel (not its reference fallback) answers float32, and equals the
    reference; float64 goes to the reference (bit for bit)."""
    from fw.core import _native
    if not _native.available:
        pytest.skip("native extension not built")
    from fw.core.kernels.cpu.attention import make_attention

    calls = []

    def reference(*a, **kw):
        calls.append(1)
        return OP.reference(*a, **kw)

    kern = make_attention(reference)
    q, k, v, mask = _draw(np.random.default_rng(1), 2, 16, 16, 4, 8, "key")
    got = kern(q, k, v, mask, num_heads=4, scale=0.125)
    assert not calls
    np.testing.assert_allclose(got, OP.reference(q, k, v, mask, num_heads=4, scale=0.125),
                               rtol=1e-5, atol=1e-6)
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    np.testing.assert_array_equal(kern(q64, k64, v64, None, num_heads=4, scale=1.0),
                                  OP.reference(q64, k64, v64, None, num_heads=4))
    assert calls


def test_bad_operands_name_the_op_and_shapes():
    q = np.zeros((1, 4, 6), F32)
    with pytest.raises(InvalidArgumentError, match=r"fused_attention: 6 features.*num_heads=4"):
        OP.reference(q, q, q, None, num_heads=4)
    with pytest.raises(InvalidArgumentError, match=r"fused_attention: q .* do not match"):
        OP.reference(q, np.zeros((1, 4, 8), F32), q, None, num_heads=2)
    with pytest.raises(InvalidArgumentError, match=r"fused_attention: mask .* does not broadcast"):
        OP.reference(q, q, q, np.zeros((1, 1, 3, 4), F32), num_heads=2)
    with pytest.raises(InvalidArgumentError, match=r"num_heads must be a positive int"):
        OP.canon({"num_heads": 0, "scale": 1.0})


# ---------------------------------------------------------------- the pass
def _attention(x_q, x_k, x_v, heads, scale=None, mask=None):
    def split_heads(x):
        b, s, d = x.shape
        return call("transpose", call("reshape", x, shape=[0, 0, heads, d // heads]),
                    perm=[0, 2, 1, 3])

    s = fw.matmul(split_heads(x_q), split_heads(x_k), transpose_y=True)
    if scale is not None:
        s = s * scale
    if mask is not None:
        s = s + mask
    p = call("softmax", s, axis=-1)
    o = call("transpose", fw.matmul(p, split_heads(x_v)), perm=[0, 2, 1, 3])
    return call("reshape", o, shape=[0, 0, x_q.shape[2]])


def _outputs(p, inputs):
    return [o.numpy() for o in as_tuple(run(p, *inputs))]


def _fused(p):
    q = p.clone()
    changed = PassManager(["fuse_attention"]).run(q)
    verify(q)
    return q, changed


def _names(p):
    return [op.name for op in p.walk()]


@settings(max_examples=25, deadline=None)
@given(s=st.integers(1, 7), heads=st.integers(1, 3), dh=st.integers(1, 5),
       packed=st.booleans(), scale=st.sampled_from([None, 0.125, 0.3]),
       mask_kind=st.sampled_from([None, "key", "full"]), seed=st.integers(0, 2**16))
def test_pass_keeps_outputs(s, heads, dh, packed, scale, mask_kind, seed):
    rng = np.random.default_rng(seed)
    d = heads * dh
    types = [T([-1, s, 3 * d if packed else d], "float32")]
    names = ["x"]
    if not packed:
        types += [T([-1, s, d], "float32")] * 2
        names += ["k", "v"]
    mshape = {"key": [-1, 1, 1, s], "full": [-1, heads, s, s]}.get(mask_kind)
    if mshape:
        types.append(T(mshape, "float32"))
        names.append("mask")

    def f(*args):
        mask = args[-1] if mshape else None
        if packed:
            q, k, v = fw.split(args[0], 3, axis=-1)
        else:
            q, k, v = args[:3]
        return _attention(q, k, v, heads, scale, mask)

    p = trace(f, types, names)
    q, changed = _fused(p)
    assert changed
    ops = _names(q)
    assert ops.count("fused_attention") == 1
    assert "softmax" not in ops and "matmul" not in ops and "transpose" not in ops
    b = 2
    inputs = [rng.standard_normal((b, *t.shape[1:])).astype(F32) for t in types]
    if mshape:
        inputs[-1] = np.where(rng.random((b, *mshape[1:])) < 0.3, -1e4, 0).astype(F32)
    for a, c in zip(_outputs(p, inputs), _outputs(q, inputs), strict=True):
        assert a.shape == c.shape and a.dtype == c.dtype
        np.testing.assert_allclose(c, a, rtol=1e-5, atol=1e-5)


def test_pass_leaves_other_chains_alone():
    """A softmax over another axis, a scores product read twice, and a product
    without the transposed key are not attention: nothing changes."""
    types = [T([-1, 4, 6], "float32")] * 3

    def other_axis(q, k, v):
        s = fw.matmul(call("transpose", call("reshape", q, shape=[0, 0, 2, 3]), perm=[0, 2, 1, 3]),
                      call("transpose", call("reshape", k, shape=[0, 0, 2, 3]), perm=[0, 2, 1, 3]),
                      transpose_y=True)
        p = call("softmax", s, axis=2)
        o = fw.matmul(p, call("transpose", call("reshape", v, shape=[0, 0, 2, 3]),
                              perm=[0, 2, 1, 3]))
        return call("reshape", call("transpose", o, perm=[0, 2, 1, 3]), shape=[0, 0, 6])

    def scores_read_twice(q, k, v):
        s = fw.matmul(call("transpose", call("reshape", q, shape=[0, 0, 2, 3]), perm=[0, 2, 1, 3]),
                      call("transpose", call("reshape", k, shape=[0, 0, 2, 3]), perm=[0, 2, 1, 3]),
                      transpose_y=True)
        p = call("softmax", s, axis=-1)
        o = fw.matmul(p, call("transpose", call("reshape", v, shape=[0, 0, 2, 3]),
                              perm=[0, 2, 1, 3]))
        return call("reshape", call("transpose", o, perm=[0, 2, 1, 3]), shape=[0, 0, 6]), s

    for f in (other_axis, scores_read_twice):
        p = trace(f, types, ["q", "k", "v"])
        q, changed = _fused(p)
        assert not changed and "fused_attention" not in _names(q), f.__name__


def test_pass_is_in_the_inference_pipeline_after_the_qkv_merge():
    pipe = PIPELINES["inference"]
    assert pipe.index("merge_parallel_matmul") < pipe.index("fuse_attention") < \
        pipe.index("fuse_elementwise")
