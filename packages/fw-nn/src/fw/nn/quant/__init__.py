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
    ``group_size`` rows) for `weight_only_linear`. The codes are stored transposed,
    ``[n, k]`` int8 (int4: two codes per byte, ``[n, k / 2]``), with float32 scales.

    Args:
        x (Tensor): the float weight ``[k, n]`` (Paddle's Linear layout).
        algo (str, optional): ``"weight_only_int8"`` or ``"weight_only_int4"``.
            Default: "weight_only_int8".
        arch (int, optional): a GPU layout selector in Paddle; accepted and ignored (fw has
            one portable layout). Default: None.
        group_size (int, optional): -1 for one scale per output channel, or the number
            of rows (64 or 128 in Paddle) that share a scale. Default: -1.

    Returns:
        tuple[Tensor, Tensor]: ``(codes, scale)``; scale is ``[n]`` or ``[k / group_size, n]``.

    Examples:
        >>> import fw
        >>> w = fw.to_tensor([[1.0, -0.5], [0.5, 2.0]])
        >>> q, scale = fw.nn.quant.weight_quantize(w)
        >>> q.shape, scale.shape, q.dtype
        ([2, 2], [2], fw.int8)
        >>> q.tolist(), [round(v, 4) for v in scale.tolist()]
        ([[127, 64], [-32, 127]], [0.0079, 0.0157])
    """
    return op("weight_quantize", [x], algo=algo, group_size=group_size)


def weight_dequantize(x, scale, algo="weight_only_int8", out_dtype="float16", group_size=-1):
    """The float ``[k, n]`` weight that a `weight_quantize` result stands for.

    Args:
        x (Tensor): the int8 codes from `weight_quantize`.
        scale (Tensor): their scales.
        algo (str, optional): ``"weight_only_int8"`` or ``"weight_only_int4"``.
            Default: "weight_only_int8".
        out_dtype (str, optional): the result dtype. Default: "float16".
        group_size (int, optional): -1 for one scale per output channel, or the number
            of rows (64 or 128 in Paddle) that share a scale. Default: -1.

    Returns:
        Tensor: ``[k, n]`` in ``out_dtype``.

    Examples:
        >>> import fw
        >>> w = fw.to_tensor([[1.0, -0.5], [0.5, 2.0]])
        >>> q, scale = fw.nn.quant.weight_quantize(w)
        >>> fw.nn.quant.weight_dequantize(q, scale, out_dtype='float32').numpy().round(2).tolist()
        [[1.0, -0.5], [0.5, 2.0]]
    """
    return op("weight_dequantize", [x, scale], algo=algo, out_dtype=out_dtype,
              group_size=group_size)


def weight_only_linear(x, weight, bias=None, weight_scale=None, weight_dtype="int8", arch=None,
                       group_size=-1):
    """A Linear on a quantized weight: ``x @ weight_dequantize(weight, weight_scale) +
    bias``, computed in float32 and returned in ``x``'s dtype; differentiable in ``x``,
    ``bias`` and ``weight_scale``.

    Args:
        x (Tensor): the input ``[*, k]``.
        weight (Tensor): the codes ``[n, k]`` int8 (or packed int4 ``[n, k / 2]``).
        bias (Tensor, optional): ``[n]``. Default: None.
        weight_scale (Tensor): the scales from `weight_quantize` (required).
        weight_dtype (str, optional): ``"int8"`` or ``"int4"``. Default: "int8".
        arch (int, optional): accepted and ignored. Default: None.
        group_size (int, optional): -1 for one scale per output channel, or the number
            of rows (64 or 128 in Paddle) that share a scale. Default: -1.

    Returns:
        Tensor: ``[*, n]``.

    Examples:
        >>> import fw
        >>> w = fw.randn([16, 4])
        >>> q, scale = fw.nn.quant.weight_quantize(w)
        >>> x = fw.randn([2, 16])
        >>> y = fw.nn.quant.weight_only_linear(x, q, weight_scale=scale)
        >>> y.shape, bool(fw.allclose(y, x @ w, atol=0.1))
        ([2, 4], True)
    """
    if weight_scale is None:
        raise InvalidArgumentError("weight_only_linear: 'weight_scale' is required (the scale "
                                   "weight_quantize returned)")
    return op("weight_only_linear", [x, weight, bias, weight_scale], weight_dtype=weight_dtype,
              group_size=group_size)


class WeightOnlyLinear(Layer):
    """A Linear layer whose weight is stored as int8 (or packed int4) codes with float32
    scales. ``weight`` (``[n, k]`` int8) and ``weight_scale`` are persistable buffers, saved
    as they are (1 byte, or half a byte, per weight); ``bias`` stays a float parameter.
    Build one from a trained `Linear` with `from_linear`.

    Args:
        in_features (int): the input size k.
        out_features (int): the output size n.
        algo (str, optional): ``"weight_only_int8"`` or ``"weight_only_int4"``.
            Default: "weight_only_int8".
        group_size (int, optional): -1 for one scale per output channel, or the number
            of rows (64 or 128 in Paddle) that share a scale. Default: -1.
        bias (bool, optional): whether the layer has a bias. Default: True.
        dtype (str, optional): the bias dtype. Default: "float32".

    Shape:
        - input: ``[*, in_features]``; output: ``[*, out_features]``.

    Examples:
        >>> import fw
        >>> layer = fw.nn.quant.WeightOnlyLinear(16, 4)
        >>> layer.weight.dtype, layer.weight.shape
        (fw.int8, [4, 16])
        >>> layer(fw.ones([2, 16])).shape
        [2, 4]
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
        """A `WeightOnlyLinear` computing what ``linear`` computes, up to quantization error.

        Args:
            linear (Linear): the float layer.
            algo (str, optional): ``"weight_only_int8"`` or ``"weight_only_int4"``.
                Default: "weight_only_int8".
            group_size (int, optional): -1 for one scale per output channel, or the number
                of rows (64 or 128 in Paddle) that share a scale. Default: -1.

        Returns:
            WeightOnlyLinear: the new layer.

        Examples:
            >>> import fw
            >>> fc = fw.nn.Linear(64, 8)
            >>> qfc = fw.nn.quant.WeightOnlyLinear.from_linear(fc)
            >>> x = fw.randn([4, 64])
            >>> bool(fw.allclose(qfc(x), fc(x), atol=0.05))
            True
            >>> qfc.size_bytes() < 64 * 8 * 4
            True
        """
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
        """The bytes held by the stored weight codes, scales and bias.

        Returns:
            int: the size in bytes.

        Examples:
            >>> import fw
            >>> fw.nn.quant.WeightOnlyLinear(64, 8).size_bytes()
            576
        """
        return int(sum(np.asarray(t.numpy()).nbytes for t in
                       (self.weight, self.weight_scale, self.bias) if t is not None))
