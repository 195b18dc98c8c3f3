"""In-place gradient clipping of parameters' ``.grad`` (torch-style helpers that
Paddle 3 also provides)."""

from __future__ import annotations

import math

import numpy as np

import fw
from fw.autograd import no_grad
from fw.core.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _params(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale the gradients of ``parameters`` in place so that their total norm is at most
    ``max_norm``.

    The total norm is the ``norm_type``-norm of all gradients together (as if
    concatenated). When it exceeds ``max_norm`` every gradient is multiplied by
    ``max_norm / (total + 1e-6)``. Call it between ``backward()`` and the optimizer
    step.

    Args:
        parameters (Tensor|Iterable[Tensor]): the parameters whose ``.grad`` is clipped.
        max_norm (float): the largest allowed total norm.
        norm_type (float, optional): the p of the norm; ``float("inf")`` for the max norm.
            Default: 2.0.
        error_if_nonfinite (bool, optional): raise if the total norm is NaN or infinite.
            Default: False.

    Returns:
        Tensor: the total norm before clipping, a 0-D float32 tensor.

    Examples:
        >>> import fw
        >>> p = fw.nn.Parameter(fw.zeros([2]))
        >>> p.grad = fw.to_tensor([3.0, 4.0])
        >>> round(fw.nn.utils.clip_grad_norm_([p], max_norm=1.0).item(), 4)
        5.0
        >>> [round(v, 3) for v in p.grad.tolist()]
        [0.6, 0.8]
        >>> net = fw.nn.Linear(4, 2)
        >>> net(fw.randn([8, 4])).sum().backward()
        >>> total = fw.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)
        >>> grads = [p.grad for p in net.parameters()]
        >>> round(float(sum((g ** 2).sum() for g in grads) ** 0.5), 3)
        0.5
    """
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return fw.to_tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        if math.isinf(norm_type):
            norms = [g.abs().max().astype("float32") for g in grads]
            total = fw.stack(norms).max()
        else:
            norms = [(g.abs().astype("float32") ** norm_type).sum() for g in grads]
            total = fw.stack(norms).sum() ** (1.0 / norm_type)
        if error_if_nonfinite and not bool(fw.isfinite(total).item()):
            raise RuntimeError(f"clip_grad_norm_: the total {norm_type}-norm of the gradients "
                               f"is {total.item()}; set error_if_nonfinite=False to clip anyway")
        if type(total._data) is not np.ndarray:
            # on a device, reading the norm would wait for every queued kernel: the
            # scale min(max_norm / (norm + 1e-6), 1) stays there (x 1 leaves a
            # gradient exactly as it is, so this equals the host path below)
            t64 = total.astype("float64")
            coef = fw.clip(float(max_norm) / (t64 + 1e-6), max=1.0)
            for g in grads:
                g.set_value(g * coef.astype(g.dtype))
            return total
        coef = float(max_norm) / (float(total.item()) + 1e-6)
        if coef < 1.0:
            for g in grads:
                g.set_value(g * coef)
    return total


def clip_grad_value_(parameters, clip_value):
    """Clip every gradient element of ``parameters`` into ``[-clip_value, clip_value]``,
    in place.

    Args:
        parameters (Tensor|Iterable[Tensor]): the parameters whose ``.grad`` is clipped.
        clip_value (float): the bound.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> p = fw.nn.Parameter(fw.zeros([3]))
        >>> p.grad = fw.to_tensor([-2.0, 0.5, 3.0])
        >>> fw.nn.utils.clip_grad_value_([p], 1.0)
        >>> p.grad.tolist()
        [-1.0, 0.5, 1.0]
    """
    c = float(clip_value)
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.set_value(fw.clip(p.grad, -c, c))
