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
        return cls._NAMES.get(op, f"<unknown {op!r}>")

    @classmethod
    def check(cls, op, fn: str) -> int:
        """`op` as an int, or a ValueError naming the function and the bad value."""
        if isinstance(op, bool) or not isinstance(op, int) or op not in cls._NAMES:
            raise ValueError(f"fw.distributed.{fn}: op must be a ReduceOp "
                             f"(SUM, MAX, MIN, PROD, AVG), got {op!r}")
        return int(op)
