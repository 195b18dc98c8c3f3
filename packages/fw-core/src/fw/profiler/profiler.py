"""`Profiler`, its scheduler states and `RecordEvent` (Paddle 3.3's ``paddle.profiler`` API).

Events come from fw-core's eager dispatch (every op, through fw.core._observe's hook,
installed only while a profiler records), the IR executor (one event per program
run), autograd's backward, the DataLoader (reader cost) and user `RecordEvent`
regions. A recording is a list of `Event` records on the host clock
(``time.perf_counter_ns``); GPU kernels are not traced separately (an op's time on a
GPU is its launch time unless the backend synchronises).
"""

from __future__ import annotations

import functools
import threading
from enum import Enum
from time import perf_counter_ns

from fw.core import _observe
from fw.core.ops.collective import COLLECTIVE_OPS
from fw.profiler.layer_view import set_recording as _set_layer_recording

__all__ = ["ProfilerState", "ProfilerTarget", "TracerEventType", "Event", "make_scheduler",
           "Profiler", "RecordEvent"]


class ProfilerState(Enum):
    """The state a scheduler gives a step: CLOSED (no profiling), READY (warming up,
    nothing kept), RECORD (events kept), RECORD_AND_RETURN (the last recorded step:
    the trace is handed to ``on_trace_ready`` after it).

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> [m.name for m in profiler.ProfilerState][:4]
        ['CLOSED', 'READY', 'RECORD', 'RECORD_AND_RETURN']
    """

    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class ProfilerTarget(Enum):
    """Devices to trace. fw traces host time; GPU ops are timed from the host.

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> [m.name for m in profiler.ProfilerTarget][:4]
        ['CPU', 'GPU', 'XPU', 'CUSTOM_DEVICE']
    """

    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM_DEVICE = 3


class TracerEventType(Enum):
    """Event kinds (Paddle's names; the kind decides the summary table of an event).

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> [m.name for m in profiler.TracerEventType][:4]
        ['Operator', 'Dataloader', 'ProfileStep', 'CudaRuntime']
    """

    Operator = 0
    Dataloader = 1
    ProfileStep = 2
    CudaRuntime = 3
    Kernel = 4
    Memcpy = 5
    Memset = 6
    UserDefined = 7
    OperatorInner = 8
    Forward = 9
    Backward = 10
    Optimization = 11
    Communication = 12
    PythonOp = 13
    PythonUserDefined = 14


class Event:
    """One timed span of a recording.

    Args:
        name (str): the op, region or step name.
        kind (str): a `TracerEventType` name (decides its summary table).
        start (int): the start time, in ns.
        end (int): the end time, in ns.
        tid (int): the thread id.
        args (dict, optional): input shapes, bytes, FLOPs where recorded. Default: None.

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> e = profiler.Event("work", "UserDefined", 1000, 3500, 1)
        >>> e.duration, e.to_dict()["name"]
        (2500, 'work')
    """

    __slots__ = ("name", "kind", "start", "end", "tid", "args")

    def __init__(self, name, kind, start, end, tid, args=None):
        self.name, self.kind, self.start, self.end = name, kind, int(start), int(end)
        self.tid, self.args = int(tid), dict(args or {})

    @property
    def duration(self) -> int:
        """The span's length, in ns.

        Returns:
            int, ``end - start``.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> profiler.Event("work", "UserDefined", 1000, 3500, 1).duration
            2500
        """
        return self.end - self.start

    def to_dict(self) -> dict:
        """The event as a plain dict (what the result file stores).

        Returns:
            dict, the event's fields.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> sorted(profiler.Event("work", "UserDefined", 1000, 3500, 1).to_dict())
            ['args', 'end', 'kind', 'name', 'start', 'tid']
        """
        return {"name": self.name, "kind": self.kind, "start": self.start, "end": self.end,
                "tid": self.tid, "args": self.args}

    def __repr__(self):
        return f"Event({self.name!r}, {self.kind}, {self.duration} ns)"


