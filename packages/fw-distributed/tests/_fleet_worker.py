"""Multi-rank workers of the fw-distributed package tests (run with ``mpiexec -n N
python _fleet_worker.py CASE [ARGS]``); each prints ``OK <case> rank <r>``."""

from __future__ import annotations

import sys

import numpy as np

import fw
import fw.nn as nn
from fw.distributed import _fleet_comm as comm
from fw.distributed import fleet
from fw.distributed.checkpoint import load_state_dict, save_state_dict, sharded_state_dict
from fw.distributed.fleet.meta_parallel import ColumnParallelLinear, RowParallelLinear
from fw.distributed.parallel import DataParallel


def _close(a, b, what, tol=1e-6):
    d = float(np.abs(np.asarray(a) - np.asarray(b)).max())
    assert d <= tol, f"{what}: max |diff| {d}"


def _mlp():
    fw.seed(0)
    return nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))


def case_no_sync():
    """4 local backwards under no_sync + 1 synchronised == the gradient of the mean of
    the 5 micro-batches over all ranks."""
    r, n = comm.world_rank(), comm.world_size()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 5, 2, 6)).astype("float32")
    ref = _mlp()
    for k in range(5):
        ref(fw.to_tensor(X[:, k].reshape(-1, 6))).sum().backward()
    dp = DataParallel(_mlp())
    with dp.no_sync():
        for k in range(4):
            dp(fw.to_tensor(X[r, k])).sum().backward()
    # nothing was communicated: local gradients differ between ranks
    g_local = dp._layers[0].weight.grad.numpy().copy()
    others = comm.all_gather(np.ascontiguousarray(g_local))
    assert np.abs(others[0] - others[-1]).max() > 1e-3
    dp(fw.to_tensor(X[r, 4])).sum().backward()
    for (k, p), q in zip(dp._layers.named_parameters(), ref.parameters()):
        _close(p.grad.numpy(), q.grad.numpy() / n, f"no_sync {k}")


class _Branchy(nn.Layer):
    def __init__(self):
        super().__init__()
        fw.seed(0)
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.never = nn.Linear(4, 4)

    def forward(self, x, use_b):
        h = self.a(x)
        return self.b(h) if use_b else h


def case_unused():
    """find_unused_parameters: rank 0 skips a layer that rank 1 uses; a layer nobody
    uses keeps grad None; the averages match the dense computation."""
    r, n = comm.world_rank(), comm.world_size()
    x = np.arange(8 * n, dtype="float32").reshape(2 * n, 4) / 10
    dp = DataParallel(_Branchy(), find_unused_parameters=True)
    for _ in range(2):  # twice: the step state resets
        dp.clear_gradients()
        dp(fw.to_tensor(x[2 * r:2 * r + 2]), use_b=(r % 2 == 1)).sum().backward()
    ref = _Branchy()
    for q in range(n):
        ref(fw.to_tensor(x[2 * q:2 * q + 2]), use_b=(q % 2 == 1)).sum().backward()
    m = dp._layers
    _close(m.a.weight.grad.numpy(), ref.a.weight.grad.numpy() / n, "used by all")
    _close(m.b.weight.grad.numpy(), ref.b.weight.grad.numpy() / n, "used by some")
    assert m.never.weight.grad is None, "a parameter no rank used must keep grad None"


def case_unused_error():
    """Without find_unused_parameters a skipped layer is reported at the next forward."""
    r = comm.world_rank()
    dp = DataParallel(_Branchy())
    dp(fw.to_tensor(np.ones((2, 4), "float32")), use_b=False).sum().backward()
    try:
        dp(fw.to_tensor(np.ones((2, 4), "float32")), use_b=False)
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e) and "never.weight" in str(e), str(e)
        assert "a.weight" not in str(e), str(e)
    else:
        raise AssertionError("no error for parameters without gradients")
    print(f"rank {r} raised as expected", flush=True)


