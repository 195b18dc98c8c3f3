"""Writing and reading recordings: Chrome trace files and fw's JSON result files.

A Chrome trace is the Trace Event Format (complete events, ``"ph": "X"``, times in
microseconds) that chrome://tracing and Perfetto load. Paddle's `export_protobuf`
writes a protobuf dump; fw writes the same recording as plain JSON (a versioned
schema) so that loading a result never executes code.
"""

from __future__ import annotations

import json
import os
import socket
import time

from fw.profiler.profiler import Event

__all__ = ["export_chrome_tracing", "export_protobuf", "load_profiler_result", "ProfilerResult"]

_SCHEMA = "fw.profiler.result/1"


def _default_worker() -> str:
    return f"host_{socket.gethostname()}pid_{os.getpid()}"


def _file_name(dir_name, worker_name, suffix):
    os.makedirs(dir_name, exist_ok=True)
    stamp = time.strftime("%Y_%m_%d_%H_%M_%S")
    return os.path.join(dir_name, f"{worker_name or _default_worker()}_time_{stamp}"
                                  f"_{time.perf_counter_ns() % 10**6}{suffix}")


def chrome_trace(events) -> dict:
    """The Trace Event Format dict of `events` (ts/dur in µs from the first event)."""
    t0 = min((e.start for e in events), default=0)
    pid = os.getpid()
    out = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
            "args": {"name": f"fw (pid {pid})"}}]
    for e in sorted(events, key=lambda e: (e.start, -e.end)):
        out.append({"name": e.name, "cat": e.kind, "ph": "X", "pid": pid, "tid": e.tid,
                    "ts": (e.start - t0) / 1000.0, "dur": e.duration / 1000.0,
                    "args": e.args})
    return {"traceEvents": out, "displayTimeUnit": "ms",
            "otherData": {"producer": "fw.profiler", "start_ns": t0}}


def _write_chrome(events, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(chrome_trace(events), f)


def _write_result(events, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"schema": _SCHEMA, "events": [e.to_dict() for e in events]}, f)


def export_chrome_tracing(dir_name: str, worker_name: str | None = None):
    """An ``on_trace_ready`` callback that writes each recording as a Chrome trace
    (``<worker>_time_<stamp>.paddle_trace.json``) in `dir_name`; open it in
    https://ui.perfetto.dev or chrome://tracing.

    Args:
        dir_name (str): the directory (created if missing).
        worker_name (str, optional): the file name prefix; default host and pid.

    Returns:
        Callable[[Profiler], None]: the callback.

    Examples:
        >>> import fw
    >>> import fw.profiler as profiler
    >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(d)):
        ...     y = fw.ones([2]) + 1.0
        >>> len(os.listdir(d))
        1
    """
    if not isinstance(dir_name, (str, os.PathLike)):
        raise TypeError(f"export_chrome_tracing: dir_name must be a path, got "
                        f"{type(dir_name).__name__}")

    def handle(prof):
        path = _file_name(os.fspath(dir_name), worker_name, ".paddle_trace.json")
        _write_chrome(prof.events, path)
        prof.last_trace_path = path

    return handle


def export_protobuf(dir_name: str, worker_name: str | None = None):
    """An ``on_trace_ready`` callback that writes each recording as fw's result file
    (``.fw_result.json``: JSON, not Paddle's protobuf), read back by
    `load_profiler_result`.

    Args:
        dir_name (str): the directory (created if missing).
        worker_name (str, optional): the file name prefix; default host and pid.

    Returns:
        Callable[[Profiler], None]: the callback.

    Examples:
        >>> import fw
    >>> import fw.profiler as profiler
    >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> with profiler.Profiler(on_trace_ready=profiler.export_protobuf(d)) as p:
        ...     y = fw.ones([2]) + 1.0
        >>> r = profiler.load_profiler_result(p.last_trace_path)
        >>> [e.name for e in r.events if e.kind == "Operator"][-1]
        'add'
    """
    if not isinstance(dir_name, (str, os.PathLike)):
        raise TypeError(f"export_protobuf: dir_name must be a path, got "
                        f"{type(dir_name).__name__}")

    def handle(prof):
        path = _file_name(os.fspath(dir_name), worker_name, ".fw_result.json")
        _write_result(prof.events, path)
        prof.last_trace_path = path

    return handle


class ProfilerResult:
    """A loaded recording (`load_profiler_result`): its events and their summary.

    Args:
        events (list): the `Event` objects.

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> result = profiler.ProfilerResult([profiler.Event("work", "UserDefined", 0, 2000, 1)])
        >>> [e.name for e in result.get_data()]
        ['work']
    """

    def __init__(self, events):
        self.events = events

    def get_data(self):
        """The events of the recording.

        Returns:
            list[Event].

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> ev = profiler.Event("work", "UserDefined", 0, 2000, 1)
            >>> result = profiler.ProfilerResult([ev])
            >>> result.get_data()[0].duration
            2000
        """
        return self.events

    def summary(self, **kwargs) -> str:
        """The summary tables of the recording, as text.

        Args:
            **kwargs: the arguments of `Profiler.summary` (``sorted_by``, ``time_unit``, ...).

        Returns:
            str, the tables.

        Examples:
            >>> import fw
            >>> import fw.profiler as profiler
            >>> ev = profiler.Event("work", "UserDefined", 0, 2000, 1)
            >>> result = profiler.ProfilerResult([ev])
            >>> "work" in result.summary(time_unit="us")
            True
        """
        from fw.profiler.summary import summary_text

        return summary_text(self.events, **kwargs)


def load_profiler_result(filename: str) -> ProfilerResult:
    """Read a recording written by `export_protobuf` (or a Chrome trace written by
    `export_chrome_tracing`). Plain JSON: loading never executes code.

    Args:
        filename (str): the file.

    Returns:
        ProfilerResult: the events.

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> import os
        >>> with profiler.Profiler(scheduler=(0, 1),
        ...                        on_trace_ready=profiler.export_protobuf("rec")) as prof:
        ...     y = fw.ones([2, 2]) * 2.0
        ...     prof.step()
        >>> (f,) = os.listdir("rec")
        >>> result = profiler.load_profiler_result(os.path.join("rec", f))
        >>> "multiply" in {e.name for e in result.get_data()}
        True
    """
    try:
        with open(filename, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"load_profiler_result: cannot read {filename!r} as a profiler "
                         f"result: {e}") from e
    if isinstance(data, dict) and data.get("schema") == _SCHEMA:
        try:
            return ProfilerResult([Event(d["name"], d["kind"], d["start"], d["end"],
                                         d["tid"], d.get("args")) for d in data["events"]])
        except (KeyError, TypeError) as e:
            raise ValueError(f"load_profiler_result: {filename!r} has a malformed event: "
                             f"{e}") from e
    if isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        base = int(data.get("otherData", {}).get("start_ns", 0))
        evs = [Event(d["name"], d.get("cat", "UserDefined"), base + round(d["ts"] * 1000),
                     base + round((d["ts"] + d["dur"]) * 1000), d.get("tid", 0), d.get("args"))
               for d in data["traceEvents"] if d.get("ph") == "X"]
        return ProfilerResult(evs)
    raise ValueError(f"load_profiler_result: {filename!r} is neither an fw profiler result "
                     f"(schema {_SCHEMA!r}) nor a Chrome trace")
