"""DataParallel's ``overlap_optimizer``: each bucket's parameters stepped as soon as
its all-reduce is averaged, during backward. Single process through the reducer on a
one-rank group (the code path of N ranks without MPI), and on 2 ranks (mpiexec):
parameters after k steps equal the non-overlapped run bit for bit and the
single-process run on the whole batch within float32 tolerance."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.distributed import _fleet_comm as comm
from fw.distributed._buckets import Reducer
from fw.distributed.parallel import DataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_data_parallel import run_ranks  # noqa: E402


def _net():
    fw.seed(0)
    return nn.Sequential(nn.Linear(40, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                         nn.Linear(32, 5))


def _batches(k):
    rng = np.random.default_rng(7)
    return [(fw.to_tensor(rng.standard_normal((8, 40)).astype("float32")),
             fw.to_tensor(rng.integers(0, 5, 8))) for _ in range(k)]


def _make_opt(kind, params, lr):
    if kind == "adam":
        return fw.optimizer.Adam(lr, parameters=params)
    if kind == "adamw":
        return fw.optimizer.AdamW(lr, parameters=params, weight_decay=0.05)
    if kind == "momentum":
        return fw.optimizer.Momentum(lr, momentum=0.9, parameters=params,
                                     grad_clip=fw.nn.ClipGradByValue(0.02))
    return fw.optimizer.SGD(lr, parameters=params, weight_decay=0.01)


def _train(kind, overlap, steps=4, sched=False, events=None):
    net = _net()
    params = net.parameters()
    lr = fw.optimizer.lr.StepDecay(0.02, step_size=1, gamma=0.8) if sched else 0.02
    opt = _make_opt(kind, params, lr)
    r = Reducer(params, comm.self_group(), comm_buffer_size=0.004,
                last_comm_buffer_size=0.0005, names=[p.name for p in params])
    if overlap:
        assert r.set_optimizer(opt)
    assert len(r.buckets) >= 3
    r.profile = events is not None
    for x, y in _batches(steps):
        out = net(x)
        r.prepare(out)
        fw.nn.functional.cross_entropy(out, y).backward()
        if events is not None:
            events.append(list(r.events))
        opt.step()
        opt.clear_grad()
        if sched:
            lr.step()
    r.close()
    return [p.numpy().copy() for p in params]


@pytest.mark.parametrize("kind", ["adam", "adamw", "momentum", "sgd"])
def test_overlapped_steps_equal_plain_steps(kind):
    want = _train(kind, False)
    ev = []
    got = _train(kind, True, events=ev)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    # every bucket was stepped in the write-back, in order, each after its wait
    for step in ev:
        whats = [(w, b) for w, b, _ in step if w in ("waited", "stepped")]
        nb = len(whats) // 2
        assert whats == [x for b in range(nb) for x in (("waited", b), ("stepped", b))]


def test_overlap_with_an_lr_scheduler():
    for a, b in zip(_train("adam", False, sched=True), _train("adam", True, sched=True)):
        np.testing.assert_array_equal(a, b)


def test_parameters_are_updated_when_backward_returns():
    net = _net()
    params = net.parameters()
    opt = fw.optimizer.Adam(0.1, parameters=params)
    r = Reducer(params, comm.self_group(), names=[p.name for p in params])
    r.set_optimizer(opt)
    before = [p.numpy().copy() for p in params]
    x, y = _batches(1)[0]
    out = net(x)
    r.prepare(out)
    fw.nn.functional.cross_entropy(out, y).backward()
    assert all(not np.array_equal(b, p.numpy()) for b, p in zip(before, params))
    # forgetting opt.step() before the next backward is an error, not a double step
    out = net(x)
    r.prepare(out)
    with pytest.raises(ValueError, match="already updated by a partial step"):
        fw.nn.functional.cross_entropy(out, y).backward()
    assert not r.armed  # the failed step is over: the next one starts clean
    opt.step()
    opt.clear_grad()
    out = net(x)
    r.prepare(out)
    fw.nn.functional.cross_entropy(out, y).backward()
    opt.step()
    r.close()


def test_refusals_warn_and_leave_the_overlap_off():
    net = _net()
    dp = DataParallel(net)
    clipped = fw.optimizer.Adam(parameters=net.parameters(),
                                grad_clip=fw.nn.ClipGradByGlobalNorm(1.0))
    with pytest.warns(UserWarning, match="ClipGradByGlobalNorm needs every gradient"):
        assert dp.set_overlap_optimizer(clipped) is False
    with pytest.warns(UserWarning, match="not elementwise per parameter"):
        DataParallel(net, overlap_optimizer=fw.optimizer.Lamb(parameters=net.parameters()))
    with pytest.warns(UserWarning, match="LBFGS: its step has no partial form"):
        DataParallel(net, overlap_optimizer=fw.optimizer.LBFGS(parameters=net.parameters()))
    with pytest.raises(TypeError, match="overlap_optimizer must be an fw.optimizer"):
        DataParallel(net, overlap_optimizer="adam")
    r = Reducer(net.parameters(), comm.self_group(), owners=[0] * 6)
    with pytest.raises(ValueError, match="ZeRO stage 2"):
        r.set_optimizer(fw.optimizer.Adam(parameters=net.parameters()))
    r.close()


def test_overlap_optimizer_on_2_ranks():
    run_ranks(2, "overlap_optimizer")


def test_overlap_optimizer_through_fleet_on_2_ranks():
    run_ranks(2, "overlap_optimizer_fleet")


def test_strategy_dp_configs():
    from fw.distributed import fleet

    s = fleet.DistributedStrategy()
    assert s.hybrid_configs["dp_configs"] == {"overlap_optimizer": False}
    s.hybrid_configs = {"dp_configs": {"overlap_optimizer": True}}
    assert s.hybrid_configs["dp_configs"]["overlap_optimizer"] is True
    with pytest.raises(ValueError, match="'dp_configs' must be a dict"):
        s.hybrid_configs = {"dp_configs": {"overlap": True}}
