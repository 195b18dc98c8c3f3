"""Paddle 3.x's ``shard_scaler``: a `GradScaler` for distributed training."""

from __future__ import annotations

import types

import numpy as np

__all__ = ["shard_scaler"]


def shard_scaler(scaler):
    """Make `scaler` (a ``fw.amp.GradScaler``) agree across ranks on whether a step
    overflowed: after unscaling its own gradient blocks, each rank's inf/NaN flag is
    OR-ed over every rank (an all-reduce of one integer), so every rank skips or takes
    the same steps and lowers the scale alike — without it a rank whose block alone
    holds an inf would skip a step its peers take. Every rank of the job (fw's meshes
    hold every rank) must call ``unscale_`` / ``step`` / ``minimize`` together.

    Args:
        scaler (GradScaler): the scaler (changed in place).

    Returns:
        GradScaler: `scaler`.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(2, 1), mesh)
            >>> opt = dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()))
            >>> scaler = dist.shard_scaler(fw.amp.GradScaler(init_loss_scaling=8.0))
            >>> scaler.scale(lin(fw.ones([2, 2])).sum()).backward()
            >>> scaler.step(opt); scaler.update()
    """
    from fw.amp import GradScaler

    if not isinstance(scaler, GradScaler):
        raise TypeError(f"shard_scaler: expected a fw.amp.GradScaler, got "
                        f"{type(scaler).__name__}")
    if getattr(scaler, "_fw_sharded", False):
        return scaler
    local_unscale = scaler.unscale_

    def unscale_(self, optimizer):
        local_unscale(optimizer)
        if not self._enable:
            return
        from fw.distributed import _fleet_comm as comm

        if comm.world_size() > 1:
            flag = np.array([1 if self._found_inf else 0], dtype=np.int32)
            comm.all_reduce(flag, op="max")
            self._found_inf = bool(flag[0])

    scaler.unscale_ = types.MethodType(unscale_, scaler)
    scaler._fw_sharded = True
    return scaler
