"""VJP rules of matrix decompositions (cholesky, lu, lu_unpack, qr, eigh, eig,
svd, householder products).

Decompositions use the standard matrix-calculus results (written with ``A^H``
= conjugate transpose):

- ``eigh``, ``cholesky``: the input is Hermitian, and the gradient returned is
  the Hermitian one (as PyTorch and Paddle return it), not the gradient with
  respect to the one triangle LAPACK reads;
- ``svd``, ``eig``, ``eigh`` eigen-/singular vectors are defined up to a phase
  (a sign for real input): the gradient is right for losses that do not depend
  on that choice (as in PyTorch); repeated eigenvalues/singular values make the
  vector gradients infinite;
- ``qr`` (reduced, or square) and ``lu`` (square) as in PyTorch; other shapes
  raise.

Householder products are differentiated through a re-expression
(`_util.composite`).
"""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import (
    composite,
    conj,
    diag_embed,
    diagonal,
    eye_like,
    mH,
    reshape_to,
)
from fw.core.errors import UnsupportedError

# ---------------------------------------------------------------- factorisations


def _phi(m):
    """Lower triangle with the diagonal halved."""
    return fw.tril(m) - 0.5 * diag_embed(diagonal(m))


@vjp("cholesky", inputs=False, outputs=True)
def _cholesky(ctx, g):
    # A = L L^H: gA = L^{-H} Phi(L^H gL) L^{-1}, symmetrised
    out = ctx.outputs[0]
    if ctx.attrs["upper"]:
        low, gl = mH(out), mH(g)
    else:
        low, gl = out, g
    s = _phi(fw.matmul(mH(low), gl))
    lh = mH(low)
    t = fw.linalg.triangular_solve(lh, s, upper=True)  # L^{-H} S
    ga = mH(fw.linalg.triangular_solve(lh, mH(t), upper=True))  # (L^{-H} t^H)^H
    return 0.5 * (ga + mH(ga))


@vjp("lu", inputs=False, outputs=True)
def _lu(ctx, g):
    # A = P L U: gA = P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}
    lu_, piv = ctx.outputs[0], ctx.outputs[1]
    m, n = lu_.shape[-2], lu_.shape[-1]
    if m != n:
        raise UnsupportedError(f"lu: the gradient is implemented for square matrices, got "
                               f"[{m}, {n}]")
    p, low, up = fw.linalg.lu_unpack(lu_, piv)
    glu = g[0]
    gl = fw.tril(glu, -1)
    gu = fw.triu(glu)
    inner = fw.tril(fw.matmul(mH(low), gl), -1) + fw.triu(fw.matmul(gu, mH(up)))
    t = fw.linalg.triangular_solve(mH(low), inner, upper=True, unitriangular=True)
    # t U^{-H}: solve X U^H = t  <=>  U X^H = t^H
    x = mH(fw.linalg.triangular_solve(up, mH(t), upper=True))
    return fw.matmul(p, x)


@vjp("lu_unpack", inputs=False)
def _lu_unpack(ctx, g):
    at = ctx.attrs
    shape = ctx.shape(0)
    m, n = shape[-2], shape[-1]
    if m < 0 or n < 0:  # which factor is padded to [m, n] depends on the sizes
        raise UnsupportedError(f"lu_unpack: the gradient needs the static matrix size, got "
                               f"{list(shape)}")
    k = min(m, n)
    gp, gl, gu = g
    total = None
    if at["unpack_ludata"]:
        # L is [m, k] (unit lower), U is [k, n] (upper): embed them back into [m, n]
        lo = fw.tril(gl, -1)
        hi = fw.triu(gu)
        if n > k:
            lo = fw.concat([lo, fw.zeros(list(lo.shape[:-1]) + [n - k], dtype=lo.dtype)], -1)
        if m > k:
            hi = fw.concat([hi, fw.zeros(list(hi.shape[:-2]) + [m - k, n], dtype=hi.dtype)], -2)
        total = lo + hi
    if total is None:
        total = fw.zeros(shape, dtype=gp.dtype)
    return total, None


