"""fw.DataParallel: single-process transparency, bucket assignment, hooks, and on 2
ranks (mpiexec) no_sync, find_unused_parameters and the overlap of the bucket
all-reduces with backward."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.distributed._buckets import assign_buckets
from fw.distributed.parallel import DataParallel

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


def run_ranks(n, *args, timeout=180):
    if not os.path.exists(MPIEXEC):
        pytest.skip("mpiexec (the mpich wheel) is not installed beside this Python")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for k in ("PMI_SIZE", "PMI_RANK", "PMI_FD", "PADDLE_TRAINERS_NUM", "WORLD_SIZE"):
        env.pop(k, None)
    try:
        p = subprocess.run([MPIEXEC, "-n", str(n), sys.executable,
                            os.path.join(HERE, "_fleet_worker.py"), *args],
                           capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{n} ranks running {args} did not finish in {timeout} s: "
                             f"{e.stdout} {e.stderr}") from None
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    for r in range(n):
        assert f"OK {args[0]} rank {r}" in out, out[-4000:]
    return out


def _mlp():
    fw.seed(0)
    return nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))


def test_single_process_is_transparent():
    m, ref = _mlp(), _mlp()
    dp = DataParallel(m)
    x = fw.to_tensor(np.random.default_rng(0).standard_normal((4, 6)).astype("float32"))
    out = dp(x)
    np.testing.assert_array_equal(out.numpy(), ref(x).numpy())
    out.sum().backward()
    ref(x).sum().backward()
    for p, q in zip(dp.parameters(), ref.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_state_dict_is_the_single_process_models():
    m = _mlp()
    dp = DataParallel(m)
    assert list(dp.state_dict()) == list(m.state_dict()) == ["0.weight", "0.bias", "2.weight",
                                                              "2.bias"]
    other = _mlp()
    for p in other.parameters():
        p.set_value(np.full(p.shape, 0.5, "float32"))
    dp.set_state_dict(other.state_dict())
    np.testing.assert_array_equal(m[0].weight.numpy(), np.full([6, 12], 0.5, "float32"))
    back = _mlp()
    back.set_state_dict(dp.state_dict())
    np.testing.assert_array_equal(back[2].bias.numpy(), np.full([3], 0.5, "float32"))


def test_fw_dataparallel_facade_and_errors():
    assert fw.DataParallel is DataParallel
    with pytest.raises(TypeError, match="DataParallel: 'layers' must be an fw.nn.Layer"):
        DataParallel(lambda x: x)
    with pytest.raises(ValueError, match="comm_buffer_size must be a positive"):
        assign_buckets([4], ["float32"], comm_buffer_size=0)


def test_no_sync_single_process_accumulates():
    dp = DataParallel(_mlp())
    x = fw.to_tensor(np.ones((2, 6), "float32"))
    with dp.no_sync():
        dp(x).sum().backward()
    g1 = dp._layers[0].weight.grad.numpy().copy()
    dp(x).sum().backward()
    np.testing.assert_allclose(dp._layers[0].weight.grad.numpy(), 2 * g1, rtol=1e-6)


def test_buckets_reverse_order_small_first_bucket_and_dtype_split():
    mb = 1 << 20
    # 4 params of 0.4 MB: the first bucket (last params) closes at 0.5 MB, the next at 1 MB
    sizes = [int(0.4 * mb)] * 4
    b = assign_buckets(sizes, ["float32"] * 4, comm_buffer_size=1, last_comm_buffer_size=0.5)
    assert b == [[3, 2], [1, 0]]
    # every parameter in exactly one bucket, one dtype per bucket
    dts = ["float32", "float64", "float32", "float64", "float32"]
    b = assign_buckets([mb] * 5, dts, comm_buffer_size=2.5, last_comm_buffer_size=1)
    assert sorted(i for bk in b for i in bk) == list(range(5))
    for bk in b:
        assert len({dts[i] for i in bk}) == 1
        assert bk == sorted(bk, reverse=True)
    assert b[0] == [4]


def test_bucket_sizes_respect_the_cap():
    rng = np.random.default_rng(1)
    sizes = [int(x) for x in rng.integers(1, 300_000, 40)]
    b = assign_buckets(sizes, ["float32"] * 40, comm_buffer_size=1, last_comm_buffer_size=0.25)
    for k, bk in enumerate(b):
        cap = (0.25 if k == 0 else 1) * (1 << 20)
        # a bucket closes at the parameter that reaches the cap
        assert sum(sizes[i] for i in bk[:-1]) < cap


def test_no_sync_on_2_ranks():
    run_ranks(2, "no_sync")


def test_find_unused_parameters_on_2_ranks():
    run_ranks(2, "unused")


def test_unused_parameters_without_the_flag_raise_on_2_ranks():
    out = run_ranks(2, "unused_error")
    assert out.count("raised as expected") == 2


def test_bucket_allreduce_overlaps_backward_on_2_ranks():
    run_ranks(2, "overlap")


def test_shared_memory_buckets_equal_the_mpi_path_on_2_ranks():
    run_ranks(2, "shm_buckets")


def test_shared_memory_segment_layout_and_room():
    from fw.distributed import _shm_buckets as sb

    # per rank: a header of 2 x 3 sequence numbers (48 B -> 64), then two slots of
    # the float32 buckets padded to 64 B (10 floats -> 64, 100 floats -> 448); the
    # int8 bucket (None: left to MPI) takes no room
    offs, head, seg = sb._segment_bytes([(10, "float32"), None, (100, "float32")])
    assert (offs, head, seg) == ([0, 64, 64], 64, 64 + 2 * (64 + 448))
    assert sb._shm_free(1) is True
    assert sb._shm_free(1 << 62) is False  # more than any /dev/shm: the MPI path


def test_shared_memory_buckets_refuse_different_layouts_on_2_ranks():
    out = run_ranks(2, "shm_layout_mismatch")
    assert out.count("raised as expected") == 2


def _reducer(model, **kw):
    from fw.distributed import _fleet_comm as comm
    from fw.distributed._buckets import Reducer

    names, params = zip(*model.named_parameters())
    return Reducer(params, comm.self_group(), names=names, **kw)


def test_reducer_hooks_fire_and_launch_buckets_in_order_single_process():
    fw.seed(0)
    m = nn.Sequential(*[nn.Linear(32, 32) for _ in range(4)])
    ref = nn.Sequential(*[nn.Linear(32, 32) for _ in range(4)])
    ref.set_state_dict(m.state_dict())
    r = _reducer(m, comm_buffer_size=0.005, last_comm_buffer_size=0.001)
    assert len(r.buckets) >= 3
    r.profile = True
    x = fw.to_tensor(np.linspace(-1, 1, 64, dtype="float32").reshape(2, 32))
    out = m(x)
    r.prepare(out)
    out.sum().backward()
    ref(x).sum().backward()
    launches = [b for what, b, _ in r.events if what == "launch"]
    assert launches == list(range(len(r.buckets)))  # every bucket, in order
    whats = [w for w, _, _ in r.events]
    assert whats.index("backward_end") > whats.index("launch") and whats[-1] == "synced"
    for p, q in zip(m.parameters(), ref.parameters()):  # the write-back is exact
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert not r.armed


def test_reducer_reports_skipped_parameters_and_double_backward():
    fw.seed(0)
    m = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    r = _reducer(m)
    x = fw.to_tensor(np.ones((1, 3), "float32"))
    h = m[0](x)
    r.prepare(h)
    h.sum().backward()  # m[1] never got a gradient
    with pytest.raises(RuntimeError, match=r"no gradient for parameters \['1.weight', "
                                           r"'1.bias'\].*find_unused_parameters=True"):
        r.prepare(m(x))
    # with find_unused_parameters the unreached layer is marked ready after forward
    fw.seed(0)
    m2 = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    r2 = _reducer(m2, find_unused_parameters=True)
    for _ in range(2):
        h = m2[0](x)
        r2.prepare(h)
        h.sum().backward()
    assert m2[1].weight.grad is None and m2[0].weight.grad is not None
    np.testing.assert_allclose(m2[0].bias.grad.numpy(), [2.0, 2.0, 2.0])


def test_bucket_allreduces_are_profiler_communication_events(tmp_path):
    import json

    from fw import profiler

    fw.seed(0)
    m = nn.Sequential(*[nn.Linear(32, 32) for _ in range(4)])
    r = _reducer(m, comm_buffer_size=0.005, last_comm_buffer_size=0.001)
    x = fw.to_tensor(np.ones((2, 32), "float32"))
    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(str(tmp_path))) as prof:
        out = m(x)
        r.prepare(out)
        out.sum().backward()
    comm_ev = [e for e in prof.events if e.kind == "Communication"]
    names = [f"all_reduce bucket {b.index} ({b.buf.nbytes / 1e3:.0f} kB)" for b in r.buckets]
    assert sorted(e.name for e in comm_ev) == sorted(names)
    ops = [e for e in prof.events if e.kind == "Operator"]
    # the first bucket's all-reduce is in flight while backward's later operators run
    # (one rank: it completes at once, but is seen complete only at the write-back)
    first = next(e for e in comm_ev if e.name == names[0])
    assert any(first.start <= o.start and o.end <= first.end for o in ops), first
    # the chrome trace carries them
    (path,) = tmp_path.iterdir()
    with open(path) as f:
        trace = json.load(f)
    evs = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert sorted(e["name"] for e in evs if e.get("name", "").startswith("all_reduce bucket")) \
        == sorted(names)
    # no profiler: nothing recorded, nothing left open
    out = m(x)
    r.prepare(out)
    out.sum().backward()
    assert all(b.trace is None for b in r.buckets)


def test_bind_to_core(monkeypatch):
    from fw.distributed.parallel import bind_to_core

    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no sched_setaffinity on this platform")
    before = os.sched_getaffinity(0)
    cores = sorted(before)
    for k in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.delenv("FW_DIST_BIND_CORE", raising=False)
    assert bind_to_core() is None            # no local rank known: nothing to do
    assert bind_to_core("1") is None
    with pytest.raises(ValueError, match="FW_DIST_BIND_CORE must be '0', '1' or 'auto', "
                                         "got 'yes'"):
        bind_to_core("yes")
    monkeypatch.setenv("MPI_LOCALRANKID", str(len(cores) - 1))
    monkeypatch.setenv("MPI_LOCALNRANKS", str(len(cores) + 1))
    assert bind_to_core("1") is None         # more ranks than cores: never
    monkeypatch.setenv("MPI_LOCALNRANKS", str(len(cores)))
    try:
        assert bind_to_core() == cores[-1]   # the default: auto, one rank per core
        assert os.sched_getaffinity(0) == {cores[-1]}
    finally:
        os.sched_setaffinity(0, before)
    monkeypatch.setenv("FW_DIST_BIND_CORE", "0")
    assert bind_to_core() is None
    assert os.sched_getaffinity(0) == before
    if len(cores) > 1:
        monkeypatch.setenv("MPI_LOCALNRANKS", str(len(cores) - 1))
        monkeypatch.setenv("MPI_LOCALRANKID", "0")
        assert bind_to_core("auto") is None  # fewer ranks than cores: auto leaves it
        try:
            assert bind_to_core("1") == cores[0]
        finally:
            os.sched_setaffinity(0, before)
