"""GroupWiseWeightObserver (weight-only quantization's group-wise scales) against NumPy
and against fw.nn.quant.weight_quantize / weight_only_linear."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.quantization import PTQ, QuantConfig
from fw.quantization.observers import GroupWiseWeightObserver, GroupWiseWeightObserverLayer


def _np_scales(ws, group_size, qmax):
    """absmax over each group of rows of every observed weight / qmax (float32)."""
    amax = np.max([np.abs(w.reshape(-1, group_size, w.shape[1])).max(axis=1) for w in ws],
                  axis=0)
    return amax.astype(np.float32) / np.float32(qmax)


@pytest.mark.parametrize("bits,group_size,k,n", [(8, 64, 128, 5), (4, 128, 256, 3),
                                                 (8, 4, 12, 7), (4, 2, 6, 1)])
def test_scales_match_numpy_and_weight_quantize(bits, group_size, k, n):
    rng = np.random.default_rng(bits * 1000 + k)
    ws = [rng.normal(0, s, (k, n)).astype(np.float32) for s in (0.5, 2.0, 1.0)]
    ws[0][:group_size, 0] = 0.0  # a group of zeros in the first weight only
    obs = GroupWiseWeightObserver(quant_bits=bits, group_size=group_size)._instance()
    for w in ws:
        t = fw.to_tensor(w)
        assert obs(t) is t
    qmax = (1 << (bits - 1)) - 1
    want = _np_scales(ws, group_size, qmax)
    got = obs.scales()
    assert got.dtype == np.float32 and got.shape == (k // group_size, n)
    np.testing.assert_array_equal(got, want)
    assert obs.zero_points().dtype == np.int32 and not obs.zero_points().any()
    assert (obs.qmin, obs.qmax, obs.bit_length(), obs.quant_axis()) == (-qmax, qmax, bits, -1)
    # one weight: the same scale weight_quantize computes
    one = GroupWiseWeightObserverLayer(bits, group_size)
    one(fw.to_tensor(ws[1]))
    algo = "weight_only_int8" if bits == 8 else "weight_only_int4"
    _, s = fw.nn.quant.weight_quantize(fw.to_tensor(ws[1]), algo=algo, group_size=group_size)
    np.testing.assert_array_equal(one.scales(), s.numpy())


def test_zero_group_has_zero_scale():
    obs = GroupWiseWeightObserverLayer(8, 2)
    w = np.array([[0, 1], [0, -2], [3, 0], [0, 0]], np.float32)
    obs(fw.to_tensor(w))
    np.testing.assert_array_equal(obs.scales(), np.array([[0, 2], [3, 0]], np.float32) / 127)


def test_scales_drive_weight_only_linear():
    rng = np.random.default_rng(3)
    k, n, g = 64, 8, 16
    w = rng.normal(0, 1, (k, n)).astype(np.float32)
    x = rng.normal(0, 1, (4, k)).astype(np.float32)
    obs = GroupWiseWeightObserver(8, g)._instance()
    obs(fw.to_tensor(w))
    q, _ = fw.nn.quant.weight_quantize(fw.to_tensor(w), group_size=g)
    y = fw.nn.quant.weight_only_linear(fw.to_tensor(x), q, weight_scale=fw.to_tensor(
        obs.scales()), group_size=g).numpy()
    # NumPy: the group-wise dequantized weight
    s = np.repeat(obs.scales(), g, axis=0)
    codes = np.clip(np.rint(w / s), -127, 127)
    np.testing.assert_allclose(y, x @ (codes * s), rtol=1e-5, atol=1e-5)
    assert np.abs(y - x @ w).max() < 0.1


@pytest.mark.parametrize("kw,match", [({"group_size": 0}, "group_size"),
                                      ({"group_size": 2.5}, "group_size"),
                                      ({"quant_bits": 16}, "quant_bits")])
def test_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        GroupWiseWeightObserver(**kw)._instance()


def test_bad_weights():
    obs = GroupWiseWeightObserverLayer(8, 4)
    with pytest.raises(ValueError, match=r"2-D.*\[2, 4, 3\]"):
        obs(fw.zeros([2, 4, 3]))
    with pytest.raises(ValueError, match=r"group_size=4 must divide.*k=6"):
        obs(fw.zeros([6, 3]))
    obs(fw.ones([8, 3]))
    with pytest.raises(ValueError, match="after one with 2 groups"):
        obs(fw.ones([8, 2]))
    with pytest.raises(RuntimeError, match="no values observed"):
        GroupWiseWeightObserverLayer(8, 4).scales()


def test_ptq_config_refuses_group_wise():
    cfg = QuantConfig(activation=None, weight=GroupWiseWeightObserver(8, 2))
    with pytest.raises(ValueError, match="GroupWiseWeightObserver: group-wise scales are for "
                                         "weight-only"):
        PTQ(cfg).quantize(nn.Sequential(nn.Linear(4, 2)))
