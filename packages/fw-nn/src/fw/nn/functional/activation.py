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
    """Rectified linear unit: ``max(x, 0)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.relu(x).tolist()]
        [0.0, 0.0, 1.5]
    """
    return op("relu", [x])


def relu_(x, name=None):
    """In-place `relu`: computes ``relu(x)`` and writes it into ``x``.

    Args:
        x (Tensor): the input, overwritten with the result.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> _ = fw.nn.functional.relu_(x)
        >>> [round(v, 4) for v in x.tolist()]
        [0.0, 0.0, 1.5]
    """
    return inplace("relu_", x, relu(x))


def relu6(x, name=None):
    """ReLU capped at 6: ``min(max(x, 0), 6)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.relu6(x).tolist()]
        [0.0, 0.0, 1.5]
    """
    return op("relu6", [x])


def leaky_relu(x, negative_slope=0.01, name=None):
    """Leaky ReLU: ``x`` where ``x >= 0``, else ``negative_slope * x``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        negative_slope (float, optional): the slope for negative inputs. Default: 0.01.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.leaky_relu(x, negative_slope=0.1).tolist()]
        [-0.2, 0.0, 1.5]
    """
    return op("leaky_relu", [x], negative_slope=negative_slope)


def leaky_relu_(x, negative_slope=0.01, name=None):
    """In-place `leaky_relu`: computes ``leaky_relu(x)`` and writes it into ``x``.

    Args:
        x (Tensor): the input, overwritten with the result.
        negative_slope (float, optional): the slope for negative inputs. Default: 0.01.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> _ = fw.nn.functional.leaky_relu_(x)
        >>> [round(v, 4) for v in x.tolist()]
        [-0.02, 0.0, 1.5]
    """
    return inplace("leaky_relu_", x, leaky_relu(x, negative_slope))


def elu(x, alpha=1.0, name=None):
    """ELU: ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        alpha (float, optional): the negative saturation value. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.elu(x).tolist()]
        [-0.8647, 0.0, 1.5]
    """
    return op("elu", [x], alpha=alpha)


def elu_(x, alpha=1.0, name=None):
    """In-place `elu`: computes ``elu(x)`` and writes it into ``x``.

    Args:
        x (Tensor): the input, overwritten with the result.
        alpha (float, optional): the negative saturation value. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> _ = fw.nn.functional.elu_(x)
        >>> [round(v, 4) for v in x.tolist()]
        [-0.8647, 0.0, 1.5]
    """
    return inplace("elu_", x, elu(x, alpha))


def celu(x, alpha=1.0, name=None):
    """CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        alpha (float, optional): the scale of the negative part; not 0. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.celu(x, alpha=0.5).tolist()]
        [-0.4908, 0.0, 1.5]
    """
    return op("celu", [x], alpha=alpha)


def celu_(x, alpha=1.0, name=None):
    """In-place `celu`: computes ``celu(x)`` and writes it into ``x``.

    Args:
        x (Tensor): the input, overwritten with the result.
        alpha (float, optional): the scale of the negative part; not 0. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> _ = fw.nn.functional.celu_(x)
        >>> [round(v, 4) for v in x.tolist()]
        [-0.8647, 0.0, 1.5]
    """
    return inplace("celu_", x, celu(x, alpha))


def selu(x, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717,
         name=None):
    """SELU: ``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(x) - 1)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        scale (float, optional): the outer scale (> 1). Default: 1.0507009873554804934193349852946.
        alpha (float, optional): the negative saturation (>= 0).
            Default: 1.6732632423543772848170429916717.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.selu(x).tolist()]
        [-1.5202, 0.0, 1.5761]
    """
    return op("selu", [x], scale=scale, alpha=alpha)


def gelu(x, approximate=False, name=None):
    """GELU: ``x * Phi(x)`` with ``Phi`` the standard normal CDF; the tanh approximation
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3)))`` with ``approximate``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        approximate (bool|str, optional): True or ``"tanh"`` for the tanh form, False or
            ``"none"`` for the exact erf form. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.gelu(x).tolist()]
        [-0.0455, 0.0, 1.3998]
    """
    if isinstance(approximate, str):
        if approximate not in ("tanh", "none"):
            raise InvalidArgumentError(f"gelu: 'approximate' must be a bool, 'tanh' or 'none', "
                                       f"got {approximate!r}")
        approximate = approximate == "tanh"
    return op("gelu", [x], approximate=bool(approximate))


def silu(x, inplace=False, name=None):
    """SiLU: ``x * sigmoid(x)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        inplace (bool, optional): write the result into ``x``. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.silu(x).tolist()]
        [-0.2384, 0.0, 1.2264]
    """
    out = op("silu", [x])
    if inplace:
        from fw.nn.functional._helpers import inplace as _ip

        return _ip("silu_", x, out)
    return out


