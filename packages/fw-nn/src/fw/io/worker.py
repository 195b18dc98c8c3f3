"""The worker side of `fw.io.DataLoader`: `get_worker_info` and the worker loop.

A worker takes tasks ``(epoch, batch index, indices)`` from its own index queue,
builds the batch (dataset lookups + collate, as NumPy arrays), moves large arrays
into shared memory and puts ``(epoch, batch index, batch)`` on the common result
queue. Errors are sent as `WorkerError` (exception type, message, formatted
traceback, batch and sample index, and what the worker was doing) instead of
killing the worker; the end of an IterableDataset is sent as `IterableEnd`.

- A batch that cannot be pickled fails in the queue's feeder thread, after ``put``
  returned; `ResultQueue` turns that failure into a `WorkerError` for the batch
  (a plain ``multiprocessing.Queue`` only prints it, and the parent waited forever).
- Each worker records in a shared array (``progress``) the batch and the sample it
  is working on, so the parent can name the sample when the worker dies or hangs.
- The worker exits on a ``None`` task or when the parent's done event is set. A
  watchdog thread waits on the parent's pidfd (or polls ``getppid``): when the
  parent dies (even by SIGKILL) the worker removes the loader's shared-memory
  files that nobody will map any more and exits at once, also from a hung
  ``__getitem__``.
"""

from __future__ import annotations

import faulthandler
import multiprocessing.queues
import operator
import os
import queue
import random
import select
import signal
import sys
import threading
import time
import traceback
import warnings

import numpy as np

__all__ = ["get_worker_info", "WorkerInfo"]

_worker_info = None


class WorkerInfo:
    """What `get_worker_info` returns inside a DataLoader worker process.

    Args:
        id (int): this worker's index in ``[0, num_workers)``.
        num_workers (int): the number of workers.
        dataset (Dataset): this worker's copy of the dataset.
        seed (int): the seed this worker's random generators (Python, NumPy, fw) got.

    Examples:
        >>> import fw
        >>> info = fw.io.WorkerInfo(id=0, num_workers=2, dataset=None, seed=7)
        >>> info.id, info.num_workers, info.seed
        (0, 2, 7)
    """

    def __init__(self, id, num_workers, dataset, seed):  # noqa: A002
        self.id = id
        self.num_workers = num_workers
        self.dataset = dataset
        self.seed = seed

    def __repr__(self) -> str:
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, "
                f"seed={self.seed})")


def get_worker_info():
    """The `WorkerInfo` of the current DataLoader worker process, or None in the main
    process. Use it in an IterableDataset to give each worker its own shard of the stream.

    Returns:
        WorkerInfo|None.

    Examples:
        >>> import fw
        >>> fw.io.get_worker_info() is None
        True
    """
    return _worker_info


# what a worker is doing, as recorded in the progress array (SLOTS per worker:
# stage, batch index, sample index, and 1 once its stack can be dumped on DUMP_SIGNAL)
SLOTS = 4
IDLE, INIT, GETITEM, COLLATE, CONVERT = range(5)
STAGES = {IDLE: "idle", INIT: "running worker_init_fn", GETITEM: "loading sample",
          COLLATE: "running collate_fn", CONVERT: "converting/packing the batch"}
PICKLING = "pickling the batch for the main process"
UNKNOWN = -2  # the sample slot when the index is not an integer (or not known)
# the signal on which a worker writes the Python stacks of its threads to its dump
# file (faulthandler): the parent sends it to a worker that timed out. A real-time
# signal, which no library is likely to use for something else.
DUMP_SIGNAL = signal.SIGRTMIN + 6 if hasattr(signal, "SIGRTMIN") else None


