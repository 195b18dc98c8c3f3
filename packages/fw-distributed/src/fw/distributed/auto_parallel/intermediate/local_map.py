"""Paddle 3.x's ``local_map`` and ``LocalLayer``: run code written for plain
tensors on the local blocks of distributed tensors, and wrap its results as
distributed tensors with given placements.

Gradients keep eager SPMD's invariant (README, "Auto-parallel (eager)": the local
gradient of a Replicate tensor is the whole gradient). A block that is whole
(Replicate) along a mesh axis, fed to a function whose declared outputs differ along
that axis (Shard or Partial), contributes only this rank's share of the gradient, so
it passes through an identity whose backward sums the gradient over that axis —
the same "f" operator eager SPMD inserts. Paddle leaves this to the user's choice of
placements; fw makes the gradient right by construction."""

from __future__ import annotations

import functools

import numpy as np

from fw.core.tensor import Tensor
from fw.distributed import _fleet_comm as fcomm
from fw.distributed.auto_parallel import _comm
from fw.distributed.auto_parallel._layout import check_placements, local_shape
from fw.distributed.auto_parallel.dist_tensor import DistTensor, make_dist
from fw.distributed.auto_parallel.placement import Partial, Replicate, Shard
from fw.distributed.auto_parallel.process_mesh import ProcessMesh

__all__ = ["local_map", "LocalLayer", "dtensor_from_local"]


def _flatten(x, out):
    if isinstance(x, (list, tuple)):
        for e in x:
            _flatten(e, out)
    elif isinstance(x, dict):
        for k in sorted(x):
            _flatten(x[k], out)
    else:
        out.append(x)
    return out


def _pack(like, flat, pos=None):
    pos = [0] if pos is None else pos
    if isinstance(like, (list, tuple)):
        vals = [_pack(e, flat, pos) for e in like]
        return type(like)(vals) if not hasattr(like, "_fields") else type(like)(*vals)
    if isinstance(like, dict):
        return {k: _pack(like[k], flat, pos) for k in sorted(like)}
    v = flat[pos[0]]
    pos[0] += 1
    return v


def dtensor_from_local(local, mesh, placements, who="dtensor_from_local"):
    """A distributed tensor whose block on this rank is `local` (differentiable: the
    result's gradient flows to `local`). The global shape is found by exchanging the
    block sizes along every sharded mesh axis (a collective of the mesh's ranks); the
    blocks must form fw's balanced split.

    Args:
        local (Tensor): this rank's block (dense).
        mesh (ProcessMesh): the mesh.
        placements (list[Placement]): one per mesh axis.
        who (str, optional): the API name errors mention.

    Returns:
        Tensor: a distributed tensor.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> from fw.distributed.auto_parallel.intermediate.local_map import (
            ...     dtensor_from_local)
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dtensor_from_local(fw.ones([2, 3]), mesh, [dist.Shard(1)])
            >>> t.shape, t.placements
            ([2, 3], [Shard(dim=1)])
    """
    if not isinstance(local, Tensor) or isinstance(local, DistTensor):
        raise TypeError(f"{who}: expected a dense local Tensor, got {type(local).__name__}")
    pl = check_placements(who, placements, mesh, local.ndim)
    shape = list(local.shape)
    coord = _comm.my_coord(mesh)
    for a in reversed(range(mesh.ndim)):     # innermost split first (nested order)
        p = pl[a]
        if isinstance(p, Shard) and mesh.shape[a] > 1:
            g = _comm.axis_group(mesh, a)
            sizes = fcomm.all_gather(np.array([shape[p.dim]], dtype=np.int64), group=g)
            shape[p.dim] = int(sum(int(np.asarray(s).reshape(-1)[0]) for s in sizes))
    want = local_shape(shape, pl, mesh, coord)
    if want != list(local.shape):
        raise ValueError(f"{who}: this rank's block has shape {list(local.shape)} but the "
                         f"global shape {shape} split by {pl} gives it {want}; fw's blocks "
                         f"are balanced splits (the first ranks take the remainder)")
    return make_dist(local, mesh, pl, shape)


def _needs_grad_sum(in_pl, out_pls, axis):
    if not isinstance(in_pl[axis], Replicate):
        return False
    return any(o is not None and not isinstance(o[axis], Replicate) for o in out_pls)


