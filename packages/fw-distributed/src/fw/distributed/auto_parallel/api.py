"""Paddle 3.x's eager auto-parallel API: `shard_tensor`, `dtensor_from_fn`,
`reshard`, `unshard_dtensor`, `shard_layer`, `shard_optimizer`."""

from __future__ import annotations

import numpy as np

from fw.core.tensor import Tensor, to_tensor
from fw.distributed.auto_parallel import _comm, spmd
from fw.distributed.auto_parallel._layout import check_placements, local_box
from fw.distributed.auto_parallel._reshard import reshard_local
from fw.distributed.auto_parallel.dist_tensor import DistParameter, DistTensor, make_dist
from fw.distributed.auto_parallel.placement import Partial, Replicate
from fw.distributed.auto_parallel.process_mesh import ProcessMesh
from fw.nn import Parameter

__all__ = ["shard_tensor", "dtensor_from_fn", "reshard", "unshard_dtensor", "shard_layer",
           "shard_optimizer"]


def _check_mesh(fn, mesh):
    if not isinstance(mesh, ProcessMesh):
        raise TypeError(f"{fn}: mesh must be a fw.distributed.ProcessMesh, got "
                        f"{type(mesh).__name__}")


def shard_tensor(data, mesh, placements, dtype=None, place=None, stop_gradient=None):
    """Distribute `data` (the whole tensor, the same on every rank) over `mesh`.

    Each rank keeps its block: ``Shard(d)`` splits tensor axis d over the mesh axis
    (uneven sizes: the first ranks get one element more, as Paddle's balanced
    split), ``Replicate()`` keeps it whole, ``Partial()`` keeps it on the first rank
    of the mesh axis and zeros elsewhere (so the partial values sum to `data`).
    A `Parameter` becomes a distributed parameter of the same name.

    Args:
        data (Tensor|numpy.ndarray|list|scalar): the global value.
        mesh (ProcessMesh): the processes it is spread over (this rank must be in it).
        placements (list[Placement]): one of Shard/Replicate/Partial per mesh axis.
        dtype (str, optional): convert to this dtype first.
        place (str, optional): the device of the local block.
        stop_gradient (bool, optional): None keeps `data`'s.

    Returns:
        Tensor: a distributed tensor (``is_dist()`` is True).

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([4, 2]), mesh, [dist.Shard(0)])
            >>> t.shape, t.placements, t.local_value().shape
            ([4, 2], [Shard(dim=0)], [4, 2])
    """
    fn = "shard_tensor"
    _check_mesh(fn, mesh)
    if isinstance(data, DistTensor):
        if data.process_mesh != mesh:
            raise NotImplementedError(f"{fn}: data is already distributed on "
                                      f"{data.process_mesh}; moving it to another mesh is not "
                                      f"supported yet")
        return reshard(data, mesh, placements)
    is_param = isinstance(data, Parameter)
    if not isinstance(data, Tensor):
        data = to_tensor(data, dtype=dtype, place=place)
    elif dtype is not None or place is not None:
        data = data.to(device=place, dtype=dtype) if hasattr(data, "to") else data
    pl = check_placements(fn, placements, mesh, data.ndim)
    spmd.install()
    coord = _comm.my_coord(mesh)
    sg = data.stop_gradient if stop_gradient is None else bool(stop_gradient)
    if data._node is not None and not data._sg:
        # inside a graph: a differentiable slice (gathered back in backward)
        local = reshard_local(data, data.shape, [Replicate()] * mesh.ndim, pl, mesh)
        return make_dist(local, mesh, pl, data.shape)
    arr = data.numpy()
    box = local_box(arr.shape, pl, mesh, coord)
    block = np.ascontiguousarray(arr[tuple(slice(s, s + n) for s, n in box)]).copy()
    for a, p in enumerate(pl):
        if isinstance(p, Partial) and coord[a] != 0:
            rt = int(p.reduce_type)
            if rt == 0:
                block[...] = 0
            elif rt == 3:
                block[...] = 1
    if is_param:
        local = Parameter._wrap(block, name=data.name, trainable=not sg)
        t = make_dist(local, mesh, pl, arr.shape, cls=DistParameter)
        t._init_attrs(data.name)
        for k in ("optimize_attr", "regularizer", "need_clip", "do_model_average"):
            if k in data.__dict__:
                t.__dict__[k] = data.__dict__[k]
                local.__dict__[k] = data.__dict__[k]
        t.__dict__["is_distributed"] = True
        t._sg = sg
        return t
    local = to_tensor(block, stop_gradient=sg)
    return make_dist(local, mesh, pl, arr.shape)


