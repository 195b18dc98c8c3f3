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


ReLU = _simple("ReLU", F.relu, "max(x, 0).")
ReLU6 = _simple("ReLU6", F.relu6, "min(max(x, 0), 6).")
Swish = _simple("Swish", F.swish, "x * sigmoid(x).")
Mish = _simple("Mish", F.mish, "x * tanh(softplus(x)).")
Hardswish = _simple("Hardswish", F.hardswish, "x * min(max(x + 3, 0), 6) / 6.")
Hardsigmoid = _simple("Hardsigmoid", F.hardsigmoid, "min(max(x / 6 + 0.5, 0), 1).")
Softsign = _simple("Softsign", F.softsign, "x / (1 + |x|).")
Tanhshrink = _simple("Tanhshrink", F.tanhshrink, "x - tanh(x).")
LogSigmoid = _simple("LogSigmoid", F.log_sigmoid, "log(sigmoid(x)).")
Sigmoid = _simple("Sigmoid", F.sigmoid, "1 / (1 + exp(-x)).")
Tanh = _simple("Tanh", F.tanh, "tanh(x).")


class LeakyReLU(_Act):
    """x if x > 0 else negative_slope * x."""

    _fn = staticmethod(F.leaky_relu)

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__(name, negative_slope=negative_slope)


class ELU(_Act):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(name, alpha=alpha)


class CELU(_Act):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import fw
    >>> fw.nn.CELU(0.2)(fw.to_tensor([1.0])).tolist()
    [1.0]
    """

    _fn = staticmethod(F.celu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(name, alpha=alpha)


class SELU(_Act):
    """scale * (x if x > 0 else alpha * (exp(x) - 1))."""

    _fn = staticmethod(F.selu)

    def __init__(self, scale=1.0507009873554804934193349852946,
                 alpha=1.6732632423543772848170429916717, name=None):
        super().__init__(name, scale=scale, alpha=alpha)


class GELU(_Act):
    """x * Phi(x); ``approximate`` True/``"tanh"`` for the tanh form."""

    _fn = staticmethod(F.gelu)

    def __init__(self, approximate=False, name=None):
        super().__init__(name, approximate=approximate)


class Silu(_Act):
    """x * sigmoid(x); ``inplace=True`` overwrites the input."""

    _fn = staticmethod(F.silu)

    def __init__(self, inplace=False, name=None):
        super().__init__(name, inplace=inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self._kw["inplace"] else _name_str(self._name, False)


SiLU = Silu


class Hardtanh(_Act):
    """clip(x, min, max)."""

    _fn = staticmethod(F.hardtanh)

    def __init__(self, min=-1.0, max=1.0, name=None):  # noqa: A002
        super().__init__(name, min=min, max=max)


class Hardshrink(_Act):
    """x if |x| > threshold else 0."""

    _fn = staticmethod(F.hardshrink)

    def __init__(self, threshold=0.5, name=None):
        super().__init__(name, threshold=threshold)


class Softshrink(_Act):
    """Shrink x towards 0 by threshold."""

    _fn = staticmethod(F.softshrink)

    def __init__(self, threshold=0.5, name=None):
        super().__init__(name, threshold=threshold)


class Softplus(_Act):
    """log(1 + exp(beta * x)) / beta."""

    _fn = staticmethod(F.softplus)

    def __init__(self, beta=1, threshold=20, name=None):
        super().__init__(name, beta=beta, threshold=threshold)


class ThresholdedReLU(_Act):
    """x if x > threshold else value."""

    _fn = staticmethod(F.thresholded_relu)

    def __init__(self, threshold=1.0, value=0.0, name=None):
        super().__init__(name, threshold=threshold, value=value)


class Softmax(_Act):
    """Softmax along `axis`."""

    _fn = staticmethod(F.softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class Softmax2D(Layer):
    """Softmax over the channel axis of ``[N, C, H, W]`` or ``[C, H, W]`` input."""

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        if len(x.shape) not in (3, 4):
            raise ValueError(f"Softmax2D: x must be 3-D or 4-D, got shape {list(x.shape)}")
        return F.softmax(x, axis=-3)


class LogSoftmax(_Act):
    """log(softmax(x)) along `axis`."""

    _fn = staticmethod(F.log_softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class RReLU(_Act):
    """Randomized leaky relu (random slopes in [lower, upper] while training, their mean
    in eval mode)."""

    def __init__(self, lower=1.0 / 8.0, upper=1.0 / 3.0, name=None):
        super().__init__(name, lower=lower, upper=upper)

    def forward(self, x):
        return F.rrelu(x, self._kw["lower"], self._kw["upper"], training=self.training)


class Maxout(_Act):
    """Max over groups of `groups` channels along `axis`."""

    _fn = staticmethod(F.maxout)

    def __init__(self, groups, axis=1, name=None):
        super().__init__(name, groups=groups, axis=axis)


class GLU(_Act):
    """Gated linear unit along `axis`."""

    _fn = staticmethod(F.glu)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class PReLU(Layer):
    """x if x > 0 else weight * x with a learnt slope: one shared (``num_parameters=1``)
    or one per channel.

    Args:
        num_parameters: 1 or the number of channels.
        init: initial slope (0.25).
        weight_attr: `ParamAttr` of the slope.
        data_format: where the channel axis is.
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
