"""NumPy building blocks for the linalg reference kernels that ``numpy.linalg``
lacks: LU with LAPACK-style pivots, triangular solves, Householder products and
the matrix exponential. All functions take stacks of matrices (``(..., m, n)``)
and use only the NumPy API on their array arguments, so they also run on CuPy
arrays through NumPy's dispatch protocols.
"""

from __future__ import annotations

import numpy as np

from fw.core.ops._xp import reduce_initial, xp_of

__all__ = ["batch_size", "lu_factor", "lu_unpack", "permutation", "apply_pivots",
           "tri_solve", "householder_apply", "householder_q", "expm", "conj_t"]


def batch_size(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def conj_t(a):
    """The conjugate transpose of the last two axes."""
    t = np.swapaxes(a, -1, -2)
    return np.conj(t) if np.iscomplexobj(t) else t


# ---------------------------------------------------------------- LU
def lu_factor(a, pivot=True):
    """LU factorisation with partial pivoting of a stack ``(..., m, n)``.

    Returns ``(lu, pivots, infos)`` as LAPACK's getrf does: ``lu`` holds the
    unit-lower L (below the diagonal) and U; ``pivots[..., i]`` (int32, 1-based)
    is the row that row i was swapped with at step i; ``infos`` (int32) is 0, or
    the 1-based index of the first zero pivot. Without pivoting the rows are
    never swapped (``pivots[i] == i + 1``) and a zero pivot divides by zero.
    """
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    batch = a.shape[:-2]
    nb = batch_size(batch)
    f = np.array(a, copy=True).reshape((nb, m, n))
    piv = np.empty_like(a, shape=(nb, k), dtype=np.int32)
    info = np.zeros_like(a, shape=(nb,), dtype=np.int32)
    rows = xp_of(a).arange(nb)
    for j in range(k):
        if pivot:
            p = np.argmax(np.abs(f[:, j:, j]), axis=1) + j
            top = f[rows, j, :].copy()
            f[rows, j, :] = f[rows, p, :]
            f[rows, p, :] = top
        else:
            p = xp_of(a).full((nb,), j)
        piv[:, j] = p + 1
        d = f[:, j, j]
        zero = d == 0
        info[(info == 0) & zero] = j + 1
        if j + 1 < m:
            col = f[:, j + 1:, j]
            if pivot:
                # a zero pivot means the whole column below is zero: leave it
                col = np.divide(col, np.where(zero, 1, d)[:, None])
            else:
                col = col / d[:, None]
            f[:, j + 1:, j] = col
            if j + 1 < n:
                f[:, j + 1:, j + 1:] -= col[:, :, None] * f[:, j, None, j + 1:]
    return (f.reshape(batch + (m, n)), piv.reshape(batch + (k,)), info.reshape(batch))


def permutation(pivots, m):
    """The row permutation the LAPACK pivots describe: ``perm[..., i]`` is the
    original row that ends up at position i."""
    batch = pivots.shape[:-1]
    nb = batch_size(batch)
    k = pivots.shape[-1]
    piv = pivots.reshape((nb, k)).astype(np.int64) - 1
    if piv.size and (piv.min() < 0 or piv.max() >= m):
        raise ValueError(f"pivots must lie in [1, {m}], got values in "
                         f"[{int(piv.min()) + 1}, {int(piv.max()) + 1}]")
    perm = np.broadcast_to(xp_of(pivots).arange(m), (nb, m)).copy()
    rows = xp_of(pivots).arange(nb)
    for i in range(k):
        p = piv[:, i]
        cur = perm[rows, i].copy()
        perm[rows, i] = perm[rows, p]
        perm[rows, p] = cur
    return perm.reshape(batch + (m,))


def lu_unpack(lu, pivots):
    """``(P, L, U)`` with ``A = P @ L @ U`` from `lu_factor`'s results."""
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    low = xp_of(lu).tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    up = np.triu(lu[..., :k, :])
    perm = permutation(pivots, m)
    eye = xp_of(lu).eye(m, dtype=lu.dtype)
    p = np.swapaxes(eye[perm], -1, -2)
    return p, low, up


def apply_pivots(b, pivots, reverse=False):
    """Apply the LAPACK row swaps to the rows of ``b`` (``P^T b``), or undo them
    (``P b``) with reverse=True. ``b`` and ``pivots`` share batch dims."""
    m = b.shape[-2]
    perm = permutation(pivots, m)
    if reverse:
        inv = np.argsort(perm, axis=-1)
        return np.take_along_axis(b, inv[..., :, None], axis=-2)
    return np.take_along_axis(b, perm[..., :, None], axis=-2)


# ---------------------------------------------------------------- triangular solve
def tri_solve(a, b, upper, transpose=False, conjugate=False, unit=False):
    """Solve ``op(a) @ x = b`` by substitution, a triangular (only that triangle
    is read), op = identity, transpose or conjugate transpose. Batch dims
    broadcast. A zero diagonal gives inf/nan as BLAS trsm does, not an error."""
    if transpose:
        a = np.swapaxes(a, -1, -2)
        upper = not upper
    if conjugate:
        a = np.conj(a)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, k = b.shape[-2], b.shape[-1]
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + (m, k))
    dt = np.result_type(a.dtype, b.dtype)
    x = np.zeros_like(b, shape=batch + (m, k), dtype=dt)
    order = range(m - 1, -1, -1) if upper else range(m)
    for i in order:
        if upper:
            s = np.matmul(a[..., i:i + 1, i + 1:], x[..., i + 1:, :])[..., 0, :]
        else:
            s = np.matmul(a[..., i:i + 1, :i], x[..., :i, :])[..., 0, :]
        r = b[..., i, :] - s
        x[..., i, :] = r if unit else r / a[..., i, i, None]
    return x


