"""ZeRO over a mesh axis for eager auto-parallel: Paddle 3.x's ``ShardingStage1``,
``ShardingStage2`` and ``ShardingStage3``, the ``shard_fn`` objects of
``dist.shard_optimizer``.

Each distributed parameter that is whole (Replicate) on the sharding axis ``a`` is
cut along its first tensor dim ``d`` no mesh axis splits (Paddle's
``get_placement_with_sharding``), balanced over ``a``'s ranks:

- stage 1: the optimizer steps only this rank's piece of every parameter — its
  moments exist for that piece only (1/n of the optimizer state) — and the updated
  pieces are all-gathered back into the parameter;
- stage 2: as stage 1, and the whole gradient is dropped once its piece is taken,
  so between steps a rank keeps only 1/n of the gradients. The gradient itself
  still arrives all-reduced, not reduce-scattered: eager SPMD sums a replicated
  parameter's gradient in backward (README, "Auto-parallel (eager)");
- stage 3: the parameter itself becomes ``Shard(d)`` on ``a`` (each rank stores 1/n
  of it); eager SPMD all-gathers it where an op needs it whole and the gather's
  backward slices the gradient, so the optimizer updates the piece in place.

A rank's piece ``c`` of ``d`` is the balanced split ``_layout.balanced``."""

from __future__ import annotations

import numpy as np

from fw.core.tensor import to_tensor
from fw.distributed.auto_parallel import _comm
from fw.distributed.auto_parallel._layout import balanced
from fw.distributed.auto_parallel.dist_tensor import DistTensor
from fw.distributed.auto_parallel.placement import Replicate, Shard
from fw.distributed.auto_parallel.process_mesh import ProcessMesh

__all__ = ["ShardingStage1", "ShardingStage2", "ShardingStage3", "ShardedOptimizer",
           "apply_sharding_stage"]


class _ShardingStageBase:
    _level = 0

    def __init__(self, sharding_mesh_dim, mesh=None):
        if not isinstance(sharding_mesh_dim, (int, str)) or isinstance(sharding_mesh_dim, bool):
            raise TypeError(f"{type(self).__name__}: sharding_mesh_dim must be a mesh axis "
                            f"index or name, got {sharding_mesh_dim!r}")
        if mesh is not None and not isinstance(mesh, ProcessMesh):
            raise TypeError(f"{type(self).__name__}: mesh must be a ProcessMesh or None, got "
                            f"{type(mesh).__name__}")
        self._sharding_mesh_dim = sharding_mesh_dim
        self._mesh = mesh

    def __call__(self, key, param, tensor):
        """Paddle calls the shard_fn per optimizer accumulator; here the stage is
        applied to the whole optimizer by `shard_optimizer` instead.

        Args:
            key (str): the accumulator's name.
            param (Tensor): its parameter.
            tensor (Tensor): the accumulator.

        Returns:
            Tensor: never; raises.

        Examples:
            .. code-block:: python

                >>> import fw.distributed as dist
                >>> try:
                ...     dist.ShardingStage1("dp")("moment1", None, None)
                ... except NotImplementedError as e:
                ...     print("shard_optimizer" in str(e))
                True
        """
        raise NotImplementedError(
            f"{type(self).__name__}: pass it to dist.shard_optimizer(optimizer, shard_fn=...); "
            f"fw applies the stage to the whole optimizer, not per accumulator")

    def __repr__(self):
        return f"{type(self).__name__}(sharding_mesh_dim={self._sharding_mesh_dim!r})"


class ShardingStage1(_ShardingStageBase):
    """ZeRO stage 1 for `shard_optimizer`: each rank of the sharding axis keeps and
    updates the optimizer state of 1/n of every parameter (its piece along the first
    dim no mesh axis splits); the updated pieces are all-gathered into the parameter.

    Args:
        sharding_mesh_dim (int|str): the mesh axis to shard over (usually "dp").
        mesh (ProcessMesh, optional): the mesh of parameters that are not distributed
            (Paddle's option); fw shards distributed parameters only, so a dense
            parameter is left whole.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = fw.optimizer.AdamW(parameters=lin.parameters())
            >>> opt = dist.shard_optimizer(opt, dist.ShardingStage1("dp", mesh))
            >>> lin(fw.ones([3, 4])).sum().backward(); opt.step(); opt.clear_grad()
    """

    _level = 1


class ShardingStage2(_ShardingStageBase):
    """ZeRO stage 2 for `shard_optimizer`: stage 1, and each rank keeps only its
    piece of the gradients after the step begins (the whole gradient is released).

    Args:
        sharding_mesh_dim (int|str): the mesh axis to shard over.
        mesh (ProcessMesh, optional): see `ShardingStage1`.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()),
            ...                            dist.ShardingStage2("dp"))
            >>> lin(fw.ones([3, 4])).sum().backward(); opt.step()
            >>> lin.weight.grad is None
            True
    """

    _level = 2


