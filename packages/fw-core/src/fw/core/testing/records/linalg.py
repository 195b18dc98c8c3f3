"""Records for linear algebra ops.

Decompositions and solves draw well-conditioned inputs (diagonally dominant,
symmetric positive-definite, or Hermitian with separated eigenvalues) so that
finite-difference gradient checks are meaningful; batches include empty ones.
"""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, INTS, Sample, arrays, broadcast_pair, record, shapes

COMPLEX = (_dt.complex64, _dt.complex128)
INEXACT = FLOATS + COMPLEX
F32 = np.float32


def _matmul(draw, dtype):
    m, k, n = (draw(st.integers(1, 6)) for _ in range(3))
    batch = draw(st.sampled_from([(), (2,), (3, 1)]))
    tx, ty = draw(st.booleans()), draw(st.booleans())
    xs = batch + ((k, m) if tx else (m, k))
    yb = draw(st.sampled_from([(), batch]))
    ys = yb + ((n, k) if ty else (k, n))
    if draw(st.integers(0, 5)) == 0:  # vector operands
        xs, tx = (k,), False
    return Sample([arrays(draw, dtype, xs), arrays(draw, dtype, ys)],
                  {"transpose_x": tx, "transpose_y": ty})


record("matmul", _matmul, dtypes=FLOATS + FLOATS_LOW, grad_order=2,
       errors=[([np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)], {},
                InvalidArgumentError, "contracted dimensions differ")])


# ---------------------------------------------------------------- input helpers
def _batch(draw, empty=True):
    opts = [(), (2,), (1, 2)] + ([(0,)] if empty else [])
    return draw(st.sampled_from(opts))


def _general(draw, dtype, batch, m, n):
    return arrays(draw, dtype, batch + (m, n), -1.0, 1.0)


def _well_conditioned(draw, dtype, batch, n):
    """A diagonally dominant (so invertible, well-conditioned) matrix stack."""
    a = _general(draw, dtype, batch, n, n)
    return (a + (n + 1) * np.eye(n)).astype(a.dtype)


def _spd(draw, dtype, batch, n):
    """Hermitian positive-definite with eigenvalues >= n."""
    a = _general(draw, dtype, batch, n, n)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(a.dtype)


def _hermitian(draw, dtype, batch, n):
    """Hermitian with well separated eigenvalues (eigenvector gradients exist)."""
    a = _general(draw, dtype, batch, n, n) * 0.2
    h = (a + np.conj(np.swapaxes(a, -1, -2))) / 2 + np.diag(np.arange(n) * 2.0)
    return h.astype(a.dtype)


def _distinct_singular(draw, dtype, batch, m, n):
    """A matrix with well separated singular values: U diag(s) V^T + noise."""
    k = min(m, n)
    a = _general(draw, dtype, batch, m, n) * 0.05
    d = np.zeros((m, n))
    d[np.arange(k), np.arange(k)] = np.arange(k, 0, -1) * 2.0
    return (a + d).astype(a.dtype)


BAD_SQUARE = ([np.ones((2, 3), F32)], {}, InvalidArgumentError, "square")
BAD_INT = ([np.ones((2, 2), np.int64)], {}, InvalidTypeError, "floating")
BAD_RANK = ([np.ones((3,), F32)], {}, InvalidArgumentError, "at least 2 dimensions")


def _unary_square(make, empty=True, **attrs):
    def sample(draw, dtype):
        n = draw(st.integers(1, 4))
        return Sample([make(draw, dtype, _batch(draw, empty), n)], dict(attrs))
    return sample


# ---------------------------------------------------------------- products
_EINSUM = [
    ("ij,jk->ik", "ab,bc"), ("i,i->", "a,a"), ("ii->i", "aa"), ("ij->ji", "ab"),
    ("...ij,...jk->...ik", "Eab,Ebc"), ("bij,bjk->bik", "zab,zbc"), ("i,j->ij", "a,b"),
    ("ijk", "abc"), ("ij,ij->ij", "ab,ab"), ("ij,jk,kl->il", "ab,bc,cd"), ("ba", "ba"),
    ("ii", "aa"), ("ij,j", "ab,b"),
]