def dtensor_from_fn(fn, mesh, placements, *args, **kwargs):
    """Build a tensor with ``fn(*args, **kwargs)`` and distribute it (`shard_tensor`).

    Args:
        fn (callable): makes the global tensor (``fw.ones``, ``fw.randn``, …).
        mesh (ProcessMesh): the mesh.
        placements (list[Placement]): one per mesh axis.
        *args, **kwargs: passed to `fn`.

    Returns:
        Tensor: a distributed tensor.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> dist.dtensor_from_fn(fw.ones, mesh, [dist.Replicate()], shape=[2]).shape
            [2]
    """
    if not callable(fn):
        raise TypeError(f"dtensor_from_fn: fn must be callable, got {type(fn).__name__}")
    return shard_tensor(fn(*args, **kwargs), mesh, placements)


def reshard(dist_tensor, mesh, placements):
    """The same global tensor with other placements on `mesh`, moving data with
    collectives on the mesh axes' groups: Replicate→Shard slices, Shard→Replicate
    all-gathers, Shard(i)→Shard(j) is one all-to-all, Partial→Replicate all-reduces,
    Partial→Shard reduce-scatters. Differentiable.

    Args:
        dist_tensor (Tensor): a distributed tensor (a dense one is taken as replicated).
        mesh (ProcessMesh): its mesh (moving between meshes is not supported yet).
        placements (list[Placement]): the new placements.

    Returns:
        Tensor: the resharded distributed tensor.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.arange(4.0), mesh, [dist.Shard(0)])
            >>> dist.reshard(t, mesh, [dist.Replicate()]).placements
            [Replicate()]
    """
    fn = "reshard"
    _check_mesh(fn, mesh)
    if not isinstance(dist_tensor, Tensor):
        raise TypeError(f"{fn}: dist_tensor must be a Tensor, got {type(dist_tensor).__name__}")
    if not isinstance(dist_tensor, DistTensor):
        dist_tensor = shard_tensor(dist_tensor, mesh, [Replicate()] * mesh.ndim)
    if dist_tensor.process_mesh != mesh:
        raise NotImplementedError(f"{fn}: resharding from {dist_tensor.process_mesh} to another "
                                  f"mesh {mesh} is not supported yet (same-mesh only)")
    pl = check_placements(fn, placements, mesh, dist_tensor.ndim)
    local = reshard_local(dist_tensor._local, dist_tensor.shape, dist_tensor.placements, pl, mesh)
    return make_dist(local, mesh, pl, dist_tensor.shape)


def unshard_dtensor(dist_tensor):
    """The whole tensor as a dense Tensor on every rank (all-gathers / all-reduces as
    needed; differentiable). A dense tensor is returned as is.

    Args:
        dist_tensor (Tensor): a distributed tensor.

    Returns:
        Tensor: dense.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.arange(4.0), mesh, [dist.Shard(0)])
            >>> dist.unshard_dtensor(t).numpy().tolist()
            [0.0, 1.0, 2.0, 3.0]
    """
    if not isinstance(dist_tensor, DistTensor):
        return dist_tensor
    mesh = dist_tensor.process_mesh
    return reshard_local(dist_tensor._local, dist_tensor.shape, dist_tensor.placements,
                         [Replicate()] * mesh.ndim, mesh)


