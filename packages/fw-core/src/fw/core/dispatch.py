"""Calling an op: eager on tensors, or emitting IR on symbolic values.

`invoke(op, args, attrs)` is the one general entry. When a program builder is
active (fw.core.ir.trace, fw.static, fw.jit.to_static) it emits an operation;
otherwise it runs the op's kernel for the inputs' device:

1. promotion: inputs listed in ``op.promote_idx`` (tensors and Python scalars)
   are brought to one dtype by the promotion table — a tensor through the
   ``cast`` op, so the cast is differentiable; a scalar becomes a NumPy scalar;
2. the kernel runs on the arrays (``op.kernels[backend]`` or the reference);
3. the arrays are wrapped as Tensors; if grad mode is on and an input requires
   grad, fw-autograd's recorder builds the tape node.

`infer` is not called on success — the arrays carry shape and dtype. When a
kernel raises, `infer` is called to give the user a precise message.

`fw.core.ops._api` builds faster specialised entry points for the hottest ops
(binary/unary elementwise) that fall back to `invoke` for anything unusual.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core import place as _pl
from fw.core._grad_hooks import grad_state
from fw.core.errors import (
    FwError,
    InvalidArgumentError,
    InvalidTypeError,
    UnsupportedError,
    with_op_name,
)
from fw.core.ir.core import Value
from fw.core.ir.core import _state as _build
from fw.core.ir.types import TensorType
from fw.core.tensor import Tensor, wrap

__all__ = ["invoke", "grad_state", "amp_state", "dist_state", "observe_state", "target_dtype",
           "explain_failure", "assign_inplace"]

_ndarray = np.ndarray
_generic = np.generic
_BY_NP = _dt._BY_NP
_BY_ARRAY_TYPE = _pl._BY_ARRAY_TYPE
_SCALARS = (bool, int, float, complex)


class _AmpState:
    """fw.amp fills this in: while `enabled`, `cast_args(op, args) -> args` may cast
    the inputs of an op (auto_cast's white/black lists) before it runs or is emitted.
    Ops on the specialised fast paths (attribute-free elementwise ops) keep their
    input dtypes, which is what auto_cast wants for them."""

    __slots__ = ("enabled", "cast_args")

    def __init__(self):
        self.enabled = False
        self.cast_args = None


amp_state = _AmpState()


class _DistState:
    """fw.distributed's auto-parallel fills this in once a distributed tensor exists:
    while `active`, `run(op, args, attrs)` gets every op that reaches `invoke` first and
    returns its result, or NotImplemented when no input is a distributed tensor.
    Distributed tensors keep no array in ``_data``, so the fast lanes (which need an
    ndarray) always hand them to `invoke`."""

    __slots__ = ("active", "run")

    def __init__(self):
        self.active = False
        self.run = None


dist_state = _DistState()


class _ObserveState:
    """fw.profiler and ``FLAGS_check_nan_inf`` fill this in (fw.core._observe): while
    `hook` is not None every eager op goes through `invoke` (the fast lanes of
    fw.core.ops._api test `hook is None` first) and `hook(op, args, attrs, run)` runs
    it, where `run(op, args, attrs)` is the plain dispatcher. With both off this is
    the one None check per op that observation costs."""

    __slots__ = ("hook",)

    def __init__(self):
        self.hook = None


observe_state = _ObserveState()
_CAST = None  # the cast OpDef, bound when the op table is loaded


def _dtype_of_arg(a):
    t = type(a)
    if t is Tensor or isinstance(a, Tensor):
        d = a._data.dtype
        return _BY_NP.get(d) or _dt.from_numpy(d)
    if t is Value:
        return a.type.dtype
    if isinstance(a, _ndarray):
        return _dt.from_numpy(a.dtype)
    if isinstance(a, _generic):
        return _dt.from_numpy(a.dtype)
    return None


def target_dtype(op, args):
    """The dtype the promoted inputs of `op` share, or None if none are tensors or
    scalars. Scalars are weak (see fw.core.dtypes)."""
    dts = []
    scalars = []
    var = op.variadic
    for i in op.promote_idx:
        if i >= len(args):
            continue
        a = args[i]
        items = a if i == var else (a,)
        for x in items:
            if x is None:
                continue
            d = _dtype_of_arg(x)
            if d is not None:
                dts.append(d)
            elif isinstance(x, _SCALARS):
                scalars.append(x)
            elif isinstance(x, (list, tuple)):
                dts.append(_dt.from_numpy(_list_array(x).dtype))
    if not dts and not scalars:
        return None
    out = _dt.result_type(*dts, *scalars)
    if op.to_float and out.kind < _dt._FLOAT:
        out = _dt.get_default_dtype()
    return out


def _list_array(x):
    from fw.core.tensor import to_tensor

    return to_tensor(x)._data


def _cast_tensor(t, dtype):
    return invoke(_CAST, [t], {"dtype": dtype})


def _scalar_as(v, dtype):
    return dtype.np.type(v)


class _SymbolicArgument(Exception):
    """Raised by the eager path when it meets a symbolic Value while an implicit
    builder (static mode) is installed; `invoke` then emits the op."""


def _symbolic_outside_builder(op):
    if _build.implicit is not None:
        raise _SymbolicArgument()
    raise UnsupportedError(
        f"{op.name}: got a symbolic tensor (an IR Value) but no program is being built; "
        f"symbolic values can only be used inside fw.core.ir.trace, fw.static.program_guard "
        f"or a fw.jit.to_static function")


def invoke(op, args, attrs):
    """Run `op` on `args` (aligned with op.inputs; the variadic slot is a list)."""
    if dist_state.active:
        r = dist_state.run(op, args, attrs)
        if r is not NotImplemented:
            return r
    if amp_state.enabled:
        args = amp_state.cast_args(op, args)
    if _build.builder is not None:
        return _build.builder.emit(op, args, attrs)
    if observe_state.hook is not None:  # profiler / FLAGS_check_nan_inf (fw.core._observe)
        return observe_state.hook(op, args, attrs, _run_eager)
    try:  # (the body of _run_eager, inlined: no extra call when nothing observes)
        return _eager(op, args, attrs)
    except _SymbolicArgument:  # static mode: a Value's op goes into its program
        return _build.implicit(op, args, attrs)


def _run_eager(op, args, attrs):
    try:
        return _eager(op, args, attrs)
    except _SymbolicArgument:  # static mode: a Value's op goes into its program
        return _build.implicit(op, args, attrs)


def _single_device(be) -> bool:
    """True when `be` has one device (every array of it is on the same place), so the
    fast lane needs no per-array device check; asked once per backend."""
    v = _SINGLE.get(be)
    if v is None:
        try:
            v = _SINGLE[be] = be.device_count() <= 1
        except Exception:  # noqa: BLE001 - a backend that cannot say: check every array
            v = _SINGLE[be] = False
    return v


_SINGLE: dict = {}


def _fast_eager(op, args, attrs):
    """The common case of `_eager` in one pass, or None for the general path: every
    input a Tensor (absent optional ones None), no variadic input, the promoted inputs
    already of one dtype (so no cast; inexact if the op computes in floating point),
    and every array of one type whose backend has a single device (or the host, with
    at least one array that is not 0-d). This is the per-op cost of a train step on
    a GPU (profiled with ci/gpu/step_overhead.py), so it does no place lookups, no
    promotion table and no list copies."""
    n = len(args)
    arrays = [None] * n
    need_grad = False
    t0 = dt = None
    prom = op.promote_idx
    for i in range(n):
        a = args[i]
        if a is None:
            if i not in op.optional:
                return None
            continue
        if not isinstance(a, Tensor):
            return None
        d = a._data
        if t0 is None:
            t0 = type(d)
        elif type(d) is not t0:
            return None
        if i in prom:
            if dt is None:
                dt = d.dtype
            elif d.dtype is not dt:
                return None
        arrays[i] = d
        if not a._sg:
            need_grad = True
    if t0 is None or (dt is not None and op.to_float and dt.kind not in "fc"):
        return None
    if dt is not None and dt not in _BY_NP:  # a foreign dtype: the general path says so
        return None
    if t0 is _ndarray:
        if len(_BY_ARRAY_TYPE) > 1 and all(x is None or x.ndim == 0 for x in arrays):
            return None  # 0-d host arrays go to the current device: the general path
        kern = op.kernels.get("cpu") or op.reference
    else:
        be = _BY_ARRAY_TYPE.get(t0)
        if be is None:
            return None
        if not _single_device(be):
            idx = be.device_index
            k0 = None
            for x in arrays:
                if x is not None:
                    k = idx(x)
                    if k0 is None:
                        k0 = k
                    elif k != k0:
                        return None  # the general path names both devices
        kern = op.kernels.get(be.name) or op.reference
    if op.canon is not None:
        attrs = op.canon(attrs)
    try:
        out = kern(*arrays, **attrs)
    except FwError as e:
        raise with_op_name(op.name, e) from None
    except Exception as e:  # numpy/kernel error: explain it in the user's terms
        raise explain_failure(op, args, attrs, e) from e
    if op.num_outputs == 1:
        r = wrap(out)
        if need_grad and op.differentiable and grad_state.enabled:
            grad_state.record(op, args, attrs, (r,))
        return r
    rs = tuple(wrap(o) for o in out)
    if need_grad and op.differentiable and grad_state.enabled:
        grad_state.record(op, args, attrs, rs)
    return rs


def _eager(op, args, attrs):
    if op.variadic < 0:
        r = _fast_eager(op, args, attrs)
        if r is not None:
            return r
    if op.canon is not None:
        attrs = op.canon(attrs)
    target = target_dtype(op, args) if op.promote_idx else None
    n = len(args)
    arrays = [None] * n
    need_grad = False
    first = None
    copied = False
    var = op.variadic
    for i in range(n):
        a = args[i]
        # the common case inline: a Tensor that needs no cast
        if isinstance(a, Tensor) and i != var:
            d = a._data
            if target is None or _BY_NP.get(d.dtype) is target or i not in op.promote_idx:
                arrays[i] = d
                if not a._sg:
                    need_grad = True
                if first is None:
                    first = d
                continue
        if not copied:
            args = list(args)
            copied = True
        promoted = target is not None and i in op.promote_idx
        if i == var:
            items = list(a)
            arrs = []
            for j, x in enumerate(items):
                x, arr, g = _convert(op, i, x, target if promoted else None)
                items[j] = x
                arrs.append(arr)
                need_grad = need_grad or g
                if first is None and arr is not None and not isinstance(arr, _generic):
                    first = arr
            args[i] = items
            arrays[i] = arrs
            continue
        if a is None:
            if i not in op.optional:
                raise InvalidArgumentError(f"{op.name}: argument '{op.input_names[i]}' is "
                                           f"required, got None")
            continue
        a, arr, g = _convert(op, i, a, target if promoted else None)
        args[i] = a
        arrays[i] = arr
        need_grad = need_grad or g
        if first is None and not isinstance(arr, _generic):
            first = arr
    if first is not None and type(first) is _ndarray:
        name = "cpu"
        be = None
        if len(_BY_ARRAY_TYPE) > 1:
            dev = _check_same_device(op, arrays, _pl.current_place())
            if dev.kind != "cpu":  # a 0-d host array came first; the op runs on dev
                be = _pl.get_backend(dev.kind)
                name = be.name
    elif first is not None:
        be = _BY_ARRAY_TYPE.get(type(first)) or _pl.backend_of(first)
        name = be.name
        _check_same_device(op, arrays)
    else:
        be = _pl.get_backend(_pl.current_place().kind)
        name = be.name
    kern = op.kernels.get(name) or op.reference
    try:
        out = kern(*arrays, **attrs)
    except FwError as e:
        raise with_op_name(op.name, e) from None
    except Exception as e:  # numpy/kernel error: explain it in the user's terms
        raise explain_failure(op, args, attrs, e) from e
    if first is None and name != "cpu":
        out = _move_outputs(out, be)
    if op.num_outputs == 1:
        r = wrap(out)
        if need_grad and op.differentiable and grad_state.enabled:
            grad_state.record(op, args, attrs, (r,))
        return r
    rs = tuple(wrap(o) for o in out)
    if need_grad and op.differentiable and grad_state.enabled:
        grad_state.record(op, args, attrs, rs)
    return rs


def _move_outputs(out, be):
    p = _pl.current_place()
    if isinstance(out, tuple):
        return tuple(be.asarray(np.asarray(o), p.index) for o in out)
    return be.asarray(np.asarray(out), p.index)


def _convert(op, i, a, target):
    """-> (arg as kept for autograd, array for the kernel, requires_grad)."""
    if isinstance(a, Tensor):
        if target is not None:
            d = a._data.dtype
            if (_BY_NP.get(d) or _dt.from_numpy(d)) is not target:
                a = _cast_tensor(a, target)
        return a, a._data, not a._sg
    if type(a) is Value:
        _symbolic_outside_builder(op)
    if isinstance(a, _SCALARS):
        d = target if target is not None else _dt.scalar_dtype(a)
        try:
            return a, _scalar_as(a, d), False
        except (OverflowError, ValueError) as e:
            raise InvalidArgumentError(f"{op.name}: argument '{op.input_names[i]}' = {a!r} "
                                       f"does not fit dtype {d.name}: {e}") from None
    if isinstance(a, (_ndarray, _generic)):
        arr = np.asarray(a)
        if arr.dtype not in _BY_NP:
            from fw.core.tensor import _coerce_foreign

            arr = _coerce_foreign(arr)
        if target is not None and arr.dtype != target.np:
            arr = arr.astype(target.np)
        return a, arr, False
    if isinstance(a, (list, tuple)):
        arr = _list_array(a)
        if target is not None and arr.dtype != target.np:
            arr = arr.astype(target.np)
        return a, arr, False
    if type(a).__module__.split(".")[0] == "cupy":
        return a, a, False
    raise InvalidTypeError(f"{op.name}: argument '{op.input_names[i]}' must be a Tensor, a "
                           f"Python number or an array, got {type(a).__name__}")


def _check_same_device(op, arrays, default=_pl._CPU_PLACE):
    """The one place all inputs are on (an error naming both places if they differ).
    0-d host arrays (NumPy scalars, 0-d cpu tensors) go along with device inputs and
    are copied there, as PyTorch lets 0-dim cpu tensors mix with CUDA ones; with no
    other input they go to `default` (the current device)."""
    seen = None
    scalars = []
    for i, a in enumerate(arrays):
        items = a if isinstance(a, list) else (a,)
        for j, x in enumerate(items):
            if x is None or isinstance(x, _generic):
                continue
            if type(x) is _ndarray and x.ndim == 0:
                scalars.append((i, j if isinstance(a, list) else None, x))
                continue
            p = _pl.place_of(x)
            if seen is None:
                seen = p
            elif p != seen:
                raise InvalidArgumentError(f"{op.name}: inputs are on different devices "
                                           f"({seen} and {p}); move them with .to(device)")
    if seen is None:
        seen = default
    if scalars and seen.kind != "cpu":
        be = _pl.get_backend(seen.kind)
        for i, j, x in scalars:
            if j is None:
                arrays[i] = be.asarray(x, seen.index)
            else:
                arrays[i][j] = be.asarray(x, seen.index)
    return seen


def _type_of(a):
    if isinstance(a, Tensor):
        return TensorType(a._data.shape, a.dtype)
    if type(a) is Value:
        return a.type
    if isinstance(a, (_ndarray, _generic)):
        return TensorType(np.shape(a), _dt.from_numpy(np.asarray(a).dtype))
    if isinstance(a, _SCALARS):
        return TensorType((), _dt.scalar_dtype(a))
    if isinstance(a, (list, tuple)):
        arr = _list_array(a)
        return TensorType(arr.shape, _dt.from_numpy(arr.dtype))
    return None


def input_types(op, args):
    out = []
    for i, a in enumerate(args):
        if i == op.variadic:
            out.append([_type_of(x) for x in a])
        else:
            out.append(None if a is None else _type_of(a))
    return out


def describe_inputs(op, args) -> str:
    parts = []
    for name, t in zip(op.input_names, input_types(op, args)):
        if isinstance(t, list):
            parts.append(f"{name}=[{', '.join(_fmt(x) for x in t)}]")
        else:
            parts.append(f"{name}: {_fmt(t)}")
    return ", ".join(parts)


def _fmt(t):
    if t is None:
        return "None"
    return f"{t.dtype.name}{list(t.shape)}"


def explain_failure(op, args, attrs, exc) -> Exception:
    """Turn a kernel's exception into one naming the op, the arguments, their shapes
    and dtypes; `infer` gives the precise reason when it can."""
    try:
        types = input_types(op, args)
        op.infer(*types, **attrs)
    except FwError as precise:
        return precise
    except Exception:
        pass
    msg = (f"{op.name} failed on {describe_inputs(op, args)}"
           + (f" with {_fmt_attrs(attrs)}" if attrs else "") + f": {type(exc).__name__}: {exc}")
    if isinstance(exc, (TypeError,)):
        return InvalidTypeError(msg)
    if isinstance(exc, (ValueError, IndexError, np.linalg.LinAlgError)):
        return InvalidArgumentError(msg)
    if isinstance(exc, (MemoryError,)):
        return MemoryError(msg)
    return InvalidArgumentError(msg)


def _fmt_attrs(attrs) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in attrs.items())


def assign_inplace(op_name: str, x, out):
    """Finish an in-place op ``x.op_(...)``: `out` was computed out of place; write
    it into `x` and give `x` its autograd history. While a program is being built
    values are immutable, so the new value is returned instead (fw.jit's
    conversion rebinds the variable: ``x.add_(y)`` becomes ``x = x.add_(y)``); when
    x is a concrete tensor captured by that program (a parameter, a buffer), the
    write is recorded as a state update of the program (`Builder.record_update`)."""
    if type(x) is Value or type(out) is Value:
        if type(x) is not Value and isinstance(x, Tensor) and _build.builder is not None:
            _build.builder.record_update(x, out)
        return out
    if not isinstance(x, Tensor):
        raise InvalidTypeError(f"{op_name}: the in-place target must be a Tensor, got "
                               f"{type(x).__name__}")
    a = x._data
    b = out._data
    if a.shape != b.shape:
        raise InvalidArgumentError(
            f"{op_name}: the result has shape {list(b.shape)} but the in-place target x has "
            f"shape {list(a.shape)}; an in-place op cannot change the shape of x")
    needs_grad = not out._sg
    if needs_grad and grad_state.enabled and x._node is None and not x._sg:
        raise InvalidArgumentError(
            f"{op_name}: x is a leaf tensor that requires grad (stop_gradient=False); an "
            f"in-place op on it would lose its gradient. Use the out-of-place op, or do it "
            f"under fw.no_grad()")
    if not getattr(a.flags, "writeable", True):  # (a CuPy array's flags have no writeable)
        raise InvalidArgumentError(f"{op_name}: x's memory is read-only (it may come from "
                                   f"np.broadcast_to or a read-only buffer); clone it first")
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    a[...] = b
    from fw.core.tensor import bump_version

    bump_version(x)
    if needs_grad and grad_state.rebase is not None:
        grad_state.rebase(x, out)
    elif not needs_grad and x._node is not None and grad_state.enabled:
        x._node = None
        x._sg = True
    return x
