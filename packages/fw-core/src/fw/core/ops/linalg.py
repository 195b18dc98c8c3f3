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
    complex_of,
    norm_axes,
    norm_axis,
    real_of,
    reduce,
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


# ================================================================ products
# ---------------------------------------------------------------- einsum
def _einsum_tokens(term, eq):
    out = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "...":
                raise InvalidArgumentError(f"equation '{eq}': '.' may only appear as part of "
                                           f"the ellipsis '...'")
            if "..." in out:
                raise InvalidArgumentError(f"equation '{eq}': a term has more than one '...'")
            out.append("...")
            i += 3
        elif c.isascii() and c.isalpha():
            out.append(c)
            i += 1
        else:
            raise InvalidArgumentError(f"equation '{eq}': invalid character {c!r}; labels are "
                                       f"the letters a-z and A-Z")
    return out


def _bcast_dim(a, b, what):
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    if a == DYN:
        return b
    if b == DYN:
        return a
    raise InvalidArgumentError(what)


def _einsum_shape(eq, shapes):
    """The output shape of einsum `eq` on operands of `shapes` (dynamic dims
    -1); raises InvalidArgumentError naming the term and operand at fault."""
    if eq.count("->") > 1:
        raise InvalidArgumentError(f"equation '{eq}' has more than one '->'")
    lhs, rhs = eq.split("->") if "->" in eq else (eq, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise InvalidArgumentError(f"equation '{eq}' has {len(terms)} operand term(s) but "
                                   f"{len(shapes)} operand(s) were given")
    sizes, counts, ells, any_ell = {}, {}, [], False
    for i, (term, s) in enumerate(zip(terms, shapes)):
        toks = _einsum_tokens(term, eq)
        named = [t for t in toks if t != "..."]
        if "..." in toks:
            any_ell = True
            ne = len(s) - len(named)
            if ne < 0:
                raise InvalidArgumentError(f"equation '{eq}': term '{term}' names {len(named)} "
                                           f"dimensions but operand {i} has shape {shp(s)}")
            at = toks.index("...")
            dims = list(s[:at]) + list(s[at + ne:])
            ells.append(tuple(s[at:at + ne]))
        else:
            if len(named) != len(s):
                raise InvalidArgumentError(f"equation '{eq}': term '{term}' has {len(named)} "
                                           f"labels but operand {i} has {len(s)} dimensions "
                                           f"(shape {shp(s)})")
            dims = list(s)
        local = {}
        for lab, d in zip(named, dims):
            counts[lab] = counts.get(lab, 0) + 1
            if lab in local and not _same(local[lab], d):
                raise InvalidArgumentError(f"equation '{eq}': label '{lab}' repeats in term "
                                           f"'{term}' over dimensions of different sizes "
                                           f"({local[lab]} and {d}) of operand {i}")
            local[lab] = d if local.get(lab, DYN) == DYN else local[lab]
        for lab, d in local.items():
            sizes[lab] = _bcast_dim(sizes.get(lab, 1), d,
                                    f"equation '{eq}': label '{lab}' has size {sizes.get(lab)} "
                                    f"in an earlier operand but {d} in operand {i} (shape "
                                    f"{shp(s)}); sizes must match or be 1")
    ell = broadcast_shapes(*ells, names=[f"the '...' of operand {i}" for i in range(len(ells))])
    if rhs is None:
        out = (["..."] if any_ell else []) + sorted(k for k, c in counts.items() if c == 1)
    else:
        out = _einsum_tokens(rhs, eq)
        seen = set()
        for t in out:
            if t != "..." and t not in sizes:
                raise InvalidArgumentError(f"equation '{eq}': output label '{t}' does not "
                                           f"appear in any operand")
            if t in seen:
                raise InvalidArgumentError(f"equation '{eq}': output label '{t}' repeats")
            seen.add(t)
        if ell and "..." not in out:
            raise InvalidArgumentError(f"equation '{eq}': the operands have '...' dimensions "
                                       f"{shp(ell)} but the output has no '...' to keep them")
    shape = []
    for t in out:
        shape.extend(ell if t == "..." else (sizes[t],))
    return tuple(shape)


def _einsum_canon(attrs):
    eq = attrs["equation"]
    if not isinstance(eq, str):
        raise InvalidTypeError(f"'equation' must be a string, got {type(eq).__name__}")
    return {"equation": "".join(eq.split())}


def _einsum_infer(operands, equation=""):
    if not operands:
        raise InvalidArgumentError("einsum needs at least one operand")
    return TensorType(_einsum_shape(equation, [t.shape for t in operands]), operands[0].dtype)


def _einsum_ref(*operands, equation=""):
    # the operands arrive as one list (eager dispatch); the IR executor currently
    # passes a variadic input's arrays one by one, so accept both
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    d = _dtype_of(operands[0])
    ops = [a.astype(np.float32) for a in operands] if d in _LOW else list(operands)
    r = np.einsum(equation, *ops, optimize=len(ops) > 1)
    return _out(r, d)


einsum_op = defop("einsum", ("operands*",), {"equation": ""}, infer=_einsum_infer,
                  reference=_einsum_ref, canon=_einsum_canon, family="linalg", method=False,
                  doc="Einstein summation over any number of operands (NumPy's equation "
                      "syntax, with '...' and implicit output).")


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


# ---------------------------------------------------------------- inv / pinv
def _inv_ref(x):
    a, d = _work(x, square=True)
    try:
        r = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.inv, a)
        raise InvalidArgumentError(f"the input matrix is singular{where}, so it has no "
                                   f"inverse; linalg.pinv gives a pseudo-inverse") from None
    return _out(r, d)


