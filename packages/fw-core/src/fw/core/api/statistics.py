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
        x (Tensor): The input tensor.
        axis (int, optional): The axis to reduce; None: all elements. Default: None.
        keepdim (bool, optional): Whether axis stays as a dimension of size 1. Default: False.
        mode (str, optional): 'avg' (the mean of the two middle values for an even count) or
            'min' (the lower one, also returning its index). Default: 'avg'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor|tuple(Tensor, Tensor): the medians; with mode='min', also their int64 indices.

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

    Args:
        x (Tensor): The input tensor.
        axis (int, optional): The axis to reduce; None: all elements. Default: None.
        keepdim (bool, optional): Whether axis stays as a dimension of size 1. Default: False.
        mode (str, optional): 'avg' or 'min' (the lower middle value and its index). Default:
            'avg'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor|tuple(Tensor, Tensor): the medians of the non-NaN values (NaN for all-NaN
            slices); with mode='min', also the indices.

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

    Args:
        input (Tensor): The values.
        bins (int, optional): The number of equal-width bins. Default: 100.
        min (float, optional): The lower end of the range. Default: 0.0.
        max (float, optional): The upper end; min = max = 0 uses the data's min and max.
            Default: 0.0.
        weight (Tensor, optional): A weight per value, summed instead of counting 1. Default:
            None.
        density (bool, optional): Normalise so that the histogram integrates to 1. Default:
            False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the bins counts (int64, or float with weights or density).

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
        x (Tensor): A float tensor [..., D] of points.
        bins (int|list[int]|list[Tensor], optional): The bins per coordinate (one int for all),
            or each coordinate's bin edges. Default: 10.
        ranges (list[float], optional): [min0, max0, min1, max1, ...]; None uses the data's min
            and max per coordinate. Default: None.
        density (bool, optional): Normalise to a probability density. Default: False.
        weights (Tensor, optional): One weight per point (x's shape without the last axis).
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        tuple(Tensor, list[Tensor]): the D-dimensional histogram and the D edge tensors.

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
