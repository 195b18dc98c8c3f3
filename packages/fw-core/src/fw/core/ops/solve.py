"""Linear algebra: inverses and solves (``inv``, ``pinv``, ``solve``,
``triangular_solve``, ``cholesky_solve``, ``cholesky_inverse``, ``lu_solve``,
``lstsq``). Split from ``linalg.py``, whose docstring states the design and the
dtype rules these ops follow; argument checks shared with it are in
``_linalg_check.py``.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import _linalg_np as _la
from fw.core.ops._infer import (
    broadcast_shapes,
    real_of,
    shp,
)
from fw.core.ops._linalg_check import (
    _first_failure,
    _item,
    _kmatrix,
    _need_float,
    _need_matrix,
    _out,
    _same,
    _square_float_infer,
    _work,
)
from fw.core.ops._registry import defop
from fw.core.ops._xp import reduce_initial, xp_of


# ---------------------------------------------------------------- inv / pinv
def _inv_ref(x):
    a, d = _work(x, square=True)
    try:
        r = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.inv, a)
        raise InvalidArgumentError(f"the input matrix is singular{where}, so it has no "
                                   f"inverse; linalg.pinv gives a pseudo-inverse") from None
    return _out(r, d)


inv_op = defop("inv", ("x",), infer=_square_float_infer, reference=_inv_ref, promote=None,
      family="solve", api="linalg.inv", aliases=("inverse",), method="inverse",
      doc="Inverse of a square matrix (or batch); raises for a singular matrix.")


def _pinv_canon(attrs):
    return {"rcond": float(_item(attrs["rcond"], "rcond")),
            "hermitian": bool(attrs["hermitian"])}


def _pinv_infer(x, rcond=1e-15, hermitian=False):
    _need_float(x)
    _need_matrix(x, square=hermitian)
    s = x.shape
    return TensorType(tuple(s[:-2]) + (s[-1], s[-2]), x.dtype)


def _pinv_ref(x, rcond=1e-15, hermitian=False):
    a, d = _work(x, square=hermitian)
    if hermitian:
        w, v = np.linalg.eigh(a)
        big = reduce_initial(np.max, np.abs(w), axis=-1, keepdims=True, initial=0.0)
        keep = np.abs(w) > rcond * big
        winv = np.where(keep, 1 / np.where(keep, w, 1), 0)
        r = np.matmul(v * winv[..., None, :].astype(v.dtype), _la.conj_t(v))
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        big = reduce_initial(np.max, s, axis=-1, keepdims=True, initial=0.0)
        keep = s > rcond * big
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
        r = np.matmul(_la.conj_t(vh) * sinv[..., None, :].astype(vh.dtype), _la.conj_t(u))
    return _out(r, d)


defop("pinv", ("x",), {"rcond": 1e-15, "hermitian": False}, infer=_pinv_infer,
      reference=_pinv_ref, canon=_pinv_canon, promote=None, family="solve",
      api="linalg.pinv", method="pinv",
      doc="Moore-Penrose pseudo-inverse; singular values <= rcond * max are dropped.")


# ---------------------------------------------------------------- solve
def _solve_infer(x, y, left=True):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x, square=True)
    m = x.shape[-1]
    if len(y.shape) == 1:
        if not _same(y.shape[0], m):
            raise InvalidArgumentError(f"x with shape {shp(x.shape)} and the vector y with "
                                       f"shape {shp(y.shape)} do not match")
        return TensorType(tuple(x.shape[:-1]), x.dtype)
    _need_matrix(y, "y")
    k = y.shape[-2] if left else y.shape[-1]
    if not _same(k, m):
        side = "rows" if left else "columns"
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} needs y with {m} {side}, got "
                                   f"shape {shp(y.shape)} (left={left})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch"))
    return TensorType(tuple(batch) + tuple(y.shape[-2:]), x.dtype)


def _bsolve(a, b):
    """np.linalg.solve with the batch dims broadcast first (NumPy broadcasts them itself,
    CuPy's solve wants them equal)."""
    if b.ndim == 1:  # one right-hand side for every matrix of the batch
        return _bsolve(a, b[:, None])[..., 0]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    return np.linalg.solve(a, b)


def _solve_ref(x, y, left=True):
    a, d = _work(x, square=True)
    b = y.astype(a.dtype, copy=False)
    try:
        if left:
            r = _bsolve(a, b)
        elif b.ndim == 1:
            r = _bsolve(np.swapaxes(a, -1, -2), b)
        else:
            r = np.swapaxes(_bsolve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.inv, a)
        raise InvalidArgumentError(f"the matrix x is singular{where}, so the system has no "
                                   f"unique solution; linalg.lstsq solves it in the "
                                   f"least-squares sense") from None
    return _out(r, d)


defop("solve", ("x", "y"), {"left": True}, infer=_solve_infer, reference=_solve_ref,
      family="solve", api="linalg.solve", method="solve",
      doc="Solve x @ out = y (left=True) or out @ x = y; y may be a vector.")


# ---------------------------------------------------------------- triangular_solve
def _trisolve_infer(x, y, upper=True, transpose=False, unitriangular=False):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x, square=True)
    _need_matrix(y, "y")
    if not _same(x.shape[-1], y.shape[-2]):
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} needs y with "
                                   f"{x.shape[-1]} rows, got shape {shp(y.shape)}")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch"))
    return TensorType(tuple(batch) + tuple(y.shape[-2:]), x.dtype)


