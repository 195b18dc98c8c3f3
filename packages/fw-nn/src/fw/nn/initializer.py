"""Parameter initializers (``paddle.nn.initializer``).

An initializer is a callable ``init(param)`` that overwrites the values of a
tensor in place and returns it. Random ones draw from fw's cpu generator
(`fw.core.random.default_generator`), so ``fw.seed(s)`` makes model
initialisation reproducible; values are drawn in float64 and rounded to the
parameter's dtype, then copied to its device.

Fan-in/fan-out follow Paddle: a 1-D shape ``[n]`` has fan_in = fan_out = n; a
2-D shape ``[in, out]`` (Paddle's Linear weight layout) fan_in = in, fan_out =
out; a conv weight ``[out, in, *k]`` has fan_in = in * prod(k), fan_out = out *
prod(k).
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import random as _rnd
from fw.core.internal import bump_version
from fw.core.ir import no_building
from fw.core.tensor import Tensor

__all__ = ["Initializer", "Constant", "Normal", "TruncatedNormal", "Uniform", "XavierNormal",
           "XavierUniform", "KaimingNormal", "KaimingUniform", "Orthogonal", "Assign",
           "Bilinear", "Dirac", "calculate_gain", "set_global_initializer", "LazyGuard"]

_GLOBAL = {"weight": None, "bias": None}
_LAZY = [0]  # depth of active LazyGuard contexts


def _gen():
    return _rnd.default_generator("cpu").np


def compute_fans(shape):
    """The (fan_in, fan_out) of a parameter shape, by Paddle's rules: ``[n]`` gives
    ``(n, n)``; ``[in, out]`` (a Linear weight) ``(in, out)``; a conv weight
    ``[out, in, *k]`` ``(in * prod(k), out * prod(k))``.

    Args:
        shape (list|tuple): the parameter's shape.

    Returns:
        tuple[int, int]: ``(fan_in, fan_out)``.

    Examples:
        >>> import fw
        >>> fw.nn.initializer.compute_fans([4, 3]), fw.nn.initializer.compute_fans([16, 8, 3, 3])
        ((4, 3), (72, 144))
    """
    shape = list(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    rf = int(np.prod(shape[2:]))
    return shape[1] * rf, shape[0] * rf


def _write(param, values):
    """Copy float64 `values` into `param` (rounded to its dtype) without recording."""
    if not isinstance(param, Tensor):
        raise TypeError(f"an initializer needs a Tensor, got {type(param).__name__}")
    a = param._data
    vals = np.asarray(values)
    if tuple(vals.shape) != tuple(a.shape):
        vals = np.broadcast_to(vals, a.shape)
    if type(a) is np.ndarray:
        a[...] = vals.astype(a.dtype)
    else:  # another device: build on the host, copy over
        from fw.core import place as _pl

        be = _pl.backend_of(a)
        a[...] = be.xp.asarray(vals.astype(np.dtype(a.dtype)))
    bump_version(param)
    return param


class Initializer:
    """Base class of parameter initializers.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place. Subclasses implement
    ``_values(shape, param)`` returning a float64 NumPy array of ``shape``.

    Examples:
        >>> import fw
        >>> class Halves(fw.nn.initializer.Initializer):
        ...     def _values(self, shape, param):
        ...         import numpy as np
        ...         return np.full(shape, 0.5)
        >>> fc = fw.nn.Linear(2, 2, weight_attr=fw.ParamAttr(initializer=Halves()))
        >>> fc.weight.tolist()
        [[0.5, 0.5], [0.5, 0.5]]
    """

    def __call__(self, param, block=None):
        """Initialise ``param`` in place.

        Args:
            param (Tensor): the parameter (or any tensor) to overwrite.
            block (optional): accepted for Paddle compatibility. Default: None.

        Returns:
            Tensor: ``param``.

        Examples:
            >>> import fw
            >>> w = fw.zeros([2])
            >>> fw.nn.initializer.Constant(3.0)(w).tolist()
            [3.0, 3.0]
        """
        with no_building():
            return _write(param, self._values(list(param.shape), param))

    def forward(self, param, block=None):
        """The same as calling the initializer.

        Args:
            param (Tensor): the tensor to overwrite.
            block (optional): accepted for Paddle compatibility. Default: None.

        Returns:
            Tensor: ``param``.

        Examples:
            >>> import fw
            >>> w = fw.zeros([2])
            >>> fw.nn.initializer.Constant(1.0).forward(w).tolist()
            [1.0, 1.0]
        """
        return self(param, block)

    def _values(self, shape, param):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


class Constant(Initializer):
    """Fill the parameter with a constant.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        value (float|bool|int, optional): the value. Default: 0.0.

    Examples:
        >>> import fw
        >>> attr = fw.ParamAttr(initializer=fw.nn.initializer.Constant(0.1))
        >>> fc = fw.nn.Linear(2, 3, bias_attr=attr)
        >>> [round(v, 4) for v in fc.bias.tolist()]
        [0.1, 0.1, 0.1]
    """

    def __init__(self, value=0.0):
        self.value = value

    def _values(self, shape, param):
        if param.dtype.is_complex:
            return np.full(shape, complex(self.value))
        return np.full(shape, float(self.value))

    def __call__(self, param, block=None):
        with no_building():
            a = param._data
            a[...] = self.value
            bump_version(param)
            return param


class Normal(Initializer):
    """Fill the parameter with samples of the normal distribution ``N(mean, std ** 2)``.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        mean (float, optional): the mean. Default: 0.0.
        std (float, optional): the standard deviation. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.Normal(mean=0.0, std=0.02)(fw.zeros([100, 100]))
        >>> abs(float(w.std()) - 0.02) < 0.001
        True
    """

    def __init__(self, mean=0.0, std=1.0, name=None):
        self.mean = float(mean)
        self.std = float(std)

    def _values(self, shape, param):
        return _gen().normal(self.mean, self.std, shape)


class TruncatedNormal(Initializer):
    """Fill the parameter with samples of ``N(mean, std ** 2)`` restricted to
    ``[a, b]`` (samples outside are redrawn).

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        mean (float, optional): the mean. Default: 0.0.
        std (float, optional): the standard deviation. Default: 1.0.
        a (float, optional): the lower bound. Default: -2.0.
        b (float, optional): the upper bound. Default: 2.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.TruncatedNormal(std=1.0, a=-0.5, b=0.5)(fw.zeros([1000]))
        >>> bool(w.min() >= -0.5), bool(w.max() <= 0.5)
        (True, True)
    """

    def __init__(self, mean=0.0, std=1.0, a=-2.0, b=2.0, name=None):
        if a >= b:
            raise ValueError(f"TruncatedNormal: need a < b, got a={a}, b={b}")
        self.mean = float(mean)
        self.std = float(std)
        self.a = float(a)
        self.b = float(b)

    def _values(self, shape, param):
        g = _gen()
        n = int(np.prod(shape))
        out = np.empty(n)
        filled = 0
        for _ in range(1000):
            if filled == n:
                break
            draw = g.normal(self.mean, self.std, max(2 * (n - filled), 16))
            keep = draw[(draw >= self.a) & (draw <= self.b)][: n - filled]
            out[filled:filled + keep.size] = keep
            filled += keep.size
        if filled < n:
            raise ValueError(f"TruncatedNormal: [a, b] = [{self.a}, {self.b}] has almost no "
                             f"mass under N({self.mean}, {self.std}^2)")
        return out.reshape(shape)


class Uniform(Initializer):
    """Fill the parameter with samples of the uniform distribution ``U(low, high)``.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        low (float, optional): the lower bound. Default: -1.0.
        high (float, optional): the upper bound. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.Uniform(low=2.0, high=3.0)(fw.zeros([1000]))
        >>> bool(w.min() >= 2.0), bool(w.max() <= 3.0)
        (True, True)
    """

    def __init__(self, low=-1.0, high=1.0, name=None):
        if low > high:
            raise ValueError(f"Uniform: low ({low}) must be <= high ({high})")
        self.low = float(low)
        self.high = float(high)

    def _values(self, shape, param):
        return _gen().uniform(self.low, self.high, shape)


class XavierNormal(Initializer):
    """Glorot (Xavier) normal initialization: ``N(0, gain ** 2 * 2 / (fan_in + fan_out))``
    (Glorot & Bengio, 2010). Fans follow Paddle: ``[in, out]`` for a Linear weight,
    ``in * prod(k)`` and ``out * prod(k)`` for a conv weight ``[out, in, *k]``.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        fan_in (float, optional): the fan-in; from the parameter's shape when None.
            Default: None.
        fan_out (float, optional): the fan-out; from the shape when None. Default: None.
        gain (float, optional): the scale. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.XavierNormal()(fw.zeros([200, 300]))
        >>> abs(float(w.std()) - (2 / 500) ** 0.5) < 0.002
        True
    """

    def __init__(self, fan_in=None, fan_out=None, gain=1.0, name=None):
        self.fan_in = fan_in
        self.fan_out = fan_out
        self.gain = float(gain)

    def _values(self, shape, param):
        fi, fo = compute_fans(shape)
        fi = fi if self.fan_in is None else self.fan_in
        fo = fo if self.fan_out is None else self.fan_out
        std = self.gain * math.sqrt(2.0 / max(fi + fo, 1))
        return _gen().normal(0.0, std, shape)


class XavierUniform(Initializer):
    """Glorot (Xavier) uniform initialization: ``U(-l, l)`` with
    ``l = gain * sqrt(6 / (fan_in + fan_out))``. The default initializer of weights.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        fan_in (float, optional): the fan-in; from the parameter's shape when None.
            Default: None.
        fan_out (float, optional): the fan-out; from the shape when None. Default: None.
        gain (float, optional): the scale. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.XavierUniform()(fw.zeros([200, 300]))
        >>> limit = (6 / 500) ** 0.5
        >>> bool(w.abs().max() <= limit)
        True
    """

    def __init__(self, fan_in=None, fan_out=None, gain=1.0, name=None):
        self.fan_in = fan_in
        self.fan_out = fan_out
        self.gain = float(gain)

    def _values(self, shape, param):
        fi, fo = compute_fans(shape)
        fi = fi if self.fan_in is None else self.fan_in
        fo = fo if self.fan_out is None else self.fan_out
        limit = self.gain * math.sqrt(6.0 / max(fi + fo, 1))
        return _gen().uniform(-limit, limit, shape)


class KaimingNormal(Initializer):
    """He (Kaiming) normal initialization: ``N(0, (gain / sqrt(fan_in)) ** 2)`` with
    ``gain = calculate_gain(nonlinearity, negative_slope)`` (He et al., 2015).

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        fan_in (float, optional): the fan-in; from the parameter's shape when None.
            Default: None.
        negative_slope (float, optional): the slope for ``"leaky_relu"``. Default: 0.0.
        nonlinearity (str, optional): the nonlinearity whose gain is used (see
            `calculate_gain`). Default: "relu".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.KaimingNormal()(fw.zeros([400, 300]))
        >>> abs(float(w.std()) - (2 / 400) ** 0.5) < 0.002
        True
    """

    def __init__(self, fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
        self.fan_in = fan_in
        self.negative_slope = negative_slope
        self.nonlinearity = nonlinearity

    def _values(self, shape, param):
        fi = compute_fans(shape)[0] if self.fan_in is None else self.fan_in
        std = calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(max(fi, 1))
        return _gen().normal(0.0, std, shape)


class KaimingUniform(Initializer):
    """He (Kaiming) uniform initialization: ``U(-l, l)`` with
    ``l = gain * sqrt(3 / fan_in)``.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        fan_in (float, optional): the fan-in; from the parameter's shape when None.
            Default: None.
        negative_slope (float, optional): the slope for ``"leaky_relu"``. Default: 0.0.
        nonlinearity (str, optional): the nonlinearity whose gain is used (see
            `calculate_gain`). Default: "relu".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> attr = fw.ParamAttr(initializer=fw.nn.initializer.KaimingUniform())
        >>> conv = fw.nn.Conv2D(3, 8, 3, weight_attr=attr)
        >>> limit = 2 ** 0.5 * (3 / 27) ** 0.5
        >>> bool(conv.weight.abs().max() <= limit)
        True
    """

    def __init__(self, fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
        self.fan_in = fan_in
        self.negative_slope = negative_slope
        self.nonlinearity = nonlinearity

    def _values(self, shape, param):
        fi = compute_fans(shape)[0] if self.fan_in is None else self.fan_in
        limit = calculate_gain(self.nonlinearity, self.negative_slope) * math.sqrt(
            3.0 / max(fi, 1))
        return _gen().uniform(-limit, limit, shape)


class Orthogonal(Initializer):
    """Fill the parameter with a (semi-)orthogonal matrix times ``gain``: viewed as
    ``[shape[0], prod(shape[1:])]`` it has orthonormal rows or columns (Saxe et al.,
    2013).

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        gain (float, optional): the scale. Default: 1.0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.Orthogonal()(fw.zeros([4, 4]))
        >>> bool(fw.allclose(w @ w.T, fw.eye(4), atol=1e-5))
        True
    """

    def __init__(self, gain=1.0, name=None):
        self.gain = float(gain)

    def _values(self, shape, param):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: the parameter needs at least 2 dimensions, got "
                             f"shape {shape}")
        rows = shape[0]
        cols = int(np.prod(shape[1:]))
        if rows == 0 or cols == 0:
            return np.zeros(shape)
        a = _gen().normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))  # makes the decomposition unique (uniform over O(n))
        if rows < cols:
            q = q.T
        return (self.gain * q[:rows, :cols]).reshape(shape)


class Assign(Initializer):
    """Fill the parameter with given values.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        value (Tensor|numpy.ndarray|list|float): the values, the parameter's shape (or a
            number).
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> init = fw.nn.initializer.Assign([[1.0, 2.0], [3.0, 4.0]])
        >>> fc = fw.nn.Linear(2, 2, weight_attr=fw.ParamAttr(initializer=init))
        >>> fc.weight.tolist()
        [[1.0, 2.0], [3.0, 4.0]]
    """

    def __init__(self, value, name=None):
        self.value = value

    def _values(self, shape, param):
        v = self.value
        v = v.numpy() if isinstance(v, Tensor) else np.asarray(v)
        if v.size != int(np.prod(shape)) and v.size != 1:
            raise ValueError(f"Assign: the value has shape {list(v.shape)} but the parameter "
                             f"has shape {shape}")
        if v.dtype.kind == "c":
            return v.reshape(shape) if v.size != 1 else v
        return v.astype(np.float64).reshape(shape) if v.size != 1 else v.astype(np.float64)


class Bilinear(Initializer):
    """Bilinear-upsampling kernels for a transposed convolution weight ``[C_in, C_out, K, K]``:
    every ``[K, K]`` slice holds the same separable triangle filter, so a stride-``f``
    `Conv2DTranspose` with ``K = 2 * f - f % 2`` performs bilinear upsampling.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Examples:
        >>> import fw
        >>> w = fw.nn.initializer.Bilinear()(fw.zeros([1, 1, 4, 4]))
        >>> w[0, 0, 0].tolist()
        [0.0625, 0.1875, 0.1875, 0.0625]
    """

    def _values(self, shape, param):
        if len(shape) != 4 or shape[2] != shape[3]:
            raise ValueError(f"Bilinear: the weight must be 4-D with square kernels, got "
                             f"shape {shape}")
        size = shape[3]
        f = math.ceil(size / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        t = 1.0 - np.abs(np.arange(size) / f - c)
        k = np.outer(t, t)
        return np.broadcast_to(k, shape).copy()


class Dirac(Initializer):
    """Identity convolution kernels: ``weight[g * O + i, i, centre] = 1`` for every group
    ``g`` and ``i < min(O, C_in / groups)`` (O the output channels per group), zeros
    elsewhere, so the convolution initially passes its input through.

    An initializer is used through a `ParamAttr` (``weight_attr=fw.ParamAttr(
    initializer=...)``), as ``default_initializer`` of `Layer.create_parameter`, or
    called directly on a tensor, which it overwrites in place.

    Args:
        groups (int, optional): the convolution's groups. Default: 1.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Examples:
        >>> import fw
        >>> conv = fw.nn.Conv1D(2, 2, 3, padding=1, bias_attr=False,
        ...                   weight_attr=fw.ParamAttr(initializer=fw.nn.initializer.Dirac()))
        >>> x = fw.to_tensor([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])
        >>> conv(x).tolist() == x.tolist()
        True
    """

    def __init__(self, groups=1, name=None):
        self.groups = int(groups)

    def _values(self, shape, param):
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"Dirac: the weight must be 3-D, 4-D or 5-D, got shape {shape}")
        if shape[0] % self.groups:
            raise ValueError(f"Dirac: groups={self.groups} does not divide {shape[0]} output "
                             f"channels")
        w = np.zeros(shape)
        per = shape[0] // self.groups
        centre = tuple(k // 2 for k in shape[2:])
        for g in range(self.groups):
            for i in range(min(per, shape[1])):
                w[(g * per + i, i) + centre] = 1.0
        return w


def calculate_gain(nonlinearity, param=None):
    """The recommended gain (the std scale) of an initializer for a nonlinearity:
    1 for sigmoid, linear and conv, 5/3 for tanh, sqrt(2) for relu,
    ``sqrt(2 / (1 + slope ** 2))`` for leaky_relu and 3/4 for selu.

    Args:
        nonlinearity (str): the nonlinearity's name.
        param (float, optional): the negative slope of ``"leaky_relu"`` (0.01 when None).
            Default: None.

    Returns:
        float: the gain.

    Examples:
        >>> import fw
        >>> round(fw.nn.initializer.calculate_gain('tanh'), 4)
        1.6667
        >>> round(fw.nn.initializer.calculate_gain('relu'), 4)
        1.4142
        >>> round(fw.nn.initializer.calculate_gain('leaky_relu', 0.2), 4)
        1.3868
    """
    one = ("sigmoid", "linear", "conv1d", "conv2d", "conv3d", "conv1d_transpose",
           "conv2d_transpose", "conv3d_transpose")
    if nonlinearity in one:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1.0 + slope * slope))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected one "
                     f"of {list(one) + ['tanh', 'relu', 'leaky_relu', 'selu']}")


def set_global_initializer(weight_init, bias_init=None):
    """Set the default initializers of every parameter created afterwards without an
    explicit one; ``set_global_initializer(None)`` restores the defaults (Xavier-uniform
    weights, zero biases).

    Args:
        weight_init (Initializer|None): the default for weights.
        bias_init (Initializer, optional): the default for biases. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> init = fw.nn.initializer
        >>> init.set_global_initializer(init.Constant(0.5), init.Constant(0.0))
        >>> fc = fw.nn.Linear(2, 2)
        >>> fc.weight.tolist(), fc.bias.tolist()
        ([[0.5, 0.5], [0.5, 0.5]], [0.0, 0.0])
        >>> fw.nn.initializer.set_global_initializer(None)
    """
    for v, n in ((weight_init, "weight_init"), (bias_init, "bias_init")):
        if v is not None and not isinstance(v, Initializer):
            raise TypeError(f"set_global_initializer: '{n}' must be an Initializer or None, got "
                            f"{type(v).__name__}")
    _GLOBAL["weight"] = weight_init
    _GLOBAL["bias"] = bias_init


def _global_default(is_bias):
    return _GLOBAL["bias" if is_bias else "weight"]


class LazyGuard:
    """Context manager for lazy parameter creation: parameters created inside it hold no
    memory and are not initialised until ``param.initialize()`` runs their initializer
    (useful to build a large model before loading its weights).

    Examples:
        >>> import fw
        >>> with fw.nn.initializer.LazyGuard():
        ...     net = fw.nn.Linear(1000, 1000)
        >>> net.weight.is_lazy
        True
        >>> for p in net.parameters():
        ...     _ = p.initialize()
        >>> net.weight.is_lazy
        False
    """

    def __enter__(self):
        _LAZY[0] += 1
        return self

    def __exit__(self, *exc):
        _LAZY[0] -= 1
        return False


def _lazy() -> bool:
    return _LAZY[0] > 0
