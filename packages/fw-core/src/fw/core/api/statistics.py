"""The Paddle-signature functions of the statistics ops that the generated ones cannot express
(median, nanmedian, histogram, histogramdd).

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.statistics`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

from fw.core.ops._api import public
from fw.core.ops.reduce import _int_types
from fw.core.ops.statistics import (
    histogram_op,
    histogramdd_edges_op,
    histogramdd_op,
    median_op,
    nanmedian_op,
)


@public("median", method=True)
def median(x, axis=None, keepdim=False, mode="avg", name=None):
    """Median of x along `axis` (all elements when None).

    Args:
        x (Tensor): real input.
        axis (int|None): the axis; None uses every element.
        keepdim (bool): keep the reduced axis with size 1.
        mode (str): 'avg' averages the two middle values of an even count (result
            float64 for float64 input, else float32, as in Paddle); 'min' takes the
            lower one and keeps x's dtype.

    Returns:
        Tensor, or (values, indices) when mode='min' and axis is not None. A slice
        containing NaN has median NaN.

    Examples:
        >>> import fw
        >>> fw.median(fw.to_tensor([[1., 4.], [2., 3.]]), axis=1).tolist()
        [2.5, 2.5]
    """
    from fw.core.dispatch import invoke

    v, i = invoke(median_op, [x], {"axis": axis, "keepdim": keepdim, "mode": mode})
    return (v, i) if mode == "min" and axis is not None else v


@public("nanmedian", method=True)
def nanmedian(x, axis=None, keepdim=False, mode="avg", name=None):
    """Median of x along `axis` (an int, a list, or None for all) ignoring NaN.

    Returns:
        Tensor, or (values, indices) when mode='min' and axis is an int.
        All-NaN slices give NaN.

    Examples:
        >>> import fw
        >>> fw.nanmedian(fw.to_tensor([[float('nan'), 2., 3.], [0., 1., 2.]]), 0).tolist()
        [0.0, 1.5, 2.5]
    """
    from fw.core.dispatch import invoke

    v, i = invoke(nanmedian_op, [x], {"axis": axis, "keepdim": keepdim, "mode": mode})
    return (v, i) if mode == "min" and isinstance(axis, _int_types) else v

@public("histogram", method=True)
def histogram(input, bins=100, min=0.0, max=0.0, weight=None, density=False, name=None):
    """Histogram of the elements of `input` in `bins` equal-width bins over
    [min, max] (both ends included; values outside are ignored). With min == max
    == 0 the data's min and max are used; a single value range is widened by 1 on
    each side.

    Returns:
        Tensor of shape [bins]: int64 counts, or float (the weight's float dtype,
        else float32) when `weight` is given or `density` is True.

    Examples:
        >>> import fw
        >>> fw.histogram(fw.to_tensor([1, 2, 1]), bins=4, min=0, max=3).tolist()
        [0, 2, 1, 0]
    """
    from fw.core.dispatch import invoke

    return invoke(histogram_op, [input, weight],
                  {"bins": bins, "min": min, "max": max, "density": density})


@public("histogramdd")
def histogramdd(x, bins=10, ranges=None, density=False, weights=None, name=None):
    """Histogram of N-D points: the last axis of x holds the D coordinates of each
    point (leading axes are flattened).

    Args:
        x (Tensor): float tensor of shape [..., D].
        bins (int|list[int]|list[Tensor]): bins per coordinate (one int for all),
            or the bin edges of each coordinate.
        ranges (list[float]|None): [min0, max0, min1, max1, ...]; None uses the data's
            min and max per coordinate.
        density (bool): normalise to a probability density.
        weights (Tensor|None): one weight per point (x's shape without the last axis).

    Returns:
        (Tensor, list[Tensor]): the D-dimensional histogram and the D edge tensors.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0., 1.], [1., 0.], [2., 0.], [2., 2.]])
        >>> hist, edges = fw.histogramdd(x, bins=[3, 3])
    """
    from fw.core.dispatch import invoke

    explicit = isinstance(bins, (list, tuple)) and bins and \
        not isinstance(bins[0], _int_types) and hasattr(bins[0], "shape")
    if explicit:
        hist = invoke(histogramdd_op, [x, weights, list(bins)],
                      {"bins": (1,), "ranges": None, "density": density})
        return hist, list(bins)
    hist = invoke(histogramdd_op, [x, weights, []],
                  {"bins": bins, "ranges": ranges, "density": density})
    nd = x.shape[-1]
    edges = [invoke(histogramdd_edges_op, [x], {"bins": bins, "ranges": ranges, "dim": k})
             for k in range(nd)]
    return hist, edges
