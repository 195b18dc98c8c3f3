"""`flops`: count the floating-point operations of one forward pass.

Counted per layer type (multiply-accumulates counted once, as Paddle does):
convolutions ``out_numel * (in_channels / groups * kernel_numel + bias)``, Linear
``in_features * out_numel`` (+ ``out_numel`` with bias), normalizations ``2 *
in_numel``, average pools ``out_numel * (kernel_numel + 1)`` and other layers 0
(activations, dropout, reshapes). Layers can be counted by `custom_ops`:
``{LayerType: fn(layer, inputs, output) -> int}``.
"""

from __future__ import annotations

import numpy as np

from fw.core.tensor import Tensor

__all__ = ["flops"]


def _numel(x):
    return int(np.prod(x.shape)) if isinstance(x, Tensor) else 0


def _count(layer, inputs, output):
    import fw.nn as nn

    name = type(layer).__name__
    out = output[0] if isinstance(output, (list, tuple)) else output
    x = inputs[0] if inputs else None
    if name.startswith("Conv"):
        w = layer.weight
        transpose = "Transpose" in name
        cin = w.shape[0] if transpose else w.shape[1]
        groups = getattr(layer, "_groups", 1) or 1
        k = int(np.prod(w.shape[2:]))
        per = (cin // groups if transpose else cin) * k + (1 if getattr(layer, "bias", None)
                                                           is not None else 0)
        return _numel(out) * per
    if isinstance(layer, nn.Linear):
        n = layer.weight.shape[0] * _numel(out)
        return n + (_numel(out) if layer.bias is not None else 0)
    if "Norm" in name:
        return 2 * _numel(x)
    if name.startswith(("AvgPool", "AdaptiveAvgPool")):
        k = getattr(layer, "kernel_size", None) or getattr(layer, "ksize", None) or 1
        kn = int(np.prod(k)) if isinstance(k, (list, tuple)) else int(k) ** max(
            0, len(out.shape) - 2)
        return _numel(out) * (kn + 1)
    return 0


def flops(net, input_size, custom_ops=None, print_detail=False):
    """The FLOPs of one forward pass of `net` on a random input of `input_size`.

    Args:
        net: an `fw.nn.Layer`.
        input_size: the input shape (batch included).
        custom_ops: ``{LayerType: fn(layer, inputs, output) -> int}`` overriding the
            built-in counts.
        print_detail: print a per-layer table.

    Returns:
        the total as an int.

    Examples:
        >>> import fw
        >>> net = fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 2))
        >>> fw.flops(net, [1, 8])
        Total Flops: 178     Total Params: 178
        178
    """
    import fw
    from fw.autograd import no_grad

    custom_ops = custom_ops or {}
    rows = []
    hooks = []

    def hook(layer, inputs, output):
        fn = custom_ops.get(type(layer))
        n = int(fn(layer, inputs, output)) if fn is not None else _count(layer, inputs, output)
        params = sum(int(np.prod(p.shape)) for p in layer.parameters(include_sublayers=False))
        rows.append((type(layer).__name__, n, params))

    for layer in net.sublayers(include_self=True):
        if not list(layer.children()):
            hooks.append(layer.register_forward_post_hook(hook))
    was_training = net.training
    net.eval()
    try:
        with no_grad():
            net(fw.rand([int(d) if d and d > 0 else 1 for d in input_size]))
    finally:
        for h in hooks:
            h.remove()
        if was_training:
            net.train()
    total = sum(r[1] for r in rows)
    if print_detail:
        print(f"{'Layer':<24}{'FLOPs':>16}{'Params':>12}")
        for name, n, p in rows:
            print(f"{name:<24}{n:>16,}{p:>12,}")
    print(f"Total Flops: {total}     Total Params: "
          f"{sum(int(np.prod(p.shape)) for p in net.parameters())}")
    return total
