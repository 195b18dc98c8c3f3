"""`rules_report`: which ops of the table have an SPMD rule, which are
replicate-only (and why), and which have no entry (the replicate fallback)."""

from __future__ import annotations

__all__ = ["rules_report"]


def rules_report() -> dict:
    """The SPMD rule coverage of fw-core's op table.

    Returns:
        dict: ``{"rules": [op names with a sharding rule], "replicate_only": {op name:
        reason}, "missing": [op names without an entry (they run the counted
        replicate fallback)], "counts": {"ops": n, "rules": n, "replicate_only": n,
        "missing": n}}``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto_parallel import rules_report
            >>> r = rules_report()
            >>> r["counts"]["ops"] == r["counts"]["rules"] + r["counts"]["replicate_only"] \\
            ...     + r["counts"]["missing"]
            True
            >>> "matmul" in r["rules"]
            True
    """
    from fw.core.internal import OPS
    from fw.distributed.auto_parallel.spmd_rules._base import REPLICATE_ONLY, RULES

    rules = sorted(n for n in OPS if n in RULES and n not in REPLICATE_ONLY)
    rep = {n: REPLICATE_ONLY[n] for n in sorted(OPS) if n in REPLICATE_ONLY}
    missing = sorted(n for n in OPS if n not in RULES)
    return {"rules": rules, "replicate_only": rep, "missing": missing,
            "counts": {"ops": len(OPS), "rules": len(rules), "replicate_only": len(rep),
                       "missing": len(missing)}}
