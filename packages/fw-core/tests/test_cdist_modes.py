"""cdist's Euclidean path choice (PyTorch's and Paddle's compute_mode): the direct
difference formula for up to 25 rows on both sides, the matrix-product formula
||x||^2 + ||y||^2 - 2 x.y above that (``use_mm_for_euclid_dist_if_necessary``), always
(``use_mm_for_euclid_dist``) or never (``donot_use_mm_for_euclid_dist``). Points far
from the origin and close together tell the two apart: the product formula loses
their small distances to cancellation."""

import numpy as np
import pytest

import fw


def _points(rows, seed):
    rng = np.random.default_rng(seed)
    return 1e4 + rng.standard_normal((rows, 3)) * 1e-3


def _direct(x, y):
    return np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))


def _via_mm(x, y):
    sq = (x * x).sum(-1)[:, None] + (y * y).sum(-1)[None, :] - 2 * x @ y.T
    return np.sqrt(np.maximum(sq, 0))


@pytest.mark.parametrize("rows,cols,mode,formula", [
    (25, 25, None, _direct),
    (25, 3, None, _direct),
    (26, 3, None, _via_mm),
    (3, 26, None, _via_mm),
    (3, 3, "use_mm_for_euclid_dist", _via_mm),
    (30, 30, "donot_use_mm_for_euclid_dist", _direct),
])
def test_euclidean_formula_by_size_and_mode(rows, cols, mode, formula):
    x, y = _points(rows, 0), _points(cols, 1)
    kw = {} if mode is None else {"compute_mode": mode}
    got = fw.cdist(fw.to_tensor(x), fw.to_tensor(y), **kw).numpy()
    np.testing.assert_allclose(got, formula(x, y), rtol=1e-9, atol=1e-9)
    other = _via_mm if formula is _direct else _direct
    assert np.max(np.abs(other(x, y) - formula(x, y))) > 1e-8  # the points tell them apart


def test_other_p_never_use_the_product_formula():
    x, y = _points(30, 2), _points(30, 3)
    for p, ref in ((1.0, lambda d: d.sum(-1)), (3.0, lambda d: (d ** 3).sum(-1) ** (1 / 3))):
        d = np.abs(x[:, None, :] - y[None, :, :])
        np.testing.assert_allclose(fw.cdist(fw.to_tensor(x), fw.to_tensor(y), p=p).numpy(),
                                   ref(d), rtol=1e-9)
