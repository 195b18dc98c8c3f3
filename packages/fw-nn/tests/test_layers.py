"""Every layer class: its forward equals the functional it wraps (or a NumPy formula),
output shapes for its arguments, and its parameters."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F


def rnd(*shape, seed=0):
    return fw.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def same(a, b, tol=1e-6):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


X4 = rnd(2, 4, 6, 6)

# (layer, functional equivalent, input)
WRAPPERS = [
    (nn.ReLU(), F.relu, X4), (nn.ReLU6(), F.relu6, X4),
    (nn.LeakyReLU(0.3), lambda x: F.leaky_relu(x, 0.3), X4),
    (nn.ELU(0.7), lambda x: F.elu(x, 0.7), X4), (nn.CELU(0.2), lambda x: F.celu(x, 0.2), X4),
    (nn.SELU(), F.selu, X4), (nn.GELU(True), lambda x: F.gelu(x, True), X4),
    (nn.Silu(), F.silu, X4), (nn.Swish(), F.swish, X4), (nn.Mish(), F.mish, X4),
    (nn.Hardswish(), F.hardswish, X4), (nn.Hardsigmoid(), F.hardsigmoid, X4),
    (nn.Hardtanh(-0.5, 0.5), lambda x: F.hardtanh(x, -0.5, 0.5), X4),
    (nn.Hardshrink(0.3), lambda x: F.hardshrink(x, 0.3), X4),
    (nn.Softshrink(0.3), lambda x: F.softshrink(x, 0.3), X4),
    (nn.Softplus(2, 10), lambda x: F.softplus(x, 2, 10), X4), (nn.Softsign(), F.softsign, X4),
    (nn.Tanhshrink(), F.tanhshrink, X4), (nn.LogSigmoid(), F.log_sigmoid, X4),
    (nn.ThresholdedReLU(0.5), lambda x: F.thresholded_relu(x, 0.5), X4),
    (nn.Sigmoid(), F.sigmoid, X4), (nn.Tanh(), F.tanh, X4),
    (nn.Softmax(1), lambda x: F.softmax(x, 1), X4),
    (nn.Softmax2D(), lambda x: F.softmax(x, 1), X4),
    (nn.LogSoftmax(), F.log_softmax, X4), (nn.Maxout(2), lambda x: F.maxout(x, 2), X4),
    (nn.GLU(1), lambda x: F.glu(x, 1), X4),
    (nn.MaxPool2D(2, 2), lambda x: F.max_pool2d(x, 2, 2), X4),
    (nn.AvgPool2D(3, 1, 1), lambda x: F.avg_pool2d(x, 3, 1, 1), X4),
    (nn.LPPool2D(3, 2), lambda x: F.lp_pool2d(x, 3, 2), fw.abs(X4)),
    (nn.AdaptiveAvgPool2D(3), lambda x: F.adaptive_avg_pool2d(x, 3), X4),
    (nn.AdaptiveMaxPool2D([2, 3]), lambda x: F.adaptive_max_pool2d(x, [2, 3]), X4),
    (nn.LocalResponseNorm(3), lambda x: F.local_response_norm(x, 3), X4),
    (nn.InstanceNorm2D(4), F.instance_norm, X4),
    (nn.GroupNorm(2, 4), lambda x: F.group_norm(x, 2), X4),
    (nn.LayerNorm([6, 6]), lambda x: F.layer_norm(x, [6, 6]), X4),
    (nn.RMSNorm(6), lambda x: F.rms_norm(x, 6), X4),
    (nn.Flatten(), lambda x: x.reshape([2, -1]), X4),
    (nn.Flatten(1, 2), lambda x: x.reshape([2, 24, 6]), X4),
    (nn.Unflatten(1, [2, 2]), lambda x: x.reshape([2, 2, 2, 6, 6]), X4),
    (nn.Identity(3, foo=1), lambda x: x, X4),
    (nn.PixelShuffle(2), lambda x: F.pixel_shuffle(x, 2), X4),
    (nn.PixelUnshuffle(2), lambda x: F.pixel_unshuffle(x, 2), X4),
    (nn.ChannelShuffle(2), lambda x: F.channel_shuffle(x, 2), X4),
    (nn.Upsample(scale_factor=2, mode="bilinear"),
     lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), X4),
    (nn.UpsamplingNearest2D(size=[3, 4]), lambda x: F.interpolate(x, size=[3, 4]), X4),
    (nn.UpsamplingBilinear2D(scale_factor=2),
     lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), X4),
    (nn.Pad2D([1, 2, 0, 1], mode="reflect"), lambda x: F.pad(x, [1, 2, 0, 1], "reflect"), X4),
    (nn.ZeroPad2D(1), lambda x: F.pad(x, [1, 1, 1, 1]), X4),
    (nn.ConstantPad2D([1, 0, 0, 1], 2.5), lambda x: F.pad(x, [1, 0, 0, 1], value=2.5), X4),
    (nn.ReplicationPad2D(2), lambda x: F.pad(x, [2] * 4, "replicate"), X4),
    (nn.ReflectionPad2D([1, 1, 2, 2]), lambda x: F.pad(x, [1, 1, 2, 2], "reflect"), X4),
    (nn.CircularPad2D(1), lambda x: F.pad(x, [1] * 4, "circular"), X4),
    (nn.Unfold(2, strides=2), lambda x: F.unfold(x, 2, 2), X4),
    (nn.Dropout(0.5), lambda x: x, X4),  # eval mode below: identity
    (nn.Dropout2D(0.5), lambda x: x, X4), (nn.AlphaDropout(0.5), lambda x: x, X4),
]


@pytest.mark.parametrize("layer,fn,x", WRAPPERS, ids=lambda v: type(v).__name__
                         if isinstance(v, nn.Layer) else "")
def test_layer_equals_functional(layer, fn, x):
    layer.eval()
    same(layer(x), fn(x))


def test_one_dim_and_three_dim_variants():
    x1, x3 = fw.abs(rnd(2, 4, 8)) + 0.1, fw.abs(rnd(1, 2, 4, 4, 4)) + 0.1
    same(nn.MaxPool1D(2)(x1), F.max_pool1d(x1, 2))
    same(nn.AvgPool1D(2)(x1), F.avg_pool1d(x1, 2))
    same(nn.LPPool1D(2, 2)(x1), F.lp_pool1d(x1, 2, 2))
    same(nn.AdaptiveAvgPool1D(3)(x1), F.adaptive_avg_pool1d(x1, 3))
    same(nn.AdaptiveMaxPool1D(3)(x1), F.adaptive_max_pool1d(x1, 3))
    same(nn.MaxPool3D(2)(x3), F.max_pool3d(x3, 2))
    same(nn.AvgPool3D(2)(x3), F.avg_pool3d(x3, 2))
    same(nn.AdaptiveAvgPool3D(2)(x3), F.adaptive_avg_pool3d(x3, 2))
    same(nn.AdaptiveMaxPool3D(2)(x3), F.adaptive_max_pool3d(x3, 2))
    same(nn.InstanceNorm1D(4)(x1), F.instance_norm(x1))
    same(nn.InstanceNorm3D(2)(x3), F.instance_norm(x3))
    same(nn.Pad1D([1, 2], mode="replicate")(x1), F.pad(x1, [1, 2], "replicate",
                                                       data_format="NCL"))
    same(nn.Pad3D(1)(x3), F.pad(x3, [1] * 6, data_format="NCDHW"))
    same(nn.ZeroPad1D(1)(x1), F.pad(x1, [1, 1], data_format="NCL"))
    same(nn.ReflectionPad3D(1)(x3), F.pad(x3, [1] * 6, "reflect", data_format="NCDHW"))
    same(nn.ConstantPad1D(2, 1.0)(x1), F.pad(x1, [2, 2], value=1.0, data_format="NCL"))
    same(nn.CircularPad3D(1)(x3), F.pad(x3, [1] * 6, "circular", data_format="NCDHW"))
    for mp, up, x in ((nn.MaxPool1D(2, return_mask=True), nn.MaxUnPool1D(2), x1),
                      (nn.MaxPool3D(2, return_mask=True), nn.MaxUnPool3D(2), x3)):
        out, idx = mp(x)
        back = up(out, idx)
        assert back.shape == x.shape
        np.testing.assert_allclose(np.sort(back.numpy().ravel())[-out.size:],
                                   np.sort(out.numpy().ravel()))
    # output_size given to forward wins over the default, and over the constructor's
    out, idx = nn.MaxPool2D(2, return_mask=True)(X4)
    assert nn.MaxUnPool2D(2)(out, idx, output_size=[7, 7]).shape == [2, 4, 7, 7]
    fixed = nn.MaxUnPool2D(2, output_size=[7, 6])
    assert fixed(out, idx).shape == [2, 4, 7, 6]
    assert fixed(out, idx, output_size=[6, 7]).shape == [2, 4, 6, 7]


@pytest.mark.parametrize("kw,shape", [
    ({}, [2, 6, 6, 6]), ({"stride": 2}, [2, 6, 3, 3]), ({"padding": 1}, [2, 6, 8, 8]),
    ({"padding": "SAME", "stride": 2}, [2, 6, 4, 4]), ({"dilation": 2}, [2, 6, 4, 4]),
    ({"groups": 2}, [2, 6, 6, 6]), ({"padding": [1, 0, 2, 1]}, [2, 6, 7, 9]),
    ({"bias_attr": False}, [2, 6, 6, 6]), ({"data_format": "NHWC"}, [2, 6, 6, 6]),
    ({"padding": 1, "padding_mode": "circular"}, [2, 6, 8, 8])])
def test_conv2d_shapes(kw, shape):
    x = rnd(2, 8, 8, 4) if kw.get("data_format") == "NHWC" else rnd(2, 4, 8, 8)
    m = nn.Conv2D(4, 6, 3, **kw)
    assert m(x).shape == shape
    assert m.weight.shape == [6, 4 // kw.get("groups", 1), 3, 3]
    assert (m.bias is None) == (kw.get("bias_attr") is False)
    ref = F.conv2d(x, m.weight, m.bias, kw.get("stride", 1), kw.get("padding", 0),
                   kw.get("dilation", 1), kw.get("groups", 1), kw.get("data_format", "NCHW"))
    if "padding_mode" not in kw:
        same(m(x), ref, 1e-5)


def test_conv_1d_3d_and_transposes():
    assert nn.Conv1D(3, 2, 3)(rnd(1, 3, 4)).shape == [1, 2, 2]
    assert nn.Conv1D(3, 2, 3, data_format="NLC")(rnd(1, 4, 3)).shape == [1, 2, 2]
    assert nn.Conv3D(4, 6, (3, 3, 3))(rnd(2, 4, 8, 8, 8)).shape == [2, 6, 6, 6, 6]
    t1 = nn.Conv1DTranspose(2, 1, 2)
    assert t1.weight.shape == [2, 1, 2] and t1(rnd(1, 2, 4)).shape == [1, 1, 5]
    t2 = nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1, output_padding=1)
    assert t2(X4).shape == [2, 6, 12, 12]
    t2b = nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1)
    assert t2b(X4, output_size=[12, 12]).shape == [2, 6, 12, 12]
    with pytest.raises(InvalidArgumentError, match="exclusive"):
        t2(X4, output_size=[11, 11])
    t3 = nn.Conv3DTranspose(2, 4, 2, stride=2, groups=2)
    assert t3.weight.shape == [2, 2, 2, 2, 2] and t3(rnd(1, 2, 3, 3, 3)).shape == [1, 4, 6, 6, 6]
    # the example of Paddle's Conv1D docstring
    conv = nn.Conv1D(3, 2, 3)
    conv.weight.set_value(np.array([[[9, 3, 4], [0, 0, 7], [2, 5, 6]],
                                    [[0, 3, 4], [2, 9, 7], [5, 6, 8]]], np.float32))
    x = fw.to_tensor([[[4, 8, 1, 9], [7, 2, 0, 9], [6, 9, 2, 6]]], dtype="float32")
    assert conv(x).tolist() == [[[133.0, 238.0], [160.0, 211.0]]]
    with pytest.raises(InvalidArgumentError, match="groups"):
        nn.Conv2D(4, 6, 3, groups=4)
    with pytest.raises(InvalidArgumentError, match="padding_mode"):
        nn.Conv2D(4, 6, 3, padding_mode="mirror")


@pytest.mark.parametrize("padding,widths", [
    ([1, 0, 2, 1], ((1, 0), (2, 1))),  # [top, bottom, left, right], as with zero padding
    ([2, 1], ((2, 2), (1, 1))),  # one per spatial axis
    (1, ((1, 1), (1, 1))),
])
def test_conv_padding_mode_with_per_side_padding(padding, widths):
    # a non-zero padding_mode pads x by the same widths zero padding would, then
    # convolves unpadded
    x = rnd(1, 2, 5, 6)
    m = nn.Conv2D(2, 3, 3, padding=padding, padding_mode="replicate")
    xp = np.pad(x.numpy(), ((0, 0), (0, 0)) + widths, mode="edge")
    same(m(x), F.conv2d(fw.to_tensor(xp), m.weight, m.bias), 1e-5)


def test_conv_one_element_lists_apply_to_every_axis():
    # fw reads [k] like k for every spatial axis (Paddle wants an int or one per axis)
    r = nn.Conv2D(2, 3, 3, padding=[1], padding_mode="reflect")  # padding too
    x = rnd(1, 2, 4, 5)
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    same(r(x), F.conv2d(fw.to_tensor(xp), r.weight, r.bias), 1e-5)
    m = nn.Conv2D(2, 3, [3], stride=[2], dilation=[1])
    assert m.weight.shape == [3, 2, 3, 3] and m._stride == [2, 2]
    x = rnd(1, 2, 7, 7)
    same(m(x), F.conv2d(x, m.weight, m.bias, stride=2), 1e-5)


def test_linear_bilinear_embedding_layers():
    lin = nn.Linear(4, 3)
    x = rnd(5, 4)
    same(lin(x), F.linear(x, lin.weight, lin.bias))
    assert lin.weight.shape == [4, 3] and lin.bias.shape == [3]
    bil = nn.Bilinear(5, 4, 7)
    a, b = rnd(3, 5), rnd(3, 4)
    assert bil.weight.shape == [7, 5, 4] and bil.bias.shape == [1, 7]
    same(bil(a, b), F.bilinear(a, b, bil.weight, bil.bias))
    emb = nn.Embedding(10, 3, padding_idx=-1)
    ids = fw.to_tensor([[1, 9], [0, 2]])
    out = emb(ids)
    assert out.shape == [2, 2, 3] and np.all(out.numpy()[0, 1] == 0)
    assert "padding_idx=9" in repr(emb)


def test_dropout_layers_follow_training_mode():
    fw.seed(0)
    x = fw.ones([100, 8])
    for layer in (nn.Dropout(0.5), nn.Dropout(0.5, axis=0), nn.AlphaDropout(0.5),
                  nn.FeatureAlphaDropout(0.5)):
        layer.train()
        assert not np.allclose(layer(x).numpy(), 1.0)
        layer.eval()
        same(layer(x), x)
    d2 = nn.Dropout2D(0.5)
    assert not np.allclose(d2(fw.ones([4, 8, 2, 2])).numpy(), 1.0)
    d3 = nn.Dropout3D(0.5).eval()
    same(d3(fw.ones([1, 2, 2, 2, 2])), fw.ones([1, 2, 2, 2, 2]))
    assert nn.Dropout1D(0.5)(fw.ones([3, 4, 5])).shape == [3, 4, 5]


def test_norm_layers_parameters_and_errors():
    gn = nn.GroupNorm(2, 4, weight_attr=False)
    assert gn.weight is None and gn.bias is not None
    inorm = nn.InstanceNorm2D(4, weight_attr=False)
    assert inorm.scale is None and inorm.bias is None
    assert [n for n, _ in nn.InstanceNorm2D(4).named_parameters()] == ["scale", "bias"]
    ln = nn.LayerNorm(6, weight_attr=False, bias_attr=False)
    assert ln.parameters() == []
    # True means a default attribute (Paddle's ParamAttr._to_attr(True))
    ln = nn.LayerNorm(6, weight_attr=True, bias_attr=True)
    assert [n for n, _ in ln.named_parameters()] == ["weight", "bias"]
    bn = nn.BatchNorm2D(4, weight_attr=False)
    assert bn.weight.stop_gradient and bn.weight.tolist() == [1.0] * 4
    with pytest.raises(InvalidArgumentError, match="4-D"):
        nn.BatchNorm2D(4)(rnd(2, 4))
    with pytest.raises(InvalidArgumentError, match="divide"):
        nn.GroupNorm(3, 4)
    old = nn.BatchNorm(4, act="relu")
    out = old(X4)
    assert np.all(out.numpy() >= 0) and out.shape == X4.shape
    bn3 = nn.BatchNorm3D(2)
    assert bn3(rnd(2, 2, 3, 3, 3)).shape == [2, 2, 3, 3, 3]
    nhwc = nn.BatchNorm2D(4, data_format="NHWC")
    y = nhwc(rnd(8, 3, 3, 4))
    np.testing.assert_allclose(y.numpy().mean((0, 1, 2)), 0, atol=1e-5)
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2D(4)))
    assert isinstance(sync[0], nn.SyncBatchNorm) and sync[0](X4).shape == X4.shape
    # channel-last SyncBatchNorm normalises the last axis at every rank (one process:
    # plain batch statistics)
    for fmt, shape in (("NLC", (5, 3, 4)), ("NHWC", (4, 2, 3, 4)), ("NDHWC", (2, 2, 2, 3, 4))):
        x = rnd(*shape)
        xs = x.numpy().reshape(-1, 4)
        ref = (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 1e-5)
        same(nn.SyncBatchNorm(4, data_format=fmt)(x), fw.to_tensor(ref.reshape(shape)), 1e-4)
        same(nn.BatchNorm(4, data_layout=fmt)(x), fw.to_tensor(ref.reshape(shape)), 1e-4)
    sn = nn.SpectralNorm([6, 4], power_iters=20)
    w = rnd(6, 4)
    normed = sn(w)
    assert abs(np.linalg.svd(normed.numpy(), compute_uv=False)[0] - 1.0) < 1e-3


# the input ranks each norm layer accepts, as Paddle 3.3.1's do (SyncBatchNorm, which
# Paddle runs only on GPU: 2-D to 5-D, its documented range)
NORM_RANKS = {"BatchNorm1D": [2, 3], "BatchNorm2D": [4], "BatchNorm3D": [5],
              "BatchNorm": [2, 3, 4, 5], "SyncBatchNorm": [2, 3, 4, 5],
              "InstanceNorm1D": [2, 3], "InstanceNorm2D": [4], "InstanceNorm3D": [5]}


@pytest.mark.parametrize("make", [
    lambda: nn.LayerNorm(4), lambda: nn.GroupNorm(2, 4), lambda: nn.BatchNorm2D(4),
    lambda: nn.InstanceNorm2D(4), lambda: nn.RMSNorm(4), lambda: nn.BatchNorm(4),
    lambda: nn.LocalResponseNorm(3)])
def test_norm_layers_start_as_the_identity_affine_map(make):
    # every scale starts at 1 and every shift at 0 (Paddle's and PyTorch's defaults)
    for name, p in make().named_parameters():
        want = 0.0 if name.endswith("bias") else 1.0
        assert np.all(p.numpy() == want), name


@pytest.mark.parametrize("name", sorted(NORM_RANKS))
def test_norm_layers_accept_their_input_ranks(name):
    ok = []
    for rank in range(1, 7):
        x = rnd(*([3, 4] + [3] * (rank - 2) if rank >= 2 else [4]))
        try:
            out = getattr(nn, name)(4)(x)
        except InvalidArgumentError:
            continue
        assert out.shape == x.shape
        ok.append(rank)
    assert ok == NORM_RANKS[name]


@pytest.mark.parametrize("name", ["ConstantPad1D", "ReflectionPad2D", "ReplicationPad3D",
                                  "CircularPad2D", "ZeroPad2D"])
def test_fixed_mode_pad_classes_carry_their_names(name):
    cls = getattr(nn, name)
    assert cls.__name__ == cls.__qualname__ == name
    assert repr(cls(1)).startswith(name + "(")


def test_prelu_and_rrelu_layers():
    p = nn.PReLU(4, init=0.1)
    same(p(X4), F.prelu(X4, p.weight))
    assert p.weight.shape == [4] and "num_parameters=4" in repr(p)
    r = nn.RReLU(0.1, 0.3)
    r.eval()
    same(r(X4), F.rrelu(X4, 0.1, 0.3, training=False))


def test_loss_layers_equal_functionals():
    rng = np.random.default_rng(0)
    logits = rnd(6, 4)
    label = fw.to_tensor(rng.integers(0, 4, [6]))
    same(nn.CrossEntropyLoss()(logits, label), F.cross_entropy(logits, label))
    same(nn.CrossEntropyLoss(label_smoothing=0.1, reduction="sum")(logits, label),
         F.cross_entropy(logits, label, reduction="sum", label_smoothing=0.1))
    lsm = F.log_softmax(logits)
    same(nn.NLLLoss()(lsm, label), F.nll_loss(lsm, label))
    a, b = rnd(6, 4, seed=1), rnd(6, 4, seed=2)
    same(nn.MSELoss()(a, b), F.mse_loss(a, b))
    same(nn.L1Loss("sum")(a, b), F.l1_loss(a, b, "sum"))
    same(nn.SmoothL1Loss(delta=0.5)(a, b), F.smooth_l1_loss(a, b, delta=0.5))
    p = F.sigmoid(a)
    y = (b > 0).astype("float32")
    same(nn.BCELoss()(p, y), F.binary_cross_entropy(p, y))
    same(nn.BCEWithLogitsLoss(pos_weight=fw.full([4], 2.0))(a, y),
         F.binary_cross_entropy_with_logits(a, y, pos_weight=fw.full([4], 2.0)))
    same(nn.KLDivLoss("batchmean")(lsm, F.softmax(b)),
         F.kl_div(lsm, F.softmax(b), "batchmean"))
    sgn = y * 2 - 1
    same(nn.MarginRankingLoss(0.1)(a, b, sgn), F.margin_ranking_loss(a, b, sgn, 0.1))
    c = rnd(6, 4, seed=3)
    same(nn.TripletMarginLoss(swap=True)(a, b, c), F.triplet_margin_loss(a, b, c, swap=True))
    same(nn.TripletMarginWithDistanceLoss(margin=0.5)(a, b, c),
         F.triplet_margin_with_distance_loss(a, b, c, margin=0.5))
    lab = fw.to_tensor([1, -1, 1, -1, 1, 1])
    same(nn.CosineEmbeddingLoss(0.2)(a, b, lab), F.cosine_embedding_loss(a, b, lab, 0.2))
    same(nn.HingeEmbeddingLoss()(a, sgn), F.hinge_embedding_loss(a, sgn))
    same(nn.PoissonNLLLoss()(a, fw.abs(b)), F.poisson_nll_loss(a, fw.abs(b)))
    same(nn.GaussianNLLLoss()(a, b, fw.abs(c)), F.gaussian_nll_loss(a, b, fw.abs(c)))
    same(nn.SoftMarginLoss()(a, sgn), F.soft_margin_loss(a, sgn))
    same(nn.MultiLabelSoftMarginLoss()(a, y), F.multi_label_soft_margin_loss(a, y))
    same(nn.MultiMarginLoss(margin=0.5)(a, label), F.multi_margin_loss(a, label, margin=0.5))
    ctc_in = rnd(5, 2, 3)
    lbl = fw.to_tensor([[1, 2], [2, 1]], dtype="int32")
    lens = fw.to_tensor([5, 4])
    llens = fw.to_tensor([2, 2])
    same(nn.CTCLoss()(ctc_in, lbl, lens, llens), F.ctc_loss(ctc_in, lbl, lens, llens))
    hs = nn.HSigmoidLoss(4, 6)
    assert hs.weight.shape == [5, 4] and hs.bias.shape == [5, 1]
    ids = fw.to_tensor([0, 1, 4, 5, 2, 3])
    same(hs(a, ids), F.hsigmoid_loss(a, ids, 6, hs.weight, hs.bias))
    with pytest.raises(InvalidArgumentError, match="reduction"):
        nn.MSELoss("avg")


def test_distance_and_similarity_layers():
    a, b = rnd(3, 5), rnd(3, 5, seed=1)
    same(nn.PairwiseDistance(p=1)(a, b), F.pairwise_distance(a, b, p=1))
    same(nn.CosineSimilarity(axis=1)(a, b), F.cosine_similarity(a, b, axis=1))
    fold = nn.Fold([4, 5], 2)
    assert fold(rnd(2, 12, 12)).shape == [2, 3, 4, 5]


def test_upsample_data_format_and_repr():
    up = nn.Upsample(size=[12, 12])
    assert up(x=rnd(2, 3, 6, 10)).shape == [2, 3, 12, 12]
    assert "size=[12, 12]" in repr(up)
    assert nn.Upsample(scale_factor=2, data_format="NHWC")(rnd(1, 3, 3, 2)).shape == [1, 6, 6, 2]