class WorkerError:
    """An exception raised in a worker, carried to the parent as text, with where it
    happened: ``stage`` (e.g. "loading sample 5", "running collate_fn", "pickling
    the batch"), the batch index and the sample index (None where there is none).
    The parent adds the batch's sample indices, which it knows, when it raises."""

    def __init__(self, worker_id, exc_type, exc, tb, stage=None, batch=None, sample=None):
        self.worker_id = worker_id
        self.type_name = exc_type.__name__
        self.module = exc_type.__module__
        try:
            self.message = str(exc)
        except Exception:  # an exception whose __str__ fails must still be reported
            self.message = f"<{self.type_name} whose str() failed>"
        try:
            self.traceback = "".join(traceback.format_exception(exc_type, exc, tb))
        except Exception:  # pragma: no cover - same
            self.traceback = "".join(traceback.format_tb(tb)) + self.message
        self.stage = stage
        self.batch = batch
        self.sample = sample

    def where(self, indices=None):
        parts = []
        if self.stage:
            parts.append(self.stage)
        if self.batch is not None:
            parts.append(f"batch {self.batch}")
        if indices is not None:
            parts.append(f"sample indices {_short(indices)}")
        return f" (while {', '.join(parts)})" if parts else ""

    def exception(self, indices=None):
        """The exception to raise in the parent: the original type when it is a
        builtin taking one message, else RuntimeError; the message names the worker,
        the batch and sample indices and holds the worker's traceback."""
        text = (f"DataLoader worker {self.worker_id} raised {self.type_name}: {self.message}"
                f"{self.where(indices)}\nTraceback in the worker process:\n{self.traceback}")
        if self.stage == PICKLING:
            text += ("\nEvery sample, and what collate_fn returns, must be picklable to leave "
                     "a worker process: no lambdas, locks, open files or generators.")
        if self.type_name == "ShmFull":
            text += ("\nShared memory (/dev/shm) is full: use fewer workers (num_workers), a "
                     "smaller prefetch_factor, use_shared_memory=False, or a larger /dev/shm "
                     "(e.g. docker run --shm-size=2g).")
        cls = getattr(__import__("builtins"), self.type_name, None) \
            if self.module == "builtins" else None
        if isinstance(cls, type) and issubclass(cls, Exception) and cls not in (KeyError,):
            try:
                return cls(text)
            except TypeError:
                pass
        return RuntimeError(text)


def _short(indices, limit=16):
    """A list of indices for a message, elided past `limit` entries."""
    try:
        items = list(indices)
    except TypeError:
        return repr(indices)
    if len(items) <= limit:
        return "[" + ", ".join(str(i) for i in items) + "]"
    return ("[" + ", ".join(str(i) for i in items[:limit]) + f", ... ({len(items)} in all)]")


_received = threading.local()


def _note_header(epoch, idx, worker_id, warns=None):
    _received.header = (idx, worker_id)
    if warns:
        _received.warns = getattr(_received, "warns", []) + warns
    return epoch


def received_warnings():
    """The warnings the workers sent with the results unpickled in this thread since
    the last call, as ``(message, category, filename, lineno)``."""
    warns = getattr(_received, "warns", None)
    if not warns:
        return ()
    _received.warns = []
    out = []
    for text, module, qualname, filename, lineno in warns:
        category = sys.modules.get(module)
        for part in qualname.split("."):
            category = getattr(category, part, None)
        if not (isinstance(category, type) and issubclass(category, Warning)):
            category = UserWarning
        out.append((text, category, filename, lineno))
    return out


# warnings a worker showed since its last result; they travel with the next one
_pending_warnings: list = []


