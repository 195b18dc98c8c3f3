"""``fw.device``: Paddle's ``paddle.device`` namespace (current device, device
queries, synchronisation). ``fw.device.cuda`` holds the CUDA-specific calls."""

from fw.core import place as _pl
from fw.core.api.composite import TENSOR_TYPES as _TENSOR_TYPES
from fw.core.place import get_device, is_compiled_with_cuda, set_device  # noqa: F401
from fw.device import cuda  # noqa: F401
from fw.device.build_info import (  # noqa: F401
    IPUPlace,
    StreamContext,
    XPUPinnedPlace,
    XPUPlace,
    device_guard,
    get_all_custom_device_type,
    get_available_custom_device,
    get_cuda_rng_state,
    get_cudnn_version,
    get_rng_state,
    get_stream_from_external,
    ipc_collect,
    is_compiled_with_cinn,
    is_compiled_with_custom_device,
    is_compiled_with_distribute,
    is_compiled_with_ipu,
    is_compiled_with_rocm,
    is_compiled_with_xpu,
    is_current_stream_capturing,
    manual_seed,
    set_cuda_rng_state,
    set_rng_state,
)
from fw.device.build_info import __all__ as _build_info_all
from fw.device.cuda import (  # noqa: F401
    empty_cache,
    get_device_capability,
    get_device_name,
    get_device_properties,
    is_bf16_supported,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    reset_max_memory_allocated,
    reset_max_memory_reserved,
    reset_peak_memory_stats,
)
from fw.device.streams import Event, Stream, current_stream, set_stream, stream_guard  # noqa: F401

__all__ = ["set_device", "get_device", "is_compiled_with_cuda", "get_all_device_type",
           "get_available_device", "synchronize", "cuda", "device_count", "is_available",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_max_memory_allocated", "reset_max_memory_reserved",
           "reset_peak_memory_stats", "empty_cache", "get_device_properties",
           "get_device_name", "get_device_capability", "is_bf16_supported", "Stream", "Event",
           "current_stream", "set_stream", "stream_guard", *_build_info_all]


def is_available() -> bool:
    """True when a GPU is usable (Paddle: any non-cpu device)."""
    return cuda.is_available()


def get_all_device_type() -> list:
    """Device kinds fw can use here ('cpu', plus 'gpu' when CuPy sees a GPU)."""
    kinds = ["cpu"]
    if _pl.device_count("gpu"):
        kinds.append("gpu")
    return kinds


def get_available_device() -> list:
    out = ["cpu"]
    out += [f"gpu:{i}" for i in range(_pl.device_count("gpu"))]
    return out


def device_count(kind: str = "gpu") -> int:
    return _pl.device_count(kind)


def synchronize(device=None) -> None:
    """Wait for all work queued on `device` (the current one by default)."""
    p = _pl.parse_place(device) if device is not None else _pl.current_place()
    _pl.get_backend(p.kind).synchronize(p.index)

# paddle.device.FloatTensor … are the same constructors as paddle.FloatTensor
globals().update(_TENSOR_TYPES)
# paddle.device.device: the device_guard context manager (set here, after `synchronize`, whose
# argument is also named device)
globals()["device"] = device_guard
__all__ += list(_TENSOR_TYPES)
