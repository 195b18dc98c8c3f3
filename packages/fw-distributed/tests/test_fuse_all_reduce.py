"""``fuse_all_reduce_ops``: a to_static data-parallel step's per-gradient
c_allreduce ops become one bucketed all-reduce (one process: the ops are the
identity, so values must equal the unfused program's and eager training exactly;
the 2-rank equality with fw.DataParallel is in comm_scripts/jit_check.py)."""
import numpy as np
import pytest

import fw
import fw.distributed as dist
import fw.nn as nn
from fw.core.ir.passes import PIPELINES, get_pass
from fw.distributed.passes import fuse_all_reduce as far


def _mlp():
    fw.seed(3)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def _train(monkeypatch, mb, steps=3):
    monkeypatch.setenv("FW_DIST_FUSE_ALLREDUCE_MB", str(mb))
    model = _mlp()
    opt = fw.optimizer.Adam(0.05, parameters=model.parameters())
    params = list(model.parameters())

    @fw.jit.to_static
    def step(xb, yb):
        loss = ((model(xb) - yb) ** 2).mean()
        loss.backward()
        for p in params:
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
        opt.step()
        opt.clear_grad()
        return loss

    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        xb = rng.standard_normal((6, 4)).astype(np.float32)
        yb = rng.standard_normal((6, 2)).astype(np.float32)
        losses.append(float(step(fw.to_tensor(xb), fw.to_tensor(yb))))
    text = str(step.concrete_program.main_program)
    return losses, [p.numpy() for p in model.parameters()], text


def test_the_pass_is_in_the_to_static_pipeline():
    assert PIPELINES["to_static"][0] == "fuse_all_reduce_ops"
    assert PIPELINES["to_static"][1:] == ("cse", "dce")


def test_dp_step_all_reduces_fused_into_one_bucket(monkeypatch):
    l0, p0, t0 = _train(monkeypatch, 0)        # fusion off
    l1, p1, t1 = _train(monkeypatch, 32)       # default cap: one bucket
    assert t0.count("c_allreduce(") == 4 and t1.count("c_allreduce(") == 1, t1
    assert 'reduce_op="avg"' in t1 and "concat(" in t1 and "split(" in t1
    assert l0 == l1
    for a, b in zip(p0, p1):
        np.testing.assert_array_equal(a, b)
    # eager training of the same model gives the same parameters
    model = _mlp()
    opt = fw.optimizer.Adam(0.05, parameters=model.parameters())
    rng = np.random.default_rng(0)
    for _ in range(3):
        xb = rng.standard_normal((6, 4)).astype(np.float32)
        yb = rng.standard_normal((6, 2)).astype(np.float32)
        ((model(fw.to_tensor(xb)) - fw.to_tensor(yb)) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    for a, q in zip(p1, model.parameters()):
        np.testing.assert_allclose(a, q.numpy(), rtol=1e-6, atol=1e-7)


def test_bucket_cap_splits_buckets(monkeypatch):
    # gradients in program order: 4x8 weight (128 B), its bias (32 B), 8x2 weight
    # (64 B), its bias (8 B): a 160-byte cap closes [w1, b1], then [w2, b2]
    _, _, text = _train(monkeypatch, 160 / (1 << 20), steps=1)
    assert text.count("c_allreduce(") == 2, text


def test_a_member_read_before_the_bucket_ends_closes_it():
    from fw.core.ir import Builder
    from fw.core.ops import call

    with Builder() as b:
        x = b.add_input(fw.core.ir.types.TensorType([3], fw.float32))
        y = b.add_input(fw.core.ir.types.TensorType([2, 2], fw.float32))
        a = call("c_allreduce", x)
        a2 = a * 2.0                      # reads a before the next all-reduce
        c = call("c_allreduce", y)
        d = call("c_allreduce", x * 3.0)
        e = call("c_allreduce", y, reduce_op="max")   # another key
        b.set_outputs([a2, c, d, e])
    prog = b.program
    assert get_pass("fuse_all_reduce_ops").run(prog)
    text = str(prog)
    # a stays alone (its reader comes first), c and d fuse, the max stays alone
    assert text.count("c_allreduce(") == 3, text
    assert text.count("concat(") == 1, text
    fw.core.ir.verify(prog)


def test_env_errors(monkeypatch):
    monkeypatch.setenv("FW_DIST_FUSE_ALLREDUCE_MB", "lots")
    with pytest.raises(ValueError, match="FW_DIST_FUSE_ALLREDUCE_MB='lots' is not a number"):
        far.bucket_bytes()
    monkeypatch.setenv("FW_DIST_FUSE_ALLREDUCE_MB", "-1")
    with pytest.raises(ValueError, match="must be >= 0"):
        far.bucket_bytes()
