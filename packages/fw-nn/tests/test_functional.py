"""fw.nn.functional against NumPy formulas on fixed inputs, and the Paddle argument
forms (data_format, padding layouts, reductions, dtype arguments)."""

import math

import numpy as np
import pytest
from scipy import special

import fw
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F

X = np.array([[-3.0, -1.0, -0.25, 0.0], [0.5, 1.0, 2.5, 25.0]])


def t(a, dtype=None):
    return fw.to_tensor(np.asarray(a), dtype=dtype)


def check(out, expect, tol=1e-6):
    np.testing.assert_allclose(out.numpy(), expect, rtol=tol, atol=tol)


def sig(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = [
    (F.relu, {}, lambda x: np.maximum(x, 0)),
    (F.relu6, {}, lambda x: np.clip(x, 0, 6)),
    (F.leaky_relu, {"negative_slope": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    (F.elu, {"alpha": 0.5}, lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (F.celu, {"alpha": 0.2}, lambda x: np.maximum(x, 0) + np.minimum(0, 0.2 * np.expm1(x / 0.2))),
    (F.selu, {}, lambda x: 1.0507009873554805 * np.where(x > 0, x,
                                                         1.6732632423543772 * np.expm1(x))),
    (F.gelu, {}, lambda x: 0.5 * x * (1 + special.erf(x / math.sqrt(2)))),
    (F.gelu, {"approximate": "tanh"},
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (F.silu, {}, lambda x: x * sig(x)),
    (F.swish, {}, lambda x: x * sig(x)),
    (F.mish, {}, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (F.hardswish, {}, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (F.hardsigmoid, {}, lambda x: np.clip(x * 0.1666667 + 0.5, 0, 1)),
    (F.hardtanh, {"min": -0.5, "max": 2.0}, lambda x: np.clip(x, -0.5, 2.0)),
    (F.hardshrink, {"threshold": 0.5}, lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    (F.softshrink, {"threshold": 0.5},
     lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    (F.softplus, {"beta": 2, "threshold": 20},
     lambda x: np.where(2 * x > 20, x, np.log1p(np.exp(2 * x)) / 2)),
    (F.softsign, {}, lambda x: x / (1 + np.abs(x))),
    (F.tanhshrink, {}, lambda x: x - np.tanh(x)),
    (F.log_sigmoid, {}, lambda x: np.log(sig(x))),
    (F.thresholded_relu, {"threshold": 0.75, "value": -1.0}, lambda x: np.where(x > 0.75, x, -1)),
    (F.sigmoid, {}, sig),
    (F.tanh, {}, np.tanh),
    (F.softmax, {"axis": 0}, lambda x: np.exp(x) / np.exp(x).sum(0)),
    (F.log_softmax, {}, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    (F.glu, {}, lambda x: x[:, :2] * sig(x[:, 2:])),
    (F.maxout, {"groups": 2, "axis": 1}, lambda x: x.reshape(2, 2, 2).max(-1)),
    (F.swiglu, {}, lambda x: x[:, :2] * sig(x[:, :2]) * x[:, 2:]),
]


@pytest.mark.parametrize("fn,kw,ref", ACTIVATIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_activations_match_formulas(fn, kw, ref):
    check(fn(t(X), **kw), ref(X), 1e-5)


def test_activation_variants():
    x = t([[1.0, 2.0], [3.0, 4.0]])
    check(F.softmax(x, dtype="float64"), np.exp([[1, 2], [3, 4]]) / np.exp(
        [[1, 2], [3, 4]]).sum(-1, keepdims=True))
    assert F.softmax(x, dtype="float64").dtype == fw.float64
    check(F.prelu(t([[-2.0, 1.0], [-4.0, -1.0]]), t([0.5, 0.25])), [[-1.0, 1.0], [-2.0, -0.25]])
    check(F.prelu(t([[-2.0, -1.0]]).reshape([1, 1, 2]), t([0.5]), data_format="NLC"),
          [[[-1.0, -0.5]]])
    check(F.swiglu(x, x), (x.numpy() * sig(x.numpy())) * x.numpy())
    # rrelu: random slopes while training, their mean in eval
    fw.seed(0)
    y = F.rrelu(t(-np.ones([1000])), 0.1, 0.3)
    assert np.all((-y.numpy() >= 0.1) & (-y.numpy() <= 0.3)) and y.numpy().std() > 0.03
    check(F.rrelu(t([-1.0, 2.0]), 0.1, 0.3, training=False), [-0.2, 2.0])
    # gumbel_softmax: rows sum to 1; hard gives one-hot
    g = F.gumbel_softmax(t(np.zeros([5, 4])), hard=True)
    assert np.all(g.numpy().sum(-1) == 1) and set(np.unique(g.numpy())) == {0.0, 1.0}
    with pytest.raises(InvalidArgumentError, match="approximate"):
        F.gelu(x, approximate="fast")


def test_inplace_variants_write_into_x():
    x = t([-1.0, 2.0])
    assert F.relu_(x) is x and x.tolist() == [0.0, 2.0]
    y = t([-1.0, 3.0])
    F.hardtanh_(y)
    assert y.tolist() == [-1.0, 1.0]
    z = t([0.0, 0.0])
    F.softmax_(z)
    assert z.tolist() == [0.5, 0.5]
    w = t([1.0])
    out = F.silu(w, inplace=True)
    assert out is w and abs(w.item() - sig(1.0)) < 1e-6


# ---------------------------------------------------------------- losses
def test_regression_losses():
    a, b = np.array([[1.5, 0.8], [0.2, 1.3]]), np.array([[1.7, 1.0], [0.4, 0.5]])
    check(F.mse_loss(t(a), t(b)), ((a - b) ** 2).mean())
    check(F.mse_loss(t(a), t(b), "sum"), ((a - b) ** 2).sum())
    check(F.l1_loss(t(a), t(b), "none"), np.abs(a - b))
    d = a - b
    huber = np.where(np.abs(d) < 0.5, 0.5 * d * d, 0.5 * np.abs(d) - 0.125)
    check(F.smooth_l1_loss(t(a), t(b), delta=0.5), huber.mean())
    check(F.square_error_cost(t(a), t(b)), d * d)
    check(F.log_loss(t([[0.7]]), t([[1.0]])), [[-math.log(0.7001)]], 1e-5)
    with pytest.raises(InvalidArgumentError, match="reduction"):
        F.mse_loss(t(a), t(b), "avg")


def test_cross_entropy_forms():
    logits = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3], [0.1, 0.2, 3.0]])
    lsm = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    label = np.array([0, 1, 2])
    check(F.cross_entropy(t(logits), t(label)), -lsm[[0, 1, 2], label].mean())
    check(F.cross_entropy(t(logits), t(label[:, None]), reduction="none"),
          -lsm[[0, 1, 2], label][:, None])
    w = np.array([1.0, 2.0, 3.0])
    per = -lsm[[0, 1, 2], label] * w[label]
    check(F.cross_entropy(t(logits), t(label), weight=t(w)), per.sum() / w[label].sum())
    ignored = np.array([0, -100, 2])
    keep = ignored != -100
    check(F.cross_entropy(t(logits), t(ignored), ignore_index=-100, reduction="sum"),
          -lsm[[0, 2], [0, 2]].sum())
    assert keep.sum() == 2
    soft = np.full([3, 3], 1 / 3)
    check(F.cross_entropy(t(logits), t(soft), soft_label=True), -(soft * lsm).sum(-1).mean())
    smooth = np.eye(3)[label] * 0.8 + 0.2 / 3
    check(F.cross_entropy(t(logits), t(label), label_smoothing=0.2),
          -(smooth * lsm).sum(-1).mean())
    probs = np.exp(lsm)
    check(F.cross_entropy(t(probs), t(label), use_softmax=False),
          -np.log(probs[[0, 1, 2], label]).mean(), 1e-5)
    # classes on axis 1 of a [N, C, L] input
    x3 = np.random.default_rng(0).standard_normal([2, 3, 4])
    l3 = np.random.default_rng(1).integers(0, 3, [2, 4])
    ls3 = x3 - np.log(np.exp(x3).sum(1, keepdims=True))
    ref = -np.take_along_axis(ls3, l3[:, None], 1)[:, 0].mean()
    check(F.cross_entropy(t(x3), t(l3), axis=1), ref, 1e-5)
    check(F.cross_entropy(t(x3), t(l3), axis=1, label_smoothing=0.1),
          -((np.moveaxis(np.eye(3)[l3], -1, 1) * 0.9 + 0.1 / 3) * ls3).sum(1).mean(), 1e-5)
    for bad in (-0.1, 1.5):  # outside Paddle's documented [0, 1]
        with pytest.raises(InvalidArgumentError, match="label_smoothing"):
            F.cross_entropy(t(x3), t(l3), axis=1, label_smoothing=bad)
    loss, sm = F.softmax_with_cross_entropy(t(logits), t(label[:, None]), return_softmax=True)
    assert loss.shape == [3, 1]
    check(sm, np.exp(lsm))


def test_nll_bce_kl_and_margin_losses():
    logp = np.log(np.array([[0.2, 0.8], [0.6, 0.4]]))
    check(F.nll_loss(t(logp), t([1, 0])), -(logp[0, 1] + logp[1, 0]) / 2)
    p, y = np.array([0.5, 0.6, 0.7]), np.array([1.0, 0.0, 1.0])
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    check(F.binary_cross_entropy(t(p), t(y)), bce.mean())
    z = np.array([-1.0, 0.5, 2.0])
    bcel = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
    check(F.binary_cross_entropy_with_logits(t(z), t(y), reduction="none"), bcel)
    pw = 2.0
    check(F.binary_cross_entropy_with_logits(t(z), t(y), pos_weight=t([pw] * 3),
                                             reduction="none"),
          pw * y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z))
    # soft labels tell Paddle 3.x's placement of pos_weight (the label term only) from
    # Paddle 2.4's (the whole term); with 0/1 labels the two agree
    ys = np.array([0.25, 0.5, 0.75])
    check(F.binary_cross_entropy_with_logits(t(z), t(ys), pos_weight=t([pw] * 3),
                                             reduction="none"),
          pw * ys * np.logaddexp(0, -z) + (1 - ys) * np.logaddexp(0, z))
    lab = np.array([[0.3, 0.7]])
    inp = np.log(np.array([[0.5, 0.5]]))
    kl = lab * (np.log(lab) - inp)
    check(F.kl_div(t(inp), t(lab), reduction="sum"), kl.sum())
    check(F.kl_div(t(inp), t(np.log(lab)), reduction="none", log_target=True), kl)
    check(F.margin_ranking_loss(t([1.0, 2.0]), t([2.0, 1.0]), t([1.0, -1.0]), margin=0.5),
          np.mean([1.5, 1.5]))


def test_embedding_losses():
    x1 = np.array([[1.6, 1.2, -0.5], [3.2, 2.6, -5.8]])
    x2 = np.array([[0.5, 0.5, -1.8], [2.3, -1.4, 1.1]])
    cos = (x1 * x2).sum(-1) / np.sqrt((x1 ** 2).sum(-1) * (x2 ** 2).sum(-1))
    out = F.cosine_embedding_loss(t(x1), t(x2), t([1, -1]), margin=0.5, reduction="none")
    check(out, [1 - cos[0], max(cos[1] - 0.5, 0)], 1e-5)
    # Paddle adds 1e-11 to each squared norm: a zero vector has cosine 0, not NaN
    z = np.zeros((2, 3))
    check(F.cosine_embedding_loss(t(z), t(x2), t([1, -1]), margin=-0.25, reduction="none"),
          [1.0, 0.25], 1e-6)
    check(F.cosine_embedding_loss(t(x1), t(z), t([1, -1]), margin=-0.25, reduction="none"),
          [1.0, 0.25], 1e-6)
    a, p, n = np.eye(3), np.eye(3) * 2, np.ones([3, 3])

    def dist(u, v):
        return np.sqrt(((u - v + 1e-6) ** 2).sum(-1))

    ref = np.maximum(dist(a, p) - dist(a, n) + 1.0, 0)
    check(F.triplet_margin_loss(t(a), t(p), t(n), reduction="none"), ref, 1e-5)
    custom = F.triplet_margin_with_distance_loss(
        t(a), t(p), t(n), distance_function=lambda u, v: ((u - v) ** 2).sum(-1),
        margin=0.0, reduction="none")
    check(custom, np.maximum(((a - p) ** 2).sum(-1) - ((a - n) ** 2).sum(-1), 0))
    check(F.hinge_embedding_loss(t([0.3, 2.0]), t([1.0, -1.0]), reduction="none"),
          [0.3, 0.0])


def test_probabilistic_losses():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.0, 3.0])
    check(F.poisson_nll_loss(t(x), t(y), reduction="none"), np.exp(x) - y * x, 1e-5)
    pos = np.array([0.5, 1.5, 2.0])
    check(F.poisson_nll_loss(t(pos), t(y), log_input=False, reduction="none"),
          pos - y * np.log(pos + 1e-8), 1e-5)
    var = np.array([0.5, 1.0, 2.0])
    check(F.gaussian_nll_loss(t(x), t(y), t(var), reduction="none"),
          0.5 * (np.log(var) + (x - y) ** 2 / var), 1e-5)
    with pytest.raises(InvalidArgumentError, match="negative"):
        F.gaussian_nll_loss(t(x), t(y), t(-var))
    # Paddle's variance shapes: input's, input's without the last axis, or that axis 1
    rng = np.random.default_rng(4)
    x3, y3 = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    v3 = rng.uniform(0.5, 2.0, size=(2, 3, 1))
    want = 0.5 * (np.log(v3) + (x3 - y3) ** 2 / v3)
    check(F.gaussian_nll_loss(t(x3), t(y3), t(v3), reduction="none"), want, 1e-5)
    check(F.gaussian_nll_loss(t(x3), t(y3), t(v3[..., 0]), reduction="none"), want, 1e-5)
    for bad in ((2, 3, 2), (3, 3, 1), (2, 1, 1)):
        with pytest.raises(InvalidArgumentError, match="variance"):
            F.gaussian_nll_loss(t(x3), t(y3), t(np.ones(bad)))
    # a zero variance is allowed (only negative ones are refused): clipped to epsilon
    check(F.gaussian_nll_loss(t(x), t(y), t([0.0, 1.0, 2.0]), epsilon=1e-3, reduction="none"),
          0.5 * (np.log([1e-3, 1.0, 2.0]) + (x - y) ** 2 / np.array([1e-3, 1.0, 2.0])), 1e-5)
    check(F.soft_margin_loss(t(x), t([1.0, -1.0, 1.0]), "none"),
          np.log1p(np.exp(-np.array([1.0, -1.0, 1.0]) * x)), 1e-5)


def test_focal_dice_npair_hsigmoid_ctc():
    z, y = np.array([[0.2, -1.0]]), np.array([[1.0, 0.0]])
    p = sig(z)
    ce = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
    pt = p * y + (1 - p) * (1 - y)
    at = 0.25 * y + 0.75 * (1 - y)
    check(F.sigmoid_focal_loss(t(z), t(y)), (at * ce * (1 - pt) ** 2).sum(), 1e-5)
    probs = np.array([[[0.7, 0.3], [0.2, 0.8]]])
    lab = np.array([[[0], [1]]])
    inter = 0.7 + 0.8
    check(F.dice_loss(t(probs), t(lab)), 1 - 2 * inter / (probs.sum() + 2 + 1e-5), 1e-5)
    anchor, positive = np.eye(2), np.eye(2)
    sim = anchor @ positive.T
    lsm = sim - np.log(np.exp(sim).sum(-1, keepdims=True))
    ref = -np.diag(lsm).mean() + 0.25 * 0.002 * 2.0
    check(F.npair_loss(t(anchor), t(positive), t([0, 1])), ref, 1e-5)
    fw.seed(0)
    out = F.hsigmoid_loss(fw.randn([4, 3]), t([0, 1, 4, 5]), 6, fw.randn([5, 3]))
    assert out.shape == [4, 1] and np.all(out.numpy() > 0)
    logits = fw.randn([5, 2, 3])
    loss = F.ctc_loss(logits, t([[1, 2], [1, 1]], "int32"), t([5, 5]), t([2, 2]),
                      reduction="none")
    assert loss.shape == [2] and np.all(loss.numpy() > 0)
    mean = F.ctc_loss(logits, t([[1, 2], [1, 1]], "int32"), t([5, 5]), t([2, 2]))
    check(mean, (loss.numpy() / 2).mean(), 1e-5)


def test_dropout_probability_must_be_in_the_unit_interval():
    for p in (-0.1, 1.5):
        with pytest.raises(InvalidArgumentError, match="'p'"):
            F.dropout(t(np.ones(4)), p)
    assert F.dropout(t(np.ones(4)), 1).tolist() == [0.0] * 4  # 1 is allowed: all dropped


def test_interpolate_recomputed_scale_applies_to_every_spatial_axis():
    # a single scale_factor with recompute_scale_factor: the size is floor(d * s) per axis
    x = t(np.arange(6.0).reshape(1, 1, 2, 3))
    out = F.interpolate(x, scale_factor=1.5, recompute_scale_factor=True)
    assert out.shape == [1, 1, 3, 4]
    # linear, align_corners=False: the source of output i is (i + 0.5) * r - 0.5 with
    # r = 1 / scale_factor as given (Paddle 3.3.1: 0, 5, 11.67, 18.33), or r = in / out
    # once the scale is recomputed from the size (0, 6.25, 13.75, 20)
    x = t(np.array([[[0.0, 10.0, 20.0]]]))
    check(F.interpolate(x, scale_factor=1.5, mode="linear", data_format="NCW"),
          [[[0.0, 5.0, 35 / 3, 55 / 3]]], 1e-5)
    check(F.interpolate(x, scale_factor=1.5, mode="linear", data_format="NCW",
                        recompute_scale_factor=True), [[[0.0, 6.25, 13.75, 20.0]]], 1e-5)


def test_npair_loss_against_paddles_formula():
    # batch 3 != feature size 5 and a repeated label: a sum over the wrong axis or a
    # wrong row normalisation of the label pattern changes the value
    rng = np.random.default_rng(3)
    a, p = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    labels = np.array([0, 1, 0])
    same = (labels[:, None] == labels[None, :]).astype(float)
    target = same / same.sum(1, keepdims=True)
    sim = a @ p.T
    lsm = sim - np.log(np.exp(sim).sum(1, keepdims=True))
    ce = -(target * lsm).sum(1).mean()
    l2 = (a ** 2).sum(1).mean() + (p ** 2).sum(1).mean()
    check(F.npair_loss(t(a), t(p), t(labels), l2_reg=0.1), ce + 0.25 * 0.1 * l2, 1e-6)


def test_affine_grid_axis_of_size_one_is_the_centre():
    # a single row (or column) sits at coordinate 0 with and without align_corners
    # (PyTorch's rule; Paddle 3.3.1 gives NaN with align_corners=True)
    theta = t(np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]))
    for ac in (False, True):
        g = F.affine_grid(theta, [1, 1, 1, 3], align_corners=ac).numpy().reshape(3, 2)
        xs = [-1.0, 0.0, 1.0] if ac else [-2 / 3, 0.0, 2 / 3]
        np.testing.assert_allclose(g, np.stack([xs, [0.0] * 3], -1), atol=1e-6)


def test_grid_sample_reflection_without_align_corners():
    # PyTorch's (and Paddle's) rule: with align_corners=False a coordinate reflects
    # about the image's outer edges -0.5 and W - 0.5 (period 2W), then is clamped.
    # W = 4, x = ((g + 1) * W - 1) / 2: g = 2 -> 5.5 -> 1.5; g = 3.5 -> 8.5 -> 0.5;
    # g = -1.5 -> -1.5 -> 0.5; g = 0.25 -> 2 (inside); bilinear over pixels 10, 20, 30, 40
    img = t(np.array([[[[10.0, 20.0, 30.0, 40.0]]]]))
    g = np.array([2.0, 3.5, -1.5, 0.25])
    grid = t(np.stack([g, np.zeros_like(g)], -1).reshape(1, 1, 4, 2))
    out = F.grid_sample(img, grid, padding_mode="reflection", align_corners=False)
    check(out.reshape([4]), [25.0, 15.0, 15.0, 30.0], 1e-5)


def test_grid_sample_nearest_rounds_half_way_taps_to_even():
    # Paddle's and PyTorch's kernels round with nearbyint: x = 0.5 -> 0, 1.5 -> 2,
    # 2.5 -> 2 (half away from zero would give 1, 2, 3)
    img = t(np.array([[[[10.0, 20.0, 30.0, 40.0]]]]))
    # align_corners=False, W = 4: x = ((g + 1) * 4 - 1) / 2, exact in float32 for
    # g = -0.5, 0, 0.5, -1 -> x = 0.5, 1.5, 2.5, -0.5
    g = np.array([-0.5, 0.0, 0.5, -1.0], np.float32)
    grid = t(np.stack([g, np.zeros_like(g)], -1).reshape(1, 1, 4, 2))
    out = F.grid_sample(img, grid, mode="nearest", align_corners=False)
    check(out.reshape([4]), [10.0, 30.0, 30.0, 10.0], 1e-6)


# ---------------------------------------------------------------- padding
def test_pad_forms():
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    # [left, right, top, bottom] on an NCHW tensor
    out = F.pad(t(x), [1, 0, 1, 2], value=-1.0)
    ref = np.pad(x, [(0, 0), (0, 0), (1, 2), (1, 0)], constant_values=-1.0)
    check(out, ref)
    # one (before, after) pair per axis, from the first axis on
    check(F.pad(t(x), [0, 1, 0, 0, 1, 1, 0, 0]),
          np.pad(x, [(0, 1), (0, 0), (1, 1), (0, 0)]))
    # torch order for every axis
    check(F.pad(t(x), [0, 0, 1, 1, 0, 0, 0, 1], pad_from_left_axis=False),
          np.pad(x, [(0, 1), (0, 0), (1, 1), (0, 0)]))
    # fewer pairs pad only the last axes (constant mode)
    check(F.pad(t(x), [2, 1]), np.pad(x, [(0, 0), (0, 0), (0, 0), (2, 1)]))
    for mode, npmode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        check(F.pad(t(x), [1, 1, 1, 0], mode=mode),
              np.pad(x, [(0, 0), (0, 0), (1, 0), (1, 1)], mode=npmode))
    xl = np.moveaxis(x, 1, -1)  # NHWC
    check(F.pad(t(xl), [1, 0, 1, 2], data_format="NHWC"),
          np.pad(xl, [(0, 0), (1, 2), (1, 0), (0, 0)]))
    check(F.pad(t(x), t([1, 1, 0, 0])), np.pad(x, [(0, 0), (0, 0), (0, 0), (1, 1)]))
    check(F.zeropad2d(t(x), [1, 2, 1, 1]), np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 2)]))
    x1 = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    check(F.pad(t(x1), [2, 1], mode="reflect", data_format="NCL"),
          np.pad(x1, [(0, 0), (0, 0), (2, 1)], mode="reflect"))
    with pytest.raises(InvalidArgumentError, match="spatial"):
        F.pad(t(x), [1, 1], mode="reflect")
    with pytest.raises(InvalidArgumentError, match="pairs"):
        F.pad(t(x), [1, 1, 1])


