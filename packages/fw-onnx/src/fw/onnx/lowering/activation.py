"""Activations (``fw.core.ops.activation``): the ONNX op where one has the same
formula and attributes, else a composition of ONNX ops."""

from __future__ import annotations

import math

from fw.onnx.lowering._registry import lowers


def _s(ctx, op, v):
    """A scalar of the op's result dtype."""
    return ctx.scalar(v, op.results[0].type.dtype)


@lowers("relu")
def _relu(op, ctx):
    return ctx.node("Relu", [ctx.input(0)])


@lowers("relu6", "hardtanh")
def _clip(op, ctx):
    lo, hi = (0.0, 6.0) if op.name == "relu6" else (op.attrs["min"], op.attrs["max"])
    return ctx.node("Clip", [ctx.input(0), _s(ctx, op, lo), _s(ctx, op, hi)])


@lowers("leaky_relu")
def _leaky_relu(op, ctx):
    return ctx.node("LeakyRelu", [ctx.input(0)], alpha=float(op.attrs["negative_slope"]))


@lowers("elu")
def _elu(op, ctx):
    return ctx.node("Elu", [ctx.input(0)], alpha=float(op.attrs["alpha"]))


@lowers("celu")
def _celu(op, ctx):
    return ctx.node("Celu", [ctx.input(0)], alpha=float(op.attrs["alpha"]))


@lowers("selu")
def _selu(op, ctx):
    # ONNX Selu: gamma * (alpha * (exp(x) - 1)) for x <= 0, gamma * x otherwise
    return ctx.node("Selu", [ctx.input(0)], alpha=float(op.attrs["alpha"]),
                    gamma=float(op.attrs["scale"]))


@lowers("silu")
def _silu(op, ctx):
    x = ctx.input(0)
    return ctx.node("Mul", [x, ctx.node("Sigmoid", [x])])


@lowers("hardswish")
def _hardswish(op, ctx):
    # Paddle's x * relu6(x + 3) / 6 is ONNX HardSwish (alpha 1/6, beta 1/2)
    return ctx.node("HardSwish", [ctx.input(0)])


@lowers("hardsigmoid")
def _hardsigmoid(op, ctx):
    return ctx.node("HardSigmoid", [ctx.input(0)], alpha=float(op.attrs["slope"]),
                    beta=float(op.attrs["offset"]))


@lowers("gelu")
def _gelu(op, ctx):
    x = ctx.input(0)
    approx = bool(op.attrs["approximate"])
    if ctx.opset >= 20:
        return ctx.node("Gelu", [x], approximate="tanh" if approx else "none")
    half, one = _s(ctx, op, 0.5), _s(ctx, op, 1.0)
    if approx:
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x3 = ctx.node("Mul", [ctx.node("Mul", [x, x]), x])
        inner = ctx.node("Add", [x, ctx.node("Mul", [x3, _s(ctx, op, 0.044715)])])
        t = ctx.node("Tanh", [ctx.node("Mul", [inner, _s(ctx, op, math.sqrt(2 / math.pi))])])
    else:
        # 0.5 x (1 + erf(x / sqrt(2)))
        t = ctx.node("Erf", [ctx.node("Mul", [x, _s(ctx, op, 1 / math.sqrt(2))])])
    return ctx.node("Mul", [ctx.node("Mul", [x, half]), ctx.node("Add", [t, one])])


def _softplus(ctx, op, x, beta=1.0, threshold=None):
    """Paddle's softplus: x where beta*x > threshold, else log(1 + exp(beta*x)) / beta."""
    bx = x if beta == 1.0 else ctx.node("Mul", [x, _s(ctx, op, beta)])
    sp = ctx.node("Softplus", [bx])
    if beta != 1.0:
        sp = ctx.node("Div", [sp, _s(ctx, op, beta)])
    if threshold is None:
        return sp
    return ctx.node("Where", [ctx.node("Greater", [bx, _s(ctx, op, threshold)]), x, sp])


@lowers("softplus")
def _softplus_op(op, ctx):
    return _softplus(ctx, op, ctx.input(0), float(op.attrs["beta"]),
                     float(op.attrs["threshold"]))


@lowers("mish")
def _mish(op, ctx):
    x = ctx.input(0)
    if ctx.opset >= 18:
        return ctx.node("Mish", [x])
    # fw's mish uses softplus with Paddle's threshold 20
    return ctx.node("Mul", [x, ctx.node("Tanh", [_softplus(ctx, op, x, 1.0, 20.0)])])


@lowers("log_sigmoid")
def _log_sigmoid(op, ctx):
    # log(sigmoid(x)) = -softplus(-x), which does not underflow for very negative x
    return ctx.node("Neg", [ctx.node("Softplus", [ctx.node("Neg", [ctx.input(0)])])])


@lowers("softsign")
def _softsign(op, ctx):
    return ctx.node("Softsign", [ctx.input(0)])


@lowers("hardshrink", "softshrink")
def _shrink(op, ctx):
    # ONNX Shrink: x - bias if x > lambd, x + bias if x < -lambd, else 0
    t = float(op.attrs["threshold"])
    return ctx.node("Shrink", [ctx.input(0)], lambd=t, bias=t if op.name == "softshrink" else 0.0)


@lowers("thresholded_relu")
def _thresholded_relu(op, ctx):
    x = ctx.input(0)
    above = ctx.node("Greater", [x, _s(ctx, op, op.attrs["threshold"])])
    return ctx.node("Where", [above, x, _s(ctx, op, op.attrs["value"])])


@lowers("tanhshrink")
def _tanhshrink(op, ctx):
    x = ctx.input(0)
    return ctx.node("Sub", [x, ctx.node("Tanh", [x])])


@lowers("softmax", "log_softmax")
def _softmax(op, ctx):
    # opset >= 13: the softmax of one axis (earlier opsets flattened the trailing axes)
    kind = "Softmax" if op.name == "softmax" else "LogSoftmax"
    return ctx.node(kind, [ctx.input(0)], axis=int(op.attrs["axis"]))


@lowers("prelu")
def _prelu(op, ctx):
    x, w = op.operands
    slope = ctx.input(1)
    if w.type.ndim == 1 and w.type.shape[0] != 1 and not op.attrs["channel_last"]:
        # per-channel weight [C] on [N, C, *S]: ONNX PRelu broadcasts the slope
        # unidirectionally from the right, so it must be [C, 1, ..., 1]
        slope = ctx.node("Reshape", [slope, ctx.ints([-1] + [1] * (x.type.ndim - 2))])
    return ctx.node("PRelu", [ctx.input(0), slope])


@lowers("rrelu")
def _rrelu(op, ctx):
    if op.attrs["training"]:
        ctx.fail("rrelu in training mode draws random slopes; export the layer in eval mode")
    # in eval mode the slope is the middle of [lower, upper]; the noise is not exported
    slope = (float(op.attrs["lower"]) + float(op.attrs["upper"])) / 2.0
    ctx.unavailable(op.results[1], "the noise of rrelu is not exported")
    return [ctx.node("LeakyRelu", [ctx.input(0)], alpha=slope), None]


@lowers("glu")
def _glu(op, ctx):
    # first half * sigmoid(second half) along axis (of even, known size)
    x = op.operands[0]
    ax = int(op.attrs["axis"]) % x.type.ndim
    n = x.type.shape[ax]
    if n == -1:
        ctx.fail("glu along an axis of unknown size")
    a, b = ctx.node("Split", [ctx.input(0), ctx.ints([n // 2, n // 2])], outputs=2, axis=ax)
    return ctx.node("Mul", [a, ctx.node("Sigmoid", [b])])
