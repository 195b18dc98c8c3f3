"""Elementwise ops (``fw.core.ops.elementwise``).

fw's IR makes dtype promotion explicit (``cast`` ops before a binary op), so
operands of a binary op already share a dtype, and ONNX's multidirectional
(NumPy) broadcasting matches fw's.
"""

from __future__ import annotations

import math

from fw.onnx._dtypes import FLOATING
from fw.onnx.lowering._registry import lowers

# fw op -> ONNX op of the same meaning (onnx Operators.md), unary and binary
UNARY = {
    "abs": "Abs", "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
    "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
    "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
    "tanh": "Tanh", "sigmoid": "Sigmoid", "erf": "Erf", "reciprocal": "Reciprocal",
    "sign": "Sign", "sgn": "Sign", "logical_not": "Not", "isnan": "IsNaN", "isinf": "IsInf",
    "positive": "Identity",
}
BINARY = {
    "add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div",
    "maximum": "Max", "minimum": "Min", "pow": "Pow",
    "equal": "Equal", "less_than": "Less", "less_equal": "LessOrEqual",
    "greater_than": "Greater", "greater_equal": "GreaterOrEqual",
    "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor",
}
# float-only ONNX ops that are the identity on integers (fw keeps the dtype)
_FLOAT_ONLY_ROUNDING = {"floor": "Floor", "ceil": "Ceil", "round": "Round"}


def _unary(onnx_op):
    def lower(op, ctx):
        return ctx.node(onnx_op, [ctx.input(0)])

    lower.__name__ = f"lower_{onnx_op}"
    return lower


def _binary(onnx_op):
    def lower(op, ctx):
        return ctx.node(onnx_op, [ctx.input(0), ctx.input(1)])

    lower.__name__ = f"lower_{onnx_op}"
    return lower


for _name, _onnx in UNARY.items():
    lowers(_name)(_unary(_onnx))
for _name, _onnx in BINARY.items():
    lowers(_name)(_binary(_onnx))


def _is_float(v) -> bool:
    return v.type.dtype.name in FLOATING


@lowers("floor", "ceil", "round")
def _rounding(op, ctx):
    x = ctx.input(0)
    if not _is_float(op.operands[0]):
        return ctx.node("Identity", [x])
    if op.name == "round" and op.attrs.get("decimals", 0):
        # round(x * 10^d) / 10^d, as NumPy's np.round does; ONNX Round is half-to-even
        # like NumPy's, so ties agree
        s = ctx.scalar(10.0 ** op.attrs["decimals"], op.operands[0].type.dtype)
        return ctx.node("Div", [ctx.node("Round", [ctx.node("Mul", [x, s])]), s])
    return ctx.node(_FLOAT_ONLY_ROUNDING[op.name], [x])


@lowers("trunc")
def _trunc(op, ctx):
    x = ctx.input(0)
    if not _is_float(op.operands[0]):
        return ctx.node("Identity", [x])
    neg = ctx.node("Less", [x, ctx.scalar(0, op.operands[0].type.dtype)])
    return ctx.node("Where", [neg, ctx.node("Ceil", [x]), ctx.node("Floor", [x])])


@lowers("not_equal")
def _not_equal(op, ctx):
    return ctx.node("Not", [ctx.node("Equal", [ctx.input(0), ctx.input(1)])])


@lowers("square")
def _square(op, ctx):
    x = ctx.input(0)
    return ctx.node("Mul", [x, x])


@lowers("rsqrt")
def _rsqrt(op, ctx):
    return ctx.node("Reciprocal", [ctx.node("Sqrt", [ctx.input(0)])])


@lowers("log1p")
def _log1p(op, ctx):
    one = ctx.scalar(1, op.operands[0].type.dtype)
    return ctx.node("Log", [ctx.node("Add", [ctx.input(0), one])])


@lowers("expm1")
def _expm1(op, ctx):
    one = ctx.scalar(1, op.operands[0].type.dtype)
    return ctx.node("Sub", [ctx.node("Exp", [ctx.input(0)]), one])


@lowers("log2", "log10")
def _log_base(op, ctx):
    k = ctx.scalar(1.0 / math.log(2.0 if op.name == "log2" else 10.0), op.results[0].type.dtype)
    return ctx.node("Mul", [ctx.node("Log", [ctx.input(0)]), k])


@lowers("exp2")
def _exp2(op, ctx):
    return ctx.node("Pow", [ctx.scalar(2.0, op.results[0].type.dtype), ctx.input(0)])


@lowers("deg2rad", "rad2deg")
def _angle_units(op, ctx):
    k = math.pi / 180.0 if op.name == "deg2rad" else 180.0 / math.pi
    return ctx.node("Mul", [ctx.input(0), ctx.scalar(k, op.results[0].type.dtype)])


