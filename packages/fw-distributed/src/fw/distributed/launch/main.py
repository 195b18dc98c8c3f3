"""``python -m fw.distributed.launch`` / ``fwrun``: start, watch and restart a job.

One launcher runs on each node. Node 0's launcher hosts the job's TCP store at
``--master`` (`fw.distributed.store.TCPStore`); every launcher registers with
it, starts its ``--nproc_per_node`` ranks and serves them PMI-1
(`fw.distributed._pmi.PMIServer`), exchanging the PMI key-value space with the
other nodes through the store, so ``MPI_Init`` in every rank joins one
``COMM_WORLD``. Then it watches: when a rank dies it writes
``{FW_JOB_ID}/dead/{rank}`` and ``{FW_JOB_ID}/abort`` into the store (the other
ranks and nodes learn who died and how), waits ``--grace`` seconds, kills what
is left, and either restarts the whole job (``--max_restart``; a new
``FW_JOB_ID``, ``FW_RESTART_COUNT`` + 1) or exits non-zero with a summary.

The shape follows Paddle's and PyTorch's launchers (a per-node agent, a
rendezvous on the master, restart of the whole worker group); the code is fw's.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import sys
import time

from fw.distributed import _pmi
from fw.distributed.launch import env as _env
from fw.distributed.launch.args import LaunchConfig, LaunchError, parse_args
from fw.distributed.launch.ps_env import ps_rank_environ
from fw.distributed.launch.workers import (
    ShmTracker,
    Worker,
    describe_exit,
    exit_status,
    kill_all,
)

__all__ = ["main", "launch", "Launcher"]

_PROG = "fw.distributed.launch"
_LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50, "NOTSET": 0}
# seconds without a heartbeat after which another node's launcher counts as gone
# (FW_LAUNCH_HEARTBEAT_TIMEOUT changes it)
_HEARTBEAT_TIMEOUT = 60.0
# seconds a watching call may spend reconnecting to a store that went away
_WATCH_STORE_TIMEOUT = 10.0
_POLL = 0.02


class _Interrupted(BaseException):
    """SIGINT/SIGTERM while the launcher blocks in the store (rendezvous): leave now."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _Failure(Exception):
    """Ends one attempt of the job; ``status`` is the launcher's exit status."""

    def __init__(self, message: str, status: int = 1, restartable: bool = True):
        super().__init__(message)
        self.status, self.restartable = status, restartable
        self.rank = None  # the Worker that died, when a local rank caused it

    def with_rank(self, worker):
        self.rank = worker
        return self


