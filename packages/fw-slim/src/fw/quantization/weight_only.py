"""Weight-only quantization of a model's Linear layers (the decoder-heavy workloads):
each ``fw.nn.Linear`` becomes an ``fw.nn.quant.WeightOnlyLinear`` holding int8 or
packed int4 codes with per-channel or group-wise scales (Paddle's
``weight_only_linear``); activations stay float.

Scales: ``clip="mse"`` (fw's default) searches, per column (group), the clipping ratio
``r`` in ``[0.5, 1]`` (26 steps) whose scale ``r * absmax / qmax`` minimises the squared
error of the dequantized weights: a few outliers then no longer stretch the 15 levels of
int4 over a range most weights do not use (the grid search of AWQ's clipping step, Lin
et al. 2023, without its activation weighting). ``clip="absmax"`` is Paddle's
``weight_quantize`` exactly (``fw.nn.quant.weight_quantize`` keeps that rule): each output
column (or group of ``group_size`` rows of it) maps its largest magnitude to the largest
code. Both write the same codes layout and run on the same kernel; only the scales (and
so the codes) differ. Why mse is the default: measured on the example's trained char GPT
(tests/test_quant_weight_only_loss.py), int4 per channel costs +3.2 % of held-out loss
with absmax scales (real Paddle's own codes: +3.19 %, outside the 3 % target) and +1.4 %
with ``clip="mse"``; int8 is within 0.05 % either way.
"""

from __future__ import annotations

import copy

import numpy as np

import fw.nn as nn
from fw.nn.quant import WeightOnlyLinear

__all__ = ["weight_only_quantize"]

_CLIPS = ("absmax", "mse")
_RATIOS = np.linspace(1.0, 0.5, 26)


def _mse_codes(w, qmax, group_size):
    """(codes [n, k] int8, scales) of weight w [k, n] with the squared-error-minimising
    clipping ratio per column (group); scales [n] or [k / group_size, n]."""
    k, n = w.shape
    g = k if group_size == -1 else group_size
    wg = w.reshape(k // g, g, n).astype(np.float64)
    amax = np.abs(wg).max(axis=1)  # [k/g, n]
    live = amax > 0
    best_err = np.full(amax.shape, np.inf)
    best = np.where(live, amax / qmax, 1.0)
    for r in _RATIOS:
        s = np.where(live, amax * r / qmax, 1.0)
        c = np.clip(np.rint(wg / s[:, None, :]), -qmax, qmax)
        err = ((c * s[:, None, :] - wg) ** 2).sum(axis=1)
        better = err < best_err
        best_err = np.where(better, err, best_err)
        best = np.where(better, s, best)
    scale = best.astype(np.float32)
    # the codes of the float32 scale the kernel multiplies by
    c = np.clip(np.rint(wg / scale.astype(np.float64)[:, None, :]), -qmax, qmax)
    codes = np.ascontiguousarray(c.reshape(k, n).T.astype(np.int8))
    scale = np.where(live, scale, np.float32(0))  # weight_quantize's zero column: scale 0
    return codes, (scale.reshape(n) if group_size == -1 else scale)


def _refit(layer, linear, clip):
    if clip == "absmax":
        return layer
    import fw
    from fw.core.ops.quant import pack_int4, weight_qmax

    qmax = weight_qmax(layer.algo)
    codes, scale = _mse_codes(np.asarray(linear.weight.numpy(), np.float32), qmax,
                              layer.group_size)
    layer.weight.set_value(fw.to_tensor(codes if qmax == 127 else pack_int4(codes)))
    layer.weight_scale.set_value(fw.to_tensor(scale))
    return layer


def weight_only_quantize(model, algo="weight_only_int8", group_size=-1, skip=(), inplace=False,
                         clip="mse"):
    """Replace every Linear of `model` (except the sublayer names in `skip`) by a
    WeightOnlyLinear.

    Args:
        model (Layer): the model; it is copied unless ``inplace``.
        algo (str): ``"weight_only_int8"`` or ``"weight_only_int4"``.
        group_size (int): -1 (per output channel) or rows per scale group (must divide
            each Linear's in_features; int4 also needs even in_features).
        skip (list[str]): sublayer names (``model.named_sublayers()``) left in float.
        inplace (bool): quantize `model` itself.
        clip (str): ``"mse"`` (the default: the squared-error-minimising clipping
            ratio per column or group, see the module doc) or ``"absmax"`` (Paddle's
            ``weight_quantize`` scales and codes exactly: the Paddle-compatible choice).

    Returns:
        Layer: the quantized model.

    Examples:
        >>> import fw, fw.nn as nn
        >>> from fw.quantization import weight_only_quantize
        >>> net = nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 8))
        >>> q = weight_only_quantize(net, algo="weight_only_int4")  # clip="mse"
        >>> type(q[0]).__name__, q(fw.randn([2, 64])).shape
        ('WeightOnlyLinear', [2, 8])
        >>> p = weight_only_quantize(net, algo="weight_only_int4", clip="absmax")  # Paddle's
    """
    if clip not in _CLIPS:
        raise ValueError(f"weight_only_quantize: 'clip' must be one of {list(_CLIPS)}, got "
                         f"{clip!r}")
    m = model if inplace else copy.deepcopy(model)
    skip = set(skip)
    n = 0

    def visit(parent, prefix):
        nonlocal n
        for key, child in list(parent.named_children()):
            name = f"{prefix}.{key}" if prefix else key
            if type(child) is nn.Linear and name not in skip:
                layer = WeightOnlyLinear.from_linear(child, algo, group_size)
                parent.add_sublayer(key, _refit(layer, child, clip))
                n += 1
            else:
                visit(child, name)

    visit(m, "")
    if n == 0:
        raise ValueError("weight_only_quantize: the model has no Linear layer to quantize")
    return m
