"""ZeRO-3's communication during a step: gradient buckets reduce-scattered while
backward runs (`GradBuckets`) and parameter all-gathers issued one layer ahead
(`Prefetcher`).

Both follow DeepSpeed's ZeRO-3 and PyTorch FSDP (facts, not code): FSDP
reduce-scatters a whole wrapped unit's flat gradient in one message as soon as
that unit's backward has run, and prefetches the next unit's all-gather (forward:
the next unit in the order the last forward ran them; backward: the previous
one) so it travels while the current unit computes. Here a "unit" is a layer that
owns parameters (`Stage3Model` wraps each one's forward), and gradients of
consecutive layers share a bucket up to `bucket_bytes` — PyTorch DDP's and
Paddle's bucket idea, since one small layer per message pays MPI's latency per
layer.

Every collective here is issued in the same order on every rank (backward visits
the layers in the same order everywhere), so the nonblocking collectives match.
"""

from __future__ import annotations

import numpy as np

from fw.core.internal import bump_version
from fw.core.tensor import wrap
from fw.distributed import _fleet_comm as comm
from fw.distributed import communication as _c
from fw.distributed._progress import ProgressDriver, default_interval
from fw.distributed.communication.collectives import all_gather_into_tensor

__all__ = ["GradBuckets", "Prefetcher", "progress_driver"]


def progress_driver(group):
    """A `ProgressDriver` for `group` (MPI engine, several ranks), else None."""
    interval = default_interval()
    engine = getattr(group, "engine", None)
    mpi_comm = getattr(engine, "comm", None)
    if interval > 0 and group.nranks > 1 and mpi_comm is not None and \
            getattr(engine, "name", "") == "MPI":
        return ProgressDriver(mpi_comm, interval)
    return None


class _RSBucket:
    __slots__ = ("entries", "offsets", "recv", "send", "task")


