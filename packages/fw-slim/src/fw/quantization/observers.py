"""Observers for post-training quantization (PTQ): each watches the values that pass
through it during calibration and computes a scale (and zero point).

Names follow Paddle's ``paddle.quantization.observers`` (``AbsmaxObserver``) and
PaddleSlim's ``paddleslim.quant.observers`` (``HistObserver``, ``KLObserver``,
``MSEObserver``, ``AbsMaxChannelWiseWeightObserver``); ``MinMaxObserver`` and
``MovingAverageMinMaxObserver`` follow PyTorch's observers of those names (asymmetric
by default, as there). Each name is a factory: ``AbsmaxObserver(quant_bits=8)`` goes
into a `QuantConfig`, and PTQ makes one observer layer per tensor from it.

Histogram calibration: values' magnitudes are binned into ``bins_count`` bins over
[0, running absmax] (the histogram is re-binned when the max grows); the threshold t
(scale = t / qmax) is chosen by
- ``percent``: the smallest t covering ``hist_percent`` of the values;
- ``mse``: the t minimising the expected squared error of quantizing the histogram
  (rounding error inside [-t, t], clipping error outside);
- ``kl``: TensorRT's entropy calibration (Migacz 2017, "8-bit Inference with
  TensorRT"): the t minimising KL(P || Q) between the clipped reference distribution P
  and its 2^(bits-1)-level quantized version Q.
"""

from __future__ import annotations

import numpy as np

from fw.quantization.base import BaseObserver, ObserverFactory, scale_from_range

__all__ = ["AbsmaxObserver", "MinMaxObserver", "MovingAverageMinMaxObserver", "HistObserver",
           "KLObserver", "MSEObserver", "AbsMaxChannelWiseWeightObserver", "AbsmaxObserverLayer",
           "MinMaxObserverLayer", "MovingAverageMinMaxObserverLayer", "HistObserverLayer",
           "AbsMaxChannelWiseWeightObserverLayer", "GroupWiseWeightObserver",
           "GroupWiseWeightObserverLayer"]


class AbsmaxObserverLayer(BaseObserver):
    """scale = max |x| over everything observed / qmax (symmetric; per-tensor, or
    per-channel along `quant_axis`).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        quant_axis (int, optional): the per-channel axis, -1 for per-tensor. Default: -1.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import AbsmaxObserverLayer
        >>> obs = AbsmaxObserverLayer()
        >>> _ = obs(fw.to_tensor([-2.0, 1.0, 0.5, 4.0]))
        >>> round(float(obs.scales()[0]) * 127, 4)
        4.0
    """

    def __init__(self, quant_bits=8, quant_axis=-1):
        super().__init__(quant_bits, True, quant_axis)
        self._amax = None

    def _observe(self, a):
        m = np.abs(self._channel_view(a)).max(axis=1) if a.size else None
        if m is not None:
            self._amax = m if self._amax is None else np.maximum(self._amax, m)

    def cal_thresholds(self):
        """Compute the scale and zero point from the absmax seen so far (`scales` calls it;
        nothing happens before any value was observed).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import AbsmaxObserverLayer
            >>> obs = AbsmaxObserverLayer()
            >>> _ = obs(fw.to_tensor([-2.54, 1.0]))
            >>> obs.cal_thresholds()
            >>> round(float(obs.scales()[0]), 4)
            0.02
        """
        if self._amax is not None:
            self._scale, self._zero_point = scale_from_range(-self._amax, self._amax, self.qmin,
                                                             self.qmax, True)


class AbsMaxChannelWiseWeightObserverLayer(AbsmaxObserverLayer):
    """Per-channel absmax (for weights: axis 0 of conv weights, 1 of Linear weights).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        quant_axis (int, optional): the channel axis. Default: -1.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import AbsMaxChannelWiseWeightObserverLayer
        >>> obs = AbsMaxChannelWiseWeightObserverLayer(quant_axis=1)
        >>> _ = obs(fw.to_tensor([[-2.0, 1.0], [0.5, 4.0]]))
        >>> [round(float(s) * 127, 4) for s in obs.scales()]
        [2.0, 4.0]
    """

    PER_CHANNEL = True


