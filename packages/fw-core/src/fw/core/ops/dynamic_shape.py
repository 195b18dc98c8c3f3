"""Shapes known only at run time, while a program is being built.

Paddle's static programs take shapes that hold tensors — ``paddle.zeros([paddle.shape(x)[0],
4])``, ``x.reshape([b, -1, h, d])`` or ``cls_token.expand([b, -1, -1])`` with ``b =
paddle.shape(x)[0]`` — the usual way to write code for a dynamic batch. The ordinary
``full``, ``reshape`` and ``expand`` ops keep their shape in an attribute (Python ints),
so for those calls the public functions build a 1-D int64 shape tensor and emit the
ops here instead:

``full_dyn(shape, fill_value, dtype, static_shape)``
    ``shape`` (1-D integer tensor) of non-negative sizes; ``static_shape`` holds what
    was known when the program was built (a Python int, or -1 for an entry computed
    at run time) and gives the result type; the kernel checks the run-time sizes
    against it.
``expand_dyn(x, shape, static_shape)``
    expand() to a run-time shape: -1 keeps x's dimension; in ``static_shape`` -2
    (`RUNTIME`) marks the sizes known only at run time (-1 already means "keep").
    Differentiable in x (the gradient is summed back over the broadcast dims).
``arange_dyn(start, end, step, dtype)``
    arange() whose bounds are 0-D tensors (``paddle.arange(paddle.shape(ids)[1])``, the
    position ids of a sequence model): a 1-D result of run-time length.
``reshape_dyn(x, shape, static_shape)``
    Paddle's reshape semantics per entry of the run-time ``shape`` (0 keeps x's
    dimension, one -1 is inferred); differentiable in x (the gradient is
    ``reshape_dyn`` of the output gradient to ``shape(x)``).

Eagerly nothing routes here: tensors in shapes are read as numbers (see
`creation.as_shape`); the ops still run eagerly, which the op records use.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value
from fw.core.ir.core import _state as _build
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import shp
from fw.core.ops._registry import defop
from fw.core.ops._shape_np import _reshape_dims

__all__ = ["is_symbolic", "has_symbolic", "shape_tensor", "RUNTIME"]

#: expand_dyn's static_shape marker of a size known only at run time
RUNTIME = -2


def is_symbolic(v) -> bool:
    """An IR value (as opposed to a Tensor or a Python number)."""
    return type(v) is Value


def has_symbolic(shape) -> bool:
    """Whether a shape argument holds IR values (or is one). Values exist only while a
    program is being built (a builder, or static mode's implicit one), so eager calls
    answer with two attribute reads."""
    if _build.builder is None and _build.implicit is None:
        return False
    if type(shape) is Value:
        return True
    return isinstance(shape, (list, tuple)) and any(is_symbolic(d) for d in shape)


def shape_tensor(shape, op, marker=DYN):
    """(a 1-D int64 Value of the sizes, the static shape: ints, `marker` where symbolic)."""
    from fw.core.ops._api import call

    if is_symbolic(shape):
        t = shape.type
        if len(t.shape) != 1 or t.shape[0] == DYN or t.dtype.kind != _dt._INT:
            raise InvalidTypeError(f"{op}: 'shape' given as a tensor must be a 1-D integer "
                                   f"tensor of static length, got {t}")
        return call("cast", shape, dtype=_dt.int64), (marker,) * t.shape[0]
    parts, static = [], []
    for d in shape:
        if is_symbolic(d):
            t = d.type
            if t.dtype.kind != _dt._INT or len(t.shape) > 1 or (t.shape and t.shape[0] != 1):
                raise InvalidTypeError(f"{op}: each tensor in 'shape' must be one integer, got "
                                       f"{t}")
            parts.append(call("reshape", call("cast", d, dtype=_dt.int64), shape=[1]))
            static.append(marker)
        else:
            d = int(d.item()) if hasattr(d, "item") else d
            if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
                raise InvalidTypeError(f"{op}: 'shape' must contain ints or integer tensors, "
                                       f"got {type(d).__name__}")
            parts.append(call("full", shape=[1], fill_value=int(d), dtype=_dt.int64))
            static.append(int(d))
    return call("concat", parts, axis=0), tuple(static)


def _sizes(shape, op):
    a = np.asarray(shape)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise InvalidTypeError(f"{op}: 'shape' must be a 1-D integer tensor, got "
                               f"{a.dtype}{list(a.shape)}")
    return [int(v) for v in a]


def _check_static(sizes, static, op):
    if len(sizes) != len(static) or any(s not in (DYN, -1, 0, RUNTIME) and s != v
                                        for v, s in zip(sizes, static)):
        raise InvalidArgumentError(f"{op}: the run-time shape {sizes} does not match the "
                                   f"shape {list(static)} the program was built with")


def _or_error(fn, message):
    """fn(), with NumPy's ValueError (sizes that do not fit) turned into `message`."""
    try:
        return fn()
    except ValueError:
        raise InvalidArgumentError(message) from None


def _shape_type(shape, static, op):
    if len(shape.shape) != 1 or shape.dtype.kind != _dt._INT:
        raise InvalidTypeError(f"{op}: 'shape' must be a 1-D integer tensor, got {shape}")
    if shape.shape[0] != DYN and shape.shape[0] != len(static):
        raise InvalidArgumentError(f"{op}: 'shape' has {shape.shape[0]} entries but "
                                   f"static_shape has {len(static)}")


# ---------------------------------------------------------------- full_dyn
def _fd_canon(attrs):
    a = dict(attrs)
    a["dtype"] = _dt.convert_dtype(a["dtype"] if a["dtype"] is not None
                                   else _dt.get_default_dtype())
    a["static_shape"] = tuple(int(d) for d in a["static_shape"])
    return a


def _fd_infer(shape, fill_value=0.0, dtype=None, static_shape=()):
    _shape_type(shape, static_shape, "full_dyn")
    if any(d < DYN for d in static_shape):
        raise InvalidArgumentError(f"full_dyn: negative size in {list(static_shape)}")
    return TensorType(static_shape, dtype)


def _fd_ref(shape, fill_value=0.0, dtype=None, static_shape=()):
    sizes = _sizes(shape, "full_dyn")
    if any(v < 0 for v in sizes):
        raise InvalidArgumentError(f"full_dyn: the run-time shape {sizes} has a negative size")
    _check_static(sizes, static_shape, "full_dyn")
    return np.full(sizes, fill_value, dtype=dtype.np)


defop("full_dyn", ("shape",), {"fill_value": 0.0, "dtype": None, "static_shape": ()},
      infer=_fd_infer, reference=_fd_ref, canon=_fd_canon, promote=None, differentiable=False,
      family="creation", api=False, method=False,
      doc="full() whose shape is a run-time 1-D integer tensor (see ops/dynamic_shape.py).")


# ---------------------------------------------------------------- reshape_dyn
def _rd_canon(attrs):
    return {"static_shape": tuple(int(d) for d in attrs["static_shape"])}


def _rd_infer(x, shape, static_shape=()):
    _shape_type(shape, static_shape, "reshape_dyn")
    out = []
    for i, d in enumerate(static_shape):
        if d == 0:
            if i >= len(x.shape):
                raise InvalidArgumentError(f"reshape_dyn: shape {list(static_shape)} uses 0 at "
                                           f"position {i} but x has rank {len(x.shape)}")
            out.append(x.shape[i])
        elif d >= 0:
            out.append(d)
        else:
            out.append(DYN)
    return TensorType(out, x.dtype)


def _rd_ref(x, shape, static_shape=()):
    sizes = _sizes(shape, "reshape_dyn")
    _check_static(sizes, static_shape, "reshape_dyn")
    try:
        _reshape_dims(tuple(sizes))
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"reshape_dyn: {e}") from None
    tgt = [x.shape[i] if d == 0 and i < x.ndim else d for i, d in enumerate(sizes)]
    return _or_error(lambda: np.reshape(x, tgt), f"reshape_dyn: cannot reshape x of shape "
                     f"{shp(x.shape)} ({x.size} elements) to {sizes}")


