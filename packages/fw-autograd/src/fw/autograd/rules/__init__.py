"""VJP rules, one module per op family, all registered in `RULES`.

Add a rule next to its family's others with ``@vjp("op_name")`` (see
`_registry` for the rule API). The table test in fw-autograd's tests fails
for a differentiable op without a rule and for a rule naming no op.
"""

from __future__ import annotations

import importlib

from fw.autograd._registry import RULES, Rule, get_rule, vjp

FAMILIES = ("creation", "elementwise", "reduce", "cumulative", "statistics", "shape", "indexing",
            "search", "linalg", "decomp", "solve", "fft", "activation", "conv", "pool", "norm",
            "nn_misc", "loss", "quant", "collective")

for _m in FAMILIES:
    importlib.import_module(f"fw.autograd.rules.{_m}")

__all__ = ["RULES", "Rule", "vjp", "get_rule", "FAMILIES"]
