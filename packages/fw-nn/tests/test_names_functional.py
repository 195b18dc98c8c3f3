"""Issue 16's last nn names: flash-attention variants, fractional max pooling, margin,
multi-label, adaptive-softmax and RNN-T losses, and their layers. Values against real
Paddle 3.3.1 (fixtures/paddle_names.npz, written by gen_names_fixture.py) where Paddle's
CPU build runs them, else against NumPy written here; gradients against Paddle's or
finite differences."""

import pathlib

import numpy as np
import pytest

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.core.errors import InvalidArgumentError, UnsupportedError

FIX = np.load(pathlib.Path(__file__).resolve().parent / "fixtures" / "paddle_names.npz")


def T(a, grad=False):
    t = fw.to_tensor(np.asarray(a))
    t.stop_gradient = not grad
    return t


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of the scalar f(x) (float64 x)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def np_attention(q, k, v, keep=None, scale=None):
    """q [H, Lq, D], k/v [H, Lk, D] (same heads); keep bool [.., Lq, Lk]; rows with no
    key give zeros."""
    s = (q @ k.transpose(0, 2, 1)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    m = np.max(s, -1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    z = e.sum(-1, keepdims=True)
    w = np.where(z > 0, e / np.where(z > 0, z, 1), 0)
    return w @ v


# ----------------------------------------------------------- fractional max pooling
@pytest.mark.parametrize("tag,size,k,u", [("a", 5, None, 0.3), ("b", [7, 7], 2, 0.5),
                                          ("c", [4, 6], None, 0.7), ("d", [3, 8], [3, 2], 0.25)])
def test_fractional_max_pool2d_matches_paddle(tag, size, k, u):
    x = T(FIX["fmp2_x"], grad=True)
    out, mask = F.fractional_max_pool2d(x, size, kernel_size=k, random_u=u, return_mask=True)
    np.testing.assert_allclose(out.numpy(), FIX[f"fmp2_{tag}_out"], rtol=1e-12)
    np.testing.assert_array_equal(mask.numpy(), FIX[f"fmp2_{tag}_mask"])
    assert mask.dtype == fw.int32
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), FIX[f"fmp2_{tag}_grad"])


@pytest.mark.parametrize("tag,size,k,u", [("a", 3, None, 0.4), ("b", [4, 3, 5], 2, 0.6)])
def test_fractional_max_pool3d_matches_paddle(tag, size, k, u):
    out, mask = F.fractional_max_pool3d(T(FIX["fmp3_x"]), size, kernel_size=k, random_u=u,
                                        return_mask=True)
    np.testing.assert_allclose(out.numpy(), FIX[f"fmp3_{tag}_out"], rtol=1e-12)
    np.testing.assert_array_equal(mask.numpy(), FIX[f"fmp3_{tag}_mask"])


def test_fractional_random_u_drawn_from_fw_generator_and_layers():
    x = fw.rand([1, 2, 9, 9])
    fw.seed(5)
    a = F.fractional_max_pool2d(x, 4).numpy()
    fw.seed(5)
    b = nn.FractionalMaxPool2D(4)(x).numpy()
    np.testing.assert_array_equal(a, b)
    # every output is one of the inputs of its channel
    assert np.isin(a[0, 0], x.numpy()[0, 0]).all()
    out, mask = nn.FractionalMaxPool3D([2, 3, 2], random_u=0.5, return_mask=True)(
        fw.rand([1, 1, 4, 6, 4]))
    assert out.shape == [1, 1, 2, 3, 2] and mask.shape == [1, 1, 2, 3, 2]


def test_fractional_bad_arguments():
    x = fw.rand([1, 1, 5, 5])
    with pytest.raises(InvalidArgumentError, match="fractional_max_pool2d: random_u"):
        F.fractional_max_pool2d(x, 3, random_u=1.5)
    with pytest.raises(InvalidArgumentError, match="output_size"):
        F.fractional_max_pool2d(x, 6, random_u=0.5)
    with pytest.raises(InvalidArgumentError, match="4-D"):
        F.fractional_max_pool2d(fw.rand([5, 5]), 2)
    with pytest.raises(InvalidArgumentError, match="floating"):
        F.fractional_max_pool3d(fw.ones([1, 1, 4, 4, 4], "int32"), 2)


