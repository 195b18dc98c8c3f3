"""Parameter-server pieces in one process: hashing, the id index, row
initializers, the server-side rules against fw's optimizers, tables, checkpoints
resharded onto other server counts, the wire format, roles and modes."""
from __future__ import annotations

import json

import numpy as np
import pytest

import fw
from fw.distributed import fleet
from fw.distributed.ps import _protocol as P
from fw.distributed.ps import checkpoint
from fw.distributed.ps._hash import mix64, shard_of, uniform01
from fw.distributed.ps._index import IdIndex
from fw.distributed.ps._role import role_from_maker
from fw.distributed.ps.client import dense_bounds
from fw.distributed.ps.initializer import make_rows, spec_from_initializer
from fw.distributed.ps.rules import spec_from_optimizer
from fw.distributed.ps.runtime import mode_of
from fw.distributed.ps.table import DenseTable, SparseTable, merge_rows

UNI = {"kind": "uniform", "low": -0.5, "high": 0.5}


def test_mix64_is_splitmix64():
    # splitmix64 seeded with 0 yields 0xE220A8397B1DCDAF, then 0x6E789E6AA1B965F4
    assert int(mix64(0)) == 0xE220A8397B1DCDAF
    assert int(mix64(0x9E3779B97F4A7C15)) == 0x6E789E6AA1B965F4


def test_shard_of_balanced_and_stable():
    ids = np.arange(300_000, dtype=np.int64)
    for s in (1, 2, 3, 7):
        sh = shard_of(ids, s)
        assert sh.min() == 0 and sh.max() == s - 1
        counts = np.bincount(sh, minlength=s)
        assert counts.max() - counts.min() < 0.02 * ids.size / s + 50
    # a strided slot (every 4th id) still spreads over 2 servers
    assert np.bincount(shard_of(ids[::4], 2)).min() > 0.45 * ids[::4].size
    assert (shard_of(ids[:100], 3) == shard_of(ids[:100].copy(), 3)).all()
    with pytest.raises(ValueError, match="num_shards"):
        shard_of(ids, 0)


def test_uniform01_counter_based():
    a = uniform01(5, [3, 9, 1 << 40], 4)
    b = uniform01(5, [1 << 40], 4)
    assert (a[2] == b[0]).all()                  # a function of (seed, id, column) only
    assert not (uniform01(6, [3], 4) == a[0]).any()
    u = uniform01(1, np.arange(50_000), 8)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.std() - 12 ** -0.5) < 0.005


def test_id_index_matches_a_dict():
    rng = np.random.default_rng(0)
    ix, ref = IdIndex(capacity=4), {}
    for _ in range(30):
        batch = np.unique(rng.integers(0, 5000, 200))
        new = batch[ix.find(batch) < 0]
        assert all(int(i) not in ref for i in new)
        for i, r in zip(new, ix.insert(new)):
            ref[int(i)] = int(r)
    q = rng.integers(0, 6000, 3000)
    want = np.array([ref.get(int(i), -1) for i in q])
    assert (ix.find(q) == want).all()
    ids, rows = ix.items()
    assert (rows == np.arange(len(ref))).all() and [ref[int(i)] for i in ids] == list(rows)


def test_make_rows_depend_only_on_id():
    spec = {"kind": "normal", "mean": 1.0, "std": 2.0}
    a = make_rows(spec, 3, [10, 20, 30], 5)
    b = make_rows(spec, 3, [30, 10], 5)
    assert a.dtype == np.float32 and a.shape == (3, 5)
    assert (a[2] == b[0]).all() and (a[0] == b[1]).all()
    big = make_rows(spec, 3, np.arange(40_000), 4)
    assert abs(big.mean() - 1.0) < 0.03 and abs(big.std() - 2.0) < 0.03
    tn = make_rows({"kind": "truncated_normal", "mean": 0.0, "std": 1.0, "a": -0.5, "b": 0.5},
                   1, np.arange(20_000), 2)
    assert tn.min() >= -0.5 and tn.max() <= 0.5
    u = make_rows(UNI, 0, np.arange(20_000), 2)
    assert -0.5 <= u.min() and u.max() < 0.5
    assert (make_rows({"kind": "constant", "value": 2.5}, 0, [1, 2], 3) == 2.5).all()


