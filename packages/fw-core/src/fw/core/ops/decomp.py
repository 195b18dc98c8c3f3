"""Linear algebra: decompositions (``cholesky``, ``lu``, ``lu_unpack``, ``qr``,
``svd``, ``eig``, ``eigh``, ``householder_product``, ``ormqr``). Split from
``linalg.py``, whose docstring states the design and the dtype rules these ops
follow; argument checks shared with it are in ``_linalg_check.py``.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import _linalg_np as _la
from fw.core.ops._infer import (
    broadcast_shapes,
    complex_of,
    real_of,
    shp,
)
from fw.core.ops._linalg_check import (
    _first_failure,
    _kmatrix,
    _need_float,
    _need_matrix,
    _out,
    _same,
    _square_float_infer,
    _work,
)
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of


# ---------------------------------------------------------------- cholesky family
def _cholesky_ref(x, upper=False):
    a, d = _work(x, square=True)
    try:
        low = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.cholesky, a)
        raise InvalidArgumentError(f"the input matrix is not positive-definite{where}, so it "
                                   f"has no Cholesky factor") from None
    return _out(_la.conj_t(low) if upper else low, d)


defop("cholesky", ("x",), {"upper": False}, infer=_square_float_infer,
      reference=_cholesky_ref, promote=None, family="decomp", api="linalg.cholesky",
      aliases=("cholesky",),
      doc="Cholesky factor L (x = L L^H) or, with upper=True, U = L^H (x = U^H U); "
          "reads the lower triangle of x.")


# ---------------------------------------------------------------- LU
def _lu_infer(x, pivot=True):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    return (x, TensorType(batch + (k,), _dt.int32), TensorType(batch, _dt.int32))


def _lu_ref(x, pivot=True):
    a, d = _work(x, square=False)
    lu, piv, info = _la.lu_factor(a, pivot)
    return _out(lu, d), piv, info


lu_op = defop("lu", ("x",), {"pivot": True}, outputs=("lu", "pivots", "infos"),
              infer=_lu_infer, reference=_lu_ref, promote=None, family="decomp",
              api="linalg.lu", method="lu",
              doc="LU factorisation with partial pivoting: (LU, pivots, infos) as LAPACK's "
                  "getrf gives them (pivots and infos are int32, 1-based).")


def _lu_unpack_infer(x, y, unpack_ludata=True, unpack_pivots=True):
    _need_float(x)
    _need_matrix(x)
    if y.dtype.kind != _dt._INT:
        raise InvalidTypeError(f"'y' (the pivots) must be an integer tensor, got {y.dtype.name}")
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    empty = TensorType((0,), x.dtype)
    p = TensorType(batch + (m, m), x.dtype) if unpack_pivots else empty
    low = TensorType(batch + (m, k), x.dtype) if unpack_ludata else empty
    up = TensorType(batch + (k, n), x.dtype) if unpack_ludata else empty
    return p, low, up


def _lu_unpack_ref(x, y, unpack_ludata=True, unpack_pivots=True):
    a, d = _work(x)
    if y.dtype.kind not in "iu":
        raise InvalidTypeError(f"'y' (the pivots) must be an integer tensor, got {y.dtype}")
    p, low, up = _la.lu_unpack(a, y)
    empty = np.zeros_like(x, shape=(0,), dtype=d.np)
    return (_out(p, d) if unpack_pivots else empty,
            _out(low, d) if unpack_ludata else empty,
            _out(up, d) if unpack_ludata else empty)


defop("lu_unpack", ("x", "y"), {"unpack_ludata": True, "unpack_pivots": True},
      outputs=("p", "l", "u"), infer=_lu_unpack_infer, reference=_lu_unpack_ref, promote=None,
      family="decomp", api="linalg.lu_unpack", method="lu_unpack",
      doc="(P, L, U) with x = P @ L @ U from linalg.lu's (LU, pivots); the parts not "
          "unpacked are empty tensors of shape [0].")


# ---------------------------------------------------------------- qr
_QR_MODES = ("reduced", "complete")


def _qr_canon(attrs):
    mode = attrs["mode"]
    if mode not in _QR_MODES:
        raise InvalidArgumentError(f"'mode' must be one of {_QR_MODES} (linalg.qr also takes "
                                   f"'r'), got {mode!r}")
    return {"mode": mode}


def _qr_infer(x, mode="reduced"):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = m if mode == "complete" else (DYN if DYN in (m, n) else min(m, n))
    batch = tuple(x.shape[:-2])
    return TensorType(batch + (m, k), x.dtype), TensorType(batch + (k, n), x.dtype)


def _qr_ref(x, mode="reduced"):
    a, d = _work(x, square=False)
    m, n = a.shape[-2:]
    if a.size == 0:  # numpy.linalg.qr rejects empty stacks
        k = m if mode == "complete" else min(m, n)
        batch = a.shape[:-2]
        q = np.broadcast_to(xp_of(a).eye(m, k, dtype=a.dtype), batch + (m, k))
        return _out(q, d), np.zeros_like(a, shape=batch + (k, n), dtype=d.np)
    q, r = np.linalg.qr(a, mode=mode)
    return _out(q, d), _out(r, d)


qr_op = defop("qr", ("x",), {"mode": "reduced"}, outputs=("q", "r"), infer=_qr_infer,
              reference=_qr_ref, canon=_qr_canon, promote=None, family="decomp",
              api="linalg.qr", method="qr",
              doc="QR decomposition x = Q R (Householder, as LAPACK geqrf/orgqr).")


# ---------------------------------------------------------------- svd
def _svd_infer(x, full_matrices=False):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    ucols, vrows = (m, n) if full_matrices else (k, k)
    return (TensorType(batch + (m, ucols), x.dtype), TensorType(batch + (k,), real_of(x.dtype)),
            TensorType(batch + (vrows, n), x.dtype))


def _svd_ref(x, full_matrices=False):
    a, d = _work(x, square=False)
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        batch = a.shape[:-2]
        uc, vr = (m, n) if full_matrices else (k, k)
        return (np.broadcast_to(xp_of(a).eye(m, uc, dtype=d.np), batch + (m, uc)).copy(),
                xp_of(a).zeros(batch + (k,), dtype=real_of(d).np),
                np.broadcast_to(xp_of(a).eye(vr, n, dtype=d.np), batch + (vr, n)).copy())
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return _out(u, d), _out(s, real_of(d)), _out(vh, d)


svd_op = defop("svd", ("x",), {"full_matrices": False}, outputs=("u", "s", "vh"),
               infer=_svd_infer, reference=_svd_ref, promote=None, family="decomp",
               api="linalg.svd", method=False,
               doc="Singular value decomposition x = U diag(S) VH, S descending and real.")


# ---------------------------------------------------------------- eig / eigh
def _eig_infer(x):
    _square_float_infer(x)
    c = complex_of(x.dtype)
    return TensorType(tuple(x.shape[:-1]), c), TensorType(x.shape, c)


def _eig_ref(x):
    a, d = _work(x, square=True)
    c = complex_of(d)
    try:
        w, v = np.linalg.eig(a)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("the eigenvalue algorithm did not converge") from None
    return _out(w, c), _out(v, c)


eig_op = defop("eig", ("x",), outputs=("eigenvalues", "eigenvectors"), infer=_eig_infer,
               reference=_eig_ref, promote=None, family="decomp", api="linalg.eig",
               method="eig",
               doc="Eigenvalues and right eigenvectors of a general square matrix; always "
                   "complex (complex64 for float32 input).")


def _uplo_canon(attrs):
    u = attrs["UPLO"]
    if u not in ("L", "U"):
        raise InvalidArgumentError(f"'UPLO' must be 'L' or 'U', got {u!r}")
    return {"UPLO": u}


def _eigh_infer(x, UPLO="L"):
    _square_float_infer(x)
    return TensorType(tuple(x.shape[:-1]), real_of(x.dtype)), x


def _eigh_ref(x, UPLO="L"):
    a, d = _work(x, square=True)
    try:
        w, v = np.linalg.eigh(a, UPLO=UPLO)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("the eigenvalue algorithm did not converge") from None
    return _out(w, real_of(d)), _out(v, d)


eigh_op = defop("eigh", ("x",), {"UPLO": "L"}, outputs=("eigenvalues", "eigenvectors"),
                infer=_eigh_infer, reference=_eigh_ref, canon=_uplo_canon, promote=None,
                family="decomp", api="linalg.eigh", method=False,
                doc="Eigenvalues (ascending, real) and orthonormal eigenvectors of a "
                    "Hermitian matrix, read from its lower (UPLO='L') or upper triangle.")


# ---------------------------------------------------------------- Householder products
def _hh_infer(x, tau):
    _need_float(x)
    _need_float(tau, "tau")
    _need_matrix(x)
    m, n = x.shape[-2:]
    if len(tau.shape) != len(x.shape) - 1:
        raise InvalidArgumentError(f"tau with shape {shp(tau.shape)} must have one dimension "
                                   f"less than x with shape {shp(x.shape)}")
    if m != DYN and n != DYN and m < n:
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} must have at least as many "
                                   f"rows as columns")
    k = tau.shape[-1]
    if k != DYN and n != DYN and k > n:
        raise InvalidArgumentError(f"tau with shape {shp(tau.shape)} holds more than "
                                   f"x.shape[-1]={n} coefficients")
    broadcast_shapes(x.shape[:-2], tau.shape[:-1], names=("x batch", "tau batch"))
    return x


def _hh_ref(x, tau):
    a, d = _work(x, square=False)
    if a.shape[-2] < a.shape[-1] or tau.shape[-1] > a.shape[-1]:
        raise InvalidArgumentError(f"x with shape {list(a.shape)} must have at least as many "
                                   f"rows as columns, and tau with shape {list(tau.shape)} at "
                                   f"most x.shape[-1] coefficients")
    t = tau.astype(a.dtype, copy=False)
    return _out(_la.householder_q(a, t, a.shape[-1]), d)


defop("householder_product", ("x", "tau"), infer=_hh_infer, reference=_hh_ref,
      family="decomp", api="linalg.householder_product", method="householder_product",
      doc="The first N columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i read "
          "from the columns of x below the diagonal (LAPACK orgqr).")


def _ormqr_infer(x, tau, y, left=True, transpose=False):
    _need_float(x)
    _need_float(tau, "tau")
    _need_float(y, "y")
    _need_matrix(x)
    _need_matrix(y, "y")
    mn = x.shape[-2]
    side = y.shape[-2] if left else y.shape[-1]
    if not _same(mn, side):
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} gives a {mn}x{mn} Q that "
                                   f"cannot multiply y with shape {shp(y.shape)} "
                                   f"(left={left})")
    k = tau.shape[-1] if tau.shape else DYN
    if len(tau.shape) != len(x.shape) - 1 or (k != DYN and x.shape[-1] != DYN and
                                                k > x.shape[-1]):
        raise InvalidArgumentError(f"tau with shape {shp(tau.shape)} does not match x with "
                                   f"shape {shp(x.shape)}")
    batch = broadcast_shapes(x.shape[:-2], tau.shape[:-1], y.shape[:-2],
                             names=("x batch", "tau batch", "y batch"))
    return TensorType(tuple(batch) + tuple(y.shape[-2:]), y.dtype)


def _ormqr_ref(x, tau, y, left=True, transpose=False):
    a, d = _work(x, square=False)
    _kmatrix(y, "y")
    r = _la.householder_apply(a, tau.astype(a.dtype, copy=False),
                              y.astype(a.dtype, copy=False), left=left, adjoint=transpose)
    return _out(r, d)


defop("ormqr", ("x", "tau", "y"), {"left": True, "transpose": False}, infer=_ormqr_infer,
      reference=_ormqr_ref, family="decomp", api="linalg.ormqr", method="ormqr",
      doc="op(Q) @ y (left) or y @ op(Q), Q given by Householder reflectors (x, tau) and "
          "op the conjugate transpose when transpose=True (LAPACK ormqr).")


