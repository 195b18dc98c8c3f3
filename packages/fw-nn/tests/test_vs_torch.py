"""Differential forward tests against PyTorch (skipped when torch is not installed):
fw layers and torch modules with the same weights must agree."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.nn import functional as F

torch = pytest.importorskip("torch")


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(a, b, tol=1e-4):
    a = a.numpy() if hasattr(a, "numpy") and not isinstance(a, np.ndarray) else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def copy_to_torch(tmod, mapping):
    with torch.no_grad():
        for tname, arr in mapping.items():
            dict(tmod.named_parameters())[tname].copy_(torch.tensor(arr))


@pytest.mark.parametrize("nd,stride,padding,dilation,groups", [
    (1, 1, 0, 1, 1), (1, 2, 1, 2, 2), (2, 1, 1, 1, 1), (2, 2, 2, 1, 2), (2, 1, 0, 2, 1),
    (3, 1, 1, 1, 1)])
def test_conv_matches_torch(nd, stride, padding, dilation, groups):
    cls = {1: nn.Conv1D, 2: nn.Conv2D, 3: nn.Conv3D}[nd]
    tcls = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[nd]
    m = cls(4, 6, 3, stride=stride, padding=padding, dilation=dilation, groups=groups)
    t = tcls(4, 6, 3, stride=stride, padding=padding, dilation=dilation, groups=groups)
    copy_to_torch(t, {"weight": m.weight.numpy(), "bias": m.bias.numpy()})
    x = rnd(2, 4, *([7] * nd))
    close(m(fw.to_tensor(x)), t(torch.tensor(x)))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_mode_matches_torch(mode):
    m = nn.Conv2D(3, 2, 3, padding=1, padding_mode=mode)
    t = torch.nn.Conv2d(3, 2, 3, padding=1, padding_mode=mode)
    copy_to_torch(t, {"weight": m.weight.numpy(), "bias": m.bias.numpy()})
    x = rnd(2, 3, 5, 6)
    close(m(fw.to_tensor(x)), t(torch.tensor(x)))


@pytest.mark.parametrize("nd,stride,padding,output_padding,groups", [
    (1, 2, 1, 1, 1), (2, 1, 0, 0, 1), (2, 2, 1, 1, 2), (3, 2, 0, 0, 1)])
def test_conv_transpose_matches_torch(nd, stride, padding, output_padding, groups):
    cls = {1: nn.Conv1DTranspose, 2: nn.Conv2DTranspose, 3: nn.Conv3DTranspose}[nd]
    tcls = {1: torch.nn.ConvTranspose1d, 2: torch.nn.ConvTranspose2d,
            3: torch.nn.ConvTranspose3d}[nd]
    m = cls(4, 6, 3, stride=stride, padding=padding, output_padding=output_padding,
            groups=groups)
    t = tcls(4, 6, 3, stride=stride, padding=padding, output_padding=output_padding,
             groups=groups)
    copy_to_torch(t, {"weight": m.weight.numpy(), "bias": m.bias.numpy()})
    x = rnd(2, 4, *([5] * nd))
    close(m(fw.to_tensor(x)), t(torch.tensor(x)))


def test_pools_match_torch():
    x = rnd(2, 3, 9, 8)
    xt, xf = torch.tensor(x), fw.to_tensor(x)
    close(nn.MaxPool2D(3, 2, 1)(xf), torch.nn.MaxPool2d(3, 2, 1)(xt))
    close(nn.MaxPool2D(2, ceil_mode=True)(xf), torch.nn.MaxPool2d(2, ceil_mode=True)(xt))
    close(nn.AvgPool2D(3, 2, 1)(xf), torch.nn.AvgPool2d(3, 2, 1, count_include_pad=False)(xt))
    close(nn.AvgPool2D(3, 2, 1, exclusive=False)(xf), torch.nn.AvgPool2d(3, 2, 1)(xt))
    close(nn.AdaptiveAvgPool2D((4, 3))(xf), torch.nn.AdaptiveAvgPool2d((4, 3))(xt))
    close(nn.AdaptiveMaxPool2D(3)(xf), torch.nn.AdaptiveMaxPool2d(3)(xt))
    close(nn.LPPool2D(2, 2)(xf), torch.nn.LPPool2d(2, 2)(xt))
    x1 = rnd(2, 3, 10)
    close(nn.MaxPool1D(3, 2)(fw.to_tensor(x1)), torch.nn.MaxPool1d(3, 2)(torch.tensor(x1)))
    close(nn.AdaptiveAvgPool1D(4)(fw.to_tensor(x1)),
          torch.nn.AdaptiveAvgPool1d(4)(torch.tensor(x1)))
    x3 = rnd(1, 2, 6, 6, 6)
    close(nn.MaxPool3D(2)(fw.to_tensor(x3)), torch.nn.MaxPool3d(2)(torch.tensor(x3)))
    close(nn.AvgPool3D(2)(fw.to_tensor(x3)), torch.nn.AvgPool3d(2)(torch.tensor(x3)))


def test_max_pool_mask_and_unpool_match_torch():
    x = rnd(1, 2, 6, 6)
    out, mask = F.max_pool2d(fw.to_tensor(x), 2, return_mask=True)
    tout, tmask = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    close(out, tout)
    np.testing.assert_array_equal(mask.numpy(), tmask.numpy())
    close(nn.MaxUnPool2D(2)(out, mask), torch.nn.MaxUnpool2d(2)(tout, tmask))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch(training):
    m = nn.BatchNorm2D(3, momentum=0.8)
    t = torch.nn.BatchNorm2d(3, momentum=0.2)  # torch's momentum weights the batch stats
    copy_to_torch(t, {"weight": rnd(3, seed=1), "bias": rnd(3, seed=2)})
    m.weight.set_value(t.weight.detach().numpy())
    m.bias.set_value(t.bias.detach().numpy())
    m.train(training)
    t.train(training)
    for seed in range(3):
        x = rnd(4, 3, 5, 5, seed=seed) * 2 + 1
        close(m(fw.to_tensor(x)), t(torch.tensor(x)))
    # torch keeps the unbiased variance in its running estimate; fw (like Paddle) the
    # biased one, so only the means are compared
    close(m._mean, t.running_mean)


def test_norms_match_torch():
    x = rnd(2, 6, 4, 5)
    xt, xf = torch.tensor(x), fw.to_tensor(x)
    ln, tln = nn.LayerNorm([4, 5]), torch.nn.LayerNorm([4, 5])
    copy_to_torch(tln, {"weight": rnd(20, seed=3).reshape(4, 5),
                        "bias": rnd(20, seed=4).reshape(4, 5)})
    ln.weight.set_value(tln.weight.detach().numpy().ravel())
    ln.bias.set_value(tln.bias.detach().numpy().ravel())
    close(ln(xf), tln(xt))
    gn, tgn = nn.GroupNorm(3, 6), torch.nn.GroupNorm(3, 6)
    close(gn(xf), tgn(xt))
    close(nn.InstanceNorm2D(6)(xf), torch.nn.InstanceNorm2d(6)(xt))
    close(nn.LocalResponseNorm(3)(xf), torch.nn.LocalResponseNorm(3)(xt))


@pytest.mark.parametrize("mode", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_rnn_matches_torch(mode, bidirectional):
    cls = getattr(nn, mode)
    tcls = {"SimpleRNN": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}[mode]
    m = cls(5, 7, num_layers=2, direction="bidirect" if bidirectional else "forward")
    t = tcls(5, 7, num_layers=2, bidirectional=bidirectional, batch_first=True)
    copy_to_torch(t, {n: getattr(m, n).numpy() for n, _ in t.named_parameters()})
    x = rnd(3, 6, 5)
    y, st = m(fw.to_tensor(x))
    ty, tst = t(torch.tensor(x))
    close(y, ty)
    if mode == "LSTM":
        close(st[0], tst[0])
        close(st[1], tst[1])
    else:
        close(st, tst)


def test_lstm_sequence_length_matches_packed_torch():
    m = nn.LSTM(4, 6, direction="bidirect")
    t = torch.nn.LSTM(4, 6, bidirectional=True, batch_first=True)
    copy_to_torch(t, {n: getattr(m, n).numpy() for n, _ in t.named_parameters()})
    x = rnd(3, 5, 4)
    lengths = [5, 3, 1]
    y, (h, c) = m(fw.to_tensor(x), sequence_length=fw.to_tensor(lengths))
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths,
                                                     batch_first=True)
    ty, (th, tc) = t(packed)
    ty, _ = torch.nn.utils.rnn.pad_packed_sequence(ty, batch_first=True, total_length=5)
    close(y, ty)
    close(h, th)
    close(c, tc)


def test_multi_head_attention_matches_torch():
    e, heads = 8, 2
    m = nn.MultiHeadAttention(e, heads)
    t = torch.nn.MultiheadAttention(e, heads, batch_first=True)
    w = np.concatenate([m.q_proj.weight.numpy().T, m.k_proj.weight.numpy().T,
                        m.v_proj.weight.numpy().T])
    b = np.concatenate([m.q_proj.bias.numpy(), m.k_proj.bias.numpy(), m.v_proj.bias.numpy()])
    copy_to_torch(t, {"in_proj_weight": w, "in_proj_bias": b,
                      "out_proj.weight": m.out_proj.weight.numpy().T,
                      "out_proj.bias": m.out_proj.bias.numpy()})
    q, k = rnd(2, 3, e, seed=1), rnd(2, 4, e, seed=2)
    keep = np.random.default_rng(3).random((3, 4)) > 0.3
    keep[:, 0] = True
    out = m(fw.to_tensor(q), fw.to_tensor(k), fw.to_tensor(k), attn_mask=fw.to_tensor(keep))
    tout, _ = t(torch.tensor(q), torch.tensor(k), torch.tensor(k),
                attn_mask=torch.tensor(~keep))
    close(out, tout)


def test_transformer_encoder_layer_matches_torch():
    d, heads, ff = 8, 2, 16
    m = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0)
    t = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
    a = m.self_attn
    copy_to_torch(t, {
        "self_attn.in_proj_weight": np.concatenate(
            [a.q_proj.weight.numpy().T, a.k_proj.weight.numpy().T, a.v_proj.weight.numpy().T]),
        "self_attn.in_proj_bias": np.concatenate(
            [a.q_proj.bias.numpy(), a.k_proj.bias.numpy(), a.v_proj.bias.numpy()]),
        "self_attn.out_proj.weight": a.out_proj.weight.numpy().T,
        "self_attn.out_proj.bias": a.out_proj.bias.numpy(),
        "linear1.weight": m.linear1.weight.numpy().T, "linear1.bias": m.linear1.bias.numpy(),
        "linear2.weight": m.linear2.weight.numpy().T, "linear2.bias": m.linear2.bias.numpy()})
    t.eval()
    x = rnd(2, 5, d)
    close(m(fw.to_tensor(x)), t(torch.tensor(x)), 1e-4)


def test_functional_matches_torch():
    x = rnd(2, 3, 4, 5)
    xt, xf = torch.tensor(x), fw.to_tensor(x)
    tf = torch.nn.functional
    close(F.interpolate(xf, scale_factor=2, mode="bilinear"),
          tf.interpolate(xt, scale_factor=2, mode="bilinear"))
    close(F.interpolate(xf, size=[7, 3], mode="nearest"), tf.interpolate(xt, size=[7, 3]))
    close(F.interpolate(xf, size=[6, 9], mode="bicubic", align_corners=True),
          tf.interpolate(xt, size=[6, 9], mode="bicubic", align_corners=True))
    for mode in ("reflect", "replicate", "circular"):
        close(F.pad(xf, [1, 2, 2, 1], mode=mode), tf.pad(xt, [1, 2, 2, 1], mode=mode))
    close(F.pixel_shuffle(fw.to_tensor(rnd(1, 8, 2, 3)), 2),
          tf.pixel_shuffle(torch.tensor(rnd(1, 8, 2, 3)), 2))
    close(F.unfold(xf, [2, 3], strides=1, paddings=1), tf.unfold(xt, (2, 3), padding=1))
    logits, label = rnd(4, 5), np.array([0, 3, 1, 4])
    close(F.cross_entropy(fw.to_tensor(logits), fw.to_tensor(label), label_smoothing=0.1),
          tf.cross_entropy(torch.tensor(logits), torch.tensor(label), label_smoothing=0.1))
    a, p, n = rnd(4, 6, seed=1), rnd(4, 6, seed=2), rnd(4, 6, seed=3)
    close(F.triplet_margin_loss(fw.to_tensor(a), fw.to_tensor(p), fw.to_tensor(n), swap=True),
          tf.triplet_margin_loss(torch.tensor(a), torch.tensor(p), torch.tensor(n),
                                 swap=True))
    lab = np.random.default_rng(0).integers(0, 2, (4, 6)).astype(np.float32)
    close(F.multi_label_soft_margin_loss(fw.to_tensor(a), fw.to_tensor(lab)),
          tf.multilabel_soft_margin_loss(torch.tensor(a), torch.tensor(lab)))
    y = np.array([1, 0, 5, 2])
    close(F.multi_margin_loss(fw.to_tensor(a), fw.to_tensor(y)),
          tf.multi_margin_loss(torch.tensor(a), torch.tensor(y)))
    close(F.multi_margin_loss(fw.to_tensor(a), fw.to_tensor(y), p=2, margin=0.5),
          tf.multi_margin_loss(torch.tensor(a), torch.tensor(y), p=2, margin=0.5))
    v = np.abs(rnd(4, 6, seed=4)) + 0.1
    close(F.gaussian_nll_loss(fw.to_tensor(a), fw.to_tensor(p), fw.to_tensor(v), full=True),
          tf.gaussian_nll_loss(torch.tensor(a), torch.tensor(p), torch.tensor(v), full=True))
    lam = np.abs(rnd(4, 6, seed=5)) * 3
    close(F.poisson_nll_loss(fw.to_tensor(a), fw.to_tensor(lam), full=True),
          tf.poisson_nll_loss(torch.tensor(a), torch.tensor(lam), full=True))
    sgn = np.where(lab > 0, 1.0, -1.0).astype(np.float32)
    close(F.hinge_embedding_loss(fw.to_tensor(a), fw.to_tensor(sgn), margin=0.5),
          tf.hinge_embedding_loss(torch.tensor(a), torch.tensor(sgn), margin=0.5))
    close(F.soft_margin_loss(fw.to_tensor(a), fw.to_tensor(sgn)),
          tf.soft_margin_loss(torch.tensor(a), torch.tensor(sgn)))


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_affine_grid_and_grid_sample_match_torch(align_corners, mode, padding_mode):
    theta = rnd(2, 2, 3, seed=5)
    g = F.affine_grid(fw.to_tensor(theta), [2, 3, 4, 5], align_corners=align_corners)
    tg = torch.nn.functional.affine_grid(torch.tensor(theta), [2, 3, 4, 5],
                                         align_corners=align_corners)
    close(g, tg, 1e-5)
    x = rnd(2, 3, 4, 5, seed=6)
    grid = tg.detach().numpy() * 1.3  # some samples fall outside the image
    xf = fw.to_tensor(x, stop_gradient=False)
    gf = fw.to_tensor(grid, stop_gradient=False)
    out = F.grid_sample(xf, gf, mode, padding_mode, align_corners)
    xt = torch.tensor(x, requires_grad=True)
    gt = torch.tensor(grid, requires_grad=True)
    tout = torch.nn.functional.grid_sample(xt, gt, mode, padding_mode, align_corners)
    close(out, tout, 1e-5)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    close(xf.grad, xt.grad, 1e-4)
    if mode == "bilinear":
        close(gf.grad, gt.grad, 1e-3)
