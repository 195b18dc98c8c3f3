"""Matching the *epilogue* of a product op (matmul, linear, conv): the chain of
single-use elementwise ops after it that a oneDNN primitive computes as post-ops.

`match_epilogue` walks forward from the product's result while each value has
exactly one reader, in the same block, and that reader is the next stage::

    [multiply by a uniform scalar constant]   -> alpha   (only if allowed)
    [add a bias vector]                       -> bias    (a caller-given test)
    [relu | gelu | sigmoid | tanh | silu]     -> activation
    [add a residual of the same type]         -> residual

Stages are optional but keep this order (it is the fused ops' formula
``act(alpha * P + bias) + residual``); a chain in another order stops the match
where the order breaks (``relu(P) + b`` absorbs nothing as a bias: it becomes
the residual). Every absorbed op must keep the product's type exactly (no
broadcast growing the result, no dtype change).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fw.core import dtypes as _dt
from fw.core.ir.core import Operation, Value
from fw.core.ir.passes.consts import uniform_value
from fw.core.ops.fused import activation_of

__all__ = ["Epilogue", "match_epilogue", "single_user", "fuse_epilogue"]


@dataclass
class Epilogue:
    ops: list = field(default_factory=list)  # absorbed ops, in program order
    alpha: float = 1.0
    bias: Value | None = None
    activation: str = "none"
    residual: Value | None = None

    @property
    def last(self) -> Operation | None:
        return self.ops[-1] if self.ops else None


def single_user(rw, v) -> Operation | None:
    """The one op reading `v`, when there is exactly one use and it is in `v`'s
    block (not a block output, not a second operand slot of the same op)."""
    us = rw.users(v)
    if len(us) != 1:
        return None
    op, _ = us[0]
    if not isinstance(op, Operation) or not isinstance(v.owner, Operation) or \
            op.parent is not v.owner.parent:
        return None
    return op


def _other(op, v):
    a, b = op.operands
    return b if a is v else a


def _scalar_factor(rw, op, cur):
    """The Python float `op` (a multiply) scales `cur` by, or None."""
    c = _other(op, cur)
    if c is None or c.type.dtype is not cur.type.dtype or c.type.numel() != 1 or \
            len(c.type.shape) > len(cur.type.shape):
        return None
    v = uniform_value(c, rw.program)
    return float(v) if isinstance(v, float) else None


def match_epilogue(rw, head: Operation, bias_test=None, allow_alpha=False,
                   has_bias=False) -> Epilogue:
    """The epilogue after `head` (whose first result is the product).

    Args:
        bias_test: ``fn(bias_value, product_value) -> bool`` accepting a bias add,
            or None when no bias may be absorbed.
        allow_alpha: absorb a multiply by a uniform scalar constant first.
        has_bias: the head already adds a bias (``linear``, ``conv`` with bias).
    """
    ep = Epilogue()
    cur = head.results[0]
    stage = 0 if allow_alpha else 1
    if has_bias or bias_test is None:
        stage = max(stage, 2)
    t = cur.type
    while True:
        u = single_user(rw, cur)
        if u is None or len(u.results) != 1 or u.results[0].type != t:
            break
        name = u.name
        if stage == 0 and name == "multiply":
            a = _scalar_factor(rw, u, cur)
            if a is None:
                break
            ep.alpha, stage = a, 1
        elif stage <= 1 and name == "add" and bias_test(_other(u, cur), cur):
            ep.bias, stage = _other(u, cur), 2
        elif stage <= 2 and activation_of(u) is not None:
            ep.activation, stage = activation_of(u), 3
        elif stage <= 3 and name == "add" and _other(u, cur) is not None and \
                _other(u, cur).type == t:
            ep.residual, stage = _other(u, cur), 4
        else:
            break
        ep.ops.append(u)
        cur = u.results[0]
        if stage == 4:
            break
    return ep


def is_float(v) -> bool:
    return v is not None and v.type.dtype in (_dt.float16, _dt.bfloat16, _dt.float32,
                                              _dt.float64)


def fuse_epilogue(rw, head, ep, name, operands, attrs) -> Operation:
    """Replace `head` and the ops of `ep` by one op `name`; returns it."""
    last = ep.last
    fused = rw.create(name, operands, attrs, [last.results[0].type], before=last)
    rw.replace_op(last, fused.results)
    for op in reversed(ep.ops[:-1]):
        rw.erase(op)
    rw.erase(head)
    return fused
