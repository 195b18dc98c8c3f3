"""Creation ops: full, arange, eye, … and the casts/copies every other family needs.

Paddle's creation functions accept sizes and values as Python numbers or as
one-element tensors (and shapes as lists of either, or a 1-D integer tensor).
Tensor-valued arguments are read eagerly in `canon`; while a program is being
built they must be Python values (a clear UnsupportedError says so).

Dtype defaults (Paddle 3.x): ``full``/``zeros``/``ones``/``eye``/``linspace``/
``logspace`` give the default float dtype unless told otherwise (``full`` with a
bool fill gives bool); ``arange`` of ints gives int64; ``*_like`` keep the
input's dtype; ``tril_indices``/``numel``/``shape`` give int64.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core import place as _pl
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import broadcast_shapes, complex_of, norm_axis, shp
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of
from fw.core.tensor import Tensor

__all__ = ["as_shape", "number_arg"]


def _is_symbolic(v) -> bool:
    return hasattr(v, "type") and hasattr(v, "owner") and not isinstance(v, Tensor)


def as_shape(shape, op="op", arg="shape") -> tuple:
    """Paddle accepts a shape as an int, a list/tuple of ints or 0-D tensors, or a
    1-D integer tensor. Returns a tuple of ints (-1 allowed where the op allows)."""
    if isinstance(shape, Tensor):
        if shape.ndim > 1 or shape.dtype.kind != _dt._INT:
            raise InvalidTypeError(f"{op}: '{arg}' given as a tensor must be a 1-D integer "
                                   f"tensor, got {shape.dtype.name}{shape.shape}")
        return tuple(int(v) for v in shape.numpy().reshape(-1))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if isinstance(shape, (list, tuple)):
        out = []
        for d in shape:
            if isinstance(d, Tensor):
                if d.size != 1:
                    raise InvalidArgumentError(f"{op}: each tensor in '{arg}' must hold one "
                                               f"integer, got shape {d.shape}")
                d = d.item()
            if not isinstance(d, (int, np.integer)):
                if _is_symbolic(d):
                    raise UnsupportedError(
                        f"{op}: '{arg}' contains a symbolic value; while a program is being "
                        f"built, '{arg}' must be Python ints (use -1 for a dynamic dimension "
                        f"where {op} allows it)")
                raise InvalidTypeError(f"{op}: '{arg}' must contain ints, got "
                                       f"{type(d).__name__} in {shape!r}")
            out.append(int(d))
        return tuple(out)
    if _is_symbolic(shape):
        raise UnsupportedError(f"{op}: '{arg}' given as a symbolic tensor is not supported while "
                               f"building a program; pass a list of Python ints")
    raise InvalidTypeError(f"{op}: '{arg}' must be an int, a list of ints or an integer tensor, "
                           f"got {type(shape).__name__}")


def number_arg(v, arg):
    """A Python number from a number, a NumPy scalar or a one-element tensor (Paddle
    accepts all three for numeric arguments); errors name the argument."""
    if isinstance(v, (bool, int, float, complex)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (Tensor, np.ndarray)):
        if v.size != 1:
            raise InvalidArgumentError(f"'{arg}' given as a tensor must hold one element, got "
                                       f"shape {list(v.shape)}")
        return v.item() if isinstance(v, Tensor) else v.reshape(()).item()
    if _is_symbolic(v):
        raise UnsupportedError(f"'{arg}' is a symbolic tensor; while a program is being built "
                               f"it must be a Python number")
    raise InvalidTypeError(f"'{arg}' must be a number or a one-element tensor, got "
                           f"{type(v).__name__}")


def _int(v, arg, minimum=None):
    n = number_arg(v, arg)
    if isinstance(n, bool) or not isinstance(n, int):
        raise InvalidTypeError(f"'{arg}' must be an int, got {n!r}")
    if minimum is not None and n < minimum:
        raise InvalidArgumentError(f"'{arg}' must be >= {minimum}, got {n}")
    return n


def _dtype_or(d, default):
    return _dt.convert_dtype(d) if d is not None else default


def _check_nonneg(shape, op):
    for d in shape:
        if d < 0:
            raise InvalidArgumentError(f"{op}: shape {list(shape)} has a negative dimension")


def _check_fill(value, dtype):
    # NumPy would drop an imaginary part with a ComplexWarning
    if isinstance(value, complex) and dtype.kind != _dt._COMPLEX and value.imag != 0:
        raise InvalidTypeError(f"cannot fill a {dtype.name} tensor with the complex value "
                               f"{value!r}")


def _new(shape, dtype, like=None):
    """An uninitialised array on `like`'s device (NumPy when None or a NumPy scalar)."""
    if like is None or isinstance(like, np.generic):
        return np.empty(shape, dtype=dtype)
    return np.empty_like(like, shape=shape, dtype=dtype)