def _trisolve_ref(x, y, upper=True, transpose=False, unitriangular=False):
    a, d = _work(x, square=True)
    _kmatrix(y, "y")
    r = _la.tri_solve(a, y.astype(a.dtype, copy=False), upper, transpose=transpose,
                      unit=unitriangular)
    return _out(r, d)


defop("triangular_solve", ("x", "y"), {"upper": True, "transpose": False,
                                       "unitriangular": False},
      infer=_trisolve_infer, reference=_trisolve_ref, family="solve",
      api="linalg.triangular_solve", method="triangular_solve",
      doc="Solve op(x) @ out = y for triangular x (only its upper or lower triangle is "
          "read); op transposes x when transpose=True.")


def _cholsolve_infer(x, y, upper=False):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x)
    _need_matrix(y, "y", square=True)
    if not _same(x.shape[-2], y.shape[-1]):
        raise InvalidArgumentError(f"the factor y with shape {shp(y.shape)} needs x with "
                                   f"{y.shape[-1]} rows, got shape {shp(x.shape)}")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch"))
    return TensorType(tuple(batch) + tuple(x.shape[-2:]), x.dtype)


def _cholsolve_ref(x, y, upper=False):
    u, d = _work(y, "y", square=True)
    _kmatrix(x)
    b = x.astype(u.dtype, copy=False)
    if upper:  # A = U^H U
        z = _la.tri_solve(u, b, True, transpose=True, conjugate=True)
        r = _la.tri_solve(u, z, True)
    else:  # A = L L^H
        z = _la.tri_solve(u, b, False)
        r = _la.tri_solve(u, z, False, transpose=True, conjugate=True)
    return _out(r, d)


defop("cholesky_solve", ("x", "y"), {"upper": False}, infer=_cholsolve_infer,
      reference=_cholsolve_ref, family="solve", api="linalg.cholesky_solve",
      method="cholesky_solve",
      doc="Solve A @ out = x given the Cholesky factor y of A (lower, or upper=True).")


def _cholinv_ref(x, upper=False):
    u, d = _work(x, square=True)
    n = u.shape[-1]
    eye = np.broadcast_to(xp_of(u).eye(n, dtype=u.dtype), u.shape)
    inv = _la.tri_solve(u, eye, upper)
    r = np.matmul(inv, _la.conj_t(inv)) if upper else np.matmul(_la.conj_t(inv), inv)
    return _out(r, d)


defop("cholesky_inverse", ("x",), {"upper": False}, infer=_square_float_infer,
      reference=_cholinv_ref, promote=None, family="solve", api="linalg.cholesky_inverse",
      method="cholesky_inverse",
      doc="Inverse of A = L L^H (or U^H U with upper=True) from its Cholesky factor x.")


_TRANS = ("N", "T", "C")


def _lu_solve_canon(attrs):
    t = attrs["trans"]
    if t not in _TRANS:
        raise InvalidArgumentError(f"'trans' must be one of {_TRANS}, got {t!r}")
    return {"trans": t}


def _lu_solve_infer(b, lu, pivots, trans="N"):
    _need_float(b, "b")
    _need_float(lu, "lu")
    _need_matrix(lu, "lu", square=True)
    _need_matrix(b, "b")
    if pivots.dtype.kind != _dt._INT:
        raise InvalidTypeError(f"'pivots' must be an integer tensor, got {pivots.dtype.name}")
    if not _same(b.shape[-2], lu.shape[-1]):
        raise InvalidArgumentError(f"lu with shape {shp(lu.shape)} needs b with "
                                   f"{lu.shape[-1]} rows, got shape {shp(b.shape)}")
    batch = broadcast_shapes(b.shape[:-2], lu.shape[:-2], names=("b batch", "lu batch"))
    return TensorType(tuple(batch) + tuple(b.shape[-2:]), b.dtype)


