"""Sampling: shapes, seeded reproducibility, sample moments (n = 40000 draws, bounds
of 6 standard errors from the CLT; the draws are seeded, so the outcome is fixed) and
reparameterised gradients (against finite differences on the same noise, or the
analytic derivative)."""

import numpy as np
import pytest
from scipy import special

import fw
import fw.distribution as D

N = 40000


def t(*v, dtype=np.float64):
    return fw.to_tensor(np.array(v, dtype=dtype))


def _moments_ok(x, mean, var, who):
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    m = x.mean(0)
    se = np.sqrt(var / n)
    assert np.all(np.abs(m - mean) <= 6 * se + 1e-12), (who, m, mean, se)
    # the sample variance's standard error needs the fourth moment: estimate it
    v = x.var(0)
    m4 = ((x - m) ** 4).mean(0)
    se_v = np.sqrt(np.maximum(m4 - v ** 2, 0) / n)
    assert np.all(np.abs(v - var) <= 6 * se_v + 1e-9), (who, v, var, se_v)


DISTS = {
    "normal": lambda: D.Normal(t(0.5, -1.0), t(1.0, 2.0)),
    "uniform": lambda: D.Uniform(t(-1.0, 0.0), t(1.0, 3.0)),
    "lognormal": lambda: D.LogNormal(t(0.0), t(0.5)),
    "gamma": lambda: D.Gamma(t(0.4, 3.0), t(1.0, 2.0)),
    "chi2": lambda: D.Chi2(t(3.0)),
    "exponential": lambda: D.Exponential(t(0.5, 4.0)),
    "beta": lambda: D.Beta(t(0.5, 2.0), t(0.5, 5.0)),
    "dirichlet": lambda: D.Dirichlet(t(0.3, 1.0, 4.0)),
    "laplace": lambda: D.Laplace(t(1.0), t(0.7)),
    "gumbel": lambda: D.Gumbel(t(1.0), t(2.0)),
    "studentt": lambda: D.StudentT(t(7.0), t(1.0), t(0.5)),
    "bernoulli": lambda: D.Bernoulli(t(0.2, 0.7)),
    "binomial": lambda: D.Binomial(12, t(0.3, 0.8)),
    "poisson": lambda: D.Poisson(t(0.7, 6.0)),
    "geometric": lambda: D.Geometric(t(0.25)),
    "cbernoulli": lambda: D.ContinuousBernoulli(t(0.2, 0.5, 0.9)),
    "multinomial": lambda: D.Multinomial(5, t(0.2, 0.3, 0.5)),
    "mvn": lambda: D.MultivariateNormal(
        t(1.0, -1.0), covariance_matrix=fw.to_tensor(np.array([[2.0, 0.5], [0.5, 1.0]]))),
}


@pytest.mark.parametrize("name", sorted(DISTS))
def test_sample_moments_and_shapes(name):
    d = DISTS[name]()
    fw.seed(2024)
    x = d.sample([N])
    assert list(x.shape) == [N] + list(d.batch_shape) + list(d.event_shape)
    fw.seed(2024)
    np.testing.assert_array_equal(d.sample([N]).numpy(), x.numpy())  # fw.seed reproduces
    _moments_ok(x.numpy(), d.mean.numpy(), d.variance.numpy(), name)


def test_categorical_and_cauchy_frequencies():
    fw.seed(7)
    c = D.Categorical(fw.to_tensor(np.log(np.array([0.1, 0.6, 0.3]))))
    s = c.sample([N]).numpy()
    assert s.dtype == np.int64
    freq = np.bincount(s, minlength=3) / N
    np.testing.assert_allclose(freq, [0.1, 0.6, 0.3], atol=6 * np.sqrt(0.25 / N))
    cy = D.Cauchy(t(1.0), t(2.0))
    q = np.quantile(cy.sample([N]).numpy(), [0.25, 0.5, 0.75])
    # the quartiles of Cauchy(1, 2) are 1 -/+ 2; the quantiles' standard error ~ 2.5 / sqrt(N)
    np.testing.assert_allclose(q, [-1.0, 1.0, 3.0], atol=6 * 2 * np.pi / np.sqrt(N))


def test_lkj_samples_are_correlation_cholesky_factors():
    for method in ("onion", "cvine"):
        fw.seed(3)
        d = D.LKJCholesky(4, t(0.7, 3.0), sample_method=method)
        L = d.sample([500]).numpy()
        assert L.shape == (500, 2, 4, 4)
        np.testing.assert_allclose(np.triu(L, 1), 0, atol=0)
        C = L @ np.swapaxes(L, -1, -2)
        np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-9)
        # E[C_ij] = 0 off the diagonal; Var(C_ij) = 1/(2 eta + dim - 1) for LKJ(eta)
        off = C[:, :, 1, 0]
        var = 1.0 / (2 * np.array([0.7, 3.0]) + 3)
        assert np.all(np.abs(off.mean(0)) <= 6 * np.sqrt(var / 500)), method
        np.testing.assert_allclose(off.var(0), var, rtol=0.25)


def test_normal_sample_seed_argument_and_float_params():
    d = D.Normal(0.0, 1.0)
    a, b = d.sample([5], seed=11), d.sample([5], seed=11)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.shape == [5] and a.dtype == fw.float32
    assert D.Uniform(0.0, 1.0).sample([3, 2]).shape == [3, 2]
    assert D.Normal(np.zeros(3), np.ones(3)).sample([4]).dtype == fw.float64


