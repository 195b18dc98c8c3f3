"""``layout_nhwc``: run 2-D convolutions, pooling and the elementwise ops between them
channel-last (NHWC), converting layouts only at the edges of such a region.

Why: oneDNN's direct CPU convolutions (brgconv, jit depthwise) read and write NHWC
(``acdb``) as it is, while an NCHW (``abcd``) activation is reordered into a blocked
layout before every convolution and back after it (MobileNetV2 b1@224: ~116
activation reorders per run, a sixth of the run). With this pass a chain of convs
converts twice: once at its entry and once at its exit.

How (an IR rewrite, not an opaque layout carried between kernels: every op keeps its
documented semantics and the unoptimised reference still runs the result)::

    conv(x) {channel_last=False}   -> transpose(conv(transpose(x, 0231))
                                                  {channel_last=True}, 0312)

for ``conv``/``fused_conv``/``quantized_conv2d`` (4-D), ``max_pool``/``avg_pool``/
``adaptive_avg_pool`` (4-D); a transpose to NHWC of a value that is itself the
transpose back of an NHWC value is that NHWC value (so consecutive ops hand NHWC to
each other), and a same-shape elementwise op (``add``, the epilogue activations, ...) whose tensor
operands are all such NHWC values runs on them too, and so does a per-tensor
``quantize_linear``/``dequantize_linear`` (an int8 region's border: its scale and zero
point have one element). The transposes left without
readers are removed by ``dce``. Results are bit-identical (the same arithmetic on
permuted memory; oneDNN may pick other kernels, so float32 agrees within rounding).

Kept NCHW: ops inside a nested block, and convs with fewer than `min_channels` input
channels (default 1: none). Measured (1 thread, b1@224): the 3-channel stem is faster
NHWC too -- ResNet's 7x7/64 conv 8.6-10.6 ms NHWC (the transposed input has 3
channels) against 23.6 ms NCHW plus the transpose of its 64-channel output; the
3x3/32 stem of MobileNetV2 is even (0.45 ms both ways).

Left alone: a program with fewer than `min_convs` convertible convolutions (default 2:
a single conv would save one reorder pair and pay two transposes).
The pass trades one reorder pair per conv for two transposes per region, and each op
costs a few microseconds of Python in the executor. LeNet (2 convs, 2x2 max pools) was
once left alone (default 3): b1 measured ~70 us with the pass against ~62 us without,
because the channel-last max pool ran a generic window loop (1 ms at b64). With the
channel-last 2x2 fast path of the pool kernel, the pass is even at b1 (0.055 ms both,
medians of CPU time per run, 1 thread, separate processes) and faster at b64 (0.89-1.0
against 1.0-1.19 ms): convolutions without the reorders of a 6-channel output padded to
oneDNN's 16-channel blocks.
"""

from __future__ import annotations

from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.rewrite import Rewriter

__all__ = ["LayoutNHWC"]

TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)

_CONVS = ("conv", "fused_conv", "quantized_conv2d")
_CHANNEL_OPS = {"conv": ("x",), "fused_conv": ("x", "residual"),
                "quantized_conv2d": ("x", "residual"),
                "max_pool": ("x",), "avg_pool": ("x",), "adaptive_avg_pool": ("x",)}
# ops computing each element from the same element of same-shape operands
_ELEMENTWISE = {"add", "subtract", "multiply", "maximum", "minimum", "relu", "relu6",
                "sigmoid", "tanh", "silu", "gelu", "hardswish", "hardsigmoid",
                "leaky_relu", "elu", "clip", "scale", "abs", "neg", "exp"}
# elementwise with per-tensor (1-element) parameters: the borders of an int8 region
_PER_TENSOR = {"quantize_linear", "dequantize_linear"}


def _convertible(op, min_channels) -> bool:
    if op.attrs.get("channel_last", True) or len(op.results) != 1:
        return False
    x = op.operands[0]
    if x is None or x.type.ndim != 4:
        return False
    if op.name in _CONVS:
        c = x.type.shape[1]
        return c != -1 and c >= min_channels
    return True


@register_pass
class LayoutNHWC(Pass):
    """Options: ``min_channels`` (default 1): convs with fewer input channels stay
    NCHW; ``min_convs`` (default 2): fewer convertible convs leave the program alone."""

    name = "layout_nhwc"

    def __init__(self, min_channels: int = 1, min_convs: int = 2):
        self.min_channels = min_channels
        self.min_convs = min_convs

    def run(self, program) -> bool:
        convs = sum(op.name in _CONVS and _convertible(op, self.min_channels)
                    for op in program.block.ops)
        if convs < max(self.min_convs, 1):
            return False
        rw = Rewriter(program)
        nhwc_of: dict = {}  # an NCHW value -> the NHWC value it is the transpose of
        to_nhwc: dict = {}  # an NCHW value -> the transpose to NHWC already made of it

        def as_nhwc(v, before):
            if v in nhwc_of:
                return nhwc_of[v]
            if v not in to_nhwc:
                to_nhwc[v] = rw.create("transpose", [v], {"perm": TO_NHWC},
                                       before=before).results[0]
            return to_nhwc[v]

        def rebuild(op, operands, attrs):
            new = rw.create(op.name, operands, attrs, before=op)
            back = rw.create("transpose", [new.results[0]], {"perm": TO_NCHW}, before=op)
            old = op.results[0]
            rw.replace_all_uses(old, back.results[0])
            rw.erase(op)
            nhwc_of[back.results[0]] = new.results[0]

        changed = False
        for op in list(program.block.ops):  # the top block only
            if op.name in _CHANNEL_OPS and _convertible(op, self.min_channels):
                acts = _CHANNEL_OPS[op.name]
                names = op.opdef.input_names
                operands = [as_nhwc(v, op) if v is not None and
                            names[i].rstrip("?") in acts else v
                            for i, v in enumerate(op.operands)]
                rebuild(op, operands, {**op.attrs, "channel_last": True})
                changed = True
            elif op.name in _ELEMENTWISE and len(op.results) == 1 and op.operands and \
                    all(v in nhwc_of and v.type == op.results[0].type for v in op.operands):
                rebuild(op, [nhwc_of[v] for v in op.operands], dict(op.attrs))
                changed = True
            elif op.name in _PER_TENSOR and op.operands and op.operands[0] in nhwc_of and \
                    all(v is None or v.type.numel() == 1 for v in op.operands[1:]):
                rebuild(op, [nhwc_of[op.operands[0]], *op.operands[1:]], dict(op.attrs))
                changed = True
        if changed:
            rw.flush()
        return changed