# (shape, data_format, number of pairs, pad_from_left_axis) -> the axis each pair pads,
# as Paddle 3.3.1's F.pad does (recorded by padding one pair at a time): one pair per
# spatial axis follows data_format; any other count in constant mode goes from the
# last axis of x backwards whatever data_format says
PAD_AXES = [
    ((1, 2, 3, 4), "NCHW", 2, True, [3, 2]),
    ((1, 2, 3, 4), "NHWC", 2, True, [2, 1]),
    ((1, 2, 3, 4), "NHWC", 1, True, [3]),
    ((1, 2, 3, 4), "NHWC", 3, True, [3, 2, 1]),
    ((1, 2, 3, 4), "NCHW", 3, True, [3, 2, 1]),
    ((1, 2, 3, 4), "NHWC", 4, False, [3, 2, 1, 0]),
    ((1, 2, 3, 4), "NHWC", 4, True, [0, 1, 2, 3]),
    ((1, 2, 3), "NLC", 1, True, [1]),
    ((1, 2, 3), "NLC", 2, True, [2, 1]),
    ((1, 2, 3, 4, 5), "NDHWC", 3, True, [3, 2, 1]),
    ((1, 2, 3, 4, 5), "NDHWC", 2, True, [4, 3]),
    ((1, 2, 3, 4, 5), "NDHWC", 4, True, [4, 3, 2, 1]),
    ((1, 2, 3, 4, 5), "NCDHW", 4, True, [4, 3, 2, 1]),
]


