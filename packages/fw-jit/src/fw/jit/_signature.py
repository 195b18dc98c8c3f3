"""Call signatures: the structure and leaves of a converted function's arguments.

`_flatten` turns arguments (nested lists/tuples/dicts of tensors, InputSpecs,
arrays and Python values) into a template, a list of tensor leaves and a hashable
key — the program cache's key (tensors by shape, dtype and stop_gradient, Python
values by value, other objects by identity); `_rebuild` puts symbolic or concrete
leaves back into the template. `_flatten_out`/`_rebuild_out` do the same for a
traced function's results.
"""

from __future__ import annotations

import types

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.core import Value
from fw.core.tensor import Tensor, to_tensor
from fw.jit._context import UndefinedVar
from fw.jit.input_spec import InputSpec


class _Leaf:
    __slots__ = ("spec",)

    def __init__(self, spec):
        self.spec = spec


def _spec_key(shape, dtype, sg):
    return ("T", tuple(shape), dtype.name, bool(sg))


def _flatten(obj, spec, leaves: list, where: str, name: str = "input", arrays=True):
    """(template, key) of argument `obj`; tensor leaves (or specs) go to `leaves` as
    ``(tensor or None, spec or None, name)``. NumPy arrays are tensor inputs, or with
    ``arrays=False`` Python constants (keyed by their contents)."""
    if isinstance(obj, np.ndarray):
        if not arrays:
            return ("C", obj), ("A", obj.shape, obj.dtype.str,
                                hash(np.ascontiguousarray(obj).tobytes()))
        obj = to_tensor(obj)
    if isinstance(obj, Tensor):
        shape = tuple(obj._data.shape)
        sg = obj._sg
        if isinstance(spec, InputSpec):
            if not spec.matches(shape, obj.dtype):
                raise ValueError(f"{where}: the input_spec is {spec.dtype.name}"
                                 f"{list(spec.shape)} (-1: any size) but the call passes "
                                 f"{obj.dtype.name}{list(shape)}")
            shape = spec.shape
        leaves.append((obj, spec if isinstance(spec, InputSpec) else None, name))
        return ("T",), _spec_key(shape, obj.dtype, sg)
    if isinstance(obj, InputSpec):  # get_concrete_program(InputSpec(...))
        leaves.append((None, obj, name))
        return ("T",), _spec_key(obj.shape, obj.dtype, obj.stop_gradient)
    if isinstance(obj, (list, tuple)):
        specs = spec if isinstance(spec, (list, tuple)) and len(spec) == len(obj) else \
            [None] * len(obj)
        parts = [_flatten(x, s, leaves, f"{where}[{i}]", f"{name}_{i}", arrays)
                 for i, (x, s) in enumerate(zip(obj, specs))]
        kind = type(obj) if type(obj) in (list, tuple) else tuple
        return (kind, [p[0] for p in parts]), (kind.__name__, tuple(p[1] for p in parts))
    if isinstance(obj, UndefinedVar):
        return ("C", obj), ("U", obj.name)
    if isinstance(obj, types.FunctionType):  # a local function: its code, not the object
        return ("C", obj), ("F", id(obj.__code__))
    if isinstance(obj, dict):
        specs = spec if isinstance(spec, dict) else {}
        parts = [(k, _flatten(v, specs.get(k), leaves, f"{where}[{k!r}]", f"{name}_{k}",
                              arrays)) for k, v in obj.items()]
        return (dict, [(k, p[0]) for k, p in parts]), ("dict", tuple((k, p[1])
                                                                     for k, p in parts))
    try:
        hash(obj)
        if isinstance(obj, (bool, int, float, complex, str, bytes, type(None), _dt.DType)) or \
                isinstance(obj, tuple):
            return ("C", obj), ("P", type(obj).__name__, obj)
    except TypeError:
        pass
    return ("C", obj), ("O", id(obj))


def _rebuild(tmpl, it):
    kind = tmpl[0]
    if kind == "T":
        return next(it)
    if kind == "C":
        return tmpl[1]
    if kind is dict:
        return {k: _rebuild(t, it) for k, t in tmpl[1]}
    return kind(_rebuild(t, it) for t in tmpl[1])


def _flatten_out(obj, leaves: list, strict=True):
    """Template of a traced function's result; Value/Tensor leaves go to `leaves`."""
    if type(obj) is Value or isinstance(obj, Tensor):
        leaves.append(obj)
        return ("T",)
    if isinstance(obj, UndefinedVar):
        if strict:
            obj.fail("returned")
        return ("C", obj)
    if isinstance(obj, (list, tuple)):
        kind = type(obj) if type(obj) in (list, tuple) else tuple
        if kind is tuple and type(obj) is not tuple and hasattr(obj, "_fields"):
            return ("N", type(obj), [_flatten_out(x, leaves, strict) for x in obj])
        return (kind, [_flatten_out(x, leaves, strict) for x in obj])
    if isinstance(obj, dict):
        return (dict, [(k, _flatten_out(v, leaves, strict)) for k, v in obj.items()])
    return ("C", obj)


def _rebuild_out(tmpl, it):
    if tmpl[0] == "N":
        return tmpl[1](*[_rebuild_out(t, it) for t in tmpl[2]])
    if tmpl[0] in ("T", "C") or tmpl[0] is dict:
        if tmpl[0] is dict:
            return {k: _rebuild_out(t, it) for k, t in tmpl[1]}
        return _rebuild(tmpl, it)
    return tmpl[0](_rebuild_out(t, it) for t in tmpl[1])


