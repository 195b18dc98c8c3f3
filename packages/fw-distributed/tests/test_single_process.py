"""fw.distributed in one process without a launcher: rank 0 of 1, MPI never
initialised, every API importable and sensible (community code calls
get_rank() at import time and collectives in 1-GPU runs); bad input raises
errors naming the function and argument."""
import datetime
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
import fw.distributed as dist
from fw.core.internal import make_tensor, version_of
from fw.distributed.communication import _signature

OP = dist.ReduceOp


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    for k in ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PMI_RANK", "PMI_SIZE", "PMI_FD",
              "RANK", "WORLD_SIZE", "FW_DIST_TIMEOUT", "FW_STORE_ENDPOINT", "FW_DIST_DEBUG",
              "FW_DIST_DESYNC_CHECK"):
        monkeypatch.delenv(k, raising=False)
    dist.destroy_process_group()
    yield
    dist.destroy_process_group()


def test_rank_and_world_size_before_init_follow_the_launcher_env(monkeypatch):
    assert (dist.get_rank(), dist.get_world_size(), dist.is_initialized()) == (0, 1, False)
    monkeypatch.setenv("PADDLE_TRAINER_ID", "3")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    assert (dist.get_rank(), dist.get_world_size()) == (3, 4)
    assert dist.ParallelEnv().rank == 3 and dist.ParallelEnv().world_size == 4
    # a launched rank must init first: no silent single-process fallback
    with pytest.raises(RuntimeError, match="all_reduce: call fw.distributed.init_parallel_env"):
        dist.all_reduce(fw.ones([2]))
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "x")
    with pytest.raises(ValueError, match="PADDLE_TRAINERS_NUM must be an integer"):
        dist.get_world_size()


def test_init_is_idempotent_and_mpi_stays_uninitialised():
    g = dist.init_parallel_env()
    assert dist.init_parallel_env() is g and dist.is_initialized()
    assert (g.id, g.rank, g.nranks, g.ranks, g.world_size) == (0, 0, 1, [0], 1)
    assert dist.get_group() is g and dist.get_backend() == "SELF" and dist.is_available()
    env = dist.ParallelEnv()
    assert (env.rank, env.world_size, env.nranks, env.local_rank) == (0, 1, 1, 0)
    assert "mpi4py.MPI" not in sys.modules or not sys.modules["mpi4py.MPI"].Is_initialized()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    assert dist.init_parallel_env() is not g


def test_collectives_on_one_rank_implicitly_initialise():
    x = fw.to_tensor([1.0, -2.0, 3.0])
    for op in (OP.SUM, OP.MAX, OP.MIN, OP.PROD, OP.AVG):
        task = dist.all_reduce(x, op=op)
        assert task.wait() and task.is_completed()
        np.testing.assert_array_equal(x.numpy(), [1.0, -2.0, 3.0])
    assert dist.is_initialized()


def test_every_collective_has_its_one_rank_result():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = fw.to_tensor(a.copy())
    v = version_of(t)
    dist.all_reduce(t)
    assert version_of(t) > v
    dist.broadcast(t, src=0)
    dist.reduce(t, dst=0, op=OP.MAX)
    np.testing.assert_array_equal(t.numpy(), a)
    lst = []
    dist.all_gather(lst, t)
    assert len(lst) == 1 and np.array_equal(lst[0].numpy(), a)
    out = fw.zeros([2, 3])
    dist.reduce_scatter(out, [fw.to_tensor(a * 2)])
    np.testing.assert_array_equal(out.numpy(), a * 2)
    outs = []
    dist.alltoall(outs, [fw.to_tensor(a + 1)])
    np.testing.assert_array_equal(outs[0].numpy(), a + 1)
    o = fw.zeros([2, 3])
    dist.alltoall_single(o, fw.to_tensor(a - 1))
    np.testing.assert_array_equal(o.numpy(), a - 1)
    s = fw.zeros([2, 3])
    dist.scatter(s, [fw.to_tensor(a * 3)], src=0)
    np.testing.assert_array_equal(s.numpy(), a * 3)
    gl = []
    dist.gather(t, gl, dst=0)
    np.testing.assert_array_equal(gl[0].numpy(), a)
    dist.barrier()
    objs = []
    dist.all_gather_object(objs, {"k": [1, 2]})
    assert objs == [{"k": [1, 2]}]
    b = ["x", 1]
    dist.broadcast_object_list(b, src=0)
    assert b == ["x", 1]
    so = []
    dist.scatter_object_list(so, [("only",)], src=0)
    assert so == [("only",)]
    st_out = fw.zeros([2, 3])
    dist.stream.all_gather(st_out, t)
    np.testing.assert_array_equal(st_out.numpy(), a)
    task = dist.stream.all_reduce(t, sync_op=False, use_calc_stream=True)
    assert task.wait()


