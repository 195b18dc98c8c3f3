"""Shape ops: reshape, transpose, …"""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, shp
from fw.core.ops._registry import defop
from fw.core.ops.creation import as_shape


def _reshape_canon(attrs):
    return {"shape": as_shape(attrs["shape"], "reshape")}


def _reshape_infer(x, shape=()):
    # Paddle: 0 copies the input's dimension, one -1 is inferred from the rest
    out = []
    infer_at = -1
    for i, d in enumerate(shape):
        if d == 0:
            if i >= len(x.shape):
                raise InvalidArgumentError(f"shape {list(shape)} uses 0 at position {i} but x "
                                           f"has rank {len(x.shape)}")
            d = x.shape[i]
        elif d == -1:
            if infer_at >= 0:
                raise InvalidArgumentError(f"shape {list(shape)} has more than one -1")
            infer_at = i
        elif d < -1:
            raise InvalidArgumentError(f"shape {list(shape)} has a negative dimension {d}")
        out.append(d)
    n = 1
    dyn = False
    for d in x.shape:
        if d == DYN:
            dyn = True
        else:
            n *= d
    known = 1
    for i, d in enumerate(out):
        if i != infer_at:
            if d == DYN:
                dyn = True
            else:
                known *= d
    if infer_at >= 0:
        if dyn:
            out[infer_at] = DYN
        else:
            if known == 0 or n % known:
                raise InvalidArgumentError(f"cannot reshape x of shape {shp(x.shape)} "
                                           f"({n} elements) to {list(shape)}")
            out[infer_at] = n // known
    elif not dyn and known != n:
        raise InvalidArgumentError(f"cannot reshape x of shape {shp(x.shape)} ({n} elements) "
                                   f"to {list(shape)} ({known} elements)")
    return TensorType(out, x.dtype)


def _reshape_ref(x, shape=()):
    tgt = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return np.reshape(x, tgt)


defop("reshape", ("x",), {"shape": ()}, infer=_reshape_infer, reference=_reshape_ref,
      canon=_reshape_canon, promote=None, family="shape",
      doc="Same values in a new shape; 0 keeps a dimension, one -1 is inferred.")


def _perm_canon(attrs):
    p = attrs.get("perm")
    return {"perm": None if p is None else tuple(int(v) for v in p)}


def _transpose_infer(x, perm=None):
    nd = len(x.shape)
    if perm is None:
        perm = tuple(range(nd))[::-1]
    if len(perm) != nd or sorted(norm_axis(p, nd, "perm") for p in perm) != list(range(nd)):
        raise InvalidArgumentError(f"'perm'={list(perm)} is not a permutation of the "
                                   f"{nd} axes of x with shape {shp(x.shape)}")
    return TensorType([x.shape[norm_axis(p, nd)] for p in perm], x.dtype)


def _transpose_ref(x, perm=None):
    return np.transpose(x, perm)


defop("transpose", ("x",), {"perm": None}, infer=_transpose_infer, reference=_transpose_ref,
      canon=_perm_canon, promote=None, family="shape",
      doc="Permute the axes (reverse them when perm is None).")
