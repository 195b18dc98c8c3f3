"""``fleet.utils``: `recompute` (gradient checkpointing; community model code
imports it at module level, so it works in a single process too)."""

from __future__ import annotations

from fw.autograd import recompute

__all__ = ["recompute"]
