"""SPMD rules of linear algebra: batched matrix ops shard their batch dims (the
matrix dims are whole); einsum shards any label (a contracted one gives
Partial); covariance-like ops are replicate-only."""

from __future__ import annotations

from fw.distributed.auto_parallel.spmd_rules._base import (
    SUM,
    label_plan,
    register,
    replicate_only,
)


def batched(core_in, core_out):
    """A rule for ops on stacks of matrices: input i has ``core_in[i]`` trailing
    core dims (whole), output k ``core_out[k]`` (a callable of ctx for either);
    the leading batch dims broadcast right-aligned and stay sharded."""
    def rule(ctx):
        if ctx.out_shapes is None:
            return None
        cin = core_in(ctx) if callable(core_in) else core_in
        cout = core_out(ctx) if callable(core_out) else core_out
        bshapes = []
        for s, c in zip(ctx.specs, cin):
            if s is not None:
                bshapes.append(s.shape[:max(s.ndim - c, 0)])
        nb = max((len(b) for b in bshapes), default=0)
        full = [1] * nb
        for b in bshapes:
            for j, v in enumerate(b):
                k = j + nb - len(b)
                full[k] = max(full[k], v)
        ins = []
        for s, c in zip(ctx.specs, cin):
            if s is None:
                ins.append(None)
                continue
            nbi = max(s.ndim - c, 0)
            lab = [f"b{j + nb - nbi}" if s.shape[j] == full[j + nb - nbi] else None
                   for j in range(nbi)]
            ins.append(lab + [None] * (s.ndim - nbi))
        outs = []
        for shp, c in zip(ctx.out_shapes, cout):
            nbo = len(shp) - c
            if nbo < 0 or nbo > nb:
                return None
            outs.append([f"b{j + nb - nbo}" for j in range(nbo)] + [None] * c)
        return label_plan(ctx, ins, outs)
    rule.__doc__ = "Batched matrix op: batch dims sharded, matrix dims whole."
    return rule


register("det", "matrix_rank")(batched([2], [0]))
register("matrix_power", "matrix_exp", "inv", "pinv", "cholesky", "cholesky_inverse",
         "tril", "triu")(batched([2], [2]))
register("lu")(batched([2], [2, 1, 0]))
register("lu_unpack")(batched([2, 1], [2, 2, 2]))
register("qr")(batched([2], [2, 2]))
register("svd")(batched([2], [2, 1, 2]))
register("eig", "eigh")(batched([2], [1, 2]))
register("householder_product")(batched([2, 1], [2]))
register("ormqr")(batched([2, 1, 2], [2]))
register("triangular_solve", "cholesky_solve")(batched([2, 2], [2]))
register("lu_solve")(batched([2, 2, 1], [2]))


@register("diag_embed")
def diag_embed(ctx):
    """[..., n] -> [..., n, n] (the diagonal in the last two dims): leading dims
    sharded; other diagonal positions make every dim whole."""
    if ctx.out_shapes is None:
        return None
    on = len(ctx.out_shapes[0])
    d1 = int(ctx.attrs.get("dim1", -2)) % on
    d2 = int(ctx.attrs.get("dim2", -1)) % on
    if sorted((d1, d2)) != [on - 2, on - 1]:
        return label_plan(ctx, [None], [[None] * on])
    return batched([1], [2])(ctx)


def _solve_in(ctx):
    return [2, 2 if ctx.specs[1].ndim >= 2 and ctx.specs[1].ndim == ctx.specs[0].ndim else 1]


def _solve_out(ctx):
    return [2 if ctx.specs[1].ndim >= 2 and ctx.specs[1].ndim == ctx.specs[0].ndim else 1]


register("solve")(batched(_solve_in, _solve_out))


