"""`kl_divergence` and `register_kl`: a table of closed-form KL divergences keyed by the
pair of distribution classes; the most specific registered pair wins (the dispatch
rule of Paddle and PyTorch)."""

from __future__ import annotations

import functools
import warnings

from fw.distribution.bernoulli import Bernoulli
from fw.distribution.beta import Beta
from fw.distribution.binomial import Binomial
from fw.distribution.categorical import Categorical
from fw.distribution.cauchy import Cauchy
from fw.distribution.continuous_bernoulli import ContinuousBernoulli
from fw.distribution.dirichlet import Dirichlet
from fw.distribution.distribution import Distribution, _sum_rightmost
from fw.distribution.exponential import Exponential
from fw.distribution.exponential_family import ExponentialFamily
from fw.distribution.gamma import Gamma
from fw.distribution.geometric import Geometric
from fw.distribution.laplace import Laplace
from fw.distribution.lognormal import LogNormal
from fw.distribution.multivariate_normal import MultivariateNormal
from fw.distribution.normal import Normal
from fw.distribution.poisson import Poisson
from fw.distribution.uniform import Uniform

__all__ = ["register_kl", "kl_divergence"]

_REGISTER_TABLE: dict = {}


def kl_divergence(p, q):
    r"""The Kullback-Leibler divergence :math:`KL(p\|q) = E_p[\log p(x) - \log q(x)]`.

    Args:
        p (Distribution): the first distribution.
        q (Distribution): the second distribution.

    Returns:
        Tensor: the divergence, in the batch shape.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> p = fw.distribution.Normal(0.0, 1.0)
            >>> q = fw.distribution.Normal(1.0, 2.0)
            >>> round(float(fw.distribution.kl_divergence(p, q)), 4)
            0.4431
    """
    return _dispatch(type(p), type(q))(p, q)


def register_kl(cls_p, cls_q):
    """Decorator registering a function ``f(p, q)`` as the KL divergence of the pair of
    classes ``(cls_p, cls_q)``.

    Args:
        cls_p (type[Distribution]): the class of p.
        cls_q (type[Distribution]): the class of q.

    Returns:
        Callable: the decorator; it registers ``f`` and returns it unchanged.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distribution import Normal, register_kl
            >>> class MyNormal(Normal):
            ...     pass
            >>> @register_kl(MyNormal, MyNormal)
            ... def _kl(p, q):
            ...     return fw.zeros([])
            >>> float(fw.distribution.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0)))
            0.0
    """
    if not (isinstance(cls_p, type) and issubclass(cls_p, Distribution)
            and isinstance(cls_q, type) and issubclass(cls_q, Distribution)):
        raise TypeError(f"register_kl: cls_p and cls_q must be subclasses of Distribution, "
                        f"got {cls_p!r} and {cls_q!r}")

    def decorator(f):
        _REGISTER_TABLE[cls_p, cls_q] = f
        return f

    return decorator


def _dispatch(cls_p, cls_q):
    matches = [(sp, sq) for sp, sq in _REGISTER_TABLE
               if issubclass(cls_p, sp) and issubclass(cls_q, sq)]
    if not matches:
        raise NotImplementedError(f"kl_divergence: no KL divergence is registered for "
                                  f"({cls_p.__name__}, {cls_q.__name__}); add one with "
                                  f"register_kl")
    left_p, left_q = min(_Compare(*m) for m in matches).classes
    right_p, right_q = min(_Compare(*reversed(m)) for m in matches).classes
    if _REGISTER_TABLE[left_p, left_q] is not _REGISTER_TABLE[right_q, right_p]:
        warnings.warn(f"Ambiguous kl_divergence({cls_p.__name__}, {cls_q.__name__}). Please "
                      f"register_kl({left_p.__name__}, {right_p.__name__})", RuntimeWarning,
                      stacklevel=3)
    return _REGISTER_TABLE[left_p, left_q]


@functools.total_ordering
class _Compare:
    def __init__(self, *classes):
        self.classes = classes

    def __eq__(self, other):
        return self.classes == other.classes

    def __le__(self, other):
        for x, y in zip(self.classes, other.classes):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _method(p, q):
    return p.kl_divergence(q)


for _c in (Bernoulli, Binomial, Categorical, Cauchy, ContinuousBernoulli, Normal,
           MultivariateNormal, Uniform, Laplace, Geometric, Exponential, Gamma, Poisson):
    register_kl(_c, _c)(_method)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    pa, pb, qa, qb = p.alpha, p.beta, q.alpha, q.beta
    return (qa.lgamma() + qb.lgamma() + (pa + pb).lgamma()
            - (pa.lgamma() + pb.lgamma() + (qa + qb).lgamma())
            + (pa - qa) * pa.digamma() + (pb - qb) * pb.digamma()
            + (qa + qb - (pa + pb)) * (pa + pb).digamma())


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    pc, qc = p.concentration, q.concentration
    return (pc.sum(-1).lgamma() - qc.sum(-1).lgamma() - (pc.lgamma() - qc.lgamma()).sum(-1)
            + ((pc - qc) * (pc.digamma() - pc.sum(-1).digamma().unsqueeze(-1))).sum(-1))


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return p._base.kl_divergence(q._base)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer (same family only)."""
    import fw

    if type(p) is not type(q):
        raise NotImplementedError(f"kl_divergence: no KL divergence is registered for "
                                  f"({type(p).__name__}, {type(q).__name__})")
    params = []
    for t in p._natural_parameters:
        t = t.detach()
        t.stop_gradient = False
        params.append(t)
    with fw.enable_grad():
        p_log_norm = p._log_normalizer(*params)
        grads = fw.grad(p_log_norm.sum(), params, create_graph=True)
    kl = q._log_normalizer(*q._natural_parameters) - p_log_norm
    for pp, qp, g in zip(params, q._natural_parameters, grads):
        kl = kl - _sum_rightmost((qp - pp) * g, len(q.event_shape))
    return kl
