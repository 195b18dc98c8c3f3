"""VJP rules of linear algebra ops.

Complex inputs follow the conjugate convention: for ``out = x @ y`` the
gradients are ``g @ y^H`` and ``x^H @ g``. Decompositions use the standard
matrix-calculus results (written with ``A^H`` = conjugate transpose):

- ``eigh``, ``cholesky``: the input is Hermitian, and the gradient returned is
  the Hermitian one (as PyTorch and Paddle return it), not the gradient with
  respect to the one triangle LAPACK reads;
- ``svd``, ``eig``, ``eigh`` eigen-/singular vectors are defined up to a phase
  (a sign for real input): the gradient is right for losses that do not depend
  on that choice (as in PyTorch); repeated eigenvalues/singular values make the
  vector gradients infinite;
- ``qr`` (reduced, or square) and ``lu`` (square) as in PyTorch; other shapes
  raise.

Ops that are compositions of others (cholesky_inverse/solve, lu_solve, pinv's
relatives, norms, cov, cdist, householder products) are differentiated through
a re-expression (`_util.composite`).
"""

from __future__ import annotations

import math

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import (
    composite,
    conj,
    keepdim_shape,
    norm_axes,
    reshape_to,
    zeros_like,
)
from fw.core.errors import UnsupportedError


def mT(x):
    return fw.swapaxes(x, -1, -2)


def mH(x):
    return conj(fw.swapaxes(x, -1, -2))


def _eye(n, like):
    return fw.eye(n, dtype=like.dtype)


def _diag(v):
    """[..., n] -> [..., n, n] with v on the diagonal."""
    return fw.diag_embed(v)


def _diagonal(m):
    return fw.diagonal(m, axis1=-2, axis2=-1)


# ---------------------------------------------------------------- products


@vjp("matmul")
def _matmul(ctx, g):
    x, y = ctx.inputs
    tx, ty = ctx.attrs["transpose_x"], ctx.attrs["transpose_y"]
    xv, yv = x.ndim == 1, y.ndim == 1
    # vectors are matrices with a unit dim that the product dropped: put it back
    if xv:
        x = fw.unsqueeze(x, 0)
        g = fw.unsqueeze(g, -2)
        tx = False
    if yv:
        y = fw.unsqueeze(y, -1)
        g = fw.unsqueeze(g, -1)
        ty = False
    cx, cy = conj(x), conj(y)
    gx = gy = None
    if ctx.needs(0):
        if not tx:
            gx = fw.matmul(g, cy, transpose_y=not ty)
        else:
            gx = fw.matmul(cy, g, transpose_x=ty, transpose_y=True)
        if xv:
            gx = fw.squeeze(gx, -2)
    if ctx.needs(1):
        if not ty:
            gy = fw.matmul(cx, g, transpose_x=not tx)
        else:
            gy = fw.matmul(g, cx, transpose_x=True, transpose_y=tx)
        if yv:
            gy = fw.squeeze(gy, -1)
    return gx, gy


@vjp("vecdot")
def _vecdot(ctx, g):
    # out = sum(conj(x) * y): d/dx -> conj(g) * y, d/dy -> g * x
    x, y = ctx.inputs
    ax = ctx.attrs["axis"]
    ge = fw.unsqueeze(g, ax if ax < 0 else ax - max(len(ctx.shape(0)), len(ctx.shape(1))))
    shape = fw.broadcast_shape(list(x.shape), list(y.shape))
    return (conj(ge) * fw.broadcast_to(y, shape) if ctx.needs(0) else None,
            ge * fw.broadcast_to(x, shape) if ctx.needs(1) else None)


@vjp("cross")
def _cross(ctx, g):
    x, y = ctx.inputs
    ax = ctx.attrs["axis"]
    return (fw.cross(conj(y), g, axis=ax) if ctx.needs(0) else None,
            fw.cross(g, conj(x), axis=ax) if ctx.needs(1) else None)


