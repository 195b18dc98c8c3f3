"""Records for matrix inverses and solves.

They draw well-conditioned inputs (diagonally dominant or symmetric
positive-definite, see `_matrices`) so that finite-difference gradient checks
are meaningful; batches include empty ones.
"""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError
from fw.core.testing import FLOATS, Sample, arrays, record
from fw.core.testing.records._matrices import (
    BAD_INT,
    BAD_RANK,
    BAD_SQUARE,
    F32,
    INEXACT,
    _batch,
    _distinct_singular,
    _hermitian,
    _spd,
    _unary_square,
    _well_conditioned,
)

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
