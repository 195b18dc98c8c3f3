"""``fw.device.cuda``: CUDA device queries (zero devices without CuPy or a GPU)."""

from fw.core import place as _pl


def device_count() -> int:
    return _pl.device_count("gpu")


def is_available() -> bool:
    return device_count() > 0


def synchronize(device=None) -> None:
    idx = 0 if device is None else _pl.parse_place(device).index
    _pl.get_backend("gpu").synchronize(idx)


def current_device() -> int:
    p = _pl.current_place()
    return p.index if p.kind == "gpu" else 0
