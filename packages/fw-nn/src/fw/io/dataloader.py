"""`DataLoader`: batches from a dataset, in the main process or in worker processes.

With ``num_workers > 0`` each worker process (``fork`` on Linux, ``spawn``
elsewhere) gets tasks on its own index queue and puts batches on one result
queue; the parent keeps ``prefetch_factor`` tasks per worker in flight and hands
batches out in sampler order. Robustness rules:

- every wait of the parent has a timeout: it polls the result queue and, between
  polls, the workers' liveness, so a worker that dies (killed, segfault,
  ``os._exit``) is reported with its id, exit code or signal, and the batch and
  sample it was loading (read from a small shared progress array) instead of a hang;
- an exception in a worker (``__getitem__``, collate_fn, worker_init_fn, or
  pickling a batch that cannot be pickled) comes back with the worker id, the
  batch and sample indices and the formatted traceback and is re-raised in the
  parent; a batch that cannot be unpickled in the parent is an error naming them too;
- ``timeout > 0`` bounds the wait for each batch and the error names the batch, its
  sample indices, the worker it was waiting for and what that worker is doing;
- with fork, workers write their Python stack with faulthandler to a temporary
  file when they crash (SIGSEGV, SIGBUS, SIGABRT, ...) or are asked after a
  timeout (`fw.io.worker.DUMP_SIGNAL`), and the error includes it;
- a worker whose parent dies (even by SIGKILL) removes the loader's shared-memory
  files and exits at once (see `fw.io.worker`); files of a loader whose parent and
  workers all died together are swept when the next loader starts;
- the workers are shut down (done event, sentinel, join, then terminate/kill) at
  the end of the epoch (unless ``persistent_workers``), on error, on
  KeyboardInterrupt, when the iterator is garbage collected and at exit, and are
  always joined, so no zombie processes remain;
- with shared memory, the need (first batch size x prefetch_factor x num_workers)
  is compared with the free space of /dev/shm when the first batch arrives, and a
  full /dev/shm in a worker is an error with the sizes, not a SIGBUS.
"""

from __future__ import annotations

import atexit
import itertools
import multiprocessing as mp
import os
import queue
import shutil
import signal
import sys
import tempfile
import time
import warnings
import weakref

import numpy as np

from fw.io import _shm
from fw.io.collate import collate_numpy, default_convert_fn, to_tensors
from fw.io.dataset import IterableDataset
from fw.io.sampler import BatchSampler, RandomSampler, SequenceSampler
from fw.io.worker import (
    DUMP_SIGNAL,
    GETITEM,
    SLOTS,
    STAGES,
    IterableEnd,
    ResultQueue,
    WorkerError,
    _short,
    last_header,
    received_warnings,
    worker_loop,
)
from fw.profiler import RecordEvent, TracerEventType

__all__ = ["DataLoader"]

# seconds between liveness checks while waiting (parent) and parent checks (workers)
POLL_INTERVAL = 0.1
# seconds the workers get to exit by themselves at shutdown before being terminated
SHUTDOWN_GRACE = 1.0
# the multiprocessing start method: None picks fork on Linux, spawn elsewhere
START_METHOD = os.environ.get("FW_DATALOADER_START_METHOD") or None

_live_iters: weakref.WeakSet = weakref.WeakSet()
_worker_warning_registry: dict = {}
_uid = itertools.count()


def _start_method():
    if START_METHOD:
        return START_METHOD
    return "fork" if sys.platform.startswith("linux") else "spawn"


@atexit.register
def _shutdown_all():
    for it in list(_live_iters):
        it._shutdown_workers()


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _main_stack(dump):
    """From a faulthandler dump of all threads, the header lines ("Fatal Python
    error: ...") and the stack of the thread running the worker loop (the others are
    the queue's feeder thread and the parent watchdog); everything when that thread
    is not found."""
    dump = dump.split("\nExtension modules:", 1)[0].strip()
    blocks = dump.split("\n\n")
    keep = [b for b in blocks if "most recent call first" not in b or "in worker_loop" in b]
    return "\n\n".join(keep if any("in worker_loop" in b for b in keep) else blocks)