@lowers("isfinite")
def _isfinite(op, ctx):
    x = ctx.input(0)
    if not _is_float(op.operands[0]):
        return ctx.node("Equal", [x, x])  # every integer is finite
    bad = ctx.node("Or", [ctx.node("IsNaN", [x]), ctx.node("IsInf", [x])])
    return ctx.node("Not", [bad])


@lowers("floor_divide")
def _floor_divide(op, ctx):
    x, y = ctx.input(0), ctx.input(1)
    if _is_float(op.operands[0]):
        return ctx.node("Floor", [ctx.node("Div", [x, y])])
    # ONNX Div truncates integers toward zero; x - mod(x, y) (Python's sign rule, Mod
    # fmod=0) is an exact multiple of y, so dividing it gives the floor quotient
    return ctx.node("Div", [ctx.node("Sub", [x, ctx.node("Mod", [x, y], fmod=0)]), y])


@lowers("remainder")
def _remainder(op, ctx):
    x, y = ctx.input(0), ctx.input(1)
    if not _is_float(op.operands[0]):
        return ctx.node("Mod", [x, y], fmod=0)  # integer Mod takes the divisor's sign
    # float Mod must be fmod=1 (C's fmod, the dividend's sign); fw (NumPy) takes the
    # divisor's sign: add y where a nonzero remainder's sign differs from y's
    r = ctx.node("Mod", [x, y], fmod=1)
    dt = op.operands[0].type.dtype
    zero = ctx.scalar(0, dt)
    nonzero = ctx.node("Not", [ctx.node("Equal", [r, zero])])
    differ = ctx.node("Xor", [ctx.node("Less", [r, zero]), ctx.node("Less", [y, zero])])
    fix = ctx.node("And", [nonzero, differ])
    return ctx.node("Where", [fix, ctx.node("Add", [r, y]), r])


@lowers("where")
def _where(op, ctx):
    return ctx.node("Where", [ctx.input(0), ctx.input(1), ctx.input(2)])


@lowers("clip")
def _clip(op, ctx):
    x = ctx.input(0)
    lo, hi = op.operands[1], op.operands[2]
    # ONNX Clip wants 0-D bounds; other shapes broadcast through Max/Min instead
    if all(b is None or b.type.ndim == 0 for b in (lo, hi)):
        return ctx.node("Clip", [x, ctx.input(1), ctx.input(2)])
    if lo is not None:
        x = ctx.node("Max", [x, ctx.input(1)])
    if hi is not None:
        x = ctx.node("Min", [x, ctx.input(2)])
    return x


@lowers("scale")
def _scale(op, ctx):
    dt = op.results[0].type.dtype
    s, b = ctx.scalar(op.attrs["scale"], dt), ctx.scalar(op.attrs["bias"], dt)
    x = ctx.input(0)
    if op.attrs["bias_after_scale"]:
        return ctx.node("Add", [ctx.node("Mul", [x, s]), b])
    return ctx.node("Mul", [ctx.node("Add", [x, b]), s])


@lowers("increment")
def _increment(op, ctx):
    return ctx.node("Add", [ctx.input(0), ctx.scalar(op.attrs["value"], op.results[0].type.dtype)])


@lowers("lerp")
def _lerp(op, ctx):
    x, y, w = ctx.input(0), ctx.input(1), ctx.input(2)
    return ctx.node("Add", [x, ctx.node("Mul", [w, ctx.node("Sub", [y, x])])])


@lowers("hypot")
def _hypot(op, ctx):
    x, y = ctx.input(0), ctx.input(1)
    return ctx.node("Sqrt", [ctx.node("Add", [ctx.node("Mul", [x, x]), ctx.node("Mul", [y, y])])])


@lowers("stanh")
def _stanh(op, ctx):
    dt = op.results[0].type.dtype
    a, b = ctx.scalar(op.attrs["scale_a"], dt), ctx.scalar(op.attrs["scale_b"], dt)
    return ctx.node("Mul", [ctx.node("Tanh", [ctx.node("Mul", [ctx.input(0), a])]), b])


@lowers("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
def _bitwise(op, ctx):
    if op.operands[0].type.dtype.name == "bool":  # ONNX's bitwise ops take integers only
        kind = {"bitwise_and": "And", "bitwise_or": "Or", "bitwise_xor": "Xor",
                "bitwise_not": "Not"}[op.name]
    else:
        if ctx.opset < 18:
            ctx.fail(f"ONNX has bitwise ops on integers from opset 18 (asked for "
                     f"{ctx.opset})")
        kind = {"bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr",
                "bitwise_xor": "BitwiseXor", "bitwise_not": "BitwiseNot"}[op.name]
    return ctx.node(kind, [ctx.input(i) for i in range(len(op.operands))])
