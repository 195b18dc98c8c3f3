"""A PMI-1 server: the fw launcher is MPICH's process manager.

Each rank gets one end of a socketpair as ``PMI_FD`` (with ``PMI_RANK`` and
``PMI_SIZE``); MPICH's ``MPI_Init`` speaks the PMI-1 line protocol on it to
learn its rank, publish its network address (``put``), wait for everyone
(``barrier_in``) and read the others' addresses (``get``). Serving that protocol
ourselves is what lets separately started processes — on one node or several —
join one ``COMM_WORLD`` without ``mpiexec``/hydra or ssh.

The protocol facts (commands, reply names, ``rc=``) follow the description in
Flux RFC 13 ("Simple Process Manager Interface v1") and what MPICH 5.0's
simple PMI client sends; the code is fw's own.

One `PMIServer` serves the ranks of one node. Its key-value space is
exchanged between nodes at every barrier through a `KVSExchange`: `LocalKVS`
for a single node (nothing to exchange), `StoreKVS` for several nodes (each
node's puts of one barrier epoch travel as one JSON value on the job's
`fw.distributed.store.TCPStore`, and waiting for every node's value is the
cross-node barrier).

Every wait is bounded: a barrier that some ranks do not reach within
``barrier_timeout`` seconds fails the server with a `PMIBarrierTimeout` naming
the ranks (or nodes) that did not arrive.
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import socket
import threading
import time

__all__ = ["PMIError", "PMIBarrierTimeout", "PMIServer", "LocalKVS", "StoreKVS",
           "process_mapping", "DEFAULT_BARRIER_TIMEOUT"]

# seconds a PMI barrier may wait for its last rank (MPI_Init's wire-up, and
# MPI_Finalize's barrier); FW_PMI_TIMEOUT or the launcher's --pmi_timeout change it
DEFAULT_BARRIER_TIMEOUT = 300.0

# the limits announced by get_maxes (MPICH's simple PMI uses 256/256/1024 too)
_KVSNAME_MAX, _KEYLEN_MAX, _VALLEN_MAX = 256, 256, 1024
_MAX_LINE = 64 * 1024


class PMIError(RuntimeError):
    """The PMI server stopped: a rank misbehaved or a barrier could not complete."""


class PMIBarrierTimeout(PMIError, TimeoutError):
    """A PMI barrier ran out of time; ``missing`` lists the global ranks that did not arrive."""

    def __init__(self, message, missing=()):
        super().__init__(message)
        self.missing = list(missing)


def process_mapping(nnodes: int, nproc_per_node: int) -> str:
    """MPICH's ``PMI_process_mapping`` for ranks laid out node by node.

    ``(vector,(0,K,L))`` says: starting at node 0, K nodes hold L consecutive
    ranks each. MPICH uses it to decide which ranks share memory (same node)
    and which talk over the network."""
    return f"(vector,(0,{int(nnodes)},{int(nproc_per_node)}))"


def _ranges(ranks) -> str:
    """[0, 1, 2, 5] -> '0-2, 5' (short names for long rank lists in errors)."""
    ranks = sorted(ranks)
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ", ".join(out)


class LocalKVS:
    """The key-value exchange of a one-node job: every put is already local."""

    nnodes = 1

    def exchange(self, epoch, puts, deadline, aborted):
        return {}

    def close(self):
        pass


class StoreKVS:
    """Exchanges each node's PMI puts through the job's TCP store at every barrier.

    At barrier ``epoch`` node ``n`` sets ``{prefix}/{epoch}/{n}`` to the JSON
    of the puts its ranks made since the previous barrier, then waits for the
    other nodes' values: their arrival *is* the cross-node barrier, so one
    round trip both synchronises and moves the data. Keys carry the job
    attempt's prefix, so a restarted job never reads a previous attempt's
    addresses.

    ``store`` must be a client the caller does not use from another thread
    while a barrier runs (a blocked wait holds the client's lock).
    """

    def __init__(self, store, prefix: str, node_rank: int, nnodes: int,
                 nproc_per_node: int, poll: float = 0.5):
        self.store, self.prefix = store, prefix
        self.node_rank, self.nnodes, self.nproc = int(node_rank), int(nnodes), int(nproc_per_node)
        self.poll = poll

    def exchange(self, epoch, puts, deadline, aborted):
        from fw.distributed.store import StoreTimeoutError

        base = f"{self.prefix}/{epoch}"
        self.store.set(f"{base}/{self.node_rank}", json.dumps(puts))
        others = [n for n in range(self.nnodes) if n != self.node_rank]
        keys = [f"{base}/{n}" for n in others]
        while True:
            if aborted():
                raise PMIError(f"PMI barrier {epoch}: the job was aborted while waiting "
                               "for the other nodes")
            left = deadline - time.monotonic()
            try:
                self.store.wait(keys, timeout=max(0.01, min(self.poll, left)))
                break
            except StoreTimeoutError as e:
                if time.monotonic() < deadline:
                    continue
                missing_keys = set(e.missing) or set(keys)
                nodes = [n for n in others if f"{base}/{n}" in missing_keys]
                ranks = [n * self.nproc + i for n in nodes for i in range(self.nproc)]
                raise PMIBarrierTimeout(
                    f"PMI barrier {epoch}: node(s) {_ranges(nodes)} (global ranks "
                    f"{_ranges(ranks)}) did not arrive within the PMI timeout "
                    f"(store {getattr(self.store, 'endpoint', '?')}, keys under {base}/)",
                    missing=ranks) from None
        merged = {}
        for value in self.store.multi_get(keys):
            merged.update(json.loads(value))
        return merged

    def close(self):
        self.store.close()


class _Rank:
    __slots__ = ("rank", "sock", "buf", "initialized", "finalized", "closed", "out")

    def __init__(self, rank, sock):
        self.rank, self.sock, self.buf = rank, sock, b""
        self.initialized = self.finalized = self.closed = False


class PMIServer:
    """Serves PMI-1 to the ranks of one node over socketpairs, in a daemon thread.

    Args:
        ranks: the global ranks this node runs (consecutive).
        size: the job's world size (``PMI_SIZE``).
        mapping: ``PMI_process_mapping`` (see `process_mapping`).
        kvs: the cross-node exchange (`LocalKVS` or `StoreKVS`).
        barrier_timeout: seconds a barrier may wait, from its first arrival.
        kvsname: the key-value space's name, unique per job attempt (default: random).
        on_failure: called once (from the server thread) with the `PMIError`
            that stopped the server, e.g. to kill the job.
        on_abort: called with ``(rank, exitcode, message)`` when a rank calls
            ``MPI_Abort`` (PMI ``cmd=abort``).

    Use: ``fd = server.channel(rank)`` for each rank before starting it (pass
    ``fd`` to the child and close it in the parent), then `start`.
    """

    def __init__(self, ranks, size: int, mapping: str, kvs=None,
                 barrier_timeout: float = DEFAULT_BARRIER_TIMEOUT, kvsname: str | None = None,
                 on_failure=None, on_abort=None):
        self.ranks = [int(r) for r in ranks]
        self.size, self.mapping = int(size), mapping
        self.kvs = kvs if kvs is not None else LocalKVS()
        self.barrier_timeout = float(barrier_timeout)
        # MPICH names its shared-memory segments after the kvsname: two jobs (or a
        # killed job's leftover segments) with one name collide, so it is unique
        self.kvsname = kvsname or f"kvs_{os.getpid()}_{secrets.token_hex(4)}"
        self.on_failure, self.on_abort = on_failure, on_abort
        self.error: PMIError | None = None
        self.barriers_done = 0
        self._kv: dict[str, str] = {}
        self._epoch_puts: dict[str, str] = {}
        self._in_barrier: dict[int, float] = {}
        self._first_arrival: float | None = None
        self._first_init: float | None = None
        self._by_rank: dict[int, _Rank] = {}
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- set-up -------------------------------------------------------------
    def channel(self, rank: int) -> socket.socket:
        """A new PMI channel for ``rank``; returns the child's end (pass its fd as PMI_FD)."""
        rank = int(rank)
        if rank not in self.ranks:
            raise ValueError(f"PMIServer.channel: rank {rank} is not one of this node's "
                             f"ranks {_ranges(self.ranks)}")
        ours, theirs = socket.socketpair()
        ours.setblocking(False)
        with self._lock:
            old = self._by_rank.get(rank)
            if old is not None and not old.closed:
                self._drop(old)
            entry = _Rank(rank, ours)
            self._by_rank[rank] = entry
            self._sel.register(ours, selectors.EVENT_READ, entry)
        self._wake()
        return theirs

    def start(self) -> PMIServer:
        self._thread = threading.Thread(target=self._loop, name="fw-pmi-server", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        with self._lock:
            for entry in list(self._by_rank.values()):
                if not entry.closed:
                    self._drop(entry)
        self._sel.close()
        self._wake_r.close()
        self._wake_w.close()
        self.kvs.close()

    # -- what the launcher asks ---------------------------------------------
    def status(self, rank: int) -> str:
        """'not started' / 'initialized' / 'in barrier' / 'finalized' for a rank (for summaries)."""
        e = self._by_rank.get(int(rank))
        if e is None or not e.initialized:
            return "never called MPI_Init (no PMI init)"
        if e.finalized:
            return "finalized"
        if int(rank) in self._in_barrier:
            return f"waiting in PMI barrier {self.barriers_done}"
        return "initialized"

    def waiting_for(self, rank: int) -> list[int]:
        """The ranks that wait for ``rank``: in a PMI barrier it has not joined, or (if
        it never called MPI_Init) in MPI_Init. Empty if none."""
        rank = int(rank)
        with self._lock:
            if rank in self._in_barrier:
                return []
            if self._in_barrier:
                return sorted(self._in_barrier)
            me = self._by_rank.get(rank)
            if me is not None and me.initialized:
                return []
            # MPI_Init of ranks that share a node waits in shared memory, not in PMI
            return sorted(r for r, e in self._by_rank.items()
                          if r != rank and e.initialized and not e.finalized and not e.closed)

    @property
    def finalized(self) -> list[int]:
        return sorted(r for r, e in self._by_rank.items() if e.finalized)

    # -- the loop -----------------------------------------------------------
    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _loop(self):
        try:
            while not self._stop.is_set():
                timeout = 0.5
                for start in (self._first_arrival, self._first_init):
                    if start is not None:
                        timeout = max(0.0, min(timeout, start + self.barrier_timeout
                                               - time.monotonic()))
                for key, _ in self._sel.select(timeout):
                    if key.data is None:
                        try:
                            self._wake_r.recv(4096)
                        except OSError:
                            pass
                        continue
                    self._service(key.data)
                self._check_barrier_timeout()
        except PMIError as e:
            self._fail(e)
        except Exception as e:  # a bug here must stop the job, not hang it
            self._fail(PMIError(f"PMI server failed: {type(e).__name__}: {e}"))

    def _fail(self, err: PMIError):
        if self.error is None:
            self.error = err
            self._stop.set()
            if self.on_failure is not None:
                self.on_failure(err)

    def _drop(self, entry: _Rank):
        entry.closed = True
        try:
            self._sel.unregister(entry.sock)
        except (KeyError, ValueError):
            pass
        entry.sock.close()

    def _service(self, entry: _Rank):
        try:
            data = entry.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the rank exited or closed PMI_FD; the launcher judges the exit
            with self._lock:
                self._drop(entry)
            return
        entry.buf += data
        if len(entry.buf) > _MAX_LINE and b"\n" not in entry.buf:
            raise PMIError(f"rank {entry.rank} sent a PMI line longer than {_MAX_LINE} bytes")
        while b"\n" in entry.buf:
            line, entry.buf = entry.buf.split(b"\n", 1)
            self._handle(entry, line.decode("utf-8", "replace").strip())

    def _send(self, entry: _Rank, line: str):
        if entry.closed:
            return
        data = (line + "\n").encode()
        entry.sock.setblocking(True)
        try:
            entry.sock.settimeout(10.0)
            entry.sock.sendall(data)
        except OSError:
            pass  # the rank is gone; its exit is reported by the launcher
        finally:
            if not entry.closed:
                entry.sock.setblocking(False)

    def _handle(self, entry: _Rank, line: str):
        if not line:
            return
        fields = dict(t.split("=", 1) for t in line.split(" ") if "=" in t)
        cmd = fields.get("cmd") or fields.get("mcmd")
        rank = entry.rank
        if cmd == "init":
            entry.initialized = True
            if self._first_init is None:
                self._first_init = time.monotonic()
            ver = fields.get("pmi_version", "1")
            if ver != "1":
                self._send(entry, f"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 "
                                  f"msg=fw_serves_PMI-1_only_not_{ver}")
                return
            self._send(entry, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
        elif cmd == "get_maxes":
            self._send(entry, f"cmd=maxes kvsname_max={_KVSNAME_MAX} keylen_max={_KEYLEN_MAX} "
                              f"vallen_max={_VALLEN_MAX} rc=0")
        elif cmd == "get_appnum":
            self._send(entry, "cmd=appnum appnum=0 rc=0")
        elif cmd == "get_my_kvsname":
            self._send(entry, f"cmd=my_kvsname kvsname={self.kvsname} rc=0")
        elif cmd == "get_universe_size":
            self._send(entry, f"cmd=universe_size size={self.size} rc=0")
        elif cmd == "put":
            key, value = fields.get("key", ""), fields.get("value", "")
            if not key:
                self._send(entry, "cmd=put_result rc=-1 msg=put_without_key")
                return
            with self._lock:
                self._kv[key] = value
                self._epoch_puts[key] = value
            self._send(entry, "cmd=put_result rc=0")
        elif cmd == "get":
            key = fields.get("key", "")
            if key == "PMI_process_mapping":
                self._send(entry, f"cmd=get_result rc=0 value={self.mapping}")
                return
            value = self._kv.get(key)
            if value is None:
                # not an error for MPICH: optional keys (PMI_hwloc_xmlfile, ...) are probed
                self._send(entry, f"cmd=get_result rc=-1 msg=key_{key}_not_found")
            else:
                self._send(entry, f"cmd=get_result rc=0 value={value}")
        elif cmd == "barrier_in":
            self._barrier_in(entry)
        elif cmd == "finalize":
            entry.finalized = True
            self._send(entry, "cmd=finalize_ack rc=0")
        elif cmd == "abort":
            code = fields.get("exitcode", "1")
            msg = line.split("error_msg=", 1)[1] if "error_msg=" in line else ""
            if self.on_abort is not None:
                self.on_abort(rank, code, msg)
        else:
            # spawn, publish_name, ... : MPICH reads the reply's rc and fails the call
            # with it, which is clearer than a hang
            self._send(entry, f"cmd={cmd}_result rc=-1 msg=fw_launcher_does_not_support_{cmd}")

    # -- barriers -----------------------------------------------------------
    def _barrier_in(self, entry: _Rank):
        now = time.monotonic()
        with self._lock:
            self._in_barrier[entry.rank] = now
            if self._first_arrival is None:
                self._first_arrival = now
            if len(self._in_barrier) < len(self.ranks):
                return
            puts, self._epoch_puts = self._epoch_puts, {}
        epoch = self.barriers_done
        deadline = self._first_arrival + self.barrier_timeout
        remote = self.kvs.exchange(epoch, puts, deadline, self._stop.is_set)
        with self._lock:
            self._kv.update(remote)
            waiting = [self._by_rank[r] for r in sorted(self._in_barrier)]
            self._in_barrier.clear()
            self._first_arrival = None
            self.barriers_done += 1
        for e in waiting:
            self._send(e, "cmd=barrier_out rc=0")

    def _check_init_timeout(self):
        """MPI_Init of ranks on one node meets in shared memory, never in a PMI barrier:
        the bound there is that every rank calls PMI init within the timeout of the first."""
        first = self._first_init
        if first is None:
            return
        with self._lock:
            missing = [r for r in self.ranks
                       if r not in self._by_rank or not self._by_rank[r].initialized]
            if not missing:
                self._first_init = None  # everyone is in: nothing more to time
                return
            started = sorted(r for r in self.ranks if r not in missing)
        if time.monotonic() - first < self.barrier_timeout:
            return
        raise PMIBarrierTimeout(
            f"MPI_Init: rank(s) {_ranges(missing)} did not call MPI_Init within "
            f"{self.barrier_timeout:g} s of the first rank (rank(s) {_ranges(started)} did and "
            "wait for them). A rank that never calls MPI_Init (init_parallel_env) or hangs "
            "before it cannot join the job; raise the limit with --pmi_timeout / "
            "FW_PMI_TIMEOUT if start-up is just slow.", missing=missing)

    def _check_barrier_timeout(self):
        self._check_init_timeout()
        first = self._first_arrival
        if first is None or time.monotonic() - first < self.barrier_timeout:
            return
        with self._lock:
            missing = [r for r in self.ranks if r not in self._in_barrier]
            arrived = sorted(self._in_barrier)
        why = "; ".join(f"rank {r}: {self.status(r)}" for r in missing)
        raise PMIBarrierTimeout(
            f"PMI barrier {self.barriers_done}: rank(s) {_ranges(missing)} did not arrive "
            f"within {self.barrier_timeout:g} s (rank(s) {_ranges(arrived)} waited) — {why}. "
            "A rank that never calls MPI_Init or hangs before it cannot join the job; "
            "raise the limit with --pmi_timeout / FW_PMI_TIMEOUT if start-up is just slow.",
            missing=missing)


def barrier_timeout_from_env(default: float = DEFAULT_BARRIER_TIMEOUT) -> float:
    """FW_PMI_TIMEOUT (seconds) if set, else ``default``; a bad value is an error naming it."""
    raw = os.environ.get("FW_PMI_TIMEOUT")
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"FW_PMI_TIMEOUT={raw!r}: expected seconds as a number") from None
    if not value > 0:
        raise ValueError(f"FW_PMI_TIMEOUT={raw!r}: must be > 0 seconds")
    return value
