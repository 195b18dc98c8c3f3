"""`ModelRunner`: the threads that run one model, with dynamic batching.

Requests (`Job`: the checked input arrays of one request) wait in a bounded
queue; a full queue answers 503 at once instead of letting latency grow without
bound. Each worker thread owns a ``Predictor.clone()`` (clones share the compiled
program and weights and run concurrently) and loops:

1. take the first waiting job;
2. when the model batches and the job has fewer rows than ``max_batch_size``,
   keep taking jobs whose inputs have the same shapes past the batch dim, until
   the rows would exceed ``max_batch_size`` or ``batch_timeout_ms`` has passed
   since the first job arrived (what is already queued is always taken); a job
   that does not fit is held over as the first of the next batch, so order is
   kept;
3. concatenate each input along the batch dim, run once, split every output
   back by the jobs' row counts and hand each job its own copies.

A model batches when every input and output has a dynamic leading dim (the
`ModelSpec.batchable` rule) — otherwise each request runs alone. If a batched
run fails, each of its jobs runs again alone, so a request whose values make the
model raise gets its own 500 and the others their answers; if a batched run's
outputs do not have the batch's rows (the model mixes rows), the runner stops
batching for good and logs why. Batching changes only the order of float sums in
the model's products: results equal running each request alone up to float
rounding (a few ulps).

The design follows the dynamic batcher of NVIDIA Triton Inference Server
(preferred batch size, maximum queue delay) and TorchServe's batch_size /
max_batch_delay, reduced to one queue per model.
"""

from __future__ import annotations

import logging
import queue
import threading
import time

import numpy as np

from fw.inference.serving.errors import RequestError

__all__ = ["Job", "ModelRunner"]

_log = logging.getLogger("fw.inference.serving")
_POLL_S = 0.25  # how often an idle worker checks whether the runner is closing


class Job:
    """One request for a model: its input arrays (model order), its rows (the
    shared leading dim when it may join a batch, else None), the shapes that must
    match to share a batch (`key`), and `on_done(outputs, error)`, called once
    from a worker thread with a list of arrays or a `RequestError`."""

    __slots__ = ("arrays", "rows", "key", "on_done", "enqueued", "cancelled")

    def __init__(self, arrays, rows, key, on_done):
        self.arrays = arrays
        self.rows = rows
        self.key = key
        self.on_done = on_done
        self.enqueued = time.monotonic()
        self.cancelled = False  # its client stopped waiting: skip it


