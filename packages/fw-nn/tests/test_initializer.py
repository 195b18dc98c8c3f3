"""Initializers: distributions (statistics on large draws with fixed seeds), fans,
gains, reproducibility, and the Paddle defaults of each layer."""

import math

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.nn import initializer as I


def draw(init, shape, dtype="float32", seed=7):
    fw.seed(seed)
    return init(fw.zeros(shape, dtype=dtype)).numpy().astype(np.float64)


def test_constant_and_assign():
    assert draw(I.Constant(2.5), [3]).tolist() == [2.5] * 3
    assert draw(I.Assign([[1, 2], [3, 4]]), [2, 2]).tolist() == [[1, 2], [3, 4]]
    assert draw(I.Assign(fw.to_tensor([5.0, 6.0])), [2]).tolist() == [5.0, 6.0]
    with pytest.raises(ValueError, match="shape"):
        draw(I.Assign([1.0, 2.0, 3.0]), [2])
    ints = I.Constant(3)(fw.zeros([2], dtype="int64"))
    assert ints.dtype == fw.int64 and ints.tolist() == [3, 3]


@pytest.mark.parametrize("mean,std", [(0.0, 1.0), (2.0, 0.5)])
def test_normal_statistics(mean, std):
    a = draw(I.Normal(mean, std), [200, 200])
    assert abs(a.mean() - mean) < 0.02 and abs(a.std() - std) < 0.02 * std + 0.01


def test_truncated_normal_stays_inside_bounds():
    a = draw(I.TruncatedNormal(1.0, 2.0, a=-1.0, b=2.0), [100, 100])
    assert a.min() >= -1.0 and a.max() <= 2.0
    # truncation pulls the mean towards the middle of [a, b] from 1.0
    assert 0.4 < a.mean() < 0.8


def test_uniform_statistics():
    a = draw(I.Uniform(-2.0, 4.0), [200, 200])
    assert a.min() >= -2.0 and a.max() < 4.0
    assert abs(a.mean() - 1.0) < 0.03 and abs(a.var() - 36 / 12) < 0.05


def test_fans_follow_paddle():
    from fw.nn.initializer import compute_fans

    assert compute_fans([5]) == (5, 5)
    assert compute_fans([3, 7]) == (3, 7)  # Linear weight [in, out]
    assert compute_fans([8, 4, 3, 3]) == (36, 72)  # conv [out, in, k, k]


def test_xavier_and_kaiming():
    a = draw(I.XavierUniform(), [300, 500])
    limit = math.sqrt(6 / 800)
    assert a.max() <= limit and a.min() >= -limit and a.max() > 0.95 * limit
    assert abs(a.std() - limit / math.sqrt(3)) < 0.002
    b = draw(I.XavierNormal(), [300, 500])
    assert abs(b.std() - math.sqrt(2 / 800)) < 0.002
    c = draw(I.KaimingNormal(), [400, 300])
    assert abs(c.std() - math.sqrt(2.0) / math.sqrt(400)) < 0.002
    d = draw(I.KaimingUniform(negative_slope=0.1, nonlinearity="leaky_relu"), [400, 300])
    lim = math.sqrt(2 / 1.01) * math.sqrt(3 / 400)
    assert d.max() <= lim and d.max() > 0.95 * lim
    e = draw(I.XavierUniform(fan_in=10, fan_out=10, gain=2.0), [50, 50])
    assert e.max() <= 2.0 * math.sqrt(6 / 20) and e.max() > 0.9 * 2.0 * math.sqrt(6 / 20)


def test_orthogonal():
    for shape in ([6, 10], [10, 6], [4, 2, 3]):
        w = draw(I.Orthogonal(gain=2.0), shape).reshape(shape[0], -1)
        if w.shape[0] <= w.shape[1]:
            np.testing.assert_allclose(w @ w.T, 4.0 * np.eye(w.shape[0]), atol=1e-5)
        else:
            np.testing.assert_allclose(w.T @ w, 4.0 * np.eye(w.shape[1]), atol=1e-5)
    with pytest.raises(ValueError, match="2 dimensions"):
        draw(I.Orthogonal(), [3])


def test_dirac_is_identity_convolution():
    w = fw.zeros([4, 1, 3, 3])  # 2 groups of 1 input -> 2 outputs
    I.Dirac(groups=2)(w)
    x = fw.randn([1, 2, 5, 5])
    y = nn.functional.conv2d(x, w, padding=1, groups=2)
    np.testing.assert_allclose(y.numpy()[:, [0, 2]], x.numpy(), atol=1e-6)
    assert np.all(y.numpy()[:, [1, 3]] == 0)


def test_bilinear_kernel():
    w = draw(I.Bilinear(), [1, 1, 4, 4])[0, 0]
    t = np.array([0.25, 0.75, 0.75, 0.25])
    np.testing.assert_allclose(w, np.outer(t, t))