def _einsum(draw, dtype):
    eq, spec = draw(st.sampled_from(_EINSUM))
    size = {c: draw(st.integers(0 if c == "a" else 1, 4)) for c in "abcdz"}
    ell = draw(st.sampled_from([(), (2,), (3, 1)]))
    ops = []
    for term in spec.split(","):
        shape = []
        for c in term:
            shape.extend(ell if c == "E" else (size[c],))
        ops.append(arrays(draw, dtype, tuple(shape)))
    return Sample([ops], {"equation": eq})


record("einsum", _einsum, dtypes=FLOATS + INTS + COMPLEX, grad_order=2,
       # the variadic operands are given as a tuple (the error test stacks lists)
       errors=[([(np.ones((2, 3), F32), np.ones((4, 5), F32))], {"equation": "ij,jk->ik"},
                InvalidArgumentError, "label 'j'"),
               ([(np.ones((2, 3), F32),)], {"equation": "ij,jk"}, InvalidArgumentError,
                "2 operand term"),
               ([(np.ones((2, 3), F32),)], {"equation": "ij->k"}, InvalidArgumentError,
                "does not appear"),
               ([(np.ones((2, 3), F32),)], {"equation": "i$"}, InvalidArgumentError,
                "invalid character")])


def _vecdot(draw, dtype):
    sx, sy = broadcast_pair(draw, max_dims=3, min_side=1)
    if not sx and not sy:
        sx = (3,)
    nd = max(len(sx), len(sy))
    axis = draw(st.integers(-nd, nd - 1))
    return Sample([arrays(draw, dtype, sx), arrays(draw, dtype, sy)], {"axis": axis})


record("vecdot", _vecdot, dtypes=FLOATS + INTS + COMPLEX, grad_order=2,
       errors=[([np.ones((2, 3), F32), np.ones((4, 3), F32)], {}, InvalidArgumentError,
                "cannot broadcast")])


def _cross(draw, dtype):
    nd = draw(st.integers(1, 3))
    shape = [draw(st.integers(0, 4)) for _ in range(nd)]
    ax = draw(st.integers(0, nd - 1))
    shape[ax] = 3
    axis = draw(st.sampled_from([ax, ax - nd, 9]))
    shape = tuple(shape)
    return Sample([arrays(draw, dtype, shape), arrays(draw, dtype, shape)], {"axis": axis})


record("cross", _cross, dtypes=FLOATS + INTS, grad_order=2,
       errors=[([np.ones((2, 2), F32), np.ones((2, 2), F32)], {}, InvalidArgumentError,
                "size 3"),
               ([np.ones((3, 2), F32), np.ones((3, 2), F32)], {"axis": 1},
                InvalidArgumentError, "needs size 3")])


# ---------------------------------------------------------------- inverses and solves
record("inv", _unary_square(_well_conditioned), dtypes=INEXACT, grad_order=2,
       errors=[BAD_SQUARE, BAD_INT,
               ([np.zeros((2, 2), F32)], {}, InvalidArgumentError, "singular")])


def _pinv(draw, dtype):
    herm = draw(st.booleans())
    b = _batch(draw)
    if herm:
        n = draw(st.integers(1, 4))
        return Sample([_hermitian(draw, dtype, b, n)], {"rcond": 1e-15, "hermitian": True})
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return Sample([_distinct_singular(draw, dtype, b, m, n)],
                  {"rcond": draw(st.sampled_from([1e-15, 0.3])), "hermitian": False})


record("pinv", _pinv, dtypes=INEXACT, grad_order=1, errors=[BAD_INT, BAD_RANK])
record("det", _unary_square(lambda draw, d, b, n: _general(draw, d, b, n, n)), dtypes=INEXACT,
       grad_order=2, errors=[BAD_SQUARE, BAD_INT])
record("slogdet", _unary_square(_well_conditioned), dtypes=INEXACT, grad_order=1,
       errors=[BAD_SQUARE])


