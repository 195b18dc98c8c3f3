"""fw.nn.quant: Paddle's ``paddle.nn.quant`` weight-only quantization functions and the
layer that runs a Linear on an int8/int4 weight.

The ops live in fw-core's table (``fw.core.ops.quant``: the exact layout and rounding
are documented there); this module gives them Paddle's signatures:

- ``weight_quantize(x, algo="weight_only_int8", arch=None, group_size=-1)`` ->
  ``(out, scale)``: x ``[k, n]`` -> out int8 ``[n, k]`` (int4: two codes per byte,
  ``[n, k/2]``), scale float32 ``[n]`` or ``[k/group_size, n]``;
- ``weight_dequantize(x, scale, algo="weight_only_int8", out_dtype="float16",
  group_size=-1)`` -> the ``[k, n]`` weight;
- ``weight_only_linear(x, weight, bias=None, weight_scale=None, weight_dtype="int8",
  arch=None, group_size=-1)`` -> ``x @ dequantized weight + bias``.

``arch`` picks a GPU-specific layout in Paddle; fw has one portable layout and accepts
and ignores it. ``WeightOnlyLinear`` replaces a ``fw.nn.Linear`` (see
`WeightOnlyLinear.from_linear`); fw.quantization's ``weight_only_quantize`` swaps every
Linear of a model.
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.nn.functional._helpers import op
from fw.nn.layer.layers import Layer

__all__ = ["weight_quantize", "weight_dequantize", "weight_only_linear", "WeightOnlyLinear"]

_ALGOS = ("weight_only_int8", "weight_only_int4")


def weight_quantize(x, algo="weight_only_int8", arch=None, group_size=-1):
    """Quantize a ``[k, n]`` weight symmetrically per output channel (or per group of
    ``group_size`` rows): returns ``(out, scale)``.

    >>> import fw
    >>> q, s = fw.nn.quant.weight_quantize(fw.ones([4, 2]))
    >>> q.shape, s.shape, q.dtype
    ([2, 4], [2], fw.int8)
    """
    return op("weight_quantize", [x], algo=algo, group_size=group_size)


def weight_dequantize(x, scale, algo="weight_only_int8", out_dtype="float16", group_size=-1):
    """The ``[k, n]`` weight a `weight_quantize` result stands for, in ``out_dtype``."""
    return op("weight_dequantize", [x, scale], algo=algo, out_dtype=out_dtype,
              group_size=group_size)


def weight_only_linear(x, weight, bias=None, weight_scale=None, weight_dtype="int8", arch=None,
                       group_size=-1):
    """``x @ weight_dequantize(weight, weight_scale) + bias`` (weight ``[n, k]`` int8 or
    packed int4), computed in float32 and returned in x's dtype; differentiable in x,
    bias and weight_scale."""
    if weight_scale is None:
        raise InvalidArgumentError("weight_only_linear: 'weight_scale' is required (the scale "
                                   "weight_quantize returned)")
    return op("weight_only_linear", [x, weight, bias, weight_scale], weight_dtype=weight_dtype,
              group_size=group_size)


class WeightOnlyLinear(Layer):
    """A Linear whose weight is stored as int8 (or packed int4) codes with float32 scales:
    ``weight`` ``[n, k]`` int8 and ``weight_scale`` are persistable buffers (saved and
    exported as they are, so the file holds 1 byte (int8) or half a byte (int4) per
    weight); ``bias`` stays a float parameter.

    Args:
        in_features, out_features: the Linear's k and n.
        algo: ``"weight_only_int8"`` or ``"weight_only_int4"``.
        group_size: -1 (per output channel) or the rows per scale group.
    """

    def __init__(self, in_features, out_features, algo="weight_only_int8", group_size=-1,
                 bias=True, dtype="float32"):
        super().__init__()
        if algo not in _ALGOS:
            raise InvalidArgumentError(f"WeightOnlyLinear: 'algo' must be one of {list(_ALGOS)}, "
                                       f"got {algo!r}")
        import fw

        self.in_features, self.out_features = in_features, out_features
        self.algo, self.group_size = algo, group_size
        kp = in_features if algo == "weight_only_int8" else in_features // 2
        self.register_buffer("weight", fw.zeros([out_features, kp], "int8"))
        sshape = [out_features] if group_size == -1 else [in_features // group_size,
                                                          out_features]
        self.register_buffer("weight_scale", fw.ones(sshape, "float32"))
        self.bias = self.create_parameter([out_features], is_bias=True, dtype=dtype) \
            if bias else None

    @classmethod
    def from_linear(cls, linear, algo="weight_only_int8", group_size=-1):
        """A WeightOnlyLinear computing what `linear` computes, to quantization error."""
        k, n = linear.weight.shape
        layer = cls(k, n, algo, group_size, bias=linear.bias is not None)
        q, s = weight_quantize(linear.weight.detach(), algo=algo, group_size=group_size)
        layer.weight.set_value(q)
        layer.weight_scale.set_value(s)
        if linear.bias is not None:
            layer.bias.set_value(linear.bias.detach())
        return layer

    def forward(self, x):
        return weight_only_linear(x, self.weight, self.bias, self.weight_scale,
                                  weight_dtype=self.algo[len("weight_only_"):],
                                  group_size=self.group_size)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"algo={self.algo}, group_size={self.group_size}")

    def size_bytes(self) -> int:
        """Bytes of the stored weight, scales and bias."""
        return int(sum(np.asarray(t.numpy()).nbytes for t in
                       (self.weight, self.weight_scale, self.bias) if t is not None))