def test_half_precision_and_bool_reductions_keep_their_dtype():
    bf = make_tensor(np.array([1.5, -2.25], ml_dtypes.bfloat16))
    dist.all_reduce(bf, op=OP.AVG)
    assert bf.numpy().dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(bf.numpy().astype(np.float32), [1.5, -2.25])
    b = fw.to_tensor(np.array([True, False]))
    dist.all_reduce(b, op=OP.PROD)
    assert b.numpy().tolist() == [True, False]


def test_p2p_to_itself_is_refused():
    with pytest.raises(ValueError, match="send: dst=0 is this rank itself"):
        dist.send(fw.ones([1]), dst=0)
    with pytest.raises(ValueError, match="irecv: src=0 is this rank itself"):
        dist.irecv(fw.ones([1]), src=0)


def test_bad_arguments_name_the_function_and_argument():
    x = fw.ones([3])
    with pytest.raises(ValueError, match=r"all_reduce: op must be a ReduceOp.*got 7"):
        dist.all_reduce(x, op=7)
    with pytest.raises(TypeError, match=r"all_reduce: ReduceOp.AVG needs a floating tensor, "
                                        r"got int32\[3\]"):
        dist.all_reduce(fw.to_tensor(np.arange(3, dtype=np.int32)), op=OP.AVG)
    with pytest.raises(TypeError, match="MAX is not defined for complex"):
        dist.all_reduce(fw.to_tensor(np.ones(2, np.complex64)), op=OP.MAX)
    with pytest.raises(TypeError, match="broadcast: tensor must be a fw Tensor, got ndarray"):
        dist.broadcast(np.ones(3), src=0)
    with pytest.raises(ValueError, match=r"broadcast: src=1 is not a member of group 0 "
                                         r"\(ranks \[0\]\)"):
        dist.broadcast(x, src=1)
    with pytest.raises(ValueError, match=r"reduce_scatter: tensor_list must hold one tensor "
                                         r"per rank of the group \(1\), got 2"):
        dist.reduce_scatter(x, [x, x])
    with pytest.raises(ValueError, match=r"all_gather: tensor_list\[0\] is float32\[2\], the "
                                         r"op produces float32\[3\]"):
        dist.all_gather([fw.ones([2])], x)
    with pytest.raises(ValueError, match=r"alltoall: in_tensor_list must hold one tensor per "
                                         r"rank of the group \(1\), got 2"):
        dist.alltoall([], [x, x])
    with pytest.raises(ValueError, match=r"in_split_sizes must be 1 non-negative sizes "
                                         r"summing to the first axis of float32\[3\] \(3\)"):
        dist.alltoall_single(fw.zeros([3]), x, in_split_sizes=[1])
    with pytest.raises(ValueError, match="scatter: tensor_list is required on the source"):
        dist.scatter(x, None, src=0)
    ro = np.ones(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"all_reduce: tensor \(float32\[3\]\) is read-only"):
        dist.all_reduce(make_tensor(ro))
    with pytest.raises(ValueError, match=r"stream.all_gather: the output tensor is float32\[4\]; "
                                         r"gathering float32\[3\] from 1 ranks gives "
                                         r"float32\[3\]"):
        dist.stream.all_gather(fw.zeros([4]), x)
    with pytest.raises(TypeError, match="all_gather_object: object_list must be a list"):
        dist.all_gather_object((), 1)
    with pytest.raises(TypeError, match="all_reduce: group must be a Group"):
        dist.all_reduce(x, group="world")


