"""``fw.compat.nn.functional``: PyTorch-style signatures over fw's ops."""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.ops import call as _call

__all__ = ["softmax", "log_softmax"]


def _prep(x, dtype):
    return x if dtype is None else _call("cast", x, dtype=_dt.convert_dtype(dtype))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """softmax over `dim` (PyTorch's argument names); `dtype` casts the input first."""
    return _call("softmax", _prep(input, dtype), axis=-1 if dim is None else dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _call("log_softmax", _prep(input, dtype), axis=-1 if dim is None else dim)
