"""The 1F1B schedule as a pure function, PipelineLayer's segmentation, and a
1-stage pipeline's train_batch == dense gradient accumulation (2 stages:
tests/test_dist_equivalence.py)."""

from __future__ import annotations

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.distributed import fleet
from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer, PipelineParallel
from fw.distributed.fleet.meta_parallel.pp_layers import segment_bounds
from fw.distributed.fleet.meta_parallel.schedule import (
    max_in_flight,
    schedule_1f1b,
    schedule_fthenb,
)


def _simulate(num_stages, num_micro, schedule):
    """Run every stage's schedule with blocking receives (a forward of micro i on
    stage s needs stage s-1's forward of i; a backward needs stage s+1's backward
    of i); returns the number of rounds, or raises on a deadlock."""
    progs = [list(schedule(num_stages, s, num_micro)) for s in range(num_stages)]
    done = set()
    pc = [0] * num_stages
    rounds = 0
    while any(pc[s] < len(progs[s]) for s in range(num_stages)):
        moved = False
        for s in range(num_stages):
            if pc[s] == len(progs[s]):
                continue
            kind, i = progs[s][pc[s]]
            need = (("F", s - 1, i) if s > 0 else None) if kind == "F" else \
                (("B", s + 1, i) if s < num_stages - 1 else ("F", s, i))
            if need is None or need in done:
                done.add((kind, s, i))
                pc[s] += 1
                moved = True
        if not moved:
            raise AssertionError(f"deadlock at {pc}")
        rounds += 1
    return rounds


@pytest.mark.parametrize("stages,micro", [(1, 1), (2, 4), (4, 4), (4, 8), (3, 2), (4, 1)])
def test_1f1b_schedule_properties(stages, micro):
    for s in range(stages):
        ops = schedule_1f1b(stages, s, micro)
        assert sorted(ops) == sorted([("F", i) for i in range(micro)] +
                                     [("B", i) for i in range(micro)])
        for i in range(micro):
            assert ops.index(("F", i)) < ops.index(("B", i))
        # backwards in micro-batch order, forwards too
        assert [i for k, i in ops if k == "B"] == list(range(micro))
        assert max_in_flight(ops) == min(stages - s, micro)
    _simulate(stages, micro, schedule_1f1b)
    _simulate(stages, micro, schedule_fthenb)
    assert max_in_flight(schedule_fthenb(stages, 0, micro)) == micro


def test_1f1b_exact_order():
    assert schedule_1f1b(2, 1, 3) == [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2),
                                      ("B", 2)]
    assert schedule_1f1b(3, 0, 4) == [("F", 0), ("F", 1), ("F", 2), ("B", 0), ("F", 3),
                                      ("B", 1), ("B", 2), ("B", 3)]
    with pytest.raises(ValueError, match="stage_id"):
        schedule_1f1b(2, 2, 4)


def test_segment_bounds():
    descs = [LayerDesc(nn.Linear, 2, 2), LayerDesc(nn.ReLU)] * 3
    assert segment_bounds(descs, 2) == [0, 3, 6]
    assert segment_bounds(descs, 3, "layer:Linear") == [0, 2, 4, 6]
    with pytest.raises(ValueError, match="cannot be split into 7 stages"):
        segment_bounds(descs, 7)
    with pytest.raises(TypeError, match="LayerDesc: layer_func must be"):
        LayerDesc(lambda: None)


def test_one_stage_train_batch_equals_dense_accumulation():
    s = fleet.DistributedStrategy()
    s.pipeline_configs = {"accumulate_steps": 4, "micro_batch_size": 2}
    fleet.init(is_collective=True, strategy=s)
    fw.seed(0)
    dense = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    pl = PipelineLayer([LayerDesc(nn.Linear, 3, 5), LayerDesc(nn.Tanh),
                        LayerDesc(nn.Linear, 5, 1)],
                       loss_fn=lambda o, y: ((o - y) ** 2).mean(), recompute_interval=1)
    assert list(pl.state_dict()) == list(dense.state_dict())
    pl.set_state_dict(dense.state_dict())
    pp = PipelineParallel(pl, fleet.get_hybrid_communicate_group(), s)
    rng = np.random.default_rng(0)
    X = fw.to_tensor(rng.standard_normal((8, 3)).astype("float32"))
    Y = fw.to_tensor(rng.standard_normal((8, 1)).astype("float32"))
    opt = fw.optimizer.SGD(learning_rate=0.1, parameters=pl.parameters())
    loss = pp.train_batch([X, Y], opt)
    ref_loss = ((dense(X) - Y) ** 2).mean()
    np.testing.assert_allclose(float(loss.numpy()), float(ref_loss.numpy()), rtol=1e-5)
    ref_loss.backward()
    opt2 = fw.optimizer.SGD(learning_rate=0.1, parameters=dense.parameters())
    opt2.step()
    for (k, a), b in zip(pl.state_dict().items(), dense.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6, err_msg=k)
    with pytest.raises(ValueError, match=r"batch size 6 but micro_batch_size \(2\) x "):
        pp.train_batch([X[:6], Y[:6]], opt)


def test_a_stage_that_never_answers_times_out_naming_it():
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(mpiexec):
        pytest.skip("mpiexec (the mpich wheel) is not installed beside this Python")
    env = dict(os.environ, OMP_NUM_THREADS="1", FW_DIST_TIMEOUT="3")
    for k in ("PMI_SIZE", "PMI_RANK", "PMI_FD", "PADDLE_TRAINERS_NUM", "WORLD_SIZE"):
        env.pop(k, None)
    p = subprocess.run([mpiexec, "-n", "2", sys.executable,
                        os.path.join(here, "_fleet_worker.py"), "pp_timeout"],
                       capture_output=True, text=True, timeout=120, env=env)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-3000:]
    line = next(x for x in out.splitlines() if x.startswith("RAISED"))
    assert "CollectiveTimeoutError" in line and "recv" in line and "rank 1 did not" in line
    assert float(line.split(" after ")[1].split(" s")[0]) < 30, line
