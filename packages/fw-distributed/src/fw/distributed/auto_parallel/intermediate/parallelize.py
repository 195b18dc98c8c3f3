"""Paddle 3.x's ``parallelize``: a single-card model and optimizer made distributed
by a config — tensor-parallel plans by layer-name pattern (``mp_config``),
context-parallel plans (``cp_config``), ZeRO over the "dp" axis (``dp_config``) and
pipeline stages (``pp_config``) — as `shard_tensor` / `shard_layer` /
`shard_optimizer` calls on fw's eager auto-parallel."""

from __future__ import annotations

import re
import warnings

from fw.distributed.auto_parallel.dist_tensor import DistTensor
from fw.distributed.auto_parallel.intermediate.global_mesh import get_mesh, set_mesh
from fw.distributed.auto_parallel.intermediate.pipeline_parallel import check_pp_config
from fw.distributed.auto_parallel.intermediate.sharding import (
    ShardingStage1,
    ShardingStage2,
    ShardingStage3,
)
from fw.distributed.auto_parallel.intermediate.tensor_parallel import PlanBase
from fw.distributed.auto_parallel.placement import Replicate
from fw.distributed.auto_parallel.process_mesh import ProcessMesh

__all__ = ["parallelize"]

_KEYS = ("dp_config", "mp_config", "pp_config", "cp_config")
_STAGES = {"1": ShardingStage1, "2": ShardingStage2, "3": ShardingStage3}


def _plans_of(cfg, what):
    if not isinstance(cfg, dict):
        raise TypeError(f"parallelize: {what} must be a dict with 'parallelize_plan', got "
                        f"{type(cfg).__name__}")
    plan = cfg.get("parallelize_plan")
    if plan is None:
        warnings.warn(f"parallelize: {what} has no 'parallelize_plan'; nothing to apply",
                      stacklevel=3)
        return {}
    if not isinstance(plan, dict):
        raise TypeError(f"parallelize: {what}['parallelize_plan'] must be a dict "
                        f"{{layer name pattern: plan or [plans]}}, got {type(plan).__name__}")
    out = {}
    for key, p in plan.items():
        if not isinstance(key, str):
            raise TypeError(f"parallelize: plan keys must be layer-name patterns (str), got "
                            f"{key!r}")
        ps = list(p) if isinstance(p, (list, tuple)) else [p]
        for q in ps:
            if not isinstance(q, PlanBase):
                raise TypeError(f"parallelize: the plan for {key!r} must be a plan "
                                f"(ColWiseParallel, RowWiseParallel, ...) or a list of them, "
                                f"got {type(q).__name__}")
        out[key] = ps
    return out


def _match(layer, name, key):
    """Paddle's matching: ``key`` (a regex over sublayer names) names the layer, or
    ``<layer pattern>.<param>`` names one of its tensors."""
    params = []
    attr = key.rsplit(".", 1)[-1]
    if "." in key and hasattr(layer, attr) and hasattr(getattr(layer, attr), "shape"):
        key = key[: -len(attr) - 1]
        params = [attr]
    return (re.fullmatch(key, name) is not None), params


def _apply_plans(model, mesh, plans):
    used = set()
    for name, layer in model.named_sublayers():
        for key, ps in plans.items():
            hit, params = _match(layer, name, key)
            if hit:
                used.add(key)
                for p in ps:
                    p.apply(layer, mesh, params)
    unused = [k for k in plans if k not in used]
    if unused:
        warnings.warn(f"parallelize: plan keys {unused} matched no sublayer", stacklevel=3)


def _distribute_rest(model, mesh, before):
    """Every parameter still dense becomes Replicate; a parameter registered in
    several layers (tied weights) stays one object in all of them."""
    from fw.distributed.auto_parallel.api import shard_tensor

    made = {}
    for sub, pname, orig in before:
        cur = sub._parameters.get(pname)
        if isinstance(cur, DistTensor):
            made.setdefault(id(orig), cur)
    rep = [Replicate()] * mesh.ndim
    for sub, pname, orig in before:
        cur = sub._parameters.get(pname)
        if isinstance(cur, DistTensor) and made.get(id(orig)) is cur:
            continue
        if id(orig) not in made:
            made[id(orig)] = shard_tensor(orig, mesh, rep)
        setattr(sub, pname, made[id(orig)])
    return made


