"""Gradient buckets of `fw.DataParallel`: which parameters share one all-reduce.

Backward produces gradients roughly in the reverse order of the parameters'
creation, so buckets are filled from the last parameter backwards: the first
bucket (the first gradients ready) is kept small (``last_comm_buffer_size``
MB, Paddle's name: it is the last layer's) so communication starts early, the
others hold up to ``comm_buffer_size`` MB. A bucket holds one dtype only (it is
one flat buffer). The design follows Paddle's ``assign_group_by_size`` and
PyTorch DDP's reducer (facts, not code): DDP too caps its first bucket at 1 MiB
(``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``) and the others at
``bucket_cap_mb`` (25), so the first all-reduce starts as soon as the output
layers' gradients exist.

`Reducer` owns the flat buffers and the per-step state: a parameter's hook copies
its gradient into its slot; when a bucket's last slot is written its all-reduce is
launched (asynchronously, in bucket order on every rank so the collectives match);
when every bucket is launched, the hook of the last parameter waits for all of
them and writes the averaged gradients back into ``.grad``.

With an optimizer attached (`Reducer.set_optimizer`, DataParallel's
``overlap_optimizer``) that write-back also steps the optimizer on each bucket's
parameters as soon as that bucket is averaged (fw-nn's partial
``step(parameters=...)``), while the later buckets' all-reduces are still in flight:
the last bucket — ready only when backward ends, so nothing else could hide it —
travels while the earlier buckets' parameters are updated. This follows PyTorch
DDP's fused-optimizer comm hook (``ddp_comm_hooks.optimizer_overlap_hooks``: each
bucket's optimizer step chained to its all-reduce future) and its
``_apply_optimizer_in_backward`` (facts, not code). The user's ``opt.step()`` then
completes the round (fw-nn), so results are bit-identical to an ordinary step.
"""

from __future__ import annotations

import time

import numpy as np

from fw.core.errors import UnsupportedError
from fw.core.internal import bump_version
from fw.core.tensor import Tensor, wrap
from fw.distributed import _fleet_comm as comm
from fw.distributed._progress import OpProgress, ProgressDriver, default_interval, mode
from fw.distributed._shm_buckets import SharedBuckets
from fw.profiler import RecordEvent, TracerEventType

_COMM = TracerEventType.Communication

__all__ = ["assign_buckets", "Reducer"]

_MB = 1 << 20


def assign_buckets(sizes, dtypes, comm_buffer_size=25, last_comm_buffer_size=1):
    """Bucket parameter indices: `sizes` (bytes) and `dtypes` per parameter, in
    parameter order. Returns a list of buckets (lists of indices, each in reverse
    parameter order), the first bucket being the first one backward fills.

    >>> assign_buckets([4, 4, 4], ["float32"] * 3, comm_buffer_size=8 / 2**20,
    ...                last_comm_buffer_size=4 / 2**20)
    [[2], [1, 0]]
    """
    if len(sizes) != len(dtypes):
        raise ValueError(f"assign_buckets: {len(sizes)} sizes but {len(dtypes)} dtypes")
    for name, v in (("comm_buffer_size", comm_buffer_size),
                    ("last_comm_buffer_size", last_comm_buffer_size)):
        if not isinstance(v, (int, float)) or v <= 0:
            raise ValueError(f"DataParallel: {name} must be a positive number of MB, got {v!r}")
    buckets = []
    open_ = {}  # dtype -> (indices, bytes)
    first_cap = last_comm_buffer_size * _MB
    cap = comm_buffer_size * _MB
    first_done = False
    for i in reversed(range(len(sizes))):
        dt = str(dtypes[i])
        cur = open_.get(dt)
        if cur is None:
            cur = open_[dt] = ([], 0)
        idx, nbytes = cur
        idx.append(i)
        nbytes += sizes[i]
        limit = cap if first_done else first_cap
        if nbytes >= limit:
            buckets.append(idx)
            first_done = True
            del open_[dt]
        else:
            open_[dt] = (idx, nbytes)
    for idx, _ in open_.values():
        if idx:
            buckets.append(idx)
    return buckets