# ----------------------------------------------------------- flash attention variants
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attn_qkvpacked_matches_paddle(causal):
    qkv = T(FIX["fa_qkv"])
    out, w = F.flash_attn_qkvpacked(qkv, causal=causal, return_softmax=True)
    np.testing.assert_allclose(out.numpy(), FIX[f"fa_out_{int(causal)}"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.numpy(), FIX[f"fa_w_{int(causal)}"], rtol=1e-5, atol=1e-6)
    out2, none = F.flash_attn_qkvpacked(qkv, causal=causal)
    assert none is None
    np.testing.assert_array_equal(out2.numpy(), out.numpy())


def test_flash_attn_qkvpacked_gradient_and_gqa():
    rng = np.random.default_rng(0)
    qkv = rng.standard_normal((1, 3, 4, 1, 4))  # 2 query groups share one kv head
    t = T(qkv, grad=True)
    out, _ = F.flash_attn_qkvpacked(t, causal=True)
    # grouped query attention: query head h reads kv head h // 2 (here the only one)
    q, k, v = qkv[0, :, :2, 0], qkv[0, :, 2, 0], qkv[0, :, 3, 0]
    keep = np.tril(np.ones((3, 3), bool))
    ref = np.stack([np_attention(q[None, :, h], k[None], v[None], keep)[0] for h in range(2)], 1)
    np.testing.assert_allclose(out.numpy()[0], ref, rtol=1e-10)
    wgt = rng.standard_normal(out.shape)
    (out * T(wgt)).sum().backward()

    def f(a):
        o, _ = F.flash_attn_qkvpacked(T(a), causal=True)
        return float((o.numpy() * wgt).sum())

    np.testing.assert_allclose(t.grad.numpy(), fd_grad(f, qkv), rtol=1e-5, atol=1e-7)


def _packed(rng, lens, pad, h=2, d=4):
    n = len(lens) * pad
    return rng.standard_normal((n, 3, h, d)), np.concatenate([[0], np.cumsum(lens)])


@pytest.mark.parametrize("padded", [True, False])
def test_flash_attn_varlen_qkvpacked_against_numpy(padded):
    rng = np.random.default_rng(1)
    lens, pad = [2, 4, 3], 4
    qkv, cu = _packed(rng, lens, pad)
    if not padded:
        qkv = qkv[:sum(lens)]
    out, sm = F.flash_attn_varlen_qkvpacked(T(qkv), T(cu.astype(np.int32)),
                                            T(cu.astype(np.int32)), pad, pad, 0.7,
                                            causal=True, varlen_padded=padded)
    assert sm is None and out.shape == [qkv.shape[0], 2, 4]
    want = np.zeros((qkv.shape[0], 2, 4))
    for b, n in enumerate(lens):
        r = b * pad if padded else cu[b]
        seq = qkv[r:r + n].transpose(1, 2, 0, 3)  # [3, H, n, D]
        keep = np.tril(np.ones((n, n), bool))
        want[r:r + n] = np_attention(seq[0], seq[1], seq[2], keep, 0.7).transpose(1, 0, 2)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)


