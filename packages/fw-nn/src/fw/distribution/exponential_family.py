"""`ExponentialFamily`: distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``;
the entropy (and the KL between two members of one family) follow from the log
normalizer ``F`` by automatic differentiation (Bregman divergence)."""

from __future__ import annotations

import fw
from fw.distribution.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    r"""The base class of exponential-family distributions. Subclasses give
    ``_natural_parameters`` (a tuple of Tensors), ``_log_normalizer(*params)`` and
    ``_mean_carrier_measure``; then
    :math:`H = F(\theta) - \langle\theta, \nabla F(\theta)\rangle - E[k(x)]`.

    Args:
        batch_shape (Sequence[int], optional): the batch shape. Default: ().
        event_shape (Sequence[int], optional): the shape of one draw. Default: ().

    Examples:
        .. code-block:: python

            >>> import fw
            >>> class Exp(fw.distribution.Exponential):
            ...     _mean_carrier_measure = 0.0
            >>> round(float(fw.distribution.ExponentialFamily.entropy(Exp(fw.to_tensor(2.0)))), 4)
            0.3069
    """

    @property
    def _natural_parameters(self):
        raise NotImplementedError(f"{type(self).__name__}: _natural_parameters is not defined")

    def _log_normalizer(self, *params):
        raise NotImplementedError(f"{type(self).__name__}: _log_normalizer is not defined")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__}: _mean_carrier_measure is not "
                                  f"defined")

    def entropy(self):
        r"""The entropy through the log normalizer's gradient (autograd of
        :math:`F(\theta)`), for subclasses without a closed form of their own.

        Returns:
            Tensor: the entropy (in nats), of the batch shape.

        Examples:
            >>> import fw
            >>> D = fw.distribution
            >>> class Exp(D.Exponential):  # the carrier measure of Exponential is 0
            ...     _mean_carrier_measure = 0.0
            >>> e = Exp(fw.to_tensor(2.0))
            >>> round(float(D.ExponentialFamily.entropy(e)), 4), round(float(e.entropy()), 4)
            (0.3069, 0.3069)
        """
        params = []
        for p in self._natural_parameters:
            p = p.detach()
            p.stop_gradient = False
            params.append(p)
        with fw.enable_grad():
            log_norm = self._log_normalizer(*params)
            grads = fw.grad(log_norm.sum(), params, create_graph=True)
        ent = -self._mean_carrier_measure + log_norm
        for p, g in zip(params, grads):
            ent = ent - p * g
        return ent