class GradBuckets:
    """Full parameter gradients of one backward, reduce-scattered into the slices
    in buckets of up to `bucket_bytes` (of full gradient), launched as each fills.

    The forward marks every slice whose gradient this backward will deliver
    (`expect`); each slice's gradient hook (`slot_hook`) counts arrivals, and the
    last one waits for the buckets and writes the averaged slices into the shards'
    ``.grad`` (adding to what they hold, so gradients accumulate across backwards
    as usual). `finish` also runs from the optimizer's step (and the next forward)
    when a backward left slices without a gradient."""

    def __init__(self, group, bucket_bytes, driver=None):
        self.group = group
        self.n = group.nranks
        if not isinstance(bucket_bytes, (int, float)) or bucket_bytes <= 0:
            raise ValueError(f"group_sharded_parallel: buffer_max_size (the gradient bucket "
                             f"size in bytes) must be a positive number, got {bucket_bytes!r}")
        self.cap = bucket_bytes
        self.driver = driver
        self.open = []           # (slot, full gradient array) of the bucket being filled
        self.open_bytes = 0
        self.launched = []
        self.expected = set()
        self.fired = set()
        self.armed = False
        # reduce_scatters: buckets sent; early: of those, sent while backward still ran
        self.stats = {"reduce_scatters": 0, "early": 0, "gradients": 0}

    # -------------------------------------------------------------- forward
    def expect(self, slot):
        if self.n > 1:
            self.expected.add(id(slot))
            self.armed = True

    @property
    def in_flight(self) -> bool:
        return bool(self.open or self.launched)

    # -------------------------------------------------------------- backward
    def add(self, slot, g):
        """Take the full gradient `g` of `slot`'s parameter; returns what backward
        adds into the shard now (the slice itself on one rank, else zeros: the
        reduced slice is written when the buckets complete)."""
        if self.n == 1:
            out = np.zeros(slot.size, dtype=g.dtype)
            out[:slot.numel] = g.reshape(-1)
            return out
        self.stats["gradients"] += 1
        if self.open and self.open[0][1].dtype != g.dtype:
            self._launch()  # a bucket is one flat buffer: one dtype
        self.open.append((slot, g))
        self.open_bytes += slot.size * self.n * g.itemsize
        if self.open_bytes >= self.cap:
            self._launch()
            self.stats["early"] += 1
        return np.zeros(slot.size, dtype=g.dtype)

    def _launch(self):
        entries, self.open, self.open_bytes = self.open, [], 0
        n = self.n
        dtype = entries[0][1].dtype
        total = sum(s.size for s, _ in entries)
        # rank-major layout: row r holds rank r's slice of every gradient in the bucket,
        # so the reduce-scatter leaves each rank its slices side by side
        send = np.zeros((n, total), dtype=dtype)
        offsets = []
        o = 0
        for s, g in entries:
            flat = g.reshape(-1)
            if s.numel == n * s.size:
                send[:, o:o + s.size] = flat.reshape(n, s.size)
            else:  # the last slice is padded
                full = np.zeros(n * s.size, dtype=dtype)
                full[:s.numel] = flat
                send[:, o:o + s.size] = full.reshape(n, s.size)
            offsets.append(o)
            o += s.size
        b = _RSBucket()
        b.entries = [s for s, _ in entries]
        b.offsets = offsets
        b.recv = np.empty(total, dtype=dtype)
        b.send = send  # kept alive until the reduce-scatter completes
        b.task = _c.reduce_scatter(wrap(b.recv), wrap(send.reshape(-1)), _c.ReduceOp.SUM,
                                   group=self.group, sync_op=False)
        self.launched.append(b)
        self.stats["reduce_scatters"] += 1
        if self.driver is not None:
            self.driver.resume()

    def slot_hook(self, slot):
        """The gradient hook of `slot`'s shard."""

        def hook(g):
            if not self.armed or id(slot) not in self.expected:
                return None
            self.fired.add(id(slot))
            if len(self.fired) < len(self.expected):
                return None
            out = self.finish(current=slot)
            return None if out is None else wrap(out)

        return hook

    def finish(self, current=None):
        """Launch what is left, wait for every bucket, average and write the slices'
        gradients; returns the slice of `current` (whose hook is running: the engine
        adds the hook's result into ``.grad`` itself)."""
        if self.open:
            self._launch()
        if self.driver is not None:
            self.driver.pause()  # this thread's waits drive MPI from here
        results = {}
        inv = None
        for b in self.launched:
            comm.wait(b.task)
            b.send = None
            if inv is None or inv.dtype != b.recv.dtype:
                inv = np.asarray(1.0 / self.n, dtype=b.recv.dtype)
            b.recv *= inv
            for s, o in zip(b.entries, b.offsets):
                v = b.recv[o:o + s.size]
                prev = results.get(id(s))
                results[id(s)] = (s, v if prev is None else prev[1] + v)
        self.launched = []
        self.armed = False
        self.expected = set()
        self.fired = set()
        out = None
        for s, v in results.values():
            if s is current:
                out = np.array(v)
                continue
            sh = s.shard
            gt = sh._grad
            if gt is None or not gt._data.flags.writeable or gt._data.shape != v.shape:
                sh.grad = wrap(np.array(v) if gt is None else gt._data + v)
            else:
                gt._data += v
                bump_version(gt)
        return out


class Prefetcher:
    """All-gathers issued ahead of the layer that needs them: ``issue(key,
    flat)`` starts gathering every rank's `flat` (this rank's slices of a layer's
    parameters of one dtype), ``take(key)`` waits and returns the ``[nranks, k]``
    result (None when nothing was issued for `key`). `memory` counts the receive
    buffers while they live."""

    def __init__(self, group, memory, driver=None):
        self.group = group
        self.n = group.nranks
        self.memory = memory
        self.driver = driver
        self.pending = {}
        self.stats = {"prefetched": 0, "used": 0}

    def issue(self, key, flat):
        recv = np.empty(self.n * flat.size, dtype=flat.dtype)
        self.memory.track(recv)
        task = all_gather_into_tensor(wrap(recv), wrap(flat), group=self.group,
                                         sync_op=False)
        self.pending[key] = (task, recv, flat)
        self.stats["prefetched"] += 1
        if self.driver is not None:
            self.driver.resume()

    def take(self, key):
        got = self.pending.pop(key, None)
        if got is None:
            return None
        task, recv, _ = got
        comm.wait(task)
        self.stats["used"] += 1
        return recv.reshape(self.n, -1)

    def drain(self):
        """Wait for (and drop) prefetches nobody took (a forward that skipped a layer)."""
        for key in list(self.pending):
            task, _, _ = self.pending.pop(key)
            comm.wait(task)
