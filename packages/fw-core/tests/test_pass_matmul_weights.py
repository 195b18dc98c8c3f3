"""The inference passes that rewrite constant matmul weights: ``fold_matmul_scale``
(a scalar multiply after the product goes into W and b), ``fold_linear_chain`` (two
products with nothing nonlinear between them become one) and ``merge_parallel_matmul``
(products of one input with several weights become one product and a split), and
``fold_flatten_transpose`` (the NHWC -> NCHW transpose before a flatten into a
classifier becomes a permutation of the classifier's weight rows).
Each must keep the program's outputs; the BERT-style zoo model's predictor is
checked against eager in tests/test_predictor_kernels.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.passes import PassManager, get_pass
from fw.core.ops import call
from fw.core.testing import as_tuple

T = TensorType
F32 = np.float32


def _const(rng, shape, name, scale=0.5):
    t = fw.to_tensor((rng.standard_normal(shape) * scale).astype(F32))
    t.name = name
    t.persistable = True  # not trainable: a block-0 constant, as in a predictor
    return t


def _param(rng, shape, name):
    t = _const(rng, shape, name)
    t.trainable = True
    return t


def _outputs(p, inputs):
    return [o.numpy() for o in as_tuple(run(p, *inputs))]


def _check(p, q, inputs, exact):
    for a, b in zip(_outputs(p, inputs), _outputs(q, inputs), strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def _after(p, passes):
    q = p.clone()
    changed = PassManager(passes).run(q)
    verify(q)
    return q, changed


def _ops(p):
    return [op.name for op in p.walk()]


def _attention(rng, d=16, heads=2, make=_const, scale=None):
    """q, k, v projections of one input, the heads split, q scaled: what
    nn.MultiHeadAttention traces to."""
    ws = {n: (make(rng, (d, d), f"{n}.w"), make(rng, (d,), f"{n}.b")) for n in "qkv"}
    hd = d // heads
    s = hd ** -0.5 if scale is None else scale

    def heads_of(t):
        return t.reshape([0, 0, heads, hd]).transpose([0, 2, 1, 3])

    def f(x):
        q, k, v = (heads_of(call("linear", x, *ws[n])) for n in "qkv")
        w = call("softmax", fw.matmul(q * s, k, transpose_y=True))
        return fw.matmul(w, v).transpose([0, 2, 1, 3]).reshape([0, 0, d])

    return trace(f, [T([-1, 5, d], "float32")], ["x"])


PIPE = ["fuse_matmul_bias_act", "fold_matmul_scale", "merge_parallel_matmul"]


@pytest.mark.parametrize("native", [False, True], ids=["reference", "native"])
def test_attention_projections_merge_and_the_scale_folds(native, monkeypatch):
    from fw.core.ops import OPS

    if not native:
        for n in ("fused_matmul", "matmul", "softmax"):
            if "cpu" in OPS[n].kernels:
                monkeypatch.delitem(OPS[n].kernels, "cpu")
    rng = np.random.default_rng(0)
    p = _attention(rng)
    q, changed = _after(p, PIPE)
    assert changed
    names = _ops(q)
    assert names.count("fused_matmul") == 1 and names.count("split") == 1
    assert "multiply" not in names
    (mm,) = [op for op in q.walk() if op.name == "fused_matmul"]
    assert mm.results[0].type.shape[-1] == 48
    x = rng.standard_normal((3, 5, 16)).astype(F32)
    _check(p, q, [x], exact=False)
    # the scale alone (1/sqrt(8) is not a power of two: rounding only)
    q1, _ = _after(p, PIPE[:2])
    assert "multiply" not in _ops(q1)
    _check(p, q1, [x], exact=False)


def test_power_of_two_scale_folds_bit_for_bit(monkeypatch):
    from fw.core.ops import OPS

    monkeypatch.delitem(OPS["fused_matmul"].kernels, "cpu", raising=False)
    rng = np.random.default_rng(1)
    p = _attention(rng, d=16, heads=4)  # head_dim 4: scale 0.5
    q, _ = _after(p, PIPE[:2])
    assert "multiply" not in _ops(q)
    _check(p, q, [rng.standard_normal((2, 5, 16)).astype(F32)], exact=True)
    # the original constants are left alone (new ones hold the scaled weights)
    labels = [a.label for a in q.params()]
    assert "q.w.scaled" in labels and "q.b.scaled" in labels
    np.testing.assert_array_equal(q.captured["q.w.scaled"].numpy(),
                                  p.captured["q.w"].numpy() * F32(0.5))


def test_merged_weight_and_bias_are_new_constants_named_for_the_first():
    rng = np.random.default_rng(4)
    wa, wb = _const(rng, (4, 3), "a.w"), _const(rng, (4, 5), "b.w")
    ba, bb = _const(rng, (3,), "a.b"), _const(rng, (5,), "b.b")

    def f(x):
        return call("linear", x, wa, ba), call("linear", x, wb, bb)

    p = trace(f, [T([-1, 4], "float32")], ["x"])
    q, changed = _after(p, ["fuse_matmul_bias_act", "merge_parallel_matmul"])
    assert changed
    (mm,) = [op for op in q.walk() if op.name == "fused_matmul"]
    assert mm.operands[1].label == "a.w.merged" and mm.operands[2].label == "a.b.merged"
    np.testing.assert_array_equal(q.captured["a.w.merged"].numpy(),
                                  np.concatenate([wa.numpy(), wb.numpy()], axis=1))
    np.testing.assert_array_equal(q.captured["a.b.merged"].numpy(),
                                  np.concatenate([ba.numpy(), bb.numpy()]))
    x = rng.standard_normal((2, 4)).astype(F32)
    got = _outputs(q, [x])
    for g, w, b in zip(got, (wa, wb), (ba, bb), strict=True):
        np.testing.assert_allclose(g, x @ w.numpy() + b.numpy(), rtol=2e-5, atol=2e-5)


def test_products_with_a_parameter_bias_do_not_merge():
    """Constant weights but a trainable bias: the biases cannot be joined into a new
    constant, so nothing merges (and a single product never does)."""
    rng = np.random.default_rng(5)
    wa, wb = _const(rng, (4, 3), "a.w"), _const(rng, (4, 5), "b.w")
    ba, bb = _param(rng, (3,), "a.b"), _param(rng, (5,), "b.b")

    def f(x):
        return call("linear", x, wa, ba), call("linear", x, wb, bb)

    p = trace(f, [T([-1, 4], "float32")], ["x"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["merge_parallel_matmul"])
    assert not changed and _ops(q).count("fused_matmul") == 2 and "split" not in _ops(q)
    x = rng.standard_normal((2, 4)).astype(F32)
    for g, w, b in zip(_outputs(q, [x]), (wa, wb), (ba, bb), strict=True):
        np.testing.assert_allclose(g, x @ w.numpy() + b.numpy(), rtol=2e-5, atol=2e-5)
    single = trace(lambda x: call("linear", x, wa, None), [T([-1, 4], "float32")], ["x"])
    fused, _ = _after(single, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["merge_parallel_matmul"])
    assert not changed and str(q) == str(fused)


def test_parameters_are_not_rewritten():
    """Trainable weights may change between runs: neither pass touches them."""
    rng = np.random.default_rng(2)
    p = _attention(rng, make=_param)
    q, _ = _after(p, PIPE)
    names = _ops(q)
    assert names.count("fused_matmul") == 3 and "split" not in names and "multiply" in names


def test_what_does_not_merge_or_fold():
    rng = np.random.default_rng(3)
    w1, w2, w3 = (_const(rng, (4, 3), f"w{i}") for i in range(3))
    w4 = _const(rng, (4, 5), "w4")
    w5 = _const(rng, (3, 2), "w5")
    b = _const(rng, (3,), "b")
    c = fw.to_tensor(np.array([1.0, 2.0, 3.0], F32))
    c.name, c.persistable = "c", True

    def f(x, r):
        relu = call("relu", fw.matmul(x, w1) + b)       # another activation: its own group
        plain = fw.matmul(x, w2) + b
        res = fw.matmul(x, w3) + r                      # a residual: never merged
        y = fw.matmul(r, w5)                            # another input
        neg = call("relu", fw.matmul(x, w4)) * -2.0     # relu and a negative scale
        vec = (fw.matmul(x, w1) + b) * c                # not a scalar
        shared = fw.matmul(x, w2) + b
        twice = shared * 2.0                            # the product has two readers
        return relu, plain, res, y, neg, vec, shared, twice

    p = trace(f, [T([-1, 4], "float32"), T([-1, 3], "float32")], ["x", "r"])
    q, _ = _after(p, ["fuse_matmul_bias_act", "fold_matmul_scale"])
    assert _ops(q).count("multiply") == 3  # nothing folded
    q2, _ = _after(p, PIPE)
    # the three products with bias and no activation merge; relu with and without a
    # bias are two keys of one each; the residual one and the other input stay
    splits = [op for op in q2.walk() if op.name == "split"]
    assert len(splits) == 1 and len(splits[0].results) == 3
    assert _ops(q2).count("fused_matmul") == 4 and _ops(q2).count("multiply") == 3
    inputs = [rng.standard_normal((2, 4)).astype(F32), rng.standard_normal((2, 3)).astype(F32)]
    _check(p, q2, inputs, exact=False)


def test_transposed_weights_and_no_bias_merge():
    rng = np.random.default_rng(4)
    ws = [_const(rng, (n, 6), f"w{i}") for i, n in enumerate((3, 5))]

    def f(x):
        return tuple(call("gelu", fw.matmul(x, w, transpose_y=True)) for w in ws)

    p = trace(f, [T([-1, 6], "float32")], ["x"])
    q, _ = _after(p, PIPE)
    (mm,) = [op for op in q.walk() if op.name == "fused_matmul"]
    assert mm.attrs["transpose_y"] and mm.operands[2] is None
    assert mm.results[0].type.shape == (-1, 8)
    _check(p, q, [rng.standard_normal((4, 6)).astype(F32)], exact=False)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 4), k=st.integers(1, 9), ty=st.booleans(), bias=st.booleans(),
       act=st.sampled_from(["none", "relu", "gelu", "tanh"]), seed=st.integers(0, 2**16),
       scale=st.sampled_from([None, 0.125, 0.3, -2.0]))
def test_merge_and_fold_keep_outputs(n, k, ty, bias, act, seed, scale):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, n)
    ws = [_const(rng, (int(m), k) if ty else (k, int(m)), f"w{i}") for i, m in enumerate(sizes)]
    bs = [_const(rng, (int(m),), f"b{i}") for i, m in enumerate(sizes)]

    def f(x):
        outs = []
        for w, b in zip(ws, bs):
            y = fw.matmul(x, w, transpose_y=ty)
            if bias:
                y = y + b
            if act != "none":
                y = call(act, y)
            outs.append(y if scale is None else y.reshape([0, -1]) * scale)
        return tuple(outs)

    p = trace(f, [T([-1, k], "float32")], ["x"])
    q, _ = _after(p, PIPE)
    names = _ops(q)
    if bias or act != "none":  # a bare matmul is not a fused_matmul: nothing to merge
        assert names.count("fused_matmul") == 1 and names.count("split") == 1
    _check(p, q, [rng.standard_normal((3, k)).astype(F32)], exact=False)


def test_passes_are_registered_in_the_inference_pipeline():
    from fw.core.ir.passes import PIPELINES

    pipe = PIPELINES["inference"]
    assert pipe.index("fuse_matmul_bias_act") < pipe.index("fold_matmul_scale") < \
        pipe.index("fold_linear_chain") < pipe.index("merge_parallel_matmul") < \
        pipe.index("layout_nhwc")
    assert get_pass("fold_matmul_scale").name == "fold_matmul_scale"


# ================================================================ fold_linear_chain
def test_linear_chain_folds_to_one_product():
    rng = np.random.default_rng(5)
    fc = [(_const(rng, (k, n), f"fc{i}.w"), _const(rng, (n,), f"fc{i}.b"))
          for i, (k, n) in enumerate([(12, 8), (8, 6), (6, 3)])]
    r = _const(rng, (3,), "r")

    def f(x, res):
        h = x
        for w, b in fc:
            h = call("linear", h, w, b)
        return call("relu", h) + res  # the last product keeps its epilogue

    p = trace(f, [T([-1, 12], "float32"), T([-1, 3], "float32")], ["x", "res"])
    q, changed = _after(p, ["fuse_matmul_bias_act", "fold_linear_chain"])
    assert changed
    (mm,) = [op for op in q.walk() if op.name == "fused_matmul"]
    assert mm.operands[0] is q.block.args[0] and mm.attrs["activation"] == "relu"
    assert mm.operands[1].type.shape == (12, 3) and mm.operands[3] is q.block.args[1]
    x = rng.standard_normal((4, 12)).astype(F32)
    _check(p, q, [x, rng.standard_normal((4, 3)).astype(F32)], exact=False)
    del r


def test_linear_chain_stops_at_what_is_not_linear_or_costs_more():
    rng = np.random.default_rng(6)
    w1, w2 = _const(rng, (8, 6), "w1"), _const(rng, (6, 4), "w2")
    up1, up2 = _const(rng, (4, 2), "up1"), _const(rng, (2, 16), "up2")  # 4->2->16 grows
    p1 = _param(rng, (6, 4), "p1")

    def f(x, y):
        act = call("linear", call("relu", call("linear", x, w1)), w2)   # relu between
        h = call("linear", x, w1)
        shared = call("linear", h, w2), h                                 # h read twice
        param = call("linear", call("linear", x, w1), p1)                 # a parameter
        grow = call("linear", call("linear", y, up1), up2)                # costs more folded
        return act, *shared, param, grow

    p = trace(f, [T([-1, 8], "float32"), T([-1, 4], "float32")], ["x", "y"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["fold_linear_chain"])
    assert not changed and _ops(q).count("fused_matmul") == 8


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(1, 9), min_size=3, max_size=5), ty=st.booleans(),
       bias=st.lists(st.booleans(), min_size=4, max_size=4), seed=st.integers(0, 2**16))
def test_linear_chain_keeps_outputs(sizes, ty, bias, seed):
    rng = np.random.default_rng(seed)
    layers = []
    for i, (k, n) in enumerate(zip(sizes, sizes[1:])):
        w = _const(rng, (n, k) if ty else (k, n), f"w{i}")
        layers.append((w, _const(rng, (n,), f"b{i}") if bias[i] else None))

    def f(x):
        h = x
        for w, b in layers:
            h = call("linear", h, w.T if ty else w, b) if not ty else \
                fw.matmul(h, w, transpose_y=True) + (b if b is not None else 0.0)
        return h

    p = trace(f, [T([-1, sizes[0]], "float32")], ["x"])
    q, _ = _after(p, ["fuse_matmul_bias_act", "fold_linear_chain"])
    _check(p, q, [rng.standard_normal((3, sizes[0])).astype(F32)], exact=False)


# ================================================================ fold_flatten_transpose
def _nhwc_head(rng, make=_const, n_out=3):
    """features NHWC -> transpose to NCHW -> flatten -> linear: what layout_nhwc leaves
    before LeNet's classifier."""
    w = make(rng, (2 * 3 * 4, n_out), "fc.w")
    b = make(rng, (n_out,), "fc.b")

    def f(y):
        return call("linear", y.transpose([0, 3, 1, 2]).flatten(1), w, b)

    return trace(f, [T([-1, 3, 4, 2], "float32")], ["y"])