def test_spec_from_initializer():
    I = fw.nn.initializer
    assert spec_from_initializer(I.Uniform(-1, 2), (10, 4), "t") == \
        {"kind": "uniform", "low": -1.0, "high": 2.0}
    assert spec_from_initializer(I.Constant(0.5), (10, 4), "t")["value"] == 0.5
    lim = (6.0 / (10 + 4)) ** 0.5
    assert spec_from_initializer(None, (10, 4), "t") == {"kind": "uniform", "low": -lim,
                                                         "high": lim}
    with pytest.raises(ValueError, match="one id at a time"):
        spec_from_initializer(I.Orthogonal(), (10, 4), "emb")


@pytest.mark.parametrize("name", ["sgd", "adagrad"])
def test_sparse_rule_equals_fw_optimizer_on_the_dense_matrix(name):
    """SGD/Adagrad on the touched rows == the fw optimizer on the whole matrix."""
    rng = np.random.default_rng(1)
    vocab, dim = 50, 3
    w0 = make_rows(UNI, 7, np.arange(vocab), dim)
    p = fw.create_parameter([vocab, dim], "float32")
    p.set_value(w0)
    opt = (fw.optimizer.SGD(0.3, parameters=[p]) if name == "sgd" else
           fw.optimizer.Adagrad(0.3, parameters=[p], initial_accumulator_value=0.1))
    t = SparseTable("e", dim, spec_from_optimizer(opt), UNI, seed=7, vocab=vocab)
    for _ in range(5):
        ids = rng.integers(0, vocab, 12)
        g = rng.standard_normal((12, dim)).astype(np.float32)
        dense = np.zeros((vocab, dim), np.float32)
        np.add.at(dense, ids, g)
        (p * fw.to_tensor(dense)).sum().backward()
        opt.step()
        opt.clear_grad()
        t.push(ids, g)
    seen = np.unique(np.concatenate([t.state_dict()["ids"]]))
    np.testing.assert_allclose(t.pull(seen), p.numpy()[seen], rtol=1e-5, atol=1e-6)


def test_sparse_adam_counts_steps_per_row():
    """A row updated every step follows fw's Adam exactly; a row first updated
    at step 3 is bias-corrected as at its own step 1 (Paddle's sparse rule)."""
    p = fw.create_parameter([1, 4], "float32")
    p.set_value(np.zeros((1, 4), np.float32))
    opt = fw.optimizer.Adam(0.01, parameters=[p])
    t = SparseTable("e", 4, spec_from_optimizer(opt), {"kind": "constant", "value": 0.0})
    rng = np.random.default_rng(2)
    for _ in range(4):
        g = rng.standard_normal((1, 4)).astype(np.float32)
        (p * fw.to_tensor(g)).sum().backward()
        opt.step()
        opt.clear_grad()
        t.push(np.array([5]), g)
    np.testing.assert_allclose(t.pull([5]), p.numpy(), rtol=1e-5, atol=1e-7)
    g = np.ones((1, 4), np.float32)
    t.push(np.array([9]), g)
    # first Adam step: -lr * sign(g) (up to epsilon)
    np.testing.assert_allclose(t.pull([9]), -0.01 * g, rtol=1e-4)
    assert t.state_dict()["step"].ravel().tolist() == [4.0, 1.0]


def test_optimizer_spec_refuses_what_servers_cannot_do():
    lin = fw.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError, match="SGD, Adagrad or Adam"):
        spec_from_optimizer(fw.optimizer.RMSProp(0.1, parameters=lin.parameters()))
    with pytest.raises(NotImplementedError, match="weight_decay"):
        spec_from_optimizer(fw.optimizer.SGD(0.1, parameters=lin.parameters(),
                                             weight_decay=0.01))


