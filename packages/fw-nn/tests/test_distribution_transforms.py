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


@pytest.mark.parametrize("make, params, value", [
    (D.Normal, ([0.3], [1.5]), [0.7]),
    (D.Gamma, ([2.5], [1.5]), [0.7]),
    (D.Beta, ([2.5], [1.5]), [0.3]),
    (D.StudentT, ([4.0], [0.2], [1.5]), [0.7]),
    (D.Laplace, ([0.3], [1.5]), [0.7]),
    (D.Gumbel, ([0.3], [1.5]), [0.7]),
    (D.Poisson, ([2.5],), [3.0]),
    (D.Binomial, (7, [0.3]), [2.0]),
    (D.ContinuousBernoulli, ([0.3],), [0.6]),
    (lambda c: D.Dirichlet(c), ([1.5, 0.7, 2.0],), [0.2, 0.3, 0.5]),
])
def test_log_prob_and_entropy_gradients_match_finite_differences(make, params, value):
    """d log_prob / d params and d entropy / d params through fw.autograd (float64)
    against central differences of the same fw functions."""
    v = fw.to_tensor(np.array(value, np.float64))
    h = 1e-6
    for what in ("log_prob", "entropy"):
        ts = [fw.to_tensor(np.array(p, np.float64), stop_gradient=False)
              if not isinstance(p, int) else p for p in params]
        f = lambda d, what=what: (d.log_prob(v) if what == "log_prob" else d.entropy()).sum()  # noqa: E731
        f(make(*ts)).backward()
        for i, p in enumerate(params):
            if isinstance(p, int):
                continue
            p = np.array(p, np.float64)
            fd = np.zeros_like(p)
            for j in range(p.size):
                vals = []
                for s in (h, -h):
                    q = p.copy()
                    q[j] += s
                    args = [fw.to_tensor(q) if k == i else
                            (fw.to_tensor(np.array(x, np.float64)) if not isinstance(x, int)
                             else x) for k, x in enumerate(params)]
                    vals.append(float(f(make(*args))))
                fd[j] = (vals[0] - vals[1]) / (2 * h)
            # no gradient: the value does not depend on it (the entropy on a location)
            g = np.zeros_like(p) if ts[i].grad is None else ts[i].grad.numpy()
            np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7, err_msg=f"{what} param {i}")
