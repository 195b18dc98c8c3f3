"""The trainer side of parameter-server mode (SparseEmbedding, PSOptimizer in sync,
async and geo modes, init_worker, save, stop) in one process: the client talks to
two real `ParameterServer`s through a loopback transport instead of MPI. With one
trainer every mode must equal single-process training exactly: sync and async apply
each step's gradient on the servers, geo applies it locally and merges the whole
difference (divided by 1 trainer) every k steps."""
from __future__ import annotations

import numpy as np
import pytest

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.distributed import fleet
from fw.distributed.ps import SparseEmbedding, checkpoint, runtime
from fw.distributed.ps._protocol import decode
from fw.distributed.ps._role import PSRole
from fw.distributed.ps.client import PSClient
from fw.distributed.ps.initializer import make_rows
from fw.distributed.ps.optimizer import PSOptimizer
from fw.distributed.ps.server import ParameterServer

VOCAB, DIM = 1000, 4
TRAINER = 10          # the trainer's fake rank; servers are ranks 0 and 1


class Loopback:
    """Routes the client's requests to in-process servers and their replies back."""

    def __init__(self):
        self.names = {0: "parameter server 0 (rank 0, lo:0)",
                      1: "parameter server 1 (rank 1, lo:1)", TRAINER: "trainer 0 (rank 10)"}
        self.servers = {}
        self.inbox = {}
        self.MPI = None

    def send(self, dest, buf, tag):
        if dest in self.servers:
            self.servers[dest]._serve_one(TRAINER, buf)
        else:                                   # a reply from a server to the trainer
            src = self._serving
            self.inbox.setdefault(src, []).append(buf.copy())

    def try_recv(self, source, tag):
        q = self.inbox.get(source)
        return (source, q.pop(0)) if q else None

    def progress_sends(self):
        pass

    def flush(self, timeout):
        return True

    def decode(self, buf):
        return decode(buf)

    def dead(self, ranks):
        return {}


class _ServerSide:
    """The transport a server sees: its sends are replies to the trainer."""

    def __init__(self, loop, rank):
        self.loop, self.rank = loop, rank
        self.names = loop.names

    def send(self, dest, buf, tag):
        self.loop._serving = self.rank
        self.loop.send(dest, buf, tag)

    def decode(self, buf):
        return decode(buf)


@pytest.fixture
def ps(monkeypatch):
    """A trainer runtime wired to 2 in-process servers; fresh layer registry."""
    monkeypatch.setattr(runtime, "_layers", [])
    loop = Loopback()
    for r in (0, 1):
        loop.servers[r] = ParameterServer(_ServerSide(loop, r), r, 2, [TRAINER], timeout=5.0)
    rt = runtime.PSRuntime(PSRole(False, 0, ("lo:0", "lo:1"), 1), None)
    rt.transport = loop
    rt.client = PSClient(loop, [0, 1], 0, timeout=5.0)
    monkeypatch.setattr(runtime, "_current", [rt])
    return rt, loop


class Model(nn.Layer):
    def __init__(self, emb):
        super().__init__()
        self.lin = nn.Linear(2 * DIM, 1)
        self.emb = emb()        # after lin: nn.Embedding draws from fw's generator

    def forward(self, ids):
        return self.lin(self.emb(ids).reshape([ids.shape[0], 2 * DIM])).reshape([-1])


INIT = {"kind": "uniform", "low": -0.1, "high": 0.1}


def _data(steps=6, batch=16):
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 40, (steps, batch, 2)).astype(np.int64)   # ids repeat across steps
    y = rng.random((steps, batch)).astype(np.float32)
    return ids, y


def _reference(opt_cls, lr):
    """Single-process training with a plain nn.Embedding initialised as the servers
    create rows."""
    fw.seed(0)
    ref = Model(lambda: nn.Embedding(VOCAB, DIM))
    ref.emb.weight.set_value(make_rows(INIT, runtime.default_seed("e"), np.arange(VOCAB), DIM))
    opt = opt_cls(lr, parameters=ref.parameters())
    ids, y = _data()
    for s in range(ids.shape[0]):
        loss = F.mse_loss(ref(fw.to_tensor(ids[s])), fw.to_tensor(y[s]))
        loss.backward()
        opt.step()
        opt.clear_grad()
    return ref