@pytest.mark.parametrize("shape,fmt,npairs,from_left,axes", PAD_AXES)
def test_pad_pair_order_follows_paddle(shape, fmt, npairs, from_left, axes):
    x = np.zeros(shape, np.float32)
    for i, ax in enumerate(axes):
        pad = [0] * (2 * npairs)
        pad[2 * i] = 1  # one before-element on pair i's axis
        want = list(shape)
        want[ax] += 1
        out = F.pad(t(x), pad, data_format=fmt, pad_from_left_axis=from_left)
        assert out.shape == want, (i, pad)


# ---------------------------------------------------------------- dropout
def test_dropout_modes_and_axes():
    fw.seed(1)
    x = fw.ones([200, 50])
    y = F.dropout(x, 0.3)
    kept = y.numpy() != 0
    assert 0.6 < kept.mean() < 0.8
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.7, rtol=1e-6)
    assert F.dropout(x, 0.3, training=False) is x
    down = F.dropout(x, 0.3, mode="downscale_in_infer")
    assert set(np.unique(down.numpy())) == {0.0, 1.0}
    check(F.dropout(x, 0.3, training=False, mode="downscale_in_infer"), np.full([200, 50], 0.7))
    rows = F.dropout(x, 0.5, axis=0).numpy()  # one draw per row
    assert np.all((rows == 0).all(1) | (rows != 0).all(1))
    assert F.dropout(x, 1.0).numpy().sum() == 0 and F.dropout(x, 0.0).numpy().min() == 1
    ch = F.dropout2d(fw.ones([4, 6, 3, 3]), 0.5).numpy()
    assert np.all((ch == 0).all((2, 3)) | (ch != 0).all((2, 3)))
    ch3 = F.dropout3d(fw.ones([2, 5, 2, 2, 2]), 0.5, data_format="NDHWC").numpy()
    assert np.all((ch3 == 0).all((1, 2, 3)) | (ch3 != 0).all((1, 2, 3)))
    c1 = F.dropout1d(fw.ones([6, 10]), 0.5).numpy()
    assert np.all((c1 == 0).all(1) | (c1 != 0).all(1))
    a = F.alpha_dropout(fw.randn([20000]), 0.2).numpy()
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05  # SELU statistics kept
    with pytest.raises(InvalidArgumentError):
        F.dropout(x, 1.5)