def _copyltu(m):
    """tril(M, -1) + tril(M, -1)^H + Re(diag(M)): the Hermitian matrix built from
    M's lower triangle."""
    low = fw.tril(m, -1)
    d = diagonal(m)
    d = fw.real(d).astype(m.dtype) if m.dtype.is_complex else d
    return low + mH(low) + diag_embed(d)


@vjp("qr", inputs=False, outputs=True)
def _qr(ctx, g):
    q, r = ctx.outputs
    gq, gr = g
    mode = ctx.attrs["mode"]
    m, n = q.shape[-2], r.shape[-1]
    if mode == "r":
        raise UnsupportedError("qr: mode='r' returns no Q, so its gradient cannot be computed; "
                               "use mode='reduced'")
    if mode == "complete" and m > n:
        raise UnsupportedError("qr: the gradient of mode='complete' with more rows than "
                               "columns is not defined (Q is not unique); use 'reduced'")
    if m >= n:
        # gA = (gQ + Q copyltu(M)) R^{-H},  M = R gR^H - gQ^H Q
        mm = fw.matmul(r, mH(gr)) - fw.matmul(mH(gq), q)
        b = gq + fw.matmul(q, _copyltu(mm))
        return mH(fw.linalg.triangular_solve(r, mH(b), upper=True))
    # wide: A = [X | Y] = Q [U | V] with U square: Y = Q V feeds into gQ, and
    # X is differentiated as a square QR
    u, v = r[..., :, :m], r[..., :, m:]
    gu, gv = gr[..., :, :m], gr[..., :, m:]
    gq2 = gq + fw.matmul(fw.matmul(q, v), mH(gv))
    mm = fw.matmul(u, mH(gu)) - fw.matmul(mH(gq2), q)
    b = gq2 + fw.matmul(q, _copyltu(mm))
    gx = mH(fw.linalg.triangular_solve(u, mH(b), upper=True))
    return fw.concat([gx, fw.matmul(q, gv)], axis=-1)


# ---------------------------------------------------------------- spectral


def _inv_gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    diff = fw.unsqueeze(w, -2) - fw.unsqueeze(w, -1)  # [.., i, j] = w_j - w_i
    n = w.shape[-1]
    eye = fw.eye(n, dtype="bool")
    safe = fw.where(eye, fw.ones_like(diff), diff)
    return fw.where(eye, fw.zeros_like(diff), 1.0 / safe)


@vjp("eigh", inputs=False, outputs=True)
def _eigh(ctx, g):
    # gA = V (diag(gw) + F o (V^H gV)) V^H, made Hermitian
    w, v = ctx.outputs
    gw, gv = g
    vh = mH(v)
    inner = fw.matmul(vh, gv) * _inv_gaps(w).astype(v.dtype)
    inner = inner + diag_embed(gw.astype(v.dtype))
    ga = fw.matmul(fw.matmul(v, inner), vh)
    return 0.5 * (ga + mH(ga))


@vjp("eig", inputs=False, outputs=True)
def _eig(ctx, g):
    # A = V diag(w) V^{-1}: gA = V^{-H} (diag(gw) + conj(F) o (V^H gV - V^H V Re(diag(V^H gV))))
    # V^H, with F[i, j] = 1/(w_j - w_i) (eigenvectors normalised to unit norm)
    w, v = ctx.outputs
    gw, gv = g
    vh = mH(v)
    vhgv = fw.matmul(vh, gv)
    d = fw.real(diagonal(vhgv)).astype(v.dtype)
    corr = vhgv - fw.matmul(vh, v) * fw.unsqueeze(d, -2)
    inner = corr * fw.conj(_inv_gaps(w)) + diag_embed(gw)
    return fw.linalg.solve(vh, fw.matmul(inner, vh))