# ---------------------------------------------------------------- full
def _full_canon(attrs):
    a = dict(attrs)
    a["shape"] = as_shape(a["shape"], "full")
    fv = number_arg(a["fill_value"], "fill_value")
    a["fill_value"] = fv
    a["dtype"] = _dt.convert_dtype(_full_dtype(fv, a.get("dtype")))
    _check_fill(fv, a["dtype"])
    return a


def _full_dtype(fill_value, dtype):
    """Paddle: a bool fill gives bool, a complex fill complex, any other number the
    default float dtype (full(shape, 1) is float32), unless `dtype` is given."""
    if dtype is not None:
        return dtype
    if isinstance(fill_value, (bool, complex)):
        return _dt.scalar_dtype(fill_value)
    return _dt.get_default_dtype()


def _full_infer(shape=(), fill_value=0.0, dtype=None):
    _check_nonneg(shape, "full")
    return TensorType(shape, dtype)


def _full_ref(shape=(), fill_value=0.0, dtype=None):
    return np.full(shape, fill_value, dtype=dtype.np)


full_op = defop("full", (), {"shape": (), "fill_value": 0.0, "dtype": None},
                infer=_full_infer, reference=_full_ref, canon=_full_canon, promote=None,
                differentiable=False, family="creation", method=False,
                doc="A tensor of `shape` filled with `fill_value`.")


# ---------------------------------------------------------------- *_like
def _full_like_canon(attrs):
    fv = number_arg(attrs["fill_value"], "fill_value")
    d = attrs["dtype"]
    return {"fill_value": fv, "dtype": None if d is None else _dt.convert_dtype(d)}


def _full_like_infer(x, fill_value=0.0, dtype=None):
    d = dtype or x.dtype
    _check_fill(fill_value, d)
    return TensorType(x.shape, d)


def _full_like_ref(x, fill_value=0.0, dtype=None):
    d = dtype.np if dtype is not None else x.dtype
    _check_fill(fill_value, _dt.from_numpy(d))
    if isinstance(x, np.generic):
        return np.full((), fill_value, dtype=d)
    return np.full_like(x, fill_value, dtype=d)


full_like_op = defop("full_like", ("x",), {"fill_value": 0.0, "dtype": None},
                     infer=_full_like_infer, reference=_full_like_ref, canon=_full_like_canon,
                     promote=None, differentiable=False, family="creation", method=False,
                     doc="A tensor shaped like x filled with `fill_value` (x's dtype unless "
                         "`dtype`).")


# ---------------------------------------------------------------- cast / assign / device
def _cast_canon(attrs):
    return {"dtype": _dt.convert_dtype(attrs["dtype"])}


def _cast_infer(x, dtype=None):
    return TensorType(x.shape, dtype)


