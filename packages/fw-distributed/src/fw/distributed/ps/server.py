"""`ParameterServer`: one server's tables and its request loop (``run_server``).

The loop receives any trainer's request (a matched probe on `TAG_REQUEST`),
handles it and replies. Requests are handled one at a time in arrival order,
so a table never sees two updates at once.

Modes (decided by the trainers, per request):
- async (``a_sync=True``): a gradient push updates the rows at once.
- sync (``a_sync=False``): each trainer sends one push per table and server each
  step (empty when it has no ids there); the server holds the replies until all
  ``T`` trainers' pushes of the table are in, then applies their *average*
  (each trainer's loss is a mean over its batch, so the average is the gradient of
  the mean over the global batch: sync training equals single-process training on
  the concatenated batches), then replies to all. A step that waits longer than
  the timeout is answered with an error naming the trainers that did not push.
- geo (``k_steps > 0``): trainers add their local progress (deltas); the server
  adds them up.

The loop ends when every trainer has sent STOP (``fleet.stop_worker``).
"""
from __future__ import annotations

import time

import numpy as np

from fw.distributed.communication import _engine_mpi
from fw.distributed.ps import checkpoint
from fw.distributed.ps._protocol import Op, ProtocolError, encode
from fw.distributed.ps._transport import _DEAD_CHECK_S, TAG_REPLY, TAG_REQUEST, Backoff
from fw.distributed.ps.entry import entry_spec
from fw.distributed.ps.errors import PSError, PSPeerDiedError
from fw.distributed.ps.initializer import check_spec
from fw.distributed.ps.rules import check_rule
from fw.distributed.ps.table import DenseTable, SparseTable

__all__ = ["ParameterServer"]


def _same_but_hyperparameters(table, want: dict, where: str) -> None:
    """A table that exists (loaded, or created by another trainer) and a trainer's
    request for it: the same table if everything but the rule's hyperparameters
    agrees; then the request's hyperparameters win (a resumed job may change its
    learning rate: the optimizer states keep their meaning). Else ValueError."""
    have = table.config()
    if ({k: v for k, v in have.items() if k != "rule"}
            != {k: v for k, v in want.items() if k != "rule"}
            or have["rule"]["name"] != want["rule"]["name"]):
        raise ValueError(f"{where}: the table exists as {have} but a trainer asked for {want} "
                         "(a different model, optimizer kind or number of servers than the "
                         "checkpoint's, or trainers that build different layers?)")
    table.rule = want["rule"]


class _Step:
    """A sync step of one table being collected."""
    __slots__ = ("who", "ids", "vals", "t0")

    def __init__(self):
        self.who = {}       # trainer id -> (rank, request id, op)
        self.ids = []
        self.vals = []
        self.t0 = time.monotonic()


