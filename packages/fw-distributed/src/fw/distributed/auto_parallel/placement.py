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
        """Whether this placement splits the tensor (along tensor axis `dim`, when given).

        Args:
            dim (int, optional): a tensor axis. Default: None (any).

        Returns:
            bool: True for a matching `Shard`.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Shard(1).is_shard(), dist.Shard(1).is_shard(0), dist.Replicate().is_shard()
            (True, False, False)
        """
        return False

    def is_replicated(self) -> bool:
        """Whether every rank holds the whole tensor.

        Returns:
            bool: True for `Replicate`.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Replicate().is_replicated(), dist.Shard(0).is_replicated()
            (True, False)
        """
        return False

    def is_partial(self) -> bool:
        """Whether the ranks hold partial values to be reduced.

        Returns:
            bool: True for `Partial`.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Partial().is_partial(), dist.Replicate().is_partial()
            (True, False)
        """
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
        """The tensor axis that is split.

        Returns:
            int: the axis.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Shard(1).get_dim()
            1
        """
        return self._dim

    @property
    def dim(self) -> int:
        """The tensor axis that is split (as `get_dim`).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Shard(0).dim
            0
        """
        return self._dim

    def is_shard(self, dim=None) -> bool:
        """True; with `dim`, whether this shard splits that axis.

        Args:
            dim (int, optional): a tensor axis. Default: None.

        Returns:
            bool: the answer.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Shard(0).is_shard(), dist.Shard(0).is_shard(1)
            (True, False)
        """
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
        """True: a replicated placement.

        Returns:
            bool: True.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Replicate().is_replicated()
            True
        """
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
        """How the partial values combine.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Partial().reduce_type
            <ReduceType.kRedSum: 0>
        """
        return self._reduce_type

    def is_partial(self) -> bool:
        """True: a partial placement.

        Returns:
            bool: True.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.Partial().is_partial()
            True
        """
        return True

    def __eq__(self, other):
        return isinstance(other, Partial) and other._reduce_type == self._reduce_type

    def __hash__(self):
        return hash(("Partial", int(self._reduce_type)))

    def __repr__(self):
        return f"Partial(reduce_type=ReduceType.{self._reduce_type.name})"
