"""``fw.distributed.spawn``: run a function on N local ranks (Paddle's ``spawn``).

The parent does what the launcher does for one node — it hosts the job's
store, serves PMI-1 to the ranks (`fw.distributed._pmi.PMIServer`) and gives
each rank the launcher's environment — so ``init_parallel_env()`` in ``func``
joins one ``COMM_WORLD`` exactly as under ``python -m fw.distributed.launch``.

Each rank is a fresh interpreter (like multiprocessing's ``spawn`` start
method: nothing is forked, so CUDA and MPI state never leak) running a small
bootstrap that receives ``func`` and ``args`` over a pipe. As with
multiprocessing, ``func`` must be importable by name (a module-level function),
and a ``__main__`` script is re-imported as ``__mp_main__`` (guard its entry
point with ``if __name__ == "__main__":``). A rank that raises reports its
traceback back as text (JSON), and `MultiprocessContext.join` raises a
`SpawnError` naming the rank; one that dies of a signal is named with it.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing.spawn as _mp_spawn
import os
import pickle
import struct
import sys
import threading
import time

from fw.distributed import _pmi
from fw.distributed.launch import env as _env
from fw.distributed.launch.workers import ShmTracker, Worker, describe_exit, kill_all

__all__ = ["spawn", "MultiprocessContext", "SpawnError"]

_FRAME = struct.Struct(">Q")
_MAX_TRACEBACK = 16 * 1024
_OPTIONS = ("start_method", "gpus", "xpus", "ips", "print_config", "backend", "timeout",
            "pmi_timeout", "allow_stale_env", "grace")


class SpawnError(RuntimeError):
    """A spawned rank failed: ``rank``, ``pid``, ``exit_code`` (or ``signal_name``),
    and the rank's ``traceback`` text when it raised."""

    def __init__(self, message, rank=None, pid=None, exit_code=None, signal_name=None,
                 traceback_text=None):
        super().__init__(message)
        self.rank, self.pid, self.exit_code = rank, pid, exit_code
        self.signal_name, self.traceback = signal_name, traceback_text


def _default_nprocs() -> int:
    # Paddle: the devices in CUDA_VISIBLE_DEVICES; fw's CPU engine falls back to the cores
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if visible and visible != "-1":
        return len([d for d in visible.split(",") if d.strip()])
    return os.cpu_count() or 1


