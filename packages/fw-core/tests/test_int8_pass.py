"""fold_qdq on hand-built quantize/dequantize (QDQ) programs: which ops it folds into
quantized_conv2d / quantized_matmul (bias, batch norm, activation, residual before or
after it, requantization into the next layer's input, uint8 0..127 after a relu), what
it leaves float (small layers, signed inputs on CPUs without VNNI), and that the folded
program computes what the QDQ program computes, within one quantization step of the
quantized output."""

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.passes import PIPELINES, PassManager, get_pass
from fw.core.ir.passes.fold_qdq import MIN_CONV_CHANNEL_PAIRS, narrow_conv
from fw.core.ops import OPS, call

pytest.importorskip("fw.core.ops.quant")  # the QDQ ops (fw-slim's contract, in fw-core)

T = TensorType
F32 = np.float32


def _buf(a, name):
    t = fw.to_tensor(a)
    t.name = name
    t.persistable = True
    return t


class QNet:
    """Parameters of a small QDQ program, quantized as fw-slim's convert writes them."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.k = 0
        self.zero = _buf(np.zeros(1, np.int32), "zero")

    def name(self, what):
        self.k += 1
        return f"{what}{self.k}"

    def weight(self, shape, axis):
        w = self.rng.standard_normal(shape).astype(F32) / np.sqrt(np.prod(shape[1:]))
        red = tuple(d for d in range(len(shape)) if d != axis)
        s = (np.abs(w).max(axis=red) / 127).astype(F32)
        bshape = [1] * len(shape)
        bshape[axis] = -1
        q = np.clip(np.rint(w / s.reshape(bshape)), -127, 127).astype(np.int8)
        n = self.name("w")
        return (_buf(q, n), _buf(s, n + ".s"), _buf(np.zeros(s.size, np.int32), n + ".z"), axis)

    def vec(self, n, scale=0.1):
        return _buf((self.rng.standard_normal(n) * scale).astype(F32), self.name("b"))

    def scale(self, v):
        return _buf(np.array([v], F32), self.name("s"))


def dq_w(wt):
    q, s, z, axis = wt
    return call("dequantize_linear", q, s, z, axis=axis)


def qdq(x, s, zero, qmin=-128, qmax=127):
    return call("dequantize_linear", call("quantize_linear", x, s, zero, qmin=qmin, qmax=qmax),
                s, zero)


def _names(p):
    return [op.name for op in p.block.ops]


def _fold(p, **kw):
    kw.setdefault("signed_inputs", True)  # as on a VNNI CPU (else only uint8 inputs fold)
    kw.setdefault("min_channel_pairs", 0)  # these small convs test the folding itself
    q = p.clone()
    get_pass("fold_qdq", **kw).run(q)
    PassManager(["dce"]).run(q)
    verify(q)
    return q


def _outputs(p, *xs):
    out = run(p, *[fw.to_tensor(x) for x in xs])
    return [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def _within_steps(got, want, step, steps=1.0, what=""):
    d = np.abs(got.astype(np.float64) - want.astype(np.float64))
    tol = steps * step + 1e-5 * np.abs(want).max()
    assert d.max(initial=0) <= tol, f"{what}: max diff {d.max()} > {tol} (step {step})"


def _resnet_block(net, c=16):
    """conv-relu-QDQ-conv-(+x)-relu, the output quantized (what the next block reads)."""
    w1, w2 = net.weight((c, c, 3, 3), 0), net.weight((c, c, 3, 3), 0)
    b1, b2 = net.vec(c), net.vec(c)
    s_in, s_mid, s_out = net.scale(0.04), net.scale(0.03), net.scale(0.05)

    def f(x):
        h = call("relu", call("conv", qdq(x, s_in, net.zero), dq_w(w1), b1, padding=1))
        h = call("conv", qdq(h, s_mid, net.zero), dq_w(w2), b2, padding=1)
        return qdq(call("relu", h + x), s_out, net.zero)

    return f, 0.05


def test_resnet_block_folds_to_two_int8_convs():
    net = QNet(1)
    f, step = _resnet_block(net)
    p = trace(f, [T([-1, 16, 9, 9], "float32")], ["x"])
    q = _fold(p, min_macs=0)
    names = _names(q)
    assert names.count("quantized_conv2d") == 2 and "conv" not in names, q
    convs = [op for op in q.block.ops if op.name == "quantized_conv2d"]
    # the first requantizes its relu output for the second, as uint8 0..127
    assert convs[0].attrs["out_dtype"] == "uint8" and convs[0].attrs["qmax"] == 127
    assert convs[0].attrs["activation"] == "relu"
    # the second adds the residual before its relu and writes int8 for the output's QDQ
    a = convs[1].attrs
    assert a["residual_before_act"] and a["activation"] == "relu" and a["out_dtype"] == "uint8"
    x = np.random.default_rng(2).standard_normal((2, 16, 9, 9)).astype(F32) * 2
    (want,), (got,) = _outputs(p, x), _outputs(q, x)
    _within_steps(got, want, step, what="resnet block")


def test_batch_norm_bias_and_linear_fold():
    net = QNet(3)
    w, wl = net.weight((8, 4, 3, 3), 0), net.weight((8 * 6 * 6, 10), 1)
    r = net.rng
    mean, var = net.vec(8), _buf((np.abs(r.standard_normal(8)) + 0.5).astype(F32), "var")
    gamma = _buf((r.choice([-1, 1], 8) * (np.abs(r.standard_normal(8)) + 0.5)).astype(F32),
                 "gamma")  # negative gammas give negative folded scales
    beta = net.vec(8)
    cb = _buf((net.rng.standard_normal((1, 8, 1, 1)) * 0.1).astype(F32), "cb")
    bl = net.vec(10)
    s1, s2, s3 = net.scale(0.05), net.scale(0.04), net.scale(0.08)

    def f(x):
        h = call("conv", qdq(x, s1, net.zero), dq_w(w), None, padding=1) + cb
        h = call("batch_norm", h, mean, var, gamma, beta)[0]
        h = call("relu6", h)
        h = call("flatten", h, start_axis=1)
        return qdq(call("linear", qdq(h, s2, net.zero), dq_w(wl), bl), s3, net.zero)

    p = trace(f, [T([-1, 4, 6, 6], "float32")], ["x"])
    q = _fold(p, min_macs=0)
    names = _names(q)
    assert "batch_norm" not in names and "conv" not in names and "linear" not in names, q
    assert names.count("quantized_conv2d") == 1 and names.count("quantized_matmul") == 1
    x = np.random.default_rng(4).standard_normal((3, 4, 6, 6)).astype(F32)
    (want,), (got,) = _outputs(p, x), _outputs(q, x)
    _within_steps(got, want, 0.08, what="conv-bn-relu6-linear")


def test_float_output_and_residual_after_activation_matmul():
    net = QNet(5)
    w = net.weight((32, 24), 1)
    b = net.vec(24)
    s = net.scale(0.03)

    def f(x, r):
        return call("relu", call("matmul", qdq(x, s, net.zero), dq_w(w)) + b) + r

    p = trace(f, [T([-1, 32], "float32"), T([-1, 24], "float32")], ["x", "r"])
    q = _fold(p, min_macs=0)
    (op,) = [o for o in q.block.ops if o.name == "quantized_matmul"]
    assert op.attrs["out_dtype"] == "float32" and not op.attrs["residual_before_act"]
    assert op.operands[5] is not None  # the residual
    rng = np.random.default_rng(6)
    x, r = rng.standard_normal((5, 32)).astype(F32), rng.standard_normal((5, 24)).astype(F32)
    (want,), (got,) = _outputs(p, x, r), _outputs(q, x, r)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_small_layers_stay_float_with_their_qdq():
    net = QNet(7)
    w = net.weight((4, 2, 3, 3), 0)
    s = net.scale(0.05)

    def f(x):
        return call("conv", qdq(x, s, net.zero), dq_w(w), None)

    p = trace(f, [T([-1, 2, 5, 5], "float32")], ["x"])
    q = _fold(p)  # default min_macs: 4*2*9*9 MACs per sample is far below it
    names = _names(q)
    assert "quantized_conv2d" not in names and names.count("quantize_linear") == 1
    assert names.count("dequantize_linear") == 1  # the weight's was folded to a constant
    x = np.random.default_rng(8).standard_normal((2, 2, 5, 5)).astype(F32)
    np.testing.assert_array_equal(_outputs(q, x)[0], _outputs(p, x)[0])
    q2 = _fold(p, keep_fp32_qdq=False)
    assert "quantize_linear" not in _names(q2) and "dequantize_linear" not in _names(q2)


def test_without_vnni_only_nonnegative_uint8_inputs_run_int8():
    net = QNet(9)
    f, step = _resnet_block(net)
    p = trace(f, [T([-1, 16, 9, 9], "float32")], ["x"])
    q = _fold(p, min_macs=0, signed_inputs=False)
    convs = [op for op in q.block.ops if op.name == "quantized_conv2d"]
    # the first conv reads the signed block input and stays float; its relu output is
    # quantized as uint8 0..127 (the same codes as the int8 quantize), which the second
    # conv reads in int8
    assert len(convs) == 1 and _names(q).count("conv") == 1, q
    assert convs[0].operands[0].type.dtype.name == "uint8"
    x = np.random.default_rng(10).standard_normal((2, 16, 9, 9)).astype(F32)
    _within_steps(_outputs(q, x)[0], _outputs(p, x)[0], step, 1.0, "one int8 conv")


def test_inference_pipeline_runs_fold_qdq_first_and_channel_last():
    assert PIPELINES["inference"][0] == "fold_qdq"
    net = QNet(11)
    blocks = [_resnet_block(net)[0] for _ in range(2)]

    def f(x):
        for b in blocks:
            x = b(x)
        return x

    p = trace(f, [T([-1, 16, 9, 9], "float32")], ["x"])
    q = p.clone()
    # as on a VNNI CPU: the block input is signed (the reference machine has VNNI; the
    # pass keeps such layers float elsewhere, tested above)
    PassManager([get_pass("fold_qdq", signed_inputs=True), *PIPELINES["inference"][1:]]).run(q)
    convs = [op for op in q.block.ops if op.name == "quantized_conv2d"]
    assert len(convs) == 4 and all(op.attrs["channel_last"] for op in convs), q
    x = np.random.default_rng(12).standard_normal((1, 16, 9, 9)).astype(F32)
    _within_steps(_outputs(q, x)[0], _outputs(p, x)[0], 0.05, 1.0, "two blocks")


def test_int8_ops_are_in_the_table():
    for n in ("quantized_conv2d", "quantized_matmul"):
        assert not OPS[n].differentiable and OPS[n].family == "int8"


def test_pool_and_flatten_move_after_the_requantization():
    """conv -> relu -> max_pool -> flatten -> QDQ -> linear (LeNet): the conv writes the
    quantized value and the pool and flatten run on the bytes (quantization is
    monotone, so the values are exactly those of the QDQ program)."""
    net = QNet(13)
    w, wl = net.weight((16, 8, 3, 3), 0), net.weight((16 * 4 * 4, 10), 1)
    s1, s2 = net.scale(0.05), net.scale(0.04)

    def f(x):
        h = call("relu", call("conv", qdq(x, s1, net.zero), dq_w(w), None, padding=1))
        h = call("flatten", call("max_pool", h, kernel_size=3, stride=2, padding=1),
                 start_axis=1)
        return call("linear", qdq(h, s2, net.zero), dq_w(wl), None)

    p = trace(f, [T([-1, 8, 8, 8], "float32")], ["x"])
    q = _fold(p, min_macs=0)
    names = _names(q)
    assert names == ["quantize_linear", "quantized_conv2d", "quantized_max_pool", "flatten",
                     "quantized_matmul"], q
    assert q.block.ops[2].results[0].type.dtype.name == "uint8"
    x = np.random.default_rng(14).standard_normal((3, 8, 8, 8)).astype(F32)
    np.testing.assert_allclose(_outputs(q, x)[0], _outputs(p, x)[0], rtol=1e-5, atol=1e-5)


def test_classifier_reads_channel_last_bytes_without_a_transpose():
    """After layout_nhwc, the transpose back to NCHW before the flatten into an int8
    classifier becomes a permutation of its int8 weight rows (fold_flatten_transpose)."""
    net = QNet(15)
    w1, w2 = net.weight((16, 8, 3, 3), 0), net.weight((16, 16, 3, 3), 0)
    wl = net.weight((16 * 6 * 6, 10), 1)
    s1, s2, s3 = net.scale(0.05), net.scale(0.04), net.scale(0.04)

    def f(x):
        h = call("relu", call("conv", qdq(x, s1, net.zero), dq_w(w1), None, padding=1))
        h = call("relu", call("conv", qdq(h, s2, net.zero), dq_w(w2), None, padding=1))
        return call("linear", qdq(call("flatten", h, start_axis=1), s3, net.zero), dq_w(wl),
                    None)

    p = trace(f, [T([-1, 8, 6, 6], "float32")], ["x"])
    q = p.clone()
    PassManager([get_pass("fold_qdq", signed_inputs=True), *PIPELINES["inference"][1:]]).run(q)
    names = _names(q)
    assert names.count("quantized_conv2d") == 2 and "quantized_matmul" in names, q
    assert names.count("transpose") == 1, q  # only the input's, to NHWC
    x = np.random.default_rng(16).standard_normal((2, 8, 6, 6)).astype(F32)
    _within_steps(_outputs(q, x)[0], _outputs(p, x)[0], 0.04 * 0.05, 40.0, "classifier")


@pytest.mark.parametrize("cout, cin, groups, folded", [
    (6, 1, 1, False),    # LeNet's stem: 6 channel pairs, int8 loses (MIN_CONV_CHANNEL_PAIRS)
    (16, 6, 1, True),    # LeNet's second conv: 96 pairs, int8 wins
    (8, 4, 2, False),    # grouped: 2 * 4 pairs per group
    (8, 1, 8, True),     # depthwise: always int8
])
def test_narrow_convs_stay_float(cout, cin, groups, folded):
    """The shape rule of fold_qdq (no timing in the pass): a conv with few input x output
    channels per group keeps float32 and its QDQ, so the result is the QDQ program's."""
    net = QNet(11)
    c_in = cin * groups
    w = net.weight((cout, cin, 3, 3), 0)
    s = net.scale(0.05)

    def f(x):
        return call("conv", qdq(x, s, net.zero), dq_w(w), None, padding=1, groups=groups)

    p = trace(f, [T([-1, c_in, 12, 12], "float32")], ["x"])
    q = _fold(p, min_macs=0, min_channel_pairs=MIN_CONV_CHANNEL_PAIRS)
    assert ("quantized_conv2d" in _names(q)) is folded, q
    assert narrow_conv((cout, cin, 3, 3), groups) is not folded
    x = np.random.default_rng(9).standard_normal((2, c_in, 12, 12)).astype(F32)
    if not folded:
        np.testing.assert_array_equal(_outputs(q, x)[0], _outputs(p, x)[0])
    else:
        np.testing.assert_allclose(_outputs(q, x)[0], _outputs(p, x)[0], rtol=1e-4, atol=1e-4)