def test_dropout_gradient_uses_the_forward_mask():
    fw.seed(4)
    x = fw.ones([100], dtype="float64")
    x.stop_gradient = False
    y = F.dropout(x, 0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y.numpy() != 0) * 2.0)


# ---------------------------------------------------------------- misc functions
def test_linear_bilinear_embedding_one_hot():
    x, w, b = np.ones([2, 3]), np.arange(12.0).reshape(3, 4), np.arange(4.0)
    check(F.linear(t(x), t(w), t(b)), x @ w + b)
    x1, x2 = np.ones([2, 3]), np.full([2, 2], 2.0)
    wb = np.arange(24.0).reshape(4, 3, 2)
    check(F.bilinear(t(x1), t(x2), t(wb)), np.einsum("ni,oij,nj->no", x1, wb, x2))
    table = np.arange(12.0).reshape(4, 3)
    check(F.embedding(t([[0, 3], [1, 1]]), t(table)), table[[[0, 3], [1, 1]]])
    check(F.embedding(t([0, 2]), t(table), padding_idx=2), [table[0], np.zeros(3)])
    check(F.one_hot(t([1, 0, 2]), 3), np.eye(3)[[1, 0, 2]])
    # max_norm renormalises the looked-up rows in place
    w2 = t(np.array([[3.0, 4.0], [0.3, 0.4]]))
    F.embedding(t([0]), w2, max_norm=1.0)
    np.testing.assert_allclose(w2.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-5)
    # several rows of a wider table, each scaled by its own norm (here the 1-norm)
    w3 = np.array([[3.0, 4.0, 0.0], [1.0, 0.0, 0.0], [0.0, 6.0, 2.0], [4.0, 4.0, 0.0]])
    tw = t(w3)
    out = F.embedding(t([2, 0, 3]), tw, max_norm=2.0, norm_type=1.0)
    want = w3.copy()
    for i in (0, 2, 3):
        want[i] *= 2.0 / (np.abs(w3[i]).sum() + 1e-7)
    np.testing.assert_allclose(tw.numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(out.numpy(), want[[2, 0, 3]], rtol=1e-5)


def test_embedding_gradients_padding_and_frequency():
    w = t(np.ones([4, 2]))
    w.stop_gradient = False
    out = F.embedding(t([1, 1, 3, 0]), w, padding_idx=0)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0], [2, 2], [0, 0], [1, 1]])
    w.clear_grad()
    F.embedding(t([1, 1, 3]), w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0], [1, 1], [0, 0], [1, 1]])


