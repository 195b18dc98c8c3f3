"""``cpu_bfloat16`` (inference, opt-in): run the products with constant weights in
bfloat16 on CPUs that multiply bf16 natively, accumulating in float32.

What Paddle Inference's ``Config.enable_mkldnn_bfloat16()`` switches on (its
``cpu_bfloat16_placement_pass`` marks the ops, ``cpu_bfloat16_pass`` puts
quantize/dequantize ops at the edges of the bf16 regions); fw's
``fw.inference.Config.enable_mkldnn_bfloat16`` inserts this pass. Rewritten::

    fused_matmul(x, W, b?, r?)  -> cast(fused_matmul(bf(x), bf(W), bf(b)?, bf(r)?), f32)
    fused_conv(x, W, b?, r?)    -> cast(fused_conv(bf(x), bf(W), bf(b)?, bf(r)?), f32)
    conv(x, W, b?)              -> cast(conv(bf(x), bf(W), bf(b)?), f32)
    max_pool(x) {x bf16-exact}  -> cast(max_pool(bf(x)), f32)

- the op is float32 and its weight (and bias) are block-0 constants: they become NEW
  bfloat16 constants once, here, so a predictor converts its weights once (the float32
  originals are dropped by ``dce`` and the predictor when nothing else reads them);
- ``bf(v)`` of an activation is one ``cast(v, bfloat16)`` per value (shared by every
  converted reader), inserted before its first converted reader; when ``v`` is itself
  ``cast(u, float32)`` of a bfloat16 ``u`` (the result of a converted op), ``bf(v)`` is
  ``u``: that round trip is exact, so consecutive converted ops hand bf16 to each other
  and the float32 casts between them die (``dce``);
- ``max_pool`` (Paddle's ``pool2d``) only where its input is already such a bf16
  value: the maximum of rounded values is the rounded maximum (rounding is monotonic),
  so the pooled bf16 result equals rounding the float32 pool's - no precision lost;
- small ops stay float32: fewer than 2**20 multiply-adds per sample (LeNet's layers, a
  ResNet's 512x1000 classifier at batch 1, which the float32 GEMV runs faster), where
  converting costs more than the product saves; 2**16 when a bf16 copy of the input
  exists already (a ResNet's 1x1 downsample convolutions at 64x64, which read a block's
  input beside its first conv: converting them saves the casts out of the chain and back).

Numerics (the ops' own bf16 definition, ``fw.core.ops.fused``): x, W, b and r are
rounded to bf16 (round to nearest even, 8 significant bits), the products and sums run
in float32 (oneDNN's bf16 kernels accumulate in f32; so does the NumPy reference), the
bias, activation and residual are applied in float32, and the result is rounded to bf16
once and widened back to float32 at the region's edge. Each element's error against
the float32 op is therefore at most about ``2**-8 * sum_k |x_k| |W_k|`` (the two input
roundings; K terms) plus ``2**-8 * (|out| + |r|)`` (the output and residual roundings)
- tests/test_predictor_bf16.py checks exactly that bound. Ops outside the set (the
attention, softmax, layer norm, elementwise ops, pools other than max) stay float32.

Options: ``op_types`` - the op names to convert (fw names ``fused_matmul``,
``fused_conv``, ``conv``, ``max_pool``, or Paddle's ``matmul``, ``matmul_v2``, ``fc``,
``conv2d``, ``depthwise_conv2d``, ``fused_conv2d``, ``pool2d``); empty or None: all
(Paddle's ``set_bfloat16_op`` meaning). ``require_native`` (default True): on a CPU
without native bf16 (`fw.core.kernels.cpu.bf16.native_bf16`) the pass warns once and
leaves the program float32 - oneDNN would emulate bf16 there, slower than float32.
"""

from __future__ import annotations

import logging

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Operation
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import constant_array
from fw.core.ir.passes.rewrite import Rewriter

__all__ = ["CpuBfloat16", "BF16_OPS", "PADDLE_OP_NAMES", "resolve_op_types", "cpu_isa",
           "native_bf16"]

_log = logging.getLogger("fw.core.ir")

