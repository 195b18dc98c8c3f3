"""Fast kernels attached to the op table, per backend.

The op table holds every op's NumPy reference; the modules here register faster
kernels for some of them (``op.kernels["cpu"]``) — native oneDNN/C++ kernels
from ``fw.core._native`` where they pay, falling back to the reference where
NumPy's own call is cheaper (tiny problems) or the case is not covered. The
record tests compare every registered kernel with its reference.

``cpu/`` holds the cpu kernels, one module per op family (see its ``__init__``).
"""

from fw.core import place as _place
from fw.core.kernels import cpu

__all__ = ["cpu"]


def _on_backend(be) -> None:
    """A device backend was registered: give it its kernels (gpu/ for CuPy) and the
    host fallback of the ops whose reference does not run on its arrays yet."""
    if be.name == "cpu":
        return
    from fw.core.kernels import host_fallback

    if be.name == "gpu":
        from fw.core.kernels import gpu

        gpu.attach(be)
    host_fallback.attach(be)


_place._REGISTER_HOOKS.append(_on_backend)
