"""Activation layers: each wraps the function of the same name in
`fw.nn.functional` (PReLU owns its slope parameter)."""

from __future__ import annotations

from fw.nn import functional as F
from fw.nn import initializer as I
from fw.nn.layer.layers import Layer

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "Silu", "SiLU", "Swish",
           "Mish", "Hardswish", "Hardsigmoid", "Hardtanh", "Hardshrink", "Softshrink",
           "Softplus", "Softsign", "Tanhshrink", "LogSigmoid", "ThresholdedReLU", "Sigmoid",
           "Tanh", "Softmax", "Softmax2D", "LogSoftmax", "PReLU", "RReLU", "Maxout", "GLU"]


def _name_str(name, lead=True):
    if not name:
        return ""
    return f", name={name}" if lead else f"name={name}"


class _Act(Layer):
    """An activation with fixed keyword arguments `_kw` passed to `_fn`."""

    _fn = None
    _keys: tuple = ()

    def __init__(self, name=None, **kw):
        super().__init__()
        self._name = name
        self._kw = kw

    def forward(self, x):
        return type(self)._fn(x, **self._kw)

    def extra_repr(self) -> str:
        parts = [f"{k}={v}" for k, v in self._kw.items()]
        if self._name:
            parts.append(f"name={self._name}")
        return ", ".join(parts)


def _simple(cls_name, fn, doc):
    def __init__(self, name=None):
        _Act.__init__(self, name)

    return type(cls_name, (_Act,), {"__init__": __init__, "_fn": staticmethod(fn),
                                    "__doc__": doc, "__module__": __name__,
                                    "__qualname__": cls_name})


ReLU = _simple("ReLU", F.relu, """Rectified linear unit: ``max(x, 0)``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.ReLU()(x).tolist()]
    [0.0, 0.0, 1.5]
""")
ReLU6 = _simple("ReLU6", F.relu6, """ReLU capped at 6: ``min(max(x, 0), 6)``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.ReLU6()(x).tolist()]
    [0.0, 0.0, 1.5]
""")
Swish = _simple("Swish", F.swish, """Swish: ``x * sigmoid(x)``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Swish()(x).tolist()]
    [-0.2384, 0.0, 1.2264]
""")
Mish = _simple("Mish", F.mish, """Mish: ``x * tanh(softplus(x))``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Mish()(x).tolist()]
    [-0.2525, 0.0, 1.4034]
""")
Hardswish = _simple("Hardswish", F.hardswish, """Hard swish: ``x * min(max(x + 3, 0), 6) / 6``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Hardswish()(x).tolist()]
    [-0.3333, 0.0, 1.125]
""")
Hardsigmoid = _simple("Hardsigmoid", F.hardsigmoid, """Hard sigmoid:
``min(max(x / 6 + 0.5, 0), 1)``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Hardsigmoid()(x).tolist()]
    [0.1667, 0.5, 0.75]
""")
Softsign = _simple("Softsign", F.softsign, """Softsign: ``x / (1 + |x|)``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Softsign()(x).tolist()]
    [-0.6667, 0.0, 0.6]
""")
Tanhshrink = _simple("Tanhshrink", F.tanhshrink, """Tanh shrink: ``x - tanh(x)``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Tanhshrink()(x).tolist()]
    [-1.036, 0.0, 0.5949]
""")
LogSigmoid = _simple("LogSigmoid", F.log_sigmoid, """Log-sigmoid:
``log(1 / (1 + exp(-x)))``, computed stably.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.LogSigmoid()(x).tolist()]
    [-2.1269, -0.6931, -0.2014]
""")
Sigmoid = _simple("Sigmoid", F.sigmoid, """Sigmoid: ``1 / (1 + exp(-x))``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Sigmoid()(x).tolist()]
    [0.1192, 0.5, 0.8176]
""")
Tanh = _simple("Tanh", F.tanh, """Hyperbolic tangent: ``tanh(x)``.

Args:
    name (str, optional): a name for the layer, shown in its repr. Default: None.

Shape:
    - input: any shape.
    - output: the same shape as the input.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
    >>> [round(v, 4) for v in fw.nn.Tanh()(x).tolist()]
    [-0.964, 0.0, 0.9051]
""")


class LeakyReLU(_Act):
    """Leaky ReLU: ``x`` where ``x >= 0``, else ``negative_slope * x``.

    Args:
        negative_slope (float, optional): the slope for negative inputs. Default: 0.01.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.LeakyReLU(0.1)(x).tolist()]
        [-0.2, 0.0, 1.5]
    """

    _fn = staticmethod(F.leaky_relu)

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__(name, negative_slope=negative_slope)


class ELU(_Act):
    """ELU: ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha (float, optional): the saturation value for negative inputs. Default: 1.0.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.ELU(alpha=1.0)(x).tolist()]
        [-0.8647, 0.0, 1.5]
    """

    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(name, alpha=alpha)


