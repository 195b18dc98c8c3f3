"""``fuse_conv_bias_act``: a conv and its epilogue -> one ``fused_conv``.

Matched (see `fw.core.ir.passes.epilogue` for the walk)::

    conv(x, w, b?) [+ c] [act] [+ r]   -> fused_conv(x, w, bias, r) {conv attrs, act}

- x and w have one real floating dtype.
- ``c``: a per-channel bias, only when the conv has none: a value of the conv's
  dtype whose shape broadcasts against the result with C (static) on the
  channel axis and 1 everywhere else (``[1, C, 1, 1]`` or ``[C, 1, 1]`` for
  NCHW, ``[C]`` for NHWC), added without changing the result's type. A shape
  other than ``[C]`` gets a ``reshape`` to ``[C]`` in front of the fused op.
- act: ``relu``, ``gelu`` (either form), ``sigmoid``, ``tanh``, ``silu``.
- ``r``: a value of exactly the running value's type added last (either order).

Every intermediate value must have one reader in the same block, and at least
one op must be absorbed. float32/float64 results are bit-identical to the
unfused chain.
"""

from __future__ import annotations

from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.epilogue import fuse_epilogue, is_float, match_epilogue
from fw.core.ir.passes.rewrite import apply_patterns

__all__ = ["FuseConvBiasAct", "channel_bias"]


def _channel_axis(op) -> int:
    nd = op.results[0].type.ndim
    return nd - 1 if op.attrs.get("channel_last") else 1


def channel_bias(b, p, axis) -> bool:
    """`b` adds one value per channel of `p` (channel axis `axis`)."""
    bs, ps = b.type.shape, p.type.shape
    if b.type.dtype is not p.type.dtype or not 1 <= len(bs) <= len(ps):
        return False
    c = ps[axis]
    off = len(ps) - len(bs)
    if c == -1 or axis < off:
        return False
    return all((d == c) if off + i == axis else d == 1 for i, d in enumerate(bs))


def _conv(rw, op):
    x, w, b = op.operands
    if not (is_float(x) and w.type.dtype is x.type.dtype):
        return False
    axis = _channel_axis(op)
    ep = match_epilogue(rw, op, bias_test=lambda c, p: channel_bias(c, p, axis),
                        has_bias=b is not None)
    if not ep.ops:
        return False
    bias = b
    if bias is None and ep.bias is not None:
        bias = ep.bias
        c = op.results[0].type.shape[axis]
        if bias.type.shape != (c,):
            bias = rw.create("reshape", [bias], {"shape": (c,)}, before=ep.last).results[0]
    attrs = {k: op.attrs[k] for k in ("stride", "padding", "dilation", "groups",
                                      "channel_last")}
    attrs["activation"] = ep.activation
    fuse_epilogue(rw, op, ep, "fused_conv", [x, w, bias, ep.residual], attrs)
    return True


@register_pass
class FuseConvBiasAct(Pass):
    name = "fuse_conv_bias_act"

    def run(self, program) -> bool:
        return apply_patterns(program, {"conv": _conv})
