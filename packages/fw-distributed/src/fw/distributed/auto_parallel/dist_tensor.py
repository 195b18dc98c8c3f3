"""`DistTensor`: a Tensor whose value is spread over a `ProcessMesh`.

It is a `fw.core.Tensor` (so every fw function accepts it) whose ``_data`` slot
holds `GlobalMeta` (the global shape and dtype), not an array: fw-core's eager
fast lanes only take ndarray-backed tensors, so every op on a DistTensor reaches
``fw.core.dispatch.invoke``, whose ``dist_state`` hook (fw.core.internal) hands it
to `auto_parallel.spmd`. The rank's block is a plain Tensor, ``_local``; autograd
runs on the local tensors only (see README, "Auto-parallel")."""

from __future__ import annotations

import numpy as np

from fw.core.internal import make_tensor
from fw.core.tensor import Tensor
from fw.distributed.auto_parallel.placement import Partial, Replicate
from fw.nn import Parameter

__all__ = ["DistTensor", "DistParameter", "GlobalMeta", "make_dist", "is_dist_tensor"]


class GlobalMeta:
    """What a DistTensor's ``_data`` holds: the global shape and dtype. Turning it into
    an array is an error that says how to get the values."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a distributed tensor has no single array on this rank: use "
                        "t.local_value() for this rank's block or "
                        "fw.distributed.unshard_dtensor(t) for the whole tensor")


class DistTensor(Tensor):
    """A tensor laid out on `process_mesh` by `placements` (one per mesh axis).

    ``shape`` is the global shape; ``local_value()`` is this rank's block (a Tensor
    that takes part in autograd); ``numpy()`` (and so ``item()``, ``tolist()``) is
    the whole tensor, gathered from every rank as in Paddle (a collective). Made by
    `shard_tensor`, `reshard` and ops on distributed tensors, never directly.

    Args:
        (none: a DistTensor is not constructed directly; see `shard_tensor`.)

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
        >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
        >>> type(t).__name__, t.shape
        ('DistTensor', [2, 3])
    """

    # ------------------------------------------------------------ distributed view
    @property
    def process_mesh(self):
        """The `ProcessMesh` the tensor is laid out on.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.process_mesh.shape
            [1]
        """
        return self.__dict__["_mesh"]

    @property
    def placements(self) -> list:
        """One `Placement` per mesh axis.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.placements
            [Shard(dim=0)]
        """
        return list(self.__dict__["_placements"])

    def is_dist(self) -> bool:
        """Whether this is a distributed tensor: always True (False for a plain Tensor).

        Returns:
            bool: True.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.is_dist()
            True
        """
        return True

    def local_value(self) -> Tensor:
        """This rank's block, a Tensor that takes part in autograd.

        Returns:
            Tensor: the local block.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.local_value().shape
            [2, 3]
        """
        return self.__dict__["_local"]

    _local_value = local_value

    # ------------------------------------------------------------ tensor protocol
    @property
    def place(self):
        """The device of the local block.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.place.is_cpu_place()
            True
        """
        return self._local.place

    @property
    def stop_gradient(self) -> bool:
        """Whether gradients stop at this tensor (that of the local block). Assignable.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.stop_gradient
            True
        """
        return self._local._sg

    @stop_gradient.setter
    def stop_gradient(self, value):
        self._local.stop_gradient = bool(value)
        self._sg = bool(value)

    @property
    def trainable(self) -> bool:
        """The opposite of `stop_gradient`. Assignable.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.trainable = True
            >>> t.stop_gradient
            False
        """
        return not self._local._sg

    @trainable.setter
    def trainable(self, value):
        self.stop_gradient = not bool(value)

    @property
    def is_leaf(self) -> bool:
        """Whether the local block is a leaf of the autograd graph.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.is_leaf
            True
        """
        return self._local.is_leaf

    @property
    def grad(self):
        """The gradient as a distributed tensor of the same placements (a `Partial`
        tensor's gradient is `Replicate`); None before backward. Assignable.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.stop_gradient = False
            >>> (t * 2).sum().backward()
            >>> t.grad.numpy().tolist()
            [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
        """
        g = self._local.grad
        if g is None:
            return None
        # the gradient of a Partial tensor is whole on every rank (d sum / d part = 1)
        pl = [Replicate() if isinstance(p, Partial) else p for p in self.placements]
        return make_dist(g, self.process_mesh, pl, self.shape)

    @grad.setter
    def grad(self, value):
        if value is not None and isinstance(value, DistTensor):
            value = value._local
        self._local.grad = value

    def clear_grad(self, set_to_zero: bool = False):
        self._local.clear_grad(set_to_zero)

    def clear_gradient(self, set_to_zero: bool = True):
        self._local.clear_gradient(set_to_zero)

    def backward(self, grad_tensor=None, retain_graph=False):
        if isinstance(grad_tensor, DistTensor):
            grad_tensor = grad_tensor._local
        self._local.backward(grad_tensor, retain_graph)

    def numpy(self) -> np.ndarray:
        """The whole tensor's values (a collective: every rank of the mesh calls it),
        as Paddle's ``numpy()`` of a distributed tensor reshards it to replicated;
        ``local_value().numpy()`` is this rank's block.

        Returns:
            numpy.ndarray: the global values.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
            >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
            >>> t.numpy().shape
            (2, 3)
        """
        from fw.distributed.auto_parallel._reshard import reshard_local

        mesh = self.process_mesh
        if all(isinstance(p, Replicate) for p in self.placements):
            return self._local.numpy()
        whole = reshard_local(self._local.detach(), self.shape, self.placements,
                              [Replicate()] * mesh.ndim, mesh)
        return whole.numpy()

    def detach(self):
        return make_dist(self._local.detach(), self.process_mesh, self.placements, self.shape)

    def __repr__(self) -> str:
        return (f"DistTensor(shape={self.shape}, dtype={self.dtype}, "
                f"process_mesh={self.process_mesh}, placements={self.placements}, "
                f"stop_gradient={self.stop_gradient},\n  local_value="
                f"{self._local!r})")

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        raise TypeError("a DistTensor cannot be pickled: save fw.distributed.unshard_dtensor(t) "
                        "or use fw.distributed.save_state_dict")


class DistParameter(DistTensor, Parameter):
    """A distributed `Parameter` (what `shard_tensor` makes of a parameter): a layer
    registers it like any parameter; its block ``_local`` is a `Parameter` of the
    same name, which `shard_optimizer` hands to the optimizer.

    Args:
        (none: made by `shard_tensor` or `shard_layer` from a Parameter.)

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
        >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
        >>> type(lin.weight).__name__
        'DistParameter'
    """

    def __repr__(self) -> str:
        return "Parameter containing:\n" + DistTensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        raise TypeError("a DistParameter cannot be deep-copied: copy the dense layer before "
                        "shard_layer")


def make_dist(local, mesh, placements, shape, cls=DistTensor):
    """A `cls` over the local Tensor `local` (global `shape`)."""
    t = make_tensor(GlobalMeta(shape, local._data.dtype), None, local._sg, cls)
    d = t.__dict__
    d["_local"] = local
    d["_mesh"] = mesh
    d["_placements"] = tuple(placements)
    return t


def is_dist_tensor(x) -> bool:
    """Whether `x` is a distributed tensor.

    Args:
        x (object): anything.

    Returns:
        bool: True for a `DistTensor`.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
        >>> t = dist.shard_tensor(fw.ones([2, 3]), mesh, [dist.Shard(0)])
        >>> from fw.distributed.auto_parallel import is_dist_tensor
        >>> is_dist_tensor(t), is_dist_tensor(fw.ones([1]))
        (True, False)
    """
    return isinstance(x, DistTensor)
