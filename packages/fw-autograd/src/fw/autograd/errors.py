"""Exceptions raised by fw-autograd.

`GradientError` is a misuse of the graph (a second backward through freed
buffers, a saved tensor modified in place, backward from a tensor that does
not require grad); `AnomalyError` is a NaN/Inf gradient found in anomaly mode.
A differentiable op without a gradient rule raises fw.core's `UnsupportedError`.
"""

from __future__ import annotations

from fw.core.errors import FwError, UnsupportedError

__all__ = ["GradientError", "AnomalyError", "UnsupportedError"]


class GradientError(FwError, RuntimeError):
    """The autograd graph cannot be used this way (a second backward through a freed
    graph, a gradient of a tensor that does not require one, ...); the message says
    how to fix it. A ``RuntimeError``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0], stop_gradient=False)
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> try:
        ...     y.backward()
        ... except fw.autograd.GradientError as e:
        ...     print(type(e).__name__)
        GradientError
    """


class AnomalyError(GradientError):
    """Anomaly mode found a NaN or Inf in a gradient; the message names the forward op
    that produced it and the user's source line. A ``RuntimeError``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([0.0], stop_gradient=False)
        >>> with fw.autograd.detect_anomaly():
        ...     try:
        ...         (fw.sqrt(x) * 0.0).sum().backward()
        ...     except fw.autograd.AnomalyError as e:
        ...         print(type(e).__name__, isinstance(e, RuntimeError))
        AnomalyError True
    """