class ShardingStage3(_ShardingStageBase):
    """ZeRO stage 3 for `shard_optimizer`: the parameters themselves are split over
    the sharding axis (``Shard(d)``); ops gather them when they need them whole.

    Args:
        sharding_mesh_dim (int|str): the mesh axis to shard over.
        mesh (ProcessMesh, optional): see `ShardingStage1`.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()),
            ...                            dist.ShardingStage3("dp"))
            >>> lin.weight.placements
            [Shard(dim=0)]
    """

    _level = 3


def _axis_of(stage, mesh):
    dim = stage._sharding_mesh_dim
    who = type(stage).__name__
    if isinstance(dim, str):
        if dim not in mesh.dim_names:
            raise ValueError(f"{who}: sharding_mesh_dim {dim!r} is not an axis of the "
                             f"parameters' mesh {mesh.dim_names}")
        return mesh.dim_names.index(dim)
    if not -mesh.ndim <= dim < mesh.ndim:
        raise ValueError(f"{who}: sharding_mesh_dim {dim} is out of range for the "
                         f"{mesh.ndim}-axis mesh {mesh.dim_names}")
    return dim % mesh.ndim


def _pick_dim(p, axis):
    """The tensor dim to cut `p` along on mesh `axis`, or None (already split on the
    axis, nothing left to split, or too small to give every rank a piece)."""
    pl = p.placements
    if not isinstance(pl[axis], Replicate):
        return None
    taken = {q.dim for q in pl if isinstance(q, Shard)}
    n = p.process_mesh.shape[axis]
    local = p._local.shape
    for d in range(p.ndim):
        if d not in taken:
            return d if local[d] >= n else None
    return None


class _Piece:
    __slots__ = ("param", "shard", "dim", "sizes", "coord", "group")

    def __init__(self, param, shard, dim, sizes, coord, group):
        self.param, self.shard, self.dim = param, shard, dim
        self.sizes, self.coord, self.group = sizes, coord, group


def _shard_param(local, name, sl, trainable):
    from fw.nn import Parameter

    block = np.ascontiguousarray(local.numpy()[sl]).copy()
    s = Parameter._wrap(block, name=name, trainable=trainable)
    for k in ("optimize_attr", "regularizer", "need_clip", "do_model_average"):
        if k in local.__dict__:
            s.__dict__[k] = local.__dict__[k]
    return s


