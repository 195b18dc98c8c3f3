"""Helpers several lowering families share."""

from __future__ import annotations

import numpy as np

__all__ = ["INT64_MAX", "INT64_MIN", "to_channels_first", "to_channels_last"]

# ONNX Slice takes these bounds for "to the end", forward and backward (onnx Slice spec)
INT64_MAX = int(np.iinfo(np.int64).max)
INT64_MIN = int(np.iinfo(np.int64).min)


def to_channels_first(ctx, x: str, rank: int) -> str:
    """[N, *S, C] -> [N, C, *S]: ONNX conv/pool/norm ops are channels-first."""
    return ctx.node("Transpose", [x], perm=[0, rank - 1] + list(range(1, rank - 1)))


def to_channels_last(ctx, x: str, rank: int) -> str:
    """[N, C, *S] -> [N, *S, C]."""
    return ctx.node("Transpose", [x], perm=[0] + list(range(2, rank)) + [1])