def _cast_ref(x, dtype=None):
    if x.dtype.kind == "c" and dtype.kind != _dt._COMPLEX:
        x = x.real  # Paddle keeps the real part (NumPy would warn)
    if dtype.kind == _dt._FLOAT and dtype.rank == 0 and x.dtype.kind in "fV":
        # float8: Paddle saturates out-of-range values to the largest finite one
        # (ml_dtypes would give NaN for e4m3fn and inf for e5m2); NaN stays NaN
        big = float(_dt.finfo(dtype).max)
        x = np.clip(x.astype(np.float32, copy=False), -big, big)
    return x.astype(dtype.np)


cast_op = defop("cast", ("x",), {"dtype": None}, infer=_cast_infer, reference=_cast_ref,
                canon=_cast_canon, promote=None, family="creation", aliases=("astype",),
                doc="Convert to another dtype (``x.astype(dtype)``); complex to real keeps the "
                    "real part.")


def _assign_ref(x):
    return x.copy()


assign_op = defop("assign", ("x",), infer=lambda x: x, reference=_assign_ref, promote=None,
                  family="creation", method="clone", aliases=(),
                  doc="A copy of `x` (``x.clone()``).")


def _to_device_ref(x, place="cpu"):
    p = _pl.parse_place(place)
    src = _pl.backend_of(x)
    if src.name == p.kind and (p.kind == "cpu" or src.device_index(x) == p.index):
        return x
    host = src.to_numpy(x)
    return _pl.get_backend(p.kind).asarray(host, p.index)


defop("to_device", ("x",), {"place": "cpu"}, infer=lambda x, place="cpu": x,
      reference=_to_device_ref, promote=None, family="creation", api=False, method=False,
      doc="Copy `x` to another device.")


# ---------------------------------------------------------------- ranges
def _arange_infer(start=0, end=None, step=1, dtype=None):
    n = int(max(0, np.ceil((end - start) / step)))
    return TensorType((n,), dtype)


def _arange_ref(start=0, end=None, step=1, dtype=None):
    return np.arange(start, end, step, dtype=dtype.np)


def _arange_canon(attrs):
    a = dict(attrs)
    for k in ("start", "end", "step"):
        if a[k] is not None:
            a[k] = number_arg(a[k], k)
    if a["end"] is None:
        a["start"], a["end"] = 0, a["start"]
    if a["step"] == 0:
        raise InvalidArgumentError("arange: 'step' must not be 0")
    d = a["dtype"]
    if d is None:
        vals = (a["start"], a["end"], a["step"])
        d = _dt.int64 if all(isinstance(v, (int, np.integer)) for v in vals) else \
            _dt.get_default_dtype()
    a["dtype"] = _dt.convert_dtype(d)
    return a


arange_op = defop("arange", (), {"start": 0, "end": None, "step": 1, "dtype": None},
                  infer=_arange_infer, reference=_arange_ref, canon=_arange_canon, promote=None,
                  differentiable=False, family="creation", method=False,
                  doc="Evenly spaced values in [start, end).")


def _space_canon(attrs):
    a = dict(attrs)
    for k in ("start", "stop", "base"):
        if k in a:
            v = number_arg(a[k], k)
            if isinstance(v, complex):
                raise InvalidTypeError(f"'{k}' must be a real number, got {v!r}")
            a[k] = float(v)
    a["num"] = _int(a["num"], "num", minimum=0)
    a["dtype"] = _dtype_or(a["dtype"], _dt.get_default_dtype())
    return a


def _space_infer(start=0.0, stop=1.0, num=0, base=10.0, dtype=None):
    # (shared by linspace and logspace; base matches logspace's default, unused here)
    return TensorType((num,), dtype)


def _linspace_values(start, stop, num):
    return np.linspace(start, stop, num, dtype=np.float64)


def _linspace_ref(start=0.0, stop=1.0, num=0, dtype=None):
    # computed in double precision and rounded once; integer dtypes truncate
    # toward zero as Paddle's kernel does
    return _linspace_values(start, stop, num).astype(dtype.np)