class ShardedOptimizer:
    """What `shard_optimizer` returns for a `ShardingStage1/2/3` shard_fn: the user's
    optimizer stepping this rank's pieces. Other attributes (``get_lr``,
    ``set_lr``, ``state_dict`` — of the pieces' state) are the inner optimizer's.

    Args:
        optimizer (Optimizer): the inner optimizer.
        stage (ShardingStage1|ShardingStage2|ShardingStage3|None): the stage (None:
            no sharding, whole blocks).
        gradient_accumulation_steps (int, optional): the gradients are divided by it
            before each step. Default 1.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()),
            ...                            dist.ShardingStage1("dp"))
            >>> type(opt).__name__, opt.sharding_stage
            ('ShardedOptimizer', 1)
    """

    def __init__(self, optimizer, stage, gradient_accumulation_steps=1):
        self._inner = optimizer
        self._stage = stage
        self._acc = int(gradient_accumulation_steps)
        self._pieces: list = []
        self._sources: list = []      # the distributed parameters, for clear_grad
        self._synced = False
        clip = getattr(optimizer, "_grad_clip", None)
        if stage is not None and clip is not None and "GlobalNorm" in type(clip).__name__:
            raise NotImplementedError(
                f"shard_optimizer({type(stage).__name__}): global-norm gradient clipping would "
                f"measure this rank's pieces only; clip before sharding or use "
                f"ClipGradByNorm/ClipGradByValue")
        groups = optimizer.get_param_groups()
        for g in groups:
            g["params"] = [self._adopt(p) for p in g["params"]]
        optimizer.set_param_groups(groups)

    @property
    def sharding_stage(self) -> int:
        """The ZeRO stage (1, 2 or 3; 0 without sharding).

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
                >>> lin = dist.shard_layer(fw.nn.Linear(2, 2), mesh)
                >>> dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()),
                ...                      dist.ShardingStage2(0)).sharding_stage
                2
        """
        return 0 if self._stage is None else self._stage._level

    def _adopt(self, p):
        from fw.distributed.auto_parallel._reshard import reshard_local
        from fw.nn import Parameter

        if not isinstance(p, DistTensor):
            return p
        self._sources.append(p)
        if self._stage is None:
            return p._local
        mesh = p.process_mesh
        axis = _axis_of(self._stage, mesh)
        d = _pick_dim(p, axis)
        if d is None:
            return p._local
        local = p._local
        if self._stage._level == 3:
            pl = p.placements
            pl[axis] = Shard(d)
            block = reshard_local(local.detach(), p.shape, p.placements, pl, mesh).numpy()
            new = Parameter._wrap(np.ascontiguousarray(block).copy(), name=local.name,
                                  trainable=not local._sg)
            for k in ("optimize_attr", "regularizer", "need_clip", "do_model_average"):
                if k in local.__dict__:
                    new.__dict__[k] = local.__dict__[k]
            p.__dict__["_local"] = new
            p.__dict__["_placements"] = tuple(pl)
            return new
        coord = _comm.my_coord(mesh)
        sizes = balanced(local.shape[d], mesh.shape[axis])
        c = coord[axis]
        sl = [slice(None)] * local.ndim
        sl[d] = slice(sum(sizes[:c]), sum(sizes[:c]) + sizes[c])
        shard = _shard_param(local, local.name, tuple(sl), not local._sg)
        self._pieces.append(_Piece(p, shard, d, sizes, c, _comm.axis_group(mesh, axis)))
        return shard

    # ------------------------------------------------------------ the step
    def _sync_grads(self):
        """Give every piece its slice of the parameter's (already summed) gradient."""
        if self._synced:
            return
        for pc in self._pieces:
            g = pc.param._local.grad
            if g is None:
                pc.shard.grad = None
                continue
            a = g.numpy()
            start = sum(pc.sizes[:pc.coord])
            sl = [slice(None)] * a.ndim
            sl[pc.dim] = slice(start, start + pc.sizes[pc.coord])
            pc.shard.grad = to_tensor(np.ascontiguousarray(a[tuple(sl)]))
            if self._stage._level == 2:
                pc.param._local.clear_grad(False)      # keep only the piece (ZeRO-2)
        if self._acc > 1:      # Paddle's dygraph meaning: the step sees the mean gradient
            self._inner._unscale_grads(1.0 / self._acc)
        self._synced = True

    def _unscale_grads(self, inv_scale) -> bool:
        self._sync_grads()
        return self._inner._unscale_grads(inv_scale)

    def step(self):
        """Update this rank's pieces, then all-gather them into the parameters
        (stages 1 and 2; stage 3 keeps the pieces).

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
                >>> lin = dist.shard_layer(fw.nn.Linear(2, 1), mesh)
                >>> opt = dist.shard_optimizer(
                ...     fw.optimizer.SGD(learning_rate=1.0, parameters=lin.parameters()),
                ...     dist.ShardingStage1("dp"))
                >>> before = lin.bias.numpy().copy()
                >>> lin(fw.ones([1, 2])).sum().backward(); opt.step()
                >>> float(before[0] - lin.bias.numpy()[0])
                1.0
        """
        self._sync_grads()
        self._inner.step()
        for pc in self._pieces:
            piece = pc.shard.numpy()
            whole = piece if pc.group is None else _comm._gather_np(piece, pc.dim, pc.sizes,
                                                                    pc.group)
            pc.param._local.set_value(whole)
        self._synced = False

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """`step` after ``loss.backward()`` (as the inner optimizer's ``minimize``).

        Args:
            loss (Tensor): the loss (its backward must have run).
            startup_program: unused (static graph).
            parameters: must be None (the pieces are fixed).
            no_grad_set: unused.

        Returns:
            tuple: (None, None).

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
                >>> lin = dist.shard_layer(fw.nn.Linear(2, 1), mesh)
                >>> opt = dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()),
                ...                            dist.ShardingStage1("dp"))
                >>> loss = lin(fw.ones([1, 2])).sum(); loss.backward()
                >>> opt.minimize(loss)
                (None, None)
        """
        if parameters is not None:
            raise NotImplementedError("ShardedOptimizer.minimize: parameters= is not supported "
                                      "(the optimizer steps the pieces it was built with)")
        self.step()
        return None, None

    def clear_grad(self, set_to_zero=True):
        """Clear the gradients of the parameters and of their pieces.

        Args:
            set_to_zero (bool, optional): zero them instead of dropping them. Default True.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
                >>> lin = dist.shard_layer(fw.nn.Linear(2, 1), mesh)
                >>> opt = dist.shard_optimizer(fw.optimizer.SGD(parameters=lin.parameters()),
                ...                            dist.ShardingStage1("dp"))
                >>> lin(fw.ones([1, 2])).sum().backward(); opt.clear_grad(False)
                >>> lin.weight.grad is None
                True
        """
        self._inner.clear_grad(set_to_zero)
        for p in self._sources:
            if p._local.grad is not None:
                p._local.clear_grad(set_to_zero)
        self._synced = False

    clear_gradients = clear_grad

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_inner", "_stage", "_pieces", "_sources"):
            raise AttributeError(name)
        return getattr(self._inner, name)


def apply_sharding_stage(optimizer, shard_fn, gradient_accumulation_steps=1):
    """`shard_optimizer`'s path for a shard_fn (or gradient accumulation): a
    `ShardedOptimizer`."""
    k = gradient_accumulation_steps
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"shard_optimizer: gradient_accumulation_steps must be a positive "
                         f"int, got {k!r}")
    if shard_fn is None or isinstance(shard_fn, _ShardingStageBase):
        if not callable(getattr(optimizer, "set_param_groups", None)):
            raise TypeError(f"shard_optimizer: expected an fw.optimizer.Optimizer, got "
                            f"{type(optimizer).__name__}")
        return ShardedOptimizer(optimizer, shard_fn, k)
    raise NotImplementedError(
        f"shard_optimizer: shard_fn {shard_fn!r} is not a ShardingStage1/2/3; fw keeps "
        f"optimizer states as plain per-rank blocks, so a custom per-accumulator shard_fn "
        f"cannot be honoured")
