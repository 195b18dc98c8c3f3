"""fw.distribution — probability distributions and transforms (Paddle's
``paddle.distribution``): sampling (``sample``; reparameterised ``rsample`` whose
gradients flow to the parameters), ``log_prob``/``prob``, ``entropy``, ``mean``,
``variance``, ``cdf``/``icdf`` where defined, and closed-form ``kl_divergence``
(extensible with ``register_kl``).

Everything is written with fw ops, so gradients come from fw.autograd and random
draws from fw's generator (``fw.seed`` makes them reproducible). See README.md in
fw-nn for the design.
"""

# one module per class, named as Paddle's (``from paddle.distribution.gumbel import Gumbel``)
from fw.distribution.bernoulli import Bernoulli
from fw.distribution.beta import Beta
from fw.distribution.binomial import Binomial
from fw.distribution.categorical import Categorical
from fw.distribution.cauchy import Cauchy
from fw.distribution.chi2 import Chi2
from fw.distribution.continuous_bernoulli import ContinuousBernoulli
from fw.distribution.dirichlet import Dirichlet
from fw.distribution.distribution import Distribution
from fw.distribution.exponential import Exponential
from fw.distribution.exponential_family import ExponentialFamily
from fw.distribution.gamma import Gamma
from fw.distribution.geometric import Geometric
from fw.distribution.gumbel import Gumbel
from fw.distribution.independent import Independent
from fw.distribution.kl import kl_divergence, register_kl
from fw.distribution.laplace import Laplace
from fw.distribution.lkj_cholesky import LKJCholesky
from fw.distribution.lognormal import LogNormal
from fw.distribution.multinomial import Multinomial
from fw.distribution.multivariate_normal import MultivariateNormal
from fw.distribution.normal import Normal
from fw.distribution.poisson import Poisson
from fw.distribution.student_t import StudentT
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
from fw.distribution.uniform import Uniform

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