class CELU(_Act):
    """CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        alpha (float, optional): the scale of the negative part; must not be 0. Default: 1.0.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.CELU(alpha=0.5)(x).tolist()]
        [-0.4908, 0.0, 1.5]
    """

    _fn = staticmethod(F.celu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(name, alpha=alpha)


class SELU(_Act):
    """SELU: ``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(x) - 1)``;
    the default constants make the activation self-normalising.

    Args:
        scale (float, optional): the outer scale. Default: 1.0507009873554804934193349852946.
        alpha (float, optional): the negative saturation.
            Default: 1.6732632423543772848170429916717.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.SELU()(x).tolist()]
        [-1.5202, 0.0, 1.5761]
    """

    _fn = staticmethod(F.selu)

    def __init__(self, scale=1.0507009873554804934193349852946,
                 alpha=1.6732632423543772848170429916717, name=None):
        super().__init__(name, scale=scale, alpha=alpha)


class GELU(_Act):
    """GELU: ``x * Phi(x)`` with ``Phi`` the standard normal CDF (the exact erf form),
    or its tanh approximation.

    Args:
        approximate (bool|str, optional): True or ``"tanh"`` for the tanh approximation,
            False or ``"none"`` for the exact form. Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.GELU()(x).tolist()]
        [-0.0455, 0.0, 1.3998]
    """

    _fn = staticmethod(F.gelu)

    def __init__(self, approximate=False, name=None):
        super().__init__(name, approximate=approximate)


class Silu(_Act):
    """SiLU: ``x * sigmoid(x)``. ``fw.nn.SiLU`` is the same class.

    Args:
        inplace (bool, optional): write the result into the input. Default: False.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.Silu()(x).tolist()]
        [-0.2384, 0.0, 1.2264]
    """

    _fn = staticmethod(F.silu)

    def __init__(self, inplace=False, name=None):
        super().__init__(name, inplace=inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self._kw["inplace"] else _name_str(self._name, False)


SiLU = Silu


class Hardtanh(_Act):
    """Hard tanh: ``x`` clipped to ``[min, max]``.

    Args:
        min (float, optional): the lower bound. Default: -1.0.
        max (float, optional): the upper bound. Default: 1.0.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.Hardtanh(-1.0, 1.0)(x).tolist()]
        [-1.0, 0.0, 1.0]
    """

    _fn = staticmethod(F.hardtanh)

    def __init__(self, min=-1.0, max=1.0, name=None):  # noqa: A002
        super().__init__(name, min=min, max=max)


class Hardshrink(_Act):
    """Hard shrink: ``x`` where ``|x| > threshold``, else 0.

    Args:
        threshold (float, optional): the threshold. Default: 0.5.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.Hardshrink(0.5)(x).tolist()]
        [-2.0, 0.0, 1.5]
    """

    _fn = staticmethod(F.hardshrink)

    def __init__(self, threshold=0.5, name=None):
        super().__init__(name, threshold=threshold)


class Softshrink(_Act):
    """Soft shrink: ``x - threshold`` where ``x > threshold``, ``x + threshold``
    where ``x < -threshold``, else 0.

    Args:
        threshold (float, optional): the threshold, at least 0. Default: 0.5.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.Softshrink(0.5)(x).tolist()]
        [-1.5, 0.0, 1.0]
    """

    _fn = staticmethod(F.softshrink)

    def __init__(self, threshold=0.5, name=None):
        super().__init__(name, threshold=threshold)


class Softplus(_Act):
    """Softplus: ``log(1 + exp(beta * x)) / beta``; linear (``x``) where
    ``beta * x > threshold``, for stability.

    Args:
        beta (float, optional): the sharpness. Default: 1.
        threshold (float, optional): above this value of ``beta * x`` the output is ``x``.
            Default: 20.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.Softplus()(x).tolist()]
        [0.1269, 0.6931, 1.7014]
    """

    _fn = staticmethod(F.softplus)

    def __init__(self, beta=1, threshold=20, name=None):
        super().__init__(name, beta=beta, threshold=threshold)


class ThresholdedReLU(_Act):
    """Thresholded ReLU: ``x`` where ``x > threshold``, else ``value``.

    Args:
        threshold (float, optional): the threshold. Default: 1.0.
        value (float, optional): the output below the threshold. Default: 0.0.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.ThresholdedReLU(1.0)(x).tolist()]
        [0.0, 0.0, 1.5]
    """

    _fn = staticmethod(F.thresholded_relu)

    def __init__(self, threshold=1.0, value=0.0, name=None):
        super().__init__(name, threshold=threshold, value=value)


class Softmax(_Act):
    """Softmax along ``axis``: ``exp(x) / sum(exp(x))``, computed with the maximum
    subtracted for stability.

    Args:
        axis (int, optional): the axis normalised. Default: -1.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.Softmax()(x).tolist()]
        [0.0241, 0.178, 0.7979]
    """

    _fn = staticmethod(F.softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class Softmax2D(Layer):
    """Softmax over the channel axis (``-3``) of a ``[N, C, H, W]`` or ``[C, H, W]``
    input, so that each pixel's channel values sum to 1.

    Args:
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]`` or ``[C, H, W]``; output: the same shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[1.0]], [[1.0]]]])
        >>> fw.nn.Softmax2D()(x).numpy().ravel().tolist()
        [0.5, 0.5]
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        if len(x.shape) not in (3, 4):
            raise ValueError(f"Softmax2D: x must be 3-D or 4-D, got shape {list(x.shape)}")
        return F.softmax(x, axis=-3)


class LogSoftmax(_Act):
    """Log-softmax along ``axis``: ``x - logsumexp(x)``.

    Args:
        axis (int, optional): the axis normalised. Default: -1.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape.
        - output: the same shape as the input.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5])
        >>> [round(v, 4) for v in fw.nn.LogSoftmax()(x).tolist()]
        [-3.7258, -1.7258, -0.2258]
    """

    _fn = staticmethod(F.log_softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class RReLU(_Act):
    """Randomised leaky ReLU: ``x`` where ``x >= 0``, else ``a * x``.

    While training, each element draws its slope ``a`` uniformly from
    ``[lower, upper]``; in evaluation ``a = (lower + upper) / 2``.

    Args:
        lower (float, optional): the lower bound of the slope. Default: 1/8.
        upper (float, optional): the upper bound of the slope. Default: 1/3.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape; output: the same shape.

    Examples:
        >>> import fw
        >>> layer = fw.nn.RReLU().eval()
        >>> [round(v, 4) for v in layer(fw.to_tensor([-2.0, 1.0])).tolist()]
        [-0.4583, 1.0]
    """

    def __init__(self, lower=1.0 / 8.0, upper=1.0 / 3.0, name=None):
        super().__init__(name, lower=lower, upper=upper)

    def forward(self, x):
        return F.rrelu(x, self._kw["lower"], self._kw["upper"], training=self.training)


class Maxout(_Act):
    """Maxout: splits the ``axis`` channels into ``C / groups`` consecutive groups of
    ``groups`` channels and keeps the maximum of each group.

    Args:
        groups (int): the number of channels per group; must divide the channel count.
        axis (int, optional): the channel axis, 1 or -1 (or 3 for 4-D input). Default: 1.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[N, C, H, W]``; output: ``[N, C / groups, H, W]``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[[1.0]], [[3.0]], [[2.0]], [[0.0]]]])
        >>> fw.nn.Maxout(groups=2)(x).numpy().ravel().tolist()
        [3.0, 2.0]
    """

    _fn = staticmethod(F.maxout)

    def __init__(self, groups, axis=1, name=None):
        super().__init__(name, groups=groups, axis=axis)


class GLU(_Act):
    """Gated linear unit: splits ``x`` in two halves ``a, b`` along ``axis`` and returns
    ``a * sigmoid(b)``.

    Args:
        axis (int, optional): the axis split; its size must be even. Default: -1.
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: ``[*, 2 * d, *]`` with the even axis at ``axis``.
        - output: that axis halved.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([-2.0, 0.0, 1.5, 3.0])
        >>> [round(v, 4) for v in fw.nn.GLU()(x).tolist()]
        [-1.6351, 0.0]
    """

    _fn = staticmethod(F.glu)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class PReLU(Layer):
    """Parametric ReLU: ``x`` where ``x >= 0``, else ``weight * x`` with a learnt slope,
    shared by all channels (``num_parameters=1``) or one per channel.

    Args:
        num_parameters (int, optional): 1, or the number of channels. Default: 1.
        init (float, optional): the initial slope. Default: 0.25.
        weight_attr (ParamAttr, optional): attributes of the slope parameter. Default: None.
        data_format (str, optional): where the channel axis is: ``"NC"``, ``"NCL"``,
            ``"NCHW"``, ``"NCDHW"`` (channel first) or the channel-last forms.
            Default: "NCHW".
        name (str, optional): a name for the layer, shown in its repr. Default: None.

    Shape:
        - input: any shape with the channel axis where ``data_format`` puts it.
        - output: the same shape.

    Examples:
        >>> import fw
        >>> prelu = fw.nn.PReLU()
        >>> prelu(fw.to_tensor([-2.0, 1.0])).tolist()
        [-0.5, 1.0]
        >>> fw.nn.PReLU(num_parameters=3)(fw.ones([2, 3, 4, 4])).shape
        [2, 3, 4, 4]
    """

    def __init__(self, num_parameters=1, init=0.25, weight_attr=None, data_format="NCHW",
                 name=None):
        super().__init__()
        self._num_parameters = num_parameters
        self._init = init
        self._data_format = data_format
        self._name = name
        self.weight = self.create_parameter([num_parameters], weight_attr,
                                            default_initializer=I.Constant(init))

    def forward(self, x):
        return F.prelu(x, self.weight, data_format=self._data_format)

    def extra_repr(self) -> str:
        return (f"num_parameters={self._num_parameters}, data_format={self._data_format}, "
                f"init={self._init}, dtype={self._dtype}{_name_str(self._name)}")