def make_scheduler(*, closed: int, ready: int, record: int, repeat: int = 0,
                   skip_first: int = 0):
    """Make a scheduler: after `skip_first` steps, cycles of `closed` CLOSED steps,
    `ready` READY steps and `record` recorded steps (the last RECORD_AND_RETURN),
    `repeat` times (0: forever).

    Args:
        closed (int): steps per cycle with the profiler off.
        ready (int): steps per cycle warming up (nothing recorded).
        record (int): steps per cycle recorded (at least 1).
        repeat (int, optional): number of cycles; 0 repeats forever. Default 0.
        skip_first (int, optional): steps skipped before the first cycle. Default 0.

    Returns:
        Callable[[int], ProfilerState]: the state of a step number.

    Examples:
        >>> import fw.profiler as profiler
        >>> s = profiler.make_scheduler(closed=1, ready=1, record=2, repeat=1)
        >>> [s(i).name for i in range(5)]
        ['CLOSED', 'READY', 'RECORD', 'RECORD_AND_RETURN', 'CLOSED']
    """
    for n, v in (("closed", closed), ("ready", ready), ("record", record),
                 ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"make_scheduler: {n} must be a non-negative int, got {v!r}")
    if record < 1:
        raise ValueError(f"make_scheduler: record must be >= 1, got {record}")
    period = closed + ready + record

    def state(step: int) -> ProfilerState:
        if step < skip_first:
            return ProfilerState.CLOSED
        step -= skip_first
        if repeat > 0 and step // period >= repeat:
            return ProfilerState.CLOSED
        m = step % period
        if m < closed:
            return ProfilerState.CLOSED
        if m < closed + ready:
            return ProfilerState.READY
        return ProfilerState.RECORD if m < period - 1 else ProfilerState.RECORD_AND_RETURN

    return state


def _always_record(step: int) -> ProfilerState:
    return ProfilerState.RECORD


def _range_scheduler(start: int, end: int):
    # Paddle's (start, end) tuple: record steps [start, end)
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
        raise ValueError(f"Profiler: scheduler=(start, end) needs 0 <= start < end, got "
                         f"({start!r}, {end!r})")
    return make_scheduler(closed=max(start - 1, 0), ready=1 if start > 0 else 0,
                          record=end - start, repeat=1)


def _flops(name, args, out, arrays=False) -> int:
    """FLOPs of an op from its shapes: 2*M*N*K for matmul, 2*outputs*(C_in/groups)*
    kernel for conv, one per output element for elementwise-like ops (the counting
    Paddle's profiler and fw.flops use); ops without a rule count their outputs.
    `args`/`out` are Tensors, or with `arrays` the kernel's arrays (the IR executor)."""
    import numpy as np

    def data(x):
        return (x if hasattr(x, "shape") else None) if arrays else getattr(x, "_data", None)

    outs = out if isinstance(out, (tuple, list)) else (out,)
    numel = sum(int(np.prod(data(o).shape or (1,))) for o in outs if data(o) is not None)
    shapes = [tuple(data(a).shape) for a in args if data(a) is not None]
    if name in ("matmul", "mm", "bmm", "linear") and len(shapes) >= 2 and shapes[0]:
        return 2 * numel * int(shapes[0][-1])
    if name.startswith("conv") and len(shapes) >= 2 and len(shapes[1]) >= 3:
        w = shapes[1]
        return 2 * numel * int(np.prod(w[1:]))
    return numel


