"""Gradient clipping strategies for optimizers' ``grad_clip`` argument.

Each is a callable over a list of ``(parameter, gradient)`` pairs returning the
new list. Parameters with ``need_clip=False`` (see `fw.ParamAttr`) and missing
gradients pass through unchanged. Norms of float16/bfloat16 gradients are
accumulated in float32.
"""

from __future__ import annotations

import fw
from fw.autograd import no_grad
from fw.core.errors import InvalidArgumentError

__all__ = ["ClipGradBase", "ClipGradByValue", "ClipGradByNorm", "ClipGradByGlobalNorm"]


def _eligible(p, g):
    return g is not None and getattr(p, "need_clip", True)


def _sq_sum(g):
    g32 = g.astype("float32") if g.dtype.itemsize < 4 and g.dtype.is_floating_point else g
    return (g32 * g32).sum()


class ClipGradBase:
    """Base class of gradient clipping strategies: subclasses implement
    ``_clip(params_grads)`` returning the new ``(parameter, gradient)`` list.

    Examples:
        >>> import fw
        >>> class Halve(fw.nn.clip.ClipGradBase):
        ...     def _clip(self, params_grads):
        ...         return [(p, g * 0.5) for p, g in params_grads]
        >>> p = fw.nn.Parameter(fw.zeros([1]))
        >>> Halve()([(p, fw.to_tensor([4.0]))])[0][1].tolist()
        [2.0]
    """

    def __call__(self, params_grads):
        with no_grad():
            return self._clip(list(params_grads))

    def _clip(self, params_grads):  # pragma: no cover - abstract
        raise NotImplementedError


class ClipGradByValue(ClipGradBase):
    """Clip every gradient element into ``[min, max]``.

    Pass it as ``grad_clip`` to an optimizer; it is called with the list of
    ``(parameter, gradient)`` pairs and returns the clipped list. Parameters whose
    `ParamAttr` sets ``need_clip=False`` are left alone.

    Args:
        max (float): the upper bound.
        min (float, optional): the lower bound; ``-max`` when None. Default: None.

    Examples:
        >>> import fw
        >>> p = fw.nn.Parameter(fw.zeros([2]))
        >>> [(_, g)] = fw.nn.ClipGradByValue(1.0)([(p, fw.to_tensor([-3.0, 0.5]))])
        >>> g.tolist()
        [-1.0, 0.5]
        >>> net = fw.nn.Linear(2, 2)
        >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters(),
        ...                        grad_clip=fw.nn.ClipGradByValue(0.5))
    """

    def __init__(self, max, min=None):  # noqa: A002
        max = float(max)
        min = -max if min is None else float(min)
        if min > max:
            raise InvalidArgumentError(f"ClipGradByValue: min ({min}) must be <= max ({max})")
        self.max = max
        self.min = min

    def _clip(self, params_grads):
        return [(p, fw.clip(g, self.min, self.max) if _eligible(p, g) else g)
                for p, g in params_grads]

    def __repr__(self) -> str:
        return f"ClipGradByValue(min={self.min}, max={self.max})"


class ClipGradByNorm(ClipGradBase):
    """Rescale each gradient whose L2 norm exceeds ``clip_norm`` to that norm (each
    gradient on its own; see `ClipGradByGlobalNorm` for one norm over all).

    Pass it as ``grad_clip`` to an optimizer; it is called with the list of
    ``(parameter, gradient)`` pairs and returns the clipped list. Parameters whose
    `ParamAttr` sets ``need_clip=False`` are left alone.

    Args:
        clip_norm (float): the maximum norm of each gradient.

    Examples:
        >>> import fw
        >>> p, q = fw.nn.Parameter(fw.zeros([2])), fw.nn.Parameter(fw.zeros([1]))
        >>> clip = fw.nn.ClipGradByNorm(clip_norm=1.0)
        >>> out = clip([(p, fw.to_tensor([3.0, 4.0])), (q, fw.to_tensor([0.5]))])
        >>> [[round(v, 4) for v in g.tolist()] for _, g in out]
        [[0.6, 0.8], [0.5]]
    """

    def __init__(self, clip_norm):
        self.clip_norm = float(clip_norm)

    def _clip(self, params_grads):
        out = []
        for p, g in params_grads:
            if not _eligible(p, g):
                out.append((p, g))
                continue
            norm = fw.sqrt(_sq_sum(g))
            scale = self.clip_norm / fw.maximum(norm, fw.full([], self.clip_norm, norm.dtype))
            out.append((p, (g * scale.astype(g.dtype))))
        return out

    def __repr__(self) -> str:
        return f"ClipGradByNorm(clip_norm={self.clip_norm})"