def swish(x, name=None):
    """Swish: ``x * sigmoid(x)`` (the same as `silu`).

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.swish(x).tolist()]
        [-0.2384, 0.0, 1.2264]
    """
    return op("silu", [x])


def mish(x, name=None):
    """Mish: ``x * tanh(softplus(x))``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.mish(x).tolist()]
        [-0.2525, 0.0, 1.4034]
    """
    return op("mish", [x])


def hardswish(x, name=None):
    """Hard swish: ``x * min(max(x + 3, 0), 6) / 6``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.hardswish(x).tolist()]
        [-0.3333, 0.0, 1.125]
    """
    return op("hardswish", [x])


def hardsigmoid(x, slope=0.1666667, offset=0.5, name=None):
    """Hard sigmoid: ``min(max(slope * x + offset, 0), 1)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        slope (float, optional): the slope. Default: 0.1666667.
        offset (float, optional): the offset. Default: 0.5.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.hardsigmoid(x).tolist()]
        [0.1667, 0.5, 0.75]
    """
    return op("hardsigmoid", [x], slope=slope, offset=offset)


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002
    """Hard tanh: ``x`` clipped to ``[min, max]``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        min (float, optional): the lower bound. Default: -1.0.
        max (float, optional): the upper bound. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.hardtanh(x).tolist()]
        [-1.0, 0.0, 1.0]
    """
    return op("hardtanh", [x], min=min, max=max)


def hardtanh_(x, min=-1.0, max=1.0, name=None):  # noqa: A002
    """In-place `hardtanh`: computes ``hardtanh(x)`` and writes it into ``x``.

    Args:
        x (Tensor): the input, overwritten with the result.
        min (float, optional): the lower bound. Default: -1.0.
        max (float, optional): the upper bound. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> _ = fw.nn.functional.hardtanh_(x)
        >>> [round(v, 4) for v in x.tolist()]
        [-1.0, 0.0, 1.0]
    """
    return inplace("hardtanh_", x, hardtanh(x, min, max))


def hardshrink(x, threshold=0.5, name=None):
    """Hard shrink: ``x`` where ``|x| > threshold``, else 0.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        threshold (float, optional): the threshold. Default: 0.5.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.hardshrink(x).tolist()]
        [-2.0, 0.0, 1.5]
    """
    return op("hardshrink", [x], threshold=threshold)


def softshrink(x, threshold=0.5, name=None):
    """Soft shrink: ``x - threshold`` where ``x > threshold``, ``x + threshold`` where
    ``x < -threshold``, else 0.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        threshold (float, optional): the threshold, at least 0. Default: 0.5.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.softshrink(x).tolist()]
        [-1.5, 0.0, 1.0]
    """
    return op("softshrink", [x], threshold=threshold)


def softplus(x, beta=1, threshold=20, name=None):
    """Softplus: ``log(1 + exp(beta * x)) / beta``, and ``x`` itself where
    ``beta * x > threshold`` (for stability).

    Args:
        x (Tensor): the input, a float tensor of any shape.
        beta (float, optional): the sharpness. Default: 1.
        threshold (float, optional): the linear-region threshold. Default: 20.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.softplus(x).tolist()]
        [0.1269, 0.6931, 1.7014]
    """
    return op("softplus", [x], beta=beta, threshold=threshold)


def softsign(x, name=None):
    """Softsign: ``x / (1 + |x|)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.softsign(x).tolist()]
        [-0.6667, 0.0, 0.6]
    """
    return op("softsign", [x])


def tanhshrink(x, name=None):
    """Tanh shrink: ``x - tanh(x)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.tanhshrink(x).tolist()]
        [-1.036, 0.0, 0.5949]
    """
    return op("tanhshrink", [x])


def log_sigmoid(x, name=None):
    """Log-sigmoid: ``log(1 / (1 + exp(-x)))``, computed stably. ``logsigmoid`` is the
    same function.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.log_sigmoid(x).tolist()]
        [-2.1269, -0.6931, -0.2014]
    """
    return op("log_sigmoid", [x])


logsigmoid = log_sigmoid


def thresholded_relu(x, threshold=1.0, value=0.0, name=None):
    """Thresholded ReLU: ``x`` where ``x > threshold``, else ``value``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        threshold (float, optional): the threshold. Default: 1.0.
        value (float, optional): the output at or below the threshold. Default: 0.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.thresholded_relu(x).tolist()]
        [0.0, 0.0, 1.5]
    """
    return op("thresholded_relu", [x], threshold=threshold, value=value)