class ModelRunner:
    """Runs model `name` for queued jobs on `options.threads_per_model` threads.

    Args:
        name: the model's name (in messages and metrics).
        predictor: a Predictor; each thread runs its own ``clone()``.
        spec: the model's `ModelSpec`.
        options: `ServingOptions` (batch size and delay, queue bound, threads).
        metrics: a `Metrics` to record batch sizes in (optional).
    """

    def __init__(self, name, predictor, spec, options, metrics=None):
        self.name = name
        self.spec = spec
        self.options = options
        self.metrics = metrics
        self.batching = options.batching and spec.batchable
        self._queue = queue.Queue(maxsize=options.max_queue)
        self._closing = threading.Event()
        self._threads = [threading.Thread(target=self._work, args=(predictor.clone(),),
                                          name=f"fw-serving-{name}-{i}", daemon=True)
                         for i in range(options.threads_per_model)]
        self._started = False

    # ------------------------------------------------------------ the client side
    def start(self) -> None:
        if not self._started:
            self._started = True
            for t in self._threads:
                t.start()

    def depth(self) -> int:
        """Jobs waiting (not yet taken by a worker)."""
        return self._queue.qsize()

    def job(self, arrays, on_done) -> Job:
        """A `Job` for `arrays` (checked inputs in model order)."""
        rows = key = None
        if self.batching:
            n = arrays[0].shape[0]
            if n > 0 and all(a.shape[0] == n for a in arrays):
                rows = n
                key = tuple((a.shape[1:], a.dtype.str) for a in arrays)
        return Job(arrays, rows, key, on_done)

    def submit(self, job: Job) -> None:
        """Queue `job`. Raises `RequestError` 503 when the queue is full or the
        runner is closing."""
        if self._closing.is_set():
            raise RequestError(503, f"model '{self.name}' is shutting down")
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            raise RequestError(503, f"model '{self.name}' has {self.options.max_queue} "
                                    f"requests waiting (the queue's bound, max_queue); "
                                    f"retry later") from None

    def close(self, timeout: float = 30.0) -> bool:
        """Stop the workers once the queue is empty; waits at most `timeout`
        seconds in all. Returns whether every worker stopped."""
        self._closing.set()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self._threads if t.is_alive()]
        if alive:
            _log.warning("model '%s': worker threads %s still busy after %.1f s at shutdown",
                         self.name, alive, timeout)
        return not alive

    # ------------------------------------------------------------ the worker side
    def _next(self, timeout=None):
        """The next job; None when closing with nothing queued (`timeout`: None =
        wait until one comes or the runner closes)."""
        while True:
            try:
                if timeout is None:
                    return self._queue.get(timeout=_POLL_S)
                return self._queue.get(timeout=timeout) if timeout > 0 else \
                    self._queue.get_nowait()
            except queue.Empty:
                if timeout is not None or self._closing.is_set():
                    return None

    def _work(self, predictor) -> None:
        held = None  # a job taken by the last batch that did not fit in it
        while True:
            first = held if held is not None else self._next()
            held = None
            if first is None:
                return
            if first.cancelled:
                continue
            batch = [first]
            if first.rows is not None and self.batching:
                held = self._fill(batch)
            self._run(predictor, batch)

    def _fill(self, batch):
        """Add jobs to `batch` up to the row limit or the delay; returns a job that
        was taken but does not fit (the next batch's first), or None."""
        first = batch[0]
        limit = self.options.max_batch_size
        total = first.rows
        deadline = first.enqueued + self.options.batch_timeout_ms / 1e3
        while total < limit:
            job = self._next(timeout=deadline - time.monotonic())
            if job is None:
                return None
            if job.cancelled:
                continue
            if job.rows is None or job.key != first.key or total + job.rows > limit:
                return job
            batch.append(job)
            total += job.rows
        return None

    def _run(self, predictor, batch) -> None:
        if len(batch) == 1:
            self._run_alone(predictor, batch[0])
            return
        rows = [j.rows for j in batch]
        try:
            inputs = [np.concatenate([j.arrays[i] for j in batch])
                      for i in range(len(batch[0].arrays))]
            outs = [np.asarray(o) for o in predictor.run(inputs)]
        except Exception:  # each job learns its own outcome below
            for j in batch:
                self._run_alone(predictor, j)
            return
        total = sum(rows)
        if any(o.ndim == 0 or o.shape[0] != total for o in outs):
            self.batching = False
            _log.warning("model '%s': a batch of %d rows gave outputs of shapes %s, not %d "
                         "rows each; dynamic batching is off for this model from now on",
                         self.name, total, [list(o.shape) for o in outs], total)
            for j in batch:
                self._run_alone(predictor, j)
            return
        if self.metrics is not None:
            self.metrics.batch(self.name, total, len(batch))
        bounds = np.cumsum(rows)[:-1]
        pieces = [np.split(o, bounds) for o in outs]
        for k, j in enumerate(batch):
            self._finish(j, [p[k].copy() for p in pieces], None)

    def _run_alone(self, predictor, job) -> None:
        try:
            outs = [np.array(o, copy=True) for o in predictor.run(job.arrays)]
        except Exception as e:  # the model failed on this request
            self._finish(job, None, RequestError(
                500, f"model '{self.name}' failed on this request: {type(e).__name__}: {e}"))
            return
        if self.metrics is not None:
            n = job.arrays[0].shape[0] if job.arrays and job.arrays[0].ndim else 1
            self.metrics.batch(self.name, n, 1)
        self._finish(job, outs, None)

    def _finish(self, job, outs, error) -> None:
        try:
            job.on_done(outs, error)
        except Exception:  # a callback must never kill the worker
            _log.exception("model '%s': delivering a result failed", self.name)