def test_table_pull_push_add_and_errors():
    t = SparseTable("emb", 2, {"name": "sgd", "learning_rate": 1.0}, UNI, seed=3, vocab=100)
    r = t.pull(np.array([[4, 8], [4, 99]]))
    assert r.shape == (4, 2) and len(t) == 3
    assert (r[0] == r[2]).all() and (r[0] == make_rows(UNI, 3, [4], 2)[0]).all()
    assert (t.pull([50], create=False) == 0).all() and len(t) == 3
    t.push(np.array([4, 4, 8]), np.ones((3, 2), np.float32))
    np.testing.assert_allclose(t.pull([4, 8]), r[[0, 1]] - np.array([[2, 2], [1, 1]]))
    t.add(np.array([8]), np.full((1, 2), 10, np.float32))
    np.testing.assert_allclose(t.pull([8]), r[[1]] - 1 + 10)
    with pytest.raises(ValueError, match=r"id 100 is outside \[0, 100\)"):
        t.pull([1, 100])
    with pytest.raises(ValueError, match="id -1"):
        t.pull([-1])
    with pytest.raises(TypeError, match="integer"):
        t.pull(np.array([1.5]))
    with pytest.raises(ValueError, match=r"shape \[2, 2\]"):
        t.push([1, 2], np.ones((2, 3), np.float32))


def test_merge_rows_sums_repeats():
    u, v = merge_rows(np.array([5, 1, 5, 3]), np.arange(8, dtype=np.float32).reshape(4, 2))
    assert u.tolist() == [1, 3, 5]
    assert v.tolist() == [[2, 3], [6, 7], [4, 6]]


def _two_server_checkpoint(tmp_path, rule):
    """Tables of 2 servers (ids placed by shard_of) after some training, saved."""
    rng = np.random.default_rng(4)
    cfg = {"name": "deep", "dim": 3, "rule": rule, "init": UNI, "seed": 11, "vocab": 10 ** 6}
    servers = [SparseTable(**cfg) for _ in range(2)]
    total = 10
    dense = [DenseTable("<dense>", b, e, rule) for b, e in dense_bounds(total, 2)]
    for d in dense:
        d.set(np.arange(d.begin, d.end, dtype=np.float32))
    for _ in range(4):
        ids = rng.integers(0, 10 ** 6, 300)
        g = rng.standard_normal((300, 3)).astype(np.float32)
        sh = shard_of(ids, 2)
        for s in range(2):
            servers[s].push(ids[sh == s], g[sh == s])
        for d in dense:
            d.push(rng.standard_normal(d.end - d.begin).astype(np.float32))
    shards = [checkpoint.save_shard(str(tmp_path), s, 2, {1: servers[s]}, dense[s])
              for s in range(2)]
    checkpoint.write_manifest(str(tmp_path), 2, [cfg], {"name": "<dense>", "total": total,
                                                        "rule": rule}, shards)
    return servers, dense


@pytest.mark.parametrize("rule", [{"name": "adagrad", "learning_rate": 0.1},
                                  {"name": "adam", "learning_rate": 0.1}])
def test_checkpoint_reloads_onto_1_and_3_servers(tmp_path, rule):
    servers, dense = _two_server_checkpoint(tmp_path, rule)
    saved = {}
    for t in servers:
        sd = t.state_dict()
        for i, row in enumerate(sd["ids"]):
            saved[int(row)] = {k: v[i] for k, v in sd.items() if k != "ids"}
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["num_shards"] == 2 and man["sparse"][0]["rows"] == len(saved)
    flat = np.concatenate([d.values[0] for d in dense])
    for n in (1, 3):
        got = {}
        dvals = []
        for s in range(n):
            sparse, d = checkpoint.load_tables(str(tmp_path), s, n)
            sd = sparse["deep"].state_dict()
            assert (shard_of(sd["ids"], n) == s).all()          # each keeps only its ids
            for i, row in enumerate(sd["ids"]):
                assert int(row) not in got
                got[int(row)] = {k: v[i] for k, v in sd.items() if k != "ids"}
            assert (d.begin, d.end) == dense_bounds(10, n)[s]
            dvals.append(d.values[0])
            if rule["name"] == "adam":
                assert d.states["step"][0, 0] == 4.0
        assert got.keys() == saved.keys()
        for k, v in saved.items():
            for name, arr in v.items():
                assert (got[k][name] == arr).all(), (n, k, name)
        assert (np.concatenate(dvals) == flat).all()


def test_checkpoint_never_unpickles(tmp_path):
    _two_server_checkpoint(tmp_path, {"name": "sgd", "learning_rate": 0.1})
    bad = tmp_path / checkpoint.shard_file("deep", 0, 2)
    np.savez(bad, ids=np.array([object()], dtype=object), values=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="allow_pickle"):
        checkpoint.load_tables(str(tmp_path), 0, 1)
    (tmp_path / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="not a fw-ps-tables"):
        checkpoint.load_tables(str(tmp_path), 0, 1)


