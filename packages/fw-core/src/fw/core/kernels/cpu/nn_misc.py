"""cpu kernel of the nn_misc family: ``linear`` on oneDNN matmul (bias fused as a
post-op) from about 64x64x64 on, NumPy's matmul below (see
:mod:`fw.core.kernels.cpu.linalg` for the crossover).
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.kernels.cpu._common import _F32, _float, attach

__all__ = ["register"]

_THRESHOLD = _native.NUMPY_FASTER_BELOW_FLOPS


def _make_linear(reference):
    native = _native.matmul

    def linear_cpu(x, weight, bias=None):
        if weight.ndim == 2 and x.ndim >= 1 and x.dtype == weight.dtype and \
                _float(x.dtype) and (bias is None or bias.dtype == x.dtype) and \
                x.shape[-1] == weight.shape[0] and x.size:
            if 2 * x.size * weight.shape[1] >= _THRESHOLD and x.ndim >= 2:
                return native(x, weight, bias=None if bias is None else bias.reshape(-1))
            if x.dtype == _F32:
                out = np.matmul(x, weight)
                if bias is not None:
                    out += bias.reshape(-1)
                return out
        return reference(x, weight, bias)

    return linear_cpu


def register() -> None:
    attach({"linear": _make_linear}, when=_native.available)


register()
