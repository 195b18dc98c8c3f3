"""Deterministic calls of paddle.distribution, written against a module ``paddle`` so the
same code runs on real Paddle (``gen_distribution_fixture.py`` records the results into
``fixtures/distribution_paddle.json``) and on fw (``test_distribution_paddle_fixture.py``
runs it with ``import fw as paddle`` and compares)."""

import numpy as np


def cases(paddle):
    D = paddle.distribution
    t = paddle.to_tensor
    loc = t(np.array([0.3, -1.2, 2.0], np.float32))
    sc = t(np.array([0.5, 1.5, 2.5], np.float32))
    v = t(np.array([0.1, 0.4, 1.7], np.float32))
    p = t(np.array([0.2, 0.55, 0.9], np.float32))
    a = t(np.array([0.7, 2.0, 5.5], np.float32))
    b = t(np.array([1.3, 0.6, 3.0], np.float32))
    u01 = t(np.array([0.15, 0.5, 0.85], np.float32))
    conc = t(np.array([[0.5, 1.5, 3.0], [2.0, 2.0, 2.0]], np.float32))
    simplex = t(np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], np.float32))
    logits = t(np.array([[1.0, 2.0, 3.0], [0.5, 0.25, 0.25]], np.float32))
    cov = t(np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32))
    mloc = t(np.array([0.5, -0.5, 1.0], np.float32))
    xm = t(np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]], np.float32))
    L = t(np.array([[1.0, 0.0, 0.0], [0.4, 0.9, 0.0], [-0.3, 0.2, 0.8]], np.float32))
    counts = t(np.array([0.0, 1.0, 3.0], np.float32))
    c = {}

    n1, n2 = D.Normal(loc, sc), D.Normal(b, a)
    c["normal.log_prob"] = lambda: n1.log_prob(v)
    c["normal.probs"] = lambda: n1.probs(v)
    c["normal.entropy"] = lambda: n1.entropy()
    c["normal.variance"] = lambda: n1.variance
    c["normal.kl"] = lambda: n1.kl_divergence(n2)
    c["normal.kl_fn"] = lambda: D.kl_divergence(n1, n2)
    c["normal.float_entropy"] = lambda: D.Normal(0.5, 2.0).entropy()
    zloc = t(np.array([0.3 + 1.0j, -1.2 - 0.5j, 2.0j], np.complex64))
    zv = t(np.array([0.1 - 0.2j, 0.4 + 0.4j, 1.7 + 1.0j], np.complex64))
    cn1, cn2 = D.Normal(zloc, sc), D.Normal(zloc * 0.5, b)
    c["cnormal.log_prob"] = lambda: cn1.log_prob(zv)
    c["cnormal.probs"] = lambda: cn1.probs(zv)
    c["cnormal.entropy"] = lambda: cn1.entropy()
    c["cnormal.kl"] = lambda: cn1.kl_divergence(cn2)
    c["cnormal.python_entropy"] = lambda: D.Normal(1.0 + 2.0j, 0.5).entropy()
    u1 = D.Uniform(loc - 3, loc + sc)
    c["uniform.log_prob"] = lambda: u1.log_prob(v)
    c["uniform.probs"] = lambda: u1.probs(v)
    c["uniform.entropy"] = lambda: u1.entropy()
    ln1, ln2 = D.LogNormal(loc, sc), D.LogNormal(b, a)
    c["lognormal.log_prob"] = lambda: ln1.log_prob(a)
    c["lognormal.mean"] = lambda: ln1.mean
    c["lognormal.variance"] = lambda: ln1.variance
    c["lognormal.entropy"] = lambda: ln1.entropy()
    c["lognormal.kl"] = lambda: D.kl_divergence(ln1, ln2)
    be1, be2 = D.Bernoulli(p), D.Bernoulli(u01)
    c["bernoulli.log_prob"] = lambda: be1.log_prob(t(np.array([1.0, 0.0, 1.0], np.float32)))
    c["bernoulli.entropy"] = lambda: be1.entropy()
    c["bernoulli.cdf"] = lambda: be1.cdf(t(np.array([-0.5, 0.5, 1.0], np.float32)))
    c["bernoulli.kl"] = lambda: D.kl_divergence(be1, be2)
    c["bernoulli.variance"] = lambda: be1.variance
    bt1, bt2 = D.Beta(a, b), D.Beta(b, a)
    c["beta.log_prob"] = lambda: bt1.log_prob(u01)
    c["beta.entropy"] = lambda: bt1.entropy()
    c["beta.mean"] = lambda: bt1.mean
    c["beta.variance"] = lambda: bt1.variance
    c["beta.kl"] = lambda: D.kl_divergence(bt1, bt2)
    bi1, bi2 = D.Binomial(10, p), D.Binomial(10, u01)
    c["binomial.log_prob"] = lambda: bi1.log_prob(counts)
    c["binomial.entropy"] = lambda: bi1.entropy()
    c["binomial.variance"] = lambda: bi1.variance
    c["binomial.kl"] = lambda: D.kl_divergence(bi1, bi2)
    ca1, ca2 = D.Categorical(logits), D.Categorical(conc)
    c["categorical.entropy"] = lambda: ca1.entropy()
    c["categorical.kl"] = lambda: ca1.kl_divergence(ca2)
    c["categorical.probs"] = lambda: ca1.probs(t(np.array([2, 0], np.int64)))
    c["categorical.log_prob"] = lambda: ca1.log_prob(t(np.array([1, 2], np.int64)))
    cy1, cy2 = D.Cauchy(loc, sc), D.Cauchy(b, a)
    c["cauchy.log_prob"] = lambda: cy1.log_prob(v)
    c["cauchy.cdf"] = lambda: cy1.cdf(v)
    c["cauchy.entropy"] = lambda: cy1.entropy()
    c["cauchy.kl"] = lambda: D.kl_divergence(cy1, cy2)
    c["chi2.log_prob"] = lambda: D.Chi2(a).log_prob(b)
    c["chi2.entropy"] = lambda: D.Chi2(a).entropy()
    cb1, cb2 = D.ContinuousBernoulli(p), D.ContinuousBernoulli(u01)
    c["cbernoulli.log_prob"] = lambda: cb1.log_prob(u01)
    c["cbernoulli.mean"] = lambda: cb1.mean
    c["cbernoulli.variance"] = lambda: cb1.variance
    c["cbernoulli.entropy"] = lambda: cb1.entropy()
    c["cbernoulli.cdf"] = lambda: cb1.cdf(u01)
    c["cbernoulli.icdf"] = lambda: cb1.icdf(u01)
    c["cbernoulli.kl"] = lambda: D.kl_divergence(cb1, cb2)
    di1, di2 = D.Dirichlet(conc), D.Dirichlet(conc.flip([-1]) + 0.5)
    c["dirichlet.log_prob"] = lambda: di1.log_prob(simplex)
    c["dirichlet.entropy"] = lambda: di1.entropy()
    c["dirichlet.variance"] = lambda: di1.variance
    c["dirichlet.kl"] = lambda: D.kl_divergence(di1, di2)
    ex1, ex2 = D.Exponential(a), D.Exponential(b)
    c["exponential.log_prob"] = lambda: ex1.log_prob(v)
    c["exponential.entropy"] = lambda: ex1.entropy()
    c["exponential.cdf"] = lambda: ex1.cdf(v)
    c["exponential.icdf"] = lambda: ex1.icdf(u01)
    c["exponential.kl"] = lambda: D.kl_divergence(ex1, ex2)
    c["expfamily.entropy"] = lambda: D.ExponentialFamily.entropy(ex1)
    ga1, ga2 = D.Gamma(a, b), D.Gamma(b, a)
    c["gamma.log_prob"] = lambda: ga1.log_prob(v)
    c["gamma.entropy"] = lambda: ga1.entropy()
    c["gamma.variance"] = lambda: ga1.variance
    c["gamma.kl"] = lambda: D.kl_divergence(ga1, ga2)
    ge1, ge2 = D.Geometric(p), D.Geometric(u01)
    c["geometric.pmf"] = lambda: ge1.pmf(2)
    c["geometric.log_pmf"] = lambda: ge1.log_pmf(t(np.array([0.0, 1.0, 4.0], np.float32)))
    c["geometric.cdf"] = lambda: ge1.cdf(3)
    c["geometric.entropy"] = lambda: ge1.entropy()
    c["geometric.variance"] = lambda: ge1.variance
    c["geometric.kl"] = lambda: D.kl_divergence(ge1, ge2)
    gu = D.Gumbel(loc, sc)
    c["gumbel.log_prob"] = lambda: gu.log_prob(v)
    c["gumbel.cdf"] = lambda: gu.cdf(v)
    c["gumbel.entropy"] = lambda: gu.entropy()
    c["gumbel.mean"] = lambda: gu.mean
    c["gumbel.variance"] = lambda: gu.variance
    ind = D.Independent(D.Normal(xm, xm.abs() + 0.5), 1)
    c["independent.log_prob"] = lambda: ind.log_prob(xm * 0.5)
    c["independent.entropy"] = lambda: ind.entropy()
    la1, la2 = D.Laplace(loc, sc), D.Laplace(b, a)
    c["laplace.log_prob"] = lambda: la1.log_prob(v)
    c["laplace.cdf"] = lambda: la1.cdf(v)
    c["laplace.icdf"] = lambda: la1.icdf(u01)
    c["laplace.entropy"] = lambda: la1.entropy()
    c["laplace.kl"] = lambda: D.kl_divergence(la1, la2)
    lkj = D.LKJCholesky(3, 1.5)
    c["lkj.log_prob"] = lambda: lkj.log_prob(L / L.norm(axis=-1, keepdim=True))
    mu = D.Multinomial(5, t(np.array([0.2, 0.3, 0.5], np.float32)))
    c["multinomial.log_prob"] = lambda: mu.log_prob(t(np.array([1.0, 1.0, 3.0], np.float32)))
    c["multinomial.entropy"] = lambda: mu.entropy()
    c["multinomial.variance"] = lambda: mu.variance
    mv1 = D.MultivariateNormal(mloc, covariance_matrix=cov)
    mv2 = D.MultivariateNormal(mloc * 2, scale_tril=L)
    mv3 = D.MultivariateNormal(mloc, precision_matrix=cov)
    c["mvn.log_prob"] = lambda: mv1.log_prob(xm)
    c["mvn.entropy"] = lambda: mv1.entropy()
    c["mvn.variance"] = lambda: mv1.variance
    c["mvn.kl"] = lambda: D.kl_divergence(mv1, mv2)
    c["mvn.precision_log_prob"] = lambda: mv3.log_prob(xm)
    c["mvn.scale_tril_log_prob"] = lambda: mv2.log_prob(xm)
    po1, po2 = D.Poisson(a), D.Poisson(b)
    c["poisson.log_prob"] = lambda: po1.log_prob(counts)
    c["poisson.entropy"] = lambda: po1.entropy()
    c["poisson.kl"] = lambda: D.kl_divergence(po1, po2)
    st = D.StudentT(a + 2, loc, sc)
    c["studentt.log_prob"] = lambda: st.log_prob(v)
    c["studentt.entropy"] = lambda: st.entropy()
    c["studentt.mean"] = lambda: st.mean
    c["studentt.variance"] = lambda: st.variance
    td = D.TransformedDistribution(D.Normal(loc, sc), [D.AffineTransform(b, a),
                                                        D.ExpTransform()])
    c["transformed.log_prob"] = lambda: td.log_prob(a)
    x = t(np.array([[0.3, -0.7, 1.2], [-1.5, 0.2, 0.05]], np.float32))
    y = t(np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], np.float32))
    trs = {"abs": D.AbsTransform(), "affine": D.AffineTransform(b, a),
           "exp": D.ExpTransform(), "power": D.PowerTransform(t(np.float32(2.5))),
           "sigmoid": D.SigmoidTransform(), "tanh": D.TanhTransform(),
           "softmax": D.SoftmaxTransform(), "stickbreaking": D.StickBreakingTransform(),
           "chain": D.ChainTransform([D.AffineTransform(b * 0.1, a * 0.2), D.TanhTransform()]),
           "independent": D.IndependentTransform(D.ExpTransform(), 1),
           "reshape": D.ReshapeTransform((3,), (3, 1)),
           "stack": D.StackTransform([D.ExpTransform(), D.TanhTransform()], 0)}
    for name, tr in trs.items():
        xin = x.abs() + 0.1 if name == "power" else x
        if name != "stickbreaking":
            c[f"transform.{name}.forward"] = (lambda tr=tr, xin=xin: tr.forward(xin))
        if name not in ("abs", "softmax", "stickbreaking", "reshape"):
            yin = tr.forward(xin)
            c[f"transform.{name}.inverse"] = (lambda tr=tr, yin=yin: tr.inverse(yin))
        if name not in ("abs", "softmax", "stickbreaking"):
            c[f"transform.{name}.fldj"] = (
                lambda tr=tr, xin=xin: tr.forward_log_det_jacobian(xin))
    sb = D.StickBreakingTransform()
    c["transform.stickbreaking.forward"] = lambda: sb.forward(x[:, :2])
    c["transform.stickbreaking.inverse"] = lambda: sb.inverse(y)
    c["transform.stickbreaking.fldj"] = lambda: sb.forward_log_det_jacobian(x[:, :2])
    return c