class _Recorder:
    """What fw.core._observe hands op and span events to while a profiler records."""

    def __init__(self, record_shapes, profile_memory, with_flops):
        self.events: list[Event] = []
        self.shapes, self.memory, self.flops = record_shapes, profile_memory, with_flops
        self._lock = threading.Lock()
        self.reader = None  # the step timer's sink for DataLoader times (reader cost)

    def op_event(self, op, args, out, t0, t1):
        a = {}
        if self.shapes:
            a["input_shapes"] = [list(x._data.shape) if getattr(x, "_data", None) is not None
                                 else None for x in args if not isinstance(x, (list, tuple))]
            a["input_dtypes"] = [str(x._data.dtype) if getattr(x, "_data", None) is not None
                                 else None for x in args if not isinstance(x, (list, tuple))]
        if self.memory:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            a["bytes"] = int(sum(getattr(getattr(o, "_data", None), "nbytes", 0) or 0
                                 for o in outs))
        if self.flops:
            a["flops"] = _flops(op.name, args, out)
        # collectives (c_allreduce, …) are the Communication rows of the distributed view
        kind = "Communication" if op.name in COLLECTIVE_OPS else "Operator"
        ev = Event(op.name, kind, t0, t1, threading.get_ident(), a)
        with self._lock:
            self.events.append(ev)

    def ir_op_event(self, name, arrays, out, t0, t1):
        """An op run by the IR executor (a compiled program's kernel call, on arrays)."""
        a = {"ir": True}
        if self.shapes:
            ins = [x for x in arrays if not isinstance(x, (list, tuple))]
            a["input_shapes"] = [list(x.shape) if hasattr(x, "shape") else None for x in ins]
            a["input_dtypes"] = [str(x.dtype) if hasattr(x, "dtype") else None for x in ins]
        if self.memory:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            a["bytes"] = int(sum(getattr(o, "nbytes", 0) or 0 for o in outs))
        if self.flops:
            a["flops"] = _flops(name, arrays, out, arrays=True)
        kind = "Communication" if name in COLLECTIVE_OPS else "Operator"
        ev = Event(name, kind, t0, t1, threading.get_ident(), a)
        with self._lock:
            self.events.append(ev)

    def event(self, name, kind, t0, t1, args=None):
        ev = Event(name, kind, t0, t1, threading.get_ident(), args)
        with self._lock:
            self.events.append(ev)
        if kind == "Dataloader" and self.reader is not None:
            self.reader(t1 - t0)


