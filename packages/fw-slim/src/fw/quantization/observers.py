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
           "AbsMaxChannelWiseWeightObserverLayer"]


class AbsmaxObserverLayer(BaseObserver):
    """scale = max |x| over everything observed / qmax (symmetric, per-tensor)."""

    def __init__(self, quant_bits=8, quant_axis=-1):
        super().__init__(quant_bits, True, quant_axis)
        self._amax = None

    def _observe(self, a):
        m = np.abs(self._channel_view(a)).max(axis=1) if a.size else None
        if m is not None:
            self._amax = m if self._amax is None else np.maximum(self._amax, m)

    def cal_thresholds(self):
        if self._amax is not None:
            self._scale, self._zero_point = scale_from_range(-self._amax, self._amax, self.qmin,
                                                             self.qmax, True)


class AbsMaxChannelWiseWeightObserverLayer(AbsmaxObserverLayer):
    """Per-channel absmax (for weights: axis 0 of conv weights, 1 of Linear weights)."""

    PER_CHANNEL = True


class MinMaxObserverLayer(BaseObserver):
    """Range [min, max] of everything observed; asymmetric (uint8 + zero point) unless
    ``symmetric=True``."""

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
        if self._lo is not None:
            self._scale, self._zero_point = scale_from_range(self._lo, self._hi, self.qmin,
                                                             self.qmax, self._symmetric)


class MovingAverageMinMaxObserverLayer(MinMaxObserverLayer):
    """An exponential moving average of each batch's min and max:
    ``lo = rate * lo + (1 - rate) * batch_min`` (the first batch initialises)."""

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
    ``"percent"``, ``"mse"`` or ``"kl"`` (see the module docstring)."""

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
        if self._hist is None:
            return
        width = self._edge / self._bins
        nb = {"percent": self._by_percent, "mse": self._by_mse, "kl": self._by_kl}[self._method]()
        t = max(nb, 1) * width
        self._scale, self._zero_point = scale_from_range(-t, t, self.qmin, self.qmax, True)

    def threshold(self):
        """The calibrated clipping threshold t (scale * qmax)."""
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


# ---------------------------------------------------------------- the factories (config)
def AbsmaxObserver(quant_bits=8):  # noqa: N802  (Paddle's class-like factory name)
    """Per-tensor absmax observer (Paddle: ``paddle.quantization.observers.AbsmaxObserver``)."""
    return ObserverFactory(AbsmaxObserverLayer, quant_bits=quant_bits)


def AbsMaxChannelWiseWeightObserver(quant_bits=8, quant_axis=None):  # noqa: N802
    """Per-channel absmax for weights; ``quant_axis=None`` takes the layer's output-channel
    axis (0 for Conv2D, 1 for Linear)."""
    return ObserverFactory(AbsMaxChannelWiseWeightObserverLayer, quant_bits=quant_bits,
                           quant_axis=quant_axis)


def MinMaxObserver(quant_bits=8, symmetric=False):  # noqa: N802
    """Min/max range over all calibration batches (asymmetric by default)."""
    return ObserverFactory(MinMaxObserverLayer, quant_bits=quant_bits, symmetric=symmetric)


def MovingAverageMinMaxObserver(quant_bits=8, symmetric=False, moving_rate=0.9):  # noqa: N802
    """Moving average of the per-batch min/max."""
    return ObserverFactory(MovingAverageMinMaxObserverLayer, quant_bits=quant_bits,
                           symmetric=symmetric, moving_rate=moving_rate)


def HistObserver(quant_bits=8, bins_count=2048, percent=0.99999, method="percent"):  # noqa: N802
    """Histogram calibration; ``method`` "percent" (PaddleSlim's HistObserver), "mse" or
    "kl"."""
    return ObserverFactory(HistObserverLayer, quant_bits=quant_bits, bins_count=bins_count,
                           method=method, hist_percent=percent)


def KLObserver(quant_bits=8, bins_count=2048):  # noqa: N802
    """Histogram calibration minimising the KL divergence (TensorRT's entropy method)."""
    return ObserverFactory(HistObserverLayer, quant_bits=quant_bits, bins_count=bins_count,
                           method="kl")


def MSEObserver(quant_bits=8, bins_count=2048):  # noqa: N802
    """Histogram calibration minimising the quantization mean squared error."""
    return ObserverFactory(HistObserverLayer, quant_bits=quant_bits, bins_count=bins_count,
                           method="mse")