def test_calculate_gain():
    assert I.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert I.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert I.calculate_gain("leaky_relu", 1.0) == pytest.approx(1.0)
    assert I.calculate_gain("conv2d") == 1.0 and I.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="unsupported"):
        I.calculate_gain("swish")


def test_seed_reproducibility():
    fw.seed(3)
    a = nn.Linear(5, 5).weight.numpy()
    fw.seed(3)
    b = nn.Linear(5, 5).weight.numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, nn.Linear(5, 5).weight.numpy())


def test_layer_defaults():
    fw.seed(0)
    lin = nn.Linear(200, 300)
    limit = math.sqrt(6 / 500)
    assert np.abs(lin.weight.numpy()).max() <= limit
    assert np.abs(lin.weight.numpy()).max() > 0.95 * limit
    assert np.all(lin.bias.numpy() == 0)
    conv = nn.Conv2D(16, 64, 3)
    std = math.sqrt(2.0 / (16 * 9))
    assert abs(conv.weight.numpy().std() - std) < 0.05 * std
    assert np.all(conv.bias.numpy() == 0)
    convt = nn.Conv2DTranspose(16, 64, 3)  # Xavier: fan_in = 64*9, fan_out = 16*9
    lim_t = math.sqrt(6 / (64 * 9 + 16 * 9))
    assert np.abs(convt.weight.numpy()).max() <= lim_t
    bn = nn.BatchNorm2D(4)
    assert bn.weight.tolist() == [1.0] * 4 and bn.bias.tolist() == [0.0] * 4
    assert bn._mean.tolist() == [0.0] * 4 and bn._variance.tolist() == [1.0] * 4
    assert nn.PReLU(3).weight.tolist() == [0.25] * 3
    ln = nn.LayerNorm(5)
    assert ln.weight.tolist() == [1.0] * 5 and ln.bias.tolist() == [0.0] * 5
    lstm = nn.LSTM(10, 25)
    for p in lstm.parameters():
        assert np.abs(p.numpy()).max() <= 1 / 5 and np.abs(p.numpy()).max() > 0.15
    emb = nn.Embedding(100, 50, padding_idx=3)
    assert np.all(emb.weight.numpy()[3] == 0)
    assert np.abs(emb.weight.numpy()).max() <= math.sqrt(6 / 150)


def test_param_attr_forms():
    lin = nn.Linear(2, 3, weight_attr=I.Constant(0.5), bias_attr=False)
    assert lin.bias is None and np.all(lin.weight.numpy() == 0.5)
    lin2 = nn.Linear(2, 3, weight_attr="named_weight")
    assert lin2.weight.name == "named_weight"
    frozen = nn.Linear(2, 3, weight_attr=fw.ParamAttr(trainable=False))
    assert frozen.weight.stop_gradient and not frozen.weight.trainable
    with pytest.raises(TypeError, match="parameter attribute"):
        nn.Linear(2, 3, weight_attr=3.0)


def test_set_global_initializer():
    try:
        I.set_global_initializer(I.Constant(0.3), I.Constant(0.7))
        lin = nn.Linear(2, 2)
        assert np.allclose(lin.weight.numpy(), 0.3) and np.allclose(lin.bias.numpy(), 0.7)
        # a ParamAttr's initializer still wins
        lin2 = nn.Linear(2, 2, weight_attr=I.Constant(1.0))
        assert np.allclose(lin2.weight.numpy(), 1.0)
    finally:
        I.set_global_initializer(None)
    assert not np.allclose(nn.Linear(2, 2).weight.numpy(), 0.3)
    with pytest.raises(TypeError):
        I.set_global_initializer("zeros")


def test_initializers_write_low_precision_dtypes():
    for dt in ("float16", "bfloat16", "float64"):
        t = fw.zeros([100, 100], dtype=dt)
        I.Normal(0.0, 1.0)(t)
        assert t.dtype.name == dt and 0.9 < t.astype("float32").numpy().std() < 1.1


def test_lazy_guard_defers_initialisation():
    with fw.LazyGuard():
        net = nn.Sequential(nn.Linear(10, 10), nn.Embedding(5, 3, padding_idx=0))
    w = net[0].weight
    assert w.is_lazy and w.shape == [10, 10] and w._data.strides == (0, 0)  # no memory
    assert not nn.Linear(2, 2).weight.is_lazy  # the guard has ended
    fw.seed(5)
    for p in net.parameters():
        p.initialize()
    assert not w.is_lazy and w._data.flags.writeable and np.abs(w.numpy()).max() > 0
    assert np.all(net[0].bias.numpy() == 0)
    fw.seed(5)
    eager = nn.Linear(10, 10)
    np.testing.assert_array_equal(eager.weight.numpy(), w.numpy())
    assert net[0](fw.ones([1, 10])).shape == [1, 10]
    assert net[1](fw.to_tensor([[0, 4]])).numpy()[0, 0].tolist() == [0.0, 0.0, 0.0]