@vjp("trace", inputs=False)
def _trace(ctx, g):
    a = ctx.attrs
    shape = ctx.shape(0)
    z = fw.zeros(shape, dtype=g.dtype)
    d = fw.diagonal(z, offset=a["offset"], axis1=a["axis1"], axis2=a["axis2"])
    return fw.diagonal_scatter(z, fw.unsqueeze(g, -1) + d, offset=a["offset"],
                               axis1=a["axis1"], axis2=a["axis2"])


def _einsum_parse(eq, shapes):
    eq = eq.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = [c for c in lhs if c.isalpha()]
        out = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return lhs.split(","), out


@vjp("einsum")
def _einsum(ctx, g):
    # the gradient of operand k contracts g with the other operands onto k's subscripts
    ops = ctx.inputs[0]
    subs, out = _einsum_parse(ctx.attrs["equation"], [o.shape for o in ops])
    grads = []
    for k, (s, x) in enumerate(zip(subs, ops)):
        if not ctx.needs(0, k):
            grads.append(None)
            continue
        letters = s.replace("...", "")
        repeated = sorted({c for c in letters if letters.count(c) > 1})
        if repeated:
            if "..." in s or any(letters.count(c) > 2 for c in repeated):
                raise UnsupportedError(f"einsum: the gradient of operand '{s}' (a subscript "
                                       f"repeated more than twice, or with '...') is not "
                                       f"implemented")
            grads.append(_einsum_diagonal_grad(g, out, subs, ops, k))
            continue
        others = [(subs[j], conj(ops[j])) for j in range(len(ops)) if j != k]
        avail = set(out) | {c for sj, _ in others for c in sj}
        # letters summed away only within operand k: compute without them, then broadcast
        keep = "".join(c for c in s if c == "." or c in avail)
        eq = ",".join([out] + [sj for sj, _ in others]) + "->" + keep
        r = fw.einsum(eq, g, *[t for _, t in others])
        if keep != s:
            # insert size-1 dims where the missing letters were, then broadcast
            dim = 0
            for c in s.replace("...", "E"):
                if c == "E":
                    dim += x.ndim - len(letters)
                    continue
                if c not in avail:
                    r = fw.unsqueeze(r, dim)
                dim += 1
            r = fw.broadcast_to(r, list(x.shape))
        grads.append(r)
    return [grads]


def _einsum_diagonal_grad(g, out, subs, ops, k):
    """The gradient of an operand whose subscripts repeat letters ('ii', 'bjj'): it
    lives on the diagonals those letters name. Computed for the subscripts with each
    letter once, then embedded on the diagonals (zeros elsewhere)."""
    s = subs[k]
    x = ops[k]
    unique = "".join(dict.fromkeys(s))
    others = [(subs[j], conj(ops[j])) for j in range(len(ops)) if j != k]
    avail = set(out) | {c for sj, _ in others for c in sj}
    sizes = {c: d for c, d in zip(s, x.shape)}
    keep = "".join(c for c in unique if c in avail)
    r = fw.einsum(",".join([out] + [sj for sj, _ in others]) + "->" + keep, g,
                  *[t for _, t in others])
    cur = list(keep)
    for c in unique:  # letters summed within the operand alone: broadcast them back
        if c not in avail:
            r = fw.broadcast_to(fw.unsqueeze(r, len(cur)), list(r.shape) + [sizes[c]])
            cur.append(c)
    for c in dict.fromkeys(c for c in s if s.count(c) == 2):
        p = cur.index(c)
        r = fw.diag_embed(fw.moveaxis(r, p, -1))  # the last two axes are now c, c
        cur.pop(p)
        cur += [c, c]
    # permute to the operand's order, giving the two copies of a letter their places
    taken = []
    perm = []
    for c in s:
        idx = next(i for i, d in enumerate(cur) if d == c and i not in taken)
        taken.append(idx)
        perm.append(idx)
    return fw.transpose(r, perm)


# ---------------------------------------------------------------- inverses and solves


@vjp("inv", inputs=False, outputs=True)
def _inv(ctx, g):
    out = ctx.outputs[0]
    oh = mH(out)
    return -fw.matmul(fw.matmul(oh, g), oh)