class Profiler:
    """Profile a range of steps: the ops fw runs, user `RecordEvent` regions,
    backward, DataLoader reads and executor runs, with a scheduler choosing the
    recorded steps, a summary table and a Chrome trace.

    Args:
        targets (list[ProfilerTarget], optional): devices to profile; fw records host
            time for all (default: CPU, and GPU when one is present).
        scheduler (Callable[[int], ProfilerState] | tuple[int, int], optional): the
            state of each step, from `make_scheduler` or ``(start, end)`` to record
            steps ``[start, end)``; None records from `start` to `stop`.
        on_trace_ready (Callable[[Profiler], None], optional): called with the
            profiler when a recorded range ends; default, as in Paddle,
            ``export_chrome_tracing('./profiler_log/')``.
        record_shapes (bool, optional): keep the input shapes and dtypes of ops.
        profile_memory (bool, optional): keep the bytes each op's outputs allocate.
        timer_only (bool, optional): time steps only (reader cost, batch cost, ips);
            no op events. Default False.
        emit_nvtx (bool, optional): accepted for Paddle compatibility; no NVTX ranges.
        custom_device_types (list[str], optional): accepted for Paddle compatibility.
        with_flops (bool, optional): estimate each op's FLOPs from its shapes.

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> x = fw.ones([4, 4])
        >>> with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU]) as prof:
        ...     for _ in range(2):
        ...         y = fw.matmul(x, x) + 1.0
        ...         prof.step()
        >>> sorted({e.name for e in prof.events if e.kind == "Operator"})
        ['add', 'matmul']
    """

    def __init__(self, *, targets=None, scheduler=None, on_trace_ready=None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 timer_only: bool = False, emit_nvtx: bool = False,
                 custom_device_types=None, with_flops: bool = False):
        if targets is None:
            targets = [ProfilerTarget.CPU]
        targets = list(targets)
        for t in targets:
            if not isinstance(t, ProfilerTarget):
                raise TypeError(f"Profiler: targets must hold ProfilerTarget values, got "
                                f"{t!r} ({type(t).__name__})")
        self.targets = targets
        if scheduler is None:
            self._scheduler = _always_record
        elif isinstance(scheduler, (tuple, list)):
            if len(scheduler) != 2:
                raise ValueError(f"Profiler: scheduler tuple must be (start, end), got "
                                 f"{scheduler!r}")
            self._scheduler = _range_scheduler(*scheduler)
        elif callable(scheduler):
            self._scheduler = scheduler
        else:
            raise TypeError(f"Profiler: scheduler must be a callable, a (start, end) tuple "
                            f"or None, got {type(scheduler).__name__}")
        if on_trace_ready is None:  # Paddle's default: a Chrome trace in ./profiler_log/
            from fw.profiler.export import export_chrome_tracing

            on_trace_ready = export_chrome_tracing("./profiler_log/")
        elif not callable(on_trace_ready):
            raise TypeError("Profiler: on_trace_ready must be callable")
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = bool(record_shapes), bool(profile_memory)
        self.timer_only, self.with_flops = bool(timer_only), bool(with_flops)
        self.emit_nvtx = bool(emit_nvtx)
        self.custom_device_types = list(custom_device_types or [])
        self.step_num = 0
        self.current_state = ProfilerState.CLOSED
        self.events: list[Event] = []   # the events of the last finished recording
        self._rec = None
        self._step_start = None
        self._step_times: list = []  # (t0, t1, samples, reader ns)
        self._reader: list[int] = []
        self._started = False

    # -- recording
    def _begin_record(self):
        self._rec = _Recorder(self.record_shapes, self.profile_memory, self.with_flops)
        self._rec.reader = self._add_reader
        self._rec_start = perf_counter_ns()
        _observe.set_recorder(self._rec, ops=True)
        _set_layer_recording(True)  # fw-nn times Layer forwards only now

    def _end_record(self):
        rec, self._rec = self._rec, None
        _set_layer_recording(False)
        _observe.set_recorder(self._timer_rec() if self._started else None, ops=False)
        if rec is None:
            return
        self.events = list(rec.events)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _add_reader(self, ns):
        self._reader.append(ns)

    def _timer_rec(self):
        # DataLoader spans feed the reader cost of the step timer, also when not recording
        prof = self

        class _Timer:
            def op_event(self, *a):
                pass

            def ir_op_event(self, *a):
                pass

            def event(self, name, kind, t0, t1, args=None):
                if kind == "Dataloader":
                    prof._add_reader(t1 - t0)
        return _Timer()

    def _step_event(self, t0, t1):
        if self._rec is not None:
            self._rec.event(f"ProfileStep#{self.step_num}", "ProfileStep", t0, t1)

    def start(self) -> None:
        """Start: enter the scheduler's state for the current step.

        Examples:

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> prof = profiler.Profiler(timer_only=True)
            >>> prof.start()
            >>> prof.step()
            >>> prof.stop()
            >>> prof.step_num
            1
        """
        if self._started:
            raise RuntimeError("Profiler.start: the profiler is already started")
        self._started = True
        self._step_start = perf_counter_ns()
        self._reader = []
        _observe.set_recorder(self._timer_rec(), ops=False)
        if self.timer_only:
            return
        self.current_state = self._scheduler(self.step_num)
        if self.current_state in (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN):
            self._begin_record()

    def stop(self) -> None:
        """Stop; a recording in progress ends and goes to ``on_trace_ready``.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> with profiler.Profiler(scheduler=(0, 2)) as prof:
            ...     for _ in range(2):
            ...         with profiler.RecordEvent("work"):
            ...             y = fw.ones([4, 4]) @ fw.ones([4, 4])
            ...         prof.step()
            >>> prof.step_num
            2
        """
        if not self._started:
            raise RuntimeError("Profiler.stop: the profiler was not started")
        self._started = False
        if self._rec is not None:
            self._step_event(self._step_start, perf_counter_ns())
            self._end_record()
        _observe.set_recorder(None)
        self.current_state = ProfilerState.CLOSED

    def step(self, num_samples: int | None = None) -> None:
        """Mark the end of a step (a training iteration).

        Args:
            num_samples (int, optional): samples in this step, for the ips figure of
                `step_info`.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> prof = profiler.Profiler(timer_only=True)
            >>> prof.start()
            >>> for _ in range(3):
            ...     y = fw.ones([2, 2]) * 2
            ...     prof.step(num_samples=2)
            >>> prof.stop()
            >>> prof.step_num
            3
        """
        if not self._started:
            raise RuntimeError("Profiler.step: call start() first (or use `with Profiler()`)")
        now = perf_counter_ns()
        reader = sum(self._reader)
        self._reader = []
        self._step_times.append((self._step_start, now, num_samples, reader))
        self._step_event(self._step_start, now)
        self.step_num += 1
        self._step_start = perf_counter_ns()
        if self.timer_only:
            return
        prev, self.current_state = self.current_state, self._scheduler(self.step_num)
        recording = (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)
        if prev == ProfilerState.RECORD_AND_RETURN or (
                prev in recording and self.current_state not in recording):
            self._end_record()
        if self.current_state in recording and self._rec is None:
            self._begin_record()

    def step_info(self, unit: str | None = None) -> str:
        """Timer figures averaged over the steps since the last call: reader cost
        (time in DataLoader reads), batch cost (whole step) and ips.

        Args:
            unit (str, optional): the unit of ips, e.g. 'images'; default 'samples'.

        Returns:
            str: e.g. `` reader_cost: 0.00012 s batch_cost: 0.01021 s ips: 97.930 samples/s``
            (Paddle's layout: fields that are zero are left out).

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> prof = profiler.Profiler(timer_only=True)
            >>> prof.start()
            >>> for _ in range(2):
            ...     prof.step(num_samples=8)
            >>> info = prof.step_info(unit="images")
            >>> prof.stop()
            >>> "batch_cost" in info and "images/s" in info
            True
        """
        steps, self._step_times = self._step_times, []
        # Paddle's layout: a field only when it is non-zero, each after a space;
        # ips in steps/s unless every step gave num_samples
        total = sum(t1 - t0 for t0, t1, _, _ in steps) / 1e9
        batch = total / len(steps) if steps else 0.0
        reader = sum(r for *_, r in steps) / len(steps) / 1e9 if steps else 0.0
        counted = bool(steps) and all(n is not None for _, _, n, _ in steps)
        msg = ""
        if reader:
            msg += f" reader_cost: {reader:.5f} s"
        if batch:
            msg += f" batch_cost: {batch:.5f} s"
            ips = sum(n for _, _, n, _ in steps) / total if counted else 1.0 / batch
            msg += f" ips: {ips:.3f} {(unit or 'samples') + '/s' if counted else 'steps/s'}"
        return msg

    def export(self, path: str = "", format: str = "json") -> None:
        """Write the last recording: ``format='json'`` a Chrome trace, ``'pb'`` fw's
        JSON result file (what `load_profiler_result` reads).

        Args:
            path (str, optional): the output file. Default: ''.
            format (str, optional): ``'json'`` (a Chrome trace) or ``'pb'`` (fw's result file).
                Default: 'json'.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> with profiler.Profiler(scheduler=(0, 2)) as prof:
            ...     for _ in range(2):
            ...         with profiler.RecordEvent("work"):
            ...             y = fw.ones([4, 4]) @ fw.ones([4, 4])
            ...         prof.step()
            >>> prof.export("trace.json", format="json")
            >>> import json
            >>> with open("trace.json") as f:
            ...     "traceEvents" in json.load(f)
            True
        """
        from fw.profiler.export import _write_chrome, _write_result

        if format == "json":
            _write_chrome(self.events, path)
        elif format == "pb":
            _write_result(self.events, path)
        else:
            raise ValueError(f"Profiler.export: format must be 'json' or 'pb', got {format!r}")

    def summary(self, sorted_by=None, op_detail: bool = True, thread_sep: bool = False,
                time_unit: str = "ms", views=None) -> None:
        """Print the summary tables of the last recording (see `fw.profiler.SummaryView`).

        Args:
            sorted_by (SortedKeys, optional): the order of rows; default CPUTotal.
            op_detail (bool, optional): per op, rows per input shape (record_shapes).
            thread_sep (bool, optional): separate tables per thread.
            time_unit (str, optional): 's', 'ms', 'us' or 'ns'. Default 'ms'.
            views (SummaryView | list[SummaryView], optional): tables to print; all by default.

        Returns:
            None (the tables are printed).

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> with profiler.Profiler(scheduler=(0, 2)) as prof:
            ...     for _ in range(2):
            ...         with profiler.RecordEvent("work"):
            ...             y = fw.ones([4, 4]) @ fw.ones([4, 4])
            ...         prof.step()
            >>> import contextlib, io
            >>> out = io.StringIO()
            >>> with contextlib.redirect_stdout(out):
            ...     prof.summary(sorted_by=profiler.SortedKeys.CPUTotal, time_unit="us")
            >>> "matmul" in out.getvalue() and "work" in out.getvalue()
            True
        """
        from fw.profiler.summary import summary_text

        print(summary_text(self.events, sorted_by=sorted_by, op_detail=op_detail,
                           thread_sep=thread_sep, time_unit=time_unit, views=views))

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        if self._started:
            self.stop()
        return False