def test_flash_attention_v3_varlen_window_softcap_and_lse():
    rng = np.random.default_rng(2)
    lens = [3, 5]
    cu = np.array([0, 3, 8], np.int32)
    q = rng.standard_normal((8, 2, 4))
    k = rng.standard_normal((8, 1, 4))  # GQA: 2 query heads on 1 kv head
    v = rng.standard_normal((8, 1, 4))
    out, lse = F.flash_attention_v3_varlen(T(q), T(k), T(v), T(cu), T(cu), 5, 5,
                                           window_size=(1, 1), softcap=2.0)
    assert out.shape == [8, 2, 4] and lse.shape == [2, 8] and lse.dtype == fw.float32
    for b, n in enumerate(lens):
        s = slice(cu[b], cu[b + 1])
        i, j = np.arange(n)[:, None], np.arange(n)[None]
        keep = np.abs(i - j) <= 1
        qq = q[s].transpose(1, 0, 2)
        kk = np.repeat(k[s].transpose(1, 0, 2), 2, 0)
        vv = np.repeat(v[s].transpose(1, 0, 2), 2, 0)
        sc = 2.0 * np.tanh((qq @ kk.transpose(0, 2, 1)) * 0.5 / 2.0)
        sc = np.where(keep, sc, -np.inf)
        ref_lse = np.log(np.exp(sc).sum(-1))
        w = np.exp(sc - ref_lse[..., None])
        np.testing.assert_allclose(out.numpy()[s], (w @ vv).transpose(1, 0, 2), rtol=1e-9)
        np.testing.assert_allclose(lse.numpy()[:, s], ref_lse, rtol=1e-5)
    with pytest.raises(UnsupportedError, match="q_descale.*not supported on this device"):
        F.flash_attention_v3_varlen(T(q), T(k), T(v), T(cu), T(cu), 5, 5, q_descale=T(q))


def _flashmask_keep(idx, causal, lq):
    rows = np.arange(lq)[None, None, :, None]
    c = [idx[..., i][:, :, None, :] for i in range(idx.shape[-1])]
    if causal:
        lte = c[1] if len(c) == 2 else np.full_like(c[0], 1 << 30)
        masked = (rows >= c[0]) & (rows < lte)
        masked |= np.arange(lq)[None, None, None, :] > np.arange(lq)[None, None, :, None]
    elif len(c) == 2:
        masked = (rows >= c[0]) | (rows < c[1])
    else:
        masked = ((rows >= c[0]) & (rows < c[1])) | ((rows >= c[2]) & (rows < c[3]))
    return ~masked


@pytest.mark.parametrize("causal,cols", [(True, 1), (True, 2), (False, 2), (False, 4)])
def test_flashmask_attention_against_numpy(causal, cols):
    rng = np.random.default_rng(3)
    b, l, h, d = 2, 6, 2, 4
    q, k, v = (rng.standard_normal((b, l, h, d)) for _ in range(3))
    if cols == 1:
        idx = np.array([4, 4, 6, 6, 6, 6])[None, None, :, None].repeat(b, 0)
    elif cols == 2 and causal:
        idx = np.stack([[3, 3, 5, 6, 6, 6], [5, 5, 6, 6, 6, 6]], -1)[None, None].repeat(b, 0)
    elif cols == 2:
        idx = np.stack([[3, 3, 6, 6, 6, 6], [0, 0, 2, 2, 2, 2]], -1)[None, None].repeat(b, 0)
    else:
        idx = np.stack([[4, 4, 6, 6, 6, 6], [6, 6, 6, 6, 6, 6], [0, 0, 0, 0, 0, 0],
                        [0, 0, 2, 2, 4, 4]], -1)[None, None].repeat(b, 0)
    qt = T(q, grad=True)
    out, lse = F.flashmask_attention(qt, T(k), T(v), T(idx.astype(np.int32)), causal=causal,
                                     return_softmax_lse=True)
    keep = _flashmask_keep(idx, causal, l)
    for bi in range(b):
        ref = np_attention(q[bi].transpose(1, 0, 2), k[bi].transpose(1, 0, 2),
                           v[bi].transpose(1, 0, 2), np.broadcast_to(keep[bi], (h, l, l)))
        np.testing.assert_allclose(out.numpy()[bi], ref.transpose(1, 0, 2), rtol=1e-9,
                                   atol=1e-12)
    assert lse.shape == [b, h, l]
    if causal and cols == 1:  # gradient wrt the query against finite differences
        wgt = rng.standard_normal(out.shape)
        (out * T(wgt)).sum().backward()

        def f(a):
            return float((F.flashmask_attention(T(a), T(k), T(v), T(idx.astype(np.int32)),
                                                causal=True).numpy() * wgt).sum())

        np.testing.assert_allclose(qt.grad.numpy(), fd_grad(f, q), rtol=1e-5, atol=1e-7)


