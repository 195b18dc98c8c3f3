"""``identity_loss`` and the fused masked softmaxes of ``paddle.incubate``, as fw
compositions (Paddle's fused kernels are GPU-only; these give the same values on
every device and differentiate through fw.autograd)."""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value
from fw.core.tensor import Tensor

__all__ = ["identity_loss", "softmax_mask_fuse", "softmax_mask_fuse_upper_triangle"]

_REDUCTIONS = {"sum": "sum", 0: "sum", "mean": "mean", 1: "mean", "none": "none", 2: "none"}


def identity_loss(x, reduction="none"):
    """Marks `x` as a loss (Paddle uses it on IPUs) and reduces it.

    Args:
        x (Tensor): the loss values.
        reduction (str|int, optional): ``'sum'`` or 0, ``'mean'`` or 1, ``'none'`` or 2
            (default).

    Returns:
        Tensor: x reduced (a 0-D tensor) or x itself for ``'none'``.

    Examples:
        >>> import fw
        >>> fw.incubate.identity_loss(fw.to_tensor([1.0, 2.0, 3.0]), reduction="mean").item()
        2.0
    """
    import fw

    if not isinstance(x, (Tensor, Value)):  # a Value: static mode, as Paddle's example
        raise InvalidTypeError(f"identity_loss: 'x' must be a Tensor, got {type(x).__name__}")
    how = _REDUCTIONS.get(reduction) if not isinstance(reduction, bool) else None
    if how is None:
        raise InvalidArgumentError(f"identity_loss: 'reduction' must be 'sum'/0, 'mean'/1 or "
                                   f"'none'/2, got {reduction!r}")
    if how == "sum":
        return fw.sum(x)
    if how == "mean":
        return fw.mean(x)
    return x


def _check4(x, name, who):
    if not isinstance(x, Tensor):
        raise InvalidTypeError(f"{who}: '{name}' must be a Tensor, got {type(x).__name__}")
    if len(x.shape) != 4:
        raise InvalidArgumentError(f"{who}: '{name}' must be 4-D [batch, heads, q, k], got "
                                   f"shape {list(x.shape)}")
    if x.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise InvalidTypeError(f"{who}: '{name}' must be a float tensor, got {x.dtype.name}")


def softmax_mask_fuse(x, mask, name=None):
    """``softmax(x + mask, axis=-1)``, the masked attention softmax.

    Args:
        x (Tensor): [batch, heads, q, k] float scores.
        mask (Tensor): [batch, 1, q, k] additive mask (large negative values mask out),
            x's dtype.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: x's shape and dtype.

    Examples:
        >>> import fw
        >>> x = fw.zeros([1, 1, 1, 2])
        >>> m = fw.to_tensor([[[[0.0, -10000.0]]]])
        >>> [round(v, 4) for v in fw.incubate.softmax_mask_fuse(x, m).reshape([-1]).tolist()]
        [1.0, 0.0]
    """
    import fw

    who = "softmax_mask_fuse"
    _check4(x, "x", who)
    _check4(mask, "mask", who)
    if mask.dtype != x.dtype or mask.shape[1] != 1 or [mask.shape[0]] + mask.shape[2:] != (
            [x.shape[0]] + x.shape[2:]):
        raise InvalidArgumentError(f"{who}: 'mask' must be [batch, 1, q, k] = "
                                   f"{[x.shape[0], 1] + x.shape[2:]} with x's dtype "
                                   f"{x.dtype.name}, got {list(mask.shape)} {mask.dtype.name}")
    return fw.nn.functional.softmax(x + mask, axis=-1)


def softmax_mask_fuse_upper_triangle(x):
    """The causal attention softmax: ``softmax`` over the last axis with every key after
    the query (the strict upper triangle of the last two axes) masked out.

    Args:
        x (Tensor): [batch, heads, q, q] float scores.

    Returns:
        Tensor: x's shape and dtype.

    Examples:
        >>> import fw
        >>> out = fw.incubate.softmax_mask_fuse_upper_triangle(fw.zeros([1, 1, 2, 2]))
        >>> out.reshape([-1]).tolist()
        [1.0, 0.0, 0.5, 0.5]
    """
    import fw

    who = "softmax_mask_fuse_upper_triangle"
    _check4(x, "x", who)
    if x.shape[2] != x.shape[3]:
        raise InvalidArgumentError(f"{who}: 'x' must be square in its last two axes, got "
                                   f"shape {list(x.shape)}")
    keep = fw.tril(fw.ones([x.shape[2], x.shape[3]], dtype="bool"))
    masked = fw.where(keep, x, fw.full_like(x, float("-inf")))
    return fw.nn.functional.softmax(masked, axis=-1)