@vjp("det", outputs=True)
def _det(ctx, g):
    x = ctx.inputs[0]
    d = ctx.outputs[0]
    s = (g * conj(d))[..., None, None]
    return s * mH(fw.linalg.inv(x))


@vjp("slogdet", outputs=True)
def _slogdet(ctx, g):
    x = ctx.inputs[0]
    g_sign, g_log = g[0], g[1]
    coef = g_log
    if x.dtype.is_complex:
        sign = ctx.outputs[0][0]
        coef = g_log + 1j * fw.imag(g_sign * fw.conj(sign))
    return coef[..., None, None] * mH(fw.linalg.inv(x))


@vjp("solve", outputs=True)
def _solve(ctx, g):
    a, b = ctx.inputs
    out = ctx.outputs[0]
    left = ctx.attrs["left"]
    if b.ndim == 1:
        # a vector right-hand side (the result is a vector per matrix of the batch):
        # left=True solves a x = b, left=False a^T x = b
        at = a if left else mT(a)
        gb = fw.squeeze(fw.linalg.solve(mH(at), fw.unsqueeze(g, -1)), -1)
        ga = -fw.unsqueeze(gb, -1) * fw.unsqueeze(conj(out), -2)
        if not left:
            ga = mT(ga)
        return (ga if ctx.needs(0) else None), gb
    if left:
        gb = fw.linalg.solve(mH(a), g)
        ga = -fw.matmul(gb, mH(out))
    else:
        gb = fw.linalg.solve(mH(a), g, left=False)
        ga = -fw.matmul(mH(out), gb)
    return (ga if ctx.needs(0) else None), (gb if ctx.needs(1) else None)


@vjp("triangular_solve", outputs=True)
def _triangular_solve(ctx, g):
    a, b = ctx.inputs
    out = ctx.outputs[0]
    at = ctx.attrs
    upper, trans, unit = at["upper"], at["transpose"], at["unitriangular"]
    # out = op(A)^{-1} B with op(A) = A or A^T: gB = op(A)^{-H} g
    gb = fw.linalg.triangular_solve(conj(a), g, upper=upper, transpose=not trans,
                                    unitriangular=unit)
    ga = None
    if ctx.needs(0):
        gop = -fw.matmul(gb, mH(out))
        ga = mT(gop) if trans else gop
        ga = fw.triu(ga) if upper else fw.tril(ga)
        if unit:
            ga = ga - _diag(_diagonal(ga))
    return ga, (gb if ctx.needs(1) else None)


@vjp("pinv", outputs=True)
def _pinv(ctx, g):
    # d(A+) for constant rank (Golub & Pereyra), transposed into a VJP
    a = ctx.inputs[0]
    p = ctx.outputs[0]
    ph = mH(p)
    gh = mH(g)
    m, n = a.shape[-2], a.shape[-1]
    i_m = _eye(m, a)
    i_n = _eye(n, a)
    t1 = -fw.matmul(fw.matmul(ph, g), ph)
    t2 = fw.matmul(fw.matmul(i_m - fw.matmul(a, p), gh), fw.matmul(p, ph))
    t3 = fw.matmul(fw.matmul(fw.matmul(ph, p), gh), i_n - fw.matmul(p, a))
    return t1 + t2 + t3


# ---------------------------------------------------------------- factorisations


def _phi(m):
    """Lower triangle with the diagonal halved."""
    return fw.tril(m) - 0.5 * _diag(_diagonal(m))


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


def _factor(y, upper):
    return fw.triu(y) if upper else fw.tril(y)


def _gram(f, upper):
    return fw.matmul(mH(f), f) if upper else fw.matmul(f, mH(f))


@composite("cholesky_inverse")
def _cholesky_inverse_fn(x, upper=False):
    return fw.linalg.inv(_gram(_factor(x, upper), upper))


@composite("cholesky_solve")
def _cholesky_solve_fn(x, y, upper=False):
    return fw.linalg.solve(_gram(_factor(y, upper), upper), x)


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


@composite("lu_solve")
def _lu_solve_fn(b, lu, pivots, trans="N"):
    p, low, up = fw.linalg.lu_unpack(lu, pivots)
    a = fw.matmul(fw.matmul(p, low), up)
    if trans == "T":
        a = mT(a)
    elif trans == "C":
        a = mH(a)
    return fw.linalg.solve(a, b)