def case_overlap():
    """The bucket all-reduces start while backward still runs: the first bucket is
    launched before the last gradient arrives."""
    fw.seed(0)
    layers = []
    for _ in range(6):
        layers += [nn.Linear(64, 64), nn.Tanh()]
    import os

    from fw.distributed._progress import OpProgress, ProgressDriver

    x = fw.to_tensor(np.ones((8, 64), "float32"))
    net = nn.Sequential(*layers)
    # the shared-memory path (default), the MPI path with its progress thread, and
    # the MPI path driven between backward ops by the autograd engine
    for env in ({}, {"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread"},
                {"FW_DIST_DP_SHM": "0"}):
        os.environ.update(env)
        try:
            dp = DataParallel(net, comm_buffer_size=0.02, last_comm_buffer_size=0.02)
        finally:
            for k in env:
                os.environ.pop(k)
        dp.comm_profile(True)
        dp(x).sum().backward()
        ev = dp.comm_profile()
        launches = [t for what, _, t in ev if what == "launch"]
        end = [t for what, _, t in ev if what == "backward_end"][0]
        assert len(launches) == len(dp._reducer.buckets) >= 3, ev
        assert min(launches) < end and sorted(launches) == launches, ev
        drv = dp._reducer.driver
        if not env:
            assert dp._reducer.shm is not None and drv is None, (dp._reducer.shm, drv)
        elif "FW_DIST_PROGRESS" not in env:
            # the MPI path's default: registered with the engine by the first launch,
            # removed once synced
            assert isinstance(drv, OpProgress) and not drv.active and drv.probes > 0, drv
        else:
            # the progress thread: resumed by the launches, paused once backward is synced
            assert isinstance(drv, ProgressDriver) and not drv.active, drv
            assert abs(drv.interval - 1e-4) < 1e-12, drv
        dp._reducer.close()
        net.clear_gradients()
    _check_progress_driver()


def _check_progress_driver():
    """ProgressDriver alone: it probes only between resume() and pause(), an
    all-reduce started meanwhile completes, and close() ends the thread (bounded)."""
    import time

    from fw.distributed._progress import ProgressDriver

    g = comm.world()
    drv = ProgressDriver(g.engine.comm, 1e-4)
    time.sleep(0.05)
    assert drv.probes == 0, drv.probes           # idle: no probing
    buf = np.ones(1 << 20, "float32")            # 4 MB
    task = comm.all_reduce(buf, group=g, sync_op=False)
    drv.resume()
    end = time.monotonic() + 30
    while drv.probes < 3 and time.monotonic() < end:
        time.sleep(0.001)                        # the GIL is free: the thread probes
    assert drv.probes >= 3, drv.probes
    comm.wait(task)
    assert buf[0] == comm.world_size() and buf[-1] == comm.world_size()
    drv.pause()
    time.sleep(0.01)
    n = drv.probes
    time.sleep(0.05)
    assert drv.probes <= n + 1, (n, drv.probes)  # at most one probe in progress
    drv.close()
    assert not drv._thread.is_alive()


def case_checkpoint(path):
    """Save a tensor-parallel model's sharded state on 2 ranks; the test loads it
    into a dense model in one process."""
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"mp_degree": comm.world_size()}
    fleet.init(is_collective=True, strategy=s)
    fw.seed(comm.world_rank() + 1)
    m = nn.Sequential(ColumnParallelLinear(4, 6, gather_output=False), nn.ReLU(),
                      RowParallelLinear(6, 2, input_is_parallel=True))
    sd = sharded_state_dict(m)
    # a tensor only one rank holds (like a ZeRO owner's optimizer state)
    sd[f"opt.only_rank{comm.world_rank()}"] = np.full(3, comm.world_rank() + 1.0, "float32")
    save_state_dict(sd, path)
    # and load it back with the same split
    m2 = nn.Sequential(ColumnParallelLinear(4, 6, gather_output=False), nn.ReLU(),
                       RowParallelLinear(6, 2, input_is_parallel=True))
    load_state_dict(sharded_state_dict(m2), path)
    for (k, a), b in zip(m.state_dict().items(), m2.state_dict().values()):
        _close(a.numpy(), b.numpy(), f"reload {k}", 0)
    np.save(f"{path}/../rank{comm.world_rank()}_weights.npy",
            np.concatenate([v.numpy().reshape(-1) for v in m.state_dict().values()]))




