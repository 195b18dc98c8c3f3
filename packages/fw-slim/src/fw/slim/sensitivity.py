"""Per-layer quantization sensitivity: quantize one layer at a time, measure the metric,
rank the layers by how much quantizing each alone costs.

``sensitivity(model, config, calibrate, evaluate)`` runs, for each layer the config
would quantize, PTQ with every *other* layer skipped (``QuantConfig.skip``), the
user's calibration and evaluation, and returns a `Sensitivity` (rows sorted by drop,
worst first). ``result.skip_list(max_drop)`` names the layers whose drop exceeds
``max_drop``: pass it to ``config.skip(...)`` and PTQ/QAT leave them in fp32. (The idea
of PaddleSlim's ``analysis_ptq`` / ``quant_post`` sensitivity and of PyTorch's
numeric-suite debugging: find the few layers that cost the accuracy.)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

__all__ = ["sensitivity", "Sensitivity"]


@dataclass
class Sensitivity:
    """What `sensitivity` returns: the fp32 metric and, per layer, the metric with
    only that layer quantized and the drop, worst first.

    Args:
        baseline (float): the metric of the fp32 model.
        rows (list[dict]): ``{"layer", "metric", "drop"}`` rows, largest drop first.

    Examples:
        >>> import fw
        >>> from fw.slim import Sensitivity
        >>> s = Sensitivity(0.9, [{"layer": "fc", "metric": 0.7, "drop": 0.2}])
        >>> s.skip_list(0.1)
        ['fc']
    """

    baseline: float  # the metric of the fp32 model
    rows: list  # [{"layer", "metric", "drop"}], worst (largest drop) first

    def skip_list(self, max_drop: float) -> list:
        """The layers whose drop exceeds `max_drop` (to keep in fp32, e.g. with
        ``QuantConfig.skip``).

        Args:
            max_drop (float): the largest acceptable metric drop.

        Returns:
            list[str]: the layer names.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> import fw.slim
            >>> from fw.quantization import QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            >>> x = fw.randn([16, 4])
            >>> ref = net(x)
            >>> def evaluate(m):                  # higher is better: minus the output error
            ...     return -float(((m(x) - ref) ** 2).mean())
            >>> cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver())
            >>> sens = fw.slim.sensitivity(net, cfg, lambda q: q(x), evaluate)
            >>> sens.skip_list(max_drop=1.0)
            []
        """
        return [r["layer"] for r in self.rows if r["drop"] > max_drop]

    def table(self) -> str:
        """The rows as a text table: the fp32 metric, then per layer its metric and drop.

        Returns:
            str: the table.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> import fw.slim
            >>> from fw.quantization import QuantConfig
            >>> from fw.quantization.observers import AbsmaxObserver
            >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            >>> x = fw.randn([16, 4])
            >>> ref = net(x)
            >>> def evaluate(m):                  # higher is better: minus the output error
            ...     return -float(((m(x) - ref) ** 2).mean())
            >>> cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver())
            >>> sens = fw.slim.sensitivity(net, cfg, lambda q: q(x), evaluate)
            >>> sens.table().splitlines()[1].split()
            ['layer', 'metric', 'drop']
        """
        lines = [f"fp32 metric {self.baseline:.4f}", f"{'layer':24} {'metric':>8} {'drop':>8}"]
        lines += [f"{r['layer'][:24]:24} {r['metric']:8.4f} {r['drop']:+8.4f}" for r in self.rows]
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def _quantizable(model, config):
    return [n for n, layer in model.named_sublayers() if config._config_for(n, layer) is not None]


def sensitivity(model, config, calibrate, evaluate, layers=None) -> Sensitivity:
    """Rank layers by the metric drop of quantizing each one alone (PTQ of that layer,
    the others kept in fp32).

    Args:
        model (Layer): the fp32 model (not modified).
        config (QuantConfig): the quantization to apply (its skips are kept).
        calibrate (callable): ``calibrate(qmodel)`` runs calibration batches through a PTQ
            model.
        evaluate (callable): ``evaluate(model) -> float``, higher is better (accuracy).
        layers (list[str], optional): the layer names to try (default: every layer the
            config quantizes).

    Returns:
        Sensitivity: the rows, worst first.

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> import fw.slim
        >>> from fw.quantization import QuantConfig
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> x = fw.randn([16, 4])
        >>> ref = net(x)
        >>> def evaluate(m):                  # higher is better: minus the output error
        ...     return -float(((m(x) - ref) ** 2).mean())
        >>> cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver())
        >>> sens = fw.slim.sensitivity(net, cfg, lambda q: q(x), evaluate)
        >>> sorted(r["layer"] for r in sens.rows)
        ['0', '2']
    """
    from fw.quantization import PTQ

    names = list(layers) if layers is not None else _quantizable(model, config)
    if not names:
        raise ValueError("sensitivity: the config quantizes no layer of the model")
    unknown = sorted(set(names) - set(_quantizable(model, config)))
    if unknown:
        raise ValueError(f"sensitivity: {unknown} are not layers the config quantizes "
                         f"(those are {_quantizable(model, config)})")
    model.eval()
    base = float(evaluate(model))
    rows = []
    for name in names:
        cfg = copy.copy(config)
        cfg._skip = set(config._skip) | (set(names) - {name})
        ptq = PTQ(cfg)
        q = ptq.quantize(model)
        calibrate(q)
        m = float(evaluate(ptq.convert(q)))
        rows.append({"layer": name, "metric": m, "drop": base - m})
    rows.sort(key=lambda r: -r["drop"])
    return Sensitivity(base, rows)