def test_flatten_transpose_folds_into_the_weight_rows():
    rng = np.random.default_rng(7)
    p = _nhwc_head(rng)
    q, changed = _after(p, ["fuse_matmul_bias_act", "fold_flatten_transpose"])
    assert changed
    names = _ops(q)
    assert "transpose" not in names and names.count("flatten") == 1
    (mm,) = [op for op in q.walk() if op.name == "fused_matmul"]
    assert mm.operands[1].label == "fc.w.permuted"
    _check(p, q, [rng.standard_normal((2, 3, 4, 2)).astype(F32)], exact=False)


def test_flatten_transpose_stays_when_it_cannot_fold():
    rng = np.random.default_rng(8)
    for p in (_nhwc_head(rng, make=_param),):  # a trainable weight
        fused, _ = _after(p, ["fuse_matmul_bias_act"])
        q, changed = _after(fused, ["fold_flatten_transpose"])
        assert not changed and "transpose" in _ops(q)
    w = _const(rng, (24, 3), "w")

    def two_readers(y):
        f = y.transpose([0, 3, 1, 2]).flatten(1)
        return call("linear", f, w), f  # the flattened features are an output too

    def batch_moves(y):
        return call("linear", y.transpose([1, 0, 2, 3]).flatten(1), _const(rng, (24, 3), "v"))

    for fn, shape in ((two_readers, [-1, 3, 4, 2]), (batch_moves, [3, 2, 4, 2])):
        p = trace(fn, [T(shape, "float32")], ["y"])
        fused, _ = _after(p, ["fuse_matmul_bias_act"])
        q, changed = _after(fused, ["fold_flatten_transpose"])
        assert not changed