class ParameterServer:
    """Server `index` of `num_servers`; `trainer_ranks[i]` is trainer i's MPI rank."""

    def __init__(self, transport, index: int, num_servers: int, trainer_ranks: list[int],
                 timeout: float):
        self.t = transport
        self.index = index
        self.num_servers = num_servers
        self.trainer_of = {r: i for i, r in enumerate(trainer_ranks)}
        self.num_trainers = len(trainer_ranks)
        self.timeout = float(timeout)
        self.sparse = {}        # table id -> SparseTable
        self.by_name = {}       # name -> SparseTable (loaded before any trainer spoke)
        self.dense = None
        self.stopped = set()
        self.steps = {}         # ("sparse", id) / ("dense",) / ("barrier",) -> _Step
        self.served = 0

    # -- init_server ----------------------------------------------------------
    def load(self, dirname: str) -> None:
        """Load `dirname` (a checkpoint of any number of servers): this server's ids."""
        self.by_name, self.dense = checkpoint.load_tables(dirname, self.index,
                                                          self.num_servers)

    # -- run_server -------------------------------------------------------------
    def serve(self) -> None:
        t = self.t
        b = Backoff()
        next_check = time.monotonic() + _DEAD_CHECK_S
        while len(self.stopped) < self.num_trainers:
            got = t.try_recv(self._any(), TAG_REQUEST)
            if got is not None:
                b.reset()
                self._serve_one(*got)
                continue
            t.progress_sends()
            now = time.monotonic()
            if now > next_check:
                next_check = now + _DEAD_CHECK_S
                self._expire(now)
                live = [r for r, i in self.trainer_of.items() if i not in self.stopped]
                dead = t.dead(live)
                if dead:
                    r, how = sorted(dead.items())[0]
                    raise PSPeerDiedError(
                        f"fw.distributed.ps: parameter server {self.index}: {t.names[r]} died "
                        f"({how})", peer=t.names[r], how=how)
                why = t.aborted()
                if why is not None:     # another rank failed: the job is over
                    _engine_mpi.mark_broken("job aborted")
                    raise PSError(f"fw.distributed.ps: parameter server {self.index} leaves "
                                  f"run_server: the launcher aborted the job ({why})")
            b.pause()
        if not t.flush(min(self.timeout, 30.0)):
            raise PSError(f"fw.distributed.ps: parameter server {self.index}: the last replies "
                          "were not delivered within 30 s")

    def _any(self):
        return self.t.MPI.ANY_SOURCE

    def _serve_one(self, src, buf):
        try:
            msg = self.t.decode(buf)
        except ProtocolError as e:
            raise PSError(f"fw.distributed.ps: parameter server {self.index} got a malformed "
                          f"message from rank {src}: {e}") from None
        self.served += 1
        try:
            self._handle(src, msg)
        except (ValueError, TypeError, KeyError, PSError) as e:
            self._error(src, msg, f"{type(e).__name__}: {e}")

    # -- replies --------------------------------------------------------------
    def _reply(self, src, msg, meta=None, vals=None, ids=None):
        self.t.send(src, encode(msg.op, msg.req, msg.table, meta, ids, vals), TAG_REPLY)

    def _reply_to(self, rank, req, op, table, vals=None):
        self.t.send(rank, encode(op, req, table, None, None, vals), TAG_REPLY)

    def _error(self, src, msg, text):
        self.t.send(src, encode(Op.ERROR, msg.req, msg.table, {"error": text}), TAG_REPLY)

    # -- requests ---------------------------------------------------------------
    def _trainer(self, src):
        if src not in self.trainer_of:
            raise PSError(f"rank {src} is not a trainer")
        return self.trainer_of[src]

    def _table(self, msg) -> SparseTable:
        t = self.sparse.get(msg.table)
        if t is None:
            raise KeyError(f"no sparse table {msg.table} on this server (fleet.init_worker "
                           "creates the tables)")
        return t

    def _handle(self, src, msg):
        op = msg.op
        tid = self._trainer(src)
        if op == Op.PULL_SPARSE:
            t = self._table(msg)
            self._reply(src, msg, vals=t.pull(msg.ids, create=msg.meta.get("create", True),
                                              show=msg.meta.get("show"),
                                              click=msg.meta.get("click")))
        elif op == Op.PUSH_SPARSE:
            t = self._table(msg)
            vals = msg.vals.reshape(msg.ids.size, t.dim)
            if msg.meta.get("sync"):
                self._collect(("sparse", msg.table), tid, src, msg, msg.ids, vals)
            else:
                t.push(msg.ids, vals)
                self._reply(src, msg)
        elif op == Op.ADD_SPARSE:
            t = self._table(msg)
            t.add(msg.ids, msg.vals.reshape(msg.ids.size, t.dim))
            self._reply(src, msg)
        elif op in (Op.PUSH_DENSE, Op.ADD_DENSE, Op.PULL_DENSE, Op.INIT_DENSE):
            self._dense_op(src, tid, msg)
        elif op == Op.CREATE:
            self._create(msg)
            self._reply(src, msg)
        elif op == Op.BARRIER:
            self._collect(("barrier",), tid, src, msg, None, None)
        elif op == Op.SAVE:
            files = checkpoint.save_shard(msg.meta["dirname"], self.index, self.num_servers,
                                          self.sparse, self.dense)
            self._reply(src, msg, meta={"files": files})
        elif op == Op.STOP:
            self.stopped.add(tid)
            self._reply(src, msg)
            self._check_stopped()
        else:
            raise ValueError(f"unknown request op {op}")

    def _dense_op(self, src, tid, msg):
        d = self.dense
        if d is None:
            raise KeyError("no dense table on this server (fleet.init_worker creates it)")
        op = msg.op
        if op == Op.INIT_DENSE:
            if not d.initialized:        # a loaded checkpoint wins over initial values
                d.set(msg.vals)
            self._reply(src, msg)
        elif op == Op.PULL_DENSE:
            self._reply(src, msg, vals=d.values[0])
        elif op == Op.ADD_DENSE:
            d.add(msg.vals)
            self._reply(src, msg, vals=d.values[0])
        elif msg.meta.get("sync"):
            self._collect(("dense",), tid, src, msg, None, np.array(msg.vals))
        else:
            d.push(msg.vals)
            self._reply(src, msg, vals=d.values[0])

    def _create(self, msg):
        cfg = msg.meta
        where = f"parameter server {self.index}: table {cfg.get('name')!r}"
        if cfg.get("kind") == "dense":
            want = DenseTable("<dense>", int(cfg["begin"]), int(cfg["end"]),
                              check_rule(cfg["rule"], where)).config()
            if self.dense is None:
                self.dense = DenseTable("<dense>", want["begin"], want["end"], want["rule"])
            elif self.dense.config() != want:
                _same_but_hyperparameters(self.dense, want, where)
            return
        want = {"name": cfg["name"], "dim": int(cfg["dim"]), "rule": check_rule(cfg["rule"],
                where), "init": check_spec(cfg["init"], where), "seed": int(cfg["seed"]),
                "vocab": int(cfg["vocab"])}
        if cfg.get("entry") is not None:
            want["entry"] = entry_spec(cfg["entry"], where)
        have = self.sparse.get(msg.table) or self.by_name.get(want["name"])
        if have is None:
            have = SparseTable(**want)
        elif have.config() != want:
            _same_but_hyperparameters(have, want, where)
        other = self.sparse.get(msg.table)
        if other is not None and other is not have:
            raise ValueError(f"{where}: table id {msg.table} is already {other.name!r}")
        self.sparse[msg.table] = have
        self.by_name[have.name] = have

    # -- sync steps and barriers ------------------------------------------------
    def _collect(self, key, tid, src, msg, ids, vals):
        st = self.steps.get(key)
        if st is None:
            st = self.steps[key] = _Step()
        if tid in st.who:
            raise ValueError(f"trainer {tid} pushed twice in one sync step of "
                             f"{self._keyname(key)} (every trainer must push once per step)")
        st.who[tid] = (src, msg.req, msg.op)
        if ids is not None:
            st.ids.append(np.array(ids))
        if vals is not None:
            st.vals.append(vals if key[0] != "sparse" else np.array(vals))
        if len(st.who) == self.num_trainers:
            del self.steps[key]
            self._finish(key, msg.table, st)
        else:
            self._check_stopped()

    def _finish(self, key, table, st):
        out = None
        if key[0] == "sparse":
            t = self.sparse[table]
            t.push(np.concatenate(st.ids), np.concatenate(st.vals),
                   scale=1.0 / self.num_trainers)
        elif key[0] == "dense":
            self.dense.push(np.sum(st.vals, axis=0), scale=1.0 / self.num_trainers)
            out = self.dense.values[0]
        for rank, req, op in st.who.values():
            self._reply_to(rank, req, op, table, out)

    def _keyname(self, key):
        if key[0] == "sparse":
            t = self.sparse.get(key[1])
            return f"table {t.name if t else key[1]!r}"
        return "the dense table" if key[0] == "dense" else "a barrier"

    def _fail_step(self, key, text):
        st = self.steps.pop(key)
        for rank, req, _op in st.who.values():
            self.t.send(rank, encode(Op.ERROR, req, key[1] if key[0] == "sparse" else 0,
                                     {"error": text}), TAG_REPLY)

    def _check_stopped(self):
        """A trainer that stopped can never complete a pending step: fail it now."""
        if not self.stopped:
            return
        for key, st in list(self.steps.items()):
            missing = sorted(set(range(self.num_trainers)) - set(st.who))
            if missing and set(missing) <= self.stopped:
                self._fail_step(key, f"trainer(s) {missing} called stop_worker while trainer(s) "
                                     f"{sorted(st.who)} wait in a sync step of "
                                     f"{self._keyname(key)}: in sync mode every trainer must "
                                     "run the same number of steps")

    def _expire(self, now):
        for key, st in list(self.steps.items()):
            if now - st.t0 > self.timeout:
                missing = sorted(set(range(self.num_trainers)) - set(st.who))
                self._fail_step(key, f"trainer(s) {missing} did not reach the sync step of "
                                     f"{self._keyname(key)} within {self.timeout:g} s")