defop("reshape_dyn", ("x", "shape"), {"static_shape": ()}, infer=_rd_infer, reference=_rd_ref,
      canon=_rd_canon, promote=None, family="shape", api=False, method=False,
      doc="reshape() to a run-time 1-D integer shape tensor (see ops/dynamic_shape.py).")


# ---------------------------------------------------------------- expand_dyn
def _ed_infer(x, shape, static_shape=()):
    from fw.core.ops.shape import _expand_shape

    _shape_type(shape, static_shape, "expand_dyn")
    lead = len(static_shape) - len(x.shape)
    target = []  # expand_as's spelling: -1 (DYN) is a size known at run time
    for i, t in enumerate(static_shape):
        if t == -1:  # keep x's dimension
            if i < lead:
                raise InvalidArgumentError(f"expand_dyn: -1 in the target shape at a new "
                                           f"leading dimension {i}")
            target.append(x.shape[i - lead])
        elif t == RUNTIME:
            target.append(DYN)
        elif t < 0:
            raise InvalidArgumentError(f"expand_dyn: negative size in {list(static_shape)}")
        else:
            target.append(t)
    return TensorType(_expand_shape(x.shape, target, keep=False), x.dtype)


def _ed_ref(x, shape, static_shape=()):
    sizes = _sizes(shape, "expand_dyn")
    _check_static(sizes, static_shape, "expand_dyn")
    lead = len(sizes) - x.ndim
    tgt = [x.shape[i - lead] if v == -1 and i >= lead else v for i, v in enumerate(sizes)]
    return _or_error(lambda: np.broadcast_to(x, tgt).copy(), f"expand_dyn: x with shape "
                     f"{shp(x.shape)} cannot be expanded to {sizes}")


