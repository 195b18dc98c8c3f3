"""Fast kernels attached to the op table, per backend.

The op table holds every op's NumPy reference; the modules here register faster
kernels for some of them (``op.kernels["cpu"]``) — native oneDNN/C++ kernels
from ``fw.core._native`` where they pay, falling back to the reference where
NumPy's own call is cheaper (tiny problems) or the case is not covered. The
record tests compare every registered kernel with its reference.

``cpu/`` holds the cpu kernels, one module per op family (see its ``__init__``).
"""

from fw.core.kernels import cpu

__all__ = ["cpu"]
