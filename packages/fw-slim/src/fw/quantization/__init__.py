"""fw.quantization: Paddle 3.x's paddle.quantization (QuantConfig, observers, quanters,
PTQ, QAT) plus weight-only quantization and the quantization report. See
packages/fw-slim/README.md for the design."""

from fw.quantization import observers, quanters
from fw.quantization.base import BaseObserver, BaseQuanter, ObserverFactory, QuanterFactory, quanter
from fw.quantization.config import QuantConfig, SingleLayerConfig
from fw.quantization.outputs import quantize_outputs
from fw.quantization.ptq import PTQ, QAT
from fw.quantization.weight_only import weight_only_quantize

__all__ = ["QuantConfig", "SingleLayerConfig", "PTQ", "QAT", "BaseObserver", "BaseQuanter",
           "ObserverFactory", "QuanterFactory", "observers", "quanters", "weight_only_quantize",
           "quantize_outputs", "report", "quanter"]


def report(model_or_path, sample, **kw):
    """The per-layer quantization report (`fw.slim.report.report`)."""
    from fw.slim.report import report as _report

    return _report(model_or_path, sample, **kw)