def _lu_solve_ref(b, lu, pivots, trans="N"):
    a, d = _work(lu, "lu", square=True)
    _kmatrix(b, "b")
    batch = np.broadcast_shapes(b.shape[:-2], a.shape[:-2], pivots.shape[:-1])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:])
    rhs = np.broadcast_to(b.astype(a.dtype, copy=False), batch + b.shape[-2:])
    if trans == "N":  # P L U x = b
        z = _la.tri_solve(a, _la.apply_pivots(rhs, piv), False, unit=True)
        r = _la.tri_solve(a, z, True)
    else:  # (P L U)^T x = b: U^T L^T P^T x = b
        c = trans == "C"
        w = _la.tri_solve(a, rhs, True, transpose=True, conjugate=c)
        z = _la.tri_solve(a, w, False, transpose=True, conjugate=c, unit=True)
        r = _la.apply_pivots(z, piv, reverse=True)
    return _out(r, d)


defop("lu_solve", ("b", "lu", "pivots"), {"trans": "N"}, infer=_lu_solve_infer,
      reference=_lu_solve_ref, canon=_lu_solve_canon, promote=(0, 1), family="solve",
      api="linalg.lu_solve", aliases=("lu_solve",), method=False,
      doc="Solve A x = b (trans='N'), A^T x = b ('T') or A^H x = b ('C') from A's LU "
          "factorisation (linalg.lu).")


# ---------------------------------------------------------------- lstsq
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_canon(attrs):
    drv = attrs["driver"] if attrs["driver"] is not None else "gelsy"
    if drv not in _DRIVERS:
        raise InvalidArgumentError(f"'driver' must be one of {_DRIVERS} (or None), got {drv!r}")
    rc = attrs["rcond"]
    return {"rcond": None if rc is None else float(_item(rc, "rcond")), "driver": drv}


def _lstsq_infer(x, y, rcond=None, driver="gelsy"):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x)
    _need_matrix(y, "y")
    m, n = x.shape[-2:]
    kk = y.shape[-1]
    if not _same(m, y.shape[-2]):
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} and y with shape "
                                   f"{shp(y.shape)} must have the same number of rows")
    batch = tuple(broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch")))
    real = real_of(x.dtype)
    # residuals exist only when m > n and every matrix has full rank (data-dependent)
    res = batch + ((DYN if (DYN in (m, n) or m > n) else 0),)
    k = DYN if DYN in (m, n) else min(m, n)
    rank = TensorType(batch, _dt.int32) if driver != "gels" else TensorType((0,), _dt.int32)
    sv = TensorType(batch + (k,), real) if driver in ("gelsd", "gelss") else \
        TensorType((0,), real)
    return TensorType(batch + (n, kk), x.dtype), TensorType(res, real), rank, sv


def _lstsq_ref(x, y, rcond=None, driver="gelsy"):
    a, d = _work(x, square=False)
    _kmatrix(y, "y")
    real = real_of(d)
    batch = np.broadcast_shapes(a.shape[:-2], y.shape[:-2])
    m, n = a.shape[-2:]
    kk = y.shape[-1]
    a = np.broadcast_to(a, batch + (m, n))
    b = np.broadcast_to(y.astype(a.dtype, copy=False), batch + (m, kk))
    if rcond is None:
        rcond = float(np.finfo(a.real.dtype).eps) * max(m, n)
    if a.size == 0:
        s = xp_of(a).zeros(batch + (min(m, n),), dtype=a.real.dtype)
        sol = np.zeros_like(a, shape=batch + (n, kk), dtype=a.dtype)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        keep = s > rcond * reduce_initial(np.max, s, axis=-1, keepdims=True, initial=0.0)
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0).astype(a.dtype)
        sol = np.matmul(_la.conj_t(vh), sinv[..., :, None] * np.matmul(_la.conj_t(u), b))
    top = reduce_initial(np.max, s, axis=-1, keepdims=True, initial=0.0)
    rank = np.sum(s > rcond * top, axis=-1).astype(np.int32)
    if m > n and bool(np.all(rank == n)):
        resid = np.sum(np.abs(np.matmul(a, sol) - b) ** 2, axis=-2)
    else:
        resid = np.zeros_like(a, shape=batch + (0,), dtype=a.real.dtype)
    empty_i = np.zeros_like(a, shape=(0,), dtype=np.int32)
    empty_r = np.zeros_like(a, shape=(0,), dtype=real.np)
    return (_out(sol, d), _out(resid, real),
            empty_i if driver == "gels" else rank,
            _out(s, real) if driver in ("gelsd", "gelss") else empty_r)


defop("lstsq", ("x", "y"), {"rcond": None, "driver": None},
      outputs=("solution", "residuals", "rank", "singular_values"), infer=_lstsq_infer,
      reference=_lstsq_ref, canon=_lstsq_canon, family="solve", api="linalg.lstsq",
      method="lstsq",
      doc="Least-squares solution of x @ out = y (by SVD; rcond cuts small singular values). "
          "residuals are the squared column residual norms when M > N and every x has full "
          "rank, else empty ([*, 0]); rank is empty for driver 'gels', singular_values for "
          "drivers other than 'gelsd'/'gelss'.")