#: the fw ops this pass converts
BF16_OPS = ("fused_matmul", "fused_conv", "conv", "max_pool")
#: Paddle's op names (``Config.set_bfloat16_op``) -> the fw ops they stand for after
#: fw's fusion passes
PADDLE_OP_NAMES = {
    "matmul": ("fused_matmul",), "matmul_v2": ("fused_matmul",), "fc": ("fused_matmul",),
    "linear": ("fused_matmul",), "conv2d": ("fused_conv", "conv"),
    "depthwise_conv2d": ("fused_conv", "conv"), "fused_conv2d": ("fused_conv", "conv"),
    "pool2d": ("max_pool",),
}
_MIN_MACS = 1 << 20  # multiply-adds per sample below which an op stays float32
_MIN_MACS_CHAINED = 1 << 16  # the same for an op whose input is bf16 already
_F32, _BF16 = _dt.float32, _dt.bfloat16
_BF16_NP = _dt.bfloat16.np


def resolve_op_types(op_types) -> frozenset:
    """The fw op names of a ``set_bfloat16_op`` list (fw or Paddle names; names of
    neither, such as Paddle ops fw runs in float32, e.g. ``softmax``, select nothing).

    Args:
        op_types (Iterable[str] | None): the names; None or empty: every op of
            ``BF16_OPS``.

    Returns:
        frozenset[str]: fw op names.

    Examples:
        >>> import fw
        >>> from fw.core.ir.passes.cpu_bfloat16 import resolve_op_types
        >>> sorted(resolve_op_types(["conv2d"]))
        ['conv', 'fused_conv']
    """
    if op_types is None:
        return frozenset(BF16_OPS)
    if isinstance(op_types, str) or not hasattr(op_types, "__iter__"):
        raise InvalidTypeError(f"cpu_bfloat16: op_types must be a set or list of op names, "
                               f"got {type(op_types).__name__}")
    names = list(op_types)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise InvalidTypeError(f"cpu_bfloat16: op names are strings, got {bad!r}")
    if not names:
        return frozenset(BF16_OPS)
    out = set()
    for n in names:
        out.update(PADDLE_OP_NAMES.get(n, (n,) if n in BF16_OPS else ()))
    return frozenset(out)


def _weight(v, program):
    """The float32 array of a block-0 constant (never a parameter), else None."""
    if v is None or v.type.dtype is not _F32:
        return None
    return constant_array(v, program, 1 << 62)


class _Converter:
    """The bf16 values of one rewrite: converted constants and activation casts."""

    def __init__(self, rw):
        self.rw = rw
        self.consts: dict = {}  # id(f32 const Value) -> bf16 const Value
        self.casts: dict = {}  # id(f32 Value) -> bf16 Value

    def const(self, v, array):
        got = self.consts.get(id(v))
        if got is None:
            got = self.consts[id(v)] = self.rw.add_const(
                np.ascontiguousarray(array.astype(_BF16_NP)),
                f"{v.label or 'weight'}.bf16")
        return got

    @staticmethod
    def exact(v):
        """``u`` when `v` is ``cast(u, float32)`` of a bf16 ``u`` (then bf(v) == u)."""
        op = v.owner
        if isinstance(op, Operation) and op.name == "cast" and op.operands[0].type.dtype is _BF16:
            return op.operands[0]
        return None

    def has(self, v) -> bool:
        """Whether a bf16 copy of activation `v` exists already (no new cast needed)."""
        return id(v) in self.casts or self.exact(v) is not None

    def act(self, v, before):
        if v is None:
            return None
        got = self.casts.get(id(v))
        if got is None:
            got = self.exact(v)
            if got is None:
                got = self.rw.create("cast", [v], {"dtype": _BF16}, before=before).results[0]
            self.casts[id(v)] = got
        return got