defop("expand_dyn", ("x", "shape"), {"static_shape": ()}, infer=_ed_infer, reference=_ed_ref,
      canon=_rd_canon, promote=None, family="shape", api=False, method=False,
      doc="expand() to a run-time 1-D integer shape tensor (see ops/dynamic_shape.py).")


# ---------------------------------------------------------------- arange_dyn
def _ad_canon(attrs):
    return {"dtype": _dt.convert_dtype(attrs["dtype"] if attrs["dtype"] is not None
                                       else _dt.int64)}


def _ad_infer(start, end, step, dtype=None):
    for t, n in ((start, "start"), (end, "end"), (step, "step")):
        if len(t.shape) > 1 or (t.shape and t.shape[0] != 1) or t.dtype.kind > _dt._FLOAT:
            raise InvalidTypeError(f"arange_dyn: '{n}' must be one real number, got {t}")
    return TensorType((DYN,), dtype)


def _ad_ref(start, end, step, dtype=None):
    vals = []
    for v, n in ((start, "start"), (end, "end"), (step, "step")):
        a = np.asarray(v)
        if a.size != 1 or a.ndim > 1 or a.dtype.kind not in "iuf":
            raise InvalidTypeError(f"arange_dyn: '{n}' must be one real number, got "
                                   f"{a.dtype}{list(a.shape)}")
        vals.append(a.reshape(-1)[0].item())
    s, e, d = vals
    if d == 0:
        raise InvalidArgumentError("arange_dyn: 'step' must not be 0")
    return np.arange(s, e, d, dtype=dtype.np)


defop("arange_dyn", ("start", "end", "step"), {"dtype": None}, infer=_ad_infer,
      reference=_ad_ref, canon=_ad_canon, promote=None, differentiable=False,
      family="creation", api=False, method=False,
      doc="arange() with run-time bounds (see ops/dynamic_shape.py).")


def arange(start, end, step, dtype):
    """Emit arange_dyn for bounds of which some are IR values (the others numbers)."""
    from fw.core.ops._api import call

    vals = (start, end, step)
    if dtype is None:  # Paddle: integer bounds give int64, any float the default float
        floats = any((v.type.dtype.kind >= _dt._FLOAT) if is_symbolic(v) else
                     isinstance(v, float) for v in vals)
        dtype = _dt.get_default_dtype() if floats else _dt.int64
    dtype = _dt.convert_dtype(dtype)
    ins = [call("cast", v, dtype=dtype) if is_symbolic(v) else
           call("full", shape=[], fill_value=v, dtype=dtype) for v in vals]
    return call("arange_dyn", *ins, dtype=dtype)
