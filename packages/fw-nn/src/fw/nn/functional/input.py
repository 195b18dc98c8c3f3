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
    """Look up rows of an embedding table: ``out[...] = weight[x[...]]``.

    Args:
        x (Tensor): int32/int64 ids in ``[0, V)``, any shape.
        weight (Tensor): the table ``[V, D]``.
        padding_idx (int, optional): an id (negative counts from V) whose output rows are
            zero and get no gradient. Default: None.
        max_norm (float, optional): before the lookup, rows referenced by ``x`` whose
            ``norm_type``-norm exceeds it are rescaled to it, in place in ``weight`` (eager
            mode only). Default: None.
        norm_type (float, optional): the p of that norm. Default: 2.0.
        sparse (bool, optional): accepted for compatibility; fw has no row-sparse gradients,
            so ``weight``'s gradient is always a dense ``[V, D]`` tensor. Default: False.
        scale_grad_by_freq (bool, optional): divide each row's gradient by the number of
            times its id occurs in ``x``. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x.shape + [D]``, ``weight``'s dtype.

    Examples:
        >>> import fw
        >>> w = fw.to_tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 4.0]])
        >>> fw.nn.functional.embedding(fw.to_tensor([[2, 0], [1, 1]]), w).tolist()
        [[[2.0, 4.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]]]
        >>> fw.nn.functional.embedding(fw.to_tensor([2, 1]), w, padding_idx=1).tolist()
        [[2.0, 4.0], [0.0, 0.0]]
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
