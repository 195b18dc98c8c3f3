"""fw.distribution — probability distributions and transforms (Paddle's
``paddle.distribution``): sampling (``sample``; reparameterised ``rsample`` whose
gradients flow to the parameters), ``log_prob``/``prob``, ``entropy``, ``mean``,
``variance``, ``cdf``/``icdf`` where defined, and closed-form ``kl_divergence``
(extensible with ``register_kl``).

Everything is written with fw ops, so gradients come from fw.autograd and random
draws from fw's generator (``fw.seed`` makes them reproducible). See README.md in
fw-nn for the design.
"""

from fw.distribution.bernoulli import Bernoulli, ContinuousBernoulli
from fw.distribution.beta import Beta, Dirichlet
from fw.distribution.categorical import Categorical, Multinomial
from fw.distribution.discrete import Binomial, Geometric, Poisson
from fw.distribution.distribution import Distribution
from fw.distribution.exponential_family import ExponentialFamily
from fw.distribution.gamma import Chi2, Exponential, Gamma
from fw.distribution.independent import Independent
from fw.distribution.kl import kl_divergence, register_kl
from fw.distribution.lkj_cholesky import LKJCholesky
from fw.distribution.location_scale import Cauchy, Gumbel, Laplace, StudentT
from fw.distribution.multivariate_normal import MultivariateNormal
from fw.distribution.normal import LogNormal, Normal, Uniform
from fw.distribution.transform import (
    AbsTransform,
    AffineTransform,
    ChainTransform,
    ExpTransform,
    IndependentTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from fw.distribution.transformed_distribution import TransformedDistribution

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet", "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric",
    "Gumbel", "Independent", "LKJCholesky", "Laplace", "LogNormal", "Multinomial",
    "MultivariateNormal", "Normal", "Poisson", "StudentT", "TransformedDistribution", "Uniform",
    "kl_divergence", "register_kl",
    "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "IndependentTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
]
