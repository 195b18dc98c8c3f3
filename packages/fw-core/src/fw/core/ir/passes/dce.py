"""Dead code elimination: drop ops whose results nobody uses.

An op is kept when one of its results is used (by a later op, a nested block, or
a block's return/yield) or when it has side effects (``opdef.side_effect``, or a
side-effecting op inside its nested blocks). Random ops whose results are unused
are dropped: nothing observes their draws (later random ops then draw from an
earlier point of the generator's stream than without the pass). Nested blocks of
the kept ``cond``/``while`` ops are cleaned the same way, their yields being
their roots. The values of the program's state updates are roots like its
outputs. Block-0 constants that nothing reads any more are removed with
their captured tensor; inputs and parameters are kept (they are the program's
signature).
"""

from __future__ import annotations

from fw.core.ir.passes import Pass, register_pass

__all__ = ["DeadCodeElimination", "has_side_effects"]


def has_side_effects(op) -> bool:
    """True if `op` or an op in its nested blocks is marked ``side_effect``."""
    if op.opdef.side_effect:
        return True
    return any(has_side_effects(o) for b in op.blocks for o in b.ops)


def _sweep(block, roots=()) -> tuple:
    """Remove dead ops of `block` (recursively); returns (changed, values used)."""
    live = set(block.outputs)
    live.update(roots)
    kept = []
    changed = False
    for op in reversed(block.ops):
        if any(r in live for r in op.results) or has_side_effects(op):
            for b in op.blocks:
                c, used = _sweep(b)
                changed = changed or c
                live.update(used)
            live.update(v for v in op.operands if v is not None)
            kept.append(op)
        else:
            op.parent = None
            changed = True
    if changed:
        kept.reverse()
        block.ops[:] = kept
    return changed, live


@register_pass
class DeadCodeElimination(Pass):
    name = "dce"

    def run(self, program) -> bool:
        ups = getattr(program, "updates", None)
        changed, used = _sweep(program.block, ups.outputs if ups else ())
        targets = set(ups.labels) if ups else set()
        dead = [a for a in program.block.args if a.role == "const" and a not in used and
                a.label not in targets]
        if dead:
            from fw.core.ir.passes.rewrite import Rewriter

            Rewriter(program).remove_args(dead)  # one renumbering, not one per const
            changed = True
        return changed