def thresholded_relu_(x, threshold=1.0, value=0.0, name=None):
    """In-place `thresholded_relu`: computes ``thresholded_relu(x)`` and writes it into ``x``.

    Args:
        x (Tensor): the input, overwritten with the result.
        threshold (float, optional): the threshold. Default: 1.0.
        value (float, optional): the output at or below the threshold. Default: 0.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> _ = fw.nn.functional.thresholded_relu_(x)
        >>> [round(v, 4) for v in x.tolist()]
        [0.0, 0.0, 1.5]
    """
    return inplace("thresholded_relu_", x, thresholded_relu(x, threshold, value))


def sigmoid(x, name=None):
    """Sigmoid: ``1 / (1 + exp(-x))``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.sigmoid(x).tolist()]
        [0.1192, 0.5, 0.8176]
    """
    return fw.sigmoid(x)


def tanh(x, name=None):
    """Hyperbolic tangent: ``tanh(x)``.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.functional.tanh(x).tolist()]
        [-0.964, 0.0, 0.9051]
    """
    return fw.tanh(x)


def tanh_(x, name=None):
    """In-place `tanh`: computes ``tanh(x)`` and writes it into ``x``.

    Args:
        x (Tensor): the input, overwritten with the result.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> _ = fw.nn.functional.tanh_(x)
        >>> [round(v, 4) for v in x.tolist()]
        [-0.964, 0.0, 0.9051]
    """
    return fw.tanh_(x)


def prelu(x, weight, data_format="NCHW", name=None):
    """Parametric ReLU: ``x`` where ``x >= 0``, else ``weight * x``, with one slope for
    all channels or one per channel.

    Args:
        x (Tensor): a float input with a channel axis (unless ``weight`` has one element).
        weight (Tensor): the slopes, 1 element or one per channel.
        data_format (str, optional): where the channel axis is: ``"NC"``, ``"NCL"``,
            ``"NCHW"``, ``"NCDHW"`` or the channel-last ``"NLC"``, ``"NHWC"``, ``"NDHWC"``.
            Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[-2.0, 1.0], [-4.0, 3.0]])
        >>> fw.nn.functional.prelu(x, fw.to_tensor([0.25])).tolist()
        [[-0.5, 1.0], [-1.0, 3.0]]
        >>> fw.nn.functional.prelu(x, fw.to_tensor([0.5, 0.1]), data_format='NC').tolist()
        [[-1.0, 1.0], [-2.0, 3.0]]
    """
    cl = channel_last(data_format, ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"),
                      "prelu")
    return op("prelu", [x, weight], channel_last=cl)


def rrelu(x, lower=1.0 / 8.0, upper=1.0 / 3.0, training=True, name=None):
    """Randomised leaky ReLU: ``x`` where ``x >= 0``, else ``a * x`` with ``a`` drawn per
    element from ``U(lower, upper)`` while training and ``(lower + upper) / 2`` otherwise.

    Args:
        x (Tensor): the input, a float tensor of any shape.
        lower (float, optional): the lower bound of the slope. Default: 1/8.
        upper (float, optional): the upper bound of the slope. Default: 1/3.
        training (bool, optional): draw random slopes. Default: True.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result, with ``x``'s shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 1.0])
        >>> [round(v, 4) for v in fw.nn.functional.rrelu(x, training=False).tolist()]
        [-0.4583, 1.0]
        >>> y = fw.nn.functional.rrelu(x)
        >>> -2 / 3 <= y[0].item() <= -2 / 8
        True
    """
    return op("rrelu", [x], lower=lower, upper=upper, training=training)[0]


def maxout(x, groups, axis=1, name=None):
    """Maxout: the channels along ``axis`` are split into consecutive groups of
    ``groups`` channels and each group is reduced to its maximum.

    Args:
        x (Tensor): a 4-D input ``[N, C, H, W]`` (or NHWC with ``axis=-1``/3).
        groups (int): channels per group; must divide C.
        axis (int, optional): the channel axis, 1, -1 or 3. Default: 1.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``[N, C / groups, H, W]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[1.0]], [[3.0]], [[2.0]], [[0.0]]]])
        >>> fw.nn.functional.maxout(x, groups=2).numpy().ravel().tolist()
        [3.0, 2.0]
    """
    return op("maxout", [x], groups=groups, axis=axis)