inv_op = defop("inv", ("x",), infer=_square_float_infer, reference=_inv_ref, promote=None,
      family="linalg", api="linalg.inv", aliases=("inverse",), method="inverse",
      doc="Inverse of a square matrix (or batch); raises for a singular matrix.")


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


# ---------------------------------------------------------------- LU
def _lu_infer(x, pivot=True):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    return (x, TensorType(batch + (k,), _dt.int32), TensorType(batch, _dt.int32))


def _lu_ref(x, pivot=True):
    a, d = _work(x, square=False)
    lu, piv, info = _la.lu_factor(a, pivot)
    return _out(lu, d), piv, info


lu_op = defop("lu", ("x",), {"pivot": True}, outputs=("lu", "pivots", "infos"),
              infer=_lu_infer, reference=_lu_ref, promote=None, family="linalg",
              api="linalg.lu", method="lu",
              doc="LU factorisation with partial pivoting: (LU, pivots, infos) as LAPACK's "
                  "getrf gives them (pivots and infos are int32, 1-based).")


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


# ---------------------------------------------------------------- matrix functions
def _matpow_canon(attrs):
    n = _item(attrs["n"], "n")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise InvalidTypeError(f"'n' must be an int, got {type(n).__name__}")
    return {"n": int(n)}


def _matpow_ref(x, n=1):
    a, d = _work(x, square=True)
    try:
        r = np.linalg.matrix_power(a, n)
    except np.linalg.LinAlgError:
        where = _first_failure(np.linalg.inv, a)
        raise InvalidArgumentError(f"n={n} is negative but the matrix is singular{where}, "
                                   f"so it has no inverse") from None
    return _out(r, d)


matrix_power_op = defop("matrix_power", ("x",), {"n": 1}, infer=_square_float_infer,
                        reference=_matpow_ref, canon=_matpow_canon, promote=None,
                        family="linalg", api="linalg.matrix_power", method="matrix_power",
                        doc="x to the integer power n (n < 0 inverts first, n = 0 gives I).")


def _expm_ref(x):
    a, d = _work(x, square=True)
    wide = np.complex128 if d.kind == _dt._COMPLEX else np.float64
    return _out(_la.expm(a.astype(wide)), d)


defop("matrix_exp", ("x",), infer=_square_float_infer, reference=_expm_ref, promote=None,
      family="linalg", api="linalg.matrix_exp", method=False,
      doc="The matrix exponential exp(x) of a square matrix (or batch).")


