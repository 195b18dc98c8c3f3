"""The Paddle 3.3 names added by names2, in one process: argument errors of the
object p2p and group control, the gloo context's barrier on a real TCP store,
create_nccl_config on a CPU build, distributed.io round trips, flex-checkpoint
pieces, and the PS admission entries on real `ParameterServer`s (loopback)."""
from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

import fw
import fw.distributed as dist
from fw.distributed.ps.entry import Admission
from fw.distributed.ps.table import SparseTable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# -- object p2p, wait, group control -------------------------------------------
def test_object_p2p_argument_errors():
    with pytest.raises(ValueError, match="exactly one of dst"):
        dist.send_object_list([1], dst=0, dst_in_group=0)
    with pytest.raises(TypeError, match="non-empty list"):
        dist.recv_object_list([], src=0)
    with pytest.raises(ValueError, match="this rank itself"):
        dist.send_object_list([1], dst=0)
    with pytest.raises(ValueError, match=r"dst_in_group must be a rank of group 0 in \[0, 1\)"):
        dist.send_object_list([1], dst_in_group=3)


def test_wait_completes_the_tensors_ops():
    a, b = fw.ones([4]), fw.ones([4])
    ta = dist.all_reduce(a, sync_op=False)
    tb = dist.all_reduce(b, sync_op=False)
    dist.wait(a)
    assert ta.is_completed() and a.tolist() == [1.0] * 4
    tb.wait()
    with pytest.raises(TypeError, match="tensor must be a Tensor"):
        dist.wait(np.ones(2))


def test_shutdown_restart_and_world_refused():
    g = dist.new_group([0])
    dist.shutdown_process_group(g)
    with pytest.raises(ValueError, match=f"group {g.id} was shut down"):
        dist.broadcast(fw.ones([1]), src=0, group=g)
    dist.restart_process_group(g)
    x = fw.ones([1])
    dist.broadcast(x, src=0, group=g)
    with pytest.raises(ValueError, match="world group"):
        dist.shutdown_process_group(dist.get_group(0))
    dist.restart_process_group(g)      # not shut down: nothing to do


# -- gloo on the TCP store ----------------------------------------------------------
def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_gloo_barrier_holds_until_every_rank_arrives(monkeypatch):
    """Rank 0 here, rank 1 a thread that reaches the second barrier late: rank 0 may
    not leave it before. The thread's own module state is separate: it runs the
    store protocol by hand (a second TCPStore client, as a second process would)."""
    from fw.distributed.store import TCPStore, store_barrier

    port = _free_port()
    events = []
    done = threading.Event()

    def rank1():
        s = TCPStore("127.0.0.1", port, timeout=20)
        store_barrier(s, "gloo/barrier/1", 1, 2, 20)      # init's barrier
        events.append("r1 late")
        store_barrier(s, "gloo/barrier/2", 1, 2, 20)
        store_barrier(s, "gloo/barrier/3", 1, 2, 20)      # release's barrier
        s.set("gloo/left/1", b"1")
        s.close()
        done.set()

    th = threading.Thread(target=rank1, daemon=True)
    th.start()
    dist.gloo_init_parallel_env(0, 2, f"127.0.0.1:{port}")
    dist.gloo_barrier()
    events.append("r0 passed")
    dist.gloo_release()
    assert done.wait(20)
    assert events == ["r1 late", "r0 passed"]


def test_gloo_errors(monkeypatch):
    with pytest.raises(RuntimeError, match="call gloo_init_parallel_env"):
        dist.gloo_barrier()
    with pytest.raises(ValueError, match="rank_id must be in"):
        dist.gloo_init_parallel_env(2, 2, "127.0.0.1:1234")
    with pytest.raises(ValueError, match="'ip:port'"):
        dist.gloo_init_parallel_env(0, 1, "localhost")
    monkeypatch.setenv("FW_DIST_TIMEOUT", "1")
    port = _free_port()
    with pytest.raises(Exception, match="cannot reach the rendezvous"):
        dist.gloo_init_parallel_env(1, 2, f"127.0.0.1:{port}")     # nobody serves it


