"""When a VJP rule may use the explicit backward ops of ``fw.core.ops.nn_grad``.

Those ops (conv_grad_weight, max_pool_grad, batch_norm_grad, softmax_grad, ...) are
single fast kernels but not differentiable. A rule uses them for a backward that is
not itself differentiated: an eager backward with grad mode off while the rule runs
(``backward()`` / ``fw.grad`` without ``create_graph``), or a static backward emitted
without ``create_graph`` (append_backward, ``loss.backward()`` in a to_static
function), so eager and static training run the same kernels. A
``create_graph=True`` backward keeps the differentiable re-expression.
"""

from __future__ import annotations

import numpy as np

from fw.autograd import _mode
from fw.autograd._graph import Node

__all__ = ["explicit", "all_zero", "spatial"]

_tls = _mode._tls


def explicit(ctx) -> bool:
    """Whether this rule call may use the non-differentiable explicit backward ops:
    an eager backward that is not recorded (grad mode off while the rule runs), or a
    static backward emitted without ``create_graph``."""
    if type(ctx) is Node:
        return not _tls.enabled
    return not getattr(ctx, "create_graph", True)


def all_zero(*grads) -> bool:
    """Whether every gradient is absent or zero: outputs that got no gradient arrive as
    zeros, and only ``out`` is handled by the explicit ops of multi-output ops. On IR
    Values (static backward) only a gradient made by ``full``/``full_like`` with 0
    counts as zero."""
    return all(g is None or _is_zero(g) for g in grads)


def _is_zero(g) -> bool:
    data = getattr(g, "_data", None)
    if data is not None:
        # on a device, reading the answer would wait for all queued work: the zeros
        # are then simply computed with
        return type(data) is np.ndarray and not data.any()
    op = getattr(g, "defining_op", None)
    return op is not None and op.name in ("full", "full_like") and \
        op.attrs.get("fill_value") == 0


def spatial(shape, channel_last):
    """The spatial sizes of an [N, C, *S] (or [N, *S, C]) shape."""
    return list(shape[1:-1]) if channel_last else list(shape[2:])
