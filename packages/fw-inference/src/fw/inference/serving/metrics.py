"""`Metrics`: counters and histograms of a server, written in Prometheus' text
exposition format (version 0.0.4) at ``GET /metrics``.

The format is a few lines per series, so it is written here rather than pulled
in with prometheus_client (a deployment installs starlette and uvicorn only).
What is exported:

- ``fw_serving_requests_total{model,code}``: predict requests answered, by status;
- ``fw_serving_request_duration_seconds{model}``: histogram of the time from the
  request's arrival to its answer;
- ``fw_serving_batch_rows{model}`` / ``fw_serving_batch_requests{model}``:
  histograms of the rows and the requests of each model call;
- ``fw_serving_queue_depth{model}``: requests waiting (a gauge, read at scrape);
- ``fw_serving_inflight_requests``: predict requests being served.

Each process counts its own requests: with ``--workers N`` a scrape sees one
worker's figures (the ``pid`` label tells which).
"""

from __future__ import annotations

import bisect
import os
import threading

__all__ = ["Metrics", "CONTENT_TYPE"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                   2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
UNKNOWN_MODEL = "(unknown)"  # requests for models that do not exist share one label


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs) -> str:
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in pairs) + "}"


def _number(v) -> str:
    return repr(float(v))  # only finite values are recorded


class _Histogram:
    __slots__ = ("bounds", "counts", "sum", "count")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound
        self.sum = 0.0
        self.count = 0

    def observe(self, v):
        self.counts[bisect.bisect_left(self.bounds, v)] += 1
        self.sum += v
        self.count += 1

    def lines(self, name, labels):
        out, cum = [], 0
        for b, c in zip(self.bounds, self.counts):
            cum += c
            out.append(f"{name}_bucket{_labels(labels + [('le', _number(b))])} {cum}")
        out.append(f"{name}_bucket{_labels(labels + [('le', '+Inf')])} {self.count}")
        out.append(f"{name}_sum{_labels(labels)} {_number(self.sum)}")
        out.append(f"{name}_count{_labels(labels)} {self.count}")
        return out


class Metrics:
    """Thread-safe counters of one server process (the event loop and the model
    threads both record)."""

    def __init__(self, models=()):
        self._lock = threading.Lock()
        self._requests: dict = {}  # (model, code) -> count
        self._latency: dict = {}  # model -> _Histogram
        self._rows: dict = {}
        self._batch_requests: dict = {}
        self._inflight = 0
        self._queue_depth = {}  # model -> callable returning the current depth
        self.models = list(models)

    def label(self, model: str) -> str:
        return model if model in self.models else UNKNOWN_MODEL

    def watch_queue(self, model: str, depth) -> None:
        self._queue_depth[model] = depth

    def request_started(self) -> None:
        with self._lock:
            self._inflight += 1

    def request_done(self, model: str, code: int, seconds: float) -> None:
        model = self.label(model)
        with self._lock:
            self._inflight -= 1
            key = (model, int(code))
            self._requests[key] = self._requests.get(key, 0) + 1
            h = self._latency.get(model)
            if h is None:
                h = self._latency[model] = _Histogram(LATENCY_BUCKETS)
            h.observe(seconds)

    def batch(self, model: str, rows: int, requests: int) -> None:
        with self._lock:
            for table, v in ((self._rows, rows), (self._batch_requests, requests)):
                h = table.get(model)
                if h is None:
                    h = table[model] = _Histogram(BATCH_BUCKETS)
                h.observe(v)

    def requests(self, model: str, code: int) -> int:
        """How many predict requests for `model` were answered with `code`."""
        with self._lock:
            return self._requests.get((self.label(model), int(code)), 0)

    def render(self) -> str:
        """The text exposition of every metric."""
        pid = [("pid", str(os.getpid()))]
        with self._lock:
            out = ["# HELP fw_serving_requests_total Predict requests answered, by model and "
                   "HTTP status code.", "# TYPE fw_serving_requests_total counter"]
            for (m, code), n in sorted(self._requests.items()):
                out.append(f"fw_serving_requests_total"
                           f"{_labels([('model', m), ('code', code)] + pid)} {n}")
            for name, table, help_ in (
                    ("fw_serving_request_duration_seconds", self._latency,
                     "Time from a predict request's arrival to its answer."),
                    ("fw_serving_batch_rows", self._rows,
                     "Rows (summed leading dims) per model call."),
                    ("fw_serving_batch_requests", self._batch_requests,
                     "Requests per model call (above 1: dynamic batching grouped them).")):
                out += [f"# HELP {name} {help_}", f"# TYPE {name} histogram"]
                for m in sorted(table):
                    out += table[m].lines(name, [("model", m)] + pid)
            out += ["# HELP fw_serving_inflight_requests Predict requests being served.",
                    "# TYPE fw_serving_inflight_requests gauge",
                    f"fw_serving_inflight_requests{_labels(pid)} {self._inflight}"]
        out += ["# HELP fw_serving_queue_depth Requests waiting for their model.",
                "# TYPE fw_serving_queue_depth gauge"]
        for m in sorted(self._queue_depth):
            out.append(f"fw_serving_queue_depth{_labels([('model', m)] + pid)} "
                       f"{int(self._queue_depth[m]())}")
        return "\n".join(out) + "\n"