# ================================================================ decompositions
# ---------------------------------------------------------------- qr
_QR_MODES = ("reduced", "complete")


def _qr_canon(attrs):
    mode = attrs["mode"]
    if mode not in _QR_MODES:
        raise InvalidArgumentError(f"'mode' must be one of {_QR_MODES} (linalg.qr also takes "
                                   f"'r'), got {mode!r}")
    return {"mode": mode}


def _qr_infer(x, mode="reduced"):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = m if mode == "complete" else (DYN if DYN in (m, n) else min(m, n))
    batch = tuple(x.shape[:-2])
    return TensorType(batch + (m, k), x.dtype), TensorType(batch + (k, n), x.dtype)


def _qr_ref(x, mode="reduced"):
    a, d = _work(x, square=False)
    m, n = a.shape[-2:]
    if a.size == 0:  # numpy.linalg.qr rejects empty stacks
        k = m if mode == "complete" else min(m, n)
        batch = a.shape[:-2]
        q = np.broadcast_to(np.eye(m, k, dtype=a.dtype, like=a), batch + (m, k))
        return _out(q, d), np.zeros(batch + (k, n), dtype=d.np, like=a)
    q, r = np.linalg.qr(a, mode=mode)
    return _out(q, d), _out(r, d)


qr_op = defop("qr", ("x",), {"mode": "reduced"}, outputs=("q", "r"), infer=_qr_infer,
              reference=_qr_ref, canon=_qr_canon, promote=None, family="linalg",
              api="linalg.qr", method="qr",
              doc="QR decomposition x = Q R (Householder, as LAPACK geqrf/orgqr).")


# ---------------------------------------------------------------- svd
def _svd_infer(x, full_matrices=False):
    _need_float(x)
    _need_matrix(x)
    m, n = x.shape[-2:]
    k = DYN if DYN in (m, n) else min(m, n)
    batch = tuple(x.shape[:-2])
    ucols, vrows = (m, n) if full_matrices else (k, k)
    return (TensorType(batch + (m, ucols), x.dtype), TensorType(batch + (k,), real_of(x.dtype)),
            TensorType(batch + (vrows, n), x.dtype))


def _svd_ref(x, full_matrices=False):
    a, d = _work(x, square=False)
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        batch = a.shape[:-2]
        uc, vr = (m, n) if full_matrices else (k, k)
        return (np.broadcast_to(np.eye(m, uc, dtype=d.np, like=a), batch + (m, uc)).copy(),
                np.zeros(batch + (k,), dtype=real_of(d).np, like=a),
                np.broadcast_to(np.eye(vr, n, dtype=d.np, like=a), batch + (vr, n)).copy())
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return _out(u, d), _out(s, real_of(d)), _out(vh, d)


svd_op = defop("svd", ("x",), {"full_matrices": False}, outputs=("u", "s", "vh"),
               infer=_svd_infer, reference=_svd_ref, promote=None, family="linalg",
               api="linalg.svd", method=False,
               doc="Singular value decomposition x = U diag(S) VH, S descending and real.")


# ---------------------------------------------------------------- eig / eigh
def _eig_infer(x):
    _square_float_infer(x)
    c = complex_of(x.dtype)
    return TensorType(tuple(x.shape[:-1]), c), TensorType(x.shape, c)


def _eig_ref(x):
    a, d = _work(x, square=True)
    c = complex_of(d)
    try:
        w, v = np.linalg.eig(a)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("the eigenvalue algorithm did not converge") from None
    return _out(w, c), _out(v, c)


eig_op = defop("eig", ("x",), outputs=("eigenvalues", "eigenvectors"), infer=_eig_infer,
               reference=_eig_ref, promote=None, family="linalg", api="linalg.eig",
               method="eig",
               doc="Eigenvalues and right eigenvectors of a general square matrix; always "
                   "complex (complex64 for float32 input).")


def _uplo_canon(attrs):
    u = attrs["UPLO"]
    if u not in ("L", "U"):
        raise InvalidArgumentError(f"'UPLO' must be 'L' or 'U', got {u!r}")
    return {"UPLO": u}