def case_pp_timeout():
    """Stage 1 never runs its schedule: stage 0's first wait must time out (the job
    sets FW_DIST_TIMEOUT=3) with an error naming the operation and the peer,
    instead of hanging."""
    import time

    from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer

    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"pp_degree": 2}
    s.pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": 1}
    fleet.init(is_collective=True, strategy=s)
    pl = PipelineLayer([LayerDesc(nn.Linear, 2, 2), LayerDesc(nn.Linear, 2, 1)],
                       loss_fn=lambda o, y: ((o - y) ** 2).mean())
    model = fleet.distributed_model(pl)
    opt = fw.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    if comm.world_rank() == 1:
        time.sleep(20)  # never answers; rank 0's failure ends the job first
        return
    t0 = time.monotonic()
    try:
        model.train_batch([fw.to_tensor(np.ones((2, 2), "float32")),
                           fw.to_tensor(np.ones((2, 1), "float32"))], opt)
    except Exception as e:  # noqa: BLE001 - the test prints what was raised
        print(f"RAISED {type(e).__name__} after {time.monotonic() - t0:.1f} s: {e}",
              flush=True)
        raise SystemExit(3) from None
    raise AssertionError("train_batch returned although stage 1 never ran")


def case_overlap_optimizer():
    """DataParallel(overlap_optimizer=opt): 3 buckets, Adam stepped bucket by bucket in
    backward; after 4 steps the parameters equal the non-overlapped DataParallel's bit
    for bit and the single process's on the global batch within fp32 tolerance."""
    r, n = comm.world_rank(), comm.world_size()
    rng = np.random.default_rng(3)
    X = rng.standard_normal((4, n, 8, 6)).astype("float32")

    def net():
        fw.seed(0)
        return nn.Sequential(nn.Linear(6, 40), nn.ReLU(), nn.Linear(40, 30), nn.ReLU(),
                             nn.Linear(30, 3))

    def train(overlap):
        m = net()
        opt = fw.optimizer.Adam(0.01, parameters=m.parameters())
        dp = DataParallel(m, comm_buffer_size=0.004, last_comm_buffer_size=0.0003,
                          overlap_optimizer=opt if overlap else None)
        assert len(dp._reducer.buckets) >= 3
        assert (dp._reducer.optimizer is opt) == overlap
        for k in range(4):
            before = m[0].weight.numpy().copy()
            dp(fw.to_tensor(X[k, r])).square().mean().backward()
            # overlapped: the update already happened in backward
            assert (not np.array_equal(before, m[0].weight.numpy())) == overlap
            opt.step()
            opt.clear_grad()
        return [p.numpy().copy() for p in m.parameters()]

    plain, overlapped = train(False), train(True)
    ref = net()
    opt = fw.optimizer.Adam(0.01, parameters=ref.parameters())
    for k in range(4):
        ref(fw.to_tensor(X[k].reshape(-1, 6))).square().mean().backward()
        opt.step()
        opt.clear_grad()
    for a, b, q in zip(plain, overlapped, ref.parameters()):
        assert np.array_equal(a, b), "overlapped != non-overlapped"
        _close(b, q.numpy(), "overlap vs single process", tol=1e-5)
    mine = np.concatenate([a.reshape(-1) for a in overlapped])
    got = comm.all_gather(np.ascontiguousarray(mine))
    assert np.array_equal(got[0], got[-1]), "ranks diverged"


def case_overlap_optimizer_fleet():
    """fleet: hybrid_configs dp_configs.overlap_optimizer links the inner optimizer to
    the DataParallel distributed_model made; training equals fleet without it."""
    r = comm.world_rank()
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3, comm.world_size(), 4, 6)).astype("float32")

    def train(overlap):
        s = fleet.DistributedStrategy()
        s.hybrid_configs = {"dp_degree": comm.world_size(),
                            "dp_configs": {"overlap_optimizer": overlap}}
        fleet.init(is_collective=True, strategy=s)
        model = fleet.distributed_model(_mlp())
        inner = fw.optimizer.Momentum(0.05, parameters=model.parameters())
        opt = fleet.distributed_optimizer(inner)
        assert (model._reducer.optimizer is inner) == overlap
        for k in range(3):
            model(fw.to_tensor(X[k, r])).square().mean().backward()
            opt.step()
            opt.clear_grad()
        return [p.numpy().copy() for p in model.parameters()]

    for a, b in zip(train(False), train(True)):
        assert np.array_equal(a, b), "fleet overlap != fleet"