def test_norm_functions():
    rng = np.random.default_rng(0)
    x = rng.standard_normal([2, 3, 4])
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    check(F.layer_norm(t(x), 4), (x - m) / np.sqrt(v + 1e-5), 1e-5)
    check(F.rms_norm(t(x), [4]), x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5), 1e-5)
    w = np.array([1.0, 2.0, -1.0, 0.5])  # a large eps and a weight: both must be used
    check(F.rms_norm(t(x), [4], t(w), eps=0.5),
          x / np.sqrt((x * x).mean(-1, keepdims=True) + 0.5) * w, 1e-5)
    check(F.rms_norm(t(x), [3, 4], eps=0.5),
          x / np.sqrt((x * x).mean((1, 2), keepdims=True) + 0.5), 1e-5)
    gm = x.reshape(2, 3, 4).mean((1, 2), keepdims=True)
    gv = x.var((1, 2), keepdims=True)
    check(F.group_norm(t(x), 1), (x - gm) / np.sqrt(gv + 1e-5), 1e-5)
    im, iv = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    check(F.instance_norm(t(x)), (x - im) / np.sqrt(iv + 1e-5), 1e-5)
    rm, rv = np.array([0.5, 0.0, -1.0]), np.array([1.0, 2.0, 4.0])
    check(F.instance_norm(t(x), t(rm), t(rv), use_input_stats=False),
          (x - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5), 1e-5)
    # the running statistics with an affine map, channel-first and channel-last
    w, b = np.array([2.0, -1.0, 0.5]), np.array([0.1, 0.2, -0.3])
    ref = (x - rm[:, None]) / np.sqrt(rv[:, None] + 1e-3) * w[:, None] + b[:, None]
    check(F.instance_norm(t(x), t(rm), t(rv), t(w), t(b), use_input_stats=False, eps=1e-3),
          ref, 1e-5)
    xl = np.moveaxis(x, 1, -1)
    check(F.instance_norm(t(xl), t(rm), t(rv), t(w), t(b), use_input_stats=False, eps=1e-3,
                          data_format="NLC"), np.moveaxis(ref, 1, -1), 1e-5)
    check(F.normalize(t(x), axis=-1), x / np.linalg.norm(x, axis=-1, keepdims=True), 1e-5)
    check(F.normalize(t(x), p=1, axis=0), x / np.abs(x).sum(0), 1e-5)
    # batch_norm: running statistics are written back only while training
    rmean, rvar = t(np.zeros(3)), t(np.ones(3))
    F.batch_norm(t(x), rmean, rvar, training=False)
    assert rmean.tolist() == [0.0] * 3
    out = F.batch_norm(t(x), rmean, rvar, training=True, momentum=0.5, data_format="NCL")
    bm = x.mean((0, 2))
    np.testing.assert_allclose(rmean.numpy(), 0.5 * bm, rtol=1e-6)
    check(out, (x - bm[:, None]) / np.sqrt(x.var((0, 2))[:, None] + 1e-5), 1e-5)


