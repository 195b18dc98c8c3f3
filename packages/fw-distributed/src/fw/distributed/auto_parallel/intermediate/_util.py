"""Helpers of the intermediate API: mesh-axis lookup, making an activation
distributed, and the split/concat reshards the sequence-parallel plans hook in."""

from __future__ import annotations

import warnings

from fw.core.tensor import Tensor
from fw.distributed.auto_parallel.dist_tensor import DistTensor
from fw.distributed.auto_parallel.placement import Replicate, Shard

__all__ = ["axis_index", "as_dist", "split_activation", "gather_activation", "first_tensor",
           "replace_first"]


def axis_index(mesh, name, who) -> int:
    """The index of mesh axis `name`, or a ValueError naming `who` and the axes."""
    if name not in mesh.dim_names:
        raise ValueError(f"{who}: the mesh has no {name!r} axis (its axes: {mesh.dim_names}); "
                         f"name the tensor-parallel axis 'mp' and the data-parallel axis 'dp'")
    return mesh.dim_names.index(name)


def as_dist(x, mesh, who):
    """`x` as a distributed tensor on `mesh` (a dense tensor counts as replicated)."""
    from fw.distributed.auto_parallel.api import shard_tensor

    if isinstance(x, DistTensor):
        if x.process_mesh != mesh:
            raise NotImplementedError(f"{who}: the tensor lives on {x.process_mesh}, the plan on "
                                      f"{mesh}; moving tensors between meshes is not supported")
        return x
    if not isinstance(x, Tensor):
        raise TypeError(f"{who}: expected a Tensor, got {type(x).__name__}")
    return shard_tensor(x, mesh, [Replicate()] * mesh.ndim)


def first_tensor(value, who):
    """The tensor a hook works on: `value` itself or the first element of a tuple/list."""
    t = value[0] if isinstance(value, (tuple, list)) else value
    if not isinstance(t, Tensor):
        raise TypeError(f"{who}: expected a Tensor (or a tuple whose first element is one), "
                        f"got {type(t).__name__}")
    return t


def replace_first(value, t):
    if isinstance(value, (tuple, list)):
        return type(value)([t, *value[1:]])
    return t


def split_activation(value, mesh, need_transpose, who, split_type="sp"):
    """Paddle's ``c_split`` of a [b, s, h] activation: optionally transposed to
    [s, b, h], then split over the "mp" axis along the sequence (``"sp"``: the dim
    the "dp" axis does not split; dim 0 when neither is sharded) or along the hidden
    dim (``"mp"``: the last dim)."""
    from fw import transpose
    from fw.distributed.auto_parallel.api import reshard

    t = as_dist(first_tensor(value, who), mesh, who)
    if t.ndim != 3 and split_type == "sp":
        raise ValueError(f"{who}: sequence parallelism needs a 3-D activation [b, s, h] or "
                         f"[s, b, h], got shape {t.shape}")
    mp = axis_index(mesh, "mp", who)
    if need_transpose:
        t = transpose(t, [1, 0, 2])
    pl = t.placements
    if split_type == "sp":
        dp_pl = pl[mesh.dim_names.index("dp")] if "dp" in mesh.dim_names else Replicate()
        if dp_pl == Shard(0):
            dim = 1
        elif dp_pl == Shard(1):
            dim = 0
        else:
            if "dp" in mesh.dim_names and mesh.get_dim_size("dp") > 1:
                warnings.warn(f"{who}: the activation {t.shape} is not split on 'dp', so the "
                              f"batch dim is unknown; splitting dim 0 over 'mp'", stacklevel=3)
            dim = 0
    else:
        dim = t.ndim - 1
    pl[mp] = Shard(dim)
    return replace_first(value, reshard(t, mesh, pl))


def gather_activation(value, mesh, need_transpose, who):
    """Paddle's ``c_concat``: the activation made whole on the "mp" axis, then
    optionally transposed back ([s, b, h] -> [b, s, h])."""
    from fw import transpose
    from fw.distributed.auto_parallel.api import reshard

    t = as_dist(first_tensor(value, who), mesh, who)
    mp = axis_index(mesh, "mp", who)
    pl = t.placements
    pl[mp] = Replicate()
    t = reshard(t, mesh, pl)
    if need_transpose:
        if t.ndim != 3:
            raise ValueError(f"{who}: need_transpose expects a 3-D activation, got {t.shape}")
        t = transpose(t, [1, 0, 2])
    return replace_first(value, t)
