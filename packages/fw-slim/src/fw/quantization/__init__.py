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
    """The per-layer quantization report of a converted model on one input batch
    (`fw.slim.report.report`): per layer the kernel that runs (int8 or fp32, and
    why), the weight and activation scales, SQNR against `reference` and timings.

    Args:
        model_or_path (Layer|str): a converted model, or the path of one saved by
            ``fw.jit.save``.
        sample (Tensor|numpy.ndarray): the input batch.
        **kw: ``reference`` (the fp32 model, for SQNR, speed-up and size) and ``repeat``
            (timed runs per measurement, default 20).

    Returns:
        QuantReport: ``str(report)`` is a table.

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> from fw.quantization import PTQ, QuantConfig, report
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
        >>> q = ptq.quantize(net)
        >>> x = fw.randn([16, 4])
        >>> _ = q(x)                      # calibration
        >>> q = ptq.convert(q)
        >>> rep = report(q, x, repeat=1)
        >>> [layer.name for layer in rep.layers]
        ['0', '2']
    """
    from fw.slim.report import report as _report

    return _report(model_or_path, sample, **kw)