@register("slogdet")
def slogdet(ctx):
    """(sign, log|det|) stacked in front of the batch dims: batch dims sharded."""
    sx = ctx.specs[0]
    nb = sx.ndim - 2
    lab = [f"b{j}" for j in range(nb)]
    if ctx.out_shapes is None or len(ctx.out_shapes[0]) != nb + 1:
        return None
    return label_plan(ctx, [lab + [None, None]], [[None] + lab])


@register("cdist")
def cdist(ctx):
    """x [..., P, M], y [..., R, M] -> [..., P, R]: batch, P and R dims sharded; M
    whole (a p-norm is not linear in it)."""
    sx, sy = ctx.specs
    if ctx.out_shapes is None or sx.ndim != sy.ndim:
        return None
    nb = sx.ndim - 2
    b = [f"b{j}" if sx.shape[j] == sy.shape[j] else None for j in range(nb)]
    return label_plan(ctx, [b + ["p", None], b + ["r", None]],
                      [[f"b{j}" for j in range(nb)] + ["p", "r"]])


@register("cross")
def cross(ctx):
    """The 3-vector dim whole; the other (broadcast) dims sharded alike."""
    sx, sy = ctx.specs
    if ctx.out_shapes is None:
        return None
    on = len(ctx.out_shapes[0])
    ax = ctx.attrs.get("axis", 9)
    if ax == 9 or ax is None:
        ax = next((d for d in range(on) if ctx.out_shapes[0][d] == 3), None)
        if ax is None:
            return None
    ax = int(ax) % on
    ins = []
    for s in (sx, sy):
        lab = [None if d + on - s.ndim == ax else f"d{d + on - s.ndim}" for d in range(s.ndim)]
        ins.append(lab)
    for lab, s in zip(ins, (sx, sy)):
        for d, x in enumerate(lab):
            if x is not None and s.shape[d] != ctx.out_shapes[0][d + on - s.ndim]:
                lab[d] = None
    out = [None if d == ax else f"d{d}" for d in range(on)]
    return label_plan(ctx, ins, [out])


def _einsum_parse(eq, n):
    eq = eq.replace(" ", "")
    if "." in eq:
        return None
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs = eq
        cnt = {}
        for c in lhs.replace(",", ""):
            cnt[c] = cnt.get(c, 0) + 1
        rhs = "".join(sorted(c for c, k in cnt.items() if k == 1))
    terms = lhs.split(",")
    if len(terms) != n:
        return None
    return terms, rhs


@register("einsum")
def einsum(ctx):
    """Every subscript is a label: a free one stays sharded in the operands that
    carry it, a contracted one (absent from the output) gives Partial(sum) — the
    op is linear in each operand."""
    (specs,) = ctx.specs
    parsed = _einsum_parse(str(ctx.attrs.get("equation", "")), len(specs))
    if parsed is None or any(s is None for s in specs):
        return None
    terms, rhs = parsed
    ins = []
    for t, s in zip(terms, specs):
        if len(t) != s.ndim:
            return None
        ins.append(list(t))
    sizes = {}
    for t, s in zip(terms, specs):
        for c, n in zip(t, s.shape):
            sizes.setdefault(c, set()).add(n)
    for lab, s in zip(ins, specs):           # broadcast (size-1) operand dims are whole
        for d, c in enumerate(lab):
            if len(sizes[c]) > 1 and s.shape[d] == 1:
                lab[d] = None
    for lab in ins:                          # a repeated subscript (a diagonal) is whole
        for c in set(lab):
            if c is not None and lab.count(c) > 1:
                for d, x in enumerate(lab):
                    if x == c:
                        lab[d] = None
    return label_plan(ctx, [ins], [list(rhs)], contract=SUM)


replicate_only("every entry of the covariance/correlation matrix needs all observations of "
               "two variables, centred by their global means: no block of the input gives a "
               "block (or a linear part) of the output", "cov", "corrcoef")
replicate_only("least squares returns rank/residual outputs whose shapes depend on the "
               "driver and the data (residuals are empty for rank-deficient systems)", "lstsq")