def test_flashmask_window_and_errors():
    rng = np.random.default_rng(4)
    q = rng.standard_normal((1, 5, 1, 4))
    out = F.flashmask_attention(T(q), T(q), T(q), causal=True, window_size=1)
    i, j = np.arange(5)[:, None], np.arange(5)[None]
    keep = (j <= i) & (j >= i - 1)
    ref = np_attention(q[0].transpose(1, 0, 2), q[0].transpose(1, 0, 2),
                       q[0].transpose(1, 0, 2), keep)
    np.testing.assert_allclose(out.numpy()[0], ref.transpose(1, 0, 2), rtol=1e-10)
    with pytest.raises(InvalidArgumentError, match="startend_row_indices must be"):
        F.flashmask_attention(T(q), T(q), T(q), T(np.zeros((1, 1, 5, 3), np.int32)))
    with pytest.raises(UnsupportedError, match="block_mask"):
        F.flashmask_attention(T(q), T(q), T(q), block_mask=T(q))


def test_sparse_attention_against_numpy():
    rng = np.random.default_rng(5)
    b, h, l, d = 1, 2, 4, 3
    q, k, v = (rng.standard_normal((b, h, l, d)) for _ in range(3))
    keep = rng.random((b, h, l, l)) < 0.5
    keep[..., 0] = True  # every row has a key
    off = np.concatenate([np.zeros((b, h, 1), int), np.cumsum(keep.sum(-1), -1)], -1)
    cols = np.zeros((b, h, int(off[..., -1].max())), int)
    for bi in range(b):
        for hi in range(h):
            c = np.nonzero(keep[bi, hi])[1]
            cols[bi, hi, :len(c)] = c
    out = F.sparse_attention(T(q), T(k), T(v), T(off.astype(np.int32)), T(cols.astype(np.int32)))
    ref = np.stack([np_attention(q[0, hi:hi + 1], k[0, hi:hi + 1], v[0, hi:hi + 1],
                                 keep[0, hi])[0] for hi in range(h)])
    np.testing.assert_allclose(out.numpy()[0], ref, rtol=1e-10)
    with pytest.raises(InvalidArgumentError, match="sparse_csr_offset must be"):
        F.sparse_attention(T(q), T(k), T(v), T(off[..., :-1].astype(np.int32)),
                           T(cols.astype(np.int32)))


# ------------------------------------------------------------------------- losses
def test_multi_label_margin_loss_matches_paddle():
    x = T(FIX["mlml_x"], grad=True)
    y = T(FIX["mlml_y"])
    loss = F.multi_label_margin_loss(x, y, reduction="none")
    np.testing.assert_allclose(loss.numpy(), FIX["mlml_none"], rtol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), FIX["mlml_grad"], rtol=1e-12)
    np.testing.assert_allclose(nn.MultiLabelMarginLoss()(T(FIX["mlml_x"]), y).numpy(),
                               FIX["mlml_mean"], rtol=1e-12)
    with pytest.raises(InvalidArgumentError, match="multi_label_margin_loss: label"):
        F.multi_label_margin_loss(x, T(np.zeros((4, 4), np.int64)))


def _np_margin_ce(logits, label, m1, m2, m3, s):
    theta = np.arccos(np.clip(logits, -1 + 1e-7, 1 - 1e-7))
    z = logits.copy()
    idx = np.arange(len(label))
    z[idx, label] = np.cos(m1 * theta[idx, label] + m2) - m3
    z *= s
    lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
    return lse - z[idx, label], np.exp(z - lse[:, None])


