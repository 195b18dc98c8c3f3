"""Placements: how a distributed tensor lies along one axis of its `ProcessMesh`
(Paddle 3.x's ``paddle.distributed.Shard`` / ``Replicate`` / ``Partial`` and
``ReduceType``; reprs and equality follow Paddle's)."""

from __future__ import annotations

import enum

__all__ = ["Placement", "Shard", "Replicate", "Partial", "ReduceType"]


class ReduceType(enum.IntEnum):
    """How the per-rank values of a `Partial` tensor combine (Paddle's
    ``paddle.distributed.ReduceType``; the numbering is Paddle's).

    Members: kRedSum, kRedMax, kRedMin, kRedProd, kRedAvg, kRedAny, kRedAll.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> int(dist.ReduceType.kRedSum), int(dist.ReduceType.kRedAvg)
        (0, 4)
        >>> dist.Partial(dist.ReduceType.kRedMax).is_partial()
        True
    """

    kRedSum = 0
    kRedMax = 1
    kRedMin = 2
    kRedProd = 3
    kRedAvg = 4
    kRedAny = 5
    kRedAll = 6


class Placement:
    """The base class of the placements of a distributed tensor along one mesh axis:
    `Shard` (split along a tensor dim), `Replicate` (whole on every rank) and `Partial`
    (per-rank values still to be reduced).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> kinds = (dist.Shard(0), dist.Replicate(), dist.Partial())
        >>> [isinstance(p, dist.Placement) for p in kinds]
        [True, True, True]
        >>> dist.Shard(0).is_shard(), dist.Replicate().is_replicated(), dist.Partial().is_partial()
        (True, True, True)
    """

    __slots__ = ()

    def is_shard(self, dim=None) -> bool:
        return False

    def is_replicated(self) -> bool:
        return False

    def is_partial(self) -> bool:
        return False


class Shard(Placement):
    """The tensor is split along tensor axis `dim` over the mesh axis.

    Args:
        dim (int): the tensor axis that is split (non-negative).

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> dist.Shard(0)
            Shard(dim=0)
    """

    __slots__ = ("_dim",)

    def __init__(self, dim: int):
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"Shard: dim must be an int, got {type(dim).__name__}")
        self._dim = dim

    def get_dim(self) -> int:
        return self._dim

    @property
    def dim(self) -> int:
        return self._dim

    def is_shard(self, dim=None) -> bool:
        return dim is None or dim == self._dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other._dim == self._dim

    def __hash__(self):
        return hash(("Shard", self._dim))

    def __repr__(self):
        return f"Shard(dim={self._dim})"


class Replicate(Placement):
    """Every rank along the mesh axis holds the whole tensor.

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> dist.Replicate()
            Replicate()
    """

    __slots__ = ()

    def is_replicated(self) -> bool:
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"


class Partial(Placement):
    """Every rank along the mesh axis holds a partial value; the tensor is their
    reduction (`ReduceType`, a sum by default).

    Args:
        reduce_type (ReduceType): how the partial values combine
            (``ReduceType.kRedSum``).

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> dist.Partial()
            Partial(reduce_type=ReduceType.kRedSum)
    """

    __slots__ = ("_reduce_type",)

    def __init__(self, reduce_type=ReduceType.kRedSum):
        try:
            self._reduce_type = ReduceType(reduce_type)
        except ValueError:
            raise ValueError(f"Partial: reduce_type must be a ReduceType, got "
                             f"{reduce_type!r}") from None

    @property
    def reduce_type(self) -> ReduceType:
        return self._reduce_type

    def is_partial(self) -> bool:
        return True

    def __eq__(self, other):
        return isinstance(other, Partial) and other._reduce_type == self._reduce_type

    def __hash__(self):
        return hash(("Partial", int(self._reduce_type)))

    def __repr__(self):
        return f"Partial(reduce_type=ReduceType.{self._reduce_type.name})"
