"""ZeRO sharding: `group_sharded_parallel` (Paddle's
``paddle.distributed.sharding``). See `_zero` for the design."""

from __future__ import annotations

from fw.distributed import _fleet_comm as comm
from fw.distributed.sharding._zero import (
    ShardingOptimizer,
    Stage3Model,
    Stage3Optimizer,
    owners_of,
    partition_params,
)

__all__ = ["group_sharded_parallel", "save_group_sharded_model", "ShardingOptimizer",
           "Stage3Model", "Stage3Optimizer", "partition_params", "owners_of"]

_LEVELS = {"os": 1, "os_g": 2, "p_g_os": 3}


def group_sharded_parallel(model, optimizer, level, scaler=None, group=None, offload=False,
                           sync_buffers=False, buffer_max_size=2 ** 23, segment_size=2 ** 20,
                           sync_comm=False, dp_group=None, exclude_layer=None):
    """Shard `optimizer`'s state (``level="os"``), + gradients (``"os_g"``), + the
    parameters (``"p_g_os"``) of `model` over `group` (default: every rank).

    Args:
        model: the `fw.nn.Layer` to train.
        optimizer: its optimizer (made with ``parameters=model.parameters()``).
        level: ``"os"``, ``"os_g"`` or ``"p_g_os"`` (ZeRO stage 1, 2 or 3).
        scaler: a ``GradScaler``, returned unchanged.
        group: the sharding group (default: every rank).
        offload: not supported (CPU memory already holds everything).
        sync_buffers: accepted (buffers are broadcast from rank 0 at wrapping).
        buffer_max_size: stage 3: the gradient bucket size in bytes (full
            gradients of consecutive layers reduce-scattered as one message).
        segment_size: accepted for Paddle compatibility (every parameter is split).
        sync_comm: stage 3: gather each layer's parameters only when it runs (no
            prefetch of the next layer's all-gather).
        dp_group, exclude_layer: not supported.

    Returns:
        ``(model, optimizer, scaler)``: train with them as usual
        (``loss.backward(); optimizer.step(); optimizer.clear_grad()``).

    Examples:
        >>> import fw
        >>> from fw.distributed.sharding import group_sharded_parallel
        >>> net = fw.nn.Linear(4, 2)
        >>> opt = fw.optimizer.Adam(parameters=net.parameters())
        >>> net, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
        >>> net(fw.ones([3, 4])).mean().backward(); opt.step(); opt.clear_grad()
    """
    from fw.distributed.parallel import DataParallel, sync_params_buffers
    from fw.nn import Layer

    if level not in _LEVELS:
        raise ValueError(f"group_sharded_parallel: level must be 'os', 'os_g' or 'p_g_os', got "
                         f"{level!r}")
    if not isinstance(model, Layer):
        raise TypeError(f"group_sharded_parallel: 'model' must be an fw.nn.Layer, got "
                        f"{type(model).__name__}")
    if offload:
        raise NotImplementedError("group_sharded_parallel: offload=True (keeping sharded "
                                  "state in host memory) is for GPU training; fw's sharding "
                                  "runs on CPU memory already")
    if dp_group is not None or exclude_layer:
        raise NotImplementedError("group_sharded_parallel: dp_group and exclude_layer are not "
                                  "supported")
    g = comm.world() if group is None else group
    stage = _LEVELS[level]
    sync_params_buffers(model, g, 0)
    if stage == 3:
        m = Stage3Model(model, g, bucket_size=buffer_max_size, prefetch=not sync_comm)
        return m, Stage3Optimizer(optimizer, m), scaler
    opt = ShardingOptimizer(optimizer, g, stage, grads_reduced=g.nranks > 1)
    if g.nranks > 1:
        # stage 1: gradients all-reduced in buckets during backward; stage 2: each
        # bucket reduced to the owner of its parameters, the others free theirs
        owners = owners_of(model.parameters(), g.nranks) if stage == 2 else None
        model = DataParallel(model, group=g, _grad_owners=owners)
    return model, opt, scaler


def save_group_sharded_model(model, output, optimizer=None):
    """Save the full model (gathered) to ``output/model.pdmodel`` and, with
    `optimizer`, this rank's optimizer shard to ``output/model.pdopt.<rank>``
    (safetensors through `fw.save`). Collective for stage 3.

    Args:
        model (Layer): the model `group_sharded_parallel` returned.
        output (str): the directory.
        optimizer (optional): its optimizer, to save this rank's shard. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> from fw.distributed.sharding import group_sharded_parallel
        >>> net = fw.nn.Linear(4, 2)
        >>> opt = fw.optimizer.Adam(parameters=net.parameters())
        >>> model, opt, _ = group_sharded_parallel(net, opt, "os")
        >>> model(fw.ones([3, 4])).mean().backward()
        >>> opt.step()
        >>> import os
        >>> from fw.distributed.sharding import save_group_sharded_model
        >>> save_group_sharded_model(model, "ckpt", opt)
        >>> sorted(os.listdir("ckpt"))
        ['model.pdmodel', 'model.pdopt.0']
    """
    import os

    import fw

    sd = model.state_dict()
    if comm.world_rank() == 0:
        os.makedirs(output, exist_ok=True)
        fw.save(sd, os.path.join(output, "model.pdmodel"))
    if optimizer is not None:
        os.makedirs(output, exist_ok=True)
        fw.save(optimizer.state_dict(), os.path.join(output,
                                                     f"model.pdopt.{comm.world_rank()}"))
