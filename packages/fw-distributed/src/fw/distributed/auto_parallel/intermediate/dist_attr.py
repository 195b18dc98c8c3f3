"""Paddle 3.x's ``DistAttr``: a mesh plus one sharding spec (a mesh axis name or None)
per tensor dim — the older spelling of a placement list."""

from __future__ import annotations

from fw.distributed.auto_parallel.placement import Replicate, Shard
from fw.distributed.auto_parallel.process_mesh import ProcessMesh

__all__ = ["DistAttr"]


class DistAttr:
    """How a tensor is laid out on a mesh, by tensor dim: ``sharding_specs[i]`` names
    the mesh axis that splits tensor dim i (None: not split).

    Args:
        mesh (ProcessMesh): the mesh.
        sharding_specs (list[str|None]): one entry per tensor dim.

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[2, 4, 5], [0, 1, 3]], dim_names=["x", "y"])
            >>> attr = dist.DistAttr(mesh=mesh, sharding_specs=["x", "y"])
            >>> attr.dims_mapping, attr.placements
            ([0, 1], [Shard(dim=0), Shard(dim=1)])
    """

    def __init__(self, mesh, sharding_specs):
        if not isinstance(mesh, ProcessMesh):
            raise ValueError(f"DistAttr: mesh must be a fw.distributed.ProcessMesh, got "
                             f"{type(mesh).__name__}")
        if not isinstance(sharding_specs, list):
            raise ValueError(f"DistAttr: sharding_specs must be a list, got "
                             f"{type(sharding_specs).__name__}")
        dims = []
        for s in sharding_specs:
            if s is None:
                dims.append(-1)
                continue
            if not isinstance(s, str):
                raise ValueError(f"DistAttr: sharding_specs entries must be mesh axis names "
                                 f"or None, got {s!r}")
            if s not in mesh.dim_names:
                raise ValueError(f"DistAttr: {s!r} is not an axis of the mesh "
                                 f"{mesh.dim_names}")
            dims.append(mesh.dim_names.index(s))
        used = [d for d in dims if d >= 0]
        if len(used) != len(set(used)):
            raise ValueError(f"DistAttr: sharding_specs {sharding_specs} names a mesh axis "
                             f"twice")
        self.process_mesh = mesh
        self.dims_mapping = dims
        self._sharding_specs = list(sharding_specs)

    @property
    def sharding_specs(self) -> list:
        """The sharding spec of each tensor dim (mesh axis name or None).

        Examples:
            .. code-block:: python

                >>> import fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
                >>> dist.DistAttr(mesh, [None, "x"]).sharding_specs
                [None, 'x']
        """
        return list(self._sharding_specs)

    @property
    def placements(self) -> list:
        """The same layout as one placement per mesh axis.

        Examples:
            .. code-block:: python

                >>> import fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
                >>> dist.DistAttr(mesh, [None, "x"]).placements
                [Shard(dim=1)]
        """
        pl = [Replicate() for _ in range(self.process_mesh.ndim)]
        for d, a in enumerate(self.dims_mapping):
            if a >= 0:
                pl[a] = Shard(d)
        return pl

    def __repr__(self):
        return (f"DistAttr(process_mesh={self.process_mesh}, "
                f"sharding_specs={self._sharding_specs})")
