"""Training through layers with fw-autograd: hand-written SGD lowers the loss of an MLP
and a convnet; gradient checks of composed layers; gradient clipping and fw.nn.utils."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.nn import functional as F


def sgd_step(model, lr):
    with fw.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.set_value(p - lr * p.grad)
    model.clear_gradients()


def test_mlp_loss_decreases_in_20_sgd_steps():
    fw.seed(0)
    rng = np.random.default_rng(0)
    x = fw.to_tensor(rng.standard_normal([64, 4]).astype(np.float32))
    y = fw.to_tensor((x.numpy() @ np.array([1.0, -2.0, 0.5, 1.0]) > 0).astype(np.int64))
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 2))
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(20):
        loss = loss_fn(model(x), y)
        loss.backward()
        sgd_step(model, 0.5)
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0]
    model.eval()
    acc = (model(x).argmax(-1).numpy() == y.numpy()).mean()
    assert acc > 0.85


def test_convnet_loss_decreases_in_20_sgd_steps():
    fw.seed(1)
    rng = np.random.default_rng(1)
    # class 1 images have a bright top half
    imgs = rng.standard_normal([32, 1, 8, 8]).astype(np.float32) * 0.5
    labels = rng.integers(0, 2, 32)
    imgs[labels == 1, :, :4] += 1.5
    x, y = fw.to_tensor(imgs), fw.to_tensor(labels)

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2D(4)
            self.pool = nn.MaxPool2D(2)
            self.fc = nn.Linear(4 * 4 * 4, 2)

        def forward(self, x):
            h = self.pool(F.relu(self.bn(self.conv(x))))
            return self.fc(h.flatten(1))

    net = Net()
    losses = []
    for _ in range(20):
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        sgd_step(net, 0.1)
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert np.abs(net.bn._mean.numpy()).sum() > 0  # running stats were trained along


def _numeric_grad(f, p, eps=1e-6):
    g = np.zeros(p.shape)
    base = p.numpy().copy()
    for idx in np.ndindex(*p.shape):
        for sign in (1, -1):
            v = base.copy()
            v[idx] += sign * eps
            p.set_value(v)
            g[idx] += sign * f().item() / (2 * eps)
    p.set_value(base)
    return g


@pytest.mark.parametrize("make", [
    lambda: nn.Sequential(nn.Conv2D(2, 3, 2, padding=1), nn.GELU(), nn.AvgPool2D(2)),
    lambda: nn.Sequential(nn.LayerNorm(6), nn.Linear(6, 3), nn.Tanh()),
    lambda: nn.GRU(6, 3),
    lambda: nn.MultiHeadAttention(6, 2),
])
def test_layer_gradients_match_finite_differences(make):
    fw.set_default_dtype("float64")
    try:
        fw.seed(0)
        layer = make()
        if isinstance(layer, nn.Sequential) and isinstance(layer[0], nn.Conv2D):
            x = fw.randn([1, 2, 3, 3])
        else:
            x = fw.randn([2, 3, 6])

        def f():
            out = layer(x)
            out = out[0] if isinstance(out, tuple) else out
            return (out * out).sum()

        f().backward()
        for name, p in layer.named_parameters():
            num = _numeric_grad(f, p)
            np.testing.assert_allclose(p.grad.numpy(), num, rtol=1e-5, atol=1e-7,
                                       err_msg=name)
    finally:
        fw.set_default_dtype("float32")


# ---------------------------------------------------------------- gradient clipping
def _pg(values, need_clip=True):
    out = []
    for v in values:
        p = nn.Parameter(fw.zeros([len(v)]))
        p.need_clip = need_clip
        out.append((p, fw.to_tensor(v)))
    return out


def test_clip_grad_by_value_and_norm():
    pg = _pg([[-3.0, 0.5], [2.0, -0.1]]) + _pg([[9.0]], need_clip=False)
    out = nn.ClipGradByValue(max=1.0)(pg)
    np.testing.assert_allclose(np.concatenate([g.numpy() for _, g in out]),
                               [-1.0, 0.5, 1.0, -0.1, 9.0], rtol=1e-6)
    assert nn.ClipGradByValue(2.0, min=0.0)(pg)[0][1].tolist() == [0.0, 0.5]
    # min == max is allowed (Paddle checks nothing): every gradient becomes that value
    assert nn.ClipGradByValue(0.25, min=0.25)(pg)[0][1].tolist() == [0.25, 0.25]
    out = nn.ClipGradByNorm(1.0)(_pg([[3.0, 4.0], [0.3, 0.4]]))
    np.testing.assert_allclose(out[0][1].numpy(), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(out[1][1].numpy(), [0.3, 0.4], rtol=1e-6)
    assert nn.ClipGradByValue(1.0)([(nn.Parameter(fw.zeros([1])), None)])[0][1] is None


def test_clip_grad_by_global_norm():
    pg = _pg([[3.0], [4.0]]) + _pg([[100.0]], need_clip=False)
    clip = nn.ClipGradByGlobalNorm(clip_norm=1.0)
    assert clip.global_norm(pg).item() == pytest.approx(5.0)
    out = clip(pg)
    np.testing.assert_allclose([g.item() for _, g in out], [0.6, 0.8, 100.0], rtol=1e-6)
    small = _pg([[0.3], [0.4]])
    out = nn.ClipGradByGlobalNorm(1.0, auto_skip_clip=True)(small)
    assert out[0][1] is small[0][1]
    np.testing.assert_allclose(nn.ClipGradByGlobalNorm(1.0)(small)[1][1].numpy(), [0.4])
    half = [(nn.Parameter(fw.zeros([2])), fw.to_tensor([300.0, 400.0], dtype="float16"))]
    out = nn.ClipGradByGlobalNorm(1.0)(half)[0][1]
    assert out.dtype == fw.float16 and abs(out.astype("float32").numpy()[0] - 0.6) < 1e-3


def test_linear_with_need_clip_attrs_trains_with_global_norm_clip():
    linear = nn.Linear(10, 10, weight_attr=fw.ParamAttr(need_clip=True),
                       bias_attr=fw.ParamAttr(need_clip=False))
    loss = linear(fw.uniform([10, 10], min=-1.0, max=1.0)).mean()
    loss.backward()
    clipped = nn.ClipGradByGlobalNorm(1e-3)([(p, p.grad) for p in linear.parameters()])
    w_grad, b_grad = clipped[0][1], clipped[1][1]
    assert np.sqrt((w_grad.numpy() ** 2).sum()) == pytest.approx(1e-3, rel=1e-4)
    np.testing.assert_array_equal(b_grad.numpy(), linear.bias.grad.numpy())


# ---------------------------------------------------------------- fw.nn.utils
def test_parameters_vector_round_trip():
    m = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == [8]
    nn.utils.vector_to_parameters(fw.arange(8, dtype="float32"), m.parameters())
    assert m.weight.numpy().ravel().tolist() == [0, 1, 2, 3, 4, 5]
    assert m.bias.tolist() == [6.0, 7.0]
    with pytest.raises(ValueError):
        nn.utils.vector_to_parameters(fw.ones([3]), m.parameters())


def test_clip_grad_norm_and_value_in_place():
    a, b = nn.Parameter(fw.zeros([2])), nn.Parameter(fw.zeros([1]))
    a.grad, b.grad = fw.to_tensor([3.0, 0.0]), fw.to_tensor([4.0])
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad.numpy(), [0.6, 0.0], rtol=1e-5)
    a.grad = fw.to_tensor([3.0, -5.0])
    assert nn.utils.clip_grad_norm_(a, 2.0, norm_type="inf").item() == 5.0
    a.grad = fw.to_tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="norm"):
        nn.utils.clip_grad_norm_(a, 1.0, error_if_nonfinite=True)
    b.grad = fw.to_tensor([-7.0])
    nn.utils.clip_grad_value_([b], 2.0)
    assert b.grad.tolist() == [-2.0]


def test_weight_norm_reparameterisation():
    fw.seed(0)
    lin = nn.Linear(4, 3)
    w0 = lin.weight.numpy().copy()
    x = fw.randn([2, 4])
    before = lin(x).numpy()
    nn.utils.weight_norm(lin, dim=1)  # one magnitude per output column
    assert sorted(lin._parameters) == ["bias", "weight_g", "weight_v"]
    assert lin.weight_g.shape == [3]
    np.testing.assert_allclose(lin(x).numpy(), before, rtol=1e-5)
    np.testing.assert_allclose(lin.weight_g.numpy(), np.linalg.norm(w0, axis=0), rtol=1e-5)
    lin.weight_g.set_value(lin.weight_g * 2.0)
    np.testing.assert_allclose(lin(x).numpy() - lin.bias.numpy(),
                               2 * (before - lin.bias.numpy()), rtol=1e-4, atol=1e-5)
    lin(x).sum().backward()
    assert lin.weight_g.grad is not None and lin.weight_v.grad is not None
    nn.utils.remove_weight_norm(lin)
    assert sorted(lin._parameters) == ["bias", "weight"]
    np.testing.assert_allclose(lin.weight.numpy(), 2 * w0, rtol=1e-5)
    with pytest.raises(ValueError, match="not weight-normalized"):
        nn.utils.remove_weight_norm(lin)


def test_spectral_norm():
    fw.seed(0)
    conv = nn.Conv2D(3, 5, 3)
    nn.utils.spectral_norm(conv, n_power_iterations=30)
    assert "weight_orig" in conv._parameters and "weight_u" in conv._buffers
    conv(fw.randn([1, 3, 5, 5]))
    w = conv.weight.numpy().reshape(5, -1)
    assert abs(np.linalg.svd(w, compute_uv=False)[0] - 1.0) < 1e-3
    lin = nn.utils.spectral_norm(nn.Linear(4, 6))
    assert lin.weight_u.shape == [6]  # dim=1 for Linear's [in, out] weight
    nn.utils.remove_spectral_norm(conv)
    assert "weight" in conv._parameters and "weight_u" not in conv._buffers