def _logspace_ref(start=0.0, stop=1.0, num=0, base=10.0, dtype=None):
    return np.power(base, _linspace_values(start, stop, num)).astype(dtype.np)


defop("linspace", (), {"start": 0.0, "stop": 1.0, "num": 0, "dtype": None},
      infer=_space_infer, reference=_linspace_ref, canon=_space_canon, promote=None,
      differentiable=False, family="creation", method=False,
      doc="`num` evenly spaced values from start to stop (both included).")
defop("logspace", (), {"start": 0.0, "stop": 1.0, "num": 0, "base": 10.0, "dtype": None},
      infer=_space_infer, reference=_logspace_ref, canon=_space_canon, promote=None,
      differentiable=False, family="creation", method=False,
      doc="`num` values spaced evenly on a log scale: base ** linspace(start, stop, num).")


# ---------------------------------------------------------------- eye / triangles
def _eye_canon(attrs):
    n = _int(attrs["num_rows"], "num_rows", minimum=0)
    m = attrs["num_columns"]
    m = n if m is None else _int(m, "num_columns", minimum=0)
    return {"num_rows": n, "num_columns": m,
            "dtype": _dtype_or(attrs["dtype"], _dt.get_default_dtype())}


def _eye_infer(num_rows=0, num_columns=None, dtype=None):
    return TensorType((num_rows, num_columns), dtype)


def _eye_ref(num_rows=0, num_columns=None, dtype=None):
    return np.eye(num_rows, num_columns, dtype=dtype.np)


defop("eye", (), {"num_rows": 0, "num_columns": None, "dtype": None}, infer=_eye_infer,
      reference=_eye_ref, canon=_eye_canon, promote=None, differentiable=False,
      family="creation", method=False,
      doc="A num_rows x num_columns matrix with ones on the diagonal.")


def _diagonal_canon(name):
    def canon(attrs):
        return {name: _int(attrs[name], name)}

    return canon


def _tri_infer(x, diagonal=0):
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"'x' must have at least 2 dimensions, got shape "
                                   f"{shp(x.shape)}")
    return x


def _tri_ref(fn):
    def ref(x, diagonal=0):
        if x.ndim < 2:
            raise InvalidArgumentError(f"'x' must have at least 2 dimensions, got shape "
                                       f"{list(x.shape)}")
        return fn(x, diagonal)

    return ref


defop("tril", ("x",), {"diagonal": 0}, infer=_tri_infer, reference=_tri_ref(np.tril),
      canon=_diagonal_canon("diagonal"), promote=None, family="creation", inplace=True,
      doc="The lower triangle of the last two dims (elements above `diagonal` zeroed).")
defop("triu", ("x",), {"diagonal": 0}, infer=_tri_infer, reference=_tri_ref(np.triu),
      canon=_diagonal_canon("diagonal"), promote=None, family="creation", inplace=True,
      doc="The upper triangle of the last two dims (elements below `diagonal` zeroed).")


def _tri_indices_canon(attrs):
    row = _int(attrs["row"], "row", minimum=0)
    col = attrs["col"]
    col = row if col is None else _int(col, "col", minimum=0)
    d = _dt.convert_dtype(attrs["dtype"])
    if d not in (_dt.int32, _dt.int64):
        raise InvalidTypeError(f"'dtype' must be int32 or int64, got {d.name}")
    return {"row": row, "col": col, "offset": _int(attrs["offset"], "offset"), "dtype": d}


def _tri_count(row, col, offset, lower):
    i = np.arange(row)
    per_row = np.clip(i + offset + 1, 0, col) if lower else col - np.clip(i + offset, 0, col)
    return int(per_row.sum())


def _tri_indices(lower):
    def infer(row=0, col=None, offset=0, dtype=_dt.int64):
        return TensorType((2, _tri_count(row, col, offset, lower)), dtype)

    def ref(row=0, col=None, offset=0, dtype=_dt.int64):
        fn = np.tril_indices if lower else np.triu_indices
        r, c = fn(row, offset, col)
        return np.stack([r, c]).astype(dtype.np)

    return infer, ref