class ClipGradByGlobalNorm(ClipGradBase):
    """Rescale all gradients together so that their global L2 norm (the norm of all of
    them concatenated) is at most ``clip_norm``: ``g * clip_norm / max(global_norm,
    clip_norm)``. The usual choice for training transformers.

    Pass it as ``grad_clip`` to an optimizer; it is called with the list of
    ``(parameter, gradient)`` pairs and returns the clipped list. Parameters whose
    `ParamAttr` sets ``need_clip=False`` are left alone.

    Args:
        clip_norm (float): the maximum global norm.
        group_name (str, optional): kept for Paddle compatibility (one group per
            instance). Default: "default_group".
        auto_skip_clip (bool, optional): return the gradients unchanged when the global
            norm is already within ``clip_norm``. Default: False.

    Examples:
        >>> import fw
        >>> p, q = fw.nn.Parameter(fw.zeros([1])), fw.nn.Parameter(fw.zeros([1]))
        >>> clip = fw.nn.ClipGradByGlobalNorm(clip_norm=1.0)
        >>> out = clip([(p, fw.to_tensor([3.0])), (q, fw.to_tensor([4.0]))])
        >>> [round(g.item(), 4) for _, g in out]
        [0.6, 0.8]
        >>> net = fw.nn.Linear(4, 4)
        >>> opt = fw.optimizer.AdamW(parameters=net.parameters(), grad_clip=clip)
    """

    def __init__(self, clip_norm, group_name="default_group", auto_skip_clip=False):
        self.clip_norm = float(clip_norm)
        self.group_name = group_name
        self.auto_skip_clip = auto_skip_clip

    def global_norm(self, params_grads):
        """The global L2 norm of the gradients this clip would rescale.

        Args:
            params_grads (list): ``(parameter, gradient)`` pairs.

        Returns:
            Tensor|None: a 0-D tensor, or None when no gradient is eligible.

        Examples:
            >>> import fw
            >>> p = fw.nn.Parameter(fw.zeros([2]))
            >>> fw.nn.ClipGradByGlobalNorm(1.0).global_norm([(p, fw.to_tensor([3.0, 4.0]))]).item()
            5.0
        """
        sums = [_sq_sum(g) for p, g in params_grads if _eligible(p, g)]
        if not sums:
            return None
        total = sums[0]
        for s in sums[1:]:
            total = total + s.astype(total.dtype)
        return fw.sqrt(total)

    def _clip(self, params_grads):
        norm = self.global_norm(params_grads)
        if norm is None:
            return params_grads
        # the scale below is 1 anyway when the norm is within bounds: skipping only saves
        # the multiplications, and is possible only eagerly
        if self.auto_skip_clip and isinstance(norm, fw.Tensor) and \
                float(norm.item()) <= self.clip_norm:
            return params_grads
        scale = self.clip_norm / fw.maximum(norm, fw.full([], self.clip_norm, norm.dtype))
        return [(p, g * scale.astype(g.dtype) if _eligible(p, g) else g)
                for p, g in params_grads]

    def __repr__(self) -> str:
        return f"ClipGradByGlobalNorm(clip_norm={self.clip_norm})"