def test_interpolate_and_resampling_shapes():
    x = fw.ones([2, 3, 4, 6])
    assert F.interpolate(x, size=[8, 9]).shape == [2, 3, 8, 9]
    assert F.interpolate(x, scale_factor=[2, 0.5], mode="bilinear").shape == [2, 3, 8, 3]
    assert F.upsample(x, scale_factor=1.5, mode="bicubic").shape == [2, 3, 6, 9]
    assert F.interpolate(fw.ones([1, 2, 5]), scale_factor=2, mode="linear").shape == [1, 2, 10]
    assert F.interpolate(fw.ones([1, 2, 2, 2, 2]), size=4,
                         mode="trilinear").shape == [1, 2, 4, 4, 4]
    nhwc = F.interpolate(fw.ones([2, 4, 6, 3]), size=[2, 3], data_format="NHWC", mode="area")
    assert nhwc.shape == [2, 2, 3, 3]
    check(F.interpolate(t(np.arange(4.0).reshape(1, 1, 2, 2)), scale_factor=2),
          np.repeat(np.repeat(np.arange(4.0).reshape(1, 1, 2, 2), 2, 2), 2, 3))
    with pytest.raises(InvalidArgumentError, match="one of"):
        F.interpolate(x)
    assert F.pixel_shuffle(fw.ones([1, 8, 2, 3]), 2).shape == [1, 2, 4, 6]
    assert F.pixel_unshuffle(fw.ones([1, 2, 4, 6]), 2).shape == [1, 8, 2, 3]
    check(F.channel_shuffle(t(np.arange(6.0).reshape(1, 6, 1, 1)), 3).reshape([6]),
          [0, 2, 4, 1, 3, 5])
    cols = F.unfold(fw.ones([1, 2, 4, 4]), 2)
    assert cols.shape == [1, 8, 9]
    back = F.fold(cols, [4, 4], 2)
    assert back.shape == [1, 2, 4, 4] and back.numpy()[0, 0, 1, 1] == 4.0


