"""The Paddle-signature functions of the random ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.random`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import UnsupportedError
from fw.core.ops._api import public
from fw.core.ops.random import (
    bernoulli_op,
    exponential_op,
    gaussian_like_op,
    gaussian_op,
    normal_op,
    uniform_like_op,
    uniform_op,
)


@public("rand")
def rand(shape, dtype=None, name=None):
    """Samples uniform on [0, 1) in a tensor of `shape` (default float dtype).

    Args:
        shape (list|tuple|Tensor): The shape of the result.
        dtype (str|fw.dtype, optional): A float dtype; None: the default float dtype. Default:
            None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: samples uniform on [0, 1).

    Examples:
        >>> import fw
        >>> x = fw.rand([2, 3])
        >>> x.shape, x.dtype
        ([2, 3], fw.float32)
        >>> bool(((x >= 0) & (x < 1)).all())
        True
    """
    from fw.core.dispatch import invoke

    return invoke(uniform_op, [], {"shape": shape, "dtype": dtype, "min": 0.0, "max": 1.0,
                                   "seed": 0})


@public("randn")
def randn(shape, dtype=None, name=None):
    """Standard normal samples in a tensor of `shape` (default float dtype).

    Args:
        shape (list|tuple|Tensor): The shape of the result.
        dtype (str|fw.dtype, optional): A float dtype; None: the default float dtype. Default:
            None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: samples of the standard normal distribution.

    Examples:
        >>> import fw
        >>> fw.randn([2, 3]).shape
        [2, 3]
    """
    from fw.core.dispatch import invoke

    return invoke(gaussian_op, [], {"shape": shape, "mean": 0.0, "std": 1.0, "seed": 0,
                                    "dtype": dtype})


@public("standard_normal")
def standard_normal(shape, dtype=None, name=None):
    """Standard normal samples in a tensor of `shape` (same as `randn`).

    Args:
        shape (list|tuple|Tensor): The shape of the result.
        dtype (str|fw.dtype, optional): A float dtype; None: the default float dtype. Default:
            None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: samples of the standard normal distribution.

    Examples:
        >>> import fw
        >>> fw.standard_normal([2, 3]).shape
        [2, 3]
    """
    return randn(shape, dtype)


def _is_tensorish(v):
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, np.generic)


@public("normal")
def normal(mean=0.0, std=1.0, shape=None, name=None):
    """Samples of N(mean, std²).

    Args:
        mean (float|Tensor, optional): The mean, per element when a tensor. Default: 0.0.
        std (float|Tensor, optional): The standard deviation, per element when a tensor.
            Default: 1.0.
        shape (list|tuple|Tensor, optional): The result shape when mean and std are both numbers
            (ignored otherwise: the result has the broadcast shape of the tensors). Default:
            None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: samples of N(mean, std**2).

    Examples:
        >>> import fw
        >>> fw.normal(mean=fw.to_tensor([0., 10.]), std=1.0).shape
        [2]
    """
    from fw.core.dispatch import invoke

    if _is_tensorish(mean) or _is_tensorish(std):
        if isinstance(mean, complex) or (_is_tensorish(mean) and mean.dtype.is_complex):
            raise UnsupportedError("normal: complex mean is not supported")
        return invoke(normal_op, [mean, std], {})
    if isinstance(mean, complex):
        raise UnsupportedError("normal: complex mean is not supported")
    return invoke(gaussian_op, [], {"shape": () if shape is None else shape, "mean": mean,
                                    "std": std, "seed": 0, "dtype": None})


@public("uniform_", method=True)
def uniform_(x, min=-1.0, max=1.0, seed=0, name=None):
    """Fill x in place with samples uniform on [min, max); returns x.

    Args:
        x (Tensor): The tensor to fill (its shape and dtype are kept).
        min (float, optional): The lower bound (included). Default: -1.0.
        max (float, optional): The upper bound (excluded). Default: 1.0.
        seed (int, optional): 0 draws from the global generator; another value gives the same
            numbers on every call. Default: 0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, filled in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3])
        >>> _ = x.uniform_(0.0, 1.0)
        >>> bool(((x >= 0) & (x < 1)).all())
        True
    """
    from fw.core.dispatch import assign_inplace, invoke

    return assign_inplace("uniform_", x, invoke(uniform_like_op, [x],
                                                {"min": min, "max": max, "seed": seed}))


@public("normal_", method=True)
def normal_(x, mean=0.0, std=1.0, name=None):
    """Fill x in place with samples of N(mean, std²); returns x.

    Args:
        x (Tensor): The tensor to fill (its shape and dtype are kept).
        mean (float, optional): The mean. Default: 0.0.
        std (float, optional): The standard deviation. Default: 1.0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, filled in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3])
        >>> x.normal_() is x
        True
    """
    from fw.core.dispatch import assign_inplace, invoke

    return assign_inplace("normal_", x, invoke(gaussian_like_op, [x],
                                               {"mean": mean, "std": std}))


@public("exponential_", method=True)
def exponential_(x, lam=1.0, name=None):
    """Fill x in place with samples of the exponential distribution with rate `lam`
    (mean 1/lam); returns x.

    Args:
        x (Tensor): The tensor to fill (its shape and dtype are kept).
        lam (float, optional): The rate (the mean is 1 / lam). Default: 1.0.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, filled in place.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3])
        >>> _ = x.exponential_(2.0)
        >>> bool((x > 0).all())
        True
    """
    from fw.core.dispatch import assign_inplace, invoke

    return assign_inplace("exponential_", x, invoke(exponential_op, [x], {"lam": lam}))


@public("bernoulli_", method=True)
def bernoulli_(x, p=0.5, name=None):
    """Fill x in place with 1 (probability p) or 0; returns x.

    Args:
        x (Tensor): The tensor to fill (its dtype is kept).
        p (float|Tensor, optional): The probability of a 1; a tensor must hold one value.
            Default: 0.5.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x, filled in place with 0s and 1s.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2, 3])
        >>> _ = x.bernoulli_(0.3)
        >>> sorted(set(x.flatten().tolist())) in ([0.0], [1.0], [0.0, 1.0])
        True
    """
    from fw.core.dispatch import assign_inplace, invoke

    if _is_tensorish(p):
        if getattr(p, "size", 1) != 1:
            raise UnsupportedError("bernoulli_: a per-element probability tensor is not "
                                   "supported; use fw.bernoulli(p) and assign it")
        p = p.item()
    return assign_inplace("bernoulli_", x, invoke(bernoulli_op, [x], {"p": p}))
