"""The standard_gamma and binomial ops draw the right distributions (seeded, so the
outcome is fixed; bounds of 6 standard errors), reproducibly under fw.seed, and reject
bad parameters."""

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError

N = 50000


def test_standard_gamma_moments():
    a = np.array([0.2, 1.0, 7.5])
    fw.seed(12)
    x = fw.standard_gamma(fw.to_tensor(np.broadcast_to(a, (N, 3)).copy())).numpy()
    assert x.dtype == np.float64 and x.shape == (N, 3) and (x > 0).all()
    se = np.sqrt(a / N)  # the mean and variance of Gamma(a, 1) are both a
    assert np.all(np.abs(x.mean(0) - a) <= 6 * se)
    m4 = 3 * a * (a + 2)  # the fourth central moment
    assert np.all(np.abs(x.var(0) - a) <= 6 * np.sqrt((m4 - a * a) / N))
    fw.seed(12)
    y = fw.standard_gamma(fw.to_tensor(np.broadcast_to(a, (N, 3)).copy())).numpy()
    np.testing.assert_array_equal(x, y)
    assert fw.standard_gamma(fw.full([2], 1.5, dtype="float32")).dtype == fw.float32


def test_binomial_moments():
    n = np.array([1, 10, 40])
    p = np.array([0.3, 0.5, 0.9])
    fw.seed(3)
    k = fw.binomial(fw.to_tensor(np.broadcast_to(n, (N, 3)).copy()),
                    fw.to_tensor(np.broadcast_to(p, (N, 3)).copy())).numpy()
    assert k.dtype == np.int64 and (k >= 0).all() and (k <= n).all()
    var = n * p * (1 - p)
    assert np.all(np.abs(k.mean(0) - n * p) <= 6 * np.sqrt(var / N))
    # broadcasting count against prob
    assert fw.binomial(fw.to_tensor([5]), fw.full([2, 3], 0.5)).shape == [2, 3]


def test_errors():
    with pytest.raises(InvalidArgumentError, match="> 0"):
        fw.standard_gamma(fw.to_tensor([1.0, 0.0]))
    with pytest.raises(InvalidTypeError, match="floating"):
        fw.standard_gamma(fw.to_tensor([1, 2]))
    with pytest.raises(InvalidArgumentError, match=r"\[0, 1\]"):
        fw.binomial(fw.to_tensor([3]), fw.to_tensor([1.5]))
    with pytest.raises(InvalidArgumentError, match=">= 0"):
        fw.binomial(fw.to_tensor([-1]), fw.to_tensor([0.5]))