def parallelize(model, optimizer=None, mesh=None, config=None):
    """Make a single-card `model` (and its `optimizer`) distributed on `mesh` as
    `config` says.

    ``config`` keys (each optional):

    - ``"mp_config"``: ``{"parallelize_plan": {pattern: plan | [plans]}}`` — tensor
      parallelism on the mesh's "mp" axis. A pattern is a regular expression that
      must match a whole sublayer name (``"llama.layers.*.mlp.up_proj"``), or such a
      pattern plus ``.weight``/``.bias`` to plan one parameter. Plans:
      `ColWiseParallel`, `RowWiseParallel`, `SequenceParallelBegin`/`End`/`Enable`/
      `Disable`, `PrepareLayerInput`, `PrepareLayerOutput`.
    - ``"cp_config"``: ``{"parallelize_plan": {...}}`` with `PrepareContextParallel` /
      `ContextParallel` on the "sep" axis.
    - ``"dp_config"``: ``{"sharding_level": 0|1|2|3, "sharding_mesh_dim": "dp"}`` — the
      optimizer wrapped by `shard_optimizer` with `ShardingStage1/2/3` (0: none).
    - ``"pp_config"``: ``{"split_spec": prefix | {pattern: SplitPoint}}`` — checked;
      a "pp" axis of more than one stage raises (eager stages would need sub-meshes).

    Parameters no plan touched are replicated. Inputs are not touched: shard the
    batch on "dp" yourself (`shard_tensor`, `shard_dataloader`).

    Args:
        model (Layer): the model (changed in place and returned).
        optimizer (Optimizer, optional): built over ``model.parameters()``.
        mesh (ProcessMesh, optional): the mesh; None uses `get_mesh()` (a mesh given
            here becomes the global mesh, as in Paddle).
        config (dict, optional): as above; None changes nothing (with a warning).

    Returns:
        tuple: ``(model, optimizer)``, distributed.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0]], dim_names=["dp", "mp"])
            >>> model = fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 4))
            >>> opt = fw.optimizer.AdamW(parameters=model.parameters())
            >>> config = {"mp_config": {"parallelize_plan": {"0": dist.ColWiseParallel(),
            ...                                              "2": dist.RowWiseParallel()}},
            ...           "dp_config": {"sharding_level": 1}}
            >>> model, opt = dist.parallelize(model, opt, mesh, config)
            >>> model[0].weight.placements, model[2].weight.placements
            ([Replicate(), Shard(dim=1)], [Replicate(), Shard(dim=0)])
            >>> model(fw.ones([2, 8])).sum().backward(); opt.step(); opt.clear_grad()
            >>> dist.set_mesh(None)
    """
    from fw.nn import Layer

    if config is None:
        warnings.warn("parallelize: config is None, the model and optimizer are returned "
                      "unchanged", stacklevel=2)
        return model, optimizer
    if not isinstance(model, Layer):
        raise TypeError(f"parallelize: model must be a fw.nn.Layer, got {type(model).__name__}")
    if not isinstance(config, dict):
        raise TypeError(f"parallelize: config must be a dict, got {type(config).__name__}")
    bad = [k for k in config if k not in _KEYS]
    if bad:
        raise ValueError(f"parallelize: unknown config keys {bad}; expected some of {_KEYS}")
    if optimizer is not None and not callable(getattr(optimizer, "set_param_groups", None)):
        raise TypeError(f"parallelize: optimizer must be a fw.optimizer.Optimizer, got "
                        f"{type(optimizer).__name__}")
    if mesh is not None:
        if not isinstance(mesh, ProcessMesh):
            raise TypeError(f"parallelize: mesh must be a ProcessMesh, got "
                            f"{type(mesh).__name__}")
        old = get_mesh()
        if old is not None and old != mesh:
            warnings.warn("parallelize: the mesh passed differs from the one set by set_mesh; "
                          "it replaces it", stacklevel=2)
        set_mesh(mesh)
    mesh = get_mesh()
    if mesh is None:
        raise ValueError("parallelize: no mesh; pass mesh= or call "
                         "fw.distributed.set_mesh(mesh) first")

    if config.get("pp_config") is not None:
        check_pp_config(model, mesh, config["pp_config"])
    plans = {}
    if config.get("mp_config") is not None:
        plans.update(_plans_of(config["mp_config"], "mp_config"))
    if config.get("cp_config") is not None:
        plans.update(_plans_of(config["cp_config"], "cp_config"))
    stage = None
    dp = config.get("dp_config")
    if dp is not None:
        if not isinstance(dp, dict):
            raise TypeError(f"parallelize: dp_config must be a dict, got {type(dp).__name__}")
        level = dp.get("sharding_level")
        if level is None:
            warnings.warn("parallelize: dp_config has no sharding_level; plain data "
                          "parallelism", stacklevel=2)
        level = "0" if level is None else str(level)
        if level not in ("0", "1", "2", "3"):
            raise ValueError(f"parallelize: dp_config['sharding_level'] must be 0, 1, 2 or 3, "
                             f"got {dp.get('sharding_level')!r}")
        axis = dp.get("sharding_mesh_dim", "dp")
        if axis not in mesh.dim_names:
            raise ValueError(f"parallelize: dp_config shards over {axis!r}, which is not an "
                             f"axis of the mesh {mesh.dim_names}")
        if level != "0":
            stage = _STAGES[level](axis, mesh)

    before = [(sub, pname, p) for sub in model.sublayers(include_self=True)
              for pname, p in sub._parameters.items() if p is not None]
    _apply_plans(model, mesh, plans)
    made = _distribute_rest(model, mesh, before)

    if optimizer is not None:
        from fw.distributed.auto_parallel.api import shard_optimizer

        groups = optimizer.get_param_groups()
        for g in groups:
            g["params"] = [made.get(id(p), p) for p in g["params"]]
        optimizer.set_param_groups(groups)
        optimizer = shard_optimizer(optimizer, stage)
    return model, optimizer