def _copyltu(m):
    """tril(M, -1) + tril(M, -1)^H + Re(diag(M)): the Hermitian matrix built from
    M's lower triangle."""
    low = fw.tril(m, -1)
    d = _diagonal(m)
    d = fw.real(d).astype(m.dtype) if m.dtype.is_complex else d
    return low + mH(low) + _diag(d)


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
    inner = inner + _diag(gw.astype(v.dtype))
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
    d = fw.real(_diagonal(vhgv)).astype(v.dtype)
    corr = vhgv - fw.matmul(vh, v) * fw.unsqueeze(d, -2)
    inner = corr * fw.conj(_inv_gaps(w)) + _diag(gw)
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
    inner = fw.matmul(ju, _diag(sc)) + fw.matmul(_diag(sc), jv) + _diag(gs.astype(u.dtype))
    if u.dtype.is_complex:
        # the phase of each singular pair (fixed by LAPACK's convention): i Im(U^H gU)_ii / s_i
        inner = inner + _diag(fw.imag(_diagonal(uhgu)) * 1j / s)
    ga = fw.matmul(fw.matmul(u, inner), vh)
    sinv = (1.0 / s).astype(u.dtype)
    if m > k:
        proj = gu - fw.matmul(u, uhgu)
        ga = ga + fw.matmul(proj * fw.unsqueeze(sinv, -2), vh)
    if n > k:
        proj = gv - fw.matmul(v, vhgv)
        ga = ga + fw.matmul(u * fw.unsqueeze(sinv, -2), mH(proj))
    return ga


@vjp("matrix_exp", outputs=False)
def _matrix_exp(ctx, g):
    # the adjoint of the Frechet derivative: exp([[A^H, G], [0, A^H]]) top-right block
    a = ctx.inputs[0]
    n = a.shape[-1]
    ah = mH(a)
    z = zeros_like(ah)
    top = fw.concat([ah, g], axis=-1)
    bot = fw.concat([z, ah], axis=-1)
    big = fw.linalg.matrix_exp(fw.concat([top, bot], axis=-2))
    return big[..., :n, n:]


@composite("matrix_power")
def _matrix_power_fn(x, n=1):
    if n < 0:
        x = fw.linalg.inv(x)
        n = -n
    if n == 0:
        return fw.broadcast_to(_eye(x.shape[-1], x), x.shape) + 0 * x
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else fw.matmul(result, base)
        n >>= 1
        if n:
            base = fw.matmul(base, base)
    return result


# ---------------------------------------------------------------- norms


@vjp("vector_norm", outputs=True)
def _vector_norm(ctx, g):
    x = ctx.inputs[0]
    p = ctx.attrs["p"]
    axis = ctx.attrs["axis"]
    keep = ctx.attrs["keepdim"]
    out = ctx.outputs[0]
    nd = x.ndim
    axes = norm_axes(axis, nd)
    if not keep and axes and nd:
        out = reshape_to(out, keepdim_shape(x.shape, axes))
        g = reshape_to(g, keepdim_shape(x.shape, axes))
    ax = fw.abs(x)
    sgn = fw.sgn(x) if x.dtype.is_complex else fw.sign(x)
    if p == 0:
        return zeros_like(x)
    if p == 1:
        return g * sgn
    if math.isinf(p):
        hit = (ax == out).astype(ax.dtype)
        cnt = fw.sum(hit, axis=axes or None, keepdim=True)
        return g * sgn * hit / cnt
    if p == 2:
        safe = fw.where(out == 0, fw.ones_like(out), out)
        return fw.where(out == 0, zeros_like(x), g * x / safe.astype(x.dtype))
    safe = fw.where(out == 0, fw.ones_like(out), out)
    d = sgn * (ax / safe) ** (p - 1)
    return fw.where(out == 0, zeros_like(x), g * d)


