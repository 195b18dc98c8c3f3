"""Records for matrix decompositions.

They draw well-conditioned inputs (symmetric positive-definite, or Hermitian
with separated eigenvalues, see `_matrices`) so that finite-difference
gradient checks are meaningful; batches include empty ones.
"""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import Sample, arrays, record
from fw.core.testing.records._matrices import (
    BAD_INT,
    BAD_RANK,
    BAD_SQUARE,
    F32,
    INEXACT,
    _batch,
    _distinct_singular,
    _general,
    _hermitian,
    _spd,
    _unary_square,
    _well_conditioned,
)


def _cholesky(draw, dtype):
    n = draw(st.integers(1, 4))
    return Sample([_spd(draw, dtype, _batch(draw), n)], {"upper": draw(st.booleans())})


record("cholesky", _cholesky, dtypes=INEXACT, grad_order=2,
       errors=[BAD_SQUARE, ([-np.eye(2, dtype=F32)], {}, InvalidArgumentError,
                            "not positive-definite")])


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


def _householder(draw, dtype):
    n = draw(st.integers(1, 3))
    m = n + draw(st.integers(0, 2))
    b = _batch(draw)
    x = _general(draw, dtype, b, m, n)
    tau = arrays(draw, dtype, b + (draw(st.integers(0, n)),), 0.0, 2.0)
    return Sample([x, tau])


record("householder_product", _householder, dtypes=INEXACT, grad_order=1,
       errors=[([np.ones((2, 3), F32), np.ones((2,), F32)], {}, InvalidArgumentError,
                "at least as many rows"),
               ([np.ones((2, 4, 3), F32), np.ones((3, 2), F32)], {}, InvalidArgumentError,
                r"'tau batch' with shape \[3\] cannot broadcast with 'x batch'")])


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
