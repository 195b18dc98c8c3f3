"""Algebraic simplification: rewrites that give bit-identical results.

Only identities exact in IEEE arithmetic (NaN, infinities and signed zeros
included) are applied, and only when the constant does not change the other
operand's shape or dtype by broadcasting or promotion (the result type must
equal that operand's type):

- ``x * 1``, ``1 * x`` -> x (not for complex: ``(a+bi)(1+0i)`` makes ``inf*0``);
- ``x / 1`` -> x (real types);
- ``x + c``, ``c + x`` -> x when c is an integer/bool 0, or a float/complex
  ``-0.0`` (``x + 0.0`` turns ``-0.0`` into ``0.0``, so it is *not* rewritten);
- ``x - c`` -> x when c is an integer 0 or a float/complex ``+0.0``;
- ``neg(neg(x))`` -> x;
- ``transpose(transpose(x, p), q)`` -> one transpose (or x for the identity
  permutation); ``transpose(x, identity)`` -> x;
- ``reshape(x, s)`` -> x when the result type equals x's static type, and
  ``reshape(reshape(x, s), t)`` -> ``reshape(x, t)`` when t has no 0 (copy-dim)
  entry;
- ``cast(x, dtype)`` -> x when x already has that dtype.

Constants are ``full`` results and block-0 ``const`` values whose elements are
all the same (see `fw.core.ir.passes.consts`). Patterns for ops missing from the
op table are skipped. Ops left without users are left for ``dce``.
"""

from __future__ import annotations

import math

from fw.core import dtypes as _dt
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import uniform_value
from fw.core.ir.passes.rewrite import apply_patterns

__all__ = ["AlgebraicSimplify", "PATTERNS"]


def _neutral_broadcast(c, x) -> bool:
    """Broadcasting constant `c` against `x` leaves x's shape and dtype alone."""
    ct, xt = c.type, x.type
    if ct.dtype is not xt.dtype or len(ct.shape) > len(xt.shape):
        return False
    off = len(xt.shape) - len(ct.shape)
    return all(d == 1 or (d == xt.shape[off + i] and d != -1) for i, d in enumerate(ct.shape))


def _is_zero(v, dtype, negative: bool) -> bool:
    """v is a zero of the required sign (the sign matters for floats only)."""
    if isinstance(v, complex):
        parts = (v.real, v.imag)
    elif dtype.kind >= _dt._FLOAT:
        parts = (v,)
    else:
        return v == 0
    return all(isinstance(p, float) and p == 0 and math.copysign(1.0, p) < 0 if negative
               else p == 0 and math.copysign(1.0, float(p)) > 0 for p in parts)


def _identity_operand(rw, op, test, commutative: bool):
    """The operand x of binary `op` whose other operand is a constant passing `test`."""
    x, y = op.operands
    pairs = [(x, y), (y, x)] if commutative else [(x, y)]
    r = op.results[0]
    for a, c in pairs:
        if a is None or c is None or r.type != a.type or not _neutral_broadcast(c, a):
            continue
        val = uniform_value(c, rw.program)
        if val is not None and test(val, a.type.dtype):
            return a
    return None


def _one(v, dtype) -> bool:
    return not isinstance(v, complex) and v == 1


def _mul(rw, op):
    if op.results[0].type.dtype.kind == _dt._COMPLEX:
        return False
    x = _identity_operand(rw, op, _one, True)
    if x is None:
        return False
    rw.replace_op(op, [x])
    return True


def _div(rw, op):
    if op.results[0].type.dtype.kind == _dt._COMPLEX:
        return False
    x = _identity_operand(rw, op, _one, False)
    if x is None:
        return False
    rw.replace_op(op, [x])
    return True


def _add(rw, op):
    x = _identity_operand(rw, op, lambda v, d: _is_zero(v, d, negative=True), True)
    if x is None:
        return False
    rw.replace_op(op, [x])
    return True


def _sub(rw, op):
    x = _identity_operand(rw, op, lambda v, d: _is_zero(v, d, negative=False), False)
    if x is None:
        return False
    rw.replace_op(op, [x])
    return True


def _neg(rw, op):
    inner = rw.producer(op.operands[0])
    if inner is None or inner.name != "neg" or inner.operands[0] is None or \
            inner.operands[0].type != op.results[0].type:
        return False
    rw.replace_op(op, [inner.operands[0]])
    return True


def _perm(p, nd):
    return tuple(range(nd))[::-1] if p is None else tuple(int(a) % nd if nd else 0 for a in p)


def _transpose(rw, op):
    x = op.operands[0]
    nd = x.type.ndim
    q = _perm(op.attrs.get("perm"), nd)
    if q == tuple(range(nd)) and op.results[0].type == x.type:
        rw.replace_op(op, [x])
        return True
    inner = rw.producer(x)
    if inner is None or inner.name != "transpose":
        return False
    src = inner.operands[0]
    p = _perm(inner.attrs.get("perm"), nd)
    composed = tuple(p[i] for i in q)  # out[i] = x[p[q[i]]]
    if composed == tuple(range(nd)):
        if src.type != op.results[0].type:
            return False
        rw.replace_op(op, [src])
        return True
    new = rw.create("transpose", [src], {"perm": composed}, [op.results[0].type], before=op)
    rw.replace_op(op, new.results)
    return True


def _reshape(rw, op):
    x = op.operands[0]
    r = op.results[0]
    if x.type.is_static and r.type == x.type:
        rw.replace_op(op, [x])
        return True
    inner = rw.producer(x)
    shape = op.attrs.get("shape")
    if inner is None or inner.name != "reshape" or shape is None or 0 in shape:
        return False
    new = rw.create("reshape", [inner.operands[0]], {"shape": tuple(shape)}, [r.type],
                    before=op)
    rw.replace_op(op, new.results)
    return True


def _cast(rw, op):
    x = op.operands[0]
    if op.results[0].type != x.type:
        return False
    rw.replace_op(op, [x])
    return True


PATTERNS = {"multiply": _mul, "divide": _div, "add": _add, "subtract": _sub, "neg": _neg,
            "transpose": _transpose, "reshape": _reshape, "cast": _cast}


@register_pass
class AlgebraicSimplify(Pass):
    name = "algebraic_simplify"

    def run(self, program) -> bool:
        from fw.core.ops._registry import OPS

        return apply_patterns(program, {k: f for k, f in PATTERNS.items() if k in OPS})