class _Bucket:
    __slots__ = ("index", "params", "offsets", "buf", "pending", "task", "launched_at",
                 "done_at", "owner", "trace", "trace_name", "result", "parity")

    def __init__(self, index, params, offsets, buf):
        self.index = index
        self.params = params  # parameter indices
        self.offsets = offsets  # {param index: (start, end)}
        self.buf = buf  # the hooks write here (a shared-memory slot on the shm path)
        self.result = buf  # the sum after the wait (the MPI path reduces in place)
        self.parity = 0  # shm path: which of the two slots the next use fills
        self.pending = len(params)
        self.task = None
        self.launched_at = None
        self.done_at = None
        self.trace = None  # an fw.profiler RecordEvent from launch to seen complete
        self.trace_name = f"all_reduce bucket {index} ({buf.nbytes / 1e3:.0f} kB)"


class Reducer:
    """See the module docstring. `params`: the trainable parameters (Tensors);
    `group`: the data-parallel group (an `fw.distributed.Group`)."""

    def __init__(self, params, group, comm_buffer_size=25, last_comm_buffer_size=1,
                 find_unused_parameters=False, names=None, owners=None,
                 progress_interval=None):
        self.params = list(params)
        # ZeRO stage 2: owners[i] is the group rank that keeps parameter i's gradient;
        # its bucket is *reduced* to that rank and the others drop the gradient
        self.owners = list(owners) if owners is not None else None
        self.names = list(names) if names is not None else [p.name for p in self.params]
        self.group = group
        self.find_unused = bool(find_unused_parameters)
        sizes = [p._data.nbytes for p in self.params]
        dtypes = [str(p._data.dtype) for p in self.params]
        if self.owners is not None:  # a bucket goes to one owner
            dtypes = [f"{d}/{o}" for d, o in zip(dtypes, self.owners)]
        for p in self.params:
            if type(p._data) is not np.ndarray:
                raise NotImplementedError(
                    f"DataParallel: parameter {p.name!r} lives on {p.place}; this build "
                    f"all-reduces CPU (NumPy) gradients over MPI only")
        self.buckets = []
        self.bucket_of = {}
        for bi, idx in enumerate(assign_buckets(sizes, dtypes, comm_buffer_size,
                                                last_comm_buffer_size)):
            offsets = {}
            n = 0
            for i in idx:
                k = self.params[i]._data.size
                offsets[i] = (n, n + k)
                n += k
                self.bucket_of[i] = bi
            buf = np.zeros(n, dtype=self.params[idx[0]]._data.dtype)
            b = _Bucket(bi, idx, offsets, buf)
            b.owner = self.owners[idx[0]] if self.owners is not None else None
            self.buckets.append(b)
        # one node: the buckets are summed through an MPI-3 shared window instead of
        # MPI all-reduces that need the peer's progress (see _shm_buckets)
        self.shm = None
        if self.owners is None:
            layout = [(b.buf.size, str(b.buf.dtype)) if str(b.buf.dtype) in
                      ("float32", "float64") else None for b in self.buckets]
            self.shm = SharedBuckets.create(group, layout)
        if self.shm is not None:
            for b in self.buckets:
                if self.shm.applies(b.index):
                    b.buf = self.shm.buffer(b.index, 0)
        self.armed = False
        self.next_launch = 0
        self.ready = set()
        self._probe = 0
        self.used_mask = None
        self.profile = False
        self.events = []  # the last step's (what, bucket, seconds) when profiling
        self._t0 = 0.0
        self.optimizer = None  # stepped per bucket in the write-back (set_optimizer)
        self.step_params = None  # per bucket: its parameters the optimizer updates
        self._handles = [p.register_hook(self._make_hook(i)) for i, p in enumerate(self.params)]
        # a thread that drives MPI's progress while buckets are in flight (see _progress)
        self.driver = None
        interval = default_interval() if progress_interval is None else float(progress_interval)
        engine = getattr(group, "engine", None)
        mpi_comm = getattr(engine, "comm", None)
        mpi_buckets = self.shm is None or not all(self.shm.applies(b.index)
                                                  for b in self.buckets)
        if group.nranks > 1 and mpi_comm is not None and \
                getattr(engine, "name", "") == "MPI" and mpi_buckets:
            how = mode()
            if how == "ops":  # from the autograd engine, between backward ops
                self.driver = OpProgress(self._advance)
            elif how == "thread" and interval > 0:
                self.driver = ProgressDriver(mpi_comm, interval)

    def set_optimizer(self, optimizer):
        """Step `optimizer` (an fw ``Optimizer``) on each bucket's parameters as soon
        as the bucket is averaged (None detaches). Returns False, and leaves the
        overlap off, when the optimizer needs every gradient before any update
        (clipping by the global norm or a custom strategy) or its update is not
        elementwise per parameter (Lamb, ASGD, LBFGS); the caller says so."""
        if optimizer is None:
            self.optimizer = self.step_params = None
            return True
        if self.owners is not None:
            raise ValueError("DataParallel: overlap_optimizer cannot be combined with ZeRO "
                             "stage 2 (each bucket is reduced to one owner)")
        if reason_not_overlappable(optimizer) is not None:
            self.optimizer = self.step_params = None
            return False
        mine = {id(p) for p in optimizer.get_parameter_list() or ()}
        self.step_params = [[self.params[i] for i in b.params if id(self.params[i]) in mine]
                            for b in self.buckets]
        self.optimizer = optimizer
        return True

    def close(self):
        """Remove the hooks and stop the progress thread."""
        self.remove_hooks()
        if self.driver is not None:
            self.driver.close()
            self.driver = None
        if self.shm is not None:
            self.shm.close()
            self.shm = None

    def remove_hooks(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    # ------------------------------------------------------------ one step
    def prepare(self, outputs):
        """Called after forward when gradients will be synchronised: reset the step
        state (checking the previous one finished) and, with
        find_unused_parameters, mark the parameters backward will not reach."""
        if self.armed and self.ready:
            missing = [self.names[i] for i in range(len(self.params))
                       if i not in self.ready]
            self.armed = False
            self.ready = set()
            raise RuntimeError(
                f"DataParallel: the previous backward produced no gradient for parameters "
                f"{missing[:8]}{' ...' if len(missing) > 8 else ''}, so their gradient "
                f"all-reduce never ran (the ranks are now out of step). Pass "
                f"find_unused_parameters=True to DataParallel when the forward does not "
                f"use every parameter")
        self._pause()  # (a previous backward that raised may have left it running)
        self.armed = True
        self.ready = set()
        self.next_launch = 0
        self._probe = 0  # the oldest launched bucket not seen complete (hooks test it)
        for b in self.buckets:
            b.pending = len(b.params)
            b.task = None
        if self.profile:
            self.events = []
            self._t0 = time.perf_counter()
        if self.find_unused:
            used = _reachable_leaves(outputs)
            self.used_mask = np.array([id(p) in used for p in self.params], dtype=np.int32)
            for i, p in enumerate(self.params):
                if id(p) not in used:
                    self._fill(i, None)
                    self._mark_ready(i)

    def _event(self, what, bi):
        if self.profile:
            self.events.append((what, bi, time.perf_counter() - self._t0))

    def _fill(self, i, g):
        """Write the value ``.grad`` will hold after this backward into `i`'s slot.

        (The engine then adds `g` into ``.grad`` too, which the write-back
        overwrites. Setting ``.grad`` aside so the engine stores `g` instead was
        measured slower: the engine copies a gradient that is a view, and fresh
        arrays each step cost more than the in-place addition.)"""
        p = self.params[i]
        b = self.buckets[self.bucket_of[i]]
        s, e = b.offsets[i]
        slot = b.buf[s:e]
        old = p._grad
        if g is None:
            if old is None:
                slot.fill(0)
            else:
                slot[...] = old._data.reshape(-1)
            return
        if old is None:
            slot[...] = g._data.reshape(-1)
        else:
            np.add(old._data.reshape(-1), g._data.reshape(-1), out=slot)

    def _mark_ready(self, i):
        if i in self.ready:
            raise RuntimeError(
                f"DataParallel: parameter {self.names[i]!r} received a gradient twice "
                f"in one backward (a second backward through the same forward?); run "
                f"forward again before each backward")
        self.ready.add(i)
        b = self.buckets[self.bucket_of[i]]
        b.pending -= 1
        if b.pending == 0:
            self._event("ready", b.index)  # (launched now, or when the earlier ones are)
        # launch in bucket order so every rank issues the same collectives in turn
        while self.next_launch < len(self.buckets) and \
                self.buckets[self.next_launch].pending == 0:
            lb = self.buckets[self.next_launch]
            shm = self.shm
            if shm is not None and shm.applies(lb.index):
                lb.task = shm.launch(lb.index, lb.parity, lb.result)
                # the next use fills the other slot (the peers may still read this one)
                lb.parity ^= 1
                lb.buf = shm.buffer(lb.index, lb.parity)
            elif lb.owner is None:
                lb.task = comm.all_reduce(lb.buf, group=self.group, sync_op=False)
            else:
                lb.task = comm.reduce(lb.buf, dst=lb.owner, group=self.group, sync_op=False)
            self._event("launch", lb.index)
            # a Communication event of an fw.profiler recording (begin() is a no-op
            # when no profiler records): the chrome trace shows it beside backward's ops
            lb.trace = RecordEvent(lb.trace_name, _COMM)
            lb.trace.begin()
            self.next_launch += 1
            if self.driver is not None and (shm is None or not shm.applies(lb.index)):
                self.driver.resume()

    def _poll(self):
        for b in self.buckets[:self.next_launch]:
            if b.task is not None and b.done_at is None and b.task.is_completed():
                b.done_at = time.perf_counter()
                self._event("done", b.index)
                _end_trace(b)

    def _make_hook(self, i):
        def hook(g):
            if not self.armed:
                return None
            self._fill(i, g)
            self._mark_ready(i)
            if self.profile:
                self._poll()
            else:
                self._advance()
            if self.next_launch == len(self.buckets):
                return self._finish(i)
            return None

        return hook

    def _advance(self):
        """Drive MPI's progress engine so launched all-reduces move on while backward
        computes (MPICH progresses only inside MPI calls, and one test advances every
        request: testing the oldest unfinished bucket is enough; the progress thread
        or OpProgress does the same between hooks). On the shared-memory path the
        test reduces a bucket whose peers all published it."""
        k = self._probe
        while k < self.next_launch:
            b = self.buckets[k]
            if b.task is not None and not b.task.is_completed():
                break
            k += 1
        self._probe = k

    def _finish(self, current):
        """Every bucket is launched: wait for them, average, write ``.grad``."""
        # from here on this thread's own waits drive MPI: the progress thread would
        # only contend for MPICH's lock (and a core). Also with the optimizer stepped
        # per bucket: kept probing through the steps, it made the MLP's steps slower
        # (A/B, 6 rounds each at load ~6: plain/overlapped 0.88 with it vs 0.98 without)
        self._pause()
        if self.profile:
            self._poll()  # buckets the progress thread completed count as done by now
        self._event("backward_end", -1)
        n = self.group.nranks
        globally_used = None
        if self.find_unused and self.used_mask is not None:
            globally_used = self.used_mask.copy()
            comm.all_reduce(globally_used, op="max", group=self.group)
        try:
            out = self._write_back(current, n, globally_used)
        finally:
            # (also when an overlapped optimizer step raised: the step is over)
            self.armed = False
            self.ready = set()
            for b in self.buckets:
                b.done_at = None
        self._event("synced", -1)
        return out

    def _write_back(self, current, n, globally_used):
        """Wait for each bucket in turn and write its averages into ``.grad`` (a
        bucket is written back while the later ones are still in flight): one
        pass per gradient, the division by the group size fused into the copy."""
        out = None
        inv = None
        opt = self.optimizer
        for b in self.buckets:
            comm.wait(b.task)
            if b.done_at is None:
                b.done_at = time.perf_counter()
            _end_trace(b)
            self._event("waited", b.index)
            if inv is None or inv.dtype != b.buf.dtype:
                inv = np.asarray(1.0 / n, dtype=b.buf.dtype)
            for i in b.params:
                p = self.params[i]
                s, e = b.offsets[i]
                val = b.result[s:e].reshape(p._data.shape)
                if b.owner is not None and b.owner != self.group.rank:
                    # stage 2: the owner keeps the reduced gradient, this rank frees its own
                    if i == current:
                        out = _zeros_like(p)  # (the engine stores it; step() drops it)
                    else:
                        p.clear_gradient(False)
                    continue
                if globally_used is not None and not globally_used[i]:
                    # no rank used it: leave .grad as it was (None stays None), as a
                    # single process would
                    if i == current:
                        out = _zeros_like(p)
                    continue
                if i == current:
                    # the engine adds the hook's return value into .grad after the hook
                    if p._grad is None and opt is not None:
                        # the optimizer steps it now: .grad must hold it already
                        p.grad = wrap(np.multiply(val, inv))
                        out = _zeros_like(p)
                    elif p._grad is None:  # never set: it stores this array
                        out = wrap(np.multiply(val, inv))
                    else:
                        np.multiply(val, inv, out=p._grad._data)
                        bump_version(p._grad)
                        out = _zeros_like(p)
                    continue
                gt = p._grad
                if gt is None or gt._data.shape != val.shape or \
                        not gt._data.flags.writeable:
                    p.grad = wrap(np.multiply(val, inv))
                else:
                    np.multiply(val, inv, out=gt._data)
                    bump_version(gt)
            if opt is not None and self.step_params[b.index]:
                # the later buckets are still in flight: update this one's parameters now
                opt.step(parameters=self.step_params[b.index])
                self._event("stepped", b.index)
                if self.profile:
                    self._poll()  # did a later bucket's all-reduce finish meanwhile?
        return out

    def _pause(self):
        if self.driver is not None:
            self.driver.pause()


def reason_not_overlappable(optimizer):
    """Why `optimizer` cannot be stepped bucket by bucket (a sentence), or None."""
    from fw.optimizer import Optimizer

    name = type(optimizer).__name__
    if not isinstance(optimizer, Optimizer):
        return f"{name} is not an fw.optimizer.Optimizer"
    try:
        # an empty partial step updates nothing; fw-nn refuses it, saying why, for
        # global-norm or custom clipping and for updates not elementwise per parameter
        optimizer.step(parameters=[])
    except (UnsupportedError, ValueError) as e:
        return str(e)
    except TypeError as e:  # LBFGS: step(closure)
        return f"its step has no partial form ({e})"
    return None


def _end_trace(b):
    if b.trace is not None:
        b.trace.end()
        b.trace = None


def _zeros_like(p):
    return wrap(np.zeros_like(p._data))


def _reachable_leaves(outputs) -> set:
    """ids of the leaf tensors the autograd graph of `outputs` reaches.

    Walks the tape through each tensor's ``_node`` (fw.core.internal's slot) and
    the nodes' ``edges`` (fw-autograd's tape: an edge is a node, a port with
    ``.node``, or a leaf tensor)."""
    seen = set()
    leaves = set()
    stack = []

    def push(t):
        for x in _tensors_in(t):
            nd = x._node
            if nd is None:
                if not x._sg:
                    leaves.add(id(x))
            else:
                stack.append(nd)

    push(outputs)
    while stack:
        nd = stack.pop()
        nd = getattr(nd, "node", nd)  # a port -> its node
        if id(nd) in seen:
            continue
        seen.add(id(nd))
        for e in getattr(nd, "edges", ()) or ():
            if e is None:
                continue
            if isinstance(e, Tensor):
                leaves.add(id(e))
            else:
                stack.append(e)
    return leaves


def _tensors_in(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors_in(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors_in(v)
