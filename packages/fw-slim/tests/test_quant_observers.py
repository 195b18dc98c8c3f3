"""Observers and quanters of fw.quantization against NumPy references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fw
from fw.quantization import observers as O
from fw.quantization import quanters as Q

FEW = settings(max_examples=25, deadline=None)


def _batches(draw_shape, seed, n=3):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, rng.uniform(0.1, 5), draw_shape).astype(np.float32) for _ in range(n)]


@FEW
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5),
       seed=st.integers(0, 2**31 - 1))
def test_absmax_per_tensor_and_per_channel(shape, seed):
    bs = _batches(shape, seed)
    obs = O.AbsmaxObserver()._instance()
    ch = O.AbsMaxChannelWiseWeightObserver()._instance(None, axis=0)
    for b in bs:
        t = fw.to_tensor(b)
        assert obs(t) is t  # an observer passes its input through
        ch(t)
    amax = np.max([np.abs(b).max() for b in bs])
    np.testing.assert_allclose(obs.scales(), [amax / 127], rtol=1e-6)
    assert obs.zero_points().tolist() == [0]
    per = np.max([np.abs(b.reshape(b.shape[0], -1)).max(1) for b in bs], axis=0)
    np.testing.assert_allclose(ch.scales(), per / 127, rtol=1e-6)
    assert ch.quant_axis() == 0


@FEW
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
       seed=st.integers(0, 2**31 - 1), offset=st.floats(-3, 3))
def test_minmax_asymmetric_maps_the_range_onto_uint8(shape, seed, offset):
    bs = [b + np.float32(offset) for b in _batches(shape, seed)]
    obs = O.MinMaxObserver()._instance()
    for b in bs:
        obs(fw.to_tensor(b))
    lo = min(0.0, min(float(b.min()) for b in bs))
    hi = max(0.0, max(float(b.max()) for b in bs))
    s, z = obs.scales()[0], obs.zero_points()[0]
    np.testing.assert_allclose(s, (hi - lo) / 255, rtol=1e-6)
    assert z == np.clip(np.rint(-lo / ((hi - lo) / 255)), 0, 255)
    assert obs.qmin == 0 and obs.qmax == 255
    # the range's ends land on the ends of the codes (to one step)
    assert abs((lo / s + z) - 0) <= 0.5 + 1e-3 and abs((hi / s + z) - 255) <= 0.5 + 1e-3


def test_moving_average_minmax():
    obs = O.MovingAverageMinMaxObserver(moving_rate=0.5, symmetric=True)._instance()
    for lo, hi in ((-1.0, 2.0), (-3.0, 4.0)):
        obs(fw.to_tensor(np.array([lo, hi], np.float32)))
    # lo = 0.5 * -1 + 0.5 * -3 = -2, hi = 0.5 * 2 + 0.5 * 4 = 3: symmetric -> 3 / 127
    np.testing.assert_allclose(obs.scales(), [3 / 127], rtol=1e-6)


def test_histogram_percent_matches_the_quantile():
    rng = np.random.default_rng(0)
    data = rng.normal(size=200_000).astype(np.float32)
    obs = O.HistObserver(percent=0.999, bins_count=4096)._instance()
    for part in np.split(data, 4):
        obs(fw.to_tensor(part))
    want = np.quantile(np.abs(data), 0.999)
    assert abs(obs.threshold() - want) <= 2 * np.abs(data).max() / 4096 + 1e-6


def _mse(data, t):
    s = t / 127
    q = np.clip(np.rint(data / s), -128, 127) * s
    return float(((q - data) ** 2).mean())


def test_histogram_mse_is_near_the_best_threshold():
    """The MSE threshold's real quantization error (measured with NumPy) is within a few
    percent of the best threshold on a fine grid, for Gaussian and heavy-tailed data."""
    rng = np.random.default_rng(1)
    for data in (rng.normal(size=50_000), rng.standard_t(3, size=50_000)):
        data = data.astype(np.float32)
        obs = O.MSEObserver()._instance()
        obs(fw.to_tensor(data))
        amax = float(np.abs(data).max())
        best = min(_mse(data, t) for t in np.linspace(amax / 64, amax, 400))
        assert _mse(data, obs.threshold()) <= 1.05 * best


def test_histogram_kl_clips_an_outlier():
    rng = np.random.default_rng(1)
    data = rng.normal(size=50_000).astype(np.float32)
    data[0] = 40.0
    obs = O.KLObserver()._instance()
    obs(fw.to_tensor(data))
    assert 2.5 < obs.threshold() < 10, obs.threshold()  # the Gaussian's bulk, not 40


def test_moving_rate_and_method_are_checked():
    with pytest.raises(ValueError, match="moving_rate"):
        O.MovingAverageMinMaxObserver(moving_rate=1.5)._instance()
    with pytest.raises(ValueError, match="method"):
        O.HistObserver(method="max")._instance()
    with pytest.raises(ValueError, match="quant_bits"):
        O.AbsmaxObserver(quant_bits=16)._instance()
    with pytest.raises(RuntimeError, match="no values observed"):
        O.AbsmaxObserver()._instance().scales()


def test_fake_quanter_moving_average_absmax():
    q = Q.FakeQuanterWithAbsMaxObserver(moving_rate=0.9)._instance()
    q.train()
    a, b = np.array([1.0, -2.0], np.float32), np.array([4.0, 0.5], np.float32)
    q(fw.to_tensor(a))
    out = q(fw.to_tensor(b))
    # state = 0.9 * 1 + 1 = 1.9; accum = 0.9 * 2 + 4 = 5.8
    s = 5.8 / 1.9 / 127
    np.testing.assert_allclose(q.scales(), [s], rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), np.clip(np.rint(b / np.float32(s)), -128, 127)
                               * np.float32(s), rtol=1e-6)
    q.eval()
    q(fw.to_tensor(np.array([100.0], np.float32)))  # eval: the scale is frozen
    np.testing.assert_allclose(q.scales(), [s], rtol=1e-6)


def test_channel_wise_quanter_and_lsq_gradients():
    w = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    q = Q.FakeQuanterChannelWiseAbsMaxObserver()._instance(None, axis=1)
    out = q(fw.to_tensor(w)).numpy()
    s = np.abs(w).max(0) / 127
    np.testing.assert_allclose(out, np.rint(w / s) * s, rtol=1e-5, atol=1e-7)
    lsq = Q.LSQQuanter()._instance()
    x = fw.to_tensor(w)
    x.stop_gradient = False
    y = lsq(x)
    (y * y).sum().backward()
    assert lsq.scale.grad is not None and x.grad is not None
    # the STE: x's gradient is d(y^2)/dy = 2y inside the range (nothing clipped here)
    np.testing.assert_allclose(x.grad.numpy(), 2 * y.numpy(), rtol=1e-6)