def glu(x, axis=-1, name=None):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``x`` along
    ``axis``.

    Args:
        x (Tensor): a float input whose ``axis`` has an even size.
        axis (int, optional): the axis split. Default: -1.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``'s shape with ``axis`` halved.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1.0, 2.0, 0.0, 100.0]])
        >>> [round(v, 4) for v in fw.nn.functional.glu(x)[0].tolist()]
        [0.5, 2.0]
    """
    return op("glu", [x], axis=axis)


def swiglu(x, y=None, name=None):
    """SwiGLU: ``silu(x) * y``; without ``y``, ``silu(a) * b`` for the two halves
    ``a, b`` of ``x``'s last axis (the LLaMA feed-forward gate).

    Args:
        x (Tensor): the gate input (or both halves when ``y`` is None).
        y (Tensor, optional): the value input, ``x``'s shape. Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the result (the last axis halved when ``y`` is None).

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0])
        >>> [round(v, 4) for v in fw.nn.functional.swiglu(x, fw.to_tensor([2.0, 0.5])).tolist()]
        [1.4621, 0.8808]
        >>> [round(v, 4) for v in fw.nn.functional.swiglu(fw.to_tensor([1.0, 2.0])).tolist()]
        [1.4621]
    """
    return op("swiglu", [x, y])


def _cast_for(x, dtype):
    if dtype is None:
        return x
    d = _dt.convert_dtype(dtype)
    return x if x.dtype is d else fw.cast(x, d)


def softmax(x, axis=-1, dtype=None, name=None):
    """Softmax along ``axis``: ``exp(x) / sum(exp(x))``, computed with the maximum
    subtracted so large inputs do not overflow. Paddle 3's ``dim`` is accepted for ``axis``.

    Args:
        x (Tensor): a float input.
        axis (int, optional): the axis normalised. Default: -1.
        dtype (str, optional): cast ``x`` to this dtype first (e.g. ``"float64"``).
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: probabilities along ``axis``, ``x``'s shape (in ``dtype`` when given).

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
        >>> [round(v, 4) for v in fw.nn.functional.softmax(x)[0].tolist()]
        [0.09, 0.2447, 0.6652]
        >>> fw.nn.functional.softmax(x, axis=0).sum(axis=0).tolist()
        [1.0, 1.0, 0.9999999403953552]
        >>> fw.nn.functional.softmax(fw.to_tensor([1000.0, 1000.0])).tolist()
        [0.5, 0.5]
    """
    return op("softmax", [_cast_for(x, dtype)], axis=axis)


def softmax_(x, axis=-1, dtype=None, name=None):
    """In-place `softmax`: writes ``softmax(x, axis)`` into ``x``.

    Args:
        x (Tensor): a float input, overwritten with the result.
        axis (int, optional): the axis normalised. Default: -1.
        dtype (str, optional): cast ``x`` to this dtype first (e.g. ``"float64"``).
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x``, holding the result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([0.0, 0.0])
        >>> _ = fw.nn.functional.softmax_(x)
        >>> x.tolist()
        [0.5, 0.5]
    """
    return inplace("softmax_", x, softmax(x, axis, dtype))


def log_softmax(x, axis=-1, dtype=None, name=None):
    """Log-softmax along ``axis``: ``x - logsumexp(x)``, computed stably (better than
    ``log(softmax(x))`` for very negative values).

    Args:
        x (Tensor): a float input.
        axis (int, optional): the axis normalised. Default: -1.
        dtype (str, optional): cast ``x`` to this dtype first (e.g. ``"float64"``).
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: log-probabilities along ``axis``, ``x``'s shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0, 3.0])
        >>> [round(v, 4) for v in fw.nn.functional.log_softmax(x).tolist()]
        [-2.4076, -1.4076, -0.4076]
    """
    return op("log_softmax", [_cast_for(x, dtype)], axis=axis)


def gumbel_softmax(x, temperature=1.0, hard=False, axis=-1, name=None):
    """Sample from the Gumbel-softmax (Concrete) distribution:
    ``softmax((x + g) / temperature)`` with ``g`` Gumbel(0, 1) noise. With ``hard=True``
    the result is the one-hot of the sample's argmax, with the soft sample's gradient
    (the straight-through estimator).

    Args:
        x (Tensor): unnormalised log-probabilities.
        temperature (float, optional): > 0; lower is closer to one-hot. Default: 1.0.
        hard (bool, optional): return one-hot samples. Default: False.
        axis (int, optional): the category axis. Default: -1.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the samples, ``x``'s shape.

    Examples:
        >>> import fw
        >>> logits = fw.to_tensor([[1.0, 2.0, 3.0]])
        >>> y = fw.nn.functional.gumbel_softmax(logits, temperature=0.5)
        >>> y.shape, round(y.sum().item(), 4)
        ([1, 3], 1.0)
        >>> sorted(fw.nn.functional.gumbel_softmax(logits, hard=True)[0].tolist())
        [0.0, 0.0, 1.0]
    """
    return op("gumbel_softmax", [x], temperature=temperature, hard=hard, axis=axis)[0]
