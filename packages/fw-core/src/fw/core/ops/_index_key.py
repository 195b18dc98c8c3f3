"""Index keys of ``x[key]`` / ``x[key] = v``: encoding, NumPy keys and result shapes.

A key is encoded as a tuple of attribute-safe items, one per entry of the key,
so the ``getitem``/``setitem`` ops print and parse like any other op:

==========================  ===============================================
key entry                   encoded item
==========================  ===============================================
``3`` (an int, 0-D tensor)  ``3``
``None``                    ``none`` (a new axis of size 1)
``...``                     ``"..."``
``a:b:c``                   ``[a, b, c]`` (each an int, none, or ``"t"``)
a tensor, array or list     ``"t"``: the next tensor of the variadic input
``True``/``False``          ``"t"`` with a 0-D bool tensor (a 0-D mask)
==========================  ===============================================

``"t"`` inside a slice is a bound read from a one-element integer tensor (a
symbolic loop variable, say). Integer index tensors are advanced indices,
boolean ones masks, with NumPy's semantics for both: `result_shape` is the
shape algebra of NumPy indexing over static-or-dynamic (-1) dimensions.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN
from fw.core.ops._infer import broadcast_shapes, shp
from fw.core.tensor import Tensor

__all__ = ["encode", "numpy_key", "result_shape", "check_value_shape", "describe_range_error",
           "BASIC_TYPES"]

_NONE = type(None)
_ELL = type(Ellipsis)
# entries NumPy indexes with directly (basic indexing; the result is a view)
BASIC_TYPES = frozenset({int, slice, _NONE, _ELL})
NONE_TYPE = _NONE
ELLIPSIS_TYPE = _ELL


# ---------------------------------------------------------------- encoding
def _bound(b, tensors, op):
    if b is None or type(b) is int:
        return b
    if isinstance(b, np.integer):
        return int(b)
    if isinstance(b, Tensor):
        if b.size != 1 or b.dtype.kind != _dt._INT:
            raise InvalidTypeError(f"{op}: a slice bound given as a tensor must hold one "
                                   f"integer, got {b.dtype.name}{b.shape}")
        return int(b.item())
    if type(b) is Value:
        if b.dtype.kind != _dt._INT or b.type.numel() not in (1, DYN):
            raise InvalidTypeError(f"{op}: a slice bound given as a tensor must hold one "
                                   f"integer, got {b.type}")
        tensors.append(b)
        return "t"
    if isinstance(b, bool):
        return int(b)
    raise InvalidTypeError(f"{op}: slice bounds must be integers or None, got "
                           f"{type(b).__name__} {b!r}")


def _list_index(k, op):
    """A Python list (or tuple inside a key) as an index array: int64 or bool."""
    if k and all(type(e) is int for e in k):  # the common case: a flat list of ints
        return np.array(k, dtype=np.int64)
    if any(type(e) is Value for e in _flat(k)):
        raise UnsupportedError(f"{op}: a list holding symbolic tensors cannot be used as an "
                               f"index while a program is being built; stack them first")
    from fw.core.tensor import _nested_tensors_to_numpy

    try:
        arr = np.asarray(_nested_tensors_to_numpy(k))
    except ValueError as e:
        raise InvalidArgumentError(f"{op}: the list index {k!r} is ragged: {e}") from None
    if arr.size == 0 and arr.dtype.kind == "f":
        return np.zeros_like(arr, order="C", dtype=np.int64)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    raise InvalidTypeError(f"{op}: a list used as an index must hold integers or bools, got "
                           f"{k!r}")


def _flat(k):
    for e in k:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def _bool_scalar(b):
    """A 0-D bool operand: an array eagerly, a ``full`` constant while building (so the
    program needs no captured constant for it)."""
    from fw.core.ir.core import _state

    if _state.builder is None:
        return np.asarray(b, dtype=np.bool_)
    from fw.core.dispatch import invoke
    from fw.core.ops._registry import OPS

    return invoke(OPS["full"], [], {"shape": (), "fill_value": b, "dtype": _dt.bool_})


def encode(key, op="getitem"):
    """``key`` -> (encoded tuple, list of index tensors/arrays in order)."""
    items = key if type(key) is tuple else (key,)
    enc = []
    tensors = []
    for k in items:
        tk = type(k)
        if tk is int:
            enc.append(k)
        elif k is None:
            enc.append(None)
        elif tk is slice:
            enc.append((_bound(k.start, tensors, op), _bound(k.stop, tensors, op),
                        _bound(k.step, tensors, op)))
        elif k is Ellipsis:
            enc.append("...")
        elif tk is bool or tk is np.bool_:
            # a 0-D boolean mask (a tensor input, not an attribute: True == 1 as a key)
            enc.append("t")
            tensors.append(_bool_scalar(bool(k)))
        elif isinstance(k, np.integer):
            enc.append(int(k))
        elif isinstance(k, Tensor):
            kind = k.dtype.kind
            if kind == _dt._INT and k.ndim == 0:
                enc.append(int(k.item()))  # a 0-D integer tensor indexes like an int
            elif kind in (_dt._INT, _dt._BOOL):
                enc.append("t")
                tensors.append(k)
            else:
                raise InvalidTypeError(f"{op}: tensors used as indices must be integer or bool, "
                                       f"got {k.dtype.name}")
        elif tk is Value:
            if k.dtype.kind not in (_dt._INT, _dt._BOOL):
                raise InvalidTypeError(f"{op}: tensors used as indices must be integer or bool, "
                                       f"got {k.type}")
            enc.append("t")
            tensors.append(k)
        elif isinstance(k, np.ndarray):
            if k.dtype.kind == "b":
                enc.append("t")
                tensors.append(k)
            elif k.dtype.kind in "iu":
                if k.ndim == 0:
                    enc.append(int(k))
                else:
                    enc.append("t")
                    tensors.append(k.astype(np.int64, copy=False))
            else:
                raise InvalidTypeError(f"{op}: arrays used as indices must be integer or bool, "
                                       f"got {k.dtype}")
        elif isinstance(k, (list, tuple)):
            enc.append("t")
            tensors.append(_list_index(k, op))
        else:
            raise InvalidTypeError(
                f"{op}: unsupported index entry {k!r} of type {tk.__name__}; use ints, slices, "
                f"None, ..., bool, or integer/bool tensors, arrays or lists")
    return tuple(enc), tensors


def encode_basic(key):
    """`encode` for keys of `BASIC_TYPES` entries only (no tensors)."""
    items = key if type(key) is tuple else (key,)
    out = []
    for k in items:
        tk = type(k)
        if tk is slice:
            out.append((_plain(k.start), _plain(k.stop), _plain(k.step)))
        elif k is Ellipsis:
            out.append("...")
        else:
            out.append(k if k is None else int(k))
    return tuple(out)


def _plain(b):
    return b if b is None or type(b) is int else int(b)


# ---------------------------------------------------------------- NumPy keys
_KEYS: dict = {}  # encoded -> (NumPy key or template, positions of tensor slots)


def _template(index):
    key = []
    slots = []
    for e in index:
        if e is None or type(e) is int:
            key.append(e)
        elif type(e) is tuple:
            if "t" in e:
                slots.append((len(key), "s"))
                key.append(e)
            else:
                key.append(slice(*e))
        elif e == "...":
            key.append(Ellipsis)
        elif e == "t":
            slots.append((len(key), "t"))
            key.append(None)
        else:
            raise InvalidArgumentError(f"unknown index item {e!r} in the encoded index "
                                       f"{list(index)}")
    return tuple(key), tuple(slots)


def numpy_key(index, arrays):
    """The NumPy key for encoded `index` with the index arrays filled in."""
    t = _KEYS.get(index)
    if t is None:
        t = _template(index)
        if len(_KEYS) < 4096:
            _KEYS[index] = t
    key, slots = t
    if not slots:
        return key
    key = list(key)
    it = iter(arrays)
    for pos, kind in slots:
        if kind == "t":
            key[pos] = next(it)
        else:
            key[pos] = slice(*[int(np.asarray(next(it)).reshape(-1)[0]) if b == "t" else b
                               for b in key[pos]])
    return tuple(key)


# ---------------------------------------------------------------- shapes
def _slice_len(d, s, e, st):
    if st == 0:
        raise InvalidArgumentError("slice step cannot be zero")
    if d == DYN or "t" in (s, e, st):
        return DYN
    return len(range(*slice(s, e, st).indices(d)))


def _parse(index, types):
    """Encoded items -> (kind, payload) with the tensor types attached."""
    it = iter(types)
    items = []
    n_ell = 0
    consumed = 0
    for e in index:
        if e is None:
            items.append(("new", None))
        elif type(e) is int:
            items.append(("int", e))
            consumed += 1
        elif type(e) is tuple:
            if len(e) != 3:
                raise InvalidArgumentError(f"a slice item must be [start, stop, step], got "
                                           f"{list(e)}")
            for b in e:
                if b == "t":
                    t = next(it, None)
                    if t is None:
                        raise InvalidArgumentError("the index names more tensors than given")
                    if t.dtype.kind != _dt._INT or t.numel() not in (1, DYN):
                        raise InvalidTypeError(f"a slice bound tensor must hold one integer, "
                                               f"got {t}")
            items.append(("slice", e))
            consumed += 1
        elif e == "...":
            n_ell += 1
            items.append(("ell", None))
        elif e == "t":
            t = next(it, None)
            if t is None:
                raise InvalidArgumentError("the index names more tensors than given")
            if t.dtype.kind == _dt._BOOL:
                items.append(("mask", tuple(t.shape)))
                consumed += len(t.shape)
            elif t.dtype.kind == _dt._INT:
                items.append(("arr", tuple(t.shape)))
                consumed += 1
            else:
                raise InvalidTypeError(f"tensors used as indices must be integer or bool, got "
                                       f"{t.dtype.name}")
        else:
            raise InvalidArgumentError(f"unknown index item {e!r}")
    if next(it, None) is not None:
        raise InvalidArgumentError("more index tensors were given than the index uses")
    if n_ell > 1:
        raise InvalidArgumentError("an index can only have a single ellipsis ('...')")
    return items, consumed


def result_shape(shape, index, types) -> tuple:
    """The shape of ``x[key]`` for x of `shape` (dims may be -1); raises
    InvalidArgumentError for out-of-range ints, too many indices and masks that do
    not match x."""
    items, consumed = _parse(index, types)
    nd = len(shape)
    if consumed > nd:
        raise InvalidArgumentError(f"too many indices for x of shape {shp(shape)}: the index "
                                   f"{_show(index)} covers {consumed} dimensions")
    adv = any(k in ("arr", "mask") for k, _ in items)
    pieces = []  # (is_advanced, dims)
    j = 0
    for kind, p in items:
        if kind == "new":
            pieces.append((False, (1,)))
        elif kind == "ell":
            n = nd - consumed
            pieces.append((False, tuple(shape[j:j + n])))
            j += n
        elif kind == "slice":
            pieces.append((False, (_slice_len(shape[j], *p),)))
            j += 1
        elif kind == "int":
            d = shape[j]
            if d != DYN and not -d <= p < d:
                raise InvalidArgumentError(
                    f"index {p} is out of range for axis {j} of x with shape {shp(shape)} "
                    f"(valid range [{-d}, {d - 1}])" if d else
                    f"index {p} is out of range for axis {j} of x with shape {shp(shape)}, "
                    f"which is empty")
            if adv:
                pieces.append((True, ()))
            j += 1
        elif kind == "arr":
            pieces.append((True, p))
            j += 1
        elif kind == "mask":
            for m, (dm, dx) in enumerate(zip(p, shape[j:j + len(p)])):
                if dm != dx and DYN not in (dm, dx):
                    raise InvalidArgumentError(
                        f"the boolean mask of shape {shp(p)} does not match x's shape "
                        f"{shp(shape)} at axis {j + m} ({dm} vs {dx})")
            pieces.append((True, (DYN,)))
            j += len(p)
    pieces.append((False, tuple(shape[j:])))
    if not adv:
        return tuple(d for _, dims in pieces for d in dims)
    adv_shapes = [dims for a, dims in pieces if a]
    try:
        ashape = broadcast_shapes(*adv_shapes, names=[f"index tensor {i}" for i in
                                                      range(len(adv_shapes))])
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"the index tensors cannot be broadcast together: {e}") \
            from None
    where = [i for i, (a, _) in enumerate(pieces) if a]
    if where[-1] - where[0] + 1 == len(where):  # adjacent: the result dims stay in place
        before = [d for a, dims in pieces[:where[0]] for d in dims]
        after = [d for a, dims in pieces[where[-1] + 1:] for d in dims]
        return tuple(before) + tuple(ashape) + tuple(after)
    return tuple(ashape) + tuple(d for a, dims in pieces if not a for d in dims)


def check_value_shape(region, vshape):
    """NumPy's assignment rule: the value broadcasts to the indexed region (extra
    leading dimensions of size 1 are allowed)."""
    vs = list(vshape)
    while len(vs) > len(region) and vs[0] in (1, DYN):
        vs.pop(0)
    ok = len(vs) <= len(region)
    if ok:
        for v, r in zip(reversed(vs), reversed(region)):
            if v != r and v != 1 and DYN not in (v, r):
                ok = False
                break
    if not ok:
        raise InvalidArgumentError(f"the value of shape {shp(vshape)} cannot be broadcast to "
                                   f"the indexed region of shape {shp(region)}")


def _show(index) -> str:
    parts = []
    for e in index:
        if e is None:
            parts.append("None")
        elif e == "...":
            parts.append("...")
        elif e == "t":
            parts.append("<tensor>")
        elif type(e) is tuple:
            s = ":".join("" if b is None else ("<tensor>" if b == "t" else str(b)) for b in e)
            parts.append(s[:-1] if s.endswith(":") and e[2] is None else s)
        else:
            parts.append(repr(e))
    return "[" + ", ".join(parts) + "]"


def describe_range_error(op, shape, index, arrays, exc) -> Exception:
    """A clear error for an out-of-range index found by NumPy (the offending index
    tensor, its values, the axis and the valid range)."""
    types = [_ArrType(a) for a in arrays]
    try:  # structural problems (masks that do not match, too many indices) first
        result_shape(shape, index, types)
    except (InvalidArgumentError, InvalidTypeError) as e:
        return type(e)(f"{op}: {e}")
    items, consumed = _parse(index, types)
    nd = len(shape)
    j = 0
    t = 0
    for kind, p in items:
        if kind == "ell":
            j += nd - consumed
        elif kind == "slice":
            t += sum(1 for b in p if b == "t")
            j += 1
        elif kind == "int":  # an int out of range: result_shape above raised already
            j += 1
        elif kind == "arr":
            a = np.asarray(arrays[t])
            d = shape[j]
            if a.size and (a.min() < -d or a.max() >= d):
                return InvalidArgumentError(
                    f"{op}: index tensor {t} (shape {list(a.shape)}) holds values in "
                    f"[{a.min()}, {a.max()}] but axis {j} of x with shape {shp(shape)} has "
                    f"size {d} (valid range [{-d}, {d - 1}])")
            t += 1
            j += 1
        elif kind == "mask":
            t += 1
            j += len(p)
    return InvalidArgumentError(f"{op}: invalid index {_show(index)} for x of shape "
                                f"{shp(shape)}: {exc}")


class _ArrType:
    """Just enough of a TensorType to parse an index against concrete arrays."""

    __slots__ = ("shape", "dtype")

    def __init__(self, a):
        a = np.asarray(a)
        self.shape = a.shape
        self.dtype = _dt.from_numpy(a.dtype)

    def numel(self):
        return int(np.prod(self.shape))