# ---------------------------------------------------------------- Householder
def _reflector(x, i):
    """The i-th Householder vector (1 at i, zeros above, x[i+1:, i] below)."""
    m = x.shape[-2]
    v = np.zeros_like(x, shape=x.shape[:-2] + (m,), dtype=x.dtype)
    v[..., i] = 1
    v[..., i + 1:] = x[..., i + 1:, i]
    return v


def householder_apply(x, tau, c, left=True, adjoint=False):
    """``op(Q) @ c`` (left) or ``c @ op(Q)`` where ``Q = H_0 ... H_{k-1}``,
    ``H_i = I - tau_i v_i v_i^H`` and op is identity or the conjugate
    transpose (adjoint=True)."""
    k = tau.shape[-1]
    # Q c applies H_{k-1} first; Q^H c applies H_0^H first; c Q applies H_0 first
    forward = adjoint if left else not adjoint
    steps = range(k) if forward else range(k - 1, -1, -1)
    for i in steps:
        v = _reflector(x, i)
        t = tau[..., i]
        if adjoint and np.iscomplexobj(t):
            t = np.conj(t)
        if left:
            w = np.matmul(np.conj(v)[..., None, :], c)  # (..., 1, n) = v^H c
            c = c - t[..., None, None] * v[..., :, None] * w
        else:
            w = np.matmul(c, v[..., :, None])  # (..., m, 1) = c v
            c = c - t[..., None, None] * w * np.conj(v)[..., None, :]
    return c


def householder_q(x, tau, ncols):
    """The first `ncols` columns of ``Q = H_0 ... H_{k-1}`` (``m x m``)."""
    m = x.shape[-2]
    batch = np.broadcast_shapes(x.shape[:-2], tau.shape[:-1])
    eye = xp_of(x).eye(m, ncols, dtype=x.dtype)
    c = np.broadcast_to(eye, batch + (m, ncols))
    return householder_apply(x, tau, c, left=True, adjoint=False)


# ---------------------------------------------------------------- matrix exponential
# Pade(13) coefficients and the 1-norm bound for which it is accurate to double
# precision without scaling (Higham, "The scaling and squaring method for the
# matrix exponential revisited", 2005).
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def expm(a):
    """exp(a) of a stack of square matrices, by scaling and squaring with a
    degree-13 Pade approximant, each matrix scaled by its own power of two."""
    n = a.shape[-1]
    norm1 = reduce_initial(np.max, np.sum(np.abs(a), axis=-2), axis=-1, initial=0.0)
    ratio = np.where(np.isfinite(norm1), norm1, 0.0) / _THETA13
    s = np.where(ratio > 1, np.ceil(np.log2(np.maximum(ratio, 1.0))), 0).astype(np.int64)
    a = a / np.power(2.0, s)[..., None, None].astype(a.real.dtype)
    b = _PADE13
    eye = xp_of(a).eye(n, dtype=a.dtype)
    a2 = np.matmul(a, a)
    a4 = np.matmul(a2, a2)
    a6 = np.matmul(a4, a2)
    u = np.matmul(a, np.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                  + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (np.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
    r = np.linalg.solve(v - u, v + u)
    top = int(s.max()) if s.size else 0
    for i in range(top):
        sq = np.matmul(r, r)
        r = np.where((s > i)[..., None, None], sq, r)
    return r
