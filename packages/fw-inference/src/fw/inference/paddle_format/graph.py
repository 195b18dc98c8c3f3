"""The program of a Paddle model file, independent of its format: what `pir_json`
and `pdmodel` produce and `convert` turns into an fw-core `Program`.

Ops are in Paddle 3's PIR form: the name without the dialect prefix
(``conv2d``, ``batch_norm_``, ``combine``), operands by position, attributes by
name with plain Python values. The 2.x reader renames its ops into this form
(see `pdmodel.LEGACY`), so `ops.py` has one entry per op for both formats.
"""

from __future__ import annotations

import dataclasses

__all__ = ["PaddleOp", "PaddleGraph", "Spec"]


@dataclasses.dataclass
class Spec:
    """A value's declared type: numpy dtype name and dims (-1: unknown)."""

    dtype: str
    shape: tuple


@dataclasses.dataclass
class PaddleOp:
    name: str
    inputs: list  # value keys (None: an absent optional operand)
    attrs: dict
    outputs: list  # value keys
    specs: list = dataclasses.field(default_factory=list)  # Spec per output, when known


@dataclasses.dataclass
class PaddleGraph:
    """Feeds (name, key, Spec) in feed order, params (name, key, Spec), the ops in
    program order, and the fetched value keys in fetch order."""

    source: str
    feeds: list
    params: list
    ops: list
    fetches: list
