"""Reshard a rank's local block from one placement list to another on one mesh.

Phases (each a differentiable op of `_comm`): (1) Partial axes are reduced —
reduce-scatter straight into the wanted Shard when that dim is sharded nowhere
else, else all-reduce; (2) a lone Shard(i) -> Shard(j) axis is one all-to-all;
every other dim whose sharding changes is all-gathered along all its axes (last
axis first, undoing the nested split); (3) Replicate -> Shard slices (axis
order); (4) Replicate -> Partial keeps the value on coordinate 0 of the axis."""

from __future__ import annotations

from fw.distributed.auto_parallel import _comm
from fw.distributed.auto_parallel._layout import balanced, local_box
from fw.distributed.auto_parallel.placement import Partial, Replicate, Shard

__all__ = ["reshard_local"]


def _level(gshape, cur, a, d, mesh, coord):
    """Size of dim `d` before mesh axis `a` splits it (axes < a applied)."""
    pl = [p if b < a else Replicate() for b, p in enumerate(cur)]
    return local_box(gshape, pl, mesh, coord)[d][1]


def _sharded_on(pl, d, skip=None):
    return [b for b, p in enumerate(pl) if b != skip and isinstance(p, Shard) and p.dim == d]


def reshard_local(x, gshape, src, dst, mesh):
    """`x` (this rank's local Tensor under `src`) as the local Tensor under `dst`."""
    if list(src) == list(dst):
        return x
    coord = _comm.my_coord(mesh)
    cur = list(src)
    dst = list(dst)
    n_axes = len(cur)
    # (1) Partial axes
    for a in range(n_axes):
        p, q = cur[a], dst[a]
        if not isinstance(p, Partial) or p == q:
            continue
        g = _comm.axis_group(mesh, a)
        if (isinstance(q, Shard) and int(p.reduce_type) == 0 and not _sharded_on(cur, q.dim)
                and not _sharded_on(dst, q.dim, skip=a)):
            sizes = balanced(gshape[q.dim], mesh.shape[a])
            x = _comm.reduce_scatter(x, q.dim, sizes, coord[a], g)
            cur[a] = q
        else:
            x = _comm.all_reduce(x, g, p.reduce_type)
            cur[a] = Replicate()
    # (2a) a lone Shard(i) -> Shard(j): all-to-all
    for a in range(n_axes):
        p, q = cur[a], dst[a]
        if (isinstance(p, Shard) and isinstance(q, Shard) and p.dim != q.dim
                and not _sharded_on(cur, p.dim, skip=a) and not _sharded_on(cur, q.dim, skip=a)
                and not _sharded_on(dst, p.dim, skip=a) and not _sharded_on(dst, q.dim, skip=a)):
            n = mesh.shape[a]
            x = _comm.all_to_all(x, p.dim, q.dim, balanced(gshape[p.dim], n),
                                 balanced(gshape[q.dim], n), coord[a], _comm.axis_group(mesh, a))
            cur[a] = q
    # (2b) every dim whose sharding changes is gathered along all its axes
    changed = set()
    for a in range(n_axes):
        if cur[a] != dst[a]:
            for p in (cur[a], dst[a]):
                if isinstance(p, Shard):
                    changed.add(p.dim)
    for d in sorted(changed):
        for a in reversed(_sharded_on(cur, d)):
            sizes = balanced(_level(gshape, cur, a, d, mesh, coord), mesh.shape[a])
            x = _comm.gather(x, d, sizes, coord[a], _comm.axis_group(mesh, a))
            cur[a] = Replicate()
    # (3) Replicate -> Shard, in axis order
    for a in range(n_axes):
        q = dst[a]
        if isinstance(q, Shard) and cur[a] != q:
            sizes = balanced(_level(gshape, cur, a, q.dim, mesh, coord), mesh.shape[a])
            x = _comm.slice_block(x, q.dim, sizes, coord[a], _comm.axis_group(mesh, a))
            cur[a] = q
    # (4) Replicate -> Partial
    for a in range(n_axes):
        q = dst[a]
        if isinstance(q, Partial) and cur[a] != q:
            x = _comm.to_partial(x, coord[a], _comm.axis_group(mesh, a), q.reduce_type)
            cur[a] = q
    return x