def test_create_nccl_config_is_none_on_cpu():
    from fw.distributed.communication._engine_nccl import nccl_available
    from fw.distributed.communication.nccl_config import NCCLConfig

    if not nccl_available():
        assert dist.create_nccl_config({"commName": "tp", "nchannels": 4}) is None
    assert dist.create_nccl_config() is None
    with pytest.raises(TypeError, match="nchannels must be a int"):
        NCCLConfig(nchannels="4")
    with pytest.raises(ValueError, match="unknown key 'channels'"):
        NCCLConfig(channels=4)


# -- split --------------------------------------------------------------------------
def test_split_one_partition_equals_dense_and_errors():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    attr = fw.ParamAttr(initializer=fw.nn.initializer.Assign(W))
    for axis in (0, 1):
        y = dist.split(fw.to_tensor(x), (4, 3), "linear", axis=axis, weight_attr=attr,
                       bias_attr=False)
        np.testing.assert_allclose(y.numpy(), x @ W, rtol=1e-6)
    with pytest.raises(ValueError, match="num_partitions=2 must be 1, the world size"):
        dist.split(fw.to_tensor(x), (4, 4), "linear", num_partitions=2)
    with pytest.raises(ValueError, match=r"size\[1\]=3 .* divisible by num_partitions=2"):
        dist.split(fw.to_tensor(x), (4, 3), "linear", axis=1, num_partitions=2)
    with pytest.raises(ValueError, match="axis 0"):
        dist.split(fw.to_tensor(np.array([1])), (4, 3), "embedding", axis=1)
    with pytest.raises(ValueError, match="operation must be"):
        dist.split(fw.to_tensor(x), (4, 3), "conv")
    with pytest.raises(ValueError, match="has 4 features but the weight"):
        dist.split(fw.to_tensor(x), (5, 3), "linear", axis=1)


def test_split_builds_one_op_in_a_static_program():
    W = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    prog = fw.static.Program()
    with fw.static.program_guard(prog):
        x = fw.static.data("x", [None, 4], "float32")
        y = dist.split(x, (4, 6), "linear", axis=1, bias_attr=False,
                       weight_attr=fw.ParamAttr(initializer=fw.nn.initializer.Assign(W)))
    assert [op.name for op in prog.block.ops] == ["linear"] and len(prog.params()) == 1
    xs = np.ones((2, 4), np.float32)
    out = fw.static.Executor().run(prog, feed={"x": xs}, fetch_list=[y])[0]
    np.testing.assert_allclose(out, xs @ W, rtol=1e-6)


# -- distributed.io -------------------------------------------------------------------
def _prog(name):
    prog = fw.static.Program()
    with fw.static.program_guard(prog):
        x = fw.static.data("x", [None, 2])
        y = fw.static.nn.fc(x, 3, name=name)
    return prog, x, y


@pytest.mark.parametrize("filename", [None, "all.npz"])
def test_io_persistables_round_trip(tmp_path, filename):
    import fw.distributed.io as dio

    prog, _, _ = _prog("ioa")
    saved = {k: t.numpy().copy() for k, t in prog.captured.items()}
    names = dio.save_persistables(None, str(tmp_path), prog, filename=filename)
    assert names == ["ioa.b_0", "ioa.w_0"]
    for t in prog.captured.values():
        t.set_value(np.zeros(t.shape, np.float32))
    dio.load_persistables(None, str(tmp_path), prog, filename=filename)
    for k, t in prog.captured.items():
        np.testing.assert_array_equal(t.numpy(), saved[k])
    other, _, _ = _prog("iob")                  # other names: the missing one is named
    with pytest.raises((FileNotFoundError, KeyError), match="iob"):
        dio.load_persistables(None, str(tmp_path), other, filename=filename)


def test_io_inference_model(tmp_path):
    import fw.distributed.io as dio

    prog, x, y = _prog("ioc")
    fw.static.save_inference_model(str(tmp_path / "m"), [x], [y], program=prog)
    program, feeds, fetches = dio.load_inference_model_distributed(str(tmp_path), None)
    exe = fw.static.Executor()
    xs = np.ones((2, 2), np.float32)
    out = exe.run(program, feed={"x": xs}, fetch_list=fetches)[0]
    w = prog.captured["ioc.w_0"].numpy()
    b = prog.captured["ioc.b_0"].numpy()
    np.testing.assert_allclose(out, xs @ w + b, rtol=1e-6)
    assert feeds == ["x"]
    os.makedirs(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="exactly one"):
        dio.load_inference_model_distributed(str(tmp_path / "empty"), None)


