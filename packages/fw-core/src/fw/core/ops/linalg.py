"""Linear algebra: products (matmul, einsum, …), determinants, matrix
functions, norms and statistics — Paddle's ``paddle.linalg`` plus the top-level
aliases Paddle has (``paddle.inverse``, ``paddle.norm``, …). Decompositions are
in ``decomp.py``, inverses and solves in ``solve.py`` (families of their own,
following the design below); the argument checks all three share are in
``_linalg_check.py``.

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
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops import _linalg_np as _la
from fw.core.ops._infer import (
    broadcast_shapes,
    norm_axes,
    norm_axis,
    real_of,
    reduce,
    shp,
)
from fw.core.ops._linalg_check import (
    _LOW,
    _dtype_of,
    _first_failure,
    _item,
    _need_float,
    _need_matrix,
    _out,
    _same,
    _square_float_infer,
    _work,
)
from fw.core.ops._registry import defop
from fw.core.ops._xp import reduce_initial
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
        return np.zeros_like(a, shape=a.shape[:-2], dtype=np.int32)
    if hermitian:
        s = np.abs(np.linalg.eigvalsh(a))
    else:
        s = np.linalg.svd(a, compute_uv=False)
    top = reduce_initial(np.max, s, axis=-1, keepdims=True, initial=0.0)
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
        r = reduce_initial(np.max, v, axis=axes, keepdims=keepdim, initial=0.0)
    elif p == -_INF:
        r = reduce_initial(np.min, v, axis=axes, keepdims=keepdim, initial=_INF)
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
        return np.zeros_like(a, shape=a.shape[:-2] + (0,), dtype=a.real.dtype)
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
        r = reduce_initial(np.max, s, axis=-1, initial=0.0) if p > 0 else \
            reduce_initial(np.min, s, axis=-1, initial=_INF)
    else:
        sums = np.sum(np.abs(m), axis=-2 if p in (1.0, -1.0) else -1)
        r = reduce_initial(np.max, sums, axis=-1, initial=0.0) if p > 0 else \
            reduce_initial(np.min, sums, axis=-1, initial=_INF)
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
            r = reduce_initial(np.max, diff, axis=-1, initial=0.0)
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