class MultiprocessContext:
    """The ranks started by `spawn` (Paddle's ``MultiprocessContext``).

    ``processes`` holds one `fw.distributed.launch.workers.Worker` per rank
    (``.pid``, ``.returncode``)."""

    def __init__(self, workers, pmi, store, grace: float, daemon: bool):
        self.processes = workers
        self._pmi, self._store, self._grace = pmi, store, grace
        self._daemon = daemon
        self._results: dict[int, dict] = {}
        self._readers: dict[int, int] = {}
        self._failed: SpawnError | None = None
        self._closed = False
        self._pmi_error = None
        self._shm = ShmTracker()  # MPICH segments a killed rank would leave in /dev/shm
        atexit.register(self._at_exit)

    # results come back on one pipe per rank, as one JSON object
    def _read_result(self, rank: int):
        fd = self._readers.pop(rank, None)
        if fd is None:
            return
        chunks = []
        try:
            os.set_blocking(fd, False)
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        if data:
            try:
                self._results[rank] = json.loads(data)
            except ValueError:
                self._results[rank] = {"error": data.decode(errors="replace")}

    def _fail(self, err: SpawnError):
        self._failed = err
        deadline = time.monotonic() + self._grace
        while time.monotonic() < deadline and any(w.poll() is None for w in self.processes):
            self._shm.sample(self.processes)
            time.sleep(0.02)
        self._shm.sample(self.processes, force=True)
        kill_all(self.processes, f"killed by spawn: {err.args[0].splitlines()[0]}")
        self._shm.cleanup()
        self._close()
        raise err

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: until the ranks end) for every rank.

        Returns True when all ranks exited 0, False if some still run at the
        timeout. Raises `SpawnError` as soon as a rank fails (it raised, exited
        non-zero, died of a signal, or left others waiting in a PMI barrier),
        after killing the other ranks; PMI barriers are bounded by the PMI
        timeout, so a rank that never reaches ``MPI_Init`` cannot hang it."""
        if self._failed is not None:
            raise self._failed
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._pmi_error is not None:
                self._fail(SpawnError(f"spawn: {self._pmi_error}",
                                      rank=getattr(self._pmi_error, "missing", None)))
            alive, found = 0, []
            for w in self.processes:
                rc = w.poll()
                if rc is None:
                    alive += 1
                    continue
                self._read_result(w.rank)
                if rc != 0:
                    # a signal death first: the ranks MPI then fails exit with a code
                    found.append((0 if rc < 0 else 1, self._error_for(w)))
                    continue
                waiting = self._pmi.waiting_for(w.rank) if self._pmi else []
                if waiting:
                    found.append((2, SpawnError(
                        f"spawn: rank {w.rank} (pid {w.pid}) returned while rank(s) "
                        f"{_pmi._ranges(waiting)} wait for it in MPI_Init or a PMI barrier "
                        "(it did not call init_parallel_env / MPI_Init while the others did)",
                        rank=w.rank, pid=w.pid, exit_code=0)))
            if found:
                self._fail(min(found, key=lambda f: f[0])[1])
            if not alive:
                self._close()
                return True
            self._shm.sample(self.processes)
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def _error_for(self, w) -> SpawnError:
        rc = w.returncode
        res = self._results.get(w.rank, {})
        tb = res.get("error")
        if tb:
            msg = (f"spawn: rank {w.rank} (pid {w.pid}) raised an exception:\n{tb}")
        else:
            msg = f"spawn: rank {w.rank} (pid {w.pid}) died: {describe_exit(rc)}"
        sig = describe_exit(rc)[len("signal "):] if rc < 0 else None
        return SpawnError(msg, rank=w.rank, pid=w.pid, exit_code=rc if rc >= 0 else None,
                          signal_name=sig, traceback_text=tb)

    def _close(self):
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self._at_exit)
        for fd in self._readers.values():
            os.close(fd)
        self._readers.clear()
        if self._pmi is not None:
            self._pmi.close()
            self._pmi = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def _at_exit(self):
        if self._closed:
            return
        if self._daemon:
            kill_all(self.processes, "the parent exited (daemon ranks)")
            self._close()
            return
        try:
            # like multiprocessing: a non-daemon rank is waited for at interpreter exit
            self.join()
        except SpawnError as e:
            print(str(e), file=sys.stderr)


def spawn(func, args=(), nprocs: int = -1, join: bool = True, daemon: bool = False,
          **options) -> MultiprocessContext:
    """Start ``nprocs`` ranks, each calling ``func(*args)`` (Paddle 3.x's ``spawn``).

    Args:
        func: a module-level function (pickled by name).
        args: its arguments (pickled).
        nprocs: the number of ranks; -1: the devices in ``CUDA_VISIBLE_DEVICES``,
            else the CPU count.
        join: wait for all ranks (raising `SpawnError` if one fails) before returning.
        daemon: kill the ranks when the parent exits instead of waiting for them.
        options: ``gpus`` ("0,1": one device per rank, ``FLAGS_selected_gpus``),
            ``ips`` (only "127.0.0.1": spawn is single-node), ``start_method``
            (only "spawn"), ``timeout`` (the ranks' collective timeout,
            ``FW_DIST_TIMEOUT``), ``pmi_timeout`` (seconds a PMI barrier may wait),
            ``grace`` (seconds the others get after a rank failed, default 3),
            ``allow_stale_env``.

    Returns:
        a `MultiprocessContext`.

    Examples:
        Two ranks started from a script file (``func`` must be importable by name, so
        this is not run as a doctest)::

            import fw
            import fw.distributed as dist

            def train(lr):
                dist.init_parallel_env()
                t = fw.to_tensor([float(dist.get_rank())])
                dist.all_reduce(t)          # 0 + 1 on both ranks

            if __name__ == "__main__":
                dist.spawn(train, args=(0.1,), nprocs=2)
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError(f"spawn: unknown option(s) {unknown}; supported: {list(_OPTIONS)}")
    if not callable(func):
        raise TypeError(f"spawn: 'func' must be callable, got {type(func).__name__}")
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"spawn: 'args' must be a tuple or list, got {type(args).__name__}")
    method = options.get("start_method", "spawn")
    if method != "spawn":
        raise ValueError(f"spawn: start_method={method!r}: fw starts every rank as a fresh "
                         "interpreter ('spawn'); forking would copy MPI/CUDA state")
    ips = options.get("ips")
    if ips not in (None, "127.0.0.1", "localhost"):
        raise ValueError(f"spawn: ips={ips!r}: spawn starts ranks on this node only; use "
                         "python -m fw.distributed.launch --nnodes for several nodes")
    devices = options.get("gpus") or options.get("xpus")
    devices = [d.strip() for d in str(devices).split(",") if d.strip()] if devices else None
    if nprocs == -1:
        nprocs = len(devices) if devices else _default_nprocs()
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs < 1:
        raise ValueError(f"spawn: 'nprocs' must be a positive int or -1, got {nprocs!r}")
    if devices is not None and len(devices) != nprocs:
        raise ValueError(f"spawn: nprocs={nprocs} but gpus={options.get('gpus')!r} names "
                         f"{len(devices)} devices (one rank per device)")
    _env.check_stale_env(allow=bool(options.get("allow_stale_env")), who="fw.distributed.spawn")
    pmi_timeout = float(options.get("pmi_timeout") or _pmi.barrier_timeout_from_env())
    grace = float(options.get("grace", 3.0))

    # the payload: how to re-create __main__ (multiprocessing's own recipe), then func/args
    try:
        data = _mp_spawn.get_preparation_data("fw-spawn")
        # multiprocessing's authkey only pickles inside its own spawning: the ranks
        # do not use multiprocessing's authenticated connections to the parent
        data.pop("authkey", None)
        prep = pickle.dumps(data)
        call = pickle.dumps((func, tuple(args)))
    except Exception as e:
        raise TypeError(f"spawn: cannot pickle func {getattr(func, '__qualname__', func)!r} "
                        f"and its args ({type(e).__name__}: {e}); func must be a module-level "
                        "function and args picklable") from None

    from fw.distributed.store import TCPStore

    store = TCPStore("127.0.0.1", 0, is_master=True, world_size=nprocs)
    job_id = f"spawn.{os.getpid()}.{int(time.time() * 1000) % 10**9}"
    endpoints = [f"127.0.0.1:{p}" for p in _free_ports(nprocs)]
    holder: dict = {}

    def on_failure(err):
        holder["ctx"]._pmi_error = err

    def on_abort(rank, code, msg):
        holder["ctx"]._pmi_error = _pmi.PMIError(f"rank {rank} called MPI_Abort "
                                                 f"(exit code {code}) {msg}".rstrip())

    pmi = _pmi.PMIServer(range(nprocs), nprocs, _pmi.process_mapping(1, nprocs),
                         barrier_timeout=pmi_timeout, kvsname=f"kvs_{job_id}",
                         on_failure=on_failure, on_abort=on_abort)
    base = _env.clean_environ()
    workers, readers = [], {}
    try:
        for rank in range(nprocs):
            theirs = pmi.channel(rank)
            payload_r, payload_w = os.pipe()
            result_r, result_w = os.pipe()
            try:
                env = _env.rank_environ(
                    base, rank=rank, local_rank=rank, world_size=nprocs,
                    local_world_size=nprocs, endpoints=endpoints,
                    store_endpoint=store.endpoint, job_id=job_id, pmi_fd=theirs.fileno(),
                    timeout=options.get("timeout"),
                    device=devices[rank] if devices else None)
                env["FW_SPAWN_FDS"] = f"{payload_r},{result_w}"
                workers.append(Worker(rank, rank, [sys.executable, "-c", _BOOTSTRAP], env,
                                      pass_fds=(theirs.fileno(), payload_r, result_w)))
            finally:
                theirs.close()
                os.close(payload_r)
                os.close(result_w)
            readers[rank] = result_r
            threading.Thread(target=_send_payload, args=(payload_w, prep, call),
                             name=f"fw-spawn-payload{rank}", daemon=True).start()
    except BaseException:
        kill_all(workers, "spawn failed to start every rank")
        for fd in readers.values():
            os.close(fd)
        pmi.close()
        store.close()
        raise
    ctx = MultiprocessContext(workers, pmi, store, grace, daemon)
    ctx._readers = readers
    holder["ctx"] = ctx
    pmi.start()
    if join:
        ctx.join()
    return ctx