# -- flex checkpoint pieces --------------------------------------------------------------
def test_flex_sharded_weight_checks_and_round_trip(tmp_path):
    with pytest.raises(ValueError, match="local_shape"):
        dist.ShardedWeight("w", fw.zeros([2, 2]), (2, 3), (4, 4), (0, 0))
    with pytest.raises(NotImplementedError, match="flattened"):
        dist.ShardedWeight("w", fw.zeros([4]), (4,), (8,), (0,), is_flattened=True)
    full = np.arange(12, dtype=np.float32).reshape(3, 4)
    pieces = {"t": dist.ShardedWeight("t", fw.to_tensor(full[:, :2].copy()), (3, 2), (3, 4),
                                      (0, 0))}
    with pytest.raises(ValueError, match="do not cover"):
        dist.save_state_dict(pieces, str(tmp_path / "half"))
    dist.save_state_dict(dist.build_sharded_state_dict({"t": fw.to_tensor(full)}),
                         str(tmp_path / "c"))
    got = dist.load_merged_state_dict(str(tmp_path / "c"))
    np.testing.assert_array_equal(got["t"].numpy(), full)
    with pytest.raises(NotImplementedError, match="aoa_config"):
        dist.load_merged_state_dict(str(tmp_path / "c"), aoa_config={"a": ["b"]})
    with pytest.raises(KeyError, match="not in the state dict"):
        dist.build_sharded_state_dict({"t": fw.to_tensor(full)}, shard_rules={"u": 0})


# -- PS admission entries ----------------------------------------------------------------
def test_entry_validation_matches_paddle():
    with pytest.raises(ValueError, match="probability"):
        dist.ProbabilityEntry(1)           # an int, as Paddle refuses
    with pytest.raises(ValueError, match="count_filter"):
        dist.CountFilterEntry(-1)
    with pytest.raises(ValueError, match="str"):
        dist.ShowClickEntry("show", 3)
    assert dist.ProbabilityEntry(0.5)._to_attr() == "probability_entry:0.5"


def test_count_filter_table_admits_on_the_nth_lookup():
    t = SparseTable("e", 2, {"name": "sgd", "learning_rate": 1.0},
                    {"kind": "constant", "value": 1.0}, entry=dist.CountFilterEntry(3))
    for k in range(2):
        assert t.pull(np.array([5, 6])).tolist() == [[0.0, 0.0]] * 2, k
        t.push(np.array([5]), np.ones((1, 2), np.float32))      # dropped: not admitted
    assert len(t) == 0
    assert t.pull(np.array([5])).tolist() == [[1.0, 1.0]]      # the 3rd lookup of 5
    assert t.pull(np.array([6])).tolist() == [[1.0, 1.0]]      # and of 6
    t.push(np.array([5]), np.ones((1, 2), np.float32))
    assert t.pull(np.array([5]), create=False).tolist() == [[0.0, 0.0]]
    assert t.config()["entry"] == {"kind": "count_filter", "count_filter": 3}


def test_probability_entry_rate_and_order_independence():
    ids = np.arange(20000, dtype=np.int64)
    a = Admission({"kind": "probability", "probability": 0.25}, seed=7)
    first = a.admit(ids)
    assert abs(first.mean() - 0.25) < 0.015, first.mean()
    b = Admission({"kind": "probability", "probability": 0.25}, seed=7)
    perm = np.random.default_rng(0).permutation(ids.size)
    np.testing.assert_array_equal(b.admit(ids[perm]), first[perm])   # same draws, any order
    again = a.admit(ids[~first])           # a second attempt draws anew
    assert 0.2 < again.mean() < 0.3


def test_show_click_admission():
    a = Admission({"kind": "show_click", "show_name": "s", "click_name": "c"}, seed=0)
    got = a.admit(np.array([1, 2, 3]), show=np.array([0.0, 1.0, 2.0]),
                  click=np.array([0.0, 0.0, 1.0]))
    assert got.tolist() == [False, True, True]
    with pytest.raises(ValueError, match="needs show and click"):
        a.admit(np.array([4]))


