"""Argument checks and dtype handling shared by the linear algebra families
(``linalg.py``, ``decomp.py``, ``solve.py``): `infer`-side checks on IR types
(``_need_float``, ``_need_matrix``), their kernel-side twins on arrays
(``_kfloat``, ``_kmatrix``, ``_work``: float16/bfloat16 computed in float32),
casting results back and naming the failing batch element in errors.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN
from fw.core.ops import _linalg_np as _la
from fw.core.ops._infer import (
    shp,
)
from fw.core.tensor import Tensor

# ================================================================ helpers
_LOW = (_dt.float16, _dt.bfloat16)


def _item(v, arg):
    """A Python number from a number, a NumPy scalar or a one-element Tensor."""
    if isinstance(v, Tensor):
        if v.size != 1:
            raise UnsupportedError(f"'{arg}' given as a tensor must hold one value, got shape "
                                   f"{v.shape}")
        return v.item()
    if isinstance(v, Value):
        raise UnsupportedError(f"'{arg}' given as a symbolic tensor is not supported while "
                               f"building a program; pass a Python number")
    if isinstance(v, np.generic):
        return v.item()
    return v


def _same(a, b) -> bool:
    return a == b or a == DYN or b == DYN


def _need_float(t, arg="x", complex_ok=True):
    if t.dtype.kind < _dt._FLOAT or (not complex_ok and t.dtype.kind == _dt._COMPLEX):
        kinds = "floating or complex" if complex_ok else "floating"
        raise InvalidTypeError(f"'{arg}' must be a {kinds} tensor, got {t.dtype.name} with "
                               f"shape {shp(t.shape)}; cast it first, e.g. x.astype('float32')")


def _need_matrix(t, arg="x", square=False):
    if len(t.shape) < 2:
        raise InvalidArgumentError(f"'{arg}' must be a matrix or a batch of matrices (at least "
                                   f"2 dimensions), got shape {shp(t.shape)}")
    if square and not _same(t.shape[-1], t.shape[-2]):
        raise InvalidArgumentError(f"'{arg}' must hold square matrices, got shape "
                                   f"{shp(t.shape)}")


def _dtype_of(a) -> _dt.DType:
    return _dt.from_numpy(a.dtype)


def _kfloat(a, arg="x", complex_ok=True):
    """Kernel-side dtype check (the eager path does not run `infer`)."""
    d = _dtype_of(a)
    if d.kind < _dt._FLOAT or (not complex_ok and d.kind == _dt._COMPLEX):
        kinds = "floating or complex" if complex_ok else "floating"
        raise InvalidTypeError(f"'{arg}' must be a {kinds} tensor, got {d.name} with shape "
                               f"{list(a.shape)}; cast it first, e.g. x.astype('float32')")
    return d


def _kmatrix(a, arg="x", square=False):
    """Kernel-side shape check, so eager errors read as the `infer` ones do."""
    if a.ndim < 2:
        raise InvalidArgumentError(f"'{arg}' must be a matrix or a batch of matrices (at least "
                                   f"2 dimensions), got shape {list(a.shape)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise InvalidArgumentError(f"'{arg}' must hold square matrices, got shape "
                                   f"{list(a.shape)}")


def _work(a, arg="x", complex_ok=True, square=None):
    """(array in a dtype numpy.linalg handles, the fw dtype of the input);
    with `square` set, also checks that `a` is a (square) matrix stack."""
    d = _kfloat(a, arg, complex_ok)
    if square is not None:
        _kmatrix(a, arg, square)
    if d in _LOW:
        return a.astype(np.float32), d
    return a, d


def _out(r, d):
    """Cast a result back to dtype `d` (a DType), keeping arrays (not scalars)."""
    r = np.asarray(r) if isinstance(r, np.generic) or not hasattr(r, "shape") else r
    return r.astype(d.np, copy=False)


def _batch_index(fails, batch):
    """Where in the batch the first failing matrix is, for error messages."""
    if not batch:
        return ""
    idx = np.unravel_index(int(fails), batch)
    return f" (batch element {[int(i) for i in idx]})"


def _first_failure(fn, a):
    """Index of the first matrix of the stack `a` on which `fn` raises LinAlgError."""
    batch = a.shape[:-2]
    flat = a.reshape((_la.batch_size(batch),) + a.shape[-2:])
    for i in range(flat.shape[0]):
        try:
            fn(flat[i])
        except np.linalg.LinAlgError:
            return _batch_index(i, batch)
    return ""



def _square_float_infer(x, **_):
    _need_float(x)
    _need_matrix(x, square=True)
    return x

