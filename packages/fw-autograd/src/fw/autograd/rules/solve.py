"""VJP rules of matrix inverses and solves (inv, solve, triangular_solve, pinv,
cholesky_inverse/solve, lu_solve, lstsq).

Complex inputs follow the conjugate convention (``A^H`` = conjugate
transpose). Ops that are compositions of others (cholesky_inverse/solve,
lu_solve, lstsq) are differentiated through a re-expression
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
    mT,
)

# ---------------------------------------------------------------- inverses and solves


@vjp("inv", inputs=False, outputs=True)
def _inv(ctx, g):
    out = ctx.outputs[0]
    oh = mH(out)
    return -fw.matmul(fw.matmul(oh, g), oh)


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
            ga = ga - diag_embed(diagonal(ga))
    return ga, (gb if ctx.needs(1) else None)


@vjp("pinv", outputs=True)
def _pinv(ctx, g):
    # d(A+) for constant rank (Golub & Pereyra), transposed into a VJP
    a = ctx.inputs[0]
    p = ctx.outputs[0]
    ph = mH(p)
    gh = mH(g)
    m, n = a.shape[-2], a.shape[-1]
    i_m = eye_like(m, a)
    i_n = eye_like(n, a)
    t1 = -fw.matmul(fw.matmul(ph, g), ph)
    t2 = fw.matmul(fw.matmul(i_m - fw.matmul(a, p), gh), fw.matmul(p, ph))
    t3 = fw.matmul(fw.matmul(fw.matmul(ph, p), gh), i_n - fw.matmul(p, a))
    return t1 + t2 + t3


def _factor(y, upper):
    return fw.triu(y) if upper else fw.tril(y)


def _gram(f, upper):
    return fw.matmul(mH(f), f) if upper else fw.matmul(f, mH(f))


@composite("cholesky_inverse")
def _cholesky_inverse_fn(x, upper):
    return fw.linalg.inv(_gram(_factor(x, upper), upper))


@composite("cholesky_solve")
def _cholesky_solve_fn(x, y, upper):
    return fw.linalg.solve(_gram(_factor(y, upper), upper), x)


@composite("lu_solve")
def _lu_solve_fn(b, lu, pivots, trans):
    p, low, up = fw.linalg.lu_unpack(lu, pivots)
    a = fw.matmul(fw.matmul(p, low), up)
    if trans == "T":
        a = mT(a)
    elif trans == "C":
        a = mH(a)
    return fw.linalg.solve(a, b)


@composite("lstsq")
def _lstsq_fn(x, y, rcond, driver):
    sol = fw.matmul(fw.linalg.pinv(x), y)
    m, n = x.shape[-2], x.shape[-1]
    resid = fw.sum(fw.abs(fw.matmul(x, sol) - y) ** 2, axis=-2) if m > n else None
    sv = fw.linalg.svd(x, full_matrices=False)[1] if driver in ("gelsd", "gelss") else None
    return sol, resid, None, sv
