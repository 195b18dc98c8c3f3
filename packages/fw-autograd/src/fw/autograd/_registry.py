"""The VJP rule registry: ``{op name: Rule}``.

A rule is a function ``rule(ctx, g) -> input grads`` registered with
``@vjp("op_name")``. It is written only with fw ops (``fw.*`` functions,
Tensor methods, `fw.core.ops.call`), so the same rule

- runs eagerly on Tensors (under ``no_grad`` for a plain backward, recorded
  with ``create_graph=True``, which gives higher orders), and
- emits IR when ``ctx`` describes an IR operation (static backward).

``ctx`` is the same interface in both cases (`fw.autograd._graph.Node` eagerly,
`fw.autograd.static.OpView` on IR):

- ``ctx.inputs`` — the op's inputs aligned with ``op.inputs`` (the variadic
  slot is a list, an absent optional input is None, scalars stay scalars);
- ``ctx.outputs`` — the op's results (a tuple); ``ctx.attrs`` — its attributes;
- ``ctx.needs(i)`` — whether input ``i`` needs a gradient (skip the work if not);
  for a variadic input, ``ctx.needs(i, j)`` asks about item ``j``;
- ``ctx.shape(i)`` / ``ctx.dtype(i)`` — static shape and dtype of input ``i``
  (``-1`` marks a dynamic dimension on IR).

``g`` is the gradient of the single output, or a tuple (one per output) for
multi-output ops, in which floating outputs that got no gradient are zeros and
integer outputs are None. The rule returns one gradient per op input (a single
value for one-input ops, a tuple otherwise; a list for a variadic input; None
for no gradient). The engine casts each gradient to its input's dtype (the real
part for a real input) and sums it over broadcast dimensions, so rules of
broadcasting ops may return the gradient in the broadcast shape.

What a rule reads decides what the tape keeps alive: ``inputs=False`` when the
rule never reads ``ctx.inputs`` values (only shapes/dtypes), ``outputs=True``
when it reads ``ctx.outputs``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Rule", "RULES", "vjp", "get_rule"]

RULES: dict = {}


@dataclass(frozen=True, eq=False)
class Rule:
    name: str
    fn: Callable
    inputs: bool = True  # the rule reads input values: keep them
    outputs: bool = False  # the rule reads output values: keep them


def vjp(*names: str, inputs: bool = True, outputs: bool = False):
    """Register the decorated function as the VJP rule of the ops `names`.

    >>> from fw.autograd.rules import vjp
    >>> @vjp("my_scale", inputs=False)          # doctest: +SKIP
    ... def _my_scale(ctx, g):
    ...     return g * ctx.attrs["factor"]
    """

    def deco(fn):
        for n in names:
            old = RULES.get(n)
            # the same function again is a module being re-imported (importlib-mode test
            # collection, reloads): replace it; a different one is a real conflict
            if old is not None and _where(old.fn) != _where(fn):
                raise ValueError(f"a VJP rule for op {n!r} is registered twice "
                                 f"({old.fn.__module__}.{old.fn.__qualname__} and "
                                 f"{fn.__module__}.{fn.__qualname__})")
            RULES[n] = Rule(n, fn, inputs, outputs)
        return fn

    return deco


def _where(fn):
    code = getattr(fn, "__code__", None)
    return (getattr(code, "co_filename", None), getattr(fn, "__qualname__", None))


def get_rule(name: str):
    return RULES.get(name)