def test_collectives_on_symbolic_values_become_program_ops():
    from fw.core.ir import TensorType, trace

    def body(x):
        return dist.all_reduce(x, op=dist.ReduceOp.MIN)   # the new value, in a program

    text = str(trace(body, [TensorType([4], "float32")]))
    assert '%0 = c_allreduce(%arg0) {reduce_op="min", ring_id=0}' in text, text
    assert "return %0" in text, text

    def other(x):
        dist.scatter(x, [x], src=0)
        return x

    with pytest.raises(NotImplementedError, match="scatter: not supported inside a program "
                                                  "being built"):
        trace(other, [TensorType([4], "float32")])


def test_groups_on_one_rank():
    g = dist.new_group([0], timeout=datetime.timedelta(seconds=5))
    assert (g.id, g.ranks, g.rank, g.nranks, g.timeout) == (1, [0], 0, 1, 5.0)
    assert g.get_group_rank(0) == 0 and g.get_group_rank(3) == -1 and g.is_member()
    assert dist.get_group(1) is g and dist.get_rank(g) == 0 and dist.get_world_size(g) == 1
    x = fw.ones([2])
    dist.all_reduce(x, group=g)
    assert dist.new_group().id == 2
    dist.destroy_process_group(g)
    with pytest.raises(ValueError, match=r"get_group: no group with id 1 \(existing: \[0, 2\]\)"):
        dist.get_group(1)
    with pytest.raises(ValueError, match=r"new_group: ranks must be distinct ranks in \[0, 1\)"):
        dist.new_group([0, 0])
    with pytest.raises(ValueError, match="new_group: ranks must be distinct"):
        dist.new_group([1])
    with pytest.raises(ValueError, match="new_group: backend must be"):
        dist.new_group([0], backend="hccl")
    with pytest.raises(ValueError, match="new_group: timeout must be a positive number"):
        dist.new_group([0], timeout=-1)
    with pytest.raises(ValueError, match="the world group is destroyed with"):
        dist.destroy_process_group(dist.get_group(0))


def test_timeouts_default_from_init_then_env(monkeypatch):
    assert dist.init_parallel_env(timeout=datetime.timedelta(minutes=2)).timeout == 120.0
    assert dist.new_group([0]).timeout == 120.0
    dist.destroy_process_group()
    monkeypatch.setenv("FW_DIST_TIMEOUT", "42")
    assert dist.init_parallel_env().timeout == 42.0
    dist.destroy_process_group()
    assert dist.init_parallel_env(timeout=7).timeout == 7.0
    dist.destroy_process_group()
    monkeypatch.setenv("FW_DIST_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="FW_DIST_TIMEOUT must be a number of seconds"):
        dist.init_parallel_env()


_dtypes = st.sampled_from(["float32", "float64", "int32", "int64", "bfloat16", "float16", "bool"])
_shapes = st.lists(st.integers(0, 9), min_size=0, max_size=10).map(tuple)


@settings(max_examples=60, deadline=None)
@given(dtype=_dtypes, shape=_shapes, other=_shapes, op=st.sampled_from(_signature.OPS),
       seq=st.integers(1, 10**6))
def test_signatures_agree_exactly_when_calls_match(dtype, shape, other, op, seq):
    a = _signature.encode(seq, op, dtype, shape, 0, 1)
    b = _signature.encode(seq, op, dtype, other, 0, 1)
    rows = np.stack([a, b])
    msg = _signature.mismatch(rows, [4, 7])
    if shape == other:
        assert msg is None
    else:
        assert msg == (f"rank 4 called {_signature.describe(a)} but rank 7 called "
                       f"{_signature.describe(b)}")
        assert dtype in msg and f"{op}(" in msg
    # a wildcard shape (alltoall_single's per-rank sizes) matches any shape
    c = _signature.encode(seq, op, dtype, other, 0, 1, shape_any=True)
    assert _signature.mismatch(np.stack([a, c]), [0, 1]) is None
    # a different sequence number or root never matches
    d = _signature.encode(seq + 1, op, dtype, shape, 0, 1)
    assert _signature.mismatch(np.stack([a, d]), [0, 1]) is not None


def test_signature_text():
    s = _signature.encode(3, "all_reduce", "float32", (4, 5), OP.AVG)
    assert _signature.describe(s) == "all_reduce(float32[4, 5], op=AVG) #3"
    s = _signature.encode(9, "broadcast", "bfloat16", (), root=2)
    assert _signature.describe(s) == "broadcast(bfloat16[], root=2) #9"
    s = _signature.encode(1, "barrier", None, None)
    assert _signature.describe(s) == "barrier() #1"