@pytest.mark.parametrize("mode, k", [("sync", 0), ("async", 0), ("geo", 1), ("geo", 4)])
@pytest.mark.parametrize("opt_cls", [fw.optimizer.SGD, fw.optimizer.Adagrad])
def test_one_trainer_equals_single_process(ps, mode, k, opt_cls):
    rt, loop = ps
    fw.seed(0)
    model = Model(lambda: SparseEmbedding([VOCAB, DIM], name="e",
                                          param_attr=fw.nn.initializer.Uniform(-0.1, 0.1)))
    s = fleet.DistributedStrategy()
    s.a_sync = mode != "sync"
    if k:
        s.a_sync_configs = {"k_steps": k}
    opt = PSOptimizer(opt_cls(0.1, parameters=model.parameters()), s)
    assert opt.mode == mode
    rt.optimizer = opt
    rt.init_worker()
    ids, y = _data()
    for step in range(ids.shape[0]):
        loss = F.mse_loss(model(fw.to_tensor(ids[step])), fw.to_tensor(y[step]))
        loss.backward()
        opt.step()
        opt.clear_grad()
    opt.flush()
    ref = _reference(opt_cls, 0.1)
    seen = np.unique(ids)
    # the servers' rows (after geo's last merge) and the dense parameters
    rows = rt.client.pull_sparse(model.emb.table_id, seen, DIM, create=False)
    np.testing.assert_allclose(rows, ref.emb.weight.numpy()[seen], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rt.client.pull_dense(rt.dense_total),
                               np.concatenate([p.numpy().ravel() for p in
                                               ref.lin.parameters()]), rtol=1e-5, atol=1e-6)
    # rows live on the server their id hashes to, and only the ids trained exist
    held = sorted(int(i) for srv in loop.servers.values()
                  for i in srv.sparse[model.emb.table_id].state_dict()["ids"])
    assert held == seen.tolist()


def test_padding_eval_and_save(ps, tmp_path):
    rt, loop = ps
    emb = SparseEmbedding([VOCAB, DIM], padding_idx=-1, name="e",
                          param_attr=fw.nn.initializer.Constant(1.0))
    lin = nn.Linear(DIM, 1)
    rt.optimizer = PSOptimizer(fw.optimizer.SGD(0.5, parameters=lin.parameters()),
                               fleet.DistributedStrategy())
    rt.init_worker()
    out = emb(fw.to_tensor(np.array([[3, VOCAB - 1]])))
    assert out.shape == [1, 2, DIM]
    assert (out.numpy()[0, 1] == 0).all() and (out.numpy()[0, 0] == 1).all()
    out.sum().backward()
    rt.optimizer.step()
    # the padding id was never created nor pushed; id 3 moved by -0.5
    rows = rt.client.pull_sparse(emb.table_id, np.array([3, VOCAB - 1]), DIM, create=False)
    assert rows.tolist() == [[0.5] * DIM, [0.0] * DIM]
    emb.eval()
    assert (emb(fw.to_tensor(np.array([7]))).numpy() == 0).all()     # unseen: zeros, not made
    assert all(7 not in s.sparse[emb.table_id].state_dict()["ids"]
               for s in loop.servers.values())
    with pytest.raises(ValueError, match=r"SparseEmbedding\('e'\): id 1000 is outside"):
        emb(fw.to_tensor(np.array([VOCAB])))
    man = rt.save(str(tmp_path))
    assert man["num_shards"] == 2 and man["sparse"][0]["rows"] == 1
    sparse, dense = checkpoint.load_tables(str(tmp_path), 0, 1)
    assert sparse["e"].pull([3]).tolist() == [[0.5] * DIM]
    assert dense.values.size == DIM + 1
    rt.stop_worker()
    assert all(s.stopped == {0} for s in loop.servers.values())