@vjp("svd", inputs=False, outputs=True)
def _svd(ctx, g):
    u, s, vh = ctx.outputs
    gu, gs, gvh = g
    m, n = u.shape[-2], vh.shape[-1]
    k = s.shape[-1]
    if ctx.attrs["full_matrices"] and m != n:
        raise UnsupportedError("svd: the gradient with full_matrices=True is not defined for "
                               "non-square input (the extra singular vectors are not unique); "
                               "use full_matrices=False")
    v = mH(vh)
    gv = mH(gvh)
    sc = s.astype(u.dtype)
    # skew parts of U^H gU and V^H gV, divided by s_j^2 - s_i^2
    uhgu = fw.matmul(mH(u), gu)
    vhgv = fw.matmul(vh, gv)
    s2 = s * s
    e = fw.unsqueeze(s2, -2) - fw.unsqueeze(s2, -1)  # [.., i, j] = s_j^2 - s_i^2
    eye = fw.eye(k, dtype="bool")
    f = fw.where(eye, fw.zeros_like(e), 1.0 / fw.where(eye, fw.ones_like(e), e)).astype(u.dtype)
    ju = (uhgu - mH(uhgu)) * f
    jv = (vhgv - mH(vhgv)) * f
    inner = (fw.matmul(ju, diag_embed(sc)) + fw.matmul(diag_embed(sc), jv)
             + diag_embed(gs.astype(u.dtype)))
    if u.dtype.is_complex:
        # the phase of each singular pair (fixed by LAPACK's convention): i Im(U^H gU)_ii / s_i
        inner = inner + diag_embed(fw.imag(diagonal(uhgu)) * 1j / s)
    ga = fw.matmul(fw.matmul(u, inner), vh)
    sinv = (1.0 / s).astype(u.dtype)
    if m > k:
        proj = gu - fw.matmul(u, uhgu)
        ga = ga + fw.matmul(proj * fw.unsqueeze(sinv, -2), vh)
    if n > k:
        proj = gv - fw.matmul(v, vhgv)
        ga = ga + fw.matmul(u * fw.unsqueeze(sinv, -2), mH(proj))
    return ga


# ---------------------------------------------------------------- householder


def _reflectors(x, k):
    """The Householder vectors v_i (unit i-th entry, zeros above) of x's columns."""
    if k < 0 or any(d < 0 for d in x.shape):  # the loop and the zero blocks need sizes
        raise UnsupportedError(f"the gradient through Householder reflectors needs static "
                               f"shapes, got {list(x.shape)} with {k} reflectors")
    m = x.shape[-2]
    vs = []
    for i in range(k):
        col = x[..., :, i]
        top = fw.zeros(list(col.shape[:-1]) + [i], dtype=x.dtype)
        one = fw.ones(list(col.shape[:-1]) + [1], dtype=x.dtype)
        parts = ([top] if i else []) + [one] + ([col[..., i + 1:]] if i + 1 < m else [])
        vs.append(fw.concat(parts, axis=-1))
    return vs


def _apply_reflector(y, v, t, left=True):
    """(I - t v v^H) y (left) or y (I - t v v^H) (right)."""
    tt = reshape_to(t, list(t.shape) + [1, 1])
    if left:
        w = fw.matmul(fw.unsqueeze(conj(v), -2), y)  # [.., 1, n]
        return y - tt * fw.matmul(fw.unsqueeze(v, -1), w)
    w = fw.matmul(y, fw.unsqueeze(v, -1))  # [.., m, 1]
    return y - tt * fw.matmul(w, fw.unsqueeze(conj(v), -2))


@composite("householder_product")
def _householder_product_fn(x, tau):
    m, n = x.shape[-2], x.shape[-1]
    k = tau.shape[-1]
    q = fw.broadcast_to(eye_like(m, x), list(x.shape[:-2]) + [m, m])
    for i, v in reversed(list(enumerate(_reflectors(x, k)))):
        q = _apply_reflector(q, v, tau[..., i])
    return q[..., :, :n]


@composite("ormqr")
def _ormqr_fn(x, tau, y, left, transpose):
    k = tau.shape[-1]
    vs = list(enumerate(_reflectors(x, k)))
    out = y
    # Q = H_0 H_1 ... H_{k-1}; Q^H = H_{k-1}^H ... H_0^H with H_i^H = I - conj(t) v v^H
    if left:
        order = vs if transpose else list(reversed(vs))
        for i, v in order:
            t = tau[..., i]
            out = _apply_reflector(out, v, conj(t) if transpose else t, left=True)
    else:
        order = list(reversed(vs)) if transpose else vs
        for i, v in order:
            t = tau[..., i]
            out = _apply_reflector(out, v, conj(t) if transpose else t, left=False)
    return out
