"""Model cost from the traced program: `flops` counts the multiply-accumulates of
the convolutions and Linear layers per sample (PaddleSlim's
``paddleslim.analysis.flops`` counts the same for conv/fc), so a pruning plan can
be judged by what it removes, not only by channel counts."""

from __future__ import annotations

import math

from fw.slim.channel_prune import trace_program

__all__ = ["flops"]


def _conv_macs(op) -> int:
    w, r = op.operands[1], op.results[0]
    cl = bool(op.attrs.get("channel_last", False))
    out = list(r.shape[1:-1] if cl else r.shape[2:])
    cout = r.shape[-1] if cl else r.shape[1]
    per_out = math.prod(w.shape[1:])  # (in / groups) * kernel
    return int(cout) * math.prod(out) * per_out


def _linear_macs(op) -> int:
    x, w = op.operands[0], op.operands[1]
    rows = math.prod(d for d in x.shape[1:-1]) if len(x.shape) > 2 else 1
    return rows * int(w.shape[0]) * int(w.shape[1])


_RULES = {"conv": _conv_macs, "linear": _linear_macs}


def flops(model, inputs, detail=False):
    """Multiply-accumulates per sample of the model's conv and Linear ops.

    Args:
        model (Layer): the model (traced in eval mode, as `ChannelPruner` does).
        inputs (list|InputSpec|Tensor): the input shape(s), InputSpecs or tensors (the
            batch dim is ignored).
        detail (bool, optional): also return ``[(op name, MACs), ...]`` in program order.
            Default: False.

    Returns:
        int|tuple: the MACs, or ``(MACs, rows)`` with `detail`.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> fw.slim.flops(fw.nn.Conv2D(3, 8, 3), [1, 3, 10, 10])   # 8*8*8 outputs * 3*3*3
        13824
        >>> fw.slim.flops(fw.nn.Linear(4, 8), [1, 4], detail=True)
        (32, [('linear', 32)])
    """
    program = trace_program(model, inputs)
    rows = []
    for op in program.block.walk():
        rule = _RULES.get(op.name)
        if rule is None:
            continue
        dims = [d for v in (op.results[0],) for d in v.shape[1:]]
        if any(d < 0 for d in dims):
            raise ValueError(f"flops: op {op.name!r} has a dynamic output shape "
                             f"{list(op.results[0].shape)}; give static input shapes")
        rows.append((op.name, rule(op)))
    total = sum(m for _, m in rows)
    return (total, rows) if detail else total
