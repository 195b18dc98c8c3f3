"""Records for linear algebra ops: products, determinants, matrix functions,
norms, distances and covariances (decompositions: `decomp`, solves: `solve`)."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, INTS, Sample, arrays, broadcast_pair, record, shapes
from fw.core.testing.records._matrices import (
    BAD_INT,
    BAD_RANK,
    BAD_SQUARE,
    COMPLEX,
    F32,
    INEXACT,
    _batch,
    _general,
    _hermitian,
    _unary_square,
    _well_conditioned,
)


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
record("det", _unary_square(lambda draw, d, b, n: _general(draw, d, b, n, n)), dtypes=INEXACT,
       grad_order=2, errors=[BAD_SQUARE, BAD_INT])
record("slogdet", _unary_square(_well_conditioned), dtypes=INEXACT, grad_order=1,
       errors=[BAD_SQUARE])


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
