"""Communication along one mesh axis, on local arrays, as differentiable PyLayers.

Each op's backward is its conjugate (all-gather ↔ slice, all-reduce ↔ identity,
reduce-scatter ↔ all-gather, all-to-all ↔ the reverse all-to-all), so gradients
keep the eager-SPMD invariant (README, "Auto-parallel"): the local gradient of a
Shard tensor is its block of the gradient, of a Replicate or Partial(sum) tensor
the whole gradient. Uneven blocks travel padded to the largest block.

Groups: one communicator per slice of the mesh along an axis (the ranks that
differ only in that coordinate), made on first use by every rank for every
slice in the same order (so group ids agree) and cached."""

from __future__ import annotations

import numpy as np

from fw.autograd import PyLayer
from fw.core.tensor import wrap
from fw.distributed import _fleet_comm as comm
from fw.distributed import communication as _c

__all__ = ["axis_group", "my_coord", "gather", "slice_block", "all_reduce", "reduce_scatter",
           "all_to_all", "to_partial", "grad_all_reduce"]

_GROUPS: dict = {}


def my_coord(mesh) -> list:
    rank = comm.world_rank()
    got = mesh.__dict__.get("_coord_of")
    if got is not None and got[0] == rank:
        return got[1]
    if not mesh.contains(rank):
        raise NotImplementedError(
            f"auto_parallel: rank {rank} is not in {mesh}; distributed tensors on a mesh that "
            f"leaves out ranks are not supported yet (every rank must be in the mesh)")
    coord = mesh.coordinate(rank)
    mesh.__dict__["_coord_of"] = (rank, coord)
    return coord


def axis_group(mesh, axis):
    """This rank's group along mesh `axis` (None when the axis has one rank)."""
    n = mesh.shape[axis]
    if n == 1:
        return None
    key = (tuple(mesh.shape), tuple(mesh.process_ids), axis)
    g = _GROUPS.get(key)
    if g is None:
        me = comm.world_rank()
        arr = np.moveaxis(mesh.mesh, axis, -1).reshape(-1, n)
        for ranks in arr.tolist():    # every slice, the same order on every rank
            grp = comm.new_group(ranks)
            if me in ranks:
                g = grp
        _GROUPS[key] = g
    return g


# ------------------------------------------------------------ numpy collectives
def _pad(a, d, size):
    if a.shape[d] == size:
        return np.ascontiguousarray(a)
    w = [(0, 0)] * a.ndim
    w[d] = (0, size - a.shape[d])
    return np.pad(a, w)


def _gather_np(a, d, sizes, g):
    m = max(sizes)
    parts = comm.all_gather(_pad(a, d, m), group=g)
    return np.concatenate([np.take(p, range(s), axis=d) for p, s in zip(parts, sizes)], axis=d)


def _slice_np(a, d, sizes, c):
    start = sum(sizes[:c])
    idx = [slice(None)] * a.ndim
    idx[d] = slice(start, start + sizes[c])
    return np.ascontiguousarray(a[tuple(idx)])


_RED = {0: "sum", 1: "max", 2: "min", 3: "prod", 4: "sum"}


def _allreduce_np(a, g, reduce_type=0):
    if int(reduce_type) not in _RED:
        raise NotImplementedError(f"reshard: Partial with reduce type {reduce_type!r} is not "
                                  f"supported (sum, max, min, prod, avg are)")
    out = np.array(a, order="C", copy=True)   # (ascontiguousarray would make 0-d 1-d)
    comm.all_reduce(out, op=_RED[int(reduce_type)], group=g)
    if int(reduce_type) == 4:
        out = (out / g.nranks).astype(a.dtype, copy=False)
    return out


def _reduce_scatter_np(a, d, sizes, c, g):
    m = max(sizes)
    x = np.moveaxis(a, d, 0)
    blocks = np.stack([_pad(x[sum(sizes[:k]):sum(sizes[:k + 1])], 0, m)
                       for k in range(len(sizes))])
    out = np.empty(blocks.shape[1:], a.dtype)
    comm.reduce_scatter(out, np.ascontiguousarray(blocks), group=g)
    return np.ascontiguousarray(np.moveaxis(out[:sizes[c]], 0, d))


def _alltoall_np(a, i, j, sizes_i, sizes_j, c, g):
    """`a`: block c of dim i, whole dim j -> whole dim i, block c of dim j."""
    mi, mj = max(sizes_i), max(sizes_j)
    ins = []
    for k in range(len(sizes_j)):
        blk = _slice_np(a, j, sizes_j, k)
        ins.append(wrap(_pad(_pad(blk, i, mi), j, mj)))
    outs = []
    _c.alltoall(outs, ins, group=g)
    parts = []
    for k, o in enumerate(outs):
        p = np.take(o._data, range(sizes_i[k]), axis=i)
        parts.append(np.take(p, range(sizes_j[c]), axis=j))
    return np.ascontiguousarray(np.concatenate(parts, axis=i))


