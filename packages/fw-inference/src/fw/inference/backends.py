"""Paddle Inference's accelerator-specific names on a build without them:
`XpuConfig` (Kunlun XPU settings) and `get_trt_compile_version` /
`get_trt_runtime_version` (TensorRT).

fw has no XPU or TensorRT backend. Paddle's CPU build still has these names:
``XpuConfig()`` is a plain settings object (fields and defaults below, read from
Paddle 3.3.1's CPU build) and both TensorRT versions are ``(0, 0, 0)`` ("not
compiled with / no runtime found"). fw does the same, so code that probes them
runs; nothing in fw reads an XpuConfig (Config.enable_xpu is not available).
"""
from __future__ import annotations

__all__ = ["XpuConfig", "get_trt_compile_version", "get_trt_runtime_version"]

# field -> default, as Paddle 3.3.1's CPU build reports them (paddle.inference.XpuConfig())
_XPU_FIELDS = {
    "device_id": 0, "l3_size": 0, "l3_ptr": None, "l3_autotune_size": 0, "context_gm_size": -1,
    "context": None, "stream": None, "conv_autotune_level": 0, "conv_autotune_file": "",
    "conv_autotune_file_writeback": False, "fc_autotune_level": 0, "fc_autotune_file": "",
    "fc_autotune_file_writeback": False, "gemm_compute_precision": 1,
    "transformer_softmax_optimize_level": 0, "transformer_encoder_adaptive_seqlen": True,
    "quant_post_static_gelu_out_threshold": 10.0, "quant_post_dynamic_activation_method": 0,
    "quant_post_dynamic_weight_precision": 1, "quant_post_dynamic_op_types": [],
}


class XpuConfig:
    """Settings of a Kunlun XPU predictor (Paddle's ``paddle.inference.XpuConfig``): an
    object of plain fields with Paddle's defaults (``device_id`` 0, ``l3_size`` 0,
    ``gemm_compute_precision`` 1, ...). fw has no XPU backend, so nothing consumes it;
    assigning a field that Paddle's XpuConfig lacks is an AttributeError, as there.

    Examples:
        >>> import fw
        >>> import fw.inference as infer
        >>> xpu = infer.XpuConfig()
        >>> xpu.device_id, xpu.l3_size, xpu.context_gm_size
        (0, 0, -1)
        >>> xpu.l3_size = 16 * 1024 * 1024
        >>> xpu.l3_size
        16777216
    """

    __slots__ = tuple(_XPU_FIELDS)

    def __init__(self):
        for k, v in _XPU_FIELDS.items():
            setattr(self, k, list(v) if isinstance(v, list) else v)

    def __repr__(self):
        return "XpuConfig(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _XPU_FIELDS) + ")"


def get_trt_compile_version():
    """The TensorRT version fw was compiled against: ``(0, 0, 0)`` (no TensorRT), as
    Paddle's CPU build returns.

    Returns:
        tuple[int, int, int]: (major, minor, patch).

    Examples:
        >>> import fw
        >>> import fw.inference as infer
        >>> infer.get_trt_compile_version()
        (0, 0, 0)
    """
    return (0, 0, 0)


def get_trt_runtime_version():
    """The TensorRT version found at run time: ``(0, 0, 0)`` (fw never loads TensorRT),
    as Paddle's CPU build returns.

    Returns:
        tuple[int, int, int]: (major, minor, patch).

    Examples:
        >>> import fw
        >>> import fw.inference as infer
        >>> infer.get_trt_runtime_version()
        (0, 0, 0)
    """
    return (0, 0, 0)
