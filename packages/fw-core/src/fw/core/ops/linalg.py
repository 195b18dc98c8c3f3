"""Linear algebra: products (matmul, einsum, …), solves and inverses,
decompositions, norms and statistics — Paddle's ``paddle.linalg`` plus the
top-level aliases Paddle has (``paddle.inverse``, ``paddle.norm``, …).

Design. Each op returns well-defined outputs so that fw-autograd needs one VJP
rule per op: one ``svd`` op (U, S, VH) with a ``full_matrices`` attribute, one
``eigh`` (values, vectors), one ``lu`` (LU, pivots, infos), and so on. Public
functions that are plain compositions (``mm``, ``dot``, ``tensordot``,
``svdvals``, ``norm``, ``cond``, …) are written with fw ops and add no op.

Public names are declared with dotted api names (``api="linalg.inv"``); the
``fw.linalg`` facade module collects the ``linalg.`` entries of
``fw.core.FUNCTIONS``, and top-level aliases are listed in ``aliases``.

Dtypes: decompositions, solves and norms take floating or complex tensors
(float16/bfloat16 are computed in float32 and cast back); integer input raises
InvalidTypeError as in Paddle. Complex input works wherever NumPy supports it;
``eig`` always returns complex results. Singular or non positive-definite input
raises InvalidArgumentError naming the op and the batch element.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import _linalg_np as _la
from fw.core.ops._infer import (
    broadcast_shapes,
    norm_axis,
    real_of,
    shp,
)
from fw.core.ops._registry import defop
from fw.core.tensor import Tensor


# ================================================================ matmul
def _mm_shapes(xs, ys, transpose_x, transpose_y):
    xs, ys = list(xs), list(ys)
    if len(xs) == 0 or len(ys) == 0:
        raise InvalidArgumentError(f"x {shp(xs)} and y {shp(ys)} must have at least one "
                                   f"dimension")
    xv, yv = len(xs) == 1, len(ys) == 1
    if xv:
        xs = [1] + xs
    elif transpose_x:
        xs[-1], xs[-2] = xs[-2], xs[-1]
    if yv:
        ys = ys + [1]
    elif transpose_y:
        ys[-1], ys[-2] = ys[-2], ys[-1]
    k1, k2 = xs[-1], ys[-2]
    if k1 != k2 and k1 != DYN and k2 != DYN:
        raise InvalidArgumentError(
            f"the contracted dimensions differ: x has shape {shp(xs)} and y has shape {shp(ys)} "
            f"(after transpose_x={transpose_x}, transpose_y={transpose_y}): {k1} vs {k2}")
    batch = broadcast_shapes(xs[:-2], ys[:-2], names=("x batch", "y batch"))
    out = list(batch) + [xs[-2], ys[-1]]
    if xv:
        out.pop(-2)
    if yv:
        out.pop(-1)
    return tuple(out)


def _matmul_infer(x, y, transpose_x=False, transpose_y=False):
    if x.dtype is not y.dtype:
        raise InvalidTypeError(f"x ({x.dtype.name}) and y ({y.dtype.name}) must have one dtype")
    if x.dtype is _dt.bool_:
        raise InvalidTypeError("bool tensors cannot be multiplied; cast them first")
    return TensorType(_mm_shapes(x.shape, y.shape, transpose_x, transpose_y), x.dtype)


def _matmul_ref(x, y, transpose_x=False, transpose_y=False):
    if transpose_x and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if transpose_y and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":
        # float16/bfloat16: NumPy upcasts ml_dtypes' bfloat16; accumulate in float32
        # and round once, as the low-precision GEMMs of oneDNN do
        return np.matmul(x.astype(np.float32), y.astype(np.float32)).astype(x.dtype)
    return np.matmul(x, y)


matmul_op = defop("matmul", ("x", "y"), {"transpose_x": False, "transpose_y": False},
                  infer=_matmul_infer, reference=_matmul_ref, family="linalg",
                  dunders=("__matmul__", "__rmatmul__"),
                  doc="Matrix product with NumPy's broadcasting of batch dimensions; 1-D "
                      "operands are treated as vectors.")


# ================================================================ helpers
_LOW = (_dt.float16, _dt.bfloat16)


def _item(v, arg):
    """A Python number from a number, a NumPy scalar or a one-element Tensor."""
    if isinstance(v, Tensor):
        if v.size != 1:
            raise UnsupportedError(f"'{arg}' given as a tensor must hold one value, got shape "
                                   f"{v.shape}")
        return v.item()
    if isinstance(v, Value):
        raise UnsupportedError(f"'{arg}' given as a symbolic tensor is not supported while "
                               f"building a program; pass a Python number")
    if isinstance(v, np.generic):
        return v.item()
    return v


def _same(a, b) -> bool:
    return a == b or a == DYN or b == DYN


def _need_float(t, arg="x", complex_ok=True):
    if t.dtype.kind < _dt._FLOAT or (not complex_ok and t.dtype.kind == _dt._COMPLEX):
        kinds = "floating or complex" if complex_ok else "floating"
        raise InvalidTypeError(f"'{arg}' must be a {kinds} tensor, got {t.dtype.name} with "
                               f"shape {shp(t.shape)}; cast it first, e.g. x.astype('float32')")


def _need_matrix(t, arg="x", square=False):
    if len(t.shape) < 2:
        raise InvalidArgumentError(f"'{arg}' must be a matrix or a batch of matrices (at least "
                                   f"2 dimensions), got shape {shp(t.shape)}")
    if square and not _same(t.shape[-1], t.shape[-2]):
        raise InvalidArgumentError(f"'{arg}' must hold square matrices, got shape "
                                   f"{shp(t.shape)}")


def _dtype_of(a) -> _dt.DType:
    return _dt.from_numpy(a.dtype)


def _kfloat(a, arg="x", complex_ok=True):
    """Kernel-side dtype check (the eager path does not run `infer`)."""
    d = _dtype_of(a)
    if d.kind < _dt._FLOAT or (not complex_ok and d.kind == _dt._COMPLEX):
        kinds = "floating or complex" if complex_ok else "floating"
        raise InvalidTypeError(f"'{arg}' must be a {kinds} tensor, got {d.name} with shape "
                               f"{list(a.shape)}; cast it first, e.g. x.astype('float32')")
    return d


def _kmatrix(a, arg="x", square=False):
    """Kernel-side shape check, so eager errors read as the `infer` ones do."""
    if a.ndim < 2:
        raise InvalidArgumentError(f"'{arg}' must be a matrix or a batch of matrices (at least "
                                   f"2 dimensions), got shape {list(a.shape)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise InvalidArgumentError(f"'{arg}' must hold square matrices, got shape "
                                   f"{list(a.shape)}")


def _work(a, arg="x", complex_ok=True, square=None):
    """(array in a dtype numpy.linalg handles, the fw dtype of the input);
    with `square` set, also checks that `a` is a (square) matrix stack."""
    d = _kfloat(a, arg, complex_ok)
    if square is not None:
        _kmatrix(a, arg, square)
    if d in _LOW:
        return a.astype(np.float32), d
    return a, d


def _out(r, d):
    """Cast a result back to dtype `d` (a DType), keeping arrays (not scalars)."""
    r = np.asarray(r) if isinstance(r, np.generic) or not hasattr(r, "shape") else r
    return r.astype(d.np, copy=False)


def _batch_index(fails, batch):
    """Where in the batch the first failing matrix is, for error messages."""
    if not batch:
        return ""
    idx = np.unravel_index(int(fails), batch)
    return f" (batch element {[int(i) for i in idx]})"


def _first_failure(fn, a):
    """Index of the first matrix of the stack `a` on which `fn` raises LinAlgError."""
    batch = a.shape[:-2]
    flat = a.reshape((_la.batch_size(batch),) + a.shape[-2:])
    for i in range(flat.shape[0]):
        try:
            fn(flat[i])
        except np.linalg.LinAlgError:
            return _batch_index(i, batch)
    return ""


# ---------------------------------------------------------------- vecdot
def _vecdot_infer(x, y, axis=-1):
    if x.dtype is _dt.bool_:
        raise InvalidTypeError("bool tensors are not supported; cast them first")
    shape = broadcast_shapes(x.shape, y.shape, names=("x", "y"))
    ax = norm_axis(axis, len(shape))
    return TensorType(tuple(d for i, d in enumerate(shape) if i != ax), x.dtype)


def _vecdot_ref(x, y, axis=-1):
    d = _dtype_of(x)
    if d is _dt.bool_:
        raise InvalidTypeError("bool tensors are not supported; cast them first")
    xx = np.conj(x) if d.kind == _dt._COMPLEX else x
    nd = max(x.ndim, y.ndim)
    r = np.sum(np.multiply(xx, y), axis=norm_axis(axis, nd))
    return _out(r, d)


defop("vecdot", ("x", "y"), {"axis": -1}, infer=_vecdot_infer, reference=_vecdot_ref,
      family="linalg", api="linalg.vecdot", aliases=("vecdot",), method=False,
      doc="sum(conj(x) * y) along `axis`, with broadcasting.")


# ---------------------------------------------------------------- cross
_CROSS_DEFAULT = 9  # Paddle's sentinel: the first axis of size 3


def _cross_axis(shape, axis):
    if axis == _CROSS_DEFAULT:
        for i, d in enumerate(shape):
            if d == 3:
                return i
            if d == DYN:
                return None  # decided at run time
        raise InvalidArgumentError(f"no dimension of size 3 in shape {shp(shape)}; pass 'axis'")
    ax = norm_axis(axis, len(shape))
    if not _same(shape[ax], 3):
        raise InvalidArgumentError(f"dimension {ax} of shape {shp(shape)} is {shape[ax]}, but "
                                   f"the cross product needs size 3")
    return ax


def _cross_infer(x, y, axis=_CROSS_DEFAULT):
    if x.dtype is _dt.bool_:
        raise InvalidTypeError("bool tensors are not supported; cast them first")
    shape = broadcast_shapes(x.shape, y.shape, names=("x", "y"))
    _cross_axis(shape, axis)
    return TensorType(shape, x.dtype)


def _cross_ref(x, y, axis=_CROSS_DEFAULT):
    d = _dtype_of(x)
    if d is _dt.bool_:
        raise InvalidTypeError("bool tensors are not supported; cast them first")
    shape = np.broadcast_shapes(x.shape, y.shape)
    ax = _cross_axis(shape, axis)
    return _out(np.cross(x, y, axis=ax), d)


defop("cross", ("x", "y"), {"axis": _CROSS_DEFAULT}, infer=_cross_infer, reference=_cross_ref,
      family="linalg", api="linalg.cross", aliases=("cross",),
      doc="Cross product along `axis` (default: the first axis of size 3).")


# ================================================================ inverses and solves
def _square_float_infer(x, **_):
    _need_float(x)
    _need_matrix(x, square=True)
    return x


def _pinv_canon(attrs):
    return {"rcond": float(_item(attrs["rcond"], "rcond")),
            "hermitian": bool(attrs["hermitian"])}


def _pinv_infer(x, rcond=1e-15, hermitian=False):
    _need_float(x)
    _need_matrix(x, square=hermitian)
    s = x.shape
    return TensorType(tuple(s[:-2]) + (s[-1], s[-2]), x.dtype)


def _pinv_ref(x, rcond=1e-15, hermitian=False):
    a, d = _work(x, square=hermitian)
    if hermitian:
        w, v = np.linalg.eigh(a)
        big = np.max(np.abs(w), axis=-1, keepdims=True, initial=0.0)
        keep = np.abs(w) > rcond * big
        winv = np.where(keep, 1 / np.where(keep, w, 1), 0)
        r = np.matmul(v * winv[..., None, :].astype(v.dtype), _la.conj_t(v))
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        big = np.max(s, axis=-1, keepdims=True, initial=0.0)
        keep = s > rcond * big
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
        r = np.matmul(_la.conj_t(vh) * sinv[..., None, :].astype(vh.dtype), _la.conj_t(u))
    return _out(r, d)


defop("pinv", ("x",), {"rcond": 1e-15, "hermitian": False}, infer=_pinv_infer,
      reference=_pinv_ref, canon=_pinv_canon, promote=None, family="linalg",
      api="linalg.pinv", method="pinv",
      doc="Moore-Penrose pseudo-inverse; singular values <= rcond * max are dropped.")


# ---------------------------------------------------------------- det / slogdet
def _det_infer(x):
    _square_float_infer(x)
    return TensorType(x.shape[:-2], x.dtype)


def _det_ref(x):
    a, d = _work(x, square=True)
    return _out(np.linalg.det(a), d)


defop("det", ("x",), infer=_det_infer, reference=_det_ref, promote=None, family="linalg",
      api="linalg.det", method=False, doc="Determinant of a square matrix (or batch).")


def _slogdet_infer(x):
    _square_float_infer(x)
    return TensorType((2,) + tuple(x.shape[:-2]), x.dtype)


def _slogdet_ref(x):
    a, d = _work(x, square=True)
    sign, logabs = np.linalg.slogdet(a)
    return _out(np.stack([sign, logabs.astype(sign.dtype)]), d)


defop("slogdet", ("x",), infer=_slogdet_infer, reference=_slogdet_ref, promote=None,
      family="linalg", api="linalg.slogdet", method=False,
      doc="[sign, log|det|] stacked on a new first axis (Paddle's layout); complex input "
          "gives a complex sign (det / |det|).")


# ---------------------------------------------------------------- solve
def _solve_infer(x, y, left=True):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x, square=True)
    m = x.shape[-1]
    if len(y.shape) == 1:
        if not _same(y.shape[0], m):
            raise InvalidArgumentError(f"x with shape {shp(x.shape)} and the vector y with "
                                       f"shape {shp(y.shape)} do not match")
        return TensorType(tuple(x.shape[:-1]), x.dtype)
    _need_matrix(y, "y")
    k = y.shape[-2] if left else y.shape[-1]
    if not _same(k, m):
        side = "rows" if left else "columns"
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} needs y with {m} {side}, got "
                                   f"shape {shp(y.shape)} (left={left})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch"))
    return TensorType(tuple(batch) + tuple(y.shape[-2:]), x.dtype)


def _solve_ref(x, y, left=True):
    a, d = _work(x, square=True)
    b = y.astype(a.dtype, copy=False)
    try:
        if left:
            r = np.linalg.solve(a, b)
        elif b.ndim == 1:
            r = np.linalg.solve(np.swapaxes(a, -1, -2), b)
        else:
            r = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)),
                            -1, -2)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.inv, a)
        raise InvalidArgumentError(f"the matrix x is singular{where}, so the system has no "
                                   f"unique solution; linalg.lstsq solves it in the "
                                   f"least-squares sense") from None
    return _out(r, d)


defop("solve", ("x", "y"), {"left": True}, infer=_solve_infer, reference=_solve_ref,
      family="linalg", api="linalg.solve", method="solve",
      doc="Solve x @ out = y (left=True) or out @ x = y; y may be a vector.")


# ---------------------------------------------------------------- triangular_solve
def _trisolve_infer(x, y, upper=True, transpose=False, unitriangular=False):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x, square=True)
    _need_matrix(y, "y")
    if not _same(x.shape[-1], y.shape[-2]):
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} needs y with "
                                   f"{x.shape[-1]} rows, got shape {shp(y.shape)}")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch"))
    return TensorType(tuple(batch) + tuple(y.shape[-2:]), x.dtype)


def _trisolve_ref(x, y, upper=True, transpose=False, unitriangular=False):
    a, d = _work(x, square=True)
    _kmatrix(y, "y")
    r = _la.tri_solve(a, y.astype(a.dtype, copy=False), upper, transpose=transpose,
                      unit=unitriangular)
    return _out(r, d)


defop("triangular_solve", ("x", "y"), {"upper": True, "transpose": False,
                                       "unitriangular": False},
      infer=_trisolve_infer, reference=_trisolve_ref, family="linalg",
      api="linalg.triangular_solve", method="triangular_solve",
      doc="Solve op(x) @ out = y for triangular x (only its upper or lower triangle is "
          "read); op transposes x when transpose=True.")


# ---------------------------------------------------------------- cholesky family
def _cholesky_ref(x, upper=False):
    a, d = _work(x, square=True)
    try:
        low = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.cholesky, a)
        raise InvalidArgumentError(f"the input matrix is not positive-definite{where}, so it "
                                   f"has no Cholesky factor") from None
    return _out(_la.conj_t(low) if upper else low, d)


defop("cholesky", ("x",), {"upper": False}, infer=_square_float_infer,
      reference=_cholesky_ref, promote=None, family="linalg", api="linalg.cholesky",
      aliases=("cholesky",),
      doc="Cholesky factor L (x = L L^H) or, with upper=True, U = L^H (x = U^H U); "
          "reads the lower triangle of x.")


def _cholsolve_infer(x, y, upper=False):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x)
    _need_matrix(y, "y", square=True)
    if not _same(x.shape[-2], y.shape[-1]):
        raise InvalidArgumentError(f"the factor y with shape {shp(y.shape)} needs x with "
                                   f"{y.shape[-1]} rows, got shape {shp(x.shape)}")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch"))
    return TensorType(tuple(batch) + tuple(x.shape[-2:]), x.dtype)


def _cholsolve_ref(x, y, upper=False):
    u, d = _work(y, "y", square=True)
    _kmatrix(x)
    b = x.astype(u.dtype, copy=False)
    if upper:  # A = U^H U
        z = _la.tri_solve(u, b, True, transpose=True, conjugate=True)
        r = _la.tri_solve(u, z, True)
    else:  # A = L L^H
        z = _la.tri_solve(u, b, False)
        r = _la.tri_solve(u, z, False, transpose=True, conjugate=True)
    return _out(r, d)


defop("cholesky_solve", ("x", "y"), {"upper": False}, infer=_cholsolve_infer,
      reference=_cholsolve_ref, family="linalg", api="linalg.cholesky_solve",
      method="cholesky_solve",
      doc="Solve A @ out = x given the Cholesky factor y of A (lower, or upper=True).")


def _cholinv_ref(x, upper=False):
    u, d = _work(x, square=True)
    n = u.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=u.dtype, like=u), u.shape)
    inv = _la.tri_solve(u, eye, upper)
    r = np.matmul(inv, _la.conj_t(inv)) if upper else np.matmul(_la.conj_t(inv), inv)
    return _out(r, d)


defop("cholesky_inverse", ("x",), {"upper": False}, infer=_square_float_infer,
      reference=_cholinv_ref, promote=None, family="linalg", api="linalg.cholesky_inverse",
      method="cholesky_inverse",
      doc="Inverse of A = L L^H (or U^H U with upper=True) from its Cholesky factor x.")


def _lu_unpack_infer(x, y, unpack_ludata=True, unpack_pivots=True):
    _need_float(x)
    _need_matrix(x)
    if y.dtype.kind != _dt._INT:
        raise InvalidTypeError(f"'y' (the pivots) must be an integer tensor, got {y.dtype.name}")
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    empty = TensorType((0,), x.dtype)
    p = TensorType(batch + (m, m), x.dtype) if unpack_pivots else empty
    low = TensorType(batch + (m, k), x.dtype) if unpack_ludata else empty
    up = TensorType(batch + (k, n), x.dtype) if unpack_ludata else empty
    return p, low, up


def _lu_unpack_ref(x, y, unpack_ludata=True, unpack_pivots=True):
    a, d = _work(x)
    if y.dtype.kind not in "iu":
        raise InvalidTypeError(f"'y' (the pivots) must be an integer tensor, got {y.dtype}")
    p, low, up = _la.lu_unpack(a, y)
    empty = np.zeros((0,), dtype=d.np, like=x)
    return (_out(p, d) if unpack_pivots else empty,
            _out(low, d) if unpack_ludata else empty,
            _out(up, d) if unpack_ludata else empty)


defop("lu_unpack", ("x", "y"), {"unpack_ludata": True, "unpack_pivots": True},
      outputs=("p", "l", "u"), infer=_lu_unpack_infer, reference=_lu_unpack_ref, promote=None,
      family="linalg", api="linalg.lu_unpack", method="lu_unpack",
      doc="(P, L, U) with x = P @ L @ U from linalg.lu's (LU, pivots); the parts not "
          "unpacked are empty tensors of shape [0].")


_TRANS = ("N", "T", "C")


def _lu_solve_canon(attrs):
    t = attrs["trans"]
    if t not in _TRANS:
        raise InvalidArgumentError(f"'trans' must be one of {_TRANS}, got {t!r}")
    return {"trans": t}


def _lu_solve_infer(b, lu, pivots, trans="N"):
    _need_float(b, "b")
    _need_float(lu, "lu")
    _need_matrix(lu, "lu", square=True)
    _need_matrix(b, "b")
    if pivots.dtype.kind != _dt._INT:
        raise InvalidTypeError(f"'pivots' must be an integer tensor, got {pivots.dtype.name}")
    if not _same(b.shape[-2], lu.shape[-1]):
        raise InvalidArgumentError(f"lu with shape {shp(lu.shape)} needs b with "
                                   f"{lu.shape[-1]} rows, got shape {shp(b.shape)}")
    batch = broadcast_shapes(b.shape[:-2], lu.shape[:-2], names=("b batch", "lu batch"))
    return TensorType(tuple(batch) + tuple(b.shape[-2:]), b.dtype)


def _lu_solve_ref(b, lu, pivots, trans="N"):
    a, d = _work(lu, "lu", square=True)
    _kmatrix(b, "b")
    batch = np.broadcast_shapes(b.shape[:-2], a.shape[:-2], pivots.shape[:-1])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:])
    rhs = np.broadcast_to(b.astype(a.dtype, copy=False), batch + b.shape[-2:])
    if trans == "N":  # P L U x = b
        z = _la.tri_solve(a, _la.apply_pivots(rhs, piv), False, unit=True)
        r = _la.tri_solve(a, z, True)
    else:  # (P L U)^T x = b: U^T L^T P^T x = b
        c = trans == "C"
        w = _la.tri_solve(a, rhs, True, transpose=True, conjugate=c)
        z = _la.tri_solve(a, w, False, transpose=True, conjugate=c, unit=True)
        r = _la.apply_pivots(z, piv, reverse=True)
    return _out(r, d)


defop("lu_solve", ("b", "lu", "pivots"), {"trans": "N"}, infer=_lu_solve_infer,
      reference=_lu_solve_ref, canon=_lu_solve_canon, promote=(0, 1), family="linalg",
      api="linalg.lu_solve", aliases=("lu_solve",), method=False,
      doc="Solve A x = b (trans='N'), A^T x = b ('T') or A^H x = b ('C') from A's LU "
          "factorisation (linalg.lu).")


def _expm_ref(x):
    a, d = _work(x, square=True)
    wide = np.complex128 if d.kind == _dt._COMPLEX else np.float64
    return _out(_la.expm(a.astype(wide)), d)


defop("matrix_exp", ("x",), infer=_square_float_infer, reference=_expm_ref, promote=None,
      family="linalg", api="linalg.matrix_exp", method=False,
      doc="The matrix exponential exp(x) of a square matrix (or batch).")


# ---------------------------------------------------------------- lstsq
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_canon(attrs):
    drv = attrs["driver"] if attrs["driver"] is not None else "gelsy"
    if drv not in _DRIVERS:
        raise InvalidArgumentError(f"'driver' must be one of {_DRIVERS} (or None), got {drv!r}")
    rc = attrs["rcond"]
    return {"rcond": None if rc is None else float(_item(rc, "rcond")), "driver": drv}


def _lstsq_infer(x, y, rcond=None, driver="gelsy"):
    _need_float(x)
    _need_float(y, "y")
    _need_matrix(x)
    _need_matrix(y, "y")
    m, n = x.shape[-2:]
    kk = y.shape[-1]
    if not _same(m, y.shape[-2]):
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} and y with shape "
                                   f"{shp(y.shape)} must have the same number of rows")
    batch = tuple(broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch")))
    real = real_of(x.dtype)
    # residuals exist only when m > n and every matrix has full rank (data-dependent)
    res = batch + ((DYN if (DYN in (m, n) or m > n) else 0),)
    k = DYN if DYN in (m, n) else min(m, n)
    rank = TensorType(batch, _dt.int32) if driver != "gels" else TensorType((0,), _dt.int32)
    sv = TensorType(batch + (k,), real) if driver in ("gelsd", "gelss") else \
        TensorType((0,), real)
    return TensorType(batch + (n, kk), x.dtype), TensorType(res, real), rank, sv


def _lstsq_ref(x, y, rcond=None, driver="gelsy"):
    a, d = _work(x, square=False)
    _kmatrix(y, "y")
    real = real_of(d)
    batch = np.broadcast_shapes(a.shape[:-2], y.shape[:-2])
    m, n = a.shape[-2:]
    kk = y.shape[-1]
    a = np.broadcast_to(a, batch + (m, n))
    b = np.broadcast_to(y.astype(a.dtype, copy=False), batch + (m, kk))
    if rcond is None:
        rcond = float(np.finfo(a.real.dtype).eps) * max(m, n)
    if a.size == 0:
        s = np.zeros(batch + (min(m, n),), dtype=a.real.dtype, like=a)
        sol = np.zeros(batch + (n, kk), dtype=a.dtype, like=a)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        keep = s > rcond * np.max(s, axis=-1, keepdims=True, initial=0.0)
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0).astype(a.dtype)
        sol = np.matmul(_la.conj_t(vh), sinv[..., :, None] * np.matmul(_la.conj_t(u), b))
    top = np.max(s, axis=-1, keepdims=True, initial=0.0)
    rank = np.sum(s > rcond * top, axis=-1).astype(np.int32)
    if m > n and bool(np.all(rank == n)):
        resid = np.sum(np.abs(np.matmul(a, sol) - b) ** 2, axis=-2)
    else:
        resid = np.zeros(batch + (0,), dtype=a.real.dtype, like=a)
    empty_i = np.zeros((0,), dtype=np.int32, like=a)
    empty_r = np.zeros((0,), dtype=real.np, like=a)
    return (_out(sol, d), _out(resid, real),
            empty_i if driver == "gels" else rank,
            _out(s, real) if driver in ("gelsd", "gelss") else empty_r)


defop("lstsq", ("x", "y"), {"rcond": None, "driver": None},
      outputs=("solution", "residuals", "rank", "singular_values"), infer=_lstsq_infer,
      reference=_lstsq_ref, canon=_lstsq_canon, family="linalg", api="linalg.lstsq",
      method="lstsq",
      doc="Least-squares solution of x @ out = y (by SVD; rcond cuts small singular values). "
          "residuals are the squared column residual norms when M > N and every x has full "
          "rank, else empty ([*, 0]); rank is empty for driver 'gels', singular_values for "
          "drivers other than 'gelsd'/'gelss'.")


# ---------------------------------------------------------------- Householder products
def _hh_infer(x, tau):
    _need_float(x)
    _need_float(tau, "tau")
    _need_matrix(x)
    m, n = x.shape[-2:]
    if len(tau.shape) != len(x.shape) - 1:
        raise InvalidArgumentError(f"tau with shape {shp(tau.shape)} must have one dimension "
                                   f"less than x with shape {shp(x.shape)}")
    if m != DYN and n != DYN and m < n:
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} must have at least as many "
                                   f"rows as columns")
    k = tau.shape[-1]
    if k != DYN and n != DYN and k > n:
        raise InvalidArgumentError(f"tau with shape {shp(tau.shape)} holds more than "
                                   f"x.shape[-1]={n} coefficients")
    broadcast_shapes(x.shape[:-2], tau.shape[:-1], names=("x batch", "tau batch"))
    return x


def _hh_ref(x, tau):
    a, d = _work(x, square=False)
    if a.shape[-2] < a.shape[-1] or tau.shape[-1] > a.shape[-1]:
        raise InvalidArgumentError(f"x with shape {list(a.shape)} must have at least as many "
                                   f"rows as columns, and tau with shape {list(tau.shape)} at "
                                   f"most x.shape[-1] coefficients")
    t = tau.astype(a.dtype, copy=False)
    return _out(_la.householder_q(a, t, a.shape[-1]), d)


defop("householder_product", ("x", "tau"), infer=_hh_infer, reference=_hh_ref,
      family="linalg", api="linalg.householder_product", method="householder_product",
      doc="The first N columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i read "
          "from the columns of x below the diagonal (LAPACK orgqr).")


def _ormqr_infer(x, tau, y, left=True, transpose=False):
    _need_float(x)
    _need_float(tau, "tau")
    _need_float(y, "y")
    _need_matrix(x)
    _need_matrix(y, "y")
    mn = x.shape[-2]
    side = y.shape[-2] if left else y.shape[-1]
    if not _same(mn, side):
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} gives a {mn}x{mn} Q that "
                                   f"cannot multiply y with shape {shp(y.shape)} "
                                   f"(left={left})")
    k = tau.shape[-1] if tau.shape else DYN
    if len(tau.shape) != len(x.shape) - 1 or (k != DYN and x.shape[-1] != DYN and
                                                k > x.shape[-1]):
        raise InvalidArgumentError(f"tau with shape {shp(tau.shape)} does not match x with "
                                   f"shape {shp(x.shape)}")
    batch = broadcast_shapes(x.shape[:-2], tau.shape[:-1], y.shape[:-2],
                             names=("x batch", "tau batch", "y batch"))
    return TensorType(tuple(batch) + tuple(y.shape[-2:]), y.dtype)


def _ormqr_ref(x, tau, y, left=True, transpose=False):
    a, d = _work(x, square=False)
    _kmatrix(y, "y")
    r = _la.householder_apply(a, tau.astype(a.dtype, copy=False),
                              y.astype(a.dtype, copy=False), left=left, adjoint=transpose)
    return _out(r, d)


defop("ormqr", ("x", "tau", "y"), {"left": True, "transpose": False}, infer=_ormqr_infer,
      reference=_ormqr_ref, family="linalg", api="linalg.ormqr", method="ormqr",
      doc="op(Q) @ y (left) or y @ op(Q), Q given by Householder reflectors (x, tau) and "
          "op the conjugate transpose when transpose=True (LAPACK ormqr).")


# ---------------------------------------------------------------- matrix_rank
def _rank_canon(attrs):
    out = {"hermitian": bool(attrs["hermitian"])}
    for k in ("tol", "atol", "rtol"):
        v = attrs[k]
        out[k] = None if v is None else float(_item(v, k))
    return out


def _rank_infer(x, tol=None, hermitian=False, atol=None, rtol=None):
    _need_float(x)
    _need_matrix(x, square=hermitian)
    return TensorType(tuple(x.shape[:-2]), _dt.int32)


def _rank_ref(x, tol=None, hermitian=False, atol=None, rtol=None):
    a, d = _work(x, square=hermitian)
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2], dtype=np.int32, like=a)
    if hermitian:
        s = np.abs(np.linalg.eigvalsh(a))
    else:
        s = np.linalg.svd(a, compute_uv=False)
    top = np.max(s, axis=-1, keepdims=True, initial=0.0)
    eps = float(np.finfo(a.real.dtype).eps)
    if tol is not None and atol is None and rtol is None:
        thresh = tol
    elif atol is not None or rtol is not None:
        at = 0.0 if atol is None else atol
        rt = rtol if rtol is not None else (eps * max(m, n) if at <= 0 else 0.0)
        thresh = np.maximum(at, rt * top)
    else:
        thresh = top * max(m, n) * eps
    return np.sum(s > thresh, axis=-1).astype(np.int32)


defop("matrix_rank", ("x",), {"tol": None, "hermitian": False, "atol": None, "rtol": None},
      infer=_rank_infer, reference=_rank_ref, canon=_rank_canon, promote=None,
      differentiable=False, family="linalg", api="linalg.matrix_rank", method=False,
      doc="Numerical rank (int32): singular values (or |eigenvalues| when hermitian) above "
          "tol, or above max(atol, rtol * largest); default max(M, N) * eps * largest.")


# ================================================================ norms and statistics
_INF = float("inf")


# ---------------------------------------------------------------- trace
def _trace_infer(x, offset=0, axis1=0, axis2=1):
    if x.dtype is _dt.bool_:
        raise InvalidTypeError("bool tensors are not supported; cast them first")
    nd = len(x.shape)
    if nd < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions, got shape "
                                   f"{shp(x.shape)}")
    a1, a2 = norm_axis(axis1, nd, "axis1"), norm_axis(axis2, nd, "axis2")
    if a1 == a2:
        raise InvalidArgumentError(f"axis1 and axis2 must differ, both are {a1}")
    return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in (a1, a2)), x.dtype)


def _trace_ref(x, offset=0, axis1=0, axis2=1):
    d = _dtype_of(x)
    if d is _dt.bool_:
        raise InvalidTypeError("bool tensors are not supported; cast them first")
    nd = x.ndim
    if nd < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions, got shape "
                                   f"{list(x.shape)}")
    a1, a2 = norm_axis(axis1, nd, "axis1"), norm_axis(axis2, nd, "axis2")
    if a1 == a2:
        raise InvalidArgumentError(f"axis1 and axis2 must differ, both are {a1}")
    w = x.astype(np.float32) if d in _LOW else x
    return _out(np.trace(w, offset=offset, axis1=a1, axis2=a2, dtype=w.dtype), d)


defop("trace", ("x",), {"offset": 0, "axis1": 0, "axis2": 1}, infer=_trace_infer,
      reference=_trace_ref, promote=None, family="linalg",
      doc="Sum of the diagonal at `offset` of the 2-D slices over (axis1, axis2).")


# ---------------------------------------------------------------- cdist
_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist", "use_loop_for_euclid_dist")


def _cdist_canon(attrs):
    p = float(_item(attrs["p"], "p"))
    if not p >= 0:
        raise InvalidArgumentError(f"'p' must be >= 0, got {p}")
    mode = attrs["compute_mode"]
    if mode not in _CDIST_MODES:
        raise InvalidArgumentError(f"'compute_mode' must be one of {_CDIST_MODES}, got "
                                   f"{mode!r}")
    return {"p": p, "compute_mode": mode}


def _cdist_infer(x, y, p=2.0, compute_mode=_CDIST_MODES[0]):
    _need_float(x, complex_ok=False)
    _need_float(y, "y", complex_ok=False)
    _need_matrix(x)
    _need_matrix(y, "y")
    if not _same(x.shape[-1], y.shape[-1]):
        raise InvalidArgumentError(f"x with shape {shp(x.shape)} and y with shape "
                                   f"{shp(y.shape)} must have the same last dimension")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], names=("x batch", "y batch"))
    return TensorType(tuple(batch) + (x.shape[-2], y.shape[-2]), x.dtype)


def _cdist_ref(x, y, p=2.0, compute_mode=_CDIST_MODES[0]):
    a, d = _work(x, complex_ok=False)
    b = y.astype(a.dtype, copy=False)
    if a.shape[-1] != b.shape[-1]:
        raise InvalidArgumentError(f"x with shape {list(x.shape)} and y with shape "
                                   f"{list(y.shape)} must have the same last dimension")
    rows, cols = a.shape[-2], b.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == _CDIST_MODES[0] and (rows > 25 or cols > 25)))
    if use_mm:
        xx = np.sum(a * a, axis=-1)[..., :, None]
        yy = np.sum(b * b, axis=-1)[..., None, :]
        sq = xx + yy - 2 * np.matmul(a, np.swapaxes(b, -1, -2))
        r = np.sqrt(np.maximum(sq, 0))
    else:
        diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
        if p == 0:
            r = np.sum(diff != 0, axis=-1, dtype=a.dtype)
        elif p == _INF:
            r = np.max(diff, axis=-1, initial=0.0)
        elif p == 1:
            r = np.sum(diff, axis=-1)
        elif p == 2:
            r = np.sqrt(np.sum(diff * diff, axis=-1))
        else:
            r = np.power(np.sum(np.power(diff, p), axis=-1), 1.0 / p)
    return _out(r, d)


defop("cdist", ("x", "y"), {"p": 2.0, "compute_mode": _CDIST_MODES[0]}, infer=_cdist_infer,
      reference=_cdist_ref, canon=_cdist_canon, family="linalg",
      doc="p-norm distances between the rows of x [*, P, M] and y [*, R, M]: [*, P, R].")


def _cov_shape(x, rowvar):
    nd = len(x.shape)
    if nd not in (1, 2):
        raise InvalidArgumentError(f"x must be 1-D or 2-D (variables x observations), got shape "
                                   f"{shp(x.shape)}")
    if nd == 1:
        return (), x.shape[0]
    v, n = x.shape
    if not rowvar and v != 1:
        v, n = n, v
    # the result is squeezed like numpy.cov: one variable gives a 0-D tensor
    return ((), n) if v == 1 else ((v, v), n)


def _cov_matrix(a, fweights, aweights, rowvar, ddof):
    """Covariance (unsqueezed) of the float array `a`, NumPy's formula."""
    if a.ndim not in (1, 2):
        raise InvalidArgumentError(f"x must be 1-D or 2-D (variables x observations), got shape "
                                   f"{list(a.shape)}")
    if a.ndim == 1:
        a = a[None, :]
    elif not rowvar and a.shape[0] != 1:
        a = a.T
    n = a.shape[1]
    real = a.real.dtype
    w = None
    if fweights is not None:
        if fweights.dtype.kind not in "iu":
            raise InvalidTypeError(f"'fweights' must be an integer tensor, got {fweights.dtype}")
        if np.any(fweights < 0):
            raise InvalidArgumentError("'fweights' must be non-negative")
        w = fweights.astype(real)
    aw = None
    if aweights is not None:
        if np.any(aweights < 0):
            raise InvalidArgumentError("'aweights' must be non-negative")
        aw = aweights.astype(real)
        w = aw if w is None else w * aw
    if w is not None and w.shape != (n,):
        raise InvalidArgumentError(f"the weights must have one entry per observation ({n}), "
                                   f"got shape {list(w.shape)}")
    if w is None:
        wsum = real.type(n)
        avg = np.sum(a, axis=1) / wsum
        fact = wsum - ddof
    else:
        wsum = np.sum(w)
        avg = np.sum(a * w, axis=1) / wsum
        if ddof == 0:
            fact = wsum
        elif aw is None:
            fact = wsum - ddof
        else:
            fact = wsum - ddof * np.sum(w * aw) / wsum
    fact = np.maximum(fact, 0)
    xc = a - avg[:, None]
    xw = xc if w is None else xc * w
    return np.matmul(xw, np.conj(xc).T) / fact


def _corrcoef_infer(x, rowvar=True):
    _need_float(x)
    shape, _ = _cov_shape(x, rowvar)
    return TensorType(shape, x.dtype)


def _corrcoef_ref(x, rowvar=True):
    a, d = _work(x)
    c = _cov_matrix(a, None, None, rowvar, 1)
    std = np.sqrt(np.real(np.diagonal(c, axis1=-2, axis2=-1)))
    c = c / std[:, None] / std[None, :]
    if np.iscomplexobj(c):
        c = np.clip(c.real, -1, 1) + 1j * np.clip(c.imag, -1, 1)
    else:
        c = np.clip(c, -1, 1)
    return _out(np.squeeze(c), d)


defop("corrcoef", ("x",), {"rowvar": True}, infer=_corrcoef_infer, reference=_corrcoef_ref,
      promote="all", to_float=True, family="linalg", api="linalg.corrcoef", method="corrcoef",
      doc="Pearson correlation coefficients of the variables (clipped to [-1, 1]).")