_TRI_ATTRS = {"row": 0, "col": None, "offset": 0, "dtype": "int64"}
for _name, _lower in (("tril_indices", True), ("triu_indices", False)):
    _i, _r = _tri_indices(_lower)
    defop(_name, (), dict(_TRI_ATTRS), infer=_i, reference=_r, canon=_tri_indices_canon,
          promote=None, differentiable=False, family="creation", method=False,
          doc=f"The [2, N] (row, col) indices of the {'lower' if _lower else 'upper'} triangle "
              f"of a row x col matrix, row by row (col defaults to row).")


# ---------------------------------------------------------------- diagonals
def _diag_len(r, c, offset):
    if r == DYN or c == DYN:
        return DYN
    return max(0, min(r, c - offset) if offset >= 0 else min(r + offset, c))


def _diag_canon(attrs):
    a = {"offset": _int(attrs["offset"], "offset")}
    if "padding_value" in attrs:
        a["padding_value"] = number_arg(attrs["padding_value"], "padding_value")
    return a


def _diag_infer(x, offset=0, padding_value=0):
    nd = len(x.shape)
    if nd == 1:
        n = x.shape[0]
        n = DYN if n == DYN else n + abs(offset)
        _check_fill(padding_value, x.dtype)
        return TensorType((n, n), x.dtype)
    if nd == 2:
        return TensorType((_diag_len(x.shape[0], x.shape[1], offset),), x.dtype)
    raise InvalidArgumentError(f"'x' must be 1-D (build a matrix) or 2-D (take a diagonal), "
                               f"got shape {shp(x.shape)}")


def _embed_diagonal(x, offset, fill):
    """[..., n] -> [..., n+|offset|, n+|offset|] with x on the `offset` diagonal."""
    n = x.shape[-1]
    m = n + abs(offset)
    out = _new(x.shape[:-1] + (m, m), x.dtype, x)
    out[...] = fill
    i = np.arange(n)
    out[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return out


def _diag_ref(x, offset=0, padding_value=0):
    if x.ndim == 1:
        _check_fill(padding_value, _dt.from_numpy(x.dtype))
        return _embed_diagonal(x, offset, padding_value)
    if x.ndim == 2:
        return np.diagonal(x, offset).copy()
    raise InvalidArgumentError(f"'x' must be 1-D or 2-D, got shape {list(x.shape)}")


defop("diag", ("x",), {"offset": 0, "padding_value": 0}, infer=_diag_infer,
      reference=_diag_ref, canon=_diag_canon, promote=None, family="creation",
      doc="1-D x: a matrix with x on the `offset` diagonal (padding_value elsewhere); "
          "2-D x: its `offset` diagonal.")


def _diagflat_infer(x, offset=0):
    n = TensorType(x.shape, x.dtype).numel()
    n = DYN if n == DYN else n + abs(offset)
    return TensorType((n, n), x.dtype)


def _diagflat_ref(x, offset=0):
    return _embed_diagonal(x.reshape(-1), offset, 0)


defop("diagflat", ("x",), {"offset": 0}, infer=_diagflat_infer, reference=_diagflat_ref,
      canon=_diagonal_canon("offset"), promote=None, family="creation",
      doc="A matrix with the flattened x on the `offset` diagonal.")


def _diag_embed_canon(attrs):
    return {k: _int(attrs[k], k) for k in ("offset", "dim1", "dim2")}


def _diag_embed_dims(rank, dim1, dim2):
    d1 = norm_axis(dim1, rank, "dim1")
    d2 = norm_axis(dim2, rank, "dim2")
    if d1 == d2:
        raise InvalidArgumentError(f"'dim1' and 'dim2' must name different dimensions of the "
                                   f"rank-{rank} result, got {dim1} and {dim2}")
    return d1, d2


def _diag_embed_infer(input, offset=0, dim1=-2, dim2=-1):
    if len(input.shape) < 1:
        raise InvalidArgumentError("'input' must have at least 1 dimension, got a 0-D tensor")
    rank = len(input.shape) + 1
    d1, d2 = _diag_embed_dims(rank, dim1, dim2)
    n = input.shape[-1]
    m = DYN if n == DYN else n + abs(offset)
    batch = iter(input.shape[:-1])
    return TensorType([m if i in (d1, d2) else next(batch) for i in range(rank)], input.dtype)


def _diag_embed_ref(input, offset=0, dim1=-2, dim2=-1):
    if input.ndim < 1:
        raise InvalidArgumentError("'input' must have at least 1 dimension")
    d1, d2 = _diag_embed_dims(input.ndim + 1, dim1, dim2)
    out = _embed_diagonal(input, offset, 0)
    return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (d1, d2)))