def test_margin_cross_entropy_against_numpy_and_gradient():
    rng = np.random.default_rng(6)
    logits = np.tanh(rng.standard_normal((4, 6)))
    label = np.array([1, 0, 5, 3])
    t = T(logits, grad=True)
    loss, sm = F.margin_cross_entropy(t, T(label), 1.0, 0.5, 0.1, scale=8.0,
                                      return_softmax=True, reduction=None)
    ref, ref_sm = _np_margin_ce(logits, label, 1.0, 0.5, 0.1, 8.0)
    assert loss.shape == [4, 1]
    np.testing.assert_allclose(loss.numpy()[:, 0], ref, rtol=1e-10)
    np.testing.assert_allclose(sm.numpy(), ref_sm, rtol=1e-10)
    loss.sum().backward()

    def f(a):
        return float(_np_margin_ce(a, label, 1.0, 0.5, 0.1, 8.0)[0].sum())

    np.testing.assert_allclose(t.grad.numpy(), fd_grad(f, logits), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(F.margin_cross_entropy(T(logits), T(label)).numpy(),
                               _np_margin_ce(logits, label, 1.0, 0.5, 0.0, 64.0)[0].mean(),
                               rtol=1e-10)
    with pytest.raises(UnsupportedError, match="group"):
        F.margin_cross_entropy(T(logits), T(label), group=object())


def test_class_center_sample_matches_paddle_structure():
    lab = FIX["ccs_label"]
    fw.seed(3)
    r, c = F.class_center_sample(T(lab), 20, 8)
    np.testing.assert_array_equal(r.numpy(), FIX["ccs_remapped"])
    pos = np.unique(lab)
    np.testing.assert_array_equal(c.numpy()[:len(pos)], FIX["ccs_centers"][:len(pos)])
    assert c.shape == [8] and len(set(c.numpy().tolist())) == 8
    assert set(c.numpy().tolist()) <= set(range(20))
    np.testing.assert_array_equal(c.numpy()[r.numpy()], lab)  # remapping is consistent
    r2, c2 = F.class_center_sample(T(lab), 20, 2)  # more positives than samples: all kept
    np.testing.assert_array_equal(c2.numpy(), pos)


def test_rnnt_loss_matches_paddle_values_and_gradient():
    args = [T(FIX["rnnt_y"]), T(FIX["rnnt_il"]), T(FIX["rnnt_ll"])]
    for red in ("none", "mean", "sum"):
        np.testing.assert_allclose(F.rnnt_loss(T(FIX["rnnt_x"]), *args, reduction=red).numpy(),
                                   FIX[f"rnnt_{red}"], rtol=1e-10)
    for lam in (0.0, 0.001):
        x = T(FIX["rnnt_x"], grad=True)
        F.rnnt_loss(x, *args, fastemit_lambda=lam, reduction="sum").backward()
        np.testing.assert_allclose(x.grad.numpy(), FIX[f"rnnt_grad_{lam}"], rtol=1e-8,
                                   atol=1e-12)
    layer = nn.RNNTLoss(fastemit_lambda=0.0, reduction="none")
    np.testing.assert_allclose(layer(T(FIX["rnnt_x"]), *args).numpy(), FIX["rnnt_none"],
                               rtol=1e-10)
    with pytest.raises(InvalidArgumentError, match="rnnt_loss: lengths"):
        F.rnnt_loss(T(FIX["rnnt_x"]), args[0], T(np.array([9, 3], np.int32)), args[2])


def test_adaptive_log_softmax_matches_paddle_and_gradient():
    tail = [[T(FIX["asm_t00"]), T(FIX["asm_t01"])], [T(FIX["asm_t10"]), T(FIX["asm_t11"])]]
    x = T(FIX["asm_x"], grad=True)
    out, loss = F.adaptive_log_softmax_with_loss(x, T(FIX["asm_y"]), T(FIX["asm_hw"]), tail,
                                                 [2, 5, 10], T(FIX["asm_hb"]))
    np.testing.assert_allclose(out.numpy(), FIX["asm_out"], rtol=1e-5)
    np.testing.assert_allclose(loss.numpy(), FIX["asm_loss"], rtol=1e-5)
    # gradient in float64 against finite differences
    x64 = FIX["asm_x"].astype(np.float64)
    w64 = [[T(a.numpy().astype(np.float64)) for a in p] for p in tail]
    hw, hb = T(FIX["asm_hw"].astype(np.float64)), T(FIX["asm_hb"].astype(np.float64))
    xt = T(x64, grad=True)
    F.adaptive_log_softmax_with_loss(xt, T(FIX["asm_y"]), hw, w64, [2, 5, 10], hb)[1].backward()

    def f(a):
        return float(F.adaptive_log_softmax_with_loss(T(a), T(FIX["asm_y"]), hw, w64,
                                                      [2, 5, 10], hb)[1])

    np.testing.assert_allclose(xt.grad.numpy(), fd_grad(f, x64), rtol=1e-5, atol=1e-8)
    with pytest.raises(InvalidArgumentError, match="label values should be in"):
        F.adaptive_log_softmax_with_loss(x, T(np.array([0, 1, 2, 3, 4, 10])), T(FIX["asm_hw"]),
                                         tail, [2, 5, 10])


def test_adaptive_log_softmax_layer():
    fw.seed(0)
    asm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2, 6], div_value=2.0, head_bias=True)
    names = [n for n, _ in asm.named_parameters()]
    assert "head_weight" in names and "tail_weights_1_1" in names and len(names) == 6
    x = fw.randn([5, 8])
    lp = asm.log_prob(x)
    np.testing.assert_allclose(np.exp(lp.numpy()).sum(1), np.ones(5), rtol=1e-5)
    y = np.array([0, 3, 7, 9, 1])
    out, _ = asm(x, T(y))
    np.testing.assert_allclose(out.numpy(), lp.numpy()[np.arange(5), y], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(asm.predict(x).numpy(), lp.numpy().argmax(1))
    with pytest.raises(InvalidArgumentError, match="cutoffs"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 2])


