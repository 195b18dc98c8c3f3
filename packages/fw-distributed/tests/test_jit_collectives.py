"""Collectives inside fw.jit.to_static programs: on 2 ranks under the launcher
(comm_scripts/jit_check.py: to_static == eager for all_reduce/broadcast/all_gather/
reduce_scatter, gradients through c_allreduce, fw.jit.save holding the ops, a
data-parallel training step == fw.DataParallel), and in one process (rank 0 of 1):
the emitted ops, the rebinding of the in-place target, the backend registration
and the refusals."""
from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import fw
import fw.distributed as dist
import fw.nn as nn
from fw.core.internal import collectives
from fw.distributed.communication import _lowering

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comm_testutil import explain, rank_lines, run_launcher  # noqa: E402


def test_two_ranks_to_static_equals_eager():
    p = run_launcher("jit_check.py", 2, timeout=180,
                     env=None, launcher_args=("--timeout", "60"))
    assert p.returncode == 0, explain(p)
    got = rank_lines(p.reports, "JIT")
    assert got == {0: "ok 7", 1: "ok 7"}, explain(p)
    # the fused and unfused DP steps' times (ms; see the README's figures)
    times = rank_lines(p.reports, "JITTIME")
    assert sorted(times) == [0, 1], explain(p)
    print("to_static DP step, fused / unfused all-reduces (ms):", times)


@pytest.fixture
def world():
    g = dist.init_parallel_env()
    yield g
    dist.destroy_process_group()


def _returned_by(text):
    """The ops whose results the program's block 0 returns, by op name."""
    defs = dict(re.findall(r"(%\d+) = (\w+)\(", text))
    ret = re.search(r"return (.*)", text).group(1)
    return [defs.get(v.strip()) for v in ret.split(",")]


def test_backend_is_registered_by_init_and_removed_by_destroy():
    dist.init_parallel_env()
    try:
        assert collectives.backend is _lowering.run
    finally:
        dist.destroy_process_group()
    assert collectives.backend is None


def test_in_place_collectives_rebind_their_target(world):
    def step(x):
        y = x * 2.0
        dist.all_reduce(y, op=dist.ReduceOp.AVG)
        b = x + 1.0
        dist.broadcast(b, src=0)
        s = fw.zeros([4], "float32")
        dist.reduce_scatter(s, [x * 3.0])
        o = fw.zeros([4], "float32")
        dist.stream.all_gather(o, x - 1.0)
        return y, b, s, o

    sf = fw.jit.to_static(step)
    xv = np.arange(4, dtype=np.float32)
    out = sf(fw.to_tensor(xv))
    for got, want in zip(out, (2 * xv, xv + 1, 3 * xv, xv - 1)):  # one rank: identities
        np.testing.assert_array_equal(got.numpy(), want)
    text = str(sf.concrete_program.main_program)
    assert _returned_by(text) == ["c_allreduce", "c_broadcast",
                                                 "c_reducescatter", "c_allgather"], text
    assert 'reduce_op="avg"' in text and "nranks=1" in text


def test_all_gather_fills_the_list_in_a_program(world):
    @fw.jit.to_static
    def gather(x):
        parts = []
        dist.all_gather(parts, x)
        full = [fw.zeros([2], "float32")]
        dist.all_gather(full, x * 2.0)
        return parts[0], full[0]

    a, b = gather(fw.to_tensor(np.array([1.0, 2.0], np.float32)))
    assert a.numpy().tolist() == [1.0, 2.0] and b.numpy().tolist() == [2.0, 4.0]
    assert str(gather.concrete_program.main_program).count("c_allgather(") == 2


def test_captured_tensor_gets_a_state_update(world):
    buf = fw.to_tensor(np.array([1.0, 2.0], np.float32))
    seen = []

    def backend(name, x, attrs):       # a 'world' in which all_reduce doubles
        seen.append(name)
        return x * 2

    class M(nn.Layer):
        def __init__(self):
            super().__init__()
            self.register_buffer("acc", buf)

        def forward(self, x):
            dist.all_reduce(self.acc)
            return x + self.acc

    m = fw.jit.to_static(M())
    old = collectives.register_backend(backend)
    try:
        out = m(fw.to_tensor(np.zeros(2, np.float32)))
    finally:
        collectives.register_backend(old)
    assert seen == ["c_allreduce"]
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(buf.numpy(), [2.0, 4.0])     # written back after the run


def test_grad_all_reduce_feeds_the_optimizer(world):
    fw.seed(0)
    model = nn.Linear(3, 2)
    opt = fw.optimizer.SGD(0.5, parameters=model.parameters())
    params = list(model.parameters())
    w0 = [p.numpy().copy() for p in params]
    calls = []

    def backend(name, x, attrs):       # a 'world' in which the gradient average is 10x
        calls.append((name, attrs["reduce_op"]))
        return x * 10

    @fw.jit.to_static
    def step(x):
        loss = model(x).sum()
        loss.backward()
        for p in params:
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
        opt.step()
        opt.clear_grad()
        return loss

    xv = np.ones((4, 3), np.float32)
    old = collectives.register_backend(backend)
    try:
        step(fw.to_tensor(xv))
    finally:
        collectives.register_backend(old)
    # one call: fuse_all_reduce_ops put both gradients in one bucket
    assert calls == [("c_allreduce", "avg")]
    # d(sum(x W + b))/dW = x^T 1 = 4 everywhere, /db = 4; the backend made them 40
    np.testing.assert_allclose(params[0].numpy(), w0[0] - 0.5 * 40, rtol=1e-6)
    np.testing.assert_allclose(params[1].numpy(), w0[1] - 0.5 * 40, rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda x: dist.reduce(x, dst=0),
    lambda x: dist.scatter(x, [x], src=0),
    lambda x: dist.gather(x, [], dst=0),
    lambda x: dist.alltoall([], [x]),
    lambda x: dist.send(x, dst=0),
    lambda x: dist.barrier(),
], ids=["reduce", "scatter", "gather", "alltoall", "send", "barrier"])
def test_other_collectives_refuse_inside_a_program(world, call):
    def f(x):
        call(x)
        return x

    with pytest.raises(NotImplementedError, match="not supported inside a program"):
        fw.jit.to_static(f)(fw.to_tensor(np.ones(2, np.float32)))


def test_program_collective_checks_the_group_size(world):
    from fw.core.ops import call

    with pytest.raises(ValueError, match="built for nranks=2 but group 0 has 1 ranks"):
        call("c_allgather", fw.to_tensor(np.ones(2, np.float32)), nranks=2)
