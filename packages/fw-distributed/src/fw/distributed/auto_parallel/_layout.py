"""Which part of the global tensor a rank holds: balanced splits along mesh axes.

A dimension of size N split over n ranks gives the first ``N % n`` ranks one
element more (Paddle's ``BalancedSplit`` in its reshard functions, also NumPy's
``array_split``). A dimension sharded on several mesh axes is split in mesh-axis
order: the piece of axis 0 is split again over axis 1 (Paddle's nested order)."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Partial, Shard

__all__ = ["balanced", "local_box", "local_shape", "check_placements"]


def balanced(total: int, parts: int) -> list:
    q, r = divmod(int(total), int(parts))
    return [q + 1 if i < r else q for i in range(parts)]


def local_box(shape, placements, mesh, coord) -> list:
    """[(start, size)] per tensor dim of the block the rank at mesh `coord` holds."""
    box = [(0, int(s)) for s in shape]
    for a, p in enumerate(placements):
        if isinstance(p, Shard):
            start, size = box[p.dim]
            sizes = balanced(size, mesh.shape[a])
            c = coord[a]
            box[p.dim] = (start + sum(sizes[:c]), sizes[c])
    return box


def local_shape(shape, placements, mesh, coord) -> list:
    return [s for _, s in local_box(shape, placements, mesh, coord)]


def check_placements(fn, placements, mesh, ndim):
    """A list of one placement per mesh axis; Shard dims normalised into [0, ndim)."""
    from fw.distributed.auto_parallel.placement import Placement, Replicate

    if not isinstance(placements, (list, tuple)):
        raise TypeError(f"{fn}: placements must be a list of Shard/Replicate/Partial, got "
                        f"{type(placements).__name__}")
    if len(placements) != mesh.ndim:
        raise ValueError(f"{fn}: placements has {len(placements)} entries but the mesh has "
                         f"{mesh.ndim} axes {mesh.dim_names} (one placement per mesh axis)")
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"{fn}: placements must hold Shard/Replicate/Partial, got {p!r}")
        if isinstance(p, Shard):
            if not -ndim <= p.dim < max(ndim, 1) or ndim == 0:
                raise ValueError(f"{fn}: {p} is out of range for a {ndim}-d tensor")
            p = Shard(p.dim % ndim)
        out.append(p if isinstance(p, (Shard, Partial)) else Replicate())
    return out
