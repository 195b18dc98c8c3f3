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
    """A CUDA stream (CuPy's): GPU work queued on it runs in order, concurrently
    with other streams.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.
        priority (int, optional): 1 (high) or 2 (normal). Default: 2.
        blocking (bool, optional): synchronise with the default stream. Default: False.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            s = fw.device.Stream()
            with fw.device.stream_guard(s):
                y = fw.ones([4, 4]).cuda() * 2
            s.synchronize()
    """

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
        """The raw ``cudaStream_t`` handle, as an int.

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Returns:
            int.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                s = fw.device.Stream()
                s.cuda_stream
        """
        return int(self._s.ptr)

    def synchronize(self) -> None:
        """Wait until all work queued on this stream is done.

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Returns:
            None.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                s = fw.device.Stream()
                s.synchronize()
        """
        self._s.synchronize()

    def query(self) -> bool:
        """Whether all work queued on this stream is done.

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Returns:
            bool.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                s = fw.device.Stream()
                s.query()   # True when idle
        """
        return bool(self._s.done)

    def wait_event(self, event: Event) -> None:
        """Make future work on this stream wait for `event`.

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Args:
            event (Event): the event to wait for.

        Returns:
            None.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                s = fw.device.Stream()
                e = fw.device.Event()
                e.record()
                s.wait_event(e)
        """
        self._s.wait_event(event._e)

    def wait_stream(self, stream: Stream) -> None:
        """Make future work on this stream wait for the work queued on `stream` so far.

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Args:
            stream (Stream): the stream to wait for.

        Returns:
            None.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                s = fw.device.Stream()
                s.wait_stream(fw.device.current_stream())
        """
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record an event on this stream (a new one when None).

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Args:
            event (Event, optional): the event to record. Default: None.

        Returns:
            Event, the recorded event.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                s = fw.device.Stream()
                e = s.record_event()
                e.synchronize()
        """
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
    """A CUDA event: a marker in a stream's work, to wait for or to time.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.
        enable_timing (bool, optional): allow `elapsed_time`. Default: False.
        blocking (bool, optional): `synchronize` blocks instead of spinning. Default: False.
        interprocess (bool, optional): share between processes. Default: False.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            start = fw.device.Event(enable_timing=True)
            end = fw.device.Event(enable_timing=True)
            start.record()
            y = fw.ones([1024, 1024]).cuda() @ fw.ones([1024, 1024]).cuda()
            end.record()
            end.synchronize()
            start.elapsed_time(end)   # milliseconds
    """

    def __init__(self, device=None, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        cp = _cupy()
        self.device = _pl.Place("gpu", _gpu_index(device))
        with cp.cuda.Device(self.device.index):
            self._e = cp.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                    interprocess=interprocess)

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on `stream` (the current one when None).

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Args:
            stream (Stream, optional): the stream. Default: None.

        Returns:
            None.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                start = fw.device.Event(enable_timing=True)
                end = fw.device.Event(enable_timing=True)
                start.record()
                y = fw.ones([1024, 1024]).cuda() @ fw.ones([1024, 1024]).cuda()
                end.record()
                end.synchronize()
                start.elapsed_time(end)   # milliseconds
        """
        self._e.record((stream or current_stream(self.device))._s)

    def query(self) -> bool:
        """Whether the work before the event is done.

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Returns:
            bool.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                start = fw.device.Event(enable_timing=True)
                end = fw.device.Event(enable_timing=True)
                start.record()
                y = fw.ones([1024, 1024]).cuda() @ fw.ones([1024, 1024]).cuda()
                end.record()
                end.synchronize()
                start.elapsed_time(end)   # milliseconds
        """
        return bool(self._e.done)

    def synchronize(self) -> None:
        """Wait until the work before the event is done.

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Returns:
            None.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                start = fw.device.Event(enable_timing=True)
                end = fw.device.Event(enable_timing=True)
                start.record()
                y = fw.ones([1024, 1024]).cuda() @ fw.ones([1024, 1024]).cuda()
                end.record()
                end.synchronize()
                start.elapsed_time(end)   # milliseconds
        """
        self._e.synchronize()

    def elapsed_time(self, end: Event) -> float:
        """The time between this event and `end`, in milliseconds (both recorded with
        ``enable_timing=True``).

        It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

        Args:
            end (Event): the later event.

        Returns:
            float, milliseconds.

        Examples:
            On a machine with an NVIDIA GPU and CuPy (not run here)::

                import fw
                start = fw.device.Event(enable_timing=True)
                end = fw.device.Event(enable_timing=True)
                start.record()
                y = fw.ones([1024, 1024]).cuda() @ fw.ones([1024, 1024]).cuda()
                end.record()
                end.synchronize()
                start.elapsed_time(end)   # milliseconds
        """
        return float(_cupy().cuda.get_elapsed_time(self._e, end._e))


def current_stream(device=None) -> Stream:
    """The current stream of `device`.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        device (int|str|Place, optional): the GPU (``0``, ``"gpu:0"``); None: the current
            one. Default: None.

    Returns:
        Stream.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            s = fw.device.current_stream()
    """
    cp = _cupy()
    idx = _gpu_index(device)
    with cp.cuda.Device(idx):
        return Stream(f"gpu:{idx}", _wrap=cp.cuda.get_current_stream())


def set_stream(stream: Stream) -> Stream:
    """Make `stream` current on its device.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        stream (Stream): the new current stream.

    Returns:
        Stream, the stream it replaces.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            old = fw.device.set_stream(fw.device.Stream())
            fw.device.set_stream(old)
    """
    prev = current_stream(stream.device)
    stream._s.use()
    return prev


@contextmanager
def stream_guard(stream: Stream | None):
    """A context manager that queues the block's GPU work on `stream` and restores the
    current stream after it.

    It needs a GPU (CuPy); without one it raises a RuntimeError saying so.

    Args:
        stream (Stream|None): the stream; None leaves the current one.

    Returns:
        context manager.

    Examples:
        On a machine with an NVIDIA GPU and CuPy (not run here)::

            import fw
            with fw.device.stream_guard(fw.device.Stream()):
                y = fw.ones([4]).cuda() + 1
    """
    if stream is None:
        yield
        return
    with stream._s:
        yield