def _solve(draw, dtype):
    n = draw(st.integers(1, 4))
    b = _batch(draw)
    a = _well_conditioned(draw, dtype, b, n)
    left = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        y = arrays(draw, dtype, (n,))
    else:
        k = draw(st.integers(1, 3))
        yb = draw(st.sampled_from([b, ()]))
        y = arrays(draw, dtype, yb + ((n, k) if left else (k, n)))
    return Sample([a, y], {"left": left})


record("solve", _solve, dtypes=INEXACT, grad_order=2,
       errors=[([np.eye(3, dtype=F32), np.ones((2, 1), F32)], {}, InvalidArgumentError,
                "needs y with 3 rows"),
               ([np.zeros((2, 2), F32), np.ones((2, 1), F32)], {}, InvalidArgumentError,
                "singular")])


def _trisolve(draw, dtype):
    n = draw(st.integers(1, 4))
    b = _batch(draw)
    a = _well_conditioned(draw, dtype, b, n)
    y = arrays(draw, dtype, draw(st.sampled_from([b, ()])) + (n, draw(st.integers(1, 3))))
    return Sample([a, y], {"upper": draw(st.booleans()), "transpose": draw(st.booleans()),
                           "unitriangular": draw(st.booleans())})


record("triangular_solve", _trisolve, dtypes=INEXACT, grad_order=2,
       errors=[([np.eye(3, dtype=F32), np.ones((2, 1), F32)], {}, InvalidArgumentError,
                "needs y with 3 rows")])


def _cholesky(draw, dtype):
    n = draw(st.integers(1, 4))
    return Sample([_spd(draw, dtype, _batch(draw), n)], {"upper": draw(st.booleans())})


record("cholesky", _cholesky, dtypes=INEXACT, grad_order=2,
       errors=[BAD_SQUARE, ([-np.eye(2, dtype=F32)], {}, InvalidArgumentError,
                            "not positive-definite")])


