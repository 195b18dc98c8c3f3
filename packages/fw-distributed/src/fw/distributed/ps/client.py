"""`PSClient`: a trainer's requests to the parameter servers.

Sparse ids go to the server `_hash.shard_of` names; the flat dense vector is
split into one contiguous slice per server (`dense_bounds`). Every public call
issues all its requests at once (one message per server and table) and then
waits for all replies, each matched by its request id, with the transport's
deadline and dead-peer checks. A failure names the server, the request and the
table; afterwards the MPI state is marked unusable (a server that died holds
messages this process sent), so the process exits without MPI_Finalize.
"""
from __future__ import annotations

import time

import numpy as np

from fw.distributed.communication import _engine_mpi
from fw.distributed.ps._hash import shard_of
from fw.distributed.ps._protocol import Op, encode
from fw.distributed.ps._transport import _DEAD_CHECK_S, TAG_REPLY, TAG_REQUEST, Backoff
from fw.distributed.ps.errors import PSPeerDiedError, PSServerError, PSTimeoutError

__all__ = ["PSClient", "dense_bounds"]


def dense_bounds(total: int, num_servers: int) -> list[tuple[int, int]]:
    """The ``[begin, end)`` slice of a flat dense vector of `total` floats that each
    server holds (balanced, contiguous)."""
    cut = [total * s // num_servers for s in range(num_servers + 1)]
    return [(cut[s], cut[s + 1]) for s in range(num_servers)]


class PSClient:
    """Requests of trainer `trainer_id` to the servers at MPI ranks `server_ranks`
    (index = server index), each reply awaited at most `timeout` seconds."""

    def __init__(self, transport, server_ranks: list[int], trainer_id: int, timeout: float):
        self.t = transport
        self.servers = list(server_ranks)
        self.trainer_id = trainer_id
        self.timeout = float(timeout)
        self._next = 1
        self.table_names = {}   # table id -> name, for messages

    @property
    def num_servers(self) -> int:
        return len(self.servers)

    # -- the request/response core ------------------------------------------
    def call(self, parts, what: str) -> list:
        """Send every ``(server, op, table, meta, ids, vals)`` of `parts`, wait for
        all replies; returns the reply `Message` of each part, in order."""
        t = self.t
        pending = {}
        for i, (s, op, table, meta, ids, vals) in enumerate(parts):
            req = self._next
            self._next += 1
            t.send(self.servers[s], encode(op, req, table, meta, ids, vals), TAG_REQUEST)
            pending[req] = (i, s, op, table)
        out = [None] * len(parts)
        start = time.monotonic()
        deadline = start + self.timeout
        next_dead = start + _DEAD_CHECK_S
        b = Backoff()
        while pending:
            got_any = False
            for rank in {self.servers[s] for _, s, _, _ in pending.values()}:
                got = t.try_recv(rank, TAG_REPLY)
                if got is None:
                    continue
                got_any = True
                msg = t.decode(got[1])
                if msg.req not in pending:
                    raise PSServerError(
                        f"fw.distributed.ps: trainer {self.trainer_id}: {t.names[rank]} sent a "
                        f"reply to request {msg.req}, which is not pending (during {what})")
                i, s, op, table = pending.pop(msg.req)
                if msg.op == Op.ERROR:
                    self._fail_all()
                    raise PSServerError(
                        f"fw.distributed.ps: {t.names[rank]} refused {Op.NAMES[op]}"
                        f"{self._of(table)} from trainer {self.trainer_id}: "
                        f"{msg.meta.get('error', '?')}")
                out[i] = msg
            t.progress_sends()
            if got_any:
                b.reset()
                continue
            now = time.monotonic()
            if now > next_dead:
                next_dead = now + _DEAD_CHECK_S
                ranks = {self.servers[s] for _, s, _, _ in pending.values()}
                dead = t.dead(sorted(ranks))
                if dead:
                    self._raise_dead(dead, pending, what)
            if now > deadline:
                self._raise_timeout(pending, what)
            b.pause()
        return out

    def _of(self, table):
        name = self.table_names.get(table)
        return f" of table {name!r}" if name else ""

    def _fail_all(self):
        # messages to a lost or failed server may stay in flight: never MPI_Finalize
        _engine_mpi.mark_broken("parameter-server request failed")

    def _raise_dead(self, dead, pending, what):
        self._fail_all()
        rank, how = sorted(dead.items())[0]
        ops = sorted({Op.NAMES[op] + self._of(tb) for _, s, op, tb in pending.values()
                      if self.servers[s] == rank})
        who = self.t.names[rank]
        raise PSPeerDiedError(
            f"fw.distributed.ps: {who} died ({how}) while trainer {self.trainer_id} waited "
            f"for its reply to {', '.join(ops)} (during {what})", peer=who, how=how)

    def _raise_timeout(self, pending, what):
        self._fail_all()
        late = {}
        for _, s, op, tb in pending.values():
            late.setdefault(self.servers[s], set()).add(Op.NAMES[op] + self._of(tb))
        desc = "; ".join(f"{self.t.names[r]}: {', '.join(sorted(o))}"
                         for r, o in sorted(late.items()))
        raise PSTimeoutError(
            f"fw.distributed.ps: trainer {self.trainer_id}: no reply within {self.timeout:g} s "
            f"(FLAGS_rpc_deadline, else the job timeout) during {what} from {desc}")

    def _all(self, op, table=0, meta=None, ids=None, vals=None, what=""):
        return self.call([(s, op, table, meta, ids, vals) for s in range(self.num_servers)],
                         what or Op.NAMES[op])

    # -- tables -------------------------------------------------------------
    def create_sparse(self, table: int, config: dict) -> None:
        self.table_names[table] = config["name"]
        self._all(Op.CREATE, table, {"kind": "sparse", **config},
                  what=f"creating table {config['name']!r}")

    def _split(self, ids):
        sh = shard_of(ids, self.num_servers)
        order = np.argsort(sh, kind="stable")
        counts = np.bincount(sh, minlength=self.num_servers)
        return order, np.concatenate([[0], np.cumsum(counts)])

    def pull_sparse(self, table: int, ids: np.ndarray, dim: int, create: bool = True,
                    show=None, click=None):
        """Rows ``[len(ids), dim]`` of `ids` (unique int64); `show`/`click`: per-id
        counts for a table with a ShowClickEntry (sent in the metadata)."""
        order, cut = self._split(ids)
        parts, where = [], []
        for s in range(self.num_servers):
            if cut[s + 1] > cut[s]:
                sel = order[cut[s]:cut[s + 1]]
                meta = {"create": bool(create)}
                if show is not None:
                    meta["show"] = np.asarray(show, np.float64)[sel].tolist()
                    meta["click"] = np.asarray(click, np.float64)[sel].tolist()
                parts.append((s, Op.PULL_SPARSE, table, meta, ids[sel], None))
                where.append(sel)
        out = np.empty((ids.size, dim), np.float32)
        for sel, msg in zip(where, self.call(parts, f"pull{self._of(table)}")):
            out[sel] = msg.vals.reshape(sel.size, dim)
        return out

    def push_sparse(self, table: int, ids, vals, op=Op.PUSH_SPARSE, every_server=False,
                    meta=None):
        """Gradients (or, with ``op=ADD_SPARSE``, deltas) of `ids`. In sync mode
        (`every_server`) every server gets a message, empty or not: each counts one
        per trainer and step."""
        order, cut = self._split(ids)
        parts = []
        for s in range(self.num_servers):
            if cut[s + 1] > cut[s] or every_server:
                sel = order[cut[s]:cut[s + 1]]
                parts.append((s, op, table, meta, ids[sel], vals[sel]))
        return parts

    # -- dense --------------------------------------------------------------
    def create_dense(self, total: int, rule: dict) -> None:
        self.table_names[0] = "<dense>"
        parts = [(s, Op.CREATE, 0, {"kind": "dense", "name": "<dense>", "begin": b, "end": e,
                                    "total": total, "rule": rule}, None, None)
                 for s, (b, e) in enumerate(dense_bounds(total, self.num_servers))]
        self.call(parts, "creating the dense table")

    def dense_parts(self, op, flat: np.ndarray, meta=None):
        """One message per server carrying its slice of `flat`."""
        return [(s, op, 0, meta, None, flat[b:e])
                for s, (b, e) in enumerate(dense_bounds(flat.size, self.num_servers))]

    def gather_dense(self, replies, total: int) -> np.ndarray:
        out = np.empty(total, np.float32)
        for (b, e), msg in zip(dense_bounds(total, self.num_servers), replies):
            if msg.vals.size != e - b:
                raise PSServerError(f"fw.distributed.ps: the dense slice [{b}, {e}) came back "
                                    f"with {msg.vals.size} values")
            out[b:e] = msg.vals
        return out

    def pull_dense(self, total: int) -> np.ndarray:
        parts = [(s, Op.PULL_DENSE, 0, None, None, None) for s in range(self.num_servers)]
        return self.gather_dense(self.call(parts, "pulling the dense parameters"), total)
