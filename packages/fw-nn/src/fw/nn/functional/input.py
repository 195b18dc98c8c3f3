"""``one_hot`` and ``embedding`` of ``paddle.nn.functional``."""

from __future__ import annotations

import fw
from fw.autograd import no_grad
from fw.core.errors import InvalidArgumentError
from fw.core.ir import no_building
from fw.core.ir.core import Value
from fw.core.ops.indexing import one_hot
from fw.nn.functional._helpers import op

__all__ = ["one_hot", "embedding"]


def embedding(x, weight, padding_idx=None, max_norm=None, norm_type=2.0, sparse=False,
              scale_grad_by_freq=False, name=None):
    """Rows of `weight` ``[V, D]`` for the integer ids `x`: result ``x.shape + [D]``.

    Args:
        x: int32/int64 ids in ``[0, V)``.
        weight: the embedding table.
        padding_idx: rows with this id (negative counts from V) are zeros and get no
            gradient.
        max_norm: before the lookup, rows referenced by x whose `norm_type`-norm exceeds
            `max_norm` are rescaled to that norm, in place in `weight` (eager only).
        sparse: accepted for compatibility. fw has no row-sparse gradients: the
            gradient of `weight` is always a dense ``[V, D]`` tensor (zeros in the rows
            not looked up), computed by the same rule.
        scale_grad_by_freq: divide each row's gradient by how often its id occurs in x.

    >>> import fw
    >>> w = fw.to_tensor([[0.0, 0.0], [1.0, 1.0]])
    >>> fw.nn.functional.embedding(fw.to_tensor([1, 0]), w).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    if max_norm is not None:
        if isinstance(weight, Value) or isinstance(x, Value):
            raise InvalidArgumentError("embedding: max_norm renormalises the table in place, "
                                       "which is only possible eagerly")
        with no_building(), no_grad():
            ids = fw.unique(x.flatten())
            rows = fw.gather(weight, ids)
            norms = fw.linalg.norm(rows, p=float(norm_type), axis=1, keepdim=True)
            scale = fw.where(norms > max_norm, max_norm / (norms + 1e-7), fw.ones_like(norms))
            weight._data[ids.numpy()] = (rows * scale)._data
    out = op("embedding", [x, weight], padding_idx=padding_idx)
    if scale_grad_by_freq and not out.stop_gradient:
        # same value, gradient scaled by 1/count(id) per occurrence
        counts = fw.bincount(x.flatten(), minlength=weight.shape[0]).astype(out.dtype)
        inv = fw.gather(1.0 / fw.maximum(counts, fw.ones_like(counts)), x.flatten())
        inv = inv.reshape(list(x.shape) + [1])
        out = out * inv + (out * (1.0 - inv)).detach()
    return out