def _eigh_infer(x, UPLO="L"):
    _square_float_infer(x)
    return TensorType(tuple(x.shape[:-1]), real_of(x.dtype)), x


def _eigh_ref(x, UPLO="L"):
    a, d = _work(x, square=True)
    try:
        w, v = np.linalg.eigh(a, UPLO=UPLO)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("the eigenvalue algorithm did not converge") from None
    return _out(w, real_of(d)), _out(v, d)


eigh_op = defop("eigh", ("x",), {"UPLO": "L"}, outputs=("eigenvalues", "eigenvectors"),
                infer=_eigh_infer, reference=_eigh_ref, canon=_uplo_canon, promote=None,
                family="linalg", api="linalg.eigh", method=False,
                doc="Eigenvalues (ascending, real) and orthonormal eigenvectors of a "
                    "Hermitian matrix, read from its lower (UPLO='L') or upper triangle.")


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


def _axis_canon_value(axis):
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (int, np.integer)):
        return int(axis)
    return tuple(int(a) for a in axis)


# ---------------------------------------------------------------- vector_norm
def _vnorm_canon(attrs):
    p = _item(attrs["p"], "p")
    if isinstance(p, str) or isinstance(p, bool) or not isinstance(p, (int, float)):
        raise InvalidArgumentError(f"'p' must be a number (inf, -inf, 0 or any real), got "
                                   f"{p!r}")
    return {"p": float(p), "axis": _axis_canon_value(attrs["axis"]),
            "keepdim": bool(attrs["keepdim"])}


def _vnorm_infer(x, p=2.0, axis=None, keepdim=False):
    _need_float(x)
    return reduce(x, axis, keepdim).with_dtype(real_of(x.dtype))


def _vnorm_ref(x, p=2.0, axis=None, keepdim=False):
    a, d = _work(x)
    axes = norm_axes(axis, a.ndim)
    v = np.abs(a)
    if p == _INF:
        r = np.max(v, axis=axes, keepdims=keepdim, initial=0.0)
    elif p == -_INF:
        r = np.min(v, axis=axes, keepdims=keepdim, initial=_INF)
    elif p == 0:
        r = np.sum(v != 0, axis=axes, keepdims=keepdim, dtype=v.dtype)
    elif p == 1:
        r = np.sum(v, axis=axes, keepdims=keepdim)
    elif p == 2:
        r = np.sqrt(np.sum(v * v, axis=axes, keepdims=keepdim))
    else:
        r = np.power(np.sum(np.power(v, p), axis=axes, keepdims=keepdim), 1.0 / p)
    return _out(r, real_of(d))


vector_norm_op = defop(
    "vector_norm", ("x",), {"p": 2.0, "axis": None, "keepdim": False}, infer=_vnorm_infer,
    reference=_vnorm_ref, canon=_vnorm_canon, promote=None, family="linalg",
    api="linalg.vector_norm", method=False,
    doc="Vector p-norm over `axis` (all axes when None): p = inf/-inf give max/min |x|, "
        "p = 0 counts non-zeros, else (sum |x|^p)^(1/p). Complex input gives a real result.")


# ---------------------------------------------------------------- matrix_norm
_MATRIX_P = ("fro", "nuc", 1.0, -1.0, 2.0, -2.0, _INF, -_INF)


def _mnorm_canon(attrs):
    p = _item(attrs["p"], "p")
    if not isinstance(p, str) and not isinstance(p, bool) and isinstance(p, (int, float)):
        p = float(p)
    if p not in _MATRIX_P:
        raise InvalidArgumentError(f"'p' must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf "
                                   f"for a matrix norm, got {p!r}")
    axis = _axis_canon_value(attrs["axis"])
    if not isinstance(axis, tuple) or len(axis) != 2:
        raise InvalidArgumentError(f"'axis' of a matrix norm must be two axes, got {axis!r}")
    return {"p": p, "axis": axis, "keepdim": bool(attrs["keepdim"])}


def _mnorm_axes(axis, nd):
    a0, a1 = norm_axis(axis[0], nd), norm_axis(axis[1], nd)
    if a0 == a1:
        raise InvalidArgumentError(f"'axis'={list(axis)} names the same axis twice")
    return a0, a1