class RecordEvent:
    """Time a Python region as a user event in the profiler's timeline; a context
    manager, a decorator, or ``begin()``/``end()``. Costs nothing when no profiler
    records.

    Args:
        name (str): the event's name.
        event_type (TracerEventType, optional): default PythonUserDefined.

    Examples:
        >>> import fw, fw.profiler as profiler
        >>> with profiler.Profiler() as prof:
        ...     with profiler.RecordEvent("my_region"):
        ...         y = fw.ones([2]) * 2.0
        >>> [e.name for e in prof.events if e.kind == "PythonUserDefined"]
        ['my_region']
    """

    def __init__(self, name: str, event_type=TracerEventType.PythonUserDefined):
        if not isinstance(name, str):
            raise TypeError(f"RecordEvent: name must be a str, got {type(name).__name__}")
        if not isinstance(event_type, TracerEventType):
            raise TypeError(f"RecordEvent: event_type must be a TracerEventType, got "
                            f"{event_type!r}")
        self.name, self.event_type = name, event_type
        self._t0 = None

    def begin(self) -> None:
        """Start the region (the context manager and the decorator call it for you).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> with profiler.Profiler(scheduler=(0, 1)) as prof:
            ...     ev = profiler.RecordEvent("load")
            ...     ev.begin()
            ...     x = fw.ones([8])
            ...     ev.end()
            ...     prof.step()
            >>> prof.step_num
            1
        """
        self._rec = _observe.recorder()
        self._t0 = perf_counter_ns() if self._rec is not None else None

    def end(self) -> None:
        """End the region started by `begin`.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> ev = profiler.RecordEvent("outside")   # no profiler running: costs nothing
            >>> ev.begin()
            >>> ev.end()
        """
        if self._t0 is not None and self._rec is not None:
            self._rec.event(self.name, self.event_type.name, self._t0, perf_counter_ns())
        self._t0 = None

    def __enter__(self):
        self.begin()
        return self

    def __exit__(self, *exc):
        self.end()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with RecordEvent(self.name, self.event_type):
                return fn(*args, **kwargs)
        return wrapper


