"""The op table: every op is declared once, here, with `defop`.

An `OpDef` holds what every other part of fw derives from an op:

- ``inputs``: tensor input names. ``"x*"`` is a variadic input (a list of tensors;
  at most one per op), ``"bias?"`` an optional one (may be None).
- ``attrs``: attribute names with defaults, in the order of the Paddle signature.
- ``outputs``: output names (one entry per result). ``("out*",)`` declares a
  variable number of results fixed by the attributes (``split``, ``unbind``):
  infer and the kernels return a tuple, and `num_outputs` is -1.
- ``infer(*input_types, **attrs)``: result `TensorType`\\ (s) from input types
  (dynamic dims are -1); raises `InvalidArgumentError` naming the op and argument.
  The eager path never calls it: the kernel's array carries shape and dtype.
- ``reference(*arrays, **attrs)``: the NumPy kernel, the executable specification.
  Written against the NumPy API so it also runs on CuPy arrays (creation uses
  ``like=``); returns an array or a tuple of arrays.
- ``kernels``: optional faster kernels per backend name (``cpu``, ``gpu``).
- ``promote``: which inputs share one dtype by the promotion table (indices;
  ``"all"`` for every tensor input, None for no promotion); ``to_float``: promote
  integer/bool results to the default float dtype first (``sin``, ``divide``).
- ``differentiable``: True when fw-autograd must have a VJP rule for it.
- ``random``: draws random numbers (never CSE'd or constant-folded).
- ``canon(attrs) -> attrs``: normalises attribute spellings (``axis=1`` -> ``(1,)``).
- ``method``/``dunders``/``api``: how the op is exposed (see `_api.py`).
- ``inplace``: also generate ``name_`` (Paddle's in-place variant): the op runs
  out of place and its result is written into input 0 (see `dispatch.assign_inplace`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["OpDef", "defop", "OPS", "get_op"]

OPS: dict[str, OpDef] = {}


@dataclass(eq=False)
class OpDef:
    name: str
    inputs: tuple
    attrs: dict
    outputs: tuple
    infer: Callable
    reference: Callable
    kernels: dict = field(default_factory=dict)
    promote: Any = "all"
    to_float: bool = False
    differentiable: bool = True
    random: bool = False
    side_effect: bool = False
    canon: Callable | None = None
    fast: str | None = None  # "unary" / "binary": give it a specialised eager entry point
    inplace: bool = False  # also expose ``name_`` / ``Tensor.name_`` writing into input 0
    family: str = ""
    doc: str = ""
    # exposure
    api: Any = True  # True: fw.<name>; a string: that public name; False: none
    method: Any = True  # True: Tensor.<name>; a string: that method name; False: none
    dunders: tuple = ()
    aliases: tuple = ()
    # derived
    input_names: tuple = ()
    variadic: int = -1  # index of the variadic input, -1 if none
    variadic_out: bool = False  # outputs=("name*",): as many results as the attrs say
    optional: frozenset = frozenset()
    promote_idx: tuple = ()

    def __post_init__(self):
        names, opt = [], set()
        for i, raw in enumerate(self.inputs):
            n = raw
            if n.endswith("*"):
                if self.variadic >= 0:
                    raise ValueError(f"op {self.name}: at most one variadic input")
                self.variadic = i
                n = n[:-1]
            elif n.endswith("?"):
                opt.add(i)
                n = n[:-1]
            names.append(n)
        self.input_names = tuple(names)
        if any(o.endswith("*") for o in self.outputs):
            if len(self.outputs) != 1:
                raise ValueError(f"op {self.name}: a variadic output must be the only output")
            self.variadic_out = True
        self.optional = frozenset(opt)
        # the number of results; -1 when it depends on the attributes
        self.num_outputs = -1 if self.variadic_out else len(self.outputs)
        self.infer = _named_infer(self.name, self.infer)
        if self.canon is not None:
            self.canon = _named_canon(self.name, self.canon)
        if self.promote == "all":
            self.promote_idx = tuple(range(len(names)))
        elif self.promote is None:
            self.promote_idx = ()
        else:
            self.promote_idx = tuple(self.promote)


    def kernel(self, backend: str) -> Callable:
        return self.kernels.get(backend) or self.reference

    def __repr__(self) -> str:
        return f"<op {self.name}({', '.join(self.inputs)}) attrs={list(self.attrs)}>"


def _named_infer(name, fn):
    """Prefix the op name to the errors an infer rule raises."""
    from fw.core.errors import FwError

    if getattr(fn, "_fw_named", False):
        return fn

    def infer(*types, **attrs):
        try:
            return fn(*types, **attrs)
        except FwError as e:
            msg = str(e)
            if msg.startswith(name + ":"):
                raise
            raise type(e)(f"{name}: {msg}") from None

    infer._fw_named = True
    infer.raw = fn
    return infer


def _named_canon(name, fn):
    if getattr(fn, "_fw_named", False):
        return fn

    def canon(attrs):
        try:
            return fn(attrs)
        except (TypeError, ValueError, KeyError) as e:
            from fw.core.errors import with_op_name

            raise with_op_name(name, e) from None

    canon._fw_named = True
    canon.raw = fn
    return canon


def defop(name: str, inputs=("x",), attrs=None, outputs=("out",), *, infer, reference,
          **kw) -> OpDef:
    """Declare an op. Returns its OpDef (also stored in `OPS`)."""
    if name in OPS:
        raise ValueError(f"op {name!r} declared twice")
    op = OpDef(name=name, inputs=tuple(inputs), attrs=dict(attrs or {}),
               outputs=tuple(outputs), infer=infer, reference=reference, **kw)
    OPS[name] = op
    return op


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} in the op table") from None


def register_kernel(op_name: str, backend: str):
    """Decorator: attach a fast kernel for `backend` to an already declared op."""

    def deco(fn):
        get_op(op_name).kernels[backend] = fn
        return fn

    return deco
