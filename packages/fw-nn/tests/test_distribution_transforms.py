"""Transforms: inverse(forward(x)) == x, forward_log_det_jacobian against the log
|det| of the Jacobian computed by fw.autograd, shapes, composition, and errors; plus
kl_divergence dispatch and argument errors of the distributions."""

import numpy as np
import pytest

import fw
import fw.distribution as D

X = np.array([[0.3, -0.7, 1.2], [-1.5, 0.2, 0.05]])


def _jac_logdet(tr, x):
    """log|det J| per row of x (each row an event of size n -> m) by autograd."""
    out = []
    for row in x:
        xt = fw.to_tensor(row, stop_gradient=False)
        J = fw.autograd.jacobian(tr.forward(xt), xt).numpy()
        if J.ndim == 1:
            J = np.diag(J)
        out.append(np.linalg.slogdet(J)[1])
    return np.array(out)


ELEMENTWISE = {
    "exp": D.ExpTransform(),
    "sigmoid": D.SigmoidTransform(),
    "tanh": D.TanhTransform(),
    "affine": D.AffineTransform(fw.to_tensor([0.5, -1.0, 2.0], dtype="float64"),
                                fw.to_tensor([2.0, -0.5, 3.0], dtype="float64")),
    "power": D.PowerTransform(fw.to_tensor(2.5, dtype="float64")),
    "chain": D.ChainTransform([D.AffineTransform(fw.to_tensor(0.1, dtype="float64"),
                                                 fw.to_tensor(0.5, dtype="float64")),
                               D.TanhTransform()]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_bijections(name):
    tr = ELEMENTWISE[name]
    x = np.abs(X) + 0.1 if name == "power" else X
    xt = fw.to_tensor(x)
    y = tr.forward(xt)
    np.testing.assert_allclose(tr.inverse(y).numpy(), x, rtol=1e-9, atol=1e-9)
    fldj = tr.forward_log_det_jacobian(xt).numpy()
    want = _jac_logdet(tr, x)
    np.testing.assert_allclose(np.broadcast_to(fldj, x.shape).sum(-1), want, rtol=1e-7)
    np.testing.assert_allclose(tr.inverse_log_det_jacobian(y).numpy(), -fldj, rtol=1e-7)
    assert tuple(tr.forward_shape((2, 3))) == (2, 3)


def test_stick_breaking_maps_onto_the_simplex():
    tr = D.StickBreakingTransform()
    x = fw.to_tensor(X[:, :2])
    y = tr.forward(x)
    assert y.shape == [2, 3]
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(tr.inverse(y).numpy(), X[:, :2], rtol=1e-9, atol=1e-12)
    # the Jacobian of x -> y[:-1] (the free coordinates of the simplex)
    want = []
    for row in X[:, :2]:
        xt = fw.to_tensor(row, stop_gradient=False)
        J = fw.autograd.jacobian(tr.forward(xt)[:-1], xt).numpy()
        want.append(np.linalg.slogdet(J)[1])
    np.testing.assert_allclose(tr.forward_log_det_jacobian(x).numpy(), want, rtol=1e-7)
    assert tr.forward_shape((4, 2)) == (4, 3) and tr.inverse_shape((4, 3)) == (4, 2)


def test_structural_transforms():
    x = fw.to_tensor(X)
    r = D.ReshapeTransform((3,), (3, 1))
    assert r.forward(x).shape == [2, 3, 1] and r.inverse(r.forward(x)).shape == [2, 3]
    assert r.forward_log_det_jacobian(x).shape == [2]
    it = D.IndependentTransform(D.ExpTransform(), 1)
    np.testing.assert_allclose(it.forward_log_det_jacobian(x).numpy(), X.sum(-1))
    st = D.StackTransform([D.ExpTransform(), D.TanhTransform()], axis=0)
    np.testing.assert_allclose(st.forward(x).numpy(), np.stack([np.exp(X[0]),
                                                                np.tanh(X[1])]))
    a = D.AbsTransform()
    neg, posv = a.inverse(fw.to_tensor([1.5]))
    assert float(neg) == -1.5 and float(posv) == 1.5
    sm = D.SoftmaxTransform()
    np.testing.assert_allclose(sm.forward(x).numpy().sum(-1), 1.0)
    with pytest.raises(NotImplementedError, match="non-injective"):
        sm.forward_log_det_jacobian(x)


def test_transform_call_forms():
    e = D.ExpTransform()
    assert isinstance(e(D.Normal(0.0, 1.0)), D.TransformedDistribution)
    assert isinstance(e(D.TanhTransform()), D.ChainTransform)
    np.testing.assert_allclose(e(fw.to_tensor([0.0])).numpy(), [1.0])


def test_transformed_distribution_log_prob_is_lognormal():
    base = D.Normal(fw.to_tensor([0.2], dtype="float64"), fw.to_tensor([0.7], dtype="float64"))
    td = D.TransformedDistribution(base, [D.ExpTransform()])
    ln = D.LogNormal(fw.to_tensor([0.2], dtype="float64"), fw.to_tensor([0.7],
                                                                       dtype="float64"))
    v = fw.to_tensor([0.5, 1.0, 3.0], dtype="float64")
    np.testing.assert_allclose(td.log_prob(v).numpy(), ln.log_prob(v).numpy())
    ind = D.Independent(D.Normal(fw.zeros([2, 3]), fw.ones([2, 3])), 1)
    assert ind.batch_shape == (2,) and ind.event_shape == (3,)
    td2 = D.TransformedDistribution(ind, [D.StickBreakingTransform()])
    assert td2.event_shape == (4,) and td2.batch_shape == (2,)


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="'loc' must be a Tensor"):
        D.AffineTransform(1.0, fw.to_tensor(1.0))
    with pytest.raises(ValueError, match="different sizes"):
        D.ReshapeTransform((2, 3), (4,))
    with pytest.raises(ValueError, match="reinterpreted_batch_rank"):
        D.Independent(D.Normal(fw.zeros([2]), fw.ones([2])), 2)
    with pytest.raises(ValueError, match="exactly one"):
        D.MultivariateNormal(fw.zeros([2]))
    with pytest.raises(ValueError, match=r"\[\.\.\., 2, 2\]"):
        D.MultivariateNormal(fw.zeros([2]), covariance_matrix=fw.eye(3))
    with pytest.raises(TypeError, match="sample shape"):
        D.Normal(0.0, 1.0).rsample(3)
    with pytest.raises(ValueError, match="total_count"):
        D.Multinomial(0, fw.to_tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="'df'"):
        D.Chi2(fw.to_tensor([-1.0]))
    with pytest.raises(ValueError, match="'probs'"):
        D.Geometric(1.5)
    with pytest.raises(NotImplementedError, match="register_kl"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0))
    with pytest.raises(ValueError, match="no mean"):
        _ = D.Cauchy(0.0, 1.0).mean


def test_register_kl_most_specific_wins():
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return fw.full([], 42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))) == 42.0
    # (Normal, MyNormal) still dispatches to (Normal, Normal)
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0))) == 0.0
    with pytest.raises(TypeError, match="subclasses of Distribution"):
        D.register_kl(int, D.Normal)
