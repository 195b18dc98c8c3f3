"""Each lowering against fw: a small function using the op, exported and run on
onnxruntime, equals fw's eager result (values, shape, dtype).

`CASES` is the table; `test_every_lowering_has_a_case` keeps it complete (every op
of `fw.onnx.LOWERINGS` appears in some case's traced program)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_testutil import check, fw_outputs

import fw
import fw.nn.functional as F
from fw.core.ops import call
from fw.jit import InputSpec
from fw.onnx import LOWERINGS
from fw.onnx._program import inference_program

R = np.random.default_rng(0)


def f32(*shape, lo=None):
    a = R.standard_normal(shape).astype(np.float32)
    return a if lo is None else (np.abs(a) + lo).astype(np.float32)


def u(*shape, lo=-0.9, hi=0.9):
    return R.uniform(lo, hi, shape).astype(np.float32)


def i64(*shape, lo=-5, hi=6):
    return R.integers(lo, hi, shape).astype(np.int64)


def nz(*shape):  # nonzero integers, for division
    a = R.integers(1, 6, shape) * R.choice([-1, 1], shape)
    return a.astype(np.int32)


def boolean(*shape):
    return R.random(shape) > 0.5


# weights drawn once: a case's function runs twice (traced, then eagerly)
W = f32(3, 4)
CONV_W = f32(4, 2, 3, 3)
CONV_W_G = f32(4, 1, 3, 3)
CONV1_W = f32(3, 2, 3)
CONVT_W = f32(2, 3, 3, 3)
BN = [np.abs(f32(4)) + 0.5 for _ in range(4)]
QS1, QS3 = np.array([0.05], np.float32), np.array([0.02, 0.05, 0.1], np.float32)
QZ0, QZ3, QZU = np.zeros(1, np.int32), np.array([0, -3, 5], np.int32), np.array([128], np.int32)


def _t(a):
    return fw.to_tensor(a)


CASES = [
    # unary elementwise (elementwise.UNARY and the composed ones)
    ("abs", lambda x: fw.abs(x), [f32(2, 3)]),
    ("neg", lambda x: -x, [f32(2, 3)]),
    ("exp_log", lambda x: fw.log(fw.exp(x) + 1.0), [f32(2, 3)]),
    ("sqrt_rsqrt", lambda x: fw.sqrt(x) + fw.rsqrt(x), [f32(2, 3, lo=0.1)]),
    ("trig", lambda x: fw.sin(x) + fw.cos(x) + fw.tan(x) + fw.atan(x), [u(2, 3)]),
    ("arc", lambda x: fw.asin(x) + fw.acos(x) + fw.atanh(x) + fw.asinh(x), [u(2, 3)]),
    ("hyp", lambda x: fw.sinh(x) + fw.cosh(x) + fw.acosh(fw.abs(x) + 1.0), [u(2, 3)]),
    ("tanh_sigmoid_erf", lambda x: fw.tanh(x) * fw.sigmoid(x) + fw.erf(x), [f32(2, 3)]),
    ("reciprocal_sign", lambda x: fw.reciprocal(x) * fw.sign(x) + fw.sgn(x),
     [f32(2, 3, lo=0.2)]),
    ("square", lambda x: fw.square(x) + fw.positive(x), [f32(2, 3)]),
    ("log_variants", lambda x: fw.log1p(x) + fw.log2(x) + fw.log10(x) + fw.expm1(x)
     + fw.exp2(x), [f32(2, 3, lo=0.1)]),
    ("angles", lambda x: fw.deg2rad(x) + fw.rad2deg(x), [f32(2, 3)]),
    ("rounding", lambda x: fw.floor(x) + fw.ceil(x) + fw.round(x) + fw.trunc(x),
     [f32(2, 5) * 3]),
    ("rounding_int", lambda x: fw.floor(x) + fw.ceil(x) + fw.round(x) + fw.trunc(x),
     [i64(2, 3)]),
    ("isnan_isinf_isfinite", lambda x: fw.logical_and(fw.logical_not(fw.isnan(x)),
                                                       fw.logical_or(fw.isinf(x),
                                                                     fw.isfinite(x))),
     [np.array([1.0, np.nan, np.inf, -np.inf], np.float32)]),
    ("stanh", lambda x: fw.stanh(x, 0.5, 2.0), [f32(2, 3)]),
    ("scale", lambda x: fw.scale(x, 2.0, 1.0) + fw.scale(x, 3.0, 0.5, bias_after_scale=False),
     [f32(2, 3)]),
    ("increment", lambda x: fw.increment(x, 2.0), [f32(1)]),
    # binary elementwise, comparisons, logic
    ("arith", lambda x, y: (x + y) * (x - y) / y, [f32(2, 3), f32(3, lo=0.5)]),
    ("max_min_pow", lambda x, y: fw.maximum(x, y) + fw.minimum(x, y) + fw.pow(fw.abs(x), y),
     [f32(2, 3), f32(2, 3)]),
    ("compare", lambda x, y: fw.stack([x == y, x != y, x < y, x <= y, x > y, x >= y]),
     [i64(3, 4), i64(3, 4)]),
    ("logic", lambda a, b: fw.logical_xor(fw.logical_and(a, b), fw.logical_or(a, b)),
     [boolean(2, 3), boolean(2, 3)]),
    ("bitwise_bool", lambda a, b: fw.bitwise_not(fw.bitwise_xor(fw.bitwise_and(a, b),
                                                                 fw.bitwise_or(a, b))),
     [boolean(2, 3), boolean(2, 3)]),
    ("int_division", lambda a, b: fw.stack([a // b, a % b]), [nz(3, 4) * 3, nz(3, 4)]),
    ("float_division", lambda a, b: fw.stack([a // b, a % b]),
     [f32(3, 4) * 5, f32(3, 4, lo=0.5) * np.sign(f32(3, 4))]),
    ("true_divide_int", lambda a, b: a / b, [nz(2, 3), nz(2, 3)]),
    ("where_clip", lambda x: fw.where(x > 0, x, x * 0.1) + fw.clip(x, -0.5, 0.5), [f32(2, 3)]),
    ("clip_tensor_bounds", lambda x, lo, hi: fw.clip(x, lo, hi),
     [f32(2, 3), np.array(-0.3, np.float32), np.array(0.4, np.float32)]),
    ("lerp_hypot", lambda x, y: fw.lerp(x, y, 0.3) + fw.hypot(x, y), [f32(2, 3), f32(2, 3)]),
    # activations
    ("relu_family", lambda x: F.relu(x) + F.relu6(x * 4) + F.leaky_relu(x, 0.2)
     + F.elu(x, 0.7) + F.celu(x, 1.3) + F.selu(x), [f32(2, 8)]),
    ("sigmoid_family", lambda x: F.silu(x) + F.hardswish(x * 3) + F.hardsigmoid(x * 3)
     + F.hardtanh(x, -0.4, 0.6) + F.log_sigmoid(x) + F.softsign(x), [f32(2, 8)]),
    ("gelu", lambda x: F.gelu(x) + F.gelu(x, approximate=True), [f32(2, 8)]),
    ("softplus_mish", lambda x: F.softplus(x) + F.softplus(x * 8, beta=2.0, threshold=5.0)
     + F.mish(x), [f32(2, 8) * 3]),
    ("shrink", lambda x: F.hardshrink(x, 0.4) + F.softshrink(x, 0.3) + F.tanhshrink(x)
     + F.thresholded_relu(x, 0.2), [f32(2, 8)]),
    ("glu", lambda x: F.glu(x, axis=1), [f32(2, 6)]),
    ("softmax", lambda x: F.softmax(x, axis=1) + F.log_softmax(x, axis=-1), [f32(2, 3, 4)]),
    ("prelu", lambda x: F.prelu(x, _t(np.array([0.1, 0.2, 0.3], np.float32))),
     [f32(2, 3, 4, 4)]),
    ("rrelu_eval", lambda x: F.rrelu(x, training=False), [f32(2, 8)]),
    # reductions
    ("sum_mean", lambda x: x.sum(axis=1) + x.mean(axis=[1], keepdim=False), [f32(2, 3, 4)]),
    ("sum_all_keepdim", lambda x: x.sum() + x.mean(axis=-1, keepdim=True).sum(),
     [f32(2, 3)]),
    ("max_min_prod", lambda x: x.max(axis=0) + x.min(axis=0) + fw.amax(x, 0) + fw.amin(x, 0)
     + x.prod(axis=0), [f32(3, 4)]),
    ("sum_dtype", lambda x: fw.sum(x, axis=1, dtype="int64"), [nz(3, 4)]),
    ("logsumexp", lambda x: fw.logsumexp(x, axis=1), [f32(3, 4)]),
    ("all_any", lambda a: fw.stack([fw.all(a, axis=1), fw.any(a, axis=1)]), [boolean(3, 4)]),
    ("argmax_argmin", lambda x: fw.stack([fw.argmax(x, axis=1), fw.argmin(x, axis=1)]),
     [f32(3, 4)]),
    ("argmax_flat", lambda x: fw.argmax(x) + fw.argmin(x, keepdim=False), [f32(3, 4)]),
    ("var_std", lambda x: fw.var(x, axis=1) + fw.std(x, axis=1, unbiased=False)
     + fw.var(x).reshape([1]), [f32(3, 4)]),
    ("sort_argsort", lambda x: [fw.sort(x, axis=1), fw.argsort(x, axis=0, descending=True)],
     [f32(3, 4)]),
    ("cumsum", lambda x: fw.cumsum(x, axis=1) + fw.cumsum(x).reshape([3, 4]), [f32(3, 4)]),
    # shapes
    ("reshape_transpose", lambda x: x.reshape([0, 4, 3]).transpose([0, 2, 1]), [f32(2, 12)]),
    ("flatten", lambda x: x.flatten(1) .sum(-1) + x.flatten(0, 1).sum([0, 1]).sum(),
     [f32(2, 3, 4)]),
    ("squeeze_unsqueeze", lambda x: x.unsqueeze([0, -1]).squeeze([0]).squeeze(), [f32(1, 3)]),
    ("concat_stack", lambda x, y: fw.concat([x, y], axis=1).sum(0) + fw.stack([x, y], 2)
     .sum([0, 1, 2]), [f32(2, 3), f32(2, 3)]),
    ("split_unbind", lambda x: [fw.split(x, [1, 3], axis=1)[1], fw.unbind(x, axis=0)[1],
                                fw.split(x, 2, axis=1)[0]], [f32(3, 4)]),
    ("expand_tile", lambda x, y: x.expand([2, 3, 4]) + fw.tile(x, [2, 1, 1])
     + fw.expand_as(x, y), [f32(3, 1), f32(2, 3, 4)]),
    ("broadcast_tensors", lambda x, y: fw.broadcast_tensors([x, y]), [f32(3, 1), f32(1, 4)]),
    ("flip_roll", lambda x: fw.flip(x, [0, 1]) + fw.roll(x, 1, axis=1) + fw.roll(x, -2),
     [f32(3, 4)]),
    ("pad", lambda x: F.pad(x, [1, 2, 0, 1], value=0.5) .sum() + F.pad(x, [1, 1, 1, 1],
                                                                  mode="reflect").sum()
     + F.pad(x, [2, 0, 0, 1], mode="replicate").sum(), [f32(1, 1, 3, 4)]),
    ("unflatten", lambda x: fw.unflatten(x, 1, [2, 3]), [f32(2, 6)]),
    # indexing
    ("getitem_basic", lambda x: [x[1:, ::2], x[:, None, 0], x[..., -1], x[-1], x[::-1, 1:3]],
     [f32(3, 4)]),
    ("getitem_index_tensor", lambda x, i: x[:, i], [f32(3, 5), i64(4, lo=0, hi=5)]),
    ("gather_take", lambda x, i, j: fw.gather(x, i, axis=1).sum(0) + fw.take_along_axis(
        x, j, axis=1).sum(0).sum(), [f32(3, 5), i64(2, lo=0, hi=5), i64(3, 2, lo=0, hi=5)]),
    ("gather_nd", lambda x, i: fw.gather_nd(x, i), [f32(3, 4, 2), i64(2, 2, lo=0, hi=3)]),
    ("strided_slice", lambda x: fw.strided_slice(x, [0, 1], [0, 1], [3, 4], [2, 2]),
     [f32(3, 4)]),
    ("masked_fill_one_hot", lambda x, i: fw.masked_fill(x, x > 0, 0.5).sum(-1)
     + F.one_hot(i, 4).sum(-1), [f32(3, 4), i64(3, lo=0, hi=4)]),
    # creation
    ("full_arange_eye", lambda x: x + fw.full([3, 4], 2.0) + fw.arange(4).astype("float32")
     + fw.eye(3, 4) + fw.linspace(0, 1, 4) + fw.logspace(0, 1, 4), [f32(3, 4)]),
    ("big_full", lambda x: x + fw.full([20, 20], 0.25), [f32(20, 20)]),
    ("full_like_cast", lambda x: fw.full_like(x, 3) + x.astype("int64").astype("float32")
     + fw.assign(x), [f32(2, 3)]),
    ("tril_triu", lambda x: fw.tril(x) + fw.triu(x, 1), [f32(4, 4)]),
    ("shape_numel", lambda x: fw.shape(x).sum() + fw.numel(x), [f32(2, 3)]),
    # linear algebra and layers
    ("matmul", lambda x, y: fw.matmul(x, y) + fw.matmul(y, x, True, True).transpose([0, 2, 1]),
     [f32(2, 3, 3), f32(2, 3, 3)]),
    ("einsum", lambda x, y: fw.einsum("bij,bjk->bik", x, y) + fw.einsum("bij->bji", y)
     .sum(-1, keepdim=True), [f32(2, 3, 3), f32(2, 3, 3)]),
    ("matmul_vec", lambda x, v: fw.matmul(x, v), [f32(3, 4), f32(4)]),
    ("linear", lambda x: F.linear(x, _t(W), _t(W[0])) + F.linear(x, _t(W)), [f32(2, 5, 3)]),
    ("embedding", lambda i: F.embedding(i, _t(W.T)) + F.embedding(i, _t(W.T), padding_idx=2),
     [i64(2, 3, lo=0, hi=4)]),
    ("dropout_eval", lambda x: F.dropout(x, 0.5, training=False)
     + F.dropout(x, 0.3, training=False, mode="downscale_in_infer")
     + call("alpha_dropout", x, p=0.3, training=False)[0], [f32(2, 3)]),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [f32(1, 8, 2, 3)]),
    ("attention", lambda q, k, v, m: [
        F.scaled_dot_product_attention(q, k, v),
        F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
        F.scaled_dot_product_attention(q, k[:, :, :1], v[:, :, :1])],
     [f32(2, 5, 2, 4), f32(2, 5, 2, 4), f32(2, 5, 2, 4), f32(2, 1, 5, 5)]),
    ("interpolate_nearest", lambda x: [F.interpolate(x, size=[5, 7]), F.interpolate(
        x, scale_factor=2), F.interpolate(x, size=[6, 5], align_corners=True)],
     [f32(1, 2, 3, 4)]),
    ("interpolate_bilinear", lambda x: [
        F.interpolate(x, size=[5, 7], mode="bilinear"),
        F.interpolate(x, scale_factor=[1.5, 2], mode="bilinear"),
        F.interpolate(x, size=[2, 3], mode="bilinear"),
        F.interpolate(x, size=[5, 7], mode="bilinear", align_corners=True),
        F.interpolate(x, size=[5, 7], mode="bilinear", align_mode=1)], [f32(1, 2, 3, 4)]),
    ("interpolate_bicubic", lambda x: [
        F.interpolate(x, size=[5, 7], mode="bicubic"),
        F.interpolate(x, size=[5, 7], mode="bicubic", align_corners=True)], [f32(1, 2, 3, 4)]),
    ("interpolate_1d_3d", lambda x, y: [
        F.interpolate(x, size=[7], mode="linear"),
        F.interpolate(y, size=[3, 4, 5], mode="trilinear"),
        F.interpolate(y, scale_factor=2, mode="nearest", data_format="NDHWC")],
     [f32(1, 2, 4), f32(1, 2, 2, 3, 3)]),
    ("conv", lambda x: F.conv2d(x, _t(CONV_W), _t(W[0]), stride=2, padding=1)
     + F.conv2d(x, _t(CONV_W), padding="SAME", stride=2), [f32(1, 2, 5, 5)]),
    ("conv_groups_dilation", lambda x: F.conv2d(x, _t(CONV_W_G), groups=2,
                                                dilation=2, padding=[1, 2, 0, 1]),
     [f32(1, 2, 6, 6)]),
    ("conv_nhwc", lambda x: F.conv2d(x, _t(CONV_W), padding=1, data_format="NHWC"),
     [f32(1, 5, 5, 2)]),
    ("conv1d", lambda x: F.conv1d(x, _t(CONV1_W), padding=1), [f32(2, 2, 7)]),
    ("conv_transpose", lambda x: F.conv2d_transpose(x, _t(CONVT_W), stride=2,
                                                    padding=1, output_padding=1),
     [f32(1, 2, 4, 4)]),
    ("pools", lambda x: F.max_pool2d(x, 3, 2, 1) .sum() + F.avg_pool2d(x, 2).sum()
     + F.avg_pool2d(x, 3, 2, 1, exclusive=False).sum() + F.max_pool2d(x, 2, ceil_mode=True)
     .sum(), [f32(1, 2, 5, 5)]),
    ("max_pool_mask_unused", lambda x: F.max_pool2d(x, 2, return_mask=True)[0], [f32(1, 2, 4, 4)]),
    ("adaptive_pools", lambda x: F.adaptive_avg_pool2d(x, 1).sum() + F.adaptive_avg_pool2d(
        x, [2, 3]).sum() + F.adaptive_max_pool2d(x, 2).sum() + F.adaptive_max_pool2d(x, 1).sum(),
     [f32(1, 2, 4, 6)]),
    ("batch_norm", lambda x: F.batch_norm(x, _t(BN[0]), _t(BN[1]), _t(BN[2]), _t(BN[3]),
                                          training=False), [f32(2, 4, 3, 3)]),
    ("batch_norm_nhwc", lambda x: F.batch_norm(x, _t(BN[0]), _t(BN[1]), training=False,
                                               data_format="NHWC"), [f32(2, 3, 3, 4)]),
    ("layer_norm", lambda x: F.layer_norm(x, [4], _t(BN[2]), _t(BN[3]))
     + F.layer_norm(x, [3, 4]), [f32(2, 3, 4)]),
    ("rms_norm", lambda x: F.rms_norm(x, [4], _t(BN[2])), [f32(2, 3, 4)]),
    ("group_instance_norm", lambda x: F.group_norm(x, 2, weight=_t(BN[2]), bias=_t(BN[3]))
     + F.instance_norm(x), [f32(2, 4, 3, 3)]),
    ("normalize", lambda x: F.normalize(x, axis=1) + F.normalize(x, p=1, axis=0), [f32(3, 4)]),
    ("topk", lambda x: list(fw.topk(x, 2, axis=1)), [f32(3, 5)]),
    # QDQ (quant.py): per-tensor int8, per-axis, asymmetric uint8, a 4-bit range (Clip)
    ("quantize_dequantize", lambda x: [
        call("dequantize_linear", call("quantize_linear", x, _t(QS1), _t(QZ0)), _t(QS1),
             _t(QZ0)),
        call("dequantize_linear", call("quantize_linear", x, _t(QS3), _t(QZ3), axis=1),
             _t(QS3), _t(QZ3), axis=1),
        call("quantize_linear", x, _t(QS1), _t(QZU), qmin=0, qmax=255),
        call("quantize_linear", x, _t(QS1), _t(QZ0), qmin=-8, qmax=7)], [f32(2, 3, 4) * 3]),
    # scale and zero point as graph inputs (Reshape/Cast at run time, not initializers)
    ("qdq_runtime_qparams", lambda x, s, z, s1, z1: [
        call("dequantize_linear", call("quantize_linear", x, s, z, axis=1), s, z, axis=1),
        call("fake_quantize_dequantize", x, s1, z1, qmin=0, qmax=255),
        call("fake_quantize_dequantize", x.astype("float64"), s, z, axis=1)],
     [f32(2, 3, 4) * 3, QS3, QZ3, QS1, QZU]),
    ("fake_quantize_dequantize", lambda x: [
        call("fake_quantize_dequantize", x, _t(QS3), _t(QZ3), axis=1, qmin=-8, qmax=7),
        call("fake_quantize_dequantize", x, _t(QS1), _t(QZ0), qmin=-1000, qmax=1000)],
     [f32(2, 3, 4) * 3]),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_lowering_matches_fw(name, fn, arrays):
    check(fn, arrays)


def _traced_ops(fn, arrays):
    specs = [InputSpec(list(a.shape), str(a.dtype), f"in{i}") for i, a in enumerate(arrays)]
    prog, _ = inference_program(fn, specs)
    return {op.name for op in prog.walk()}


# functions of inputs with a dynamic batch dim: shapes computed at run time
DYNAMIC_CASES = [
    ("dyn_full_reshape_expand", lambda x: x.reshape([fw.shape(x)[0], -1]).sum(-1)
     + fw.full([fw.shape(x)[0]], 1.5) + fw.zeros([1, 1]).expand([fw.shape(x)[0], 1]).sum(-1)
     + fw.arange(fw.shape(x)[0]).astype("float32"), [f32(3, 2, 2)]),
    ("dyn_flatten_conv", lambda x: F.conv2d(x, _t(CONV_W), padding=1).flatten(1),
     [f32(2, 2, 3, 3)]),
    ("dyn_interpolate", lambda x: [F.interpolate(x, size=[4, 6], mode="bilinear"),
                                   F.interpolate(x, scale_factor=2)], [f32(2, 1, 2, 3)]),
    ("dyn_layer_norm_matmul", lambda x: fw.matmul(F.layer_norm(x, [3]), _t(W)), [f32(2, 5, 3)]),
]


@pytest.mark.parametrize("name,fn,arrays", DYNAMIC_CASES, ids=[c[0] for c in DYNAMIC_CASES])
def test_dynamic_batch_lowering_matches_fw(name, fn, arrays, tmp_path):
    specs = [InputSpec([None] + list(a.shape[1:]), str(a.dtype), f"in{i}")
             for i, a in enumerate(arrays)]
    path = check(fn, arrays, specs)
    # the same file at another batch size
    from onnx_testutil import assert_same, session

    other = [np.concatenate([a, a[:1]]) for a in arrays]
    sess = session(path)
    got = sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), other)})
    assert_same(got, fw_outputs(fn, other))


# ops exercised by other test files instead of the tables above
ELSEWHERE = {"cond": "test_control_flow.py", "while": "test_control_flow.py"}


def test_every_lowering_has_a_case():
    covered = set()
    for _, fn, arrays in CASES + DYNAMIC_CASES:
        covered |= _traced_ops(fn, arrays)
    missing = sorted(set(LOWERINGS) - covered - set(ELSEWHERE))
    assert not missing, f"lowerings no case of test_ops.py exercises: {missing}"


# cases whose lowering takes another form in another opset (Context.reduce's axes as
# an input from 18, LayerNormalization from 17, Gelu from 20, Mish from 18)
OPSET_DEPENDENT = ["sum_mean", "max_min_prod", "logsumexp", "all_any", "var_std", "layer_norm",
                   "rms_norm", "group_instance_norm", "normalize", "gelu", "softplus_mish",
                   "dyn_layer_norm_matmul"]


@pytest.mark.parametrize("opset", [13, 16, 18, 20])
@pytest.mark.parametrize("name", OPSET_DEPENDENT)
def test_opset_dependent_forms(name, opset):
    cases = {c[0]: c for c in CASES + DYNAMIC_CASES}
    _, fn, arrays = cases[name]
    check(fn, arrays, opset=opset)
