"""Creation ops: full, arange, … and the casts/copies every other family needs."""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core import place as _pl
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import TensorType
from fw.core.ops._api import public
from fw.core.ops._registry import defop
from fw.core.tensor import Tensor, to_tensor

__all__ = ["as_shape"]


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
                if hasattr(d, "type") and hasattr(d, "owner"):
                    from fw.core.errors import UnsupportedError

                    raise UnsupportedError(
                        f"{op}: '{arg}' contains a symbolic value; while a program is being "
                        f"built, '{arg}' must be Python ints (use -1 for a dynamic dimension "
                        f"where {op} allows it)")
                raise InvalidTypeError(f"{op}: '{arg}' must contain ints, got "
                                       f"{type(d).__name__} in {shape!r}")
            out.append(int(d))
        return tuple(out)
    if hasattr(shape, "type") and hasattr(shape, "owner"):
        from fw.core.errors import UnsupportedError

        raise UnsupportedError(f"{op}: '{arg}' given as a symbolic tensor is not supported while "
                               f"building a program; pass a list of Python ints")
    raise InvalidTypeError(f"{op}: '{arg}' must be an int, a list of ints or an integer tensor, "
                           f"got {type(shape).__name__}")


def _check_nonneg(shape, op):
    for d in shape:
        if d < 0:
            raise InvalidArgumentError(f"{op}: shape {list(shape)} has a negative dimension")


# ---------------------------------------------------------------- full
def _full_canon(attrs):
    a = dict(attrs)
    a["shape"] = as_shape(a["shape"], "full")
    fv = a["fill_value"]
    if isinstance(fv, Tensor):
        fv = fv.item()
    elif isinstance(fv, np.generic):
        fv = fv.item()
    a["fill_value"] = fv
    d = a.get("dtype")
    if d is None:
        d = _dt.scalar_dtype(fv) if isinstance(fv, (bool, int, float, complex)) else \
            _dt.get_default_dtype()
        if isinstance(fv, (int,)) and not isinstance(fv, bool):
            d = _dt.get_default_dtype()  # Paddle: full(shape, 1) is float32 by default
    a["dtype"] = _dt.convert_dtype(d)
    return a


def _full_infer(shape=(), fill_value=0.0, dtype=None):
    _check_nonneg(shape, "full")
    return TensorType(shape, dtype)


def _full_ref(shape=(), fill_value=0.0, dtype=None):
    return np.full(shape, fill_value, dtype=dtype.np)


full_op = defop("full", (), {"shape": (), "fill_value": 0.0, "dtype": None},
                infer=_full_infer, reference=_full_ref, canon=_full_canon, promote=None,
                differentiable=False, family="creation", method=False,
                doc="A tensor of `shape` filled with `fill_value`.")


@public()
def full(shape, fill_value, dtype=None, name=None):
    """Tensor of ``shape`` filled with ``fill_value``; dtype defaults to the default
    float dtype for numbers and bool for bools (Paddle's rule)."""
    if isinstance(fill_value, bool) and dtype is None:
        dtype = _dt.bool_
    from fw.core.dispatch import invoke

    return invoke(full_op, [], {"shape": shape, "fill_value": fill_value, "dtype": dtype})


@public()
def zeros(shape, dtype=None, name=None):
    return full(shape, 0, dtype if dtype is not None else _dt.get_default_dtype())


@public()
def ones(shape, dtype=None, name=None):
    return full(shape, 1, dtype if dtype is not None else _dt.get_default_dtype())


@public()
def empty(shape, dtype=None, name=None):
    """Uninitialised in Paddle; fw returns zeros (cheap, and deterministic)."""
    return zeros(shape, dtype)


# ---------------------------------------------------------------- cast / assign / device
def _cast_canon(attrs):
    return {"dtype": _dt.convert_dtype(attrs["dtype"])}


def _cast_infer(x, dtype=None):
    return TensorType(x.shape, dtype)


def _cast_ref(x, dtype=None):
    return x.astype(dtype.np)


cast_op = defop("cast", ("x",), {"dtype": None}, infer=_cast_infer, reference=_cast_ref,
                canon=_cast_canon, promote=None, family="creation", aliases=("astype",),
                doc="Convert to another dtype (``x.astype(dtype)``).")


def _assign_ref(x):
    return x.copy()


defop("assign", ("x",), infer=lambda x: x, reference=_assign_ref, promote=None,
      family="creation", method="clone", aliases=(), doc="A copy of `x` (``x.clone()``).")


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


# ---------------------------------------------------------------- arange
def _arange_infer(start=0, end=None, step=1, dtype=None):
    n = int(max(0, np.ceil((end - start) / step)))
    return TensorType((n,), dtype)


def _arange_ref(start=0, end=None, step=1, dtype=None):
    return np.arange(start, end, step, dtype=dtype.np)


def _arange_canon(attrs):
    a = dict(attrs)
    for k in ("start", "end", "step"):
        if isinstance(a[k], Tensor):
            a[k] = a[k].item()
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


@public()
def to_tensor_(data, dtype=None, place=None, stop_gradient=True):  # pragma: no cover - alias
    return to_tensor(data, dtype, place, stop_gradient)
