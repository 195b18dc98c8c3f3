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
    """The autograd graph cannot be used this way (see the message for the fix)."""


class AnomalyError(GradientError):
    """Anomaly mode found a NaN or Inf in a gradient."""
