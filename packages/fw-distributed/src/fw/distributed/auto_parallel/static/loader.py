"""`shard_dataloader` / `ShardDataloader` (Paddle 3.x names): batches of a
DataLoader as distributed tensors, split along the batch dim over one mesh axis.

Every rank iterates the whole loader and keeps its block (`shard_tensor` of each
batch element): simple and right for any loader (the same shuffling seed gives
the same batches everywhere), at the cost of each rank reading every sample.
With ``is_dataset_splitted=True`` the loader already yields this rank's part,
which becomes the rank's block as is."""

from __future__ import annotations

import numpy as np

from fw.core.tensor import Tensor, to_tensor
from fw.distributed.auto_parallel.placement import Replicate, Shard
from fw.distributed.auto_parallel.process_mesh import ProcessMesh

__all__ = ["ShardDataloader", "shard_dataloader"]

_FN = "shard_dataloader"


class ShardDataloader:
    """A DataLoader whose batches are distributed tensors (see `shard_dataloader`,
    which makes it).

    Args:
        dataloader (DataLoader): the loader of dense batches.
        meshes (ProcessMesh|list): the mesh (one; several pipeline meshes are not
            supported).
        input_keys (list[str], optional): the keys of dict batches. Default: None.
        shard_dims (str|int|list, optional): the mesh axis the batch axis is split
            over; None: replicated. Default: None.
        is_dataset_splitted (bool, optional): each rank's loader already yields only
            its part. Default: False.
        dense_tensor_idx (optional): not supported (must be None). Default: None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.io import DataLoader, TensorDataset
        >>> data = TensorDataset([fw.ones([4, 3]), fw.zeros([4, 1])])
        >>> loader = DataLoader(data, batch_size=2)
        >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
        >>> x, y = next(iter(dist.shard_dataloader(loader, mesh, shard_dims="x")))
        >>> type(x).__name__, x.shape
        ('DistTensor', [2, 3])
    """

    def __init__(self, dataloader, meshes, input_keys=None, shard_dims=None,
                 is_dataset_splitted=False, dense_tensor_idx=None):
        if isinstance(meshes, ProcessMesh):
            meshes = [meshes]
        meshes = list(meshes) if isinstance(meshes, (list, tuple)) else None
        if not meshes or not all(isinstance(m, ProcessMesh) for m in meshes):
            raise TypeError(f"{_FN}: meshes must be a ProcessMesh or a list of them")
        if len(meshes) > 1:
            raise NotImplementedError(f"{_FN}: several meshes (pipeline stages) are not "
                                      f"supported by dist.to_static yet; pass one mesh")
        if dense_tensor_idx:
            raise NotImplementedError(f"{_FN}: dense_tensor_idx is not supported yet")
        mesh = meshes[0]
        dims = shard_dims[0] if isinstance(shard_dims, (list, tuple)) else shard_dims
        if isinstance(dims, str):
            if dims not in mesh.dim_names:
                raise ValueError(f"{_FN}: shard_dims {dims!r} is not an axis of {mesh} "
                                 f"(axes {mesh.dim_names})")
            dims = mesh.dim_names.index(dims)
        elif dims is not None and not 0 <= int(dims) < mesh.ndim:
            raise ValueError(f"{_FN}: shard_dims {dims} is out of range for a "
                             f"{mesh.ndim}-axis mesh")
        self._loader = dataloader
        self._meshes = meshes
        self._mesh = mesh
        self._axis = None if dims is None else int(dims)
        self._keys = list(input_keys) if input_keys is not None else None
        self._splitted = bool(is_dataset_splitted)

    @property
    def dataloader(self):
        """The wrapped DataLoader.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> from fw.io import DataLoader, TensorDataset
            >>> data = TensorDataset([fw.ones([4, 3]), fw.zeros([4, 1])])
            >>> loader = DataLoader(data, batch_size=2)
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> sharded = dist.shard_dataloader(loader, mesh, shard_dims="x")
            >>> sharded.dataloader is loader
            True
        """
        return self._loader

    def __len__(self):
        return len(self._loader)

    def _placements(self, ndim):
        pl = [Replicate()] * self._mesh.ndim
        if self._axis is not None and ndim > 0:
            pl[self._axis] = Shard(0)
        return pl

    def _dist(self, x):
        from fw.distributed.auto_parallel.api import shard_tensor
        from fw.distributed.auto_parallel.dist_tensor import make_dist

        if not isinstance(x, Tensor):
            x = to_tensor(np.asarray(x))
        pl = self._placements(x.ndim)
        if self._splitted and self._axis is not None:
            n = self._mesh.shape[self._axis]
            gshape = [x.shape[0] * n] + list(x.shape[1:])
            return make_dist(x, self._mesh, pl, gshape)
        return shard_tensor(x, self._mesh, pl)

    def _convert(self, batch):
        if isinstance(batch, dict):
            keys = self._keys if self._keys is not None else list(batch)
            return {k: (self._dist(v) if k in keys else v) for k, v in batch.items()}
        if isinstance(batch, (list, tuple)):
            return [self._convert(b) if isinstance(b, (list, tuple, dict)) else self._dist(b)
                    for b in batch]
        return self._dist(batch)

    def __iter__(self):
        for batch in self._loader:
            yield self._convert(batch)

    def __call__(self):
        return self.__iter__()


def shard_dataloader(dataloader, meshes, input_keys=None, shard_dims=None,
                     is_dataset_splitted=False, dense_tensor_idx=None):
    """Wrap `dataloader` so its batches are distributed tensors on `meshes`, the
    batch dim (0) split over mesh axis `shard_dims` (Replicate elsewhere; None:
    not split).

    Args:
        dataloader (DataLoader): yields tensors, lists/tuples or dicts of them.
        meshes (ProcessMesh|list[ProcessMesh]): the mesh (one: pipeline meshes are
            not supported yet).
        input_keys (list[str], optional): for dict batches, the keys to distribute.
        shard_dims (str|int|list, optional): the mesh axis (name or index) that
            splits the batch.
        is_dataset_splitted (bool): the loader already yields this rank's part.
        dense_tensor_idx (optional): not supported.

    Returns:
        ShardDataloader.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> data = [(fw.ones([4, 3]), fw.zeros([4]))]
            >>> loader = dist.shard_dataloader(data, mesh, shard_dims="dp")
            >>> x, y = next(iter(loader))
            >>> x.placements, x.shape
            ([Shard(dim=0)], [4, 3])
    """
    return ShardDataloader(dataloader, meshes, input_keys, shard_dims, is_dataset_splitted,
                           dense_tensor_idx)