@settings(max_examples=25, deadline=None)
@given(dims=st.lists(st.integers(1, 4), min_size=3, max_size=3), ty=st.booleans(),
       perm=st.permutations([1, 2, 3]), seed=st.integers(0, 2**16))
def test_flatten_transpose_fold_keeps_outputs(dims, ty, perm, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(dims))
    w = _const(rng, (5, n) if ty else (n, 5), "w")
    b = _const(rng, (5,), "b")

    def f(y):
        return call("relu", fw.matmul(y.transpose([0, *perm]).flatten(1), w, transpose_y=ty)
                    + b)

    p = trace(f, [T([-1, *dims], "float32")], ["y"])
    q, changed = _after(p, ["fuse_matmul_bias_act", "fold_flatten_transpose"])
    assert "transpose" not in _ops(q)
    _check(p, q, [rng.standard_normal((2, *dims)).astype(F32)], exact=False)


def _nhwc_numpy(y, perm, start, stop):
    """NumPy's transpose + flatten of the head above (Paddle's flatten semantics)."""
    t = y.transpose(perm)
    nd = t.ndim
    s, e = start % nd, stop % nd
    return t.reshape(t.shape[:s] + (-1,) + t.shape[e + 1:])


@pytest.mark.parametrize("start,stop", [(-3, -1), (1, 3), (-3, 3)])
def test_flatten_transpose_folds_whichever_end_the_axes_are_spelled_from(start, stop):
    """flatten(1 - ndim, ndim - 1) joins the same axes as flatten(1, -1)."""
    rng = np.random.default_rng(11)
    w = _const(rng, (24, 3), "fc.w")

    def f(y):
        return call("linear", y.transpose([0, 3, 1, 2]).flatten(start, stop), w)

    p = trace(f, [T([-1, 3, 4, 2], "float32")], ["y"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["fold_flatten_transpose"])
    assert changed and "transpose" not in _ops(q)
    y = rng.standard_normal((2, 3, 4, 2)).astype(F32)
    want = _nhwc_numpy(y, [0, 3, 1, 2], start, stop) @ w.numpy()
    (got,) = _outputs(q, [y])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_flatten_without_a_transpose_is_no_change():
    rng = np.random.default_rng(15)
    p = trace(lambda y: call("linear", y.flatten(1), _const(rng, (24, 3), "w")),
              [T([-1, 3, 4, 2], "float32")], ["y"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["fold_flatten_transpose"])
    assert not changed and str(q) == str(fused)


@pytest.mark.parametrize("start,stop,shape", [
    # y [-1, 3, 4, 1] -> [-1, 1, 3, 4] -> flatten(2) [-1, 1, 12]: only start_axis is wrong
    (2, -1, [-1, 3, 4, 1]),
    # y [-1, 1, 4, 1] -> [-1, 1, 1, 4] -> flatten(1, 2) [-1, 1, 4]: only stop_axis is wrong
    (1, 2, [-1, 1, 4, 1]),
])
def test_flatten_transpose_stays_when_the_flatten_joins_other_axes(start, stop, shape):
    """Unit dims make every other condition hold (the product's K is the features'
    count, the weight's rows): the flatten's axes alone must stop the fold."""
    rng = np.random.default_rng(12)
    k = int(np.prod(shape[1:]))
    w = _const(rng, (k, 3), "w")

    def f(y):
        return call("linear", y.transpose([0, 3, 1, 2]).flatten(start, stop), w)

    p = trace(f, [T(shape, "float32")], ["y"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    assert "fused_matmul" in _ops(fused)
    q, changed = _after(fused, ["fold_flatten_transpose"])
    assert not changed and "transpose" in _ops(q)
    y = rng.standard_normal((2, *shape[1:])).astype(F32)
    want = _nhwc_numpy(y, [0, 3, 1, 2], start, stop) @ w.numpy()
    (got,) = _outputs(q, [y])
    assert got.shape == want.shape == (2, 1, 3)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_flatten_transpose_stays_when_the_product_transposes_the_features():
    """fused_matmul(flatten(..), W, transpose_x=True) contracts over the batch, not the
    features: permuting W's rows would be wrong (a static batch of 24 = 2*3*4, so the
    shapes would allow it)."""
    rng = np.random.default_rng(13)
    w = _const(rng, (24, 3), "w")

    def f(y):
        return call("fused_matmul", y.transpose([0, 3, 1, 2]).flatten(1), w, None, None,
                    transpose_x=True)

    p = trace(f, [T([24, 3, 4, 2], "float32")], ["y"])
    q, changed = _after(p, ["fold_flatten_transpose"])
    assert not changed and "transpose" in _ops(q)
    y = rng.standard_normal((24, 3, 4, 2)).astype(F32)
    want = _nhwc_numpy(y, [0, 3, 1, 2], 1, -1).T @ w.numpy()
    (got,) = _outputs(q, [y])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_flatten_transpose_stays_when_the_features_have_dynamic_dims():
    """Two dynamic feature dims: their product is unknown (the weight's 4 rows may
    match the flatten at run time), so no permutation of rows can be built."""
    rng = np.random.default_rng(14)
    w = _const(rng, (4, 3), "w")

    def f(y):
        return call("linear", y.transpose([0, 3, 1, 2]).flatten(1), w)

    p = trace(f, [T([-1, -1, -1, 4], "float32")], ["y"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["fold_flatten_transpose"])
    assert not changed and "transpose" in _ops(q)
    y = rng.standard_normal((2, 1, 1, 4)).astype(F32)
    (got,) = _outputs(q, [y])
    np.testing.assert_allclose(got, y.transpose(0, 3, 1, 2).reshape(2, 4) @ w.numpy(),
                               rtol=2e-5, atol=2e-5)


def test_flatten_transpose_stays_when_the_batch_axis_moves_between_equal_dims():
    """perm moves axis 0: with y's first two dims equal the flatten's type is the same
    either way, so only the perm itself can refuse the fold."""
    rng = np.random.default_rng(16)
    w = _const(rng, (24, 3), "w")

    def f(y):
        return call("linear", y.transpose([1, 0, 2, 3]).flatten(1), w)

    p = trace(f, [T([3, 3, 4, 2], "float32")], ["y"])
    fused, _ = _after(p, ["fuse_matmul_bias_act"])
    q, changed = _after(fused, ["fold_flatten_transpose"])
    assert not changed and "transpose" in _ops(q)
    y = rng.standard_normal((3, 3, 4, 2)).astype(F32)
    (got,) = _outputs(q, [y])
    np.testing.assert_allclose(got, y.transpose(1, 0, 2, 3).reshape(3, 24) @ w.numpy(),
                               rtol=2e-5, atol=2e-5)