defop("diag_embed", ("input",), {"offset": 0, "dim1": -2, "dim2": -1},
      infer=_diag_embed_infer, reference=_diag_embed_ref, canon=_diag_embed_canon,
      promote=None, family="creation",
      doc="Put the last dim of input on the `offset` diagonal of new 2-D planes spanning "
          "dims dim1 (rows) and dim2 (columns) of the result.")


# ---------------------------------------------------------------- complex from parts
def _parts_infer(names):
    def infer(a, b):
        d = _dt.promote_types(a.dtype, b.dtype)
        if d.kind == _dt._COMPLEX:
            raise InvalidTypeError(f"'{names[0]}' and '{names[1]}' must be real tensors, got "
                                   f"{a.dtype.name} and {b.dtype.name}")
        if d.kind < _dt._FLOAT:
            d = _dt.get_default_dtype()
        return TensorType(broadcast_shapes(a.shape, b.shape, names=names), complex_of(d))

    return infer


def _complex_parts(re, im):
    """A complex array from real and imaginary parts of one float dtype (kept exact:
    re + 1j * im would turn an infinite imaginary part into NaN + inf j)."""
    if re.dtype.kind == "c" or getattr(im, "dtype", re.dtype).kind == "c":
        raise InvalidTypeError("the parts must be real tensors")
    ct = np.complex128 if re.dtype == np.float64 else np.complex64
    like = re if not isinstance(re, np.generic) else (None if isinstance(im, np.generic)
                                                      else im)
    out = _new(np.broadcast_shapes(np.shape(re), np.shape(im)), ct, like)
    out.real = re
    out.imag = im
    return out


def _complex_ref(real, imag):
    return _complex_parts(real, imag)


def _polar_ref(abs, angle):
    return _complex_parts(abs * np.cos(angle), abs * np.sin(angle))


defop("complex", ("real", "imag"), infer=_parts_infer(("real", "imag")),
      reference=_complex_ref, to_float=True, family="creation", method=False,
      doc="real + imag * 1j from two real tensors (broadcast).")
defop("polar", ("abs", "angle"), infer=_parts_infer(("abs", "angle")), reference=_polar_ref,
      to_float=True, family="creation", method=False,
      doc="abs * (cos(angle) + sin(angle) * 1j) from two real tensors (broadcast).")


# ---------------------------------------------------------------- meshgrid
def _meshgrid_canon(attrs):
    ix = attrs["indexing"]
    if ix not in ("ij", "xy"):
        raise InvalidArgumentError(f"'indexing' must be 'ij' or 'xy', got {ix!r}")
    return {"indexing": ix}


def _grid_shape(sizes, indexing):
    shape = list(sizes)
    if indexing == "xy" and len(shape) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    return shape


def _grid_axis(i, n, indexing):
    if indexing == "xy" and n >= 2 and i < 2:
        return 1 - i
    return i


