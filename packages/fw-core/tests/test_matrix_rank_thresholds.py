"""matrix_rank's threshold rules (Paddle 3 / NumPy 2 / PyTorch semantics) on matrices
built with known singular values: the default eps * max(m, n) * s_max, an absolute
`tol`, `atol` and `rtol` alone and together (rtol defaults to 0 once atol > 0), and the
hermitian path, which ranks |eigenvalues|."""

import numpy as np
import pytest

import fw


def _with_singular_values(s, m, n, seed=0):
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.standard_normal((m, m)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    d = np.zeros((m, n))
    d[np.arange(len(s)), np.arange(len(s))] = s
    return u @ d @ v.T


S = [10.0, 1.0, 1e-3, 1e-9]
A = _with_singular_values(S, 5, 4)  # max(m, n) = 5
EPS = np.finfo(np.float64).eps


@pytest.mark.parametrize("kw,want", [
    ({}, 4),                                   # 1e-9 > 10 * 5 * eps
    ({"tol": 1e-2}, 2),
    ({"tol": 1e-4}, 3),
    ({"tol": 20.0}, 0),
    ({"atol": 0.5}, 2),                        # rtol 0 once atol > 0
    ({"atol": 1e-6}, 3),
    ({"rtol": 1e-3}, 2),                       # threshold 1e-3 * 10 = 1e-2
    ({"rtol": 1e-5}, 3),
    ({"atol": 1e-6, "rtol": 1e-3}, 2),         # the larger of the two
    ({"atol": 2.0, "rtol": 1e-5}, 1),
    ({"atol": 0.0}, 4),                        # atol 0: rtol falls back to eps * max(m, n)
])
def test_thresholds(kw, want):
    got = fw.linalg.matrix_rank(fw.to_tensor(A), **kw)
    assert got.dtype == fw.int32 or got.dtype == fw.int64
    assert int(got) == want, kw


def test_default_threshold_scales_with_the_largest_singular_value_and_size():
    # s_min just above / below eps * max(m, n) * s_max
    t = 10.0 * 5 * EPS
    assert int(fw.linalg.matrix_rank(fw.to_tensor(_with_singular_values([10.0, t * 4], 5, 4)))) \
        == 2
    assert int(fw.linalg.matrix_rank(fw.to_tensor(_with_singular_values([10.0, t / 4], 5, 4)))) \
        == 1


def test_hermitian_ranks_absolute_eigenvalues_and_batches():
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    h = q @ np.diag([-10.0, 1.0, 1e-3, 0.0]) @ q.T
    x = fw.to_tensor(np.stack([h, 2 * h]))
    np.testing.assert_array_equal(fw.linalg.matrix_rank(x, hermitian=True).numpy(), [3, 3])
    np.testing.assert_array_equal(
        fw.linalg.matrix_rank(x, tol=1e-2, hermitian=True).numpy(), [2, 2])
    np.testing.assert_array_equal(
        fw.linalg.matrix_rank(x, atol=1.5, hermitian=True).numpy(), [1, 2])