def _chol_factor(draw, dtype, b, n, upper):
    a = _spd(draw, dtype, b, n)
    low = np.linalg.cholesky(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    f = np.conj(np.swapaxes(low, -1, -2)) if upper else low
    return f.astype(a.dtype)


def _cholsolve(draw, dtype):
    n = draw(st.integers(1, 4))
    b = _batch(draw)
    upper = draw(st.booleans())
    rhs = arrays(draw, dtype, b + (n, draw(st.integers(1, 3))))
    return Sample([rhs, _chol_factor(draw, dtype, b, n, upper)], {"upper": upper})


record("cholesky_solve", _cholsolve, dtypes=INEXACT, grad_order=2,
       errors=[([np.ones((2, 1), F32), np.eye(3, dtype=F32)], {}, InvalidArgumentError,
                "needs x with 3 rows")])


def _cholinv(draw, dtype):
    n = draw(st.integers(1, 4))
    upper = draw(st.booleans())
    return Sample([_chol_factor(draw, dtype, _batch(draw), n, upper)], {"upper": upper})


record("cholesky_inverse", _cholinv, dtypes=INEXACT, grad_order=2, errors=[BAD_SQUARE])


def _lu(draw, dtype):
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    b = _batch(draw)
    a = _general(draw, dtype, b, m, n)
    if m == n:
        a = _well_conditioned(draw, dtype, b, n)
    return Sample([a], {"pivot": draw(st.booleans()) if m == n else True})


record("lu", _lu, dtypes=INEXACT, grad_order=1, errors=[BAD_INT, BAD_RANK])


def _lu_parts(draw, dtype, b, m, n):
    from fw.core.ops._linalg_np import lu_factor

    a = _general(draw, dtype, b, m, n)
    lu, piv, _ = lu_factor(a)
    return lu, piv


def _lu_unpack(draw, dtype):
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    lu, piv = _lu_parts(draw, dtype, _batch(draw), m, n)
    return Sample([lu, piv], {"unpack_ludata": draw(st.booleans()),
                              "unpack_pivots": draw(st.booleans())}, grad_args=(0,))


record("lu_unpack", _lu_unpack, dtypes=INEXACT, grad_order=1,
       errors=[([np.eye(2, dtype=F32), np.array([1.0, 2.0], F32)], {}, InvalidTypeError,
                "integer"),
               ([np.eye(2, dtype=F32), np.array([5, 1], np.int32)], {}, InvalidArgumentError,
                "pivots must lie")])


def _lu_solve(draw, dtype):
    from fw.core.ops._linalg_np import lu_factor

    n = draw(st.integers(1, 4))
    b = _batch(draw)
    lu, piv, _ = lu_factor(_well_conditioned(draw, dtype, b, n))
    rhs = arrays(draw, dtype, b + (n, draw(st.integers(1, 3))))
    return Sample([rhs, lu, piv], {"trans": draw(st.sampled_from(["N", "T", "C"]))},
                  grad_args=(0, 1))


record("lu_solve", _lu_solve, dtypes=INEXACT, grad_order=1,
       errors=[([np.ones((2, 1), F32), np.eye(2, dtype=F32), np.array([1, 2], np.int32)],
                {"trans": "X"}, InvalidArgumentError, "'trans' must be"),
               ([np.ones((3, 1), F32), np.eye(2, dtype=F32), np.array([1, 2], np.int32)],
                {}, InvalidArgumentError, "needs b with 2 rows")])


def _matpow(draw, dtype):
    n = draw(st.integers(1, 4))
    a = _well_conditioned(draw, dtype, _batch(draw), n) / (n + 1)
    return Sample([a.astype(dtype.np)], {"n": draw(st.integers(-3, 4))})


record("matrix_power", _matpow, dtypes=INEXACT, grad_order=2,
       errors=[BAD_SQUARE, ([np.zeros((2, 2), F32)], {"n": -1}, InvalidArgumentError,
                            "singular"),
               ([np.eye(2, dtype=F32)], {"n": 1.5}, InvalidTypeError, "'n' must be an int")])


def _expm(draw, dtype):
    n = draw(st.integers(1, 4))
    scale = draw(st.sampled_from([0.5, 3.0]))
    return Sample([(_general(draw, dtype, _batch(draw), n, n) * scale).astype(dtype.np)])


record("matrix_exp", _expm, dtypes=INEXACT, grad_order=1, errors=[BAD_SQUARE, BAD_INT])


# ---------------------------------------------------------------- decompositions
def _rect(fn):
    def sample(draw, dtype):
        m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        return fn(draw, dtype, _batch(draw), m, n)
    return sample


record("qr", _rect(lambda draw, d, b, m, n: Sample(
    [_distinct_singular(draw, d, b, m, n)],
    {"mode": draw(st.sampled_from(["reduced", "complete"])) if m <= n else "reduced"})),
    dtypes=INEXACT, grad_order=1,
    errors=[BAD_RANK, ([np.eye(2, dtype=F32)], {"mode": "full"}, InvalidArgumentError,
                       "'mode' must be")])
record("svd", _rect(lambda draw, d, b, m, n: Sample(
    [_distinct_singular(draw, d, b, m, n)], {"full_matrices": draw(st.booleans())})),
    dtypes=INEXACT, grad_order=1, errors=[BAD_RANK, BAD_INT])
record("eig", _unary_square(_hermitian), dtypes=INEXACT, grad_order=1,
       errors=[BAD_SQUARE, BAD_INT])


def _eigh(draw, dtype):
    n = draw(st.integers(1, 4))
    return Sample([_hermitian(draw, dtype, _batch(draw), n)],
                  {"UPLO": draw(st.sampled_from(["L", "U"]))})


record("eigh", _eigh, dtypes=INEXACT, grad_order=1,
       errors=[BAD_SQUARE, ([np.eye(2, dtype=F32)], {"UPLO": "X"}, InvalidArgumentError,
                            "'UPLO' must be")])


def _lstsq(draw, dtype):
    m, n = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    b = _batch(draw)
    x = _distinct_singular(draw, dtype, b, m, n)
    y = arrays(draw, dtype, b + (m, draw(st.integers(1, 3))))
    return Sample([x, y], {"rcond": None,
                           "driver": draw(st.sampled_from([None, "gels", "gelsd", "gelss"]))},
                  grad_args=(0, 1))


record("lstsq", _lstsq, dtypes=FLOATS, grad_order=1, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32), np.ones((4, 1), F32)], {}, InvalidArgumentError,
                "same number of rows"),
               ([np.ones((3, 2), F32), np.ones((3, 1), F32)], {"driver": "foo"},
                InvalidArgumentError, "'driver' must be")])