def _macs_per_sample(op, W) -> int:
    """Multiply-adds of `op` per sample of its leading (batch) dimension: the result's
    other static elements times the products' length (dynamic dims count 1)."""
    out = op.results[0].type.shape
    n = 1
    for d in out[1:]:
        n *= max(int(d), 1)
    if op.name == "fused_matmul":
        cols = W.shape[0] if op.attrs["transpose_y"] else W.shape[1]
    else:
        cols = W.shape[0]  # conv: [C_out, C_in / groups, *K]
    if len(out) == 1:  # a vector result: no batch dimension
        n = out[0] if out[0] > 0 else cols
    return n * (W.size // max(cols, 1))


def _convertible(op, program, ops, conv) -> tuple | None:
    """(weight array, bias array or None) when `op` is converted, else None."""
    if op.name not in ops or len(op.results) != 1 or op.results[0].type.dtype is not _F32:
        return None
    if op.name == "max_pool":
        return () if _Converter.exact(op.operands[0]) is not None else None
    x, w, b = op.operands[0], op.operands[1], op.operands[2]
    if x.type.dtype is not _F32:
        return None
    if op.name != "conv" and op.operands[3] is not None and \
            op.operands[3].type.dtype is not _F32:
        return None
    W = _weight(w, program)
    # an input that is bf16 already (a converted op's result, or cast for an earlier
    # converted reader) costs no conversion
    least = _MIN_MACS_CHAINED if conv.has(x) else _MIN_MACS
    if W is None or W.ndim < 2 or _macs_per_sample(op, W) < least:
        return None
    B = None
    if b is not None:
        B = _weight(b, program)
        if B is None:
            return None
    return W, B


def cpu_isa() -> str:
    """oneDNN's effective ISA on this CPU (`fw.core.kernels.cpu.bf16.cpu_isa`).

    Returns:
        str: e.g. ``"avx2"``, ``"avx512_core_bf16"``; ``""`` without the native extension.

    Examples:
        >>> import fw
        >>> from fw.core.ir.passes.cpu_bfloat16 import cpu_isa
        >>> isinstance(cpu_isa(), str)
        True
    """
    from fw.core.kernels.cpu import bf16

    return bf16.cpu_isa()


def native_bf16() -> bool:
    """Whether this CPU multiplies bf16 natively (`fw.core.kernels.cpu.bf16.native_bf16`).

    Returns:
        bool: True for AVX512_BF16, AVX512_FP16 or AMX.

    Examples:
        >>> import fw
        >>> from fw.core.ir.passes.cpu_bfloat16 import native_bf16
        >>> isinstance(native_bf16(), bool)
        True
    """
    from fw.core.kernels.cpu import bf16

    return bf16.native_bf16()


def _native_ok(require_native) -> bool:
    if not require_native:
        return True
    if native_bf16():
        return True
    _log.warning("cpu_bfloat16: this CPU (oneDNN ISA %r) has no native bfloat16 dot "
                 "products (AVX512_BF16 or AMX); the program stays float32 (oneDNN would "
                 "emulate bf16, slower than float32)", cpu_isa() or "no native extension")
    return False


@register_pass
class CpuBfloat16(Pass):
    """See the module docstring."""

    name = "cpu_bfloat16"

    def __init__(self, op_types=None, require_native: bool = True):
        self.ops = resolve_op_types(op_types)
        if not isinstance(require_native, bool):
            raise InvalidArgumentError(f"cpu_bfloat16: require_native must be a bool, got "
                                       f"{require_native!r}")
        self.require_native = require_native

    def run(self, program) -> bool:
        if not self.ops or not _native_ok(self.require_native):
            return False
        rw = Rewriter(program)
        conv = _Converter(rw)
        changed = False
        # the top block only: a cast placed before the first converted reader dominates
        # every later reader there (nested blocks keep float32)
        for op in list(program.block.ops):
            if op.parent is None:
                continue
            got = _convertible(op, program, self.ops, conv)
            if got is None:
                continue
            if op.name == "max_pool":
                operands = [conv.act(op.operands[0], op)]
            else:
                W, B = got
                operands = [conv.act(op.operands[0], op), conv.const(op.operands[1], W),
                            None if B is None else conv.const(op.operands[2], B)]
                if op.name != "conv":
                    operands.append(conv.act(op.operands[3], op))
            new = rw.create(op.name, operands, dict(op.attrs), before=op)
            back = rw.create("cast", [new.results[0]], {"dtype": _F32}, before=op)
            rw.replace_op(op, [back.results[0]])
            changed = True
        if changed:
            # the float32 casts between converted ops, the float32 weights and what
            # earlier passes left dead (layout_nhwc's unused transposes) go now: a dead
            # reader would keep ``fuse_elementwise`` from fusing a region's edge casts
            # with the elementwise ops between them (cast -> relu -> cast: one pass)
            from fw.core.ir.passes import get_pass

            get_pass("dce").run(program)
        return changed