class MinMaxObserverLayer(BaseObserver):
    """Range [min, max] of everything observed; asymmetric (uint8 + zero point) unless
    ``symmetric=True``. The range is widened to hold 0 so that 0 is exact.

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        symmetric (bool, optional): a zero point of 0 and signed codes. Default: False.
        quant_axis (int, optional): the per-channel axis, -1 for per-tensor. Default: -1.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import MinMaxObserverLayer
        >>> obs = MinMaxObserverLayer()
        >>> _ = obs(fw.to_tensor([-2.0, 1.0, 0.5, 4.0]))
        >>> round(float(obs.scales()[0]) * 255, 4), int(obs.zero_points()[0])
        (6.0, 85)
    """

    def __init__(self, quant_bits=8, symmetric=False, quant_axis=-1):
        super().__init__(quant_bits, symmetric, quant_axis)
        self._lo = self._hi = None

    def _update(self, lo, hi):
        if self._lo is None:
            self._lo, self._hi = lo, hi
        else:
            self._lo, self._hi = np.minimum(self._lo, lo), np.maximum(self._hi, hi)

    def _observe(self, a):
        if a.size:
            v = self._channel_view(a)
            self._update(v.min(axis=1), v.max(axis=1))

    def cal_thresholds(self):
        """Compute the scale and zero point from the range seen so far (`scales` calls it).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import MinMaxObserverLayer
            >>> obs = MinMaxObserverLayer(symmetric=True)
            >>> _ = obs(fw.to_tensor([-1.27, 0.5]))
            >>> obs.cal_thresholds()
            >>> round(float(obs.scales()[0]), 4)
            0.01
        """
        if self._lo is not None:
            self._scale, self._zero_point = scale_from_range(self._lo, self._hi, self.qmin,
                                                             self.qmax, self._symmetric)


class MovingAverageMinMaxObserverLayer(MinMaxObserverLayer):
    """An exponential moving average of each batch's min and max:
    ``lo = rate * lo + (1 - rate) * batch_min`` (the first batch initialises).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        symmetric (bool, optional): a zero point of 0 and signed codes. Default: False.
        moving_rate (float, optional): the weight of the history, in [0, 1). Default: 0.9.
        quant_axis (int, optional): the per-channel axis, -1 for per-tensor. Default: -1.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import MovingAverageMinMaxObserverLayer
        >>> obs = MovingAverageMinMaxObserverLayer(moving_rate=0.5)
        >>> _ = obs(fw.to_tensor([0.0, 2.0]))
        >>> _ = obs(fw.to_tensor([0.0, 4.0]))      # max: 0.5 * 2 + 0.5 * 4 = 3
        >>> round(float(obs.scales()[0]) * 255, 4)
        3.0
    """

    def __init__(self, quant_bits=8, symmetric=False, moving_rate=0.9, quant_axis=-1):
        super().__init__(quant_bits, symmetric, quant_axis)
        if not 0.0 <= moving_rate < 1.0:
            raise ValueError(f"MovingAverageMinMaxObserver: moving_rate must be in [0, 1), got "
                             f"{moving_rate}")
        self._rate = moving_rate

    def _update(self, lo, hi):
        if self._lo is None:
            self._lo, self._hi = lo, hi
        else:
            r = self._rate
            self._lo, self._hi = r * self._lo + (1 - r) * lo, r * self._hi + (1 - r) * hi