def _free_ports(n):
    from fw.distributed.launch.main import _free_ports as free

    return free("127.0.0.1", n)


def _send_payload(fd: int, prep: bytes, call: bytes):
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_FRAME.pack(len(prep)) + prep + _FRAME.pack(len(call)) + call)
    except OSError:
        pass  # the rank died before reading; join() reports how


# A rank's entry point, run with ``python -c``: standard library only, so a rank
# whose function does not use fw never pays for importing it (``import fw``
# loads the whole framework). It reads two length-prefixed pickles from the
# parent over a pipe (IPC with its own parent, never a file: the same trust
# boundary as multiprocessing's), re-creates ``__main__`` with multiprocessing's
# own recipe, calls the function, and reports the outcome as JSON on a second pipe
# (the traceback text when it raised, cut to stay below the pipe's buffer: the
# parent reads it after the rank exited).
_BOOTSTRAP = f"""
import json, os, pickle, struct, sys, traceback
import multiprocessing.spawn as mp_spawn

def read_frame(f):
    head = f.read({_FRAME.size})
    if len(head) != {_FRAME.size}:
        raise RuntimeError("fw.distributed.spawn: the parent closed the payload pipe early")
    (n,) = struct.unpack(">Q", head)
    data = f.read(n)
    if len(data) != n:
        raise RuntimeError("fw.distributed.spawn: truncated payload from the parent")
    return data

payload_fd, result_fd = (int(x) for x in os.environ.pop("FW_SPAWN_FDS").split(","))
result = os.fdopen(result_fd, "wb")
code = 0
try:
    with os.fdopen(payload_fd, "rb") as f:
        prep = read_frame(f)
        call = read_frame(f)
    mp_spawn.prepare(pickle.loads(prep))
    func, args = pickle.loads(call)
    del prep, call, f
    func(*args)
    result.write(json.dumps({{"ok": True}}).encode())
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if code:
        result.write(json.dumps({{"error": "SystemExit(%r)" % (e.code,)}}).encode())
except BaseException:
    text = traceback.format_exc()
    if len(text) > {_MAX_TRACEBACK}:
        text = "...\\n" + text[-{_MAX_TRACEBACK}:]
    result.write(json.dumps({{"error": text}}).encode())
    code = 1
finally:
    try:
        result.close()
    except OSError:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
if code:
    os._exit(code)  # skip MPI's atexit finalize: the job is being torn down
"""
