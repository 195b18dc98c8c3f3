"""`ProcessMesh`: an n-d array of global ranks with a name per axis (Paddle 3.x's
``paddle.distributed.ProcessMesh``)."""

from __future__ import annotations

import numpy as np

__all__ = ["ProcessMesh"]


class ProcessMesh:
    """A logical n-d arrangement of processes; each axis has a name.

    Args:
        mesh (list|numpy.ndarray): nested lists (or an array) of distinct global
            ranks, e.g. ``[[0, 1], [2, 3]]``.
        dim_names (list[str], optional): one name per axis; ``d0, d1, …`` if None.

    Returns:
        ProcessMesh.

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.shape, mesh.process_ids
            ([2, 2], [0, 1, 2, 3])
            >>> mesh.get_mesh_with_dim("mp").process_ids
            [0, 2, 1, 3]
    """

    def __init__(self, mesh=None, dim_names=None, shape=None, process_ids=None):
        if mesh is None:
            if shape is None or process_ids is None:
                raise ValueError("ProcessMesh: give mesh, or both shape and process_ids")
            mesh = np.asarray(process_ids).reshape(shape)
        arr = np.asarray(mesh)
        if arr.size == 0 or arr.dtype.kind not in "iu":
            raise ValueError(f"ProcessMesh: mesh must be a non-empty nested list of integer "
                             f"ranks, got {mesh!r}")
        ids = arr.reshape(-1).tolist()
        if len(set(ids)) != len(ids) or min(ids) < 0:
            raise ValueError(f"ProcessMesh: mesh ranks must be distinct and >= 0, got {ids}")
        if dim_names is None:
            dim_names = [f"d{i}" for i in range(arr.ndim)]
        dim_names = list(dim_names)
        if len(dim_names) != arr.ndim or len(set(dim_names)) != len(dim_names):
            raise ValueError(f"ProcessMesh: dim_names must be {arr.ndim} distinct names (one per "
                             f"axis of a mesh of shape {list(arr.shape)}), got {dim_names}")
        self._mesh = arr.astype(np.int64)
        self._dim_names = dim_names

    # ------------------------------------------------------------ attributes
    @property
    def mesh(self) -> np.ndarray:
        """The ranks as an int64 array of the mesh's shape.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.mesh.tolist()
            [[0, 1], [2, 3]]
        """
        return self._mesh

    @property
    def shape(self) -> list:
        """The size of every mesh axis.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.shape
            [2, 2]
        """
        return list(self._mesh.shape)

    @property
    def ndim(self) -> int:
        """The number of mesh axes.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.ndim
            2
        """
        return self._mesh.ndim

    @property
    def process_ids(self) -> list:
        """The ranks in row-major order.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.process_ids
            [0, 1, 2, 3]
        """
        return self._mesh.reshape(-1).tolist()

    @property
    def dim_names(self) -> list:
        """The axis names (``d0``, ``d1``, ... unless given).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.dim_names
            ['dp', 'mp']
        """
        return list(self._dim_names)

    def get_dim_size(self, dim) -> int:
        """The size of one mesh axis.

        Args:
            dim (str|int): the axis, by name or index.

        Returns:
            int: its size.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.get_dim_size("mp"), mesh.get_dim_size(0)
            (2, 2)
        """
        return self._mesh.shape[self._axis(dim)]

    def _axis(self, dim) -> int:
        if isinstance(dim, str):
            if dim not in self._dim_names:
                raise ValueError(f"ProcessMesh: no axis named {dim!r} (axes: {self._dim_names})")
            return self._dim_names.index(dim)
        if not -self.ndim <= dim < self.ndim:
            raise ValueError(f"ProcessMesh: axis {dim} out of range for a {self.ndim}-d mesh")
        return dim % self.ndim

    def get_mesh_with_dim(self, dim_name, index=None) -> ProcessMesh:
        """The mesh with axis `dim_name` moved first (or, with `index`, its slice).

        Args:
            dim_name (str|int): the axis.
            index (int, optional): take this slice along it. Default: None.

        Returns:
            ProcessMesh: the reordered mesh, or the slice.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.get_mesh_with_dim("mp").process_ids
            [0, 2, 1, 3]
            >>> mesh.get_mesh_with_dim("mp", 1).process_ids
            [1, 3]
        """
        a = self._axis(dim_name)
        order = [a] + [i for i in range(self.ndim) if i != a]
        arr = self._mesh.transpose(order)
        names = [self._dim_names[i] for i in order]
        if index is not None:
            return ProcessMesh(arr[index], names[1:] if arr[index].ndim else None)
        return ProcessMesh(arr, names)

    def __getitem__(self, index):
        sub = self._mesh[index]
        if np.ndim(sub) == 0:
            return ProcessMesh(np.reshape(sub, [1]), ["d0"])
        idx = index if isinstance(index, tuple) else (index,)
        kept = [n for i, n in enumerate(self._dim_names)
                if i >= len(idx) or isinstance(idx[i], slice)]
        return ProcessMesh(sub, kept)

    def contains(self, rank) -> bool:
        """Whether `rank` is in the mesh.

        Args:
            rank (int): a global rank.

        Returns:
            bool: membership.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.contains(3), mesh.contains(7)
            (True, False)
        """
        return int(rank) in self.process_ids

    def coordinate(self, rank) -> list:
        """`rank`'s index along every axis (ValueError when it is not in the mesh).

        Args:
            rank (int): a global rank in the mesh.

        Returns:
            list[int]: one index per axis.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
            >>> mesh.coordinate(2)
            [1, 0]
        """
        where = np.argwhere(self._mesh == int(rank))
        if not len(where):
            raise ValueError(f"ProcessMesh: rank {rank} is not in {self}")
        return [int(i) for i in where[0]]

    def __eq__(self, other):
        return (isinstance(other, ProcessMesh) and other._dim_names == self._dim_names
                and np.array_equal(other._mesh, self._mesh))

    def __hash__(self):
        return hash((tuple(self.shape), tuple(self.process_ids), tuple(self._dim_names)))

    def __repr__(self):
        return (f"ProcessMesh(shape={self.shape}, process_ids={self.process_ids}, "
                f"dim_names={self._dim_names})")

    __str__ = __repr__