def test_output_quantized_pool_chain_collapses():
    """relu -> Q(p) -> DQ -> max_pool -> flatten -> Q(p) -> DQ -> linear (the output
    quantization fw.quantization.quantize_outputs writes, onnxruntime's layout): the
    first pair goes, so the conv requantizes once and the pool runs on its bytes; the
    codes are exactly the QDQ program's (the same parameters, a monotone pool)."""
    net = QNet(21)
    w, wl = net.weight((16, 8, 3, 3), 0), net.weight((16 * 4 * 4, 10), 1)
    s1, s2 = net.scale(0.05), net.scale(0.04)
    z = net.zero

    def f(x):
        h = call("relu", call("conv", qdq(x, s1, z), dq_w(w), None, padding=1))
        h = qdq(h, s2, z, qmin=0, qmax=255)
        h = call("flatten", call("max_pool", h, kernel_size=2, stride=2), start_axis=1)
        return call("linear", qdq(h, s2, z, qmin=0, qmax=255), dq_w(wl), None)

    p = trace(f, [T([-1, 8, 8, 8], "float32")], ["x"])
    q = _fold(p, min_macs=0)
    assert _names(q) == ["quantize_linear", "quantized_conv2d", "quantized_max_pool",
                         "flatten", "quantized_matmul"], q
    x = np.random.default_rng(22).standard_normal((3, 8, 8, 8)).astype(F32)
    np.testing.assert_allclose(_outputs(q, x)[0], _outputs(p, x)[0], rtol=1e-5, atol=1e-5)
    # different parameters on the two quantizes: nothing to collapse, nothing wrong
    s3 = net.scale(0.03)

    def g(x):
        h = call("relu", call("conv", qdq(x, s1, z), dq_w(w), None, padding=1))
        h = call("max_pool", qdq(h, s3, z, qmin=0, qmax=255), kernel_size=2, stride=2)
        return call("linear", qdq(call("flatten", h, start_axis=1), s2, z, qmin=0, qmax=255),
                    dq_w(wl), None)

    pg = trace(g, [T([-1, 8, 8, 8], "float32")], ["x"])
    qg = _fold(pg, min_macs=0)
    assert "max_pool" in _names(qg) and _names(qg).count("quantize_linear") >= 2, qg
    np.testing.assert_allclose(_outputs(qg, x)[0], _outputs(pg, x)[0], rtol=1e-5, atol=1e-5)


