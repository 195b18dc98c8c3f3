"""The worker side of `fw.io.DataLoader`: `get_worker_info` and the worker loop.

A worker takes tasks ``(epoch, batch index, indices)`` from its own index queue,
builds the batch (dataset lookups + collate, as NumPy arrays), moves large arrays
into shared memory and puts ``(epoch, batch index, batch)`` on the common result
queue. Errors are sent as `WorkerError` (exception type, message, formatted
traceback) instead of killing the worker; the end of an IterableDataset is sent as
`IterableEnd`. The worker exits on a ``None`` task, when the parent's done event
is set, or when the parent process is gone.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sys
import traceback

import numpy as np

__all__ = ["get_worker_info", "WorkerInfo"]

_worker_info = None


class WorkerInfo:
    """What `get_worker_info` returns inside a worker process.

    Attributes:
        id: this worker's index in ``[0, num_workers)``.
        num_workers: the number of workers.
        dataset: this worker's copy of the dataset.
        seed: the seed this worker's random generators (Python, NumPy, fw) got.
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
    """The `WorkerInfo` of the current DataLoader worker process, or None in the
    main process. Use it in an IterableDataset to shard the stream:

    >>> import fw
    >>> fw.io.get_worker_info() is None
    True
    """
    return _worker_info


class WorkerError:
    """An exception raised in a worker, carried to the parent as text."""

    def __init__(self, worker_id, exc_type, exc, tb):
        self.worker_id = worker_id
        self.type_name = exc_type.__name__
        self.module = exc_type.__module__
        self.message = str(exc)
        self.traceback = "".join(traceback.format_exception(exc_type, exc, tb))

    def exception(self):
        """The exception to raise in the parent: the original type when it is a
        builtin taking one message, else RuntimeError; the message names the worker
        and holds the worker's traceback."""
        text = (f"DataLoader worker {self.worker_id} raised {self.type_name}: {self.message}\n"
                f"Traceback in the worker process:\n{self.traceback}")
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


class IterableEnd:
    """A worker's IterableDataset copy is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _seed_all(seed):
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        import fw

        fw.seed(seed)
    except Exception:  # pragma: no cover - fw.seed always exists
        pass


def worker_loop(iterable, dataset, index_queue, result_queue, done_event, collate, batching,
                batch_size, drop_last, init_fn, worker_id, num_workers, seed, use_shm, tag,
                parent_pid, poll):
    """The target of each worker process."""
    global _worker_info
    from fw.io import _shm
    from fw.io.collate import to_numpy_tree

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass
    try:
        _seed_all(seed)
        _worker_info = WorkerInfo(worker_id, num_workers, dataset, seed)
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        result_queue.put((None, None, WorkerError(worker_id, *sys.exc_info())))
        # make sure the error reaches the pipe before this process exits
        result_queue.close()
        result_queue.join_thread()
        return
    it = None
    it_epoch = None
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=poll)
        except queue.Empty:
            if done_event.is_set() or os.getppid() != parent_pid:
                break
            continue
        if task is None or done_event.is_set():
            break
        epoch, idx, indices = task
        try:
            if not iterable:
                if batching:
                    data = collate([dataset[i] for i in indices])
                else:
                    data = collate(dataset[indices])
            else:
                if it is None or it_epoch != epoch:
                    it, it_epoch, exhausted = iter(dataset), epoch, False
                if exhausted:
                    raise StopIteration
                if batching:
                    samples = []
                    for _ in range(batch_size):
                        try:
                            samples.append(next(it))
                        except StopIteration:
                            exhausted = True
                            break
                    if not samples or (drop_last and len(samples) < batch_size):
                        raise StopIteration
                    data = collate(samples)
                else:
                    data = collate(next(it))
            data = to_numpy_tree(data)
            if use_shm:
                data = _shm.pack(data, tag, worker_id)
        except StopIteration:
            exhausted = True
            data = IterableEnd(worker_id)
        except Exception:
            data = WorkerError(worker_id, *sys.exc_info())
        result_queue.put((epoch, idx, data))
    # never block at exit on a result the parent will not read any more
    result_queue.cancel_join_thread()
