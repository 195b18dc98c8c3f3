"""Common subexpression elimination.

Two ops compute the same values when they are the same op with the same operands
(the same SSA values), the same attributes and the same result types; the later
one is replaced by the earlier one when the earlier one dominates it: earlier in
the same block, or in an enclosing block before the op holding the nested block
(an expression computed before a ``cond``/``while`` is reused inside it; one
computed inside a block is not visible after it). Random ops, ops with side
effects and ops holding blocks are never merged. Attributes are compared by
their exact text form, so ``1`` and ``1.0`` (and ``0.0`` and ``-0.0``) differ.
"""

from __future__ import annotations

from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.printer import format_attr

__all__ = ["CommonSubexpressionElimination"]


def _key(op):
    d = op.opdef
    if d.random or d.side_effect or op.blocks or not op.results:
        return None
    try:
        attrs = tuple(sorted((k, format_attr(v)) for k, v in op.attrs.items()))
    except TypeError:
        return None
    # operands by identity: Value's == builds an `equal` op
    operands = tuple(None if v is None else id(v) for v in op.operands)
    return (op.name, operands, attrs, tuple(r.type for r in op.results))


def _cse(block, table: dict, repl: dict, scoped: bool = False) -> bool:
    """`table` holds the expressions visible here; a nested block's own entries are
    taken out again when it ends (`scoped`), instead of copying the table for each
    nested block (a copy per block is quadratic in programs with many ``cond``)."""
    changed = False
    kept = []
    added = []
    for op in block.ops:
        if repl:
            op.operands = [repl.get(v, v) if v is not None else None for v in op.operands]
        for b in op.blocks:
            changed = _cse(b, table, repl, scoped=True) or changed
        key = _key(op)
        if key is None:
            kept.append(op)
            continue
        first = table.get(key)
        if first is None:
            table[key] = op
            added.append(key)
            kept.append(op)
            continue
        for r, s in zip(op.results, first.results):
            repl[r] = s
            s._sg = s._sg and r._sg
        op.parent = None
        changed = True
    if repl:
        block.outputs = [repl.get(v, v) for v in block.outputs]
    if len(kept) != len(block.ops):
        block.ops[:] = kept
    if scoped:
        for key in added:
            del table[key]
    return changed


@register_pass
class CommonSubexpressionElimination(Pass):
    name = "cse"

    def run(self, program) -> bool:
        repl: dict = {}
        changed = _cse(program.block, {}, repl)
        ups = getattr(program, "updates", None)
        if ups and repl:
            ups.outputs[:] = [repl.get(v, v) for v in ups.outputs]
        return changed
