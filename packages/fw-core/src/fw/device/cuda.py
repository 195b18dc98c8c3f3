"""``fw.device.cuda``: CUDA device queries, memory counters, streams and events
(zero devices without CuPy or a GPU; the calls that need one say why it is missing).

Memory is CuPy's caching pool: ``memory_allocated`` counts bytes in live arrays,
``memory_reserved`` what the pool holds from the driver, ``empty_cache`` returns the
unused part."""

from __future__ import annotations

from fw.core import place as _pl
from fw.device.streams import Event, Stream, current_stream, set_stream, stream_guard
from fw.device.streams import _gpu_index as _index

__all__ = ["device_count", "is_available", "synchronize", "current_device",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_max_memory_allocated", "reset_max_memory_reserved",
           "reset_peak_memory_stats", "empty_cache", "get_device_properties",
           "get_device_name", "get_device_capability", "is_bf16_supported",
           "Stream", "Event", "current_stream", "set_stream", "stream_guard"]


def device_count() -> int:
    """The number of NVIDIA GPUs CuPy sees (0 without CuPy or a GPU).

    Returns:
        int.

    Examples:
        >>> import fw
        >>> isinstance(fw.device.cuda.device_count(), int)
        True
    """
    return _pl.device_count("gpu")


def is_available() -> bool:
    """Whether a GPU is usable.

    Returns:
        bool.

    Examples:
        >>> import fw
        >>> fw.device.cuda.is_available() == (fw.device.cuda.device_count() > 0)
        True
    """
    return device_count() > 0


def synchronize(device=None) -> None:
    """Wait until all work queued on the GPU is done.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        None.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.synchronize(0)
    """
    _pl.get_backend("gpu").synchronize(_index(device))


def current_device() -> int:
    """The index of the current GPU (0 when the current device is the CPU).

    Returns:
        int.

    Examples:
        >>> import fw
        >>> isinstance(fw.device.cuda.current_device(), int)
        True
    """
    p = _pl.current_place()
    return p.index if p.kind == "gpu" else 0


def _mem():
    return _pl.get_backend("gpu").memory


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on the GPU.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        int.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            x = fw.ones([1024, 1024], dtype='float32').cuda()
            fw.device.cuda.memory_allocated() >= 4 * 1024 * 1024   # True
    """
    return _mem().allocated(_index(device))


def max_memory_allocated(device=None) -> int:
    """The peak of `memory_allocated` since the start or the last reset.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        int.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.max_memory_allocated(0)
    """
    return _mem().max_allocated(_index(device))


def memory_reserved(device=None) -> int:
    """Bytes the caching pool holds from the driver (in use or cached).

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        int.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.memory_reserved(0)
    """
    return _mem().reserved(_index(device))


def max_memory_reserved(device=None) -> int:
    """The peak of `memory_reserved` since the start or the last reset.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        int.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.max_memory_reserved(0)
    """
    return _mem().max_reserved(_index(device))


def reset_max_memory_allocated(device=None) -> None:
    """Reset the peak that `max_memory_allocated` reports.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        None.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.reset_max_memory_allocated(0)
    """
    _mem().reset_peak(_index(device), ("used",))


def reset_max_memory_reserved(device=None) -> None:
    """Reset the peak that `max_memory_reserved` reports.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        None.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.reset_max_memory_reserved(0)
    """
    _mem().reset_peak(_index(device), ("held",))


def reset_peak_memory_stats(device=None) -> None:
    """Reset both peaks (allocated and reserved).

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        None.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.reset_peak_memory_stats(0)
    """
    _mem().reset_peak(_index(device))


def empty_cache() -> None:
    """Return cached, unused memory blocks to the driver (a no-op without a GPU, as in
    Paddle).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> fw.device.cuda.empty_cache()
    """
    if is_available():
        _mem().empty_cache()


class _Properties:
    __slots__ = ("name", "major", "minor", "total_memory", "multi_processor_count")

    def __init__(self, d):
        name = d["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(d["major"]), int(d["minor"])
        self.total_memory = int(d["totalGlobalMem"])
        self.multi_processor_count = int(d["multiProcessorCount"])

    def __repr__(self) -> str:
        return (f"_gpuDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _Properties:
    """The GPU's name, memory and compute capability.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        object, with ``name``, ``major``, ``minor``, ``total_memory`` and
        ``multi_processor_count``.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            props = fw.device.cuda.get_device_properties(0)
            props.name, props.total_memory
    """
    cp = _pl.get_backend("gpu").cp
    return _Properties(cp.cuda.runtime.getDeviceProperties(_index(device)))


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``'NVIDIA H100 80GB HBM3'``.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        str.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.get_device_name(0)
    """
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    """The GPU's compute capability ``(major, minor)``.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        tuple[int, int].

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            fw.device.cuda.get_device_capability(0)   # (9, 0) on an H100
    """
    p = get_device_properties(device)
    return p.major, p.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current GPU computes in bfloat16 (compute capability 8.0, Ampere,
    or newer); False without a GPU.

    Args:
        including_emulation (bool, optional): accepted for compatibility. Default: True.

    Returns:
        bool.

    Examples:
        >>> import fw
        >>> isinstance(fw.device.cuda.is_bf16_supported(), bool)
        True
    """
    return is_available() and get_device_capability()[0] >= 8
