"""Ops whose CuPy implementation returns float32 for bfloat16 input (CuPy 14's
bfloat16 support is partial: seen for where, tril, triu and heaviside on an H200): the reference,
with the result cast back to the input's dtype."""

from __future__ import annotations

import ml_dtypes
import numpy as np

_BF16 = np.dtype(ml_dtypes.bfloat16)
# op -> index of the argument whose dtype the output has (where: x, after promotion)
_KEEP = {"where": 1, "tril": 0, "triu": 0, "heaviside": 0}


def kernels(cp):
    from fw.core.ops._registry import OPS

    out = {}
    for name, i in _KEEP.items():
        ref = OPS[name].reference

        def k(*a, _ref=ref, _i=i, **kw):
            r = _ref(*a, **kw)
            d = getattr(a[_i], "dtype", None)
            return r.astype(d) if d == _BF16 and r.dtype != d else r

        out[name] = k
    return out
