"""Paddle 3.x's ``to_distributed``: the one-call automatic parallelisation."""

from __future__ import annotations

from fw.distributed.auto_parallel.intermediate.global_mesh import set_mesh
from fw.distributed.auto_parallel.intermediate.parallelize import parallelize
from fw.distributed.auto_parallel.process_mesh import ProcessMesh

__all__ = ["to_distributed", "ToDistributedConfig"]


class ToDistributedConfig:
    """Options of `to_distributed` (Paddle's fields).

    Args:
        (none: set the attributes ``input_spec`` and ``sequence_parallel``.)

    Examples:
        .. code-block:: python

            >>> import fw.distributed.auto_parallel.intermediate as inter
            >>> cfg = inter.ToDistributedConfig()
            >>> cfg.input_spec, cfg.sequence_parallel
            (None, False)
    """

    def __init__(self):
        self.input_spec = None
        self.sequence_parallel = False


def to_distributed(model, optimizer, dataloader, device_num, node_num=1, config=None):
    """Distribute `model`, `optimizer` and `dataloader` over ``device_num * node_num``
    ranks with data parallelism: a one-axis mesh ["dp"] of every rank, parameters
    replicated, each batch split along dim 0 over "dp" (`shard_dataloader`).

    Paddle additionally recognises Llama-style decoder blocks in the model's program
    and picks dp x mp x pp meshes for 2/4/6/8 devices; fw does not match model
    patterns and always chooses data parallelism (what Paddle falls back to for
    models it does not recognise). ``config.sequence_parallel`` therefore raises.

    Args:
        model (Layer): the model.
        optimizer (Optimizer): its optimizer.
        dataloader (DataLoader): yields batches (lists/tuples of tensors).
        device_num (int): devices per node.
        node_num (int, optional): nodes. Default 1.
        config (ToDistributedConfig, optional): options.

    Returns:
        tuple: ``(model, optimizer, ShardDataloader)``.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> from fw.io import DataLoader, TensorDataset
            >>> data = TensorDataset([fw.ones([4, 3]), fw.zeros([4, 1])])
            >>> model = fw.nn.Linear(3, 1)
            >>> opt = fw.optimizer.SGD(parameters=model.parameters())
            >>> model, opt, loader = dist.to_distributed(model, opt, DataLoader(data, batch_size=2),
            ...                                          device_num=1)
            >>> x, y = next(iter(loader))
            >>> x.placements
            [Shard(dim=0)]
            >>> dist.set_mesh(None)
    """
    from fw.distributed import get_world_size
    from fw.distributed.auto_parallel.static import shard_dataloader

    for what, v in (("device_num", device_num), ("node_num", node_num)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"to_distributed: {what} must be a positive int, got {v!r}")
    n = device_num * node_num
    world = get_world_size()
    if n != world:
        raise ValueError(f"to_distributed: device_num * node_num = {n} but the job has "
                         f"{world} ranks")
    if config is not None and getattr(config, "sequence_parallel", False):
        raise NotImplementedError("to_distributed: sequence_parallel needs the Llama pattern "
                                  "matching fw does not do; use parallelize with "
                                  "SequenceParallel* plans")
    mesh = ProcessMesh(list(range(n)), dim_names=["dp"])
    set_mesh(mesh)
    model, optimizer = parallelize(model, optimizer, mesh, {"dp_config": {"sharding_level": 0}})
    loader = shard_dataloader(dataloader, meshes=[mesh], shard_dims="dp")
    return model, optimizer, loader
