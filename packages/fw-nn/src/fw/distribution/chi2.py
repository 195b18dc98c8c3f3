"""The chi-squared distribution (Paddle's ``paddle.distribution.Chi2``)."""

from __future__ import annotations

import fw
from fw.distribution.gamma import Gamma, _params

__all__ = ["Chi2"]


class Chi2(Gamma):
    r"""The chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1/2)``.

    Args:
        df (float|Tensor): the degrees of freedom (> 0).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> round(float(fw.distribution.Chi2(fw.to_tensor(3.0)).variance), 4)
            6.0
    """

    def __init__(self, df):
        (self.df,), dt = _params("Chi2", df)
        if not bool(fw.all(self.df > 0)):
            raise ValueError("Chi2: every element of 'df' must be positive")
        self.rate = fw.full_like(self.df, 0.5)
        super().__init__(self.df * 0.5, self.rate)
        self.dtype = dt
