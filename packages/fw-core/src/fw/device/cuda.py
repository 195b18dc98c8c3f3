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
    return _pl.device_count("gpu")


def is_available() -> bool:
    return device_count() > 0


def synchronize(device=None) -> None:
    _pl.get_backend("gpu").synchronize(_index(device))


def current_device() -> int:
    p = _pl.current_place()
    return p.index if p.kind == "gpu" else 0


def _mem():
    return _pl.get_backend("gpu").memory


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on the device."""
    return _mem().allocated(_index(device))


def max_memory_allocated(device=None) -> int:
    """The peak of `memory_allocated` since start or the last reset."""
    return _mem().max_allocated(_index(device))


def memory_reserved(device=None) -> int:
    """Bytes the caching pool holds from the driver (in use or cached)."""
    return _mem().reserved(_index(device))


def max_memory_reserved(device=None) -> int:
    return _mem().max_reserved(_index(device))


def reset_max_memory_allocated(device=None) -> None:
    _mem().reset_peak(_index(device), ("used",))


def reset_max_memory_reserved(device=None) -> None:
    _mem().reset_peak(_index(device), ("held",))


def reset_peak_memory_stats(device=None) -> None:
    _mem().reset_peak(_index(device))


def empty_cache() -> None:
    """Return cached, unused blocks to the driver (a no-op without a GPU, as in Paddle)."""
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
    cp = _pl.get_backend("gpu").cp
    return _Properties(cp.cuda.runtime.getDeviceProperties(_index(device)))


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    p = get_device_properties(device)
    return p.major, p.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 math needs compute capability 8.0 (Ampere) or newer."""
    return is_available() and get_device_capability()[0] >= 8