def _householder(draw, dtype):
    n = draw(st.integers(1, 3))
    m = n + draw(st.integers(0, 2))
    b = _batch(draw)
    x = _general(draw, dtype, b, m, n)
    tau = arrays(draw, dtype, b + (draw(st.integers(0, n)),), 0.0, 2.0)
    return Sample([x, tau])


record("householder_product", _householder, dtypes=INEXACT, grad_order=1,
       errors=[([np.ones((2, 3), F32), np.ones((2,), F32)], {}, InvalidArgumentError,
                "at least as many rows")])


def _ormqr(draw, dtype):
    mn = draw(st.integers(1, 4))
    k = draw(st.integers(1, mn))
    b = _batch(draw)
    left = draw(st.booleans())
    x = _general(draw, dtype, b, mn, k)
    tau = arrays(draw, dtype, b + (k,), 0.0, 2.0)
    other = draw(st.integers(1, 3))
    y = arrays(draw, dtype, b + ((mn, other) if left else (other, mn)))
    return Sample([x, tau, y], {"left": left, "transpose": draw(st.booleans())})


record("ormqr", _ormqr, dtypes=INEXACT, grad_order=1,
       errors=[([np.ones((3, 2), F32), np.ones((2,), F32), np.ones((4, 2), F32)], {},
                InvalidArgumentError, "cannot multiply")])


def _rank(draw, dtype):
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    herm = draw(st.booleans())
    b = _batch(draw)
    if herm:
        x = _hermitian(draw, dtype, b, n)
    else:
        # a product of thin factors has a known low rank
        r = draw(st.integers(1, min(m, n)))
        x = (_general(draw, dtype, b, m, r) @ _general(draw, dtype, b, r, n)).astype(dtype.np)
    attrs = draw(st.sampled_from([{}, {"tol": 0.5}, {"atol": 0.1}, {"rtol": 0.2},
                                  {"atol": 0.0, "rtol": None}]))
    full = {"tol": None, "hermitian": herm, "atol": None, "rtol": None}
    full.update(attrs)
    return Sample([x], full)


record("matrix_rank", _rank, dtypes=INEXACT, grad_order=0, errors=[BAD_RANK, BAD_INT])


# ---------------------------------------------------------------- norms and statistics
def _vnorm(draw, dtype):
    shape = shapes(draw, max_dims=3)
    nd = len(shape)
    axis = None if nd == 0 else draw(st.one_of(
        st.none(), st.integers(-nd, nd - 1),
        st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True)))
    p = draw(st.sampled_from([2.0, 1.0, 0.0, 3.0, 0.5, float("inf"), float("-inf"), -1.5]))
    return Sample([arrays(draw, dtype, shape, special=p in (1.0, 2.0))],
                  {"p": p, "axis": axis, "keepdim": draw(st.booleans())})


record("vector_norm", _vnorm, dtypes=INEXACT + (_dt.float16,), grad_order=1,
       errors=[([[1, 2]], {"p": 2.0}, InvalidTypeError, "floating"),
               ([[1.0, 2.0]], {"p": "fro"}, InvalidArgumentError, "'p' must be a number"),
               ([[1.0, 2.0]], {"axis": 3}, InvalidArgumentError, "out of range")])