def test_protocol_round_trip_and_rejects_garbage():
    buf = P.encode(P.Op.PUSH_SPARSE, 7, 3, {"sync": True}, np.array([1, 2]),
                   np.ones((2, 4), np.float32))
    m = P.decode(buf)
    assert (m.op, m.req, m.table, m.meta) == (P.Op.PUSH_SPARSE, 7, 3, {"sync": True})
    assert m.ids.tolist() == [1, 2] and m.vals.reshape(2, 4).tolist() == [[1.0] * 4] * 2
    with pytest.raises(P.ProtocolError, match="bytes"):
        P.decode(buf[:-4])
    bad = buf.copy()
    bad[:8] = 0
    with pytest.raises(P.ProtocolError, match="magic"):
        P.decode(bad)


def test_roles_from_the_role_maker(monkeypatch):
    base = {"PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1:6001,127.0.0.1:6002",
            "PADDLE_TRAINERS_NUM": "2", "POD_IP": "127.0.0.1", "PADDLE_PORT": "6002"}
    for k, v in base.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TRAINING_ROLE", "PSERVER")
    r = role_from_maker(fleet.PaddleCloudRoleMaker())
    assert (r.is_server, r.index, r.num_servers, r.num_trainers) == (True, 1, 2, 2)
    monkeypatch.setenv("TRAINING_ROLE", "TRAINER")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    r = role_from_maker(fleet.PaddleCloudRoleMaker())
    assert (r.is_server, r.index, r.server_endpoints) == (False, 1, ("127.0.0.1:6001",
                                                                    "127.0.0.1:6002"))
    with pytest.raises(RuntimeError, match="fleet.init"):
        role_from_maker(None)


def test_ps_entry_points_outside_ps_mode_say_so():
    from fw.distributed.ps import runtime

    if runtime.current() is None:
        with pytest.raises(RuntimeError, match="--run_mode ps"):
            fleet.init_worker()
        with pytest.raises(RuntimeError, match="--run_mode ps"):
            fleet.init_server()


def test_modes_from_the_strategy():
    s = fleet.DistributedStrategy()
    assert s.a_sync is True and mode_of(s) == ("async", 0)     # Paddle's defaults
    s.a_sync = False
    assert mode_of(s) == ("sync", 0)
    s.a_sync = True
    s.a_sync_configs = {"k_steps": 8}
    assert mode_of(s) == ("geo", 8)
    s.a_sync = True                     # Paddle: setting a_sync resets k_steps to 0
    assert s.a_sync_configs["k_steps"] == 0 and mode_of(s) == ("async", 0)
    with pytest.raises(ValueError, match="k_steps"):
        s.a_sync_configs = {"k_steps": -2}
    with pytest.raises(ValueError, match="a_sync"):
        s.a_sync = 1


def test_dense_bounds_cover_the_vector():
    for total, n in ((10, 3), (2, 3), (0, 2), (1000, 7)):
        b = dense_bounds(total, n)
        assert b[0][0] == 0 and b[-1][1] == total
        assert all(x[1] == y[0] for x, y in zip(b, b[1:]))


def test_sparse_embedding_checks_its_arguments_and_needs_a_ps_job():
    from fw.distributed.ps import SparseEmbedding, runtime

    with pytest.raises(ValueError, match=r"size must be \[vocab_size, emb_size\]"):
        SparseEmbedding([10])
    with pytest.raises(ValueError, match="dtype must be 'float32'"):
        SparseEmbedding([10, 2], dtype="float64")
    with pytest.raises(TypeError, match="entry must be a CountFilterEntry"):
        SparseEmbedding([10, 2], entry=object())
    with pytest.raises(ValueError, match="padding_idx"):
        SparseEmbedding([10, 2], padding_idx=10)
    emb = SparseEmbedding([10, 2], name="t_emb")
    cfg = emb.table_config({"name": "sgd", "learning_rate": 0.1})
    assert cfg["seed"] == runtime.default_seed("t_emb") and cfg["vocab"] == 10
    if runtime.current() is None:
        with pytest.raises(RuntimeError, match="parameter-server mode"):
            emb(fw.to_tensor(np.array([1, 2])))