class HistObserverLayer(BaseObserver):
    """A histogram of |x| (symmetric, per-tensor), calibrated by ``method``:
    ``"percent"``, ``"mse"`` or ``"kl"`` (see the module docstring).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        bins_count (int, optional): histogram bins. Default: 2048.
        method (str, optional): "percent", "mse" or "kl". Default: "percent".
        hist_percent (float, optional): the share of values the "percent" threshold
            covers, in (0, 1]. Default: 0.99999.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.quantization.observers import HistObserverLayer
        >>> obs = HistObserverLayer(method="percent")
        >>> _ = obs(fw.to_tensor(np.linspace(-1, 1, 1001).astype("float32")))
        >>> round(obs.threshold(), 3)
        1.0
    """

    METHODS = ("percent", "mse", "kl")

    def __init__(self, quant_bits=8, bins_count=2048, method="percent", hist_percent=0.99999):
        super().__init__(quant_bits, True, -1)
        if method not in self.METHODS:
            raise ValueError(f"HistObserver: method must be one of {list(self.METHODS)}, got "
                             f"{method!r}")
        if not 0.0 < hist_percent <= 1.0:
            raise ValueError(f"HistObserver: hist_percent must be in (0, 1], got {hist_percent}")
        self._bins, self._method, self._percent = int(bins_count), method, hist_percent
        self._hist = None
        self._edge = 0.0  # the histogram covers [0, edge]

    def _observe(self, a):
        v = np.abs(a[np.isfinite(a)]).reshape(-1)
        if not v.size:
            return
        m = float(v.max())
        if self._hist is None:
            self._edge = m if m > 0 else 1.0
            self._hist = np.zeros(self._bins, np.float64)
        elif m > self._edge:  # re-bin the old counts onto the wider range
            ratio = self._edge / m
            centres = (np.arange(self._bins) + 0.5) * ratio
            new = np.zeros(self._bins)
            np.add.at(new, np.minimum(centres.astype(np.int64), self._bins - 1), self._hist)
            self._hist, self._edge = new, m
        h, _ = np.histogram(v, bins=self._bins, range=(0.0, self._edge))
        self._hist += h

    def cal_thresholds(self):
        """Choose the clipping threshold from the histogram by the layer's method and set
        the scale (`scales` calls it).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> from fw.quantization.observers import HistObserverLayer
            >>> obs = HistObserverLayer(method="mse", bins_count=256)
            >>> _ = obs(fw.to_tensor(np.linspace(-1, 1, 1001).astype("float32")))
            >>> obs.cal_thresholds()
            >>> round(obs.threshold(), 2)
            1.0
        """
        if self._hist is None:
            return
        width = self._edge / self._bins
        nb = {"percent": self._by_percent, "mse": self._by_mse, "kl": self._by_kl}[self._method]()
        t = max(nb, 1) * width
        self._scale, self._zero_point = scale_from_range(-t, t, self.qmin, self.qmax, True)

    def threshold(self):
        """The calibrated clipping threshold t (scale * qmax).

        Returns:
            float: t.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import HistObserverLayer
            >>> obs = HistObserverLayer()
            >>> _ = obs(fw.to_tensor([-0.5, 2.0]))
            >>> round(obs.threshold(), 3)
            2.0
        """
        return float(self.scales()[0] * self.qmax)

    def _by_percent(self):
        c = np.cumsum(self._hist)
        return int(np.searchsorted(c, self._percent * c[-1]) + 1)

    def _by_mse(self):
        # expected squared error of a threshold of t bins: values inside [-t, t] are
        # rounded to a grid of step t/qmax (error step^2/12, uniform within a step),
        # values beyond are clipped to t (error (centre - t)^2)
        h, nb = self._hist, self._bins
        centres = np.arange(nb) + 0.5  # in bin units
        best, arg = np.inf, nb
        for t in range(min(max(nb // 64, self.qmax), nb), nb + 1, max(nb // 256, 1)):
            inside = centres <= t
            err = h[inside].sum() * (t / self.qmax) ** 2 / 12 \
                + (h[~inside] * (centres[~inside] - t) ** 2).sum()
            if err < best:
                best, arg = err, t
        return arg

    def _by_kl(self):
        h, nb = self._hist, self._bins
        levels = self.qmax + 1  # magnitudes: 2^(bits-1) levels
        best, arg = np.inf, nb
        for t in range(levels, nb + 1, max(nb // 512, 1)):
            p = h[:t].copy()
            p[t - 1] += h[t:].sum()  # the clipped mass lands in the last bin
            nz = p > 0
            # Q: p merged into `levels` groups, spread back evenly over each group's
            # non-empty bins
            idx = (np.arange(t) * levels) // t
            sums = np.bincount(idx, weights=h[:t], minlength=levels)
            counts = np.bincount(idx, weights=(h[:t] > 0).astype(float), minlength=levels)
            q = np.where(h[:t] > 0, sums[idx] / np.maximum(counts[idx], 1), 0.0)
            ps, qs = p.sum(), q.sum()
            if ps == 0 or qs == 0:
                continue
            pn, qn = p / ps, q / qs
            ok = nz & (qn > 0)
            kl = float((pn[ok] * np.log(pn[ok] / qn[ok])).sum()) + (1e9 if (nz & ~(qn > 0)).any()
                                                                     else 0.0)
            if kl < best:
                best, arg = kl, t
        return arg


class GroupWiseWeightObserverLayer(BaseObserver):
    """Group-wise absmax of a 2-D ``[k, n]`` weight for weight-only quantization: one
    scale per group of ``group_size`` consecutive rows (input features) and column
    (output feature), ``scale = absmax / qmax`` as float32 of shape ``[k / group_size,
    n]`` with qmax = 2^(quant_bits-1) - 1 (127 for int8, 7 for int4) and symmetric codes
    in [-qmax, qmax]: exactly the scale ``fw.nn.quant.weight_quantize(w, algo,
    group_size=group_size)`` returns, so the two can be used together. A group of zeros
    has scale 0 (its codes are 0), as there.

    Paddle 3.x (``paddle.quantization.observers.groupwise``) returns the absmax itself
    as the "scale", replaces zeros by 1e-8, keeps only the last observed tensor and
    accepts group sizes 64 and 128 only; fw keeps the running max over every observed
    tensor, returns the step (as its other observers do) and takes any group size that
    divides k.

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        group_size (int, optional): rows per group; must divide k. Default: 128.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.quantization.observers import GroupWiseWeightObserverLayer
        >>> obs = GroupWiseWeightObserverLayer(group_size=2)
        >>> _ = obs(fw.to_tensor(np.arange(8, dtype="float32").reshape(4, 2)))
        >>> obs.scales().shape
        (2, 2)
    """

    def __init__(self, quant_bits=8, group_size=128):
        super().__init__(quant_bits, True, -1)
        if isinstance(group_size, bool) or not isinstance(group_size, (int, np.integer)) \
                or group_size <= 0:
            raise ValueError(f"GroupWiseWeightObserver: group_size must be a positive int, got "
                             f"{group_size!r}")
        self.group_size = int(group_size)
        self.qmin = -self.qmax  # weight-only codes are symmetric: [-qmax, qmax]
        self._amax = None

    def _observe(self, a):
        if a.ndim != 2:
            raise ValueError(f"GroupWiseWeightObserver: expects a 2-D [k, n] weight (a Linear's "
                             f"[in_features, out_features]), got shape {list(a.shape)}")
        k, n = a.shape
        if k % self.group_size:
            raise ValueError(f"GroupWiseWeightObserver: group_size={self.group_size} must divide "
                             f"the weight's rows k={k} (shape {list(a.shape)})")
        # the groups are consecutive rows: [k/g, g, n] -> max over each group
        m = np.abs(a.reshape(k // self.group_size, self.group_size, n)).max(axis=1)
        if self._amax is not None and self._amax.shape != m.shape:
            raise ValueError(f"GroupWiseWeightObserver: observed a weight of shape "
                             f"{list(a.shape)} after one with {self._amax.shape[0]} groups x "
                             f"{self._amax.shape[1]} columns")
        self._amax = m if self._amax is None else np.maximum(self._amax, m)

    def cal_thresholds(self):
        """Compute the group-wise scales (absmax / qmax, float32) from the running max.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> from fw.quantization.observers import GroupWiseWeightObserverLayer
            >>> obs = GroupWiseWeightObserverLayer(group_size=2)
            >>> _ = obs(fw.to_tensor(np.arange(8, dtype="float32").reshape(4, 2)))
            >>> obs.cal_thresholds()
            >>> (obs.scales() * 127).round(4).tolist()
            [[2.0, 3.0], [6.0, 7.0]]
        """
        if self._amax is not None:
            # float32 arithmetic, as weight_quantize computes it (same rounding)
            self._scale = self._amax.astype(np.float32) / np.float32(self.qmax)
            self._zero_point = np.zeros(self._scale.shape, np.int32)

    def quant_axis(self):
        """-1: the scales are group-wise (``[k / group_size, n]``), not per-tensor or
        per-channel.

        Returns:
            int: -1.

        Examples:
            >>> import fw
            >>> from fw.quantization.observers import GroupWiseWeightObserverLayer
            >>> GroupWiseWeightObserverLayer(group_size=2).quant_axis()
            -1
        """
        return -1


class _GroupWiseFactory(ObserverFactory):
    def _instance(self, layer=None, axis=-1):
        if layer is None:  # made directly, for a weight at hand
            return super()._instance(layer, axis)
        # made by PTQ/QAT for a layer: fw's QDQ ops (what convert writes) take per-tensor
        # or per-channel scales only; group-wise scales serve weight-only quantization
        raise ValueError("GroupWiseWeightObserver: group-wise scales are for weight-only "
                         "quantization (fw.nn.quant.weight_quantize / weight_only_linear, "
                         "fw.quantization.weight_only_quantize); a QuantConfig for PTQ/QAT "
                         "takes per-tensor or per-channel observers (AbsmaxObserver, "
                         "AbsMaxChannelWiseWeightObserver). Use GroupWiseWeightObserverLayer "
                         "directly on a weight")


# ---------------------------------------------------------------- the factories (config)
def AbsmaxObserver(quant_bits=8):  # noqa: N802  (Paddle's class-like factory name)
    """Per-tensor absmax observer (Paddle: ``paddle.quantization.observers.AbsmaxObserver``):
    scale = max |x| / qmax, symmetric.

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.

    Returns:
        ObserverFactory: the recipe; `PTQ` makes one observer layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization import QuantConfig
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> obs = AbsmaxObserver(quant_bits=8)
        >>> obs
        AbsmaxObserverLayer(quant_bits=8)
        >>> config = QuantConfig(activation=obs, weight=obs)
    """
    return ObserverFactory(AbsmaxObserverLayer, quant_bits=quant_bits)


def AbsMaxChannelWiseWeightObserver(quant_bits=8, quant_axis=None):  # noqa: N802
    """Per-channel absmax for weights; ``quant_axis=None`` takes the layer's output-channel
    axis (0 for Conv2D, 1 for Linear).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        quant_axis (int, optional): the channel axis; None: the layer's. Default: None.

    Returns:
        ObserverFactory: the recipe; `PTQ` makes one observer layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import AbsMaxChannelWiseWeightObserver
        >>> AbsMaxChannelWiseWeightObserver(quant_axis=1)
        AbsMaxChannelWiseWeightObserverLayer(quant_bits=8, quant_axis=1)
    """
    return ObserverFactory(AbsMaxChannelWiseWeightObserverLayer, quant_bits=quant_bits,
                           quant_axis=quant_axis)


def MinMaxObserver(quant_bits=8, symmetric=False):  # noqa: N802
    """Min/max range over all calibration batches (asymmetric by default, as
    PyTorch's ``MinMaxObserver``).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        symmetric (bool, optional): a zero point of 0 and signed codes. Default: False.

    Returns:
        ObserverFactory: the recipe; `PTQ` makes one observer layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import MinMaxObserver
        >>> MinMaxObserver(symmetric=True)
        MinMaxObserverLayer(quant_bits=8, symmetric=True)
    """
    return ObserverFactory(MinMaxObserverLayer, quant_bits=quant_bits, symmetric=symmetric)


def MovingAverageMinMaxObserver(quant_bits=8, symmetric=False, moving_rate=0.9):  # noqa: N802
    """Moving average of the per-batch min/max
    (``lo = moving_rate * lo + (1 - moving_rate) * batch_min``).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        symmetric (bool, optional): a zero point of 0 and signed codes. Default: False.
        moving_rate (float, optional): the weight of the history, in [0, 1). Default: 0.9.

    Returns:
        ObserverFactory: the recipe; `PTQ` makes one observer layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import MovingAverageMinMaxObserver
        >>> MovingAverageMinMaxObserver(moving_rate=0.5)
        MovingAverageMinMaxObserverLayer(quant_bits=8, symmetric=False, moving_rate=0.5)
    """
    return ObserverFactory(MovingAverageMinMaxObserverLayer, quant_bits=quant_bits,
                           symmetric=symmetric, moving_rate=moving_rate)


def HistObserver(quant_bits=8, bins_count=2048, percent=0.99999, method="percent"):  # noqa: N802
    """Histogram calibration; ``method`` "percent" (PaddleSlim's HistObserver), "mse" or
    "kl" (see the module docstring).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        bins_count (int, optional): histogram bins. Default: 2048.
        percent (float, optional): the share of values the threshold covers ("percent").
            Default: 0.99999.
        method (str, optional): "percent", "mse" or "kl". Default: "percent".

    Returns:
        ObserverFactory: the recipe; `PTQ` makes one observer layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import HistObserver
        >>> HistObserver(method="mse")
        HistObserverLayer(quant_bits=8, bins_count=2048, method='mse', hist_percent=0.99999)
    """
    return ObserverFactory(HistObserverLayer, quant_bits=quant_bits, bins_count=bins_count,
                           method=method, hist_percent=percent)


def KLObserver(quant_bits=8, bins_count=2048):  # noqa: N802
    """Histogram calibration minimising the KL divergence (TensorRT's entropy method).

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        bins_count (int, optional): histogram bins. Default: 2048.

    Returns:
        ObserverFactory: the recipe; `PTQ` makes one observer layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import KLObserver
        >>> KLObserver()
        HistObserverLayer(quant_bits=8, bins_count=2048, method='kl')
    """
    return ObserverFactory(HistObserverLayer, quant_bits=quant_bits, bins_count=bins_count,
                           method="kl")


def MSEObserver(quant_bits=8, bins_count=2048):  # noqa: N802
    """Histogram calibration minimising the quantization mean squared error.

    Args:
        quant_bits (int, optional): the integer width, 2 to 8. Default: 8.
        bins_count (int, optional): histogram bins. Default: 2048.

    Returns:
        ObserverFactory: the recipe; `PTQ` makes one observer layer per tensor from it.

    Examples:
        >>> import fw
        >>> from fw.quantization.observers import MSEObserver
        >>> MSEObserver(bins_count=512)
        HistObserverLayer(quant_bits=8, bins_count=512, method='mse')
    """
    return ObserverFactory(HistObserverLayer, quant_bits=quant_bits, bins_count=bins_count,
                           method="mse")


def GroupWiseWeightObserver(quant_bits=8, group_size=128):  # noqa: N802
    """Group-wise absmax scales of a ``[k, n]`` weight for weight-only quantization
    (Paddle 3.x: ``paddle.quantization.observers.GroupWiseWeightObserver``).

    Args:
        quant_bits (int, optional): bits of the codes: 8 (int8) or 4 (int4), any of 2..8.
            Default 8.
        group_size (int, optional): rows (input features) per scale group; must divide
            the weight's k. Default 128.

    Returns:
        ObserverFactory: makes `GroupWiseWeightObserverLayer` s (``_instance()``); their
        scales are float32 ``[k / group_size, n]``, equal to
        ``fw.nn.quant.weight_quantize``'s. PTQ/QAT configs refuse it (fw's QDQ ops have
        no group-wise form).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np, fw
            >>> from fw.quantization.observers import GroupWiseWeightObserver
            >>> obs = GroupWiseWeightObserver(quant_bits=8, group_size=2)._instance()
            >>> w = fw.to_tensor(np.arange(8, dtype="float32").reshape(4, 2))
            >>> _ = obs(w)
            >>> obs.scales().shape
            (2, 2)
            >>> bool(np.allclose(obs.scales(), fw.nn.quant.weight_quantize(
            ...     w, group_size=2)[1].numpy()))
            True
    """
    return _GroupWiseFactory(GroupWiseWeightObserverLayer, quant_bits=quant_bits,
                             group_size=group_size)