def _mnorm(draw, dtype):
    nd = draw(st.integers(2, 4))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    a0, a1 = draw(st.lists(st.integers(-nd, nd - 1), min_size=2, max_size=2, unique_by=lambda
                           v: v % nd))
    p = draw(st.sampled_from(["fro", "nuc", 1.0, -1.0, 2.0, -2.0, float("inf"),
                              float("-inf")]))
    return Sample([arrays(draw, dtype, shape)], {"p": p, "axis": (a0, a1),
                                                 "keepdim": draw(st.booleans())})


record("matrix_norm", _mnorm, dtypes=INEXACT, grad_order=1,
       errors=[([np.ones((2, 2), F32)], {"p": 3}, InvalidArgumentError, "'p' must be one"),
               ([np.ones((2, 2), F32)], {"axis": (0, 0)}, InvalidArgumentError, "same axis"),
               ([np.ones((2,), F32)], {}, InvalidArgumentError, "at least 2 dimensions")])


def _trace(draw, dtype):
    nd = draw(st.integers(2, 4))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(nd))
    a1, a2 = draw(st.lists(st.integers(-nd, nd - 1), min_size=2, max_size=2,
                           unique_by=lambda v: v % nd))
    return Sample([arrays(draw, dtype, shape)], {"offset": draw(st.integers(-3, 3)),
                                                 "axis1": a1, "axis2": a2})


record("trace", _trace, dtypes=FLOATS + INTS + COMPLEX, grad_order=2,
       errors=[([np.ones((2,), F32)], {}, InvalidArgumentError, "at least 2 dimensions"),
               ([np.ones((2, 2), F32)], {"axis1": 1, "axis2": 1}, InvalidArgumentError,
                "must differ")])


def _cdist(draw, dtype):
    b = draw(st.sampled_from([(), (2,), (0,)]))
    mm = draw(st.integers(1, 3))
    rows = draw(st.sampled_from([2, 4, 30]))
    x = arrays(draw, dtype, b + (rows, mm))
    y = arrays(draw, dtype, draw(st.sampled_from([b, ()])) + (draw(st.integers(1, 4)), mm))
    mode = draw(st.sampled_from(["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                 "donot_use_mm_for_euclid_dist"]))
    return Sample([x, y], {"p": draw(st.sampled_from([2.0, 1.0, 0.0, 3.0, float("inf")])),
                           "compute_mode": mode})


record("cdist", _cdist, dtypes=FLOATS, grad_order=1,
       errors=[([np.ones((2, 3), F32), np.ones((2, 4), F32)], {}, InvalidArgumentError,
                "same last dimension"),
               ([np.ones((2, 3), F32), np.ones((2, 3), F32)], {"p": -1.0},
                InvalidArgumentError, "'p' must be >= 0")])


def _cov(draw, dtype):
    nd = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    rowvar = draw(st.booleans())
    x = arrays(draw, dtype, shape)
    nobs = shape[0] if nd == 1 else (shape[1] if rowvar or shape[0] == 1 else shape[0])
    fw_ = np.asarray(arrays(draw, _dt.int64, (nobs,), 1, 3)) if draw(st.booleans()) else None
    aw = arrays(draw, dtype, (nobs,), 0.1, 2.0) if draw(st.booleans()) else None
    return Sample([x, fw_, aw], {"rowvar": rowvar, "ddof": draw(st.sampled_from([True, False]))},
                  grad_args=(0,))


record("cov", _cov, dtypes=FLOATS, grad_order=1, dynamic_ok=False,
       errors=[([np.ones((2, 2, 2), F32)], {}, InvalidArgumentError, "1-D or 2-D"),
               ([np.ones((2, 3), F32), np.ones((3,), F32)], {}, InvalidTypeError,
                "'fweights' must be an integer")])


def _corrcoef(draw, dtype):
    nd = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(2, 4)) for _ in range(nd))
    return Sample([arrays(draw, dtype, shape)], {"rowvar": draw(st.booleans())})


record("corrcoef", _corrcoef, dtypes=FLOATS + COMPLEX, grad_order=1, dynamic_ok=False,
       errors=[([np.ones((2, 2, 2), F32)], {}, InvalidArgumentError, "1-D or 2-D")])
