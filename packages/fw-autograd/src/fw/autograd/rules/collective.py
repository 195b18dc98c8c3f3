"""VJP rules of the collective ops (`fw.core.ops.collective`), written with the
collective ops themselves, so they run eagerly and in static backward programs on
every rank alike.

Convention: the loss being differentiated is the SUM over ranks of each rank's
loss, and each rank's cotangent is the derivative of its own loss. Then

- ``c_allreduce`` sum: y_k = Σ_j x_j, so dL/dx_j = Σ_k g_k — the all-reduce (sum)
  of the cotangents (avg: the avg of them); max/min/prod have no rule (raise);
- ``c_allgather``: dL/dx_j = Σ_k (chunk j of g_k) — a reduce-scatter (sum);
- ``c_reducescatter`` sum: dL/dx_j = concat_k g_k — an all-gather;
- ``all_to_all``: chunk k of y_j is chunk j of x_k, so chunk k of dL/dx_j is chunk j
  of g_k — the inverse exchange, which for equal chunks is the all-to-all again;
- ``c_broadcast``: only the root's input is used: a reduce (sum) to the root, zeros
  elsewhere; ``c_reduce`` sum: every input reaches the root's output: a broadcast
  of the root's cotangent.

This is the convention of PyTorch's ``torch.distributed.nn.functional`` (its
all_reduce backward all-reduces the gradient). Megatron-LM's tensor-parallel
``g`` operator (all-reduce forward, identity backward) instead assumes every rank
already holds the same cotangent of a loss counted once; fw's tensor-parallel layers
(fw.distributed.fleet.meta_parallel) are PyLayers with Megatron's pairs, not these
rules.
"""

from __future__ import annotations

from fw.autograd._registry import vjp
from fw.core.errors import UnsupportedError
from fw.core.ops import call


def _linear(ctx, what):
    r = ctx.attrs["reduce_op"]
    if r not in ("sum", "avg"):
        raise UnsupportedError(f"{ctx.op.name}: no gradient for reduce_op={r!r} ({what} is "
                               f"differentiable for 'sum' and 'avg' only)")
    return r


@vjp("c_allreduce", inputs=False)
def _c_allreduce(ctx, g):
    r = _linear(ctx, "an all-reduce")
    return call("c_allreduce", g, reduce_op=r, ring_id=ctx.attrs["ring_id"])


@vjp("c_broadcast", inputs=False)
def _c_broadcast(ctx, g):
    a = ctx.attrs
    return call("c_reduce", g, reduce_op="sum", root=a["root"], ring_id=a["ring_id"])


@vjp("c_reduce", inputs=False)
def _c_reduce(ctx, g):
    a = ctx.attrs
    if _linear(ctx, "a reduce") == "avg":
        raise UnsupportedError("c_reduce: no gradient for reduce_op='avg' (its rank count is "
                               "not an attribute of the op)")
    return call("c_broadcast", g, root=a["root"], ring_id=a["ring_id"])


@vjp("c_allgather", inputs=False)
def _c_allgather(ctx, g):
    a = ctx.attrs
    return call("c_reducescatter", g, reduce_op="sum", nranks=a["nranks"], ring_id=a["ring_id"])


@vjp("c_reducescatter", inputs=False)
def _c_reducescatter(ctx, g):
    a = ctx.attrs
    gx = call("c_allgather", g, nranks=a["nranks"], ring_id=a["ring_id"])
    if _linear(ctx, "a reduce-scatter") == "avg":
        gx = gx / a["nranks"]
    return gx


@vjp("all_to_all", inputs=False)
def _all_to_all(ctx, g):
    a = ctx.attrs
    return call("all_to_all", g, nranks=a["nranks"], ring_id=a["ring_id"])
