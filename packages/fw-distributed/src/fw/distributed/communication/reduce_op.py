"""`ReduceOp`: Paddle's reduction codes (SUM=0, MAX=1, MIN=2, PROD=3, AVG=4).

Plain ints, as in Paddle, so ``op=ReduceOp.SUM`` and ``op=0`` mean the same."""
from __future__ import annotations

__all__ = ["ReduceOp"]


class ReduceOp:
    """Reduction of `all_reduce`, `reduce` and `reduce_scatter`.

    AVG is SUM divided by the group size, defined for floating dtypes only (an
    integer mean would have to round, which Paddle leaves undefined).

    Example:
        >>> import fw.distributed as dist
        >>> dist.ReduceOp.SUM
        0
    """

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4

    _NAMES = {0: "SUM", 1: "MAX", 2: "MIN", 3: "PROD", 4: "AVG"}

    @classmethod
    def name_of(cls, op) -> str:
        """The name of a reduce-op code (for messages).

        Args:
            op (int): a `ReduceOp` value.

        Returns:
            str: e.g. ``"SUM"``.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ReduceOp.name_of(dist.ReduceOp.MAX)
            'MAX'
        """
        return cls._NAMES.get(op, f"<unknown {op!r}>")

    @classmethod
    def check(cls, op, fn: str) -> int:
        """`op` as an int, or a ValueError naming the function and the bad value.

        Args:
            op (int): a `ReduceOp` value.
            fn (str): the calling function's name, for the message.

        Returns:
            int: `op`.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.ReduceOp.check(dist.ReduceOp.SUM, "all_reduce")
            0
            >>> try:
            ...     dist.ReduceOp.check(9, "all_reduce")
            ... except ValueError as e:
            ...     print(e)
            fw.distributed.all_reduce: op must be a ReduceOp (SUM, MAX, MIN, PROD, AVG), got 9
        """
        if isinstance(op, bool) or not isinstance(op, int) or op not in cls._NAMES:
            raise ValueError(f"fw.distributed.{fn}: op must be a ReduceOp "
                             f"(SUM, MAX, MIN, PROD, AVG), got {op!r}")
        return int(op)