class DataLoader:
    """Iterate over a dataset in batches.

    Args:
        dataset: a map-style `fw.io.Dataset` (``__getitem__``/``__len__``) or an
            `fw.io.IterableDataset`.
        feed_list, places: static-graph arguments, accepted and unused in dynamic mode.
        return_list: accepted for compatibility (batches are always lists/dicts of
            Tensors in dynamic mode).
        batch_sampler: yields lists of indices; exclusive with batch_size, shuffle
            and drop_last.
        batch_size: samples per batch; None yields single samples (converted by
            `fw.io.default_convert_fn`, no batch axis).
        shuffle: draw indices with a `RandomSampler`.
        drop_last: drop the last incomplete batch.
        collate_fn: builds a batch from a list of samples (default:
            `fw.io.default_collate_fn`); NumPy arrays it returns become Tensors.
        num_workers: worker processes (0 loads in the main process).
        use_buffer_reader: accepted for compatibility; with workers, prefetching is
            governed by ``prefetch_factor``.
        prefetch_factor: batches in flight per worker.
        use_shared_memory: move large arrays from workers through /dev/shm (else
            they are pickled through a pipe).
        timeout: seconds to wait for a batch from the workers (0: no limit, but
            dead workers are still detected).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker after
            its random generators are seeded.
        persistent_workers: keep the workers between epochs.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> ds = fw.io.TensorDataset([np.arange(10, dtype="float32"), np.arange(10) % 2])
        >>> loader = fw.io.DataLoader(ds, batch_size=4, shuffle=False, drop_last=True)
        >>> [(x.shape, y.tolist()) for x, y in loader]
        [([4], [0, 1, 0, 1]), ([4], [0, 1, 0, 1])]
        >>> len(loader)
        2
    """

    def __init__(self, dataset, feed_list=None, places=None, return_list=True,
                 batch_sampler=None, batch_size=1, shuffle=False, drop_last=False,
                 collate_fn=None, num_workers=0, use_buffer_reader=True, prefetch_factor=2,
                 use_shared_memory=True, timeout=0, worker_init_fn=None,
                 persistent_workers=False):
        self.dataset = dataset
        self.feed_list = feed_list
        self.places = places
        self.return_list = return_list
        self.use_buffer_reader = use_buffer_reader
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: 'num_workers' must be an int >= 0, got "
                             f"{num_workers!r}")
        if not isinstance(prefetch_factor, int) or prefetch_factor < 1:
            raise ValueError(f"DataLoader: 'prefetch_factor' must be an int >= 1, got "
                             f"{prefetch_factor!r}")
        if timeout < 0:
            raise ValueError(f"DataLoader: 'timeout' must be >= 0, got {timeout}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers=True needs num_workers > 0")
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.use_shared_memory = bool(use_shared_memory) and _shm.available()
        self.timeout = float(timeout)
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)
        self.collate_fn = collate_fn
        if self._iterable:
            if shuffle:
                raise ValueError("DataLoader: shuffle=True is not supported for an "
                                 "IterableDataset (shuffle inside the dataset)")
            if batch_sampler is not None:
                raise ValueError("DataLoader: batch_sampler is not supported for an "
                                 "IterableDataset")
            self.batch_sampler = None
            self.batch_size = batch_size
            self.drop_last = drop_last
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise ValueError("DataLoader: batch_sampler is exclusive with batch_size, "
                                 "shuffle and drop_last")
            self.batch_sampler = batch_sampler
            self.batch_size = getattr(batch_sampler, "batch_size", None)
            self.drop_last = getattr(batch_sampler, "drop_last", False)
        elif batch_size is None:
            if drop_last:
                raise ValueError("DataLoader: drop_last needs a batch_size")
            self.batch_sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
            self.batch_size = None
            self.drop_last = False
        else:
            if not isinstance(batch_size, int) or batch_size <= 0:
                raise ValueError(f"DataLoader: 'batch_size' must be a positive int or None, "
                                 f"got {batch_size!r}")
            self.batch_sampler = BatchSampler(dataset=dataset, shuffle=shuffle,
                                              batch_size=batch_size, drop_last=drop_last)
            self.batch_size = batch_size
            self.drop_last = drop_last
        self._batching = self.batch_size is not None or (batch_sampler is not None)
        self._iterator = None

    # the function workers run on each batch (NumPy out; the parent converts)
    def _collate(self):
        if self.collate_fn is not None:
            return self.collate_fn
        if not self._batching:
            return _identity
        return collate_numpy

    def __len__(self):
        if self._iterable:
            raise TypeError("DataLoader over an IterableDataset has no length")
        return len(self.batch_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            it = self._iterator
            if it is not None and it._usable():
                it._reset()
                return it
            self._iterator = _MultiProcessIter(self)
            return self._iterator
        return _MultiProcessIter(self)

    def __call__(self):
        return self.__iter__()

    def __del__(self):
        it = getattr(self, "_iterator", None)
        if it is not None:
            it._shutdown_workers()


def _identity(x):
    return x


def _finish(loader, data):
    """A fetched batch as the user gets it: Tensors (unbatched samples converted)."""
    if not loader._batching and loader.collate_fn is None:
        return default_convert_fn(data)
    return to_tensors(data)


class _SingleProcessIter:
    def __init__(self, loader):
        self.loader = loader
        if loader._iterable:
            self._it = iter(loader.dataset)
        else:
            self._it = iter(loader.batch_sampler)
        self._collate = loader._collate()
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        with RecordEvent("DataLoader::next", TracerEventType.Dataloader):  # reader cost
            return self._next()

    def _next(self):
        ld = self.loader
        if self._done:
            raise StopIteration
        if not ld._iterable:
            idx = next(self._it)
            data = self._collate([ld.dataset[i] for i in idx]) if ld._batching else \
                self._collate(ld.dataset[idx])
            return _finish(ld, data)
        if not ld._batching:
            return _finish(ld, self._collate(next(self._it)))
        samples = []
        for _ in range(ld.batch_size):
            try:
                samples.append(next(self._it))
            except StopIteration:
                self._done = True
                break
        if not samples or (ld.drop_last and len(samples) < ld.batch_size):
            self._done = True
            raise StopIteration
        return _finish(ld, self._collate(samples))

    def __len__(self):
        return len(self.loader)


def _peek_base_seed() -> int:
    """A seed for the workers derived from NumPy's global random state WITHOUT
    drawing from it: starting workers must not shift the shuffle order, so a run
    with num_workers=0 and one with workers see the same batches (both are
    reproducible from np.random.seed)."""
    _, keys, pos, has_gauss, gauss = np.random.get_state()
    words = [int(w) for w in np.asarray(keys, dtype=np.uint32)[::61]] + [int(pos)]
    return int(np.random.SeedSequence(words).generate_state(1)[0] & 0x7FFFFFFF)


class _MultiProcessIter:
    def __init__(self, loader):
        self.loader = loader
        self._owner = os.getpid()
        self._shutdown = True  # until the workers exist
        n = loader.num_workers
        self._n = n
        self._tag = f"{os.getpid()}_{next(_uid)}"
        ctx = mp.get_context(_start_method())
        self._lock_fd = None
        self._index_queues = [ctx.Queue() for _ in range(n)]
        self._result_queue = ResultQueue(ctx=ctx)
        self._done_event = ctx.Event()
        # per worker: stage, batch index, sample index (see fw.io.worker.STAGES)
        self._progress = ctx.RawArray("q", SLOTS * n)
        # with fork, each worker inherits a temporary file for its stack dumps
        # (faulthandler: on a crash, or on DUMP_SIGNAL when a batch timed out)
        self._dumps = [tempfile.TemporaryFile() for _ in range(n)] \
            if ctx.get_start_method() == "fork" else [None] * n
        base_seed = _peek_base_seed()
        self._workers = []
        self._shutdown = False
        _live_iters.add(self)
        try:
            if loader.use_shared_memory:
                _shm.sweep_stale()
                self._lock_fd = _shm.hold_lock(self._tag)
            with warnings.catch_warnings():
                # fork with other threads alive is deliberate (as PyTorch's loader does)
                warnings.filterwarnings("ignore", message=r".*fork\(\).*",
                                        category=DeprecationWarning)
                for i in range(n):
                    p = ctx.Process(
                        target=worker_loop,
                        args=(loader._iterable, loader.dataset, self._index_queues[i],
                              self._result_queue, self._done_event, loader._collate(),
                              loader._batching, loader.batch_size, loader.drop_last,
                              loader.worker_init_fn, i, n, base_seed + i,
                              loader.use_shared_memory, self._tag, os.getpid(),
                              POLL_INTERVAL, self._progress, self._dumps[i]),
                        daemon=True, name=f"fw-DataLoader-worker-{i}")
                    p.start()
                    self._workers.append(p)
        except BaseException:
            self._shutdown_workers()
            raise
        self._epoch = 0
        self._shm_checked = False
        self._reset()

    def _usable(self):
        return not self._shutdown and all(p.is_alive() for p in self._workers)

    def _reset(self):
        self._epoch += 1
        ld = self.loader
        self._sampler_iter = None if ld._iterable else iter(ld.batch_sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._outstanding = {}  # batch index -> worker id
        self._indices = {}  # batch index -> its sample indices (until delivered)
        self._buffer = {}  # batch index -> batch received ahead of its turn
        self._active = [True] * self._n
        self._next_worker = 0
        self._exhausted = False
        for _ in range(ld.prefetch_factor * self._n):
            if not self._try_put():
                break

    def _try_put(self):
        if self._exhausted:
            return False
        if self._sampler_iter is not None:
            try:
                indices = next(self._sampler_iter)
            except StopIteration:
                self._exhausted = True
                return False
        else:
            indices = None
        for _ in range(self._n):
            w = self._next_worker
            self._next_worker = (w + 1) % self._n
            if self._active[w]:
                break
        else:
            self._exhausted = True
            return False
        self._index_queues[w].put((self._epoch, self._send_idx, indices))
        self._outstanding[self._send_idx] = w
        if indices is not None:
            self._indices[self._send_idx] = indices
        self._send_idx += 1
        return True

    def __iter__(self):
        return self

    def __len__(self):
        return len(self.loader)

    def __next__(self):
        try:
            with RecordEvent("DataLoader::next", TracerEventType.Dataloader):  # reader cost
                return self._next()
        except StopIteration:
            if not self.loader.persistent_workers:
                self._shutdown_workers()
            raise
        except BaseException:
            self._shutdown_workers()
            raise

    def _next(self):
        if self._shutdown:
            raise StopIteration
        while True:
            while self._rcvd_idx < self._send_idx:
                i = self._rcvd_idx
                if i in self._buffer:
                    data = self._buffer.pop(i)
                    self._outstanding.pop(i, None)
                    self._indices.pop(i, None)
                    self._rcvd_idx += 1
                    self._try_put()
                    return self._deliver(data)
                if i in self._outstanding:
                    break
                self._rcvd_idx += 1  # a task that ended an IterableDataset copy
            else:
                if not self._try_put():
                    raise StopIteration
                continue
            epoch, idx, data = self._get()
            for text, category, filename, lineno in received_warnings():
                # the worker's warnings, under the parent's filters (once per location)
                warnings.warn_explicit(text, category, filename, lineno,
                                       registry=_worker_warning_registry)
            if isinstance(data, WorkerError):
                raise data.exception(self._indices.get(idx) if epoch == self._epoch else None)
            if epoch != self._epoch:
                _shm.discard(data)  # a result of an abandoned epoch
                continue
            if isinstance(data, IterableEnd):
                self._active[data.worker_id] = False
                self._outstanding.pop(idx, None)
                continue
            self._buffer[idx] = data

    def _get(self):
        """The next result, waiting at most ``timeout`` (when set) and checking the
        workers' liveness between short polls."""
        t0 = time.monotonic()
        limit = self.loader.timeout
        while True:
            wait = POLL_INTERVAL
            if limit > 0:
                left = limit - (time.monotonic() - t0)
                if left <= 0:
                    i = self._rcvd_idx
                    w = self._outstanding.get(i)
                    who = f"worker {w} (pid {self._workers[w].pid})" if w is not None else \
                        "the workers"
                    what = self._batch_text(i)
                    doing = f"; that worker is {self._doing(w)}" if w is not None else ""
                    stack = self._stack_of(w, ask=True) if w is not None else ""
                    raise RuntimeError(f"DataLoader timed out after {limit:g} s waiting for "
                                       f"batch {i} from {who}{what}{doing}; raise 'timeout' "
                                       f"if loading a batch legitimately takes longer{stack}")
                wait = min(wait, left)
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            except (OSError, EOFError):
                raise
            except Exception as e:  # the batch arrived but cannot be unpickled here
                self._raise_unpickling(e)
            dead = self._dead_worker()
            if dead is not None:
                # what a worker sent just before dying (its error, say) comes first
                try:
                    return self._result_queue.get(timeout=0.5)
                except queue.Empty:
                    self._raise_dead(dead)

    def _dead_worker(self):
        for i, p in enumerate(self._workers):
            if not p.is_alive():
                return i
        return None

    def _raise_dead(self, i):
        p = self._workers[i]
        code = p.exitcode
        how = f"was killed by {_signal_name(code)}" if code is not None and code < 0 else \
            f"exited with exit code {code}"
        hint = ""
        if code is not None and -code == signal.SIGBUS:  # usually a full /dev/shm
            hint = (" (a bus error in a worker usually means /dev/shm is full: use fewer "
                    "workers, a smaller prefetch_factor or use_shared_memory=False)")
        mine = sorted(k for k, w in self._outstanding.items() if w == i and k not in self._buffer)
        lost = ", ".join(f"batch {k}{self._batch_text(k)}" for k in mine[:4])
        if len(mine) > 4:
            lost += f" and {len(mine) - 4} more"
        raise RuntimeError(f"DataLoader worker {i} (pid {p.pid}) {how} unexpectedly while "
                           f"{self._doing(i)}; its unfinished batches: {lost or 'none'}; the "
                           f"loader was waiting for batch {self._rcvd_idx}{hint}"
                           f"{self._stack_of(i)}")

    def _stack_of(self, w, ask=False):
        """The Python stacks worker `w` wrote to its dump file (after a crash, or,
        with `ask`, on DUMP_SIGNAL sent now), as text to append to an error."""
        f = self._dumps[w]
        if f is None:
            return ""
        p = self._workers[w]
        fd = f.fileno()
        try:
            if ask and self._progress[SLOTS * w + 3] and p.is_alive():
                before = os.fstat(fd).st_size
                os.kill(p.pid, DUMP_SIGNAL)
                deadline = time.monotonic() + 2.0
                size = before
                while time.monotonic() < deadline:  # until the dump stops growing
                    time.sleep(0.05)
                    now = os.fstat(fd).st_size
                    if now > before and now == size:
                        break
                    size = now
            size = os.fstat(fd).st_size
            text = os.pread(fd, min(size, 1 << 16), 0).decode("utf-8", "replace")
        except OSError:
            return ""
        text = _main_stack(text)
        if not text:
            return ""
        return f"\nPython stack of worker {w} (pid {p.pid}), from faulthandler:\n{text}"

    def _raise_unpickling(self, e):
        h = last_header(clear=True)
        if h is not None and h[0] is not None:
            k, w = h
            who = f"batch {k}{self._batch_text(k)} from worker {w} (pid {self._workers[w].pid})"
        else:
            who = f"a batch (in flight: {sorted(self._outstanding)})"
        raise RuntimeError(f"DataLoader: {who} could not be unpickled in the main process: "
                           f"{type(e).__name__}: {e} (the traceback below is the main "
                           f"process's)") from e

    def _batch_text(self, k):
        indices = self._indices.get(k)
        return f" (sample indices {_short(indices)})" if indices is not None else ""

    def _doing(self, w):
        """What worker `w` last recorded doing, from the shared progress array."""
        stage, batch, sample = self._progress[SLOTS * w:SLOTS * w + 3]
        text = STAGES.get(stage, "idle")
        if stage == GETITEM:
            if sample < 0:
                return f"{text}s of batch {batch}"
            where = "position in its stream" if self.loader._iterable else "index"
            return f"{text} {sample} ({where}) of batch {batch}"
        if batch >= 0:
            return f"{text} for batch {batch}"
        return text

    def _deliver(self, data):
        ld = self.loader
        if ld.use_shared_memory:
            if not self._shm_checked:
                self._shm_checked = True
                self._check_shm(data)
            data = _shm.unpack(data)
        return _finish(ld, data)

    def _check_shm(self, packed):
        per_batch = _shm.nbytes(packed)
        ld = self.loader
        need = per_batch * ld.prefetch_factor * ld.num_workers
        if need == 0:
            return
        free = shutil.disk_usage(_shm.SHM_DIR).free
        ours = 0
        pre = _shm.prefix(self._tag)
        try:
            with os.scandir(_shm.SHM_DIR) as entries:
                for e in entries:
                    if e.name.startswith(pre):
                        ours += e.stat().st_size
        except OSError:
            pass
        if need > free + ours:
            mib = 2.0 ** 20
            raise RuntimeError(
                f"DataLoader: not enough shared memory: the first batch takes "
                f"{per_batch / mib:.1f} MiB, so prefetch_factor={ld.prefetch_factor} x "
                f"num_workers={ld.num_workers} batches in flight need about "
                f"{need / mib:.1f} MiB, but {_shm.SHM_DIR} has {(free + ours) / mib:.1f} MiB "
                f"free. Use fewer workers (num_workers), a smaller prefetch_factor, "
                f"use_shared_memory=False, or a larger {_shm.SHM_DIR} (e.g. docker run "
                f"--shm-size=2g).")

    def _shutdown_workers(self):
        if self._shutdown or os.getpid() != self._owner:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            interrupted = None
            try:
                deadline = time.monotonic() + SHUTDOWN_GRACE
                for p in self._workers:
                    p.join(timeout=max(0.0, deadline - time.monotonic()))
            except KeyboardInterrupt as e:  # a second Ctrl-C: skip the grace period
                interrupted = e
            for p in self._workers:
                if p.is_alive():
                    p.terminate()
            for p in self._workers:
                p.join(timeout=1.0)
                if p.is_alive():
                    p.kill()
                    p.join()
            for q in self._index_queues + [self._result_queue]:
                q.cancel_join_thread()
                q.close()
            for f in self._dumps:
                if f is not None:
                    f.close()
            if interrupted is not None:
                raise interrupted
        finally:
            _shm.cleanup(self._tag)
            if self._lock_fd is not None:
                _shm.release_lock(self._lock_fd)
                self._lock_fd = None
            _live_iters.discard(self)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

