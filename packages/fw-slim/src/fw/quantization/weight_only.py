"""Weight-only quantization of a model's Linear layers (the decoder-heavy workloads):
each ``fw.nn.Linear`` becomes an ``fw.nn.quant.WeightOnlyLinear`` holding int8 or
packed int4 codes with per-channel or group-wise scales (Paddle's
``weight_only_linear``); activations stay float."""

from __future__ import annotations

import copy

import fw.nn as nn
from fw.nn.quant import WeightOnlyLinear

__all__ = ["weight_only_quantize"]


def weight_only_quantize(model, algo="weight_only_int8", group_size=-1, skip=(), inplace=False):
    """Replace every Linear of `model` (except the sublayer names in `skip`) by a
    WeightOnlyLinear. Returns the model (a copy unless ``inplace``).

    Args:
        algo: ``"weight_only_int8"`` or ``"weight_only_int4"``.
        group_size: -1 (per output channel) or rows per scale group (must divide each
            Linear's in_features; int4 also needs even in_features).
    """
    m = model if inplace else copy.deepcopy(model)
    skip = set(skip)
    n = 0

    def visit(parent, prefix):
        nonlocal n
        for key, child in list(parent.named_children()):
            name = f"{prefix}.{key}" if prefix else key
            if type(child) is nn.Linear and name not in skip:
                parent.add_sublayer(key, WeightOnlyLinear.from_linear(child, algo, group_size))
                n += 1
            else:
                visit(child, name)

    visit(m, "")
    if n == 0:
        raise ValueError("weight_only_quantize: the model has no Linear layer to quantize")
    return m
