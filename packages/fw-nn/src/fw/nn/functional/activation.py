"""Activation functions of ``paddle.nn.functional`` over fw-core's activation ops
(see `fw.core.ops.activation` for the exact formulas). In-place ``name_``
variants compute out of place and write the result into x."""

from __future__ import annotations

import fw
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.nn.functional._helpers import channel_last, inplace, op

__all__ = ["celu", "celu_", "elu", "elu_", "gelu", "glu", "gumbel_softmax", "hardshrink",
           "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_",
           "log_sigmoid", "logsigmoid", "log_softmax", "maxout", "mish", "prelu", "relu",
           "relu_", "relu6", "rrelu", "selu", "sigmoid", "silu", "softmax", "softmax_",
           "softplus", "softshrink", "softsign", "swish", "swiglu", "tanh", "tanh_",
           "tanhshrink", "thresholded_relu", "thresholded_relu_"]


def relu(x, name=None):
    """max(x, 0).

    >>> import fw
    >>> fw.nn.functional.relu(fw.to_tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return op("relu", [x])


def relu_(x, name=None):
    return inplace("relu_", x, relu(x))


def relu6(x, name=None):
    """min(max(x, 0), 6)."""
    return op("relu6", [x])


def leaky_relu(x, negative_slope=0.01, name=None):
    """x if x > 0 else negative_slope * x."""
    return op("leaky_relu", [x], negative_slope=negative_slope)


def leaky_relu_(x, negative_slope=0.01, name=None):
    return inplace("leaky_relu_", x, leaky_relu(x, negative_slope))


def elu(x, alpha=1.0, name=None):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    return op("elu", [x], alpha=alpha)


def elu_(x, alpha=1.0, name=None):
    return inplace("elu_", x, elu(x, alpha))


def celu(x, alpha=1.0, name=None):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import fw
    >>> round(fw.nn.functional.celu(fw.to_tensor([-1.0]), alpha=0.2).item(), 4)
    -0.1987
    """
    return op("celu", [x], alpha=alpha)


def celu_(x, alpha=1.0, name=None):
    return inplace("celu_", x, celu(x, alpha))


def selu(x, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717,
         name=None):
    """scale * (x if x > 0 else alpha * (exp(x) - 1))."""
    return op("selu", [x], scale=scale, alpha=alpha)


def gelu(x, approximate=False, name=None):
    """x * Phi(x); ``approximate`` True or ``"tanh"`` uses the tanh approximation
    (``False``/``"none"`` the exact erf form)."""
    if isinstance(approximate, str):
        if approximate not in ("tanh", "none"):
            raise InvalidArgumentError(f"gelu: 'approximate' must be a bool, 'tanh' or 'none', "
                                       f"got {approximate!r}")
        approximate = approximate == "tanh"
    return op("gelu", [x], approximate=bool(approximate))


def silu(x, inplace=False, name=None):
    """x * sigmoid(x); ``inplace=True`` writes the result into x."""
    out = op("silu", [x])
    if inplace:
        from fw.nn.functional._helpers import inplace as _ip

        return _ip("silu_", x, out)
    return out


def swish(x, name=None):
    """x * sigmoid(x) (the same as `silu`)."""
    return op("silu", [x])


def mish(x, name=None):
    """x * tanh(softplus(x))."""
    return op("mish", [x])


def hardswish(x, name=None):
    """x * min(max(x + 3, 0), 6) / 6."""
    return op("hardswish", [x])


def hardsigmoid(x, slope=0.1666667, offset=0.5, name=None):
    """min(max(slope * x + offset, 0), 1)."""
    return op("hardsigmoid", [x], slope=slope, offset=offset)


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002
    """clip(x, min, max)."""
    return op("hardtanh", [x], min=min, max=max)


def hardtanh_(x, min=-1.0, max=1.0, name=None):  # noqa: A002
    return inplace("hardtanh_", x, hardtanh(x, min, max))


