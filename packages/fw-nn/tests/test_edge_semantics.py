"""Edges of fw-nn's semantics that value fixtures do not reach: defaults at their
thresholds, argument checks, dtype coercion, the second code path of a function,
printing, and optimizer options without a PyTorch twin (hand-derived)."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- attention
@pytest.mark.parametrize("kv_heads", [4, 2])
@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_sdpa_dropout_path_matches_the_fused_op(kv_heads, mask):
    # with dropout while training the function takes its own composed path (fewer kv
    # heads repeated for grouped-query attention, masks applied by hand); a vanishing
    # dropout must give the fused op's answer
    q = fw.to_tensor(rnd(2, 3, 4, 8, seed=1))
    k = fw.to_tensor(rnd(2, 5, kv_heads, 8, seed=2))
    v = fw.to_tensor(rnd(2, 5, kv_heads, 8, seed=3))
    keep = np.random.default_rng(4).random((2, 1, 3, 5)) > 0.3
    keep[..., 0] = True
    kw = {}
    if mask == "bool":
        kw["attn_mask"] = fw.to_tensor(keep)
    elif mask == "float":
        kw["attn_mask"] = fw.to_tensor(np.where(keep, 0.0, -3.0).astype(np.float32))
    elif mask == "causal":
        kw["is_causal"] = True
    want = F.scaled_dot_product_attention(q, k, v, **kw).numpy()
    got = F.scaled_dot_product_attention(q, k, v, dropout_p=1e-12, training=True, **kw)
    assert list(got.shape) == [2, 3, 4, 8]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- checks and defaults
def test_layer_norm_checks_shapes_also_of_empty_batches():
    with pytest.raises(InvalidArgumentError, match="normalized_shape"):
        F.layer_norm(fw.zeros([0, 3]), 4)
    assert F.layer_norm(fw.zeros([0, 4]), 4).shape == [0, 4]


def test_softplus_default_threshold_is_20():
    # above beta * x = 20 Paddle returns x itself; below, log(1 + exp(x)) (3.4e-9
    # larger than x at 19.5: float64 shows it)
    x = np.array([19.5, 20.5])
    out = nn.Softplus()(fw.to_tensor(x)).numpy()
    assert out[1] == 20.5
    np.testing.assert_allclose(out[0], np.log1p(np.exp(19.5)), rtol=1e-15, atol=0)
    assert out[0] != 19.5


def test_hsigmoid_loss_checks_classes_and_starts_with_zero_bias():
    with pytest.raises(InvalidArgumentError, match="num_classes"):
        nn.HSigmoidLoss(3, 1)
    assert nn.HSigmoidLoss(3, 1, is_custom=True).weight.shape == [1, 3]
    loss = nn.HSigmoidLoss(3, 5)
    assert loss.bias.shape == [4, 1]
    np.testing.assert_array_equal(loss.bias.numpy(), 0.0)


@pytest.mark.parametrize("fn", [F.soft_margin_loss, F.hinge_embedding_loss,
                                F.multi_label_soft_margin_loss])
def test_losses_take_labels_of_another_dtype(fn):
    # the labels are cast to the input's dtype: a float64 label does not promote a
    # float32 loss
    x = rnd(3, 4)
    y = np.where(rnd(3, 4, seed=1) > 0, 1.0, -1.0)
    if fn is F.multi_label_soft_margin_loss:
        y = (y > 0).astype(np.float64)
    got = fn(fw.to_tensor(x), fw.to_tensor(y))
    assert got.dtype == fw.float32
    want = fn(fw.to_tensor(x), fw.to_tensor(y.astype(np.float32)))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_transformer_single_attr_list_reaches_both_stacks():
    attr = fw.ParamAttr(initializer=nn.initializer.Constant(0.25))
    t = nn.Transformer(8, 2, 1, 1, 12, weight_attr=[attr])
    for name in ("encoder.layers.0.self_attn.q_proj.weight", "encoder.layers.0.linear1.weight",
                 "decoder.layers.0.cross_attn.k_proj.weight", "decoder.layers.0.linear2.weight"):
        np.testing.assert_array_equal(dict(t.named_parameters())[name].numpy(), 0.25)


# ---------------------------------------------------------------- printing
class _TwoLine(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def extra_repr(self):
        return "first\nsecond"


def test_repr_indents_a_multi_line_extra_repr_with_the_sublayers():
    assert repr(nn.Sequential(_TwoLine())) == (
        "Sequential(\n"
        "  (0): _TwoLine(\n"
        "    first\n"
        "    second\n"
        "    (fc): Linear(in_features=2, out_features=2, dtype=float32)\n"
        "  )\n"
        ")")


# ---------------------------------------------------------------- optimizers
def test_momentum_with_l1_decay_uses_the_sign():
    # L1Decay is not the fused L2 of the momentum op: the gradient gets coeff*sign(p)
    p0 = np.array([0.5, -2.0, 3.0], np.float32)
    g = np.array([0.1, 0.2, -0.3], np.float32)
    p = fw.create_parameter([3], "float32", default_initializer=nn.initializer.Assign(p0))
    opt = fw.optimizer.Momentum(0.1, 0.9, [p], weight_decay=fw.regularizer.L1Decay(0.5))
    v = np.zeros(3)
    want = p0.astype(np.float64)
    for _ in range(2):
        (p * fw.to_tensor(g)).sum().backward()
        opt.step()
        opt.clear_grad()
        v = 0.9 * v + g + 0.5 * np.sign(want)
        want = want - 0.1 * v
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-6)


def test_master_weights_keep_their_precision_when_the_groups_are_repacked():
    # adding a parameter group repacks every flat buffer; the float32 master copy of a
    # float16 parameter must come back as it was, not re-derived from the float16 value
    p = fw.nn.Parameter(np.array([1.0, -0.5, 0.25], np.float16))
    opt = fw.optimizer.SGD(1e-4, parameters=[p], multi_precision=True)
    for _ in range(3):
        p.grad = fw.to_tensor(np.array([1.0, 2.0, -3.0], np.float16))
        opt.step()
    before = opt.state_dict()["master_weights"][p.name].numpy().copy()
    assert not np.array_equal(before, before.astype(np.float16).astype(np.float32))
    opt.add_param_group({"params": [fw.nn.Parameter(np.zeros(2, np.float16))]})
    p.grad = fw.to_tensor(np.array([1.0, 2.0, -3.0], np.float16))
    opt.step()
    after = opt.state_dict()["master_weights"][p.name].numpy()
    np.testing.assert_allclose(after, before - 1e-4 * np.array([1.0, 2.0, -3.0]), rtol=1e-6)


# ---------------------------------------------------------------- defaults and checks
def _conv_defaults(nd, transpose):
    kw = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}
    if transpose:
        kw["output_padding"] = 0
    return kw


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_functional_conv_defaults_are_paddles(nd, transpose):
    fn = getattr(F, f"conv{nd}d" + ("_transpose" if transpose else ""))
    x = fw.to_tensor(rnd(1, 2, *([5] * nd)))
    w = fw.to_tensor(rnd(*((2, 3) if transpose else (3, 2)), *([2] * nd), seed=1))
    np.testing.assert_allclose(fn(x, w).numpy(), fn(x, w, **_conv_defaults(nd, transpose))
                               .numpy(), rtol=1e-6)


def test_multi_margin_loss_defaults_are_paddles():
    x, y = fw.to_tensor(rnd(4, 5)), fw.to_tensor(np.array([0, 3, 1, 4]))
    np.testing.assert_allclose(F.multi_margin_loss(x, y).numpy(),
                               F.multi_margin_loss(x, y, p=1, margin=1.0,
                                                   reduction="mean").numpy(), rtol=1e-6)


def test_interpolate_channel_last_matches_channel_first():
    x = rnd(2, 3, 4, 5)
    want = F.interpolate(fw.to_tensor(x), scale_factor=2, mode="bilinear").numpy()
    got = F.interpolate(fw.to_tensor(x.transpose(0, 2, 3, 1)), scale_factor=2, mode="bilinear",
                        data_format="NHWC").numpy()
    np.testing.assert_allclose(got.transpose(0, 3, 1, 2), want, rtol=1e-6)


def test_bidirectional_rnn_wants_two_initial_states():
    m = nn.GRU(3, 4, direction="bidirect")
    cell = m[0]
    x = fw.to_tensor(rnd(2, 5, 3))
    with pytest.raises(InvalidArgumentError):
        cell(x, [fw.zeros([2, 4])])
    out, _ = cell(x, [fw.zeros([2, 4]), fw.zeros([2, 4])])
    assert out.shape == [2, 5, 8]


def test_a_float64_additive_mask_keeps_the_attention_in_float32():
    mha = nn.MultiHeadAttention(8, 2)
    x = fw.to_tensor(rnd(2, 3, 8))
    bias = rnd(3, 3, seed=5)
    out = mha(x, attn_mask=fw.to_tensor(bias.astype(np.float64)))
    assert out.dtype == fw.float32
    np.testing.assert_allclose(out.numpy(), mha(x, attn_mask=fw.to_tensor(bias)).numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda: fw.optimizer.lr.MultiStepDecay(0.1, [2, 2]),
    lambda: fw.optimizer.lr.StepDecay(0.1, 2, gamma=1.5),
    lambda: fw.optimizer.lr.LinearLR(0.1, 0),
    lambda: fw.optimizer.lr.LinearLR(0.1, 2.5),
])
def test_lr_schedules_reject_bad_arguments(make):
    with pytest.raises((ValueError, TypeError)):
        make()


# ---------------------------------------------------------------- optimizer plumbing
def test_sgd_skips_parameters_without_gradients_between_others():
    ps = [fw.create_parameter([2], "float32", default_initializer=nn.initializer.Constant(1.0))
          for _ in range(3)]
    opt = fw.optimizer.SGD(0.5, parameters=ps)
    for i in (0, 1):
        ps[i].grad = fw.to_tensor([1.0, 2.0])
    opt.step()
    np.testing.assert_allclose([p.numpy().tolist() for p in ps],
                               [[0.5, 0.0], [0.5, 0.0], [1.0, 1.0]])


def test_grad_scaler_unscales_groups_after_one_without_gradients():
    a = fw.create_parameter([2], "float32", default_initializer=nn.initializer.Constant(1.0))
    b = fw.create_parameter([2], "float32", default_initializer=nn.initializer.Constant(1.0))
    opt = fw.optimizer.SGD(1.0, parameters=[{"params": [a], "learning_rate": 0.5},
                                            {"params": [b]}])
    scaler = fw.amp.GradScaler(init_loss_scaling=4.0)
    scaler.scale((b * fw.to_tensor([1.0, 2.0])).sum()).backward()
    scaler.step(opt)
    np.testing.assert_allclose(b.numpy(), [0.0, -1.0])
    np.testing.assert_allclose(a.numpy(), [1.0, 1.0])


def test_minimize_updates_only_the_given_parameters():
    a = fw.create_parameter([2], "float32", default_initializer=nn.initializer.Constant(1.0))
    b = fw.create_parameter([2], "float32", default_initializer=nn.initializer.Constant(1.0))
    opt = fw.optimizer.SGD(1.0, parameters=[a, b])
    loss = (a * 2.0).sum() + (b * 3.0).sum()
    loss.backward()
    opt.minimize(loss, parameters=[a])
    np.testing.assert_allclose(a.numpy(), [-1.0, -1.0])
    np.testing.assert_allclose(b.numpy(), [1.0, 1.0])


def test_state_dict_round_trip_of_schedules_and_master_weights():
    p = fw.nn.Parameter(np.array([1.0, -0.5, 0.25], np.float16))
    sched = fw.optimizer.lr.StepDecay(1e-4, 1, 0.5)
    opt = fw.optimizer.SGD(sched, parameters=[p], multi_precision=True)
    for _ in range(2):
        p.grad = fw.to_tensor(np.array([1.0, 2.0, -3.0], np.float16))
        opt.step()
        sched.step()
    sd = opt.state_dict()
    master = sd["master_weights"][p.name].numpy().copy()
    # into an optimizer with the same schedule: rate and master weights come back
    p2 = fw.nn.Parameter(p.numpy(), name=p.name)
    sched2 = fw.optimizer.lr.StepDecay(1e-4, 1, 0.5)
    opt2 = fw.optimizer.SGD(sched2, parameters=[p2], multi_precision=True)
    opt2.set_state_dict(sd)
    assert sched2() == sched() == 2.5e-5
    np.testing.assert_array_equal(opt2.state_dict()["master_weights"][p.name].numpy(), master)
    # into one with a constant rate: the schedule's entry is ignored
    p3 = fw.nn.Parameter(p.numpy(), name=p.name)
    opt3 = fw.optimizer.SGD(0.1, parameters=[p3], multi_precision=True)
    opt3.set_state_dict(sd)
    assert opt3.get_lr() == 0.1


def test_sdpa_without_batch_axis_on_both_paths():
    q, k, v = (fw.to_tensor(rnd(3, 2, 4, seed=s)) for s in (1, 2, 3))
    want = F.scaled_dot_product_attention(q, k, v).numpy()
    got = F.scaled_dot_product_attention(q, k, v, dropout_p=1e-12, training=True).numpy()
    assert got.shape == (3, 2, 4)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_gather_tree_of_one_step_is_the_ids():
    ids = np.array([[[2, 5, 1], [0, 3, 4]]], np.int64)
    parents = np.array([[[1, 0, 2], [2, 2, 0]]], np.int64)
    out = F.gather_tree(fw.to_tensor(ids), fw.to_tensor(parents))
    np.testing.assert_array_equal(out.numpy(), ids)


def test_log_loss_formula():
    p = np.array([[0.2], [0.9], [0.5]], np.float32)
    y = np.array([[0.0], [1.0], [0.3]], np.float32)
    want = -y * np.log(p + 1e-4) - (1 - y) * np.log(1 - p + 1e-4)
    np.testing.assert_allclose(F.log_loss(fw.to_tensor(p), fw.to_tensor(y)).numpy(), want,
                               rtol=1e-5)


def test_functional_batch_norm_defaults_to_inference():
    x = fw.to_tensor(rnd(4, 3))
    rm, rv = fw.to_tensor([0.5, -1.0, 0.0]), fw.to_tensor([2.0, 1.0, 0.5])
    out = F.batch_norm(x, rm, rv)
    want = (x.numpy() - rm.numpy()) / np.sqrt(rv.numpy() + 1e-5)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
    np.testing.assert_array_equal(rm.numpy(), [0.5, -1.0, 0.0])


def test_layer_defaults_and_narrow_sizes():
    assert nn.Dropout().p == 0.5
    assert nn.Embedding(10, 1)(fw.to_tensor([3, 4])).shape == [2, 1]
    x1, x2, x3 = rnd(1, 2, 5), rnd(1, 2, 5, 5), rnd(1, 2, 5, 5, 5)
    for cls, x, n in ((nn.Conv1D, x1, 3), (nn.Conv2D, x2, 3), (nn.Conv3D, x3, 3),
                      (nn.Conv1DTranspose, x1, 7), (nn.Conv2DTranspose, x2, 7),
                      (nn.Conv3DTranspose, x3, 7)):
        out = cls(2, 4, 3)(fw.to_tensor(x))
        assert out.shape == [1, 4] + [n] * (x.ndim - 2), cls.__name__


class _WithCounter(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.register_buffer("steps", fw.to_tensor(np.array([3], np.int64)))


def test_casting_a_layer_leaves_integer_buffers_alone():
    m = _WithCounter().float16()
    assert m.fc.weight.dtype == fw.float16
    assert m.steps.dtype == fw.int64


def test_schedules_are_quiet_by_default(capsys):
    s = fw.optimizer.lr.LinearWarmup(0.5, 2, 0.0, 0.5)
    s.step()
    fw.optimizer.lr.StepDecay(0.5, 2).step()
    assert capsys.readouterr().out == ""


def test_auto_skip_clip_leaves_small_gradients_as_they_are():
    p = fw.create_parameter([2], "float32", default_initializer=nn.initializer.Constant(1.0))
    opt = fw.optimizer.SGD(1.0, parameters=[p],
                           grad_clip=nn.ClipGradByGlobalNorm(10.0, auto_skip_clip=True))
    p.grad = fw.to_tensor([0.3, -0.4])
    opt.step()
    np.testing.assert_allclose(p.numpy(), [0.7, 1.4], rtol=1e-6)
