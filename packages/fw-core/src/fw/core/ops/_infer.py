"""Shared shape/dtype rules for `infer` functions.

Rules raise `InvalidArgumentError`/`InvalidTypeError`; the op table prefixes
the op name, so messages here say which argument and which shapes.
Dynamic dimensions are -1 and are assumed compatible with anything.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType

__all__ = [
    "broadcast_shapes", "norm_axis", "norm_axes", "same", "binary", "compare", "to_bool",
    "to_dtype", "reduce", "shp", "require_float", "require_int", "real_of",
    "complex_of",
]


def shp(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def broadcast_shapes(*shapes, names=None) -> tuple:
    names = names or [f"input {i}" for i in range(len(shapes))]
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    owner = [None] * nd
    for s, nm in zip(shapes, names):
        off = nd - len(s)
        for i, d in enumerate(s):
            j = off + i
            o = out[j]
            if d == o or d == 1:
                continue
            if o == 1:
                out[j] = d
                owner[j] = (nm, s)
            elif d == DYN:
                continue
            elif o == DYN:
                out[j] = d
                owner[j] = (nm, s)
            else:
                other_nm, other_s = owner[j] if owner[j] else ("another input", ())
                raise InvalidArgumentError(
                    f"'{nm}' with shape {shp(s)} cannot broadcast with '{other_nm}' with shape "
                    f"{shp(other_s)} (dimension {j - nd} is {d} vs {o})")
        for i, d in enumerate(s):
            j = off + i
            if owner[j] is None and d != 1:
                owner[j] = (nm, s)
    return tuple(out)


def numel(shape) -> int:
    """The number of elements of a static shape, or DYN when a dimension is dynamic."""
    n = 1
    for d in shape:
        if d == DYN:
            return DYN
        n *= d
    return n


def norm_axis(axis, ndim: int, arg: str = "axis") -> int:
    try:
        a = int(axis)
    except (TypeError, ValueError):
        raise InvalidTypeError(f"'{arg}' must be an int, got {type(axis).__name__}") from None
    lo, hi = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    if a < lo or a > hi:
        raise InvalidArgumentError(f"'{arg}'={a} is out of range for a tensor of rank {ndim} "
                                   f"(expected {lo} <= {arg} <= {hi})")
    return a % ndim if ndim > 0 else 0


def norm_axes(axis, ndim: int, arg: str = "axis") -> tuple:
    """None -> all axes; int or sequence -> sorted unique non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return (norm_axis(axis, ndim, arg),)
    axes = tuple(norm_axis(a, ndim, arg) for a in axis)
    if len(set(axes)) != len(axes):
        raise InvalidArgumentError(f"'{arg}'={list(axis)} repeats an axis")
    return tuple(sorted(axes))


def same(x, **_):
    return x


def binary(x, y, **_):
    return TensorType(broadcast_shapes(x.shape, y.shape, names=("x", "y")), x.dtype)


def compare(x, y, **_):
    return TensorType(broadcast_shapes(x.shape, y.shape, names=("x", "y")), _dt.bool_)


def to_bool(x, **_):
    return TensorType(x.shape, _dt.bool_)


def to_dtype(dtype):
    d = _dt.convert_dtype(dtype)

    def rule(x, **_):
        return TensorType(x.shape, d)

    return rule


def real_of(d):
    if d is _dt.complex64:
        return _dt.float32
    if d is _dt.complex128:
        return _dt.float64
    return d


def complex_of(d):
    if d is _dt.float64 or d is _dt.complex128:
        return _dt.complex128
    return _dt.complex64


def require_float(t, arg="x", complex_ok=True):
    if t.dtype.kind < _dt._FLOAT or (not complex_ok and t.dtype.kind == _dt._COMPLEX):
        raise InvalidTypeError(f"'{arg}' must be a floating{' or complex' if complex_ok else ''} "
                               f"tensor, got {t.dtype.name}")


def require_int(t, arg="x", bool_ok=False):
    ok = (_dt._INT, _dt._BOOL) if bool_ok else (_dt._INT,)
    if t.dtype.kind not in ok:
        raise InvalidTypeError(f"'{arg}' must be an integer tensor, got {t.dtype.name}")


def reduce(x, axis=None, keepdim=False, dtype=None, **_):
    axes = norm_axes(axis, len(x.shape))
    if keepdim:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return TensorType(shape, x.dtype if dtype is None else _dt.convert_dtype(dtype))