def _to_local(t, mesh, out_pls):
    """`t`'s block, through a gradient all-reduce on each axis where `t` is whole
    and an output is not."""
    local = t._local
    pl = t.placements
    for a in range(mesh.ndim):
        if _needs_grad_sum(pl, out_pls, a):
            local = _comm.grad_all_reduce(local, _comm.axis_group(mesh, a))
    return local


def local_map(func, out_placements, in_placements=None, process_mesh=None,
              reshard_inputs=False):
    """Wrap `func` (written for plain tensors) to take distributed tensors: each
    distributed argument is replaced by its local block, `func` runs, and each tensor
    result becomes a distributed tensor whose block it is, with the placements of
    `out_placements`.

    Args:
        func (callable): the function of local blocks.
        out_placements (list[list[Placement]|None]): one entry per (flattened) result:
            its placements, or None for a non-tensor result.
        in_placements (list[list[Placement]|None], optional): one entry per
            (flattened) argument: the placements a distributed argument must have
            (None: as it is). Default None.
        process_mesh (ProcessMesh, optional): the mesh; default: that of the
            distributed arguments (needed when there are none).
        reshard_inputs (bool, optional): reshard arguments whose placements differ
            from `in_placements` instead of raising. Default False.

    Returns:
        callable: the wrapped function.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> x = dist.shard_tensor(fw.to_tensor([1.0, 2.0, 3.0]), mesh, [dist.Shard(0)])
            >>> local_sum = dist.local_map(lambda t: t.sum(), [[dist.Partial()]])
            >>> s = local_sum(x)
            >>> s.placements, float(s)
            ([Partial(reduce_type=ReduceType.kRedSum)], 6.0)
    """
    if not callable(func):
        raise TypeError(f"local_map: func must be callable, got {type(func).__name__}")
    if not isinstance(out_placements, (list, tuple)):
        raise TypeError(f"local_map: out_placements must be a list (one entry per result), "
                        f"got {type(out_placements).__name__}")
    if process_mesh is not None and not isinstance(process_mesh, ProcessMesh):
        raise TypeError(f"local_map: process_mesh must be a ProcessMesh, got "
                        f"{type(process_mesh).__name__}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        from fw.distributed.auto_parallel.api import reshard

        flat = _flatten(args, [])
        if in_placements is not None and len(in_placements) != len(flat):
            raise ValueError(f"local_map({getattr(func, '__name__', func)}): in_placements has "
                             f"{len(in_placements)} entries but the call has {len(flat)} "
                             f"arguments")
        mesh = process_mesh
        dist_seen = False
        local_args = []
        for i, arg in enumerate(flat):
            if not isinstance(arg, DistTensor):
                local_args.append(arg)
                continue
            dist_seen = True
            if mesh is None:
                mesh = arg.process_mesh
            elif arg.process_mesh != mesh:
                raise ValueError(f"local_map: argument {i} is on {arg.process_mesh}, not on "
                                 f"{mesh}; all distributed arguments must share one mesh")
            want = None if in_placements is None else in_placements[i]
            if want is not None:
                want = check_placements("local_map", want, mesh, arg.ndim)
                if want != arg.placements:
                    if not reshard_inputs:
                        raise ValueError(f"local_map: argument {i} has placements "
                                         f"{arg.placements}, in_placements wants {want}; pass "
                                         f"reshard_inputs=True to reshard it")
                    arg = reshard(arg, mesh, want)
            local_args.append(_to_local(arg, mesh, out_placements))
        out = func(*_pack(args, local_args), **kwargs)
        flat_out = _flatten(out, [])
        if len(flat_out) != len(out_placements):
            raise ValueError(f"local_map({getattr(func, '__name__', func)}): the function "
                             f"returned {len(flat_out)} values but out_placements has "
                             f"{len(out_placements)} entries (one per value; None for "
                             f"non-tensors)")
        res = []
        for j, (o, pl) in enumerate(zip(flat_out, out_placements)):
            if pl is None:
                if dist_seen and isinstance(o, Tensor):
                    raise ValueError(f"local_map: result {j} is a Tensor but its "
                                     f"out_placements entry is None")
                res.append(o)
                continue
            if not isinstance(o, Tensor):
                raise ValueError(f"local_map: result {j} is a {type(o).__name__}, not a "
                                 f"Tensor, but has placements {pl}")
            if isinstance(o, DistTensor):
                raise ValueError(f"local_map: result {j} is already distributed; the "
                                 f"function must return local (dense) tensors")
            if mesh is None:
                raise ValueError("local_map: no distributed argument and no process_mesh: "
                                 "pass process_mesh to place the results")
            res.append(dtensor_from_local(o, mesh, pl, "local_map"))
        return _pack(out, res)

    return wrapped


def _layer_base():
    from fw.nn import Layer

    return Layer


class LocalLayer(_layer_base()):
    """A `Layer` whose ``forward`` works on local blocks: distributed inputs are
    replaced by their blocks, and the outputs become distributed tensors with the
    given mesh and placements. For a loss computed per rank, a custom kernel, or
    code the SPMD rules do not cover.

    Args:
        out_dist_attrs (list[tuple[ProcessMesh, list[Placement]]]): per (flattened)
            output, its mesh and placements.
        grad_dist_attrs (list[tuple[ProcessMesh, list[Placement]]|None]): per input,
            the placements of its gradient (None: those of the input). A Replicate
            input whose gradient is declared Partial on an axis has its local
            gradient summed over that axis.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> class LocalSum(dist.LocalLayer):
            ...     def __init__(self):
            ...         super().__init__([(mesh, [dist.Partial()])], [None])
            ...     def forward(self, x):
            ...         return x.sum()
            >>> x = dist.shard_tensor(fw.to_tensor([1.0, 2.0]), mesh, [dist.Shard(0)])
            >>> float(LocalSum()(x))
            3.0
    """

    def __init__(self, out_dist_attrs, grad_dist_attrs):
        super().__init__()
        for what, v in (("out_dist_attrs", out_dist_attrs),
                        ("grad_dist_attrs", grad_dist_attrs)):
            if not isinstance(v, (list, tuple)):
                raise TypeError(f"LocalLayer: {what} must be a list, got {type(v).__name__}")
            for e in v:
                if e is None and what == "grad_dist_attrs":
                    continue
                if (not isinstance(e, (list, tuple)) or len(e) != 2
                        or not isinstance(e[0], ProcessMesh)):
                    raise TypeError(f"LocalLayer: each {what} entry must be (ProcessMesh, "
                                    f"placements), got {e!r}")
        self.out_dist_attrs = list(out_dist_attrs)
        self.grad_dist_attrs = list(grad_dist_attrs)

    def __call__(self, *inputs, **kwargs):
        if len(inputs) != len(self.grad_dist_attrs):
            raise ValueError(f"{type(self).__name__}: called with {len(inputs)} inputs but "
                             f"grad_dist_attrs has {len(self.grad_dist_attrs)} entries")
        local = []
        for i, (x, ga) in enumerate(zip(inputs, self.grad_dist_attrs)):
            if not isinstance(x, DistTensor):
                local.append(x)
                continue
            mesh = x.process_mesh
            gpl = x.placements if ga is None else check_placements(
                type(self).__name__, ga[1], ga[0], x.ndim)
            if ga is not None and ga[0] != mesh:
                raise NotImplementedError(f"{type(self).__name__}: input {i}'s gradient mesh "
                                          f"differs from its mesh {mesh}")
            t = x._local
            for a, (p, q) in enumerate(zip(x.placements, gpl)):
                if isinstance(p, Replicate) and isinstance(q, Partial):
                    t = _comm.grad_all_reduce(t, _comm.axis_group(mesh, a))
                elif type(p) is not type(q) or p != q:
                    raise NotImplementedError(
                        f"{type(self).__name__}: input {i} is {x.placements} and its gradient "
                        f"is declared {gpl}; fw supports a gradient equal to the input's "
                        f"placements or Partial where the input is Replicate")
            local.append(t)
        outs = super().__call__(*local, **kwargs)
        flat = _flatten(outs, [])
        if len(flat) != len(self.out_dist_attrs):
            raise ValueError(f"{type(self).__name__}: forward returned {len(flat)} values but "
                             f"out_dist_attrs has {len(self.out_dist_attrs)} entries")
        res = [dtensor_from_local(o, m, pl, type(self).__name__)
               for o, (m, pl) in zip(flat, self.out_dist_attrs)]
        return _pack(outs, res)
