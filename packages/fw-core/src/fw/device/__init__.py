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
    """Whether a GPU is usable (CuPy sees an NVIDIA GPU). Paddle's: any non-cpu device.

    Returns:
        bool.

    Examples:
        >>> import fw
        >>> fw.device.is_available() == (fw.device.cuda.device_count() > 0)
        True
    """
    return cuda.is_available()


def get_all_device_type() -> list:
    """The device kinds fw can use here: ``'cpu'``, plus ``'gpu'`` when CuPy sees a GPU.

    Returns:
        list[str].

    Examples:
        >>> import fw
        >>> "cpu" in fw.device.get_all_device_type()
        True
    """
    kinds = ["cpu"]
    if _pl.device_count("gpu"):
        kinds.append("gpu")
    return kinds


def get_available_device() -> list:
    """The devices fw can use here: ``'cpu'`` and ``'gpu:N'`` for each GPU.

    Returns:
        list[str].

    Examples:
        >>> import fw
        >>> fw.device.get_available_device()[0]
        'cpu'
    """
    out = ["cpu"]
    out += [f"gpu:{i}" for i in range(_pl.device_count("gpu"))]
    return out


def device_count(kind: str = "gpu") -> int:
    """The number of devices of a kind.

    Args:
        kind (str, optional): ``"gpu"`` (GPUs CuPy sees) or ``"cpu"`` (1). Default: "gpu".

    Returns:
        int.

    Examples:
        >>> import fw
        >>> fw.device.device_count("cpu")
        1
        >>> fw.device.device_count() == fw.device.cuda.device_count()
        True
    """
    return _pl.device_count(kind)


def synchronize(device=None) -> None:
    """Wait until all work queued on `device` is done (a no-op on CPU, whose ops run
    synchronously).

    Args:
        device (str|Place, optional): the device; None: the current one. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> y = fw.ones([2, 2]) @ fw.ones([2, 2])
        >>> fw.device.synchronize("cpu")
    """
    p = _pl.parse_place(device) if device is not None else _pl.current_place()
    _pl.get_backend(p.kind).synchronize(p.index)

# paddle.device.FloatTensor … are the same constructors as paddle.FloatTensor
globals().update(_TENSOR_TYPES)
# paddle.device.device: the device_guard context manager (set here, after `synchronize`, whose
# argument is also named device)
globals()["device"] = device_guard
__all__ += list(_TENSOR_TYPES)
