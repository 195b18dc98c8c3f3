"""fleet in a single process: init, DistributedStrategy's attribute API and its
validation, the topology, distributed_model/optimizer, gradient merge, recompute."""

from __future__ import annotations

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.distributed import fleet
from fw.distributed.fleet import CommunicateTopology, DistributedStrategy


def _mlp():
    fw.seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def test_strategy_merges_configs_and_validates():
    s = DistributedStrategy()
    s.hybrid_configs = {"dp_degree": 2}
    s.hybrid_configs = {"mp_degree": 2}
    assert s.hybrid_configs["dp_degree"] == 2 and s.hybrid_configs["mp_degree"] == 2
    assert s.hybrid_configs["pp_degree"] == 1
    s.sharding = True
    s.sharding_configs = {"stage": 2}
    assert s.sharding and s.sharding_configs["stage"] == 2
    s.pipeline_configs = {"accumulate_steps": 4, "micro_batch_size": 2}
    assert s.pipeline_configs == {"accumulate_steps": 4, "micro_batch_size": 2,
                                  "schedule_mode": "1F1B"}
    with pytest.raises(ValueError, match="hybrid_configs: unknown key 'dp'"):
        s.hybrid_configs = {"dp": 2}
    with pytest.raises(ValueError, match="'mp_degree' must be an int >= 1"):
        s.hybrid_configs = {"mp_degree": 0}
    with pytest.raises(ValueError, match="'stage' must be 1"):
        s.sharding_configs = {"stage": 4}
    with pytest.raises(ValueError, match="'k_steps' must be an int >= 1"):
        s.gradient_merge_configs = {"k_steps": 0}
    with pytest.raises(ValueError, match="amp must be a bool"):
        s.amp = "yes"
    with pytest.raises(AttributeError, match="no attribute 'pipelines'"):
        s.pipelines = True
    # a failed assignment changes nothing
    with pytest.raises(ValueError):
        s.hybrid_configs = {"pp_degree": 2, "mp_degree": -3}
    assert s.hybrid_configs["pp_degree"] == 1


def test_topology_layout_mp_fastest():
    t = CommunicateTopology(["data", "pipe", "sharding", "sep", "model"], [2, 1, 1, 1, 2])
    assert t.world_size() == 4
    assert t.get_comm_list("model") == [[0, 1], [2, 3]]
    assert t.get_comm_list("data") == [[0, 2], [1, 3]]
    assert t.get_coord(3) == (1, 0, 0, 0, 1)
    assert t.get_rank(data=1, pipe=0, sharding=0, sep=0, model=0) == 2
    t2 = CommunicateTopology(["data", "pipe", "model"], [1, 2, 2])
    assert t2.get_comm_list("pipe") == [[0, 2], [1, 3]]


def test_init_single_process():
    s = DistributedStrategy()
    fleet.init(is_collective=True, strategy=s)
    hcg = fleet.get_hybrid_communicate_group()
    assert hcg.get_data_parallel_world_size() == 1
    assert hcg.get_model_parallel_world_size() == 1
    assert hcg.get_stage_id() == 0 and hcg.get_pipe_parallel_world_size() == 1
    assert fleet.worker_index() == 0 and fleet.worker_num() == 1 and fleet.is_first_worker()
    m = _mlp()
    assert fleet.distributed_model(m) is m


def test_init_errors():
    # no parameter servers in the environment: laid out as a collective job (Paddle)
    fleet.init(is_collective=False)
    assert fleet.get_hybrid_communicate_group().get_data_parallel_world_size() == 1
    s = DistributedStrategy()
    s.hybrid_configs = {"mp_degree": 2}
    with pytest.raises(ValueError, match="multiply to 2 ranks but the job has 1"):
        fleet.init(is_collective=True, strategy=s)
    with pytest.raises(TypeError, match="must be a fleet.DistributedStrategy"):
        fleet.init(is_collective=True, strategy={"dp_degree": 1})


@pytest.mark.parametrize("opt_cls", ["Adam", "SGD"])  # SGD sees the gradients' scale
def test_gradient_merge_k4_equals_batch_x4_single_process(opt_cls):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((16, 4)).astype("float32")
    ref = _mlp()
    opt = getattr(fw.optimizer, opt_cls)(learning_rate=0.05, parameters=ref.parameters())
    for _ in range(2):
        (ref(fw.to_tensor(X)) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    s = DistributedStrategy()
    s.gradient_merge = True
    s.gradient_merge_configs = {"k_steps": 4, "avg": True}
    fleet.init(is_collective=True, strategy=s)
    m = fleet.distributed_model(_mlp())
    opt2 = fleet.distributed_optimizer(getattr(fw.optimizer, opt_cls)(
        learning_rate=0.05, parameters=m.parameters()))
    for step in range(8):
        k = step % 4
        (m(fw.to_tensor(X[4 * k:4 * k + 4])) ** 2).mean().backward()
        opt2.step()
        opt2.clear_grad()
        if step == 2:  # mid-merge: nothing applied yet
            np.testing.assert_array_equal(m[0].weight.numpy(), _mlp()[0].weight.numpy())
    for p, q in zip(m.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), atol=2e-6)


def test_fleet_utils_recompute_equals_plain():
    from fw.distributed.fleet.utils import recompute

    m, ref = _mlp(), _mlp()
    x = fw.to_tensor(np.linspace(-1, 1, 12, dtype="float32").reshape(3, 4))
    recompute(m, x).sum().backward()
    ref(x).sum().backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)


def test_distributed_optimizer_needs_init_first(monkeypatch):
    from fw.distributed.fleet import fleet_base

    monkeypatch.setattr(fleet_base._state, "hcg", None)
    with pytest.raises(RuntimeError, match="call fleet.init"):
        fleet.get_hybrid_communicate_group()
