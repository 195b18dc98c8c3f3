"""CUDA streams and events (Paddle's ``paddle.device.Stream``/``Event``), over
CuPy's. Without a GPU, making one raises the gpu backend's error saying why."""

from __future__ import annotations

from contextlib import contextmanager

from fw.core import place as _pl

__all__ = ["Stream", "Event", "current_stream", "set_stream", "stream_guard"]


def _gpu_index(device) -> int:
    """The gpu index `device` names ('gpu:1', 1, a Place; None: the current gpu or 0)."""
    if device is None:
        p = _pl.current_place()
        return p.index if p.kind == "gpu" else 0
    p = _pl.parse_place(device)
    if p.kind != "gpu":
        raise ValueError(f"expected a gpu device, got {p}")
    return p.index


def _cupy():
    return _pl.get_backend("gpu").cp  # raises, naming what is missing, without a GPU


class Stream:
    """A queue of GPU work. ``Stream(device=None, priority=2)``: Paddle's priorities
    are 1 (high) and 2 (normal)."""

    def __init__(self, device=None, priority: int = 2, blocking: bool = False, *,
                 _wrap=None):
        cp = _cupy()
        self.device = _pl.Place("gpu", _gpu_index(device))
        if _wrap is not None:
            self._s = _wrap
            return
        if priority not in (1, 2):
            raise ValueError(f"Stream: priority must be 1 (high) or 2 (normal), got {priority}")
        with cp.cuda.Device(self.device.index):
            # CUDA: a lower number is a higher priority, clamped to the device's range
            self._s = cp.cuda.Stream(non_blocking=not blocking,
                                     priority=-1 if priority == 1 else 0)

    @property
    def cuda_stream(self) -> int:
        """The raw ``cudaStream_t`` (for libraries that take one)."""
        return int(self._s.ptr)

    def synchronize(self) -> None:
        self._s.synchronize()

    def query(self) -> bool:
        """True when all queued work has finished."""
        return bool(self._s.done)

    def wait_event(self, event: Event) -> None:
        self._s.wait_event(event._e)

    def wait_stream(self, stream: Stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)

    def __repr__(self) -> str:
        return f"<fw.device.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A marker in a stream: ``record``, ``query``, ``synchronize``, ``elapsed_time``."""

    def __init__(self, device=None, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        cp = _cupy()
        self.device = _pl.Place("gpu", _gpu_index(device))
        with cp.cuda.Device(self.device.index):
            self._e = cp.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                    interprocess=interprocess)

    def record(self, stream: Stream | None = None) -> None:
        self._e.record((stream or current_stream(self.device))._s)

    def query(self) -> bool:
        return bool(self._e.done)

    def synchronize(self) -> None:
        self._e.synchronize()

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event to `end` (both recorded, timing enabled)."""
        return float(_cupy().cuda.get_elapsed_time(self._e, end._e))


def current_stream(device=None) -> Stream:
    cp = _cupy()
    idx = _gpu_index(device)
    with cp.cuda.Device(idx):
        return Stream(f"gpu:{idx}", _wrap=cp.cuda.get_current_stream())


def set_stream(stream: Stream) -> Stream:
    """Make `stream` current on its device; returns the one it replaces."""
    prev = current_stream(stream.device)
    stream._s.use()
    return prev


@contextmanager
def stream_guard(stream: Stream | None):
    """Queue the block's GPU work on `stream` (None: leave the current one)."""
    if stream is None:
        yield
        return
    with stream._s:
        yield