def hardshrink(x, threshold=0.5, name=None):
    """x if |x| > threshold else 0."""
    return op("hardshrink", [x], threshold=threshold)


def softshrink(x, threshold=0.5, name=None):
    """x - t if x > t, x + t if x < -t, else 0."""
    return op("softshrink", [x], threshold=threshold)


def softplus(x, beta=1, threshold=20, name=None):
    """log(1 + exp(beta * x)) / beta (x itself where beta * x > threshold)."""
    return op("softplus", [x], beta=beta, threshold=threshold)


def softsign(x, name=None):
    """x / (1 + |x|)."""
    return op("softsign", [x])


def tanhshrink(x, name=None):
    """x - tanh(x)."""
    return op("tanhshrink", [x])


def log_sigmoid(x, name=None):
    """log(sigmoid(x)), numerically stable."""
    return op("log_sigmoid", [x])


logsigmoid = log_sigmoid


def thresholded_relu(x, threshold=1.0, value=0.0, name=None):
    """x if x > threshold else value."""
    return op("thresholded_relu", [x], threshold=threshold, value=value)


def thresholded_relu_(x, threshold=1.0, value=0.0, name=None):
    return inplace("thresholded_relu_", x, thresholded_relu(x, threshold, value))


def sigmoid(x, name=None):
    """1 / (1 + exp(-x))."""
    return fw.sigmoid(x)


def tanh(x, name=None):
    return fw.tanh(x)


def tanh_(x, name=None):
    return fw.tanh_(x)


def prelu(x, weight, data_format="NCHW", name=None):
    """x if x > 0 else weight * x; `weight` has one element or one per channel.

    >>> import fw
    >>> fw.nn.functional.prelu(fw.to_tensor([[-2.0, 1.0]]), fw.to_tensor([0.25])).tolist()
    [[-0.5, 1.0]]
    """
    cl = channel_last(data_format, ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"),
                      "prelu")
    return op("prelu", [x, weight], channel_last=cl)


def rrelu(x, lower=1.0 / 8.0, upper=1.0 / 3.0, training=True, name=None):
    """Randomized leaky relu: negative inputs are scaled by a slope drawn from
    U(lower, upper) per element while training, (lower + upper) / 2 otherwise."""
    return op("rrelu", [x], lower=lower, upper=upper, training=training)[0]


def maxout(x, groups, axis=1, name=None):
    """Max over consecutive groups of `groups` channels along `axis`."""
    return op("maxout", [x], groups=groups, axis=axis)


def glu(x, axis=-1, name=None):
    """a * sigmoid(b) for the halves [a, b] of x along `axis`."""
    return op("glu", [x], axis=axis)


def swiglu(x, y=None, name=None):
    """silu(x) * y; without y, silu(a) * b for the halves of x's last axis."""
    return op("swiglu", [x, y])


def _cast_for(x, dtype):
    if dtype is None:
        return x
    d = _dt.convert_dtype(dtype)
    return x if x.dtype is d else fw.cast(x, d)


def softmax(x, axis=-1, dtype=None, name=None):
    """exp(x) / sum(exp(x)) along `axis` (x cast to `dtype` first when given).

    >>> import fw
    >>> fw.nn.functional.softmax(fw.to_tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    return op("softmax", [_cast_for(x, dtype)], axis=axis)


def softmax_(x, axis=-1, dtype=None, name=None):
    return inplace("softmax_", x, softmax(x, axis, dtype))


def log_softmax(x, axis=-1, dtype=None, name=None):
    """x - logsumexp(x) along `axis` (x cast to `dtype` first when given)."""
    return op("log_softmax", [_cast_for(x, dtype)], axis=axis)


def gumbel_softmax(x, temperature=1.0, hard=False, axis=-1, name=None):
    """softmax((x + Gumbel noise) / temperature) along axis; ``hard=True`` returns the
    one-hot of the sample's argmax with the soft sample's gradient (straight-through)."""
    return op("gumbel_softmax", [x], temperature=temperature, hard=hard, axis=axis)[0]