def _mnorm_infer(x, p="fro", axis=(-2, -1), keepdim=False):
    _need_float(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions for a matrix norm, got "
                                   f"shape {shp(x.shape)}")
    a0, a1 = _mnorm_axes(axis, len(x.shape))
    return reduce(x, (a0, a1), keepdim).with_dtype(real_of(x.dtype))


def _svals(a):
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return np.zeros(a.shape[:-2] + (0,), dtype=a.real.dtype, like=a)
    return np.linalg.svd(a, compute_uv=False)


def _mnorm_ref(x, p="fro", axis=(-2, -1), keepdim=False):
    a, d = _work(x)
    if a.ndim < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions for a matrix norm, got "
                                   f"shape {list(a.shape)}")
    a0, a1 = _mnorm_axes(axis, a.ndim)
    m = np.moveaxis(a, (a0, a1), (-2, -1))
    if p == "fro":
        v = np.abs(m)
        r = np.sqrt(np.sum(v * v, axis=(-2, -1)))
    elif p == "nuc":
        r = np.sum(_svals(m), axis=-1)
    elif p in (2.0, -2.0):
        s = _svals(m)
        r = np.max(s, axis=-1, initial=0.0) if p > 0 else np.min(s, axis=-1, initial=_INF)
    else:
        sums = np.sum(np.abs(m), axis=-2 if p in (1.0, -1.0) else -1)
        r = np.max(sums, axis=-1, initial=0.0) if p > 0 else np.min(sums, axis=-1, initial=_INF)
    if keepdim:
        r = np.expand_dims(r, tuple(sorted((a0, a1))))
    return _out(r, real_of(d))


matrix_norm_op = defop(
    "matrix_norm", ("x",), {"p": "fro", "axis": (-2, -1), "keepdim": False},
    infer=_mnorm_infer, reference=_mnorm_ref, canon=_mnorm_canon, promote=None,
    family="linalg", api="linalg.matrix_norm", method=False,
    doc="Matrix norm over the two axes: 'fro', 'nuc', 1/-1 (max/min column sum), inf/-inf "
        "(max/min row sum), 2/-2 (largest/smallest singular value).")


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


# ---------------------------------------------------------------- cov / corrcoef
def _cov_canon(attrs):
    ddof = attrs["ddof"]
    if isinstance(ddof, Tensor):
        ddof = ddof.item()
    return {"rowvar": bool(attrs["rowvar"]), "ddof": int(ddof)}


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


def _cov_infer(x, fweights=None, aweights=None, rowvar=True, ddof=1):
    _need_float(x)
    shape, n = _cov_shape(x, rowvar)
    for w, nm, kinds in ((fweights, "fweights", (_dt._INT,)),
                         (aweights, "aweights", (_dt._FLOAT, _dt._INT))):
        if w is None:
            continue
        if w.dtype.kind not in kinds:
            kind = "an integer" if nm == "fweights" else "a floating or integer"
            raise InvalidTypeError(f"'{nm}' must be {kind} tensor, got {w.dtype.name}")
        if len(w.shape) != 1 or not _same(w.shape[0], n):
            raise InvalidArgumentError(f"'{nm}' must be 1-D with one weight per observation "
                                       f"({n}), got shape {shp(w.shape)}")
    return TensorType(shape, x.dtype)


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


def _cov_ref(x, fweights=None, aweights=None, rowvar=True, ddof=1):
    a, d = _work(x)
    return _out(np.squeeze(_cov_matrix(a, fweights, aweights, rowvar, ddof)), d)


cov_op = defop("cov", ("x", "fweights?", "aweights?"), {"rowvar": True, "ddof": 1},
               infer=_cov_infer, reference=_cov_ref, canon=_cov_canon, promote=(0,),
               to_float=True, family="linalg", api="linalg.cov", method="cov",
               doc="Covariance matrix of the variables (rows, or columns when rowvar=False), "
                   "with optional frequency and observation weights (NumPy's formula).")


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