def _forward_warning(message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` in a worker: instead of printing to the worker's
    stderr (invisible in a notebook), keep the warning for the parent, which re-emits
    it under its own filters. Called only for warnings the worker's filters let
    through, so it costs nothing when there are none."""
    _pending_warnings.append((str(message), category.__module__, category.__qualname__,
                              str(filename), int(lineno)))


def _take_warnings():
    if not _pending_warnings:
        return None
    out = list(_pending_warnings)
    _pending_warnings.clear()
    return out


class Header:
    """The first field of a result, ``(Header, batch index, data)``: it unpickles to
    the plain epoch and, as unpickling goes front to back, notes which worker sent
    which batch before the data is loaded, so that a batch the parent cannot unpickle
    is reported with its worker and index (`last_header`)."""

    __slots__ = ("epoch", "idx", "worker_id", "warns")

    def __init__(self, epoch, idx, worker_id, warns=None):
        self.epoch, self.idx, self.worker_id, self.warns = epoch, idx, worker_id, warns

    def __reduce__(self):
        if self.warns:
            return (_note_header, (self.epoch, self.idx, self.worker_id, self.warns))
        return (_note_header, (self.epoch, self.idx, self.worker_id))


def last_header(clear=False):
    """``(batch index, worker id)`` of the last result whose unpickling began in
    this thread, or None."""
    h = getattr(_received, "header", None)
    if clear:
        _received.header = None
    return h


class ResultQueue(multiprocessing.queues.Queue):
    """The workers' result queue. ``put`` pickles in a background thread, so an
    unpicklable batch used to be printed to the worker's stderr and dropped: the
    parent then waited forever for it. Here such a failure becomes a `WorkerError`
    for that batch. The hook costs nothing on the normal path."""

    def _on_queue_feeder_error(self, e, obj):
        try:
            epoch, idx, data = obj
        except (TypeError, ValueError):
            epoch = idx = data = None
        if isinstance(e, OSError) or isinstance(data, WorkerError) or idx is None:
            # a broken pipe (the parent is gone) or an error that cannot be reported
            super()._on_queue_feeder_error(e, obj)
            return
        # this runs in the feeder thread: if it raised, the thread would die and every
        # later batch of this worker would be lost, so nothing may escape
        try:
            from fw.io import _shm

            _shm.discard(data)  # nobody will map the files of this batch
            wid = _worker_info.id if _worker_info is not None else -1
            err = WorkerError(wid, type(e), e, e.__traceback__, stage=PICKLING, batch=idx)
            self.put((epoch, idx, err))
        except Exception:  # pragma: no cover - defensive
            super()._on_queue_feeder_error(e, obj)


class IterableEnd:
    """A worker's IterableDataset copy is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _slot_value(i):
    """`i` as the progress array can hold it: an integer index, else UNKNOWN."""
    try:
        i = operator.index(i)
    except TypeError:
        return UNKNOWN
    return i if -2**63 <= i < 2**63 else UNKNOWN


def _seed_all(seed):
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        import fw

        fw.seed(seed)
    except Exception:  # pragma: no cover - fw.seed always exists
        pass


def _watch_parent(parent_pid, tag, poll):
    """Wait until the parent process is gone, then remove this loader's shared-memory
    files (batches nobody will receive) and exit, whatever the main thread is doing."""
    from fw.io import _shm

    fd = None
    try:
        fd = os.pidfd_open(parent_pid)
    except (AttributeError, OSError):  # pragma: no cover - Linux < 5.3 / not Linux
        fd = None
    if fd is not None:
        while True:
            try:
                if select.select([fd], [], [])[0]:
                    break
            except InterruptedError:  # pragma: no cover - retried by Python anyway
                continue
    else:  # pragma: no cover
        while os.getppid() == parent_pid:
            time.sleep(poll)
    _shm.die(tag)


def _enable_dumps(dump_file, progress, base):
    """Write the worker's Python stacks to `dump_file` when it crashes (SIGSEGV,
    SIGBUS, SIGABRT, ...) or receives DUMP_SIGNAL, and tell the parent it may send
    that signal (its default action would kill a worker not ready for it)."""
    try:
        faulthandler.enable(file=dump_file, all_threads=True)
        if DUMP_SIGNAL is not None:
            faulthandler.register(DUMP_SIGNAL, file=dump_file, all_threads=True)
            progress[base + 3] = 1
    except (AttributeError, OSError, RuntimeError, ValueError):  # pragma: no cover
        pass


def _start_watchdog(parent_pid, tag, poll):
    t = threading.Thread(target=_watch_parent, args=(parent_pid, tag, poll), daemon=True,
                         name="fw-DataLoader-parent-watchdog")
    t.start()


def worker_loop(iterable, dataset, index_queue, result_queue, done_event, collate, batching,
                batch_size, drop_last, init_fn, worker_id, num_workers, seed, use_shm, tag,
                parent_pid, poll, progress=None, dump_file=None):
    """The target of each worker process."""
    global _worker_info
    from fw.io import _shm
    from fw.io.collate import to_numpy_tree

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass
    _start_watchdog(parent_pid, tag, poll)
    warnings.showwarning = _forward_warning
    base = SLOTS * worker_id
    slot = base + 2  # the sample being loaded
    if progress is None:  # pragma: no cover - the DataLoader always passes one
        progress = [0] * (SLOTS * num_workers)
    if dump_file is not None:
        _enable_dumps(dump_file, progress, base)

    def mark(stage, batch=-1, sample=-1):
        progress[base] = stage
        progress[base + 1] = batch
        progress[base + 2] = sample

    try:
        mark(INIT)
        _seed_all(seed)
        _worker_info = WorkerInfo(worker_id, num_workers, dataset, seed)
        if init_fn is not None:
            init_fn(worker_id)
        mark(IDLE)
    except Exception:
        err = WorkerError(worker_id, *sys.exc_info(), stage=STAGES[INIT])
        result_queue.put((Header(None, None, worker_id, _take_warnings()), None, err))
        # make sure the error reaches the pipe before this process exits
        result_queue.close()
        result_queue.join_thread()
        return
    it = None
    it_epoch = None
    exhausted = False
    drawn = 0  # samples drawn from this worker's IterableDataset copy in this epoch
    while True:
        try:
            task = index_queue.get(timeout=poll)
        except queue.Empty:
            if done_event.is_set():
                break
            continue
        if task is None or done_event.is_set():
            break
        epoch, idx, indices = task
        sample = None
        try:
            if not iterable:
                if batching:
                    samples = []
                    mark(GETITEM, idx)
                    for i in indices:
                        sample = i
                        try:
                            progress[slot] = i
                        except (TypeError, OverflowError):  # a key that is no integer
                            progress[slot] = UNKNOWN
                        samples.append(dataset[i])
                    sample = None
                    mark(COLLATE, idx)
                    data = collate(samples)
                else:
                    sample = indices
                    mark(GETITEM, idx, _slot_value(indices))
                    item = dataset[indices]
                    sample = None
                    mark(COLLATE, idx)
                    data = collate(item)
            else:
                if it is None or it_epoch != epoch:
                    it, it_epoch, exhausted, drawn = iter(dataset), epoch, False, 0
                if exhausted:
                    raise StopIteration
                if batching:
                    samples = []
                    mark(GETITEM, idx)
                    for _ in range(batch_size):
                        sample = progress[slot] = drawn
                        try:
                            samples.append(next(it))
                        except StopIteration:
                            exhausted = True
                            break
                        drawn += 1
                    sample = None
                    if not samples or (drop_last and len(samples) < batch_size):
                        raise StopIteration
                    mark(COLLATE, idx)
                    data = collate(samples)
                else:
                    sample = drawn
                    mark(GETITEM, idx, drawn)
                    item = next(it)
                    drawn += 1
                    sample = None
                    mark(COLLATE, idx)
                    data = collate(item)
            mark(CONVERT, idx)
            data = to_numpy_tree(data)
            if use_shm:
                data = _shm.pack(data, tag, worker_id)
        except StopIteration:
            exhausted = True
            data = IterableEnd(worker_id)
        except Exception:
            stage = STAGES[progress[base]]
            if sample is not None:
                stage = f"loading sample {sample}" + (" (position in this worker's "
                                                      "stream)" if iterable else "")
            data = WorkerError(worker_id, *sys.exc_info(), stage=stage, batch=idx)
        mark(IDLE)
        result_queue.put((Header(epoch, idx, worker_id, _take_warnings()), idx, data))
    # never block at exit on a result the parent will not read any more
    result_queue.cancel_join_thread()
