"""fw.distribution against scipy.stats closed forms, on hypothesis-drawn parameters
(float64, so the tolerances are tight): log_prob, entropy, mean, variance, cdf/icdf
and the KL divergences (against numerical integration / summation of the densities)."""

import warnings

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

import fw
import fw.distribution as D

# derandomized (a fixed set of examples) and without shrinking: a failure reports its
# example at once instead of searching minutes for a smaller one
SET = settings(max_examples=12, deadline=None, derandomize=True,
               phases=[Phase.explicit, Phase.generate])
pos = st.floats(0.2, 6.0)
real = st.floats(-3.0, 3.0)
prob = st.floats(0.05, 0.95)


def t(*v):
    return fw.to_tensor(np.array(v, dtype=np.float64))


def close(got, want, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(np.asarray(got.numpy() if hasattr(got, "numpy") else got),
                               want, rtol=rtol, atol=atol)


# (name, fw distribution, scipy frozen distribution, points to evaluate)
def _continuous(name, a, b, c):
    if name == "normal":
        return D.Normal(t(a), t(b)), stats.norm(a, b), [a - b, a, a + 2 * b]
    if name == "uniform":
        return D.Uniform(t(a), t(a + b)), stats.uniform(a, b), [a + 0.1 * b, a + 0.7 * b]
    if name == "lognormal":
        return D.LogNormal(t(a * 0.3), t(b * 0.3)), stats.lognorm(b * 0.3, scale=np.exp(
            a * 0.3)), [0.5, 1.0, 2.5]
    if name == "gamma":
        return D.Gamma(t(b), t(c)), stats.gamma(b, scale=1 / c), [0.3, 1.0, 4.0]
    if name == "chi2":
        return D.Chi2(t(b)), stats.chi2(b), [0.3, 1.0, 4.0]
    if name == "exponential":
        return D.Exponential(t(b)), stats.expon(scale=1 / b), [0.1, 1.0, 3.0]
    if name == "beta":
        return D.Beta(t(b), t(c)), stats.beta(b, c), [0.1, 0.5, 0.85]
    if name == "laplace":
        return D.Laplace(t(a), t(b)), stats.laplace(a, b), [a - b, a + 0.3, a + 2 * b]
    if name == "cauchy":
        return D.Cauchy(t(a), t(b)), stats.cauchy(a, b), [a - b, a + 0.3, a + 2 * b]
    if name == "gumbel":
        return D.Gumbel(t(a), t(b)), stats.gumbel_r(a, b), [a - b, a + 0.3, a + 2 * b]
    if name == "studentt":
        return D.StudentT(t(b + 2), t(a), t(c)), stats.t(b + 2, a, c), [a - 1, a, a + 2.5]
    raise AssertionError(name)


CONT = ["normal", "uniform", "lognormal", "gamma", "chi2", "exponential", "beta", "laplace",
        "cauchy", "gumbel", "studentt"]
HAS_CDF = {"normal", "exponential", "laplace", "cauchy", "gumbel"}
HAS_ICDF = {"normal", "exponential", "laplace", "cauchy"}
NO_MOMENTS = {"cauchy"}


@pytest.mark.parametrize("name", CONT)
@SET
@given(a=real, b=pos, c=pos)
def test_continuous_against_scipy(name, a, b, c):
    d, ref, xs = _continuous(name, a, b, c)
    for x in xs:
        v = t(x)
        close(d.log_prob(v), ref.logpdf(x))
        close(d.prob(v) if name != "normal" else d.probs(v), ref.pdf(x))
        if name in HAS_CDF:
            close(d.cdf(v), ref.cdf(x))
    if name in HAS_ICDF:
        for q in (0.1, 0.5, 0.9):
            close(d.icdf(t(q)), ref.ppf(q), rtol=1e-6)
    close(d.entropy(), ref.entropy(), rtol=1e-6, atol=1e-8)
    if name not in NO_MOMENTS:
        close(d.mean, ref.mean())
        close(d.variance, ref.var(), rtol=1e-6)


@SET
@given(p=prob, n=st.integers(1, 30), lam=pos)
def test_discrete_against_scipy(p, n, lam):
    ks = np.array([0.0, 1.0, 2.0, 5.0])
    cases = [(D.Bernoulli(t(p)), stats.bernoulli(p), ks[:2]),
             (D.Binomial(n, t(p)), stats.binom(n, p), ks[ks <= n]),
             (D.Poisson(t(lam)), stats.poisson(lam), ks),
             (D.Geometric(t(p)), stats.geom(p, loc=-1), ks)]
    for d, ref, xs in cases:
        for k in xs:
            close(d.log_prob(t(k)), ref.logpmf(k), rtol=1e-6, atol=1e-8)
        close(d.entropy(), ref.entropy(), rtol=1e-6, atol=1e-8)
        close(d.mean, ref.mean())
        close(d.variance, ref.var(), rtol=1e-6)


@SET
@given(conc=st.lists(pos, min_size=2, max_size=5), n=st.integers(1, 8))
def test_multivariate_discrete_and_dirichlet(conc, n):
    c = np.array(conc)
    p = c / c.sum()
    x = (c + 0.5) / (c + 0.5).sum()
    d = D.Dirichlet(fw.to_tensor(c))
    ref = stats.dirichlet(c)
    close(d.log_prob(fw.to_tensor(x)), ref.logpdf(x), rtol=1e-6)
    close(d.entropy(), ref.entropy(), rtol=1e-6)
    close(d.mean, ref.mean())
    close(d.variance, ref.var(), rtol=1e-6)
    m = D.Multinomial(n, fw.to_tensor(p))
    cnt = np.zeros(len(c))
    cnt[0] = n
    rm = stats.multinomial(n, p)
    close(m.log_prob(fw.to_tensor(cnt)), rm.logpmf(cnt), rtol=1e-6)
    close(m.entropy(), rm.entropy(), rtol=1e-6)
    cat = D.Categorical(fw.to_tensor(np.log(p)))
    close(cat.entropy(), stats.entropy(p), rtol=1e-6)


@SET
@given(seed=st.integers(0, 10_000), n=st.integers(1, 4))
def test_multivariate_normal_against_scipy(seed, n):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    cov = B @ B.T + n * np.eye(n)
    loc = rng.standard_normal(n)
    x = rng.standard_normal((3, n))
    ref = stats.multivariate_normal(loc, cov)
    for kw in ({"covariance_matrix": cov}, {"precision_matrix": np.linalg.inv(cov)},
               {"scale_tril": np.linalg.cholesky(cov)}):
        d = D.MultivariateNormal(fw.to_tensor(loc),
                                 **{k: fw.to_tensor(v) for k, v in kw.items()})
        close(d.log_prob(fw.to_tensor(x)), ref.logpdf(x), rtol=1e-6)
        close(d.entropy(), ref.entropy(), rtol=1e-6)
        close(d.variance, np.diag(cov), rtol=1e-6)


def _kl_quad(p_ref, q_ref, lo, hi):
    # integrate over p's central 1 - 2e-13 mass (finite bounds: no 0 * log 0 at the ends)
    lo, hi = max(lo, p_ref.ppf(1e-13)), min(hi, p_ref.isf(1e-13))

    def f(x):
        px = p_ref.pdf(x)
        return 0.0 if px == 0 else px * (p_ref.logpdf(x) - q_ref.logpdf(x))

    with warnings.catch_warnings():  # quad's accuracy notes; the tolerance below decides
        warnings.simplefilter("ignore")
        return integrate.quad(f, lo, hi, limit=200, epsabs=1e-10, epsrel=1e-9)[0]


@SET
@given(a=real, b=pos, c=pos, e=pos)
def test_kl_continuous_against_quadrature(a, b, c, e):
    pairs = [
        (D.Normal(t(a), t(b)), D.Normal(t(0.5), t(c)),
         stats.norm(a, b), stats.norm(0.5, c), -np.inf, np.inf),
        (D.Laplace(t(a), t(b)), D.Laplace(t(0.5), t(c)),
         stats.laplace(a, b), stats.laplace(0.5, c), -np.inf, np.inf),
        (D.Gamma(t(b), t(c)), D.Gamma(t(e), t(1.0)),
         stats.gamma(b, scale=1 / c), stats.gamma(e, scale=1.0), 0, np.inf),
        (D.Exponential(t(b)), D.Exponential(t(c)),
         stats.expon(scale=1 / b), stats.expon(scale=1 / c), 0, np.inf),
        (D.Beta(t(b), t(c)), D.Beta(t(e), t(1.5)),
         stats.beta(b, c), stats.beta(e, 1.5), 0, 1),
        (D.LogNormal(t(a * 0.3), t(b * 0.3)), D.LogNormal(t(0.1), t(c * 0.3)),
         stats.lognorm(b * 0.3, scale=np.exp(a * 0.3)),
         stats.lognorm(c * 0.3, scale=np.exp(0.1)), 0, np.inf),
        (D.Uniform(t(a), t(a + b)), D.Uniform(t(a - 1), t(a + b + c)),
         stats.uniform(a, b), stats.uniform(a - 1, b + c + 1), a, a + b),
    ]
    for p, q, pr, qr, lo, hi in pairs:
        close(D.kl_divergence(p, q), _kl_quad(pr, qr, lo, hi), rtol=2e-5, atol=1e-7)


@SET
@given(p=prob, q=prob, n=st.integers(1, 20), l1=pos, l2=pos)
def test_kl_discrete_against_sums(p, q, n, l1, l2):
    def kl_sum(pr, qr, ks):
        pk = pr.pmf(ks)
        return np.sum(np.where(pk > 0, pk * (pr.logpmf(ks) - qr.logpmf(ks)), 0.0))

    ks = np.arange(0, 400)
    close(D.kl_divergence(D.Bernoulli(t(p)), D.Bernoulli(t(q))),
          kl_sum(stats.bernoulli(p), stats.bernoulli(q), ks[:2]), rtol=1e-6)
    close(D.kl_divergence(D.Binomial(n, t(p)), D.Binomial(n, t(q))),
          kl_sum(stats.binom(n, p), stats.binom(n, q), ks[:n + 1]), rtol=1e-6)
    close(D.kl_divergence(D.Geometric(t(p)), D.Geometric(t(q))),
          kl_sum(stats.geom(p, loc=-1), stats.geom(q, loc=-1), ks), rtol=1e-6)
    close(D.kl_divergence(D.Poisson(t(l1)), D.Poisson(t(l2))),
          kl_sum(stats.poisson(l1), stats.poisson(l2), ks), rtol=1e-6)
    pc, qc = np.array([p, 1 - p, 0.3]), np.array([q, 1 - q, 0.6])
    close(D.kl_divergence(D.Categorical(fw.to_tensor(np.log(pc))),
                          D.Categorical(fw.to_tensor(np.log(qc)))),
          [stats.entropy(pc / pc.sum(), qc / qc.sum())], rtol=1e-6)


def test_kl_dirichlet_and_mvn_closed_forms():
    a, b = np.array([0.7, 2.0, 3.5]), np.array([1.5, 1.0, 0.5])
    # KL(Dir(a) || Dir(b)), the textbook form
    a0 = a.sum()
    want = (special.gammaln(a0) - special.gammaln(a).sum() - special.gammaln(b.sum())
            + special.gammaln(b).sum() + ((a - b) * (special.digamma(a)
                                                     - special.digamma(a0))).sum())
    close(D.kl_divergence(D.Dirichlet(fw.to_tensor(a)), D.Dirichlet(fw.to_tensor(b))), want)
    m1, m2 = np.array([0.1, -0.4]), np.array([1.0, 0.5])
    S1, S2 = np.array([[2.0, 0.3], [0.3, 1.0]]), np.array([[1.0, -0.2], [-0.2, 0.5]])
    want = 0.5 * (np.trace(np.linalg.solve(S2, S1)) + (m2 - m1) @ np.linalg.solve(S2, m2 - m1)
                  - 2 + np.log(np.linalg.det(S2) / np.linalg.det(S1)))
    p = D.MultivariateNormal(fw.to_tensor(m1), covariance_matrix=fw.to_tensor(S1))
    q = D.MultivariateNormal(fw.to_tensor(m2), covariance_matrix=fw.to_tensor(S2))
    close(D.kl_divergence(p, q), want)


def test_exponential_family_entropy_matches_closed_form():
    class Exp(D.Exponential):  # the carrier measure of the exponential is 0
        _mean_carrier_measure = 0.0

    d = Exp(t(0.5, 2.0))
    close(D.ExponentialFamily.entropy(d), d.entropy())
    # the generic Bregman KL between two members of one family
    close(D.kl.__dict__["_kl_expfamily_expfamily"](Exp(t(0.5)), Exp(t(2.0))),
          D.Exponential(t(0.5)).kl_divergence(D.Exponential(t(2.0))))


def test_lkj_log_prob_normalised():
    # the LKJ density over 2x2 correlation matrices integrates to 1 in the off-diagonal r
    d = D.LKJCholesky(2, 2.5)
    rs = np.linspace(-0.999, 0.999, 4001)
    Ls = np.zeros((len(rs), 2, 2))
    Ls[:, 0, 0] = 1
    Ls[:, 1, 0] = rs
    Ls[:, 1, 1] = np.sqrt(1 - rs ** 2)
    # for dim 2 the free coordinate of L is r itself: the density is (1 - r^2)^(eta - 1)
    lp = d.log_prob(fw.to_tensor(Ls)).numpy()
    assert integrate.trapezoid(np.exp(lp), rs) == pytest.approx(1.0, abs=2e-3)