def test_similarity_and_distance():
    a, b = np.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]), np.array([[8.0, 3.0, 3.0],
                                                                   [2.0, 3.0, 4.0]])
    cos0 = (a * b).sum(0) / np.sqrt((a * a).sum(0) * (b * b).sum(0))
    check(F.cosine_similarity(t(a), t(b), axis=0), cos0, 1e-6)
    check(F.pairwise_distance(t(a), t(b)), np.sqrt(((a - b + 1e-6) ** 2).sum(-1)), 1e-6)
    check(F.pairwise_distance(t(a), t(b), p=1, keepdim=True),
          np.abs(a - b + 1e-6).sum(-1, keepdims=True), 1e-6)
    check(F.pdist(t(np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))), [5.0, 10.0, 5.0])
    check(F.label_smooth(t([[0.0, 1.0]]), epsilon=0.2), [[0.1, 0.9]])
    check(F.sequence_mask(t([2, 0])), [[1, 1], [0, 0]])
    check(F.sequence_mask(t([1, 3]), 4), [[1, 0, 0, 0], [1, 1, 1, 0]])


def test_scaled_dot_product_attention():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal([2, 3, 2, 4]) for _ in range(3))

    def ref(q, k, v, mask=None):
        qh, kh, vh = (np.moveaxis(a, 2, 1) for a in (q, k, v))
        s = qh @ np.swapaxes(kh, -1, -2) / 2.0
        if mask is not None:
            s = s + mask
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return np.moveaxis(w @ vh, 1, 2)

    check(F.scaled_dot_product_attention(t(q), t(k), t(v)), ref(q, k, v), 1e-5)
    causal = np.triu(np.full([3, 3], -np.inf), 1)
    check(F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True),
          ref(q, k, v, causal), 1e-5)
    # the composed dropout path agrees with the fused op when nothing is dropped
    check(F.scaled_dot_product_attention(t(q), t(k), t(v), dropout_p=1e-12, is_causal=True),
          ref(q, k, v, causal), 1e-5)
    fw.seed(0)
    dropped = F.scaled_dot_product_attention(t(q), t(k), t(v), dropout_p=0.5)
    assert dropped.shape == [2, 3, 2, 4]
    assert not np.allclose(dropped.numpy(), ref(q, k, v))
    assert np.allclose(F.scaled_dot_product_attention(t(q), t(k), t(v), dropout_p=0.5,
                                                      training=False).numpy(), ref(q, k, v))


