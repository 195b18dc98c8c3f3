"""Linear algebra: matmul and friends."""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import broadcast_shapes, shp
from fw.core.ops._registry import defop


def _mm_shapes(xs, ys, transpose_x, transpose_y):
    xs, ys = list(xs), list(ys)
    if len(xs) == 0 or len(ys) == 0:
        raise InvalidArgumentError(f"x {shp(xs)} and y {shp(ys)} must have at least one "
                                   f"dimension")
    xv, yv = len(xs) == 1, len(ys) == 1
    if xv:
        xs = [1] + xs
    elif transpose_x:
        xs[-1], xs[-2] = xs[-2], xs[-1]
    if yv:
        ys = ys + [1]
    elif transpose_y:
        ys[-1], ys[-2] = ys[-2], ys[-1]
    k1, k2 = xs[-1], ys[-2]
    if k1 != k2 and k1 != DYN and k2 != DYN:
        raise InvalidArgumentError(
            f"the contracted dimensions differ: x has shape {shp(xs)} and y has shape {shp(ys)} "
            f"(after transpose_x={transpose_x}, transpose_y={transpose_y}): {k1} vs {k2}")
    batch = broadcast_shapes(xs[:-2], ys[:-2], names=("x batch", "y batch"))
    out = list(batch) + [xs[-2], ys[-1]]
    if xv:
        out.pop(-2)
    if yv:
        out.pop(-1)
    return tuple(out)


def _matmul_infer(x, y, transpose_x=False, transpose_y=False):
    if x.dtype is not y.dtype:
        raise InvalidTypeError(f"x ({x.dtype.name}) and y ({y.dtype.name}) must have one dtype")
    if x.dtype is _dt.bool_:
        raise InvalidTypeError("bool tensors cannot be multiplied; cast them first")
    return TensorType(_mm_shapes(x.shape, y.shape, transpose_x, transpose_y), x.dtype)


def _matmul_ref(x, y, transpose_x=False, transpose_y=False):
    if transpose_x and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if transpose_y and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


matmul_op = defop("matmul", ("x", "y"), {"transpose_x": False, "transpose_y": False},
                  infer=_matmul_infer, reference=_matmul_ref, family="linalg",
                  dunders=("__matmul__", "__rmatmul__"),
                  doc="Matrix product with NumPy's broadcasting of batch dimensions; 1-D "
                      "operands are treated as vectors.")
