"""Weight-decay regularizers (Paddle's ``paddle.regularizer``).

A regularizer adds a penalty's gradient to a parameter's gradient before the
optimizer's update: `L2Decay` adds ``coeff * param`` (the gradient of
``coeff/2 * ||param||^2``), `L1Decay` adds ``coeff * sign(param)``. Give one to an
optimizer (``weight_decay=``, which applies to parameters without their own) or to a
parameter (``fw.ParamAttr(regularizer=...)``, which takes precedence). Optimizers
apply it over their flat gradient buffers in one vectorised pass; calling the
regularizer directly gives the same result for one parameter.

>>> import fw
>>> p = fw.nn.Parameter(fw.to_tensor([1.0, -2.0]))
>>> fw.regularizer.L2Decay(0.1)(p, fw.to_tensor([0.5, 0.5])).tolist()
[0.6000000238418579, 0.30000001192092896]
"""

from __future__ import annotations

__all__ = ["WeightDecayRegularizer", "L1Decay", "L2Decay"]


class WeightDecayRegularizer:
    """Base class of the weight-decay regularizers (`L1Decay`, `L2Decay`).

    A regularizer adds its penalty's gradient to a parameter's gradient before the
    optimizer's update. ``kind`` names the penalty (``"l1"``/``"l2"``), ``coeff`` is its
    weight; calling it as ``regularizer(param, grad)`` returns the adjusted gradient.

    Args:
        coeff (float, optional): the regularization coefficient (a number or a
            one-element tensor). Default: 0.0.

    Examples:
        >>> import fw
        >>> reg = fw.regularizer.L2Decay(coeff=0.01)
        >>> isinstance(reg, fw.regularizer.WeightDecayRegularizer), reg.kind, reg.coeff
        (True, 'l2', 0.01)
    """

    kind = ""

    def __init__(self, coeff: float = 0.0):
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)):
            try:
                coeff = float(coeff)  # a one-element Tensor or NumPy scalar
            except (TypeError, ValueError):
                raise TypeError(f"{type(self).__name__}: 'coeff' must be a number, got "
                                f"{type(coeff).__name__}") from None
        self._coeff = float(coeff)

    @property
    def coeff(self) -> float:
        """The regularization coefficient.

        Returns:
            float, the coefficient.

        Examples:
            >>> import fw
            >>> fw.regularizer.L1Decay(0.5).coeff
            0.5
        """
        return self._coeff

    def __call__(self, param, grad):
        """``grad`` plus this penalty's gradient at ``param`` (new tensor)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(coeff={self._coeff})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._coeff == self._coeff

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._coeff))


class L2Decay(WeightDecayRegularizer):
    """L2 weight decay: adds ``coeff * param`` (the gradient of
    ``coeff / 2 * ||param||^2``) to the gradient.

    Give it to an optimizer (``weight_decay=``: for every parameter without a
    regularizer of its own) or to one parameter (``fw.ParamAttr(regularizer=...)``,
    which takes precedence).

    Args:
        coeff (float, optional): the regularization coefficient. Default: 0.0.

    Examples:
        >>> import fw
        >>> p = fw.nn.Parameter(fw.to_tensor([1.0, -2.0]))
        >>> fw.regularizer.L2Decay(0.5)(p, fw.to_tensor([0.0, 0.0])).tolist()
        [0.5, -1.0]
        >>> attr = fw.ParamAttr(regularizer=fw.regularizer.L2Decay(1e-4))
        >>> layer = fw.nn.Linear(2, 2, weight_attr=attr)
        >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters(),
        ...                        weight_decay=fw.regularizer.L2Decay(1e-3))
    """

    kind = "l2"

    def __call__(self, param, grad):
        import fw

        return grad + fw.cast(param, grad.dtype) * self._coeff


class L1Decay(WeightDecayRegularizer):
    """L1 weight decay: adds ``coeff * sign(param)`` (the gradient of
    ``coeff * ||param||_1``) to the gradient, pushing small weights to exactly zero.

    Args:
        coeff (float, optional): the regularization coefficient. Default: 0.0.

    Examples:
        >>> import fw
        >>> p = fw.nn.Parameter(fw.to_tensor([1.0, -2.0, 0.0]))
        >>> fw.regularizer.L1Decay(0.5)(p, fw.to_tensor([0.0, 0.0, 0.0])).tolist()
        [0.5, -0.5, 0.0]
    """

    kind = "l1"

    def __call__(self, param, grad):
        import fw

        return grad + fw.sign(fw.cast(param, grad.dtype)) * self._coeff
