"""``paddle.linalg.fp8_fp8_half_gemm_fused``: a GEMM of two float8 tensors with a fused
scale, bias and activation, written in half precision.

Paddle runs it on CUTLASS FP8 kernels of Hopper/Ada GPUs. fw computes the same result
from its ops: both operands are widened to float32 (every float8 value is exact there),
multiplied, scaled, biased, activated and rounded once to `output_dtype`, which is what
the fused kernel's float32 accumulator gives up to summation order.
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ops import _api
from fw.core.ops._api import public

_FP8 = (_dt.float8_e4m3fn, _dt.float8_e5m2)
_ACTS = ("identity", "relu", "gelu")


def _f(name):
    return _api.FUNCTIONS[name]


@public("linalg.fp8_fp8_half_gemm_fused")
def fp8_fp8_half_gemm_fused(x, y, transpose_x=False, transpose_y=False, bias=None, scale=1.0,
                            output_dtype="float16", act="identity", name=None):
    """``act(scale * (x @ y) + bias)`` of float8 operands, in float16 or bfloat16.

    Args:
        x (Tensor): float8_e4m3fn or float8_e5m2, ``[..., M, K]``.
        y (Tensor): float8, ``[..., K, N]``.
        transpose_x (bool, optional): use ``x^T``. Default False.
        transpose_y (bool, optional): use ``y^T``. Default False.
        bias (Tensor, optional): ``[N]``, added after scaling.
        scale (float, optional): multiplies the product. Default 1.0.
        output_dtype (str, optional): 'float16' (default) or 'bfloat16'.
        act (str, optional): 'identity' (default), 'relu' or 'gelu'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, N]`` of `output_dtype`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.ones([2, 3]).astype(fw.float8_e4m3fn)
            >>> y = fw.full([3, 4], 2.0).astype(fw.float8_e4m3fn)
            >>> out = fw.linalg.fp8_fp8_half_gemm_fused(x, y, scale=0.5)
            >>> out.dtype, out.tolist()[0]
            (fw.float16, [3.0, 3.0, 3.0, 3.0])
    """
    fn = "fp8_fp8_half_gemm_fused"
    for n, t in (("x", x), ("y", y)):
        if getattr(t, "dtype", None) not in _FP8:
            raise InvalidArgumentError(f"{fn}: {n} must be float8_e4m3fn or float8_e5m2, got "
                                       f"{getattr(t, 'dtype', type(t).__name__)}")
    if output_dtype not in ("float16", "bfloat16"):
        raise InvalidArgumentError(f"{fn}: output_dtype must be 'float16' or 'bfloat16', got "
                                   f"{output_dtype!r}")
    if act not in _ACTS:
        raise InvalidArgumentError(f"{fn}: act must be one of {list(_ACTS)}, got {act!r}")
    out = _f("matmul")(_f("cast")(x, "float32"), _f("cast")(y, "float32"),
                       transpose_x=transpose_x, transpose_y=transpose_y)
    out = out * float(scale)
    if bias is not None:
        out = out + _f("cast")(bias, "float32")
    if act == "relu":
        out = _f("maximum")(out, _f("zeros_like")(out))
    elif act == "gelu":
        out = _f("gelu")(out) if "gelu" in _api.FUNCTIONS else \
            out * 0.5 * (1.0 + _f("erf")(out * 0.7071067811865476))
    return _f("cast")(out, output_dtype)
