"""VJP rules of linear algebra ops: products, determinants, matrix functions,
norms, distances and covariances.

Complex inputs follow the conjugate convention: for ``out = x @ y`` the
gradients are ``g @ y^H`` and ``x^H @ g`` (``A^H`` = conjugate transpose).
Decompositions are in `decomp`, inverses and solves in `solve`.

Ops that are compositions of others (matrix_power, norms, cov, cdist) are
differentiated through a re-expression (`_util.composite`).
"""

from __future__ import annotations

import math

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import (
    composite,
    conj,
    diagonal,
    eye_like,
    keepdim_shape,
    mH,
    mT,
    norm_axes,
    reshape_to,
    static_shape,
    zeros_like,
)
from fw.core.errors import UnsupportedError

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
    # broadcast against each other at run time (a static broadcast_shape of dynamic
    # dims would keep a size-1 dim of one at the other's size)
    xb, yb = fw.broadcast_tensors([x, y])
    return (conj(ge) * yb if ctx.needs(0) else None,
            ge * xb if ctx.needs(1) else None)


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
            # to the operand's shape (at run time on IR: a static -1 would keep size 1)
            r = fw.broadcast_to(r, list(x.shape)) if static_shape(x.shape) else \
                fw.expand_as(r, x)
        grads.append(r)
    return [grads]


def _einsum_diagonal_grad(g, out, subs, ops, k):
    """The gradient of an operand whose subscripts repeat letters ('ii', 'bjj'): it
    lives on the diagonals those letters name. Computed for the subscripts with each
    letter once, then embedded on the diagonals (zeros elsewhere)."""
    s = subs[k]
    x = ops[k]
    if not static_shape(x.shape):
        raise UnsupportedError(f"einsum: the gradient of operand '{s}' (a repeated subscript) "
                               f"needs its static shape, got {list(x.shape)}")
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


# ---------------------------------------------------------------- determinants


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
    if n < 0:  # a dynamic size (IR): the top-right quarter by halving
        return fw.chunk(fw.chunk(big, 2, axis=-2)[0], 2, axis=-1)[1]
    return big[..., :n, n:]


@composite("matrix_power")
def _matrix_power_fn(x, n):
    if n < 0:
        x = fw.linalg.inv(x)
        n = -n
    if n == 0:
        return fw.broadcast_to(eye_like(x.shape[-1], x), x.shape) + 0 * x
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
def _matrix_norm_fn(x, p, axis, keepdim):
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
def _cdist_fn(x, y, p, compute_mode):
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
def _cov_fn(x, fweights, aweights, rowvar, ddof):
    c = _cov_matrix(x, fweights, aweights, rowvar, int(ddof))
    return fw.squeeze(c)


@composite("corrcoef")
def _corrcoef_fn(x, rowvar):
    c = _cov_matrix(x, None, None, rowvar, 1)
    std = fw.sqrt(fw.real(diagonal(c)))
    if c.dtype.is_complex:
        std = std.astype(c.dtype)
    c = c / fw.unsqueeze(std, 1) / fw.unsqueeze(std, 0)
    return fw.squeeze(c)
