"""The SPMD rules of auto-parallel: ``RULES = {op name: rule}``, one entry for every
op of fw-core's table (a test fails when an op has none).

A rule gets a `spmd.Ctx` (the op, its attrs, a `Spec` per tensor input, the mesh,
the global output shapes) and returns a `spmd.Plan` — the placements each input
must be resharded to and the placements of the outputs — or None to decline
(the replicate fallback then runs, and is counted by `fallback_report`). An op
that cannot be sharded has an explicit `replicate_only(reason)` entry, listed
with its reason by `rules_report`. To add a rule: write ``def rule(ctx) -> Plan |
None`` in the family module and register it with ``@register("op_name", ...)``;
`spmd._run` checks every output's local shape against its placements, so a
wrong rule fails loudly, never silently.

Partial placements survive only linear ops (sum of partials, partial times a
replicated factor, sums/means, reshapes/transposes, matmul with one partial
factor); any other use reduces them first.

Random ops keep their input placements: every rank draws its own block from the
same generator state, so a sharded random tensor is a valid draw of the same
distribution but not the slice of the dense draw (and the blocks of different
ranks are correlated); see README "Auto-parallel"."""

from __future__ import annotations

from fw.distributed.auto_parallel.spmd_rules import (  # noqa: F401  (each fills RULES)
    elementwise,
    indexing,
    linalg,
    matmul,
    misc,
    nn,
    optim,
    reduce,
    shape,
)
from fw.distributed.auto_parallel.spmd_rules._base import (
    REPLICATE_ONLY,
    RULES,
    register,
    replicate_only,
)
from fw.distributed.auto_parallel.spmd_rules._report import rules_report

__all__ = ["RULES", "REPLICATE_ONLY", "register", "replicate_only", "rules_report"]
