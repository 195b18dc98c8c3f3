"""The hard-label cross-entropy kernels (fw.core.kernels.cpu.loss) against the op's NumPy
references, on the cases they take and the ones they must hand back."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError
from fw.core.kernels.cpu import loss as cpu_loss
from fw.core.ops import OPS

CE, CEG = OPS["cross_entropy_with_softmax"], OPS["cross_entropy_with_softmax_grad"]


def _both(op, *args, **attrs):
    return op.kernels["cpu"](*args, **attrs), op.reference(*args, **attrs)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 40), c=st.integers(1, 12), keep=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]),
       reduction=st.sampled_from(["mean", "sum", "none"]), seed=st.integers(0, 999))
def test_fast_path_matches_reference(n, c, keep, dtype, reduction, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, c)) * 5).astype(dtype)
    y = rng.integers(0, c, (n, 1) if keep else n)
    assert cpu_loss._ce_fast(x, y, None, False, -100, reduction, -1, True) is not None
    (loss, sm), (rloss, rsm) = _both(CE, x, y, reduction=reduction)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert loss.dtype == rloss.dtype and loss.shape == rloss.shape
    np.testing.assert_allclose(loss, rloss, rtol=tol, atol=tol)
    np.testing.assert_allclose(sm, rsm, rtol=tol, atol=tol)
    gl = np.asarray(rng.standard_normal(rloss.shape), dtype)
    g, rg = _both(CEG, rsm, y, None, gl, reduction=reduction)
    assert g.dtype == rg.dtype and g.shape == rg.shape
    np.testing.assert_allclose(g, rg, rtol=tol, atol=tol)


def test_ignored_labels_go_to_the_reference():
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    y = np.array([0, 1, 2, 1])
    assert cpu_loss._ce_fast(x, y, None, False, 1, "mean", -1, True) is None
    (loss, _), (rloss, _) = _both(CE, x, y, ignore_index=1)
    np.testing.assert_allclose(loss, rloss, rtol=1e-6)


def test_inf_logits_go_to_the_reference():
    x = np.array([[np.inf, 0.0], [1.0, 2.0]], np.float32)
    y = np.array([0, 1])
    assert cpu_loss._ce_fast(x, y, None, False, -100, "none", -1, True) is None
    (loss, sm), (rloss, rsm) = _both(CE, x, y, reduction="none")
    np.testing.assert_array_equal(loss, rloss)
    np.testing.assert_array_equal(sm, rsm)


@pytest.mark.parametrize("bad", [-1, 3])
def test_out_of_range_labels_keep_the_reference_error(bad):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(InvalidArgumentError, match="out of range for 3 classes"):
        CE.kernels["cpu"](x, np.array([0, bad]))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_grad_of_an_f_ordered_softmax_keeps_the_label_term(reduction):
    # the transpose of a gathered block is F-ordered; the fast kernel's in-place label
    # subtraction once went into a copy and was lost
    rng = np.random.default_rng(0)
    sm = np.asfortranarray(rng.random((6, 5)).astype(np.float32))
    y = rng.integers(0, 5, 6)
    got, want = _both(CEG, sm, y, None, np.array(1.0, np.float32), reduction=reduction)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