class _TwoDtypes(nn.Layer):
    """An MLP and a float64 parameter (a bucket of its own dtype)."""

    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(6, 40), nn.ReLU(), nn.Linear(40, 30), nn.ReLU(),
                                 nn.Linear(30, 3))
        self.extra = self.create_parameter([5], dtype="float64")

    def forward(self, x):
        return self.mlp(x).square().mean() + (self.extra * self.extra).sum().astype("float32")


def case_shm_buckets():
    """The shared-memory bucket path (the default on one node): 3 float32 buckets and a
    float64 one, 5 Adam steps, also with no_sync and overlap_optimizer rounds; the
    parameters equal the MPI all-reduce path's bit for bit and the single process's on
    the global batch within fp32 tolerance; every rank ends identical."""
    import os

    r, n = comm.world_rank(), comm.world_size()
    rng = np.random.default_rng(7)
    X = rng.standard_normal((5, n, 8, 6)).astype("float32")

    def net():
        fw.seed(0)
        return _TwoDtypes()

    def loss_of(m, x):
        return m(x)

    def train(shm, overlap=False):
        os.environ["FW_DIST_DP_SHM"] = "1" if shm else "0"
        try:
            m = net()
            opt = fw.optimizer.Adam(0.01, parameters=m.parameters())
            dp = DataParallel(m, comm_buffer_size=0.004, last_comm_buffer_size=0.0003,
                              overlap_optimizer=opt if overlap else None)
        finally:
            os.environ.pop("FW_DIST_DP_SHM")
        red = dp._reducer
        assert len(red.buckets) >= 4
        assert (red.shm is not None) == shm, red.shm
        if shm:  # every bucket through the window: no progress thread needed
            assert all(red.shm.applies(b.index) for b in red.buckets)
            assert red.driver is None
        for k in range(5):
            if k == 2:  # a local accumulation round first: the next sync sums it in
                with dp.no_sync():
                    loss_of(dp, fw.to_tensor(X[k, r])).backward()
            loss_of(dp, fw.to_tensor(X[k, r])).backward()
            opt.step()
            opt.clear_grad()
        return [p.numpy().copy() for p in m.parameters()]

    mpi, shm, shm_over = train(False), train(True), train(True, overlap=True)
    ref = net()
    opt = fw.optimizer.Adam(0.01, parameters=ref.parameters())
    for k in range(5):
        for _ in range(2 if k == 2 else 1):
            # the mean over ranks of each rank's loss (DataParallel averages gradients)
            loss = sum(loss_of(ref, fw.to_tensor(X[k, q])) for q in range(n)) / n
            loss.backward()
        opt.step()
        opt.clear_grad()
    for a, b, c, q in zip(mpi, shm, shm_over, ref.parameters()):
        assert np.array_equal(a, b), f"shared memory != MPI: {np.abs(a - b).max()}"
        assert np.array_equal(b, c), "shared memory + overlap_optimizer != shared memory"
        _close(b, q.numpy(), "shared memory vs single process", tol=1e-5)
    mine = np.concatenate([a.reshape(-1).astype("float64") for a in shm])
    got = comm.all_gather(np.ascontiguousarray(mine))
    assert np.array_equal(got[0], got[-1]), "ranks diverged"


def case_shm_layout_mismatch():
    """Ranks that built different buckets (different comm_buffer_size) are told so by
    every rank's DataParallel constructor, instead of reading each other's slots."""
    r = comm.world_rank()
    try:
        DataParallel(_mlp(), comm_buffer_size=0.0001 if r == 0 else 25,
                     last_comm_buffer_size=0.0001 if r == 0 else 1)
    except ValueError as e:
        assert "built different gradient buckets" in str(e), str(e)
    else:
        raise AssertionError("no error for different buckets on the ranks")
    # the communicators still work
    got = comm.all_gather(np.array([r], "int64"))
    assert got.reshape(-1).tolist() == list(range(comm.world_size())), got
    print(f"rank {r} raised as expected", flush=True)


if __name__ == "__main__":
    case, args = sys.argv[1], sys.argv[2:]
    globals()["case_" + case](*args)
    print(f"OK {case} rank {comm.world_rank()}", flush=True)