def shard_layer(layer, process_mesh, shard_fn=None, input_fn=None, output_fn=None):
    """Distribute a layer's parameters over `process_mesh`.

    `shard_fn(name, sublayer, process_mesh)` is called for every sublayer (name ""
    for the layer itself) and replaces the parameters it wants sharded (with
    `shard_tensor`); afterwards every parameter still dense is replicated on the
    mesh. `input_fn(inputs, process_mesh)` / `output_fn(outputs, process_mesh)`
    become forward pre-/post-hooks.

    Args:
        layer (Layer): the layer (changed in place and returned).
        process_mesh (ProcessMesh): the mesh.
        shard_fn (callable, optional): ``shard_fn(name, sublayer, process_mesh)``.
        input_fn (callable, optional): ``input_fn(inputs, process_mesh) -> inputs``.
        output_fn (callable, optional): ``output_fn(outputs, process_mesh) -> outputs``.

    Returns:
        Layer: `layer`, with distributed parameters.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> def fn(name, sub, mesh):
            ...     if isinstance(sub, fw.nn.Linear):
            ...         sub.weight = dist.shard_tensor(sub.weight, mesh, [dist.Shard(1)])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh, fn)
            >>> lin.weight.placements, lin.bias.placements
            ([Shard(dim=1)], [Replicate()])
    """
    fn = "shard_layer"
    _check_mesh(fn, process_mesh)
    from fw.nn import Layer

    if not isinstance(layer, Layer):
        raise TypeError(f"{fn}: layer must be a fw.nn.Layer, got {type(layer).__name__}")
    if shard_fn is not None:
        for name, sub in layer.named_sublayers(include_self=True):
            shard_fn(name, sub, process_mesh)
    rep = [Replicate()] * process_mesh.ndim
    for sub in layer.sublayers(include_self=True):
        for pname, p in list(sub._parameters.items()):
            if p is not None and not isinstance(p, DistTensor):
                setattr(sub, pname, shard_tensor(p, process_mesh, rep))
    if input_fn is not None:
        layer.register_forward_pre_hook(lambda _layer, inputs: input_fn(inputs, process_mesh))
    if output_fn is not None:
        layer.register_forward_post_hook(
            lambda _layer, inputs, outputs: output_fn(outputs, process_mesh))
    return layer


def shard_optimizer(optimizer, shard_fn=None, gradient_accumulation_steps=1):
    """Let `optimizer` step distributed parameters: each rank updates its local
    blocks (the gradient of a Shard parameter is its block, of a Replicate one the
    whole, already summed over the ranks that used it). Optimizer states are
    created per block.

    Args:
        optimizer (Optimizer): built over the layer's (distributed) parameters.
        shard_fn (ShardingStage1|ShardingStage2|ShardingStage3, optional): ZeRO over a
            mesh axis (see `fw.distributed.ShardingStage1`); None keeps whole blocks.
        gradient_accumulation_steps (int, optional): backward passes summed into the
            gradients before each `step`; the step divides them by it (Paddle's
            dynamic-mode meaning). Default 1.

    Returns:
        Optimizer: `optimizer`, now over the local blocks (a `ShardedOptimizer`
        wrapping it when `shard_fn` is given).

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()))
            >>> lin(fw.ones([3, 4])).sum().backward(); opt.step()
    """
    if shard_fn is not None or gradient_accumulation_steps != 1:
        from fw.distributed.auto_parallel.intermediate.sharding import apply_sharding_stage

        return apply_sharding_stage(optimizer, shard_fn, gradient_accumulation_steps)
    if not callable(getattr(optimizer, "set_param_groups", None)):
        raise TypeError(f"shard_optimizer: expected an fw.optimizer.Optimizer, got "
                        f"{type(optimizer).__name__}")
    groups = optimizer.get_param_groups()
    for g in groups:
        g["params"] = [p._local if isinstance(p, DistTensor) else p for p in g["params"]]
    optimizer.set_param_groups(groups)
    return optimizer