# ---------------------------------------------------------------- reparameterisation
def _fd_check(make, params, shape=(6,), h=1e-6, seed=99):
    """d(sum(rsample))/d(param) by autograd == central difference with the same noise."""
    ps = [fw.to_tensor(np.array(p, np.float64), stop_gradient=False) for p in params]
    fw.seed(seed)
    make(*ps).rsample(list(shape)).sum().backward()
    for i, p in enumerate(params):
        p = np.array(p, np.float64)
        fd = np.zeros_like(p)
        for j in np.ndindex(p.shape if p.shape else ()):
            vals = []
            for s in (h, -h):
                q = [np.array(x, np.float64) for x in params]
                q[i] = p.copy()
                q[i][j] += s
                fw.seed(seed)
                vals.append(float(make(*[fw.to_tensor(x) for x in q]).rsample(
                    list(shape)).sum()))
            fd[j] = (vals[0] - vals[1]) / (2 * h)
        np.testing.assert_allclose(ps[i].grad.numpy(), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, params", [
    (D.Normal, ([0.3, -1.0], [1.5, 0.4])),
    (D.Uniform, ([0.3, -1.0], [1.5, 0.4])),
    (D.LogNormal, ([0.3], [0.4])),
    (D.Laplace, ([0.3, -1.0], [1.5, 0.4])),
    (D.Cauchy, ([0.3], [1.5])),
    (D.Gumbel, ([0.3], [1.5])),
    (D.Exponential, ([0.3, 2.0],)),
    (D.ContinuousBernoulli, ([0.2, 0.8],)),
    (lambda loc, L: D.MultivariateNormal(loc, scale_tril=L),
     ([0.3, -1.0], [[1.0, 0.0], [0.4, 0.7]])),
])
def test_rsample_gradient_matches_finite_differences(make, params):
    _fd_check(make, params)


def test_gamma_rsample_implicit_gradient_matches_quantile_derivative():
    # x = F^{-1}(u; a): dx/da at fixed u is the derivative of the quantile function
    a = np.array([0.3, 1.0, 4.5, 20.0])
    at = fw.to_tensor(a, stop_gradient=False)
    fw.seed(5)
    x = D.Gamma(at, fw.ones([4], dtype="float64")).rsample()
    x.sum().backward()
    xv = x.numpy()
    u = special.gammainc(a, xv)
    h = 1e-6 * a
    dq = (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(at.grad.numpy(), dq, rtol=1e-4)


def test_gamma_family_rsample_gradients_in_expectation():
    # d/da E[X] for Gamma(a, 1) is 1; for Beta(a, b) it is b / (a + b)^2; the Monte Carlo
    # average of the pathwise gradients converges to them (seeded: fixed outcome)
    n = 20000
    a = fw.to_tensor([0.6, 3.0], stop_gradient=False)
    fw.seed(8)
    D.Gamma(a, fw.to_tensor([1.0, 1.0])).rsample([n]).mean(0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 1.0], atol=0.05)
    al = fw.to_tensor([2.0], stop_gradient=False)
    fw.seed(9)
    D.Beta(al, fw.to_tensor([3.0])).rsample([n]).mean().backward()
    assert float(al.grad) == pytest.approx(3.0 / 25.0, abs=0.01)
    c = fw.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    fw.seed(10)
    D.Dirichlet(c).rsample([n]).mean(0)[0].backward()
    # d/dc_j E[X_0] = (delta_0j c0 - c_0) / c0^2 with c0 = 6
    np.testing.assert_allclose(c.grad.numpy(), [5 / 36, -1 / 36, -1 / 36], atol=0.01)


def test_sample_has_no_gradient_rsample_has():
    loc = fw.to_tensor([0.0], stop_gradient=False)
    d = D.Normal(loc, fw.to_tensor([1.0]))
    assert d.sample([3]).stop_gradient
    assert not d.rsample([3]).stop_gradient


def test_transformed_distribution_rsample_through_transforms():
    loc = fw.to_tensor([0.2], stop_gradient=False)
    d = D.TransformedDistribution(D.Normal(loc, fw.to_tensor([1.0])),
                                  [D.AffineTransform(fw.to_tensor(1.0), fw.to_tensor(2.0)),
                                   D.ExpTransform()])
    fw.seed(1)
    y = d.rsample([5])
    y.sum().backward()
    # y = exp(1 + 2 x): dy/dloc = 2 y
    np.testing.assert_allclose(loc.grad.numpy(), [2 * y.numpy().sum()], rtol=1e-5)


def test_complex_normal_samples():
    loc = fw.to_tensor(np.array([1.0 + 2.0j, -0.5j], np.complex64))
    d = D.Normal(loc, fw.to_tensor(np.array([0.5, 2.0], np.float32)))
    fw.seed(4)
    z = d.sample([N]).numpy()
    assert z.dtype == np.complex64 and z.shape == (N, 2)
    var = np.array([0.25, 4.0])
    # real and imaginary parts: independent, each with variance scale^2 / 2
    _moments_ok(z.real, loc.numpy().real, var / 2, "complex normal (real)")
    _moments_ok(z.imag, loc.numpy().imag, var / 2, "complex normal (imag)")
    assert abs(np.corrcoef(z.real[:, 0], z.imag[:, 0])[0, 1]) < 6 / np.sqrt(N)
    assert D.Normal(1.0 + 2.0j, 0.5).sample([3]).shape == [3]