@composite("matrix_norm")
def _matrix_norm_fn(x, p="fro", axis=(-2, -1), keepdim=False):
    nd = x.ndim
    a0, a1 = axis[0] % nd, axis[1] % nd
    m = fw.moveaxis(x, [a0, a1], [-2, -1])
    if p == "fro":
        r = fw.linalg.vector_norm(m, 2.0, axis=[-2, -1])
    elif p in ("nuc", 2.0, -2.0):
        s = fw.linalg.svd(m, full_matrices=False)[1]
        r = fw.sum(s, axis=-1) if p == "nuc" else (
            fw.amax(s, axis=-1) if p == 2.0 else fw.amin(s, axis=-1))
    else:
        sums = fw.sum(fw.abs(m), axis=-2 if p in (1.0, -1.0) else -1)
        r = fw.amax(sums, axis=-1) if p > 0 else fw.amin(sums, axis=-1)
    if keepdim:
        r = reshape_to(r, keepdim_shape(x.shape, sorted((a0, a1))))
    return r


@composite("cdist")
def _cdist_fn(x, y, p=2.0, compute_mode=None):
    diff = fw.unsqueeze(x, -2) - fw.unsqueeze(y, -3)
    return fw.linalg.vector_norm(diff, p, axis=-1)


# ---------------------------------------------------------------- statistics


def _cov_matrix(x, fweights, aweights, rowvar, ddof):
    a = x if x.ndim == 2 else reshape_to(x, [1, -1])
    if not rowvar and a.shape[0] != 1:  # (NumPy: a single row is one variable anyway)
        a = mT(a)
    n = a.shape[1]
    w = None
    if fweights is not None:
        w = fweights.astype(fw.real(a).dtype if a.dtype.is_complex else a.dtype)
    aw = None
    if aweights is not None:
        aw = aweights.astype(fw.real(a).dtype if a.dtype.is_complex else a.dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = fw.mean(a, axis=1)
        fact = max(n - ddof, 0)
        xc = a - fw.unsqueeze(avg, 1)
        return fw.matmul(xc, mH(xc)) / fact
    wsum = fw.sum(w)
    avg = fw.sum(a * w, axis=1) / wsum
    if ddof == 0:
        fact = wsum
    elif aw is None:
        fact = wsum - ddof
    else:
        fact = wsum - ddof * fw.sum(w * aw) / wsum
    fact = fw.maximum(fact, 0.0)
    xc = a - fw.unsqueeze(avg, 1)
    return fw.matmul(xc * w, mH(xc)) / fact


@composite("cov")
def _cov_fn(x, fweights=None, aweights=None, rowvar=True, ddof=1):
    c = _cov_matrix(x, fweights, aweights, rowvar, int(ddof))
    return fw.squeeze(c)


@composite("corrcoef")
def _corrcoef_fn(x, rowvar=True):
    c = _cov_matrix(x, None, None, rowvar, 1)
    std = fw.sqrt(fw.real(_diagonal(c)))
    if c.dtype.is_complex:
        std = std.astype(c.dtype)
    c = c / fw.unsqueeze(std, 1) / fw.unsqueeze(std, 0)
    return fw.squeeze(c)


# ---------------------------------------------------------------- householder


def _reflectors(x, k):
    """The Householder vectors v_i (unit i-th entry, zeros above) of x's columns."""
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
    q = fw.broadcast_to(_eye(m, x), list(x.shape[:-2]) + [m, m])
    for i, v in reversed(list(enumerate(_reflectors(x, k)))):
        q = _apply_reflector(q, v, tau[..., i])
    return q[..., :, :n]


@composite("ormqr")
def _ormqr_fn(x, tau, y, left=True, transpose=False):
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


@composite("lstsq")
def _lstsq_fn(x, y, rcond=None, driver=None):
    sol = fw.matmul(fw.linalg.pinv(x), y)
    m, n = x.shape[-2], x.shape[-1]
    resid = fw.sum(fw.abs(fw.matmul(x, sol) - y) ** 2, axis=-2) if m > n else None
    sv = fw.linalg.svd(x, full_matrices=False)[1] if driver in ("gelsd", "gelss") else None
    return sol, resid, None, sv