def test_conv_and_pool_functional_forms():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    w = np.ones([1, 1, 2, 2])
    ref = np.array([[x[0, 0, i:i + 2, j:j + 2].sum() for j in range(3)] for i in range(3)])
    check(F.conv2d(t(x), t(w))[0, 0], ref)
    check(F.conv2d(t(np.moveaxis(x, 1, -1)), t(w), data_format="NHWC")[0, :, :, 0], ref)
    assert F.conv2d(t(x), t(w), padding="SAME").shape == [1, 1, 4, 4]
    assert F.conv2d(t(x), t(w), padding=[[0, 0], [0, 0], [1, 0], [0, 1]]).shape == [1, 1, 4, 4]
    assert F.conv2d_transpose(t(x), t(w), stride=2).shape == [1, 1, 8, 8]
    assert F.conv2d_transpose(t(x), t(w), stride=2, output_size=[9, 9]).shape == [1, 1, 9, 9]
    check(F.max_pool2d(t(x), 2)[0, 0], [[5, 7], [13, 15]])
    check(F.avg_pool2d(t(x), 2)[0, 0], [[2.5, 4.5], [10.5, 12.5]])
    check(F.avg_pool2d(t(x), 2, divisor_override=1)[0, 0], [[10, 18], [42, 50]])
    out, mask = F.max_pool2d(t(x), 2, return_mask=True)
    check(mask[0, 0], [[5, 7], [13, 15]])
    check(F.max_unpool2d(out, mask, 2)[0, 0], np.where(np.isin(np.arange(16), [5, 7, 13, 15]),
                                                       np.arange(16.0), 0).reshape(4, 4))
    check(F.lp_pool2d(t(x), 2, 2)[0, 0, 0, 0], np.sqrt((x[0, 0, :2, :2] ** 2).sum()))
    check(F.adaptive_avg_pool2d(t(x), 1)[0, 0, 0, 0], x.mean())
    o, m = F.adaptive_max_pool2d(t(x), 2, return_mask=True)
    check(o[0, 0], [[5, 7], [13, 15]])
    with pytest.raises(InvalidArgumentError, match="data_format"):
        F.conv2d(t(x), t(w), data_format="CHWN")
    with pytest.raises(InvalidArgumentError, match="4-D"):
        F.conv2d(t(x[0]), t(w))


def test_temporal_shift():
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2 * 3, 4, 1, 1)  # N=2, T=3, C=4
    out = F.temporal_shift(t(x), seg_num=3, shift_ratio=0.25).numpy().reshape(2, 3, 4)
    v = x.reshape(2, 3, 4)
    ref = v.copy()
    ref[:, :, 0] = np.concatenate([np.zeros([2, 1]), v[:, :-1, 0]], 1)  # from frame t-1
    ref[:, :, 1] = np.concatenate([v[:, 1:, 1], np.zeros([2, 1])], 1)  # from frame t+1
    np.testing.assert_array_equal(out, ref)
    nhwc = F.temporal_shift(t(np.moveaxis(x, 1, -1)), 3, data_format="NHWC")
    np.testing.assert_array_equal(np.moveaxis(nhwc.numpy(), -1, 1).reshape(2, 3, 4), ref)
    with pytest.raises(InvalidArgumentError, match="divisible"):
        F.temporal_shift(t(x), seg_num=4)
