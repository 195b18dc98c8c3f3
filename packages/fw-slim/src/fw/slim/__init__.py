"""fw.slim: pruning, distillation, sensitivity analysis and the quantization report.
See packages/fw-slim/README.md for the design."""

# ---- pruning and distillation (slim-prune) ----
from fw.slim.channel_graph import ChannelGroup, Member, channel_groups
from fw.slim.channel_prune import (ChannelPruner, FPGMFilterPruner, L1NormFilterPruner,
                                   L2NormFilterPruner, ratios_by_sensitivity)
from fw.slim.criteria import CRITERIA, register_criterion

__all__ = ["ChannelGroup", "Member", "channel_groups", "ChannelPruner", "L1NormFilterPruner",
           "L2NormFilterPruner", "FPGMFilterPruner", "ratios_by_sensitivity", "CRITERIA",
           "register_criterion"]