@pytest.mark.parametrize("mod", ["fw.nn.functional.flash_attention",
                                 "fw.nn.functional.fractional_pool",
                                 "fw.nn.functional.margin_loss", "fw.nn.layer.fractional_pool",
                                 "fw.nn.layer.margin_loss"])
def test_docstring_examples_run(mod, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_varlen_and_sparse_attention_gradients():
    rng = np.random.default_rng(7)
    qkv, cu = _packed(rng, [2, 3], 3, h=1, d=3)
    cu32 = T(cu.astype(np.int32))
    t = T(qkv, grad=True)
    wgt = rng.standard_normal((6, 1, 3))
    out, _ = F.flash_attn_varlen_qkvpacked(t, cu32, cu32, 3, 3, 0.6, causal=True)
    (out * T(wgt)).sum().backward()

    def f(a):
        o, _ = F.flash_attn_varlen_qkvpacked(T(a), cu32, cu32, 3, 3, 0.6, causal=True)
        return float((o.numpy() * wgt).sum())

    np.testing.assert_allclose(t.grad.numpy(), fd_grad(f, qkv), rtol=1e-5, atol=1e-8)
    q = rng.standard_normal((1, 1, 3, 2))
    off = T(np.array([[[0, 1, 3, 5]]], np.int32))
    col = T(np.array([[[0, 0, 1, 1, 2]]], np.int32))
    qt = T(q, grad=True)
    wq = rng.standard_normal((1, 1, 3, 2))
    (F.sparse_attention(qt, T(q), T(q), off, col) * T(wq)).sum().backward()

    def g(a):
        return float((F.sparse_attention(T(a), T(q), T(q), off, col).numpy() * wq).sum())

    np.testing.assert_allclose(qt.grad.numpy(), fd_grad(g, q), rtol=1e-5, atol=1e-8)