def test_entries_through_parameter_servers(monkeypatch, tmp_path):
    """SparseEmbedding with entries talking to 2 real ParameterServers (loopback)."""
    import test_ps_loopback as lb

    from fw.distributed import fleet
    from fw.distributed.ps import SparseEmbedding, checkpoint, runtime
    from fw.distributed.ps.client import PSClient
    from fw.distributed.ps.optimizer import PSOptimizer
    from fw.distributed.ps.server import ParameterServer

    monkeypatch.setattr(runtime, "_layers", [])
    loop = lb.Loopback()
    for r in (0, 1):
        loop.servers[r] = ParameterServer(lb._ServerSide(loop, r), r, 2, [lb.TRAINER], 5.0)
    rt = runtime.PSRuntime(lb.PSRole(False, 0, ("lo:0", "lo:1"), 1), None)
    rt.transport = loop
    rt.client = PSClient(loop, [0, 1], 0, timeout=5.0)
    monkeypatch.setattr(runtime, "_current", [rt])
    one = fw.nn.initializer.Constant(1.0)
    cnt = SparseEmbedding([100, 2], entry=dist.CountFilterEntry(2), name="cnt", param_attr=one)
    sc = SparseEmbedding([100, 2], entry=dist.ShowClickEntry("show", "click"), name="sc",
                         param_attr=one)
    lin = fw.nn.Linear(2, 1)
    rt.optimizer = PSOptimizer(fw.optimizer.SGD(0.5, parameters=lin.parameters()),
                               fleet.DistributedStrategy())
    rt.init_worker()
    ids = fw.to_tensor(np.array([[3, 4]]))
    assert (cnt(ids).numpy() == 0).all()            # first sight: zeros, no rows
    out = cnt(ids)                                  # second: admitted, rows of ones
    assert (out.numpy() == 1).all()
    out.sum().backward()
    rt.optimizer.step()
    rows = rt.client.pull_sparse(cnt.table_id, np.array([3, 4, 5]), 2, create=False)
    assert rows.tolist() == [[0.5, 0.5], [0.5, 0.5], [0.0, 0.0]]
    got = sc(fw.to_tensor(np.array([[7, 8]])), show=np.array([[1.0, 0.0]]),
             click=np.array([[0.0, 0.0]]))
    assert got.numpy()[0].tolist() == [[1.0, 1.0], [0.0, 0.0]]    # 8 was not shown
    with pytest.raises(ValueError, match="needs show= and click="):
        sc(fw.to_tensor(np.array([[7]])))
    assert all(s.sparse[cnt.table_id].config()["entry"] == {"kind": "count_filter",
                                                            "count_filter": 2}
               for s in loop.servers.values())
    # the entry is part of the checkpointed table config: a reloaded table admits alike
    rt.save(str(tmp_path))
    sparse, _ = checkpoint.load_tables(str(tmp_path), 0, 1)
    assert sparse["cnt"].entry == {"kind": "count_filter", "count_filter": 2}
    assert sparse["cnt"].pull(np.array([3])).tolist() == [[0.5, 0.5]]     # admitted row kept
    assert sparse["cnt"].pull(np.array([50])).tolist() == [[0.0, 0.0]]    # new id: counted
    assert sparse["sc"].entry["kind"] == "show_click"
    rt.stop_worker()


def test_shard_weight_places_the_piece_by_group_rank():
    class _G:  # a group seen from rank 1 of 2 (the fields shard_weight reads)
        rank, nranks, ranks = 1, 2, [0, 1]

    w = dist.shard_weight("fc.w", fw.ones([2, 3]), 0, _G())
    assert isinstance(w, dist.ShardedWeight)
    assert (w.key, w.global_shape, w.global_offset) == ("fc.w", [4, 3], [2, 0])
    w = dist.shard_weight("fc.w", fw.ones([2, 3]), 1, _G())
    assert (w.global_shape, w.global_offset) == ([2, 6], [0, 3])
    one = dist.shard_weight("b", fw.ones([5]), 0, dist.new_group([0]))
    assert (one.global_shape, one.global_offset) == ([5], [0])
    with pytest.raises(ValueError, match=r"shard_weight: axis 2 is not an axis of 'fc.w'"):
        dist.shard_weight("fc.w", fw.ones([2, 3]), 2, _G())
    with pytest.raises(TypeError, match="group must be a Group"):
        dist.shard_weight("fc.w", fw.ones([2, 3]), 0, None)

    class _Out(_G):
        rank = -1

    with pytest.raises(ValueError, match="not a member"):
        dist.shard_weight("fc.w", fw.ones([2, 3]), 0, _Out())