# ------------------------------------------------------------ PyLayers
class _Gather(PyLayer):
    @staticmethod
    def forward(ctx, x, d, sizes, c, g):
        ctx.args = (d, sizes, c)
        return wrap(_gather_np(x._data, d, sizes, g))

    @staticmethod
    def backward(ctx, dy):
        d, sizes, c = ctx.args
        return wrap(_slice_np(dy._data, d, sizes, c))


class _Slice(PyLayer):
    @staticmethod
    def forward(ctx, x, d, sizes, c, g):
        ctx.args = (d, sizes, g)
        return wrap(_slice_np(x._data, d, sizes, c))

    @staticmethod
    def backward(ctx, dy):
        d, sizes, g = ctx.args
        return wrap(_gather_np(dy._data, d, sizes, g))


class _AllReduce(PyLayer):
    @staticmethod
    def forward(ctx, x, g, reduce_type):
        ctx.args = (g, int(reduce_type))
        return wrap(_allreduce_np(x._data, g, reduce_type))

    @staticmethod
    def backward(ctx, dy):
        g, rt = ctx.args
        if rt == 0:
            return wrap(dy._data.copy())
        if rt == 4:
            return wrap((dy._data / g.nranks).astype(dy._data.dtype, copy=False))
        raise NotImplementedError("reshard: the gradient through Partial(max/min/prod) -> "
                                  "Replicate is not implemented (only sum and avg)")


class _ReduceScatter(PyLayer):
    @staticmethod
    def forward(ctx, x, d, sizes, c, g):
        ctx.args = (d, sizes, g)
        return wrap(_reduce_scatter_np(x._data, d, sizes, c, g))

    @staticmethod
    def backward(ctx, dy):
        d, sizes, g = ctx.args
        return wrap(_gather_np(dy._data, d, sizes, g))


class _AllToAll(PyLayer):
    @staticmethod
    def forward(ctx, x, i, j, sizes_i, sizes_j, c, g):
        ctx.args = (i, j, sizes_i, sizes_j, c, g)
        return wrap(_alltoall_np(x._data, i, j, sizes_i, sizes_j, c, g))

    @staticmethod
    def backward(ctx, dy):
        i, j, sizes_i, sizes_j, c, g = ctx.args
        return wrap(_alltoall_np(dy._data, j, i, sizes_j, sizes_i, c, g))


class _ToPartial(PyLayer):
    # sum: coordinate 0 keeps the value, the others hold 0 (their sum is the value);
    # avg/max/min: every rank keeps it; prod: the others hold 1
    @staticmethod
    def forward(ctx, x, c, reduce_type):
        a = x._data
        ctx.rt = int(reduce_type)
        if c == 0 or ctx.rt in (1, 2, 4):
            return wrap(a.copy())
        if ctx.rt == 3:
            return wrap(np.ones_like(a))
        if ctx.rt == 0:
            return wrap(np.zeros_like(a))
        raise NotImplementedError(f"reshard: Replicate -> Partial with reduce type "
                                  f"{reduce_type!r} is not supported")

    @staticmethod
    def backward(ctx, dy):
        if ctx.rt != 0:
            raise NotImplementedError("reshard: the gradient through Replicate -> Partial is "
                                      "implemented for Partial(kRedSum) only")
        return wrap(dy._data.copy())


class _GradAllReduce(PyLayer):
    @staticmethod
    def forward(ctx, x, g):
        ctx.g = g
        return wrap(x._data.copy())

    @staticmethod
    def backward(ctx, dy):
        return wrap(_allreduce_np(dy._data, ctx.g))


def gather(x, d, sizes, c, g):
    return x if g is None else _Gather.apply(x, d, sizes, c, g)


def slice_block(x, d, sizes, c, g):
    return x if g is None else _Slice.apply(x, d, sizes, c, g)


def all_reduce(x, g, reduce_type=0):
    return x if g is None else _AllReduce.apply(x, g, int(reduce_type))


def reduce_scatter(x, d, sizes, c, g):
    return x if g is None else _ReduceScatter.apply(x, d, sizes, c, g)


def all_to_all(x, i, j, sizes_i, sizes_j, c, g):
    return x if g is None else _AllToAll.apply(x, i, j, sizes_i, sizes_j, c, g)


def to_partial(x, c, g, reduce_type=0):
    return x if g is None else _ToPartial.apply(x, c, int(reduce_type))


def grad_all_reduce(x, g):
    """Identity forward, sum of the gradient over `g` backward (a Replicate input of
    an op whose output differs along the axis)."""
    return x if g is None else _GradAllReduce.apply(x, g)