def _meshgrid_infer(xs, indexing="ij"):
    if not xs:
        raise InvalidArgumentError("needs at least one tensor")
    sizes = []
    for i, t in enumerate(xs):
        if len(t.shape) > 1:
            raise InvalidArgumentError(f"input {i} must be 0-D or 1-D, got shape {shp(t.shape)}")
        sizes.append(TensorType(t.shape, t.dtype).numel())
    shape = _grid_shape(sizes, indexing)
    return tuple(TensorType(shape, t.dtype) for t in xs)


def _meshgrid_ref(xs, indexing="ij"):
    for i, x in enumerate(xs):
        if x.ndim > 1:
            raise InvalidArgumentError(f"input {i} must be 0-D or 1-D, got shape "
                                       f"{list(x.shape)}")
    n = len(xs)
    shape = _grid_shape([x.size for x in xs], indexing)
    outs = []
    for i, x in enumerate(xs):
        view = [1] * n
        view[_grid_axis(i, n, indexing)] = x.size
        outs.append(np.broadcast_to(x.reshape(view), shape).copy())
    return tuple(outs)


meshgrid_op = defop("meshgrid", ("x*",), {"indexing": "ij"}, outputs=("out*",),
                    infer=_meshgrid_infer, reference=_meshgrid_ref, canon=_meshgrid_canon,
                    promote=None, family="creation", api=False, method=False,
                    doc="Coordinate grids from 1-D tensors.")


# ---------------------------------------------------------------- counters and queries
def _increment_canon(attrs):
    v = number_arg(attrs["value"], "value")
    if isinstance(v, complex):
        raise InvalidTypeError(f"'value' must be a real number, got {v!r}")
    return {"value": v}


def _increment_infer(x, value=1.0):
    n = TensorType(x.shape, x.dtype).numel()
    if n not in (1, DYN):
        raise InvalidArgumentError(f"'x' must hold exactly one element, got shape "
                                   f"{shp(x.shape)}")
    if x.dtype.kind == _dt._BOOL:
        raise InvalidTypeError("'x' must not be a bool tensor")
    return x


def _increment_ref(x, value=1.0):
    if x.size != 1:
        raise InvalidArgumentError(f"'x' must hold exactly one element, got shape "
                                   f"{list(x.shape)}")
    if x.dtype == np.bool_:
        raise InvalidTypeError("'x' must not be a bool tensor")
    return x + x.dtype.type(value)


increment_op = defop("increment", ("x",), {"value": 1.0}, infer=_increment_infer,
                     reference=_increment_ref, canon=_increment_canon, promote=None,
                     differentiable=False, family="creation",
                     doc="x + value for a one-element tensor (in place in eager mode).")


def _on_device_of(x, value, dtype):
    """`value` as an array of `dtype` on x's device (a CuPy array stays on its GPU)."""
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return np.asarray(value, dtype=dtype)
    return xp_of(x).asarray(value, dtype=dtype)


def _numel_ref(x):
    return _on_device_of(x, np.size(x), np.int64)


defop("numel", ("x",), infer=lambda x: TensorType((), _dt.int64), reference=_numel_ref,
      promote=None, differentiable=False, family="creation",
      doc="The number of elements, as a 0-D int64 tensor.")


def _shape_ref(input):
    return _on_device_of(input, np.shape(input), np.int64)


defop("shape", ("input",), infer=lambda input: TensorType((len(input.shape),), _dt.int64),
      reference=_shape_ref, promote=None, differentiable=False, family="creation",
      method=False, doc="The shape of input as a 1-D int64 tensor.")


def _is_empty_ref(x):
    return _on_device_of(x, np.size(x) == 0, np.bool_)


defop("is_empty", ("x",), infer=lambda x: TensorType((), _dt.bool_), reference=_is_empty_ref,
      promote=None, differentiable=False, family="creation",
      doc="True (a 0-D bool tensor) when x has no elements.")