def test_residual_read_through_output_quantization():
    """conv -> Q(a) -> DQ -> add(r) -> relu -> Q(b): fused as the conv's residual
    post-op (the pre-add rounding skipped: within half a step of a, plus one of b), or
    with fuse_residual_qdq=False kept exactly (int8 output, float add)."""
    net = QNet(23)
    w = net.weight((16, 16, 3, 3), 0)
    b = net.vec(16)
    s_in, s_a, s_r, s_b = net.scale(0.04), net.scale(0.06), net.scale(0.05), net.scale(0.07)
    z = net.zero

    def f(x):
        r = qdq(call("relu", x), s_r, z, qmin=0, qmax=255)
        h = call("conv", qdq(x, s_in, z), dq_w(w), b, padding=1)
        h = call("relu", qdq(h, s_a, z) + r)
        return qdq(h, s_b, z, qmin=0, qmax=255)

    p = trace(f, [T([-1, 16, 6, 6], "float32")], ["x"])
    x = np.random.default_rng(24).standard_normal((2, 16, 6, 6)).astype(F32) * 2
    (want,) = _outputs(p, x)
    q = _fold(p, min_macs=0)
    names = _names(q)
    assert names.count("quantized_conv2d") == 1 and "add" not in names, q
    conv = next(op for op in q.block.ops if op.name == "quantized_conv2d")
    assert conv.attrs["residual_before_act"] and conv.attrs["out_dtype"] == "uint8"
    _within_steps(_outputs(q, x)[0], want, 0.07, steps=1.0 + 0.5 * 0.06 / 0.07,
                  what="fused residual")
    exact = _fold(p, min_macs=0, fuse_residual_qdq=False)
    assert "add" in _names(exact) and _names(exact).count("quantized_conv2d") == 1, exact
    _within_steps(_outputs(exact, x)[0], want, 0.07, what="exact residual")
