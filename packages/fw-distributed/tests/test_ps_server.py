"""The parameter server's request handling and the client's waits, in one process
over a fake transport that records what would go over MPI: sync steps average the
trainers' gradients and answer all at once, mismatches and stray trainers get
errors instead of hangs, and a server that never answers is named at the deadline."""
from __future__ import annotations

import time

import numpy as np
import pytest

from fw.distributed.communication import _engine_mpi
from fw.distributed.ps import _protocol as P
from fw.distributed.ps.client import PSClient
from fw.distributed.ps.errors import PSPeerDiedError, PSTimeoutError
from fw.distributed.ps.server import ParameterServer

SGD = {"name": "sgd", "learning_rate": 0.5}
CFG = {"kind": "sparse", "name": "emb", "dim": 2, "rule": SGD,
       "init": {"kind": "constant", "value": 1.0}, "seed": 0, "vocab": 100}


class FakeTransport:
    """Records sends; `replies[rank]` feeds try_recv; `dead_ranks` fakes the store."""

    def __init__(self):
        self.names = {0: "parameter server 0 (rank 0, 127.0.0.1:1)",
                      10: "trainer 0 (rank 10)", 11: "trainer 1 (rank 11)"}
        self.sent = []
        self.replies = {}
        self.dead_ranks = {}

    def send(self, dest, buf, tag):
        self.sent.append((dest, P.decode(buf)))

    def progress_sends(self):
        pass

    def decode(self, buf):
        return P.decode(buf)

    def try_recv(self, source, tag):
        q = self.replies.get(source)
        return (source, q.pop(0)) if q else None

    def dead(self, ranks):
        return {r: h for r, h in self.dead_ranks.items() if r in ranks}

    def take(self):
        out, self.sent = self.sent, []
        return out


@pytest.fixture
def server():
    t = FakeTransport()
    s = ParameterServer(t, 0, 1, [10, 11], timeout=5.0)
    for src in (10, 11):
        s._serve_one(src, P.encode(P.Op.CREATE, 1, 1, CFG))
    assert [m.op for _, m in t.take()] == [P.Op.CREATE, P.Op.CREATE]
    return s, t


def _push(s, src, req, ids, g, sync=True):
    s._serve_one(src, P.encode(P.Op.PUSH_SPARSE, req, 1, {"sync": sync} if sync else None,
                               np.array(ids), np.asarray(g, np.float32)))


def test_sync_step_averages_and_answers_everyone_at_once(server):
    s, t = server
    _push(s, 10, 2, [3, 4], [[1, 1], [2, 2]])
    assert t.take() == []                                  # held until trainer 1 pushes
    _push(s, 11, 7, [3], [[3, 3]])
    got = sorted((d, m.req, m.op) for d, m in t.take())
    assert got == [(10, 2, P.Op.PUSH_SPARSE), (11, 7, P.Op.PUSH_SPARSE)]
    # row 3: 1 - 0.5 * (1 + 3) / 2; row 4: 1 - 0.5 * 2 / 2
    np.testing.assert_allclose(s.sparse[1].pull([3, 4]), [[0.0, 0.0], [0.5, 0.5]])


def test_async_push_applies_at_once(server):
    s, t = server
    _push(s, 10, 2, [5], [[2, 2]], sync=False)
    assert [m.op for _, m in t.take()] == [P.Op.PUSH_SPARSE]
    np.testing.assert_allclose(s.sparse[1].pull([5]), [[0.0, 0.0]])


def test_errors_come_back_as_replies(server):
    s, t = server
    s._serve_one(10, P.encode(P.Op.CREATE, 3, 1, {**CFG, "dim": 3}))
    (dest, m), = t.take()
    assert dest == 10 and m.op == P.Op.ERROR and "exists as" in m.meta["error"]
    s._serve_one(10, P.encode(P.Op.CREATE, 3, 1, {**CFG, "rule": {"name": "adam",
                                                                  "learning_rate": 0.5}}))
    assert "optimizer kind" in t.take()[0][1].meta["error"]
    # a new learning rate for the same rule is taken (a resumed job may change it)
    s._serve_one(10, P.encode(P.Op.CREATE, 3, 1, {**CFG, "rule": {**SGD,
                                                                  "learning_rate": 0.25}}))
    assert t.take()[0][1].op == P.Op.CREATE and s.sparse[1].rule["learning_rate"] == 0.25
    s._serve_one(10, P.encode(P.Op.PULL_SPARSE, 4, 1, None, np.array([100])))
    assert "outside [0, 100)" in t.take()[0][1].meta["error"]
    _push(s, 10, 5, [1], [[1, 1]])
    _push(s, 10, 6, [1], [[1, 1]])
    assert "pushed twice" in t.take()[0][1].meta["error"]