def _free_ports(host: str, n: int) -> list[int]:
    """n free TCP ports on ``host``: bound to port 0 together (so they differ), then released.

    Paddle's launcher hands these to ranks as PADDLE_TRAINER_ENDPOINTS; a port
    picked this way can be taken again by another process before the rank binds
    it, which is why fw's own bring-up never relies on them (PMI + the store)."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((host, 0))
            except OSError:
                s.close()
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.bind(("", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _route_address(master_host: str) -> str:
    """The local address this node uses to reach ``master_host`` (no packet is sent)."""
    try:
        target = socket.gethostbyname(master_host)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((target, 9))
            return s.getsockname()[0]
    except OSError as e:
        raise LaunchError(f"--master {master_host}: cannot find a local address that "
                          f"reaches it ({e}); give --host") from None


class Launcher:
    """One node's launcher; `run` returns the process exit status."""

    def __init__(self, cfg: LaunchConfig, console=None, err=None):
        self.cfg = cfg
        self.console = console or sys.stdout
        self.err = err or sys.stderr
        self.level = _LEVELS[cfg.log_level]
        self.store = None
        self.token = ""
        self.nodes: list[dict] = []
        self.workers: list[Worker] = []
        self.pmi = None
        self._signalled: int | None = None
        self._interruptible = False
        self._pmi_problem = None
        self._hb = {}
        self._last_hb = 0.0
        self.watch = None  # a store client with a short timeout, for the watch loop
        self.store_lost = False  # node 0 (and its store) went away: stop talking to it
        self.gone_nodes: set[int] = set()  # nodes whose launcher stopped its heartbeat
        self.shm = ShmTracker()
        raw = os.environ.get("FW_LAUNCH_HEARTBEAT_TIMEOUT") or _HEARTBEAT_TIMEOUT
        try:
            self.heartbeat_timeout = float(raw)
        except ValueError:
            raise LaunchError(f"FW_LAUNCH_HEARTBEAT_TIMEOUT={raw!r}: expected seconds") from None

    # -- messages -------------------------------------------------------------
    def say(self, msg: str, level: str = "INFO"):
        if _LEVELS[level] >= self.level:
            print(f"{_PROG}: {msg}", file=self.err, flush=True)

    # -- set-up ---------------------------------------------------------------
    @property
    def multi(self) -> bool:
        return self.cfg.nnodes > 1

    @property
    def world_size(self) -> int:
        return self.cfg.nnodes * self.cfg.nproc_per_node

    def _open_store(self):
        from fw.distributed.store import StoreError, TCPStore

        cfg = self.cfg
        if cfg.node_rank == 0:
            host, port = cfg.master if cfg.master else ("127.0.0.1", 0)
            try:
                return TCPStore(host, port, is_master=True, world_size=cfg.nnodes,
                                timeout=cfg.rendezvous_timeout)
            except StoreError as e:
                cause = e.__cause__
                why = getattr(cause, "strerror", None) or str(cause or e)
                if cause is not None and getattr(cause, "errno", None) == 98:
                    why = f"port {port} is already in use on {host}"
                raise LaunchError(f"--master {host}:{port}: node 0 cannot host the job's store "
                                  f"there: {why}. Pick a free port (or leave --master out "
                                  "on a single node: a free port is picked).") from None
        host, port = cfg.master
        try:
            return TCPStore(host, port, is_master=False, timeout=cfg.rendezvous_timeout)
        except StoreError as e:
            raise LaunchError(f"node {cfg.node_rank}: cannot reach node 0's store at --master "
                              f"{host}:{port} within {cfg.rendezvous_timeout:g} s "
                              f"(--rendezvous_timeout): {e}") from None

    def _rendezvous(self):
        """Every node's launcher registers; all learn the others' addresses and ports."""
        from fw.distributed.store import StoreTimeoutError

        cfg = self.cfg
        if cfg.node_rank == 0:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in cfg.job_id)
            self.token = f"{safe}.{secrets.token_hex(4)}"
            self.store.set("fwrun/token", self.token)
        else:
            try:
                self.token = self.store.get("fwrun/token",
                                            timeout=cfg.rendezvous_timeout).decode()
            except StoreTimeoutError:
                raise LaunchError(f"node {cfg.node_rank}: node 0's launcher did not register "
                                  f"within {cfg.rendezvous_timeout:g} s") from None
        if cfg.host:
            host = cfg.host
        elif self.multi:
            host = _route_address(cfg.master[0])
        else:
            host = "127.0.0.1"
        self.host = host
        info = {"host": host, "nproc": cfg.nproc_per_node, "max_restart": cfg.max_restart,
                "hostname": socket.gethostname(), "pid": os.getpid(),
                "ports": _free_ports(host, cfg.nproc_per_node)}
        self.store.set(f"fwrun/{self.token}/node/{cfg.node_rank}", json.dumps(info))
        keys = [f"fwrun/{self.token}/node/{n}" for n in range(cfg.nnodes)]
        try:
            self.store.wait(keys, timeout=cfg.rendezvous_timeout)
        except StoreTimeoutError as e:
            missing = sorted(int(k.rsplit("/", 1)[1]) for k in e.missing)
            raise LaunchError(f"rendezvous: node(s) {missing} did not join within "
                              f"{cfg.rendezvous_timeout:g} s (store {self.store.endpoint}); "
                              "start a launcher with the same --master on each of them") from None
        self.nodes = [json.loads(v) for v in self.store.multi_get(keys)]
        for n, node in enumerate(self.nodes):
            if node["nproc"] != cfg.nproc_per_node or node["max_restart"] != cfg.max_restart:
                raise LaunchError(
                    f"rendezvous: node {n} ({node['hostname']}) runs --nproc_per_node "
                    f"{node['nproc']} --max_restart {node['max_restart']} but node "
                    f"{cfg.node_rank} runs {cfg.nproc_per_node} / {cfg.max_restart}: every "
                    "node must use the same values")
        self.endpoints = [f"{node['host']}:{p}" for node in self.nodes for p in node["ports"]]
        self.say(f"node {cfg.node_rank}/{cfg.nnodes} at {host}: store {self.store.endpoint}, "
                 f"ranks {self._ranks()[0]}-{self._ranks()[-1]} of {self.world_size}", "DEBUG")

    def _ranks(self) -> list[int]:
        first = self.cfg.node_rank * self.cfg.nproc_per_node
        return list(range(first, first + self.cfg.nproc_per_node))

    # -- one attempt ----------------------------------------------------------
    def _start(self, attempt: int):
        from fw.distributed.store import TCPStore, store_barrier

        cfg = self.cfg
        self.job_id = f"{self.token}.{attempt}"
        self.workers = []
        if self.multi:
            try:
                self._interruptible = True
                try:
                    store_barrier(self.store, f"fwrun/{self.token}/start/{attempt}",
                                  cfg.node_rank, cfg.nnodes, cfg.rendezvous_timeout)
                finally:
                    self._interruptible = False
            except Exception as e:
                raise _Failure(f"attempt {attempt}: the nodes did not all start it: {e}",
                               restartable=False) from None
            # the PMI thread blocks in the store at barriers: it gets its own client
            try:
                pmi_store = TCPStore(self.store.host, self.store.port,
                                     timeout=cfg.rendezvous_timeout)
            except Exception as e:
                self.store_lost = True
                raise _Failure(f"attempt {attempt}: lost the job's store: {e}",
                               restartable=False) from None
            kvs = _pmi.StoreKVS(pmi_store, f"{self.job_id}/pmi", cfg.node_rank, cfg.nnodes,
                                cfg.nproc_per_node)
        else:
            kvs = _pmi.LocalKVS()
        self._pmi_problem = None

        def on_failure(err):
            self._pmi_problem = (str(err), 1)

        def on_abort(rank, code, msg):
            try:
                status = int(code)
            except ValueError:
                status = 1
            self._pmi_problem = (f"rank {rank} called MPI_Abort (exit code {code})"
                                 + (f": {msg}" if msg else ""), status or 1)

        self.pmi = _pmi.PMIServer(self._ranks(), self.world_size,
                                  _pmi.process_mapping(cfg.nnodes, cfg.nproc_per_node), kvs=kvs,
                                  barrier_timeout=cfg.pmi_timeout, kvsname=f"kvs_{self.job_id}",
                                  on_failure=on_failure, on_abort=on_abort)
        try:
            os.makedirs(cfg.log_dir, exist_ok=True)
        except OSError as e:
            raise _Failure(f"--log_dir {cfg.log_dir!r}: cannot create it: {e.strerror or e}",
                           status=2, restartable=False) from None
        base = _env.clean_environ()
        net = _env.mpich_network_environ(self.host, self.multi)
        for k, v in net.items():
            base.setdefault(k, v)
        log_dir = os.path.abspath(cfg.log_dir)
        cmd = [sys.executable, "-u"] + cfg.cmd
        self.workers = []
        for local, rank in enumerate(self._ranks()):
            theirs = self.pmi.channel(rank)
            try:
                env = _env.rank_environ(
                    base, rank=rank, local_rank=local, world_size=self.world_size,
                    local_world_size=cfg.nproc_per_node, endpoints=self.endpoints,
                    store_endpoint=self.store.endpoint, job_id=self.job_id,
                    restart_count=attempt, pmi_fd=theirs.fileno(), timeout=cfg.timeout,
                    log_dir=log_dir, device=cfg.devices[local] if cfg.devices else None)
                if cfg.ps is not None:   # --run_mode ps: the servers' and trainers' roles
                    env = ps_rank_environ(env, rank, cfg.ps[0], cfg.ps[1], self.endpoints)
                try:
                    self.workers.append(Worker(
                        rank, local, cmd, env,
                        log_path=os.path.join(log_dir, f"workerlog.{rank}"),
                        pass_fds=(theirs.fileno(),), stream=(rank == 0), append=attempt > 0,
                        console=self.console))
                except (RuntimeError, OSError) as e:
                    raise _Failure(str(e), restartable=False) from None
            finally:
                theirs.close()
        self.pmi.start()
        self.say(f"job {self.job_id}: started ranks "
                 + ", ".join(f"{w.rank} (pid {w.pid})" for w in self.workers)
                 + f"; logs in {log_dir}/workerlog.<rank>", "DEBUG" if attempt == 0 else "INFO")

    def _watch_client(self):
        """The watch loop's own client: a short reconnect timeout, so a store that went
        away (node 0 died) is noticed in seconds, not after --rendezvous_timeout."""
        if self.watch is None:
            from fw.distributed.store import TCPStore

            self.watch = TCPStore(self.store.host, self.store.port,
                                  timeout=_WATCH_STORE_TIMEOUT)
        return self.watch

    def _check_remote(self, now: float):
        """Another node's abort, and the other launchers' heartbeats (multi-node)."""
        from fw.distributed.store import StoreError

        if not self.multi or now - self._last_hb < 0.25:
            return
        self._last_hb = now
        try:
            self._watch_client().add(f"fwrun/{self.token}/hb/{self.cfg.node_rank}", 1)
            if self.watch.check([f"{self.job_id}/abort"]):
                why = self.watch.get(f"{self.job_id}/abort", timeout=5).decode()
                raise _Failure(f"another node stopped the job: {why}")
            for n in range(self.cfg.nnodes):
                if n == self.cfg.node_rank:
                    continue
                beat = self.watch.add(f"fwrun/{self.token}/hb/{n}", 0)
                last = self._hb.get(n)
                if last is None or last[0] != beat:
                    self._hb[n] = (beat, now)
                elif now - last[1] > self.heartbeat_timeout:
                    self.gone_nodes.add(n)
                    raise _Failure(f"node {n}'s launcher ({self.nodes[n]['host']}) stopped "
                                   f"answering for {self.heartbeat_timeout:g} s",
                                   restartable=False)
        except StoreError as e:
            self.store_lost = True
            raise _Failure(f"lost the job's store at {self.store.endpoint} (node 0's launcher "
                           f"gone?): {e}", restartable=False) from None

    def _watch(self):
        """Until every local rank exited 0 (returns) or the attempt fails (_Failure)."""
        while True:
            if self._signalled is not None:
                raise _Failure(f"the launcher got {signal.Signals(self._signalled).name}",
                               status=128 + self._signalled, restartable=False)
            if self._pmi_problem is not None:
                raise _Failure(self._pmi_problem[0], status=self._pmi_problem[1])
            alive, found = 0, []
            for w in self.workers:
                rc = w.poll()
                if rc is None:
                    alive += 1
                elif rc != 0:
                    # a signal death is the likelier root cause when several ranks are
                    # found dead in one round (MPICH makes the others exit 1 right after)
                    found.append((0 if rc < 0 else 1, _Failure(
                        f"rank {w.rank} (node {self.cfg.node_rank}, pid {w.pid}) died: "
                        f"{describe_exit(rc)}", status=exit_status(rc)).with_rank(w)))
                else:
                    waiting = self.pmi.waiting_for(w.rank)
                    if waiting:
                        found.append((2, _Failure(
                            f"rank {w.rank} exited (exit code 0) while rank(s) "
                            f"{_pmi._ranges(waiting)} wait for it in MPI_Init or a PMI barrier "
                            "(did it skip MPI_Init / init_parallel_env?)").with_rank(w)))
            if found:
                kind, failure = min(found, key=lambda f: f[0])
                if kind and self.multi:
                    self._prefer_remote_cause(failure)
                raise failure
            now = time.monotonic()
            self._check_remote(now)
            if not alive:
                return
            self.shm.sample(self.workers)
            time.sleep(_POLL)

    def _prefer_remote_cause(self, local: _Failure, window: float = 0.5):
        """A local rank that exited with a code (not a signal) is often a consequence:
        MPI saw a peer on another node die. If that node publishes its abort within
        ``window`` seconds, the job fails with the remote cause (raised here)."""
        from fw.distributed.store import StoreError

        key = f"{self.job_id}/abort"
        deadline = time.monotonic() + window
        try:
            w = self._watch_client()
            while True:
                if w.check([key]):
                    why = w.get(key, timeout=5).decode()
                    raise _Failure(f"another node stopped the job: {why} (then here: "
                                   f"{local})").with_rank(local.rank)
                if time.monotonic() >= deadline:
                    return
                time.sleep(0.05)
        except StoreError:
            return

    def _wait_other_nodes(self):
        """After this node's ranks succeeded: the whole job is done when every node is."""
        from fw.distributed.store import StoreError

        if not self.multi:
            return
        keys = [f"{self.job_id}/done/{n}" for n in range(self.cfg.nnodes)]
        try:
            self._watch_client().set(keys[self.cfg.node_rank], "1")
        except StoreError as e:
            self.store_lost = True
            raise _Failure(f"lost the job's store at {self.store.endpoint}: {e}",
                           restartable=False) from None
        while True:
            if self._signalled is not None:
                raise _Failure(f"the launcher got {signal.Signals(self._signalled).name}",
                               status=128 + self._signalled, restartable=False)
            try:
                if self._watch_client().check(keys):
                    return
            except StoreError as e:
                self.store_lost = True
                raise _Failure(f"lost the job's store at {self.store.endpoint}: {e}",
                               restartable=False) from None
            self._check_remote(time.monotonic())
            time.sleep(0.1)

    def _stop(self, failure: _Failure):
        """Publish the failure, give the other ranks the grace period, kill the rest."""
        from fw.distributed.store import StoreError

        rank = getattr(failure, "rank", None)
        try:
            if not self.store_lost:
                w = self._watch_client()
                if rank is not None:
                    w.set(f"{self.job_id}/dead/{rank.rank}", describe_exit(rank.returncode)
                          if rank.returncode else "exit code 0, without MPI_Init")
                if not w.check([f"{self.job_id}/abort"]):
                    w.set(f"{self.job_id}/abort", f"node {self.cfg.node_rank}: {failure}")
        except StoreError:
            self.store_lost = True  # node 0 died: nothing to tell anyone
        deadline = time.monotonic() + (self.cfg.grace if self._signalled is None else 0.0)
        while time.monotonic() < deadline and any(w.poll() is None for w in self.workers):
            time.sleep(_POLL)
        why = f"killed by the launcher: {failure}"
        self.shm.sample(self.workers, force=True)
        kill_all(self.workers, why)

    def _end_attempt(self):
        for w in self.workers:
            w.close()
        if all(w.returncode is not None for w in self.workers):
            for path in self.shm.cleanup():
                self.say(f"removed {path} (left by a killed rank)", "DEBUG")
        if self.pmi is not None:
            self.pmi.close()
            self.pmi = None

    def _summary(self, ok: bool, failure: _Failure | None):
        lines = [f"job {self.job_id} on node {self.cfg.node_rank}: "
                 + ("all ranks exited 0" if ok else f"FAILED: {failure}")]
        for w in self.workers:
            lines.append(f"  rank {w.rank} (pid {w.pid}): {w.describe()}"
                         + (f"; log {w.log_path}" if not ok else ""))
        self.say("\n".join(lines), "INFO" if ok else "ERROR")
        if failure is not None and getattr(failure, "rank", None) is not None:
            tail = _log_tail(failure.rank.log_path)
            if tail and failure.rank.rank != 0:  # rank 0's output was already on the console
                self.say(f"last lines of rank {failure.rank.rank}'s log:\n{tail}", "ERROR")

    # -- the whole job --------------------------------------------------------
    def _on_signal(self, signum, frame):
        self._signalled = signum
        # the watch loop polls the flag; a blocking store wait (rendezvous, the start
        # barrier of an attempt) would not look at it for minutes
        if self._interruptible:
            raise _Interrupted(signum)

    def run(self) -> int:
        cfg = self.cfg
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self._interruptible = True
            self.store = self._open_store()
            self._rendezvous()
            self._interruptible = False
            attempt = 0
            while True:
                failure = None
                try:
                    self._start(attempt)
                    self._watch()
                    self._wait_other_nodes()
                except _Failure as f:
                    failure = f
                    self._stop(f)
                self._summary(failure is None, failure)
                self._end_attempt()
                if failure is None:
                    return 0
                if not failure.restartable or attempt >= cfg.max_restart:
                    if failure.restartable and cfg.max_restart:
                        self.say(f"giving up after {attempt} restart(s) (--max_restart "
                                 f"{cfg.max_restart})", "ERROR")
                    return failure.status or 1
                attempt += 1
                self.say(f"restarting the job: attempt {attempt} of {cfg.max_restart} "
                         f"(FW_RESTART_COUNT={attempt})", "WARNING")
        except LaunchError as e:
            self.say(f"error: {e}", "CRITICAL")
            return 2
        except _Interrupted as e:
            self._interruptible = False
            self.say(f"got {signal.Signals(e.signum).name} while waiting for the other "
                     "nodes; stopping", "ERROR")
            return 128 + e.signum
        finally:
            self._interruptible = False
            if self.workers:
                kill_all(self.workers, "launcher exiting")
                self._end_attempt()
            self._close_store()
            for s, h in old.items():
                signal.signal(s, h)

    def _close_store(self):
        if self.store is None:
            return
        if self.store_lost:
            pass
        elif self.multi and self.cfg.node_rank == 0 and self.nodes:
            # keep serving until every other launcher said goodbye (bounded)
            keys = [f"fwrun/{self.token}/bye/{n}" for n in range(1, self.cfg.nnodes)
                    if n not in self.gone_nodes]
            try:
                self.store.wait(keys, timeout=10.0)
            except Exception:
                pass
        elif self.multi and self.nodes:
            try:
                self._watch_client().set(f"fwrun/{self.token}/bye/{self.cfg.node_rank}", "1")
            except Exception:
                pass
        if self.watch is not None:
            self.watch.close()
            self.watch = None
        self.store.close()
        self.store = None


def _log_tail(path, lines: int = 20) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join("    " + ln for ln in text.splitlines()[-lines:])


def launch(argv=None) -> int:
    """Paddle's ``paddle.distributed.launch()`` entry: parse ``argv`` (default
    ``sys.argv[1:]``), run the job, return the exit status."""
    entered = time.time()  # after the interpreter start and `import fw` (DEBUG shows it)
    try:
        cfg = parse_args(argv)
        _env.check_stale_env(allow=cfg.allow_stale_env, who=_PROG)
    except (LaunchError, _env.StaleEnvironmentError) as e:
        msg = str(e)
        print(msg if msg.startswith(_PROG) else f"{_PROG}: error: {msg}", file=sys.stderr,
              flush=True)
        return 2
    try:
        launcher = Launcher(cfg)
    except LaunchError as e:
        print(f"{_PROG}: error: {e}", file=sys.stderr, flush=True)
        return 2
    launcher.say(f"launch() entered at {entered:.6f}", "DEBUG")
    return launcher.run()


def main(argv=None) -> int:
    """The ``fwrun`` console script and ``python -m fw.distributed.launch``."""
    sys.exit(launch(argv))
