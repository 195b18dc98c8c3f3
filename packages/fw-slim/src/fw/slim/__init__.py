"""fw.slim: pruning, distillation, sensitivity analysis and the quantization report.
See packages/fw-slim/README.md for the design."""

# ---- pruning and distillation (slim-prune) ----
from fw.slim.analysis import flops
from fw.slim.channel_graph import ChannelGroup, Member, channel_groups
from fw.slim.channel_prune import (
    ChannelPruner,
    FPGMFilterPruner,
    L1NormFilterPruner,
    L2NormFilterPruner,
    ratios_by_sensitivity,
)
from fw.slim.criteria import CRITERIA, register_criterion
from fw.slim.distill import Distiller, DistillLoss, FeatureAdapter, feature_loss, soft_label_loss
from fw.slim.sparsity import (
    MaskedPruner,
    NMPruner,
    UnstructuredPruner,
    calculate_density,
    check_sparsity,
    decorate,
    nm_mask,
    prune_model,
)

__all__ = ["ChannelGroup", "Member", "channel_groups", "ChannelPruner", "L1NormFilterPruner",
           "L2NormFilterPruner", "FPGMFilterPruner", "ratios_by_sensitivity", "CRITERIA",
           "register_criterion", "soft_label_loss", "feature_loss", "FeatureAdapter",
           "Distiller", "DistillLoss", "MaskedPruner", "UnstructuredPruner", "NMPruner",
           "nm_mask", "check_sparsity", "calculate_density", "prune_model", "decorate",
           "flops"]

# ---- quantization analysis (slim-quant) ----
from fw.slim.report import LayerReport, QuantReport, report, sqnr  # noqa: E402
from fw.slim.sensitivity import Sensitivity, sensitivity  # noqa: E402

__all__ += ["report", "QuantReport", "LayerReport", "sqnr", "sensitivity", "Sensitivity"]
