"""Paddle op -> fw ops: one entry per Paddle op (PIR names; the 2.x reader renames
its ops to these, see pdmodel.LEGACY).

An entry is ``fn(ctx, ins, attrs) -> [outputs]``: `ins` are the operands (fw IR
Values, `Const` for values known when the file is read — ``full``,
``full_int_array`` — lists from ``combine``, None for an absent optional one),
`attrs` the Paddle attributes; it emits fw ops with ``ctx.emit(name, args,
attrs)`` and returns the values of the Paddle op's outputs, in order (fewer than
Paddle's when the rest are training-only: batch_norm's running statistics).
Adding an op is adding one entry; an op without an entry makes loading fail
with the list of all such ops (`convert.unknown_ops`).
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import UnsupportedError

__all__ = ["OPS", "Const"]

OPS: dict = {}


class Const:
    """A value whose contents the program file states (a ``full`` or
    ``full_int_array``): entries read it as attributes (a pool's kernel size, a
    reshape's shape); used as a tensor it becomes a constant of the program."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def ints(self) -> list:
        return [int(v) for v in self.array.reshape(-1)]

    def scalar(self) -> float:
        return self.array.reshape(-1)[0].item()


def op(*names):
    def register(fn):
        for n in names:
            OPS[n] = fn
        return fn

    return register


def _const(v, what, opname) -> Const:
    if not isinstance(v, Const):
        raise UnsupportedError(f"Paddle op {opname}: {what} is computed at run time; only a "
                               f"constant {what} is supported")
    return v


def _channel_last(attrs) -> bool:
    return attrs.get("data_format", "NCHW") in ("NHWC", "NDHWC", "NLC")


def _padding(attrs):
    algo = str(attrs.get("padding_algorithm", "EXPLICIT")).upper()
    return algo if algo in ("SAME", "VALID") else list(attrs.get("paddings", [0]))


# ------------------------------------------------------------ constants, structure
@op("full")
def _full(ctx, ins, a):
    dtype = a.get("dtype", "float32")
    return [Const(np.full(tuple(a.get("shape", [1])), a["value"], dtype=dtype))]


@op("full_int_array")
def _full_int_array(ctx, ins, a):
    return [Const(np.asarray(a["value"], dtype=a.get("dtype", "int64")))]


@op("combine")
def _combine(ctx, ins, a):
    return [list(ins)]


@op("assign")
def _assign(ctx, ins, a):
    return [ins[0]]


@op("dropout")
def _dropout(ctx, ins, a):
    # inference: upscale_in_train is the identity; downgrade_in_infer scales by 1 - p
    if a.get("mode", "upscale_in_train") == "upscale_in_train":
        return [ins[0]]
    p = _const(ins[2], "the drop probability", "dropout").scalar() if len(ins) > 2 and \
        ins[2] is not None else float(a.get("p", 0.5))
    return [ctx.emit("scale", [ins[0]], {"scale": 1.0 - p})]


# ------------------------------------------------------------ conv, norm, pool
@op("conv2d", "depthwise_conv2d")
def _conv2d(ctx, ins, a):
    return [ctx.emit("conv", [ins[0], ins[1], None],
                     {"stride": list(a.get("strides", [1, 1])), "padding": _padding(a),
                      "dilation": list(a.get("dilations", [1, 1])),
                      "groups": int(a.get("groups", 1)), "channel_last": _channel_last(a)})]


@op("batch_norm", "batch_norm_")
def _batch_norm(ctx, ins, a):
    x, mean, var, scale, bias = (list(ins) + [None] * 5)[:5]
    outs = ctx.emit("batch_norm", [x, mean, var, scale, bias],
                    {"training": False, "epsilon": float(a.get("epsilon", 1e-5)),
                     "channel_last": _channel_last(a)})
    return [outs[0]]


@op("layer_norm")
def _layer_norm(ctx, ins, a):
    x, w, b = (list(ins) + [None] * 3)[:3]
    outs = ctx.emit("layer_norm", [x, w, b], {"epsilon": float(a.get("epsilon", 1e-5)),
                                              "begin_norm_axis": int(a["begin_norm_axis"])})
    return [outs[0]]


@op("pool2d")
def _pool2d(ctx, ins, a):
    x = ins[0]
    kind = a.get("pooling_type", "max")
    cl = _channel_last(a)
    if kind not in ("max", "avg"):
        raise UnsupportedError(f"Paddle op pool2d: pooling_type {kind!r}")
    if a.get("global_pooling", False):
        return [_first(ctx.emit(f"adaptive_{kind}_pool", [x],
                                {"output_size": [1, 1], "channel_last": cl}))]
    ksize = _const(ins[1], "the kernel size", "pool2d").ints()
    if a.get("adaptive", False):
        return [_first(ctx.emit(f"adaptive_{kind}_pool", [x],
                                {"output_size": ksize, "channel_last": cl}))]
    attrs = {"kernel_size": ksize, "stride": list(a.get("strides", ksize)),
             "padding": _padding(a), "ceil_mode": bool(a.get("ceil_mode", False)),
             "channel_last": cl}
    if kind == "avg":
        attrs["exclusive"] = bool(a.get("exclusive", True))
    return [ctx.emit(f"{kind}_pool", [x], attrs)]


def _first(r):
    return r[0] if isinstance(r, tuple) else r


# ------------------------------------------------------------ activations
def _unary(paddle_name, fw_name, **fixed):
    @op(paddle_name, paddle_name + "_")
    def entry(ctx, ins, a):
        return [ctx.emit(fw_name, [ins[0]], dict(fixed))]

    return entry


for _n, _f in (("relu", "relu"), ("relu6", "relu6"), ("sigmoid", "sigmoid"),
               ("tanh", "tanh"), ("hardswish", "hardswish"), ("exp", "exp"),
               ("sqrt", "sqrt")):
    _unary(_n, _f)


@op("gelu")
def _gelu(ctx, ins, a):
    return [ctx.emit("gelu", [ins[0]], {"approximate": bool(a.get("approximate", False))})]


@op("softmax", "softmax_")
def _softmax(ctx, ins, a):
    return [ctx.emit("softmax", [ins[0]], {"axis": int(a.get("axis", -1))})]


# ------------------------------------------------------------ elementwise, matmul
def _binary(paddle_name, fw_name):
    @op(paddle_name, paddle_name + "_")
    def entry(ctx, ins, a):
        x, y = ctx.value(ins[0]), ctx.value(ins[1])
        axis = a.get("axis", -1)
        # 2.x elementwise ops align y with x from `axis` (not from the right); bring
        # y to NumPy broadcasting by appending unit dims
        if axis not in (-1, None) and y.ndim < x.ndim and axis + y.ndim != x.ndim:
            y = ctx.emit("reshape", [y], {"shape": list(y.shape) + [1] * (
                x.ndim - axis - y.ndim)})
        return [ctx.emit(fw_name, [x, y], {})]

    return entry


for _n in ("add", "subtract", "multiply", "divide", "maximum", "minimum"):
    _binary(_n, _n)


@op("matmul")
def _matmul(ctx, ins, a):
    return [ctx.emit("matmul", [ins[0], ins[1]],
                     {"transpose_x": bool(a.get("transpose_x", False)),
                      "transpose_y": bool(a.get("transpose_y", False))})]


@op("scale", "scale_")
def _scale(ctx, ins, a):
    s = _const(ins[1], "the scale", "scale").scalar() if len(ins) > 1 and ins[1] is not None \
        else float(a.get("scale", 1.0))
    return [ctx.emit("scale", [ins[0]], {"scale": float(s), "bias": float(a.get("bias", 0.0)),
                                         "bias_after_scale": bool(a.get("bias_after_scale",
                                                                        True))})]


@op("embedding")
def _embedding(ctx, ins, a):
    pad = a.get("padding_idx", -1)
    return [ctx.emit("embedding", [ins[0], ins[1]],
                     {"padding_idx": None if pad is None or pad == -1 else int(pad)})]


# ------------------------------------------------------------ shape
@op("flatten", "flatten_")
def _flatten(ctx, ins, a):
    return [ctx.emit("flatten", [ins[0]], {"start_axis": int(a.get("start_axis", 0)),
                                           "stop_axis": int(a.get("stop_axis", -1))})]


@op("reshape", "reshape_")
def _reshape(ctx, ins, a):
    shape = _const(ins[1], "the target shape", "reshape").ints()
    return [ctx.emit("reshape", [ins[0]], {"shape": shape})]


@op("transpose", "transpose_")
def _transpose(ctx, ins, a):
    return [ctx.emit("transpose", [ins[0]], {"perm": [int(p) for p in a["perm"]]})]


@op("concat")
def _concat(ctx, ins, a):
    axis = _const(ins[1], "the axis", "concat").ints()[0]
    return [ctx.emit("concat", [[ctx.value(v) for v in ins[0]]], {"axis": axis})]