def test_a_stopped_trainer_fails_the_step_the_others_wait_in(server):
    s, t = server
    _push(s, 10, 2, [3], [[1, 1]])
    s._serve_one(11, P.encode(P.Op.STOP, 9))
    msgs = {d: m for d, m in t.take()}
    assert msgs[11].op == P.Op.STOP
    assert msgs[10].op == P.Op.ERROR and "called stop_worker" in msgs[10].meta["error"]


def test_a_step_past_the_timeout_names_the_missing_trainer(server):
    s, t = server
    _push(s, 11, 2, [3], [[1, 1]])
    s._expire(time.monotonic() + 10.0)
    (dest, m), = t.take()
    assert dest == 11 and "trainer(s) [0] did not reach" in m.meta["error"]


def test_dense_sync_step_and_barrier(server):
    s, t = server
    s._serve_one(10, P.encode(P.Op.CREATE, 2, 0, {"kind": "dense", "name": "<dense>",
                                                   "begin": 0, "end": 3, "total": 3,
                                                   "rule": SGD}))
    s._serve_one(10, P.encode(P.Op.INIT_DENSE, 3, 0, None, None, np.ones(3, np.float32)))
    t.take()
    for src, g in ((10, [1, 0, 0]), (11, [3, 0, 2])):
        s._serve_one(src, P.encode(P.Op.PUSH_DENSE, 4, 0, {"sync": True}, None,
                                   np.array(g, np.float32)))
    replies = t.take()
    assert len(replies) == 2
    for _, m in replies:
        np.testing.assert_allclose(m.vals, [0.0, 1.0, 0.5])
    s._serve_one(10, P.encode(P.Op.BARRIER, 5))
    assert t.take() == []
    s._serve_one(11, P.encode(P.Op.BARRIER, 6))
    assert len(t.take()) == 2


@pytest.fixture
def no_mpi_breaking(monkeypatch):
    # the client marks the MPI state unusable after a failure; not this test process's
    monkeypatch.setattr(_engine_mpi, "mark_broken", lambda why: None)


def test_client_names_a_server_that_never_answers(no_mpi_breaking):
    t = FakeTransport()
    c = PSClient(t, [0], 0, timeout=0.3)
    c.table_names[1] = "emb"
    t0 = time.monotonic()
    with pytest.raises(PSTimeoutError, match=r"no reply within 0.3 s .* parameter server 0 "
                                             r"\(rank 0, 127.0.0.1:1\): PULL_SPARSE of table "
                                             r"'emb'"):
        c.pull_sparse(1, np.array([1, 2]), 2)
    assert time.monotonic() - t0 < 5.0


def test_client_names_a_dead_server(no_mpi_breaking, monkeypatch):
    from fw.distributed.ps import client as client_mod

    monkeypatch.setattr(client_mod, "_DEAD_CHECK_S", 0.05)
    t = FakeTransport()
    t.dead_ranks = {0: "signal SIGKILL"}
    c = PSClient(t, [0], 0, timeout=30.0)
    with pytest.raises(PSPeerDiedError, match=r"parameter server 0 \(rank 0, 127.0.0.1:1\) "
                                              r"died \(signal SIGKILL\)") as e:
        c.call([(0, P.Op.BARRIER, 0, None, None, None)], "a barrier")
    assert e.value.how == "signal SIGKILL"


def test_client_matches_replies_and_reassembles_rows():
    t = FakeTransport()
    c = PSClient(t, [0, 5], 0, timeout=5.0)
    ids = np.arange(20, dtype=np.int64)
    # answer each server's pull with rows = id * 10 (after seeing what was asked)
    orig = t.send

    def send(dest, buf, tag):
        orig(dest, buf, tag)
        m = P.decode(buf)
        rows = np.repeat(m.ids[:, None] * 10.0, 2, axis=1).astype(np.float32)
        t.replies.setdefault(dest, []).append(P.encode(m.op, m.req, m.table, None, None, rows))
    t.send = send
    out = c.pull_sparse(1, ids, 2)
    np.testing.assert_array_equal(out[:, 0], ids * 10.0)
    assert sorted(d for d, _ in t.sent) == [0, 5]          # both servers asked once
