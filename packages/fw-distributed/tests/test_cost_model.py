"""fw.distributed.auto: the cost model's formulas against hand-computed values,
its monotonicity properties, op-table coverage, calibration, search/choose and
Strategy."""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
import fw.nn as nn
from fw.core.ir import TensorType
from fw.distributed import auto
from fw.distributed.auto import (
    Cluster,
    Device,
    Link,
    ParallelConfig,
    Strategy,
    calibrate,
    choose,
    collective_time,
    cost_of,
    estimate,
    search,
)
from fw.distributed.auto.estimate import _bucket_exposed, _partition, _tp_pairs, trace_step

T = TensorType


def _cluster(bw=1e9, lat=1e-5, topology="ring", overlap=0.0, n=4, **kw):
    dev = Device("d", {"float32": 1e11}, mem_bandwidth=1e10, memory=1e9, op_overhead=1e-5,
                 **kw)
    return Cluster(dev, devices_per_node=n, intra=Link(bw, lat), topology=topology,
                   comm_overlap=overlap)


def _mlp(widths=(64, 128, 128, 10)):
    fw.seed(0)
    a, b, c, d = widths
    return nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c), nn.ReLU(), nn.Linear(c, d))


def _mlp_loss(model, x, y):
    return fw.nn.functional.cross_entropy(model(x), y)


SPEC = [([64, 64], "float32"), ([64], "int64")]


# ---------------------------------------------------------------- formulas
def test_collective_formulas_by_hand():
    c = _cluster(bw=1e9, lat=1e-5)
    M, a, b = 4e6, 1e-5, 1e-9
    assert collective_time(c, "all_reduce", M, 4) == pytest.approx(6 * a + 1.5 * M * b)
    assert collective_time(c, "all_gather", M, 4) == pytest.approx(3 * a + 0.75 * M * b)
    assert collective_time(c, "reduce_scatter", M, 4) == pytest.approx(3 * a + 0.75 * M * b)
    assert collective_time(c, "broadcast", M, 4) == pytest.approx(3 * a + M * b)
    assert collective_time(c, "send_recv", M, 2) == pytest.approx(a + M * b)
    assert collective_time(c, "all_reduce", M, 1) == 0.0
    t = _cluster(bw=1e9, lat=1e-5, topology="tree")
    # recursive doubling / halving: 2 log2(n) alpha + 2 (n-1)/n M beta
    assert collective_time(t, "all_reduce", M, 4) == pytest.approx(4 * a + 1.5 * M * b)
    assert collective_time(t, "broadcast", M, 4) == pytest.approx(2 * (a + M * b))
    auto_ = _cluster(bw=1e9, lat=1e-5, topology="auto")
    for op in ("all_reduce", "broadcast", "all_gather"):
        assert collective_time(auto_, op, 100.0, 8) == pytest.approx(
            min(collective_time(c, op, 100.0, 8), collective_time(t, op, 100.0, 8)))


def test_inter_node_link_share():
    # DGX A100: 8 GPUs share 200 GB/s x 0.8 of NICs; a DP group with one rank per node
    # (stride 8) gets one GPU's share, a group of whole nodes the node's bandwidth
    c = Cluster.a100_dgx(4)
    from fw.distributed.auto.comm import group_link

    _, beta_one, where = group_link(c, 4, stride=8)
    assert where == "inter" and 1 / beta_one == pytest.approx(0.8 * 200e9 / 8)
    _, beta_all, _ = group_link(c, 32, stride=1)
    assert 1 / beta_all == pytest.approx(0.8 * 200e9)
    _, beta_in, where = group_link(c, 8, stride=1)
    assert where == "intra" and 1 / beta_in == pytest.approx(0.8 * 300e9)


def test_collective_calibrated_fit_is_used_inside_a_node():
    c = _cluster()
    c.collectives = {"all_reduce": {"alpha": 1e-3, "beta": 1e-8}}
    assert collective_time(c, "all_reduce", 1e6, 2) == pytest.approx(2e-3 + 1e-2)
    assert collective_time(c, "all_reduce", 1e6, 4) == pytest.approx(6e-3 + 1.5e-2)


def test_op_cost_formulas_by_hand():
    m = cost_of("matmul", [T([8, 32, 16], "float32"), T([16, 24], "float32")],
                [T([8, 32, 24], "float32")], {"transpose_x": False, "transpose_y": False})
    assert m.flops == 2 * 8 * 32 * 16 * 24 and m.kind == "matmul"
    assert m.bytes == 4 * (8 * 32 * 16 + 16 * 24 + 8 * 32 * 24)
    mt = cost_of("matmul", [T([16, 32], "float32"), T([24, 16], "float32")],
                 [T([32, 24], "float32")], {"transpose_x": True, "transpose_y": True})
    assert mt.flops == 2 * 32 * 16 * 24
    lin = cost_of("linear", [T([10, 7], "float32"), T([7, 5], "float32"), T([5], "float32")],
                  [T([10, 5], "float32")], {})
    assert lin.flops == 2 * 10 * 7 * 5 + 10 * 5
    # conv: 2 * output elements * Cin/groups * kh * kw
    cv = cost_of("conv", [T([2, 8, 10, 10], "float32"), T([16, 4, 3, 3], "float32"), None],
                 [T([2, 16, 10, 10], "float32")], {"groups": 2})
    assert cv.flops == 2 * (2 * 16 * 10 * 10) * 4 * 9 and cv.kind == "conv"
    sd = cost_of("scaled_dot_product_attention",
                 [T([2, 16, 4, 8], "float32")] * 3 + [None], [T([2, 16, 4, 8], "float32")], {})
    # QK^T and PV (2 * 2*B*H*Tq*Tk*D), the scale (1 per score), the softmax (8 + 4)
    assert sd.flops == 4 * 2 * 4 * 16 * 16 * 8 + (1 + 12) * 2 * 4 * 16 * 16
    assert sd.kind == "bmm" and len(sd.parts) == 6
    es = cost_of("einsum", [T([3, 4], "float32"), T([4, 5], "float32")],
                 [T([3, 5], "float32")], {"equation": "ij,jk->ik"})
    assert es.flops == 2 * 3 * 4 * 5
    assert cost_of("reshape", [T([4, 6], "float32")], [T([24], "float32")], {}).bytes == 0
    ex = cost_of("exp", [T([100], "float32")], [T([100], "float32")], {})
    assert ex.flops == 800 and ex.bytes == 800
    ad = cost_of("add", [T([100], "float64"), T([100], "float64")], [T([100], "float64")], {})
    assert ad.flops == 100 and ad.bytes == 2400
    ch = cost_of("cholesky", [T([5, 30, 30], "float64")], [T([5, 30, 30], "float64")], {})
    assert ch.flops == pytest.approx(5 * 30 ** 3 / 3)
    with pytest.raises(KeyError, match="no op named 'nope'"):
        cost_of("nope", [], [], {})


def test_roofline_time_of_one_op():
    c = _cluster()
    mlp = nn.Sequential(nn.Linear(256, 512))
    e = estimate(mlp, ParallelConfig(), c, input_spec=[([128, 256], "float32")])
    row = next(r for r in e.ops if r[1] == "linear")
    flops, nbytes = 2 * 128 * 256 * 512 + 128 * 512, 4 * (128 * 256 + 256 * 512 + 512 + 128 * 512)
    assert row[3] == flops and row[4] == nbytes
    assert row[5] == pytest.approx(1e-5 + max(flops / 1e11, nbytes / 1e10))


def test_partition_is_optimal():
    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.floats(0.1, 10), min_size=2, max_size=9), st.integers(1, 4))
    def check(costs, p):
        parts = _partition(costs, p)
        assert len(parts) == p and [i for q in parts for i in q] == list(range(len(costs)))
        got = max(sum(costs[i] for i in q) for q in parts)
        import itertools

        n, best = len(costs), float("inf")
        k = min(p, n)
        for cuts in itertools.combinations(range(1, n), k - 1):
            b = (0,) + cuts + (n,)
            best = min(best, max(sum(costs[b[j]:b[j + 1]]) for j in range(k)))
        assert got <= best + 1e-9

    check()


def test_pipeline_bubble_fraction():
    """1F1B on equal stages: bubble / (compute + bubble) = (p-1) / (m+p-1)."""
    c = _cluster(n=8)
    model = nn.Sequential(*[nn.Linear(64, 64) for _ in range(8)])
    for p, m in ((2, 4), (4, 4), (4, 16)):
        e = estimate(model, ParallelConfig(pp=p, micro_batches=m), c,
                     input_spec=[([64, 64], "float32")])
        pipe = e.compute - e.optimizer - e.accumulate
        assert e.bubble / (pipe + e.bubble) == pytest.approx((p - 1) / (m + p - 1))


def test_dp_all_reduce_buckets_by_hand():
    c = _cluster(bw=1e9, lat=1e-4)
    g = 3 * (1 << 20)  # 3 MB of gradients: buckets of 1 MB and 2 MB
    ex, total = _bucket_exposed(c, g, 1.0, 2, 1)
    want = sum(2 * 1e-4 + s * 1e-9 for s in (1 << 20, 2 << 20))
    assert total == pytest.approx(want) and ex == pytest.approx(want)  # no overlap
    c.comm_overlap = 1.0  # a backward of 1 s hides everything but the last bucket
    ex, _ = _bucket_exposed(c, g, 1.0, 2, 1)
    assert ex == pytest.approx(2 * 1e-4 + (2 << 20) * 1e-9)


def test_tensor_parallel_pairs_megatron():
    step = trace_step(_mlp(), SPEC, _mlp_loss)
    split, pairs = _tp_pairs(step.fwd)
    lin = [i for i, (op, _) in enumerate(step.fwd) if op.name == "linear"]
    assert pairs == [(lin[0], lin[1])]  # column, row; the last linear stays whole
    assert lin[2] not in split
    e1 = estimate(_mlp(), ParallelConfig(mp=2), _cluster(), input_spec=SPEC, loss_fn=_mlp_loss)
    # g: the row linear's output [64, 128] in forward; f: the column linear's input
    # gradient [64, 64] in backward
    g = collective_time(_cluster(), "all_reduce", 64 * 128 * 4, 2)
    f = collective_time(_cluster(), "all_reduce", 64 * 64 * 4, 2)
    assert e1.comm_detail["tp_all_reduce"] == pytest.approx(g + f)
    e2 = estimate(_mlp(), ParallelConfig(mp=2, recompute=True), _cluster(), input_spec=SPEC,
                  loss_fn=_mlp_loss)
    assert e2.comm_detail["tp_all_reduce"] == pytest.approx(2 * g + f)  # forward twice
    with pytest.raises(ValueError, match="does not divide"):
        estimate(_mlp((64, 129, 128, 10)), ParallelConfig(mp=2), _cluster(), input_spec=SPEC,
                 loss_fn=_mlp_loss)


def test_zero_memory_by_stage():
    n = sum(p.size for p in _mlp().parameters())
    mem = {}
    for cfg in (ParallelConfig(dp=2), ParallelConfig(sharding=2, sharding_stage=1),
                ParallelConfig(sharding=2, sharding_stage=2),
                ParallelConfig(sharding=2, sharding_stage=3)):
        e = estimate(_mlp(), cfg, _cluster(), input_spec=SPEC, loss_fn=_mlp_loss)
        mem[cfg.label()] = e.memory_breakdown
    assert mem["dp2"]["optimizer"] == 2 * 4 * n
    assert mem["zero1x2"]["optimizer"] == 4 * n and mem["zero1x2"]["gradients"] == 4 * n
    assert mem["zero2x2"]["gradients"] == 2 * n and mem["zero2x2"]["parameters"] == 4 * n
    assert mem["zero3x2"]["parameters"] == 2 * n


# ---------------------------------------------------------------- monotonicity
CFGS = [ParallelConfig(dp=2), ParallelConfig(mp=2), ParallelConfig(pp=2, micro_batches=2),
        ParallelConfig(sharding=2, sharding_stage=3), ParallelConfig(dp=2, mp=2),
        ParallelConfig(dp=4)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CFGS), st.floats(1e8, 1e11), st.floats(1.0, 100.0),
       st.floats(0.0, 1.0))
def test_more_bandwidth_is_never_slower(cfg, bw, factor, overlap):
    slow = _cluster(bw=bw, overlap=overlap)
    fast = _cluster(bw=bw * factor, overlap=overlap)
    a = estimate(_mlp(), cfg, slow, input_spec=SPEC, loss_fn=_mlp_loss)
    b = estimate(_mlp(), cfg, fast, input_spec=SPEC, loss_fn=_mlp_loss)
    assert b.step_time <= a.step_time + 1e-12
    assert b.communication <= a.communication + 1e-12


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([2, 4]), st.sampled_from([1, 2, 4, 8, 16]))
def test_more_micro_batches_smaller_bubble_fraction(p, m):
    model = nn.Sequential(*[nn.Linear(32, 32) for _ in range(8)])
    c = _cluster(n=8)

    def frac(mm):
        e = estimate(model, ParallelConfig(pp=p, micro_batches=mm), c,
                     input_spec=[([64, 32], "float32")])
        return e.bubble / e.step_time

    assert frac(2 * m) < frac(m)


def test_recompute_trades_memory_for_time():
    c = _cluster()
    a = estimate(_mlp(), ParallelConfig(), c, input_spec=SPEC, loss_fn=_mlp_loss)
    b = estimate(_mlp(), ParallelConfig(recompute=True), c, input_spec=SPEC, loss_fn=_mlp_loss)
    assert b.memory_breakdown["activations"] < a.memory_breakdown["activations"]
    assert b.step_time > a.step_time


def test_search_prunes_by_memory_and_ranks():
    c = _cluster(n=4)
    full = search(_mlp(), c, 4, input_spec=SPEC, loss_fn=_mlp_loss, micro_batches=(1, 2))
    assert full and not full.pruned
    times = [x.estimate.step_time for x in full]
    assert times == sorted(times)
    mems = sorted(x.estimate.memory for x in full)
    limit = mems[len(mems) // 2]
    cut = search(_mlp(), c, 4, input_spec=SPEC, loss_fn=_mlp_loss, micro_batches=(1, 2),
                 memory_limit=limit)
    assert all(x.estimate.memory <= limit for x in cut)
    assert len(cut) + len([p for p in cut.pruned if "memory" in p[1]]) == len(full)
    assert {x.config for x in cut} == {x.config for x in full if x.estimate.memory <= limit}


# ---------------------------------------------------------------- coverage
def _draw_types(data, rec):
    from fw.core import dtypes as _dt

    dtype = rec.dtypes[0]
    smp = rec.sample(data.draw, dtype)

    def ty(a):
        if isinstance(a, np.ndarray):
            return T(a.shape, _dt.convert_dtype(a.dtype))
        if isinstance(a, (list, tuple)) and a and all(isinstance(x, np.ndarray) for x in a):
            return [ty(x) for x in a]
        if a is None:
            return None
        return T(np.asarray(a).shape, _dt.convert_dtype(np.asarray(a).dtype))

    return [ty(a) for a in smp.args], dict(smp.attrs)


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_every_op_of_the_table_is_costed_or_listed(data):
    from fw.core.ops import OPS
    from fw.core.testing import load_all, records_for

    load_all()
    cov = auto.coverage()
    assert sorted(cov["formula"] + cov["none"]) == sorted(OPS)
    assert set(cov["none"]) == {"cond", "while"}  # priced through their blocks / listed
    checked, skipped = 0, []
    for name, op in sorted(OPS.items()):
        recs = records_for(name)
        if not recs or name in cov["none"]:
            continue
        types, attrs = _draw_types(data, recs[0])
        if op.canon is not None:
            attrs = op.canon(dict(attrs))
        flat = [t for a in types for t in (a if isinstance(a, list) else [a])]
        try:
            outs = op.infer(*types, **attrs)
        except Exception as e:  # a sample the static infer cannot type (data-dependent)
            skipped.append((name, type(e).__name__))
            continue
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        c = cost_of(name, flat, outs, attrs)
        assert c is not None, name
        assert c.flops >= 0 and c.bytes >= 0 and math.isfinite(c.flops + c.bytes), name
        assert c.kind in ("matmul", "bmm", "conv", "vector", "scatter", "view", "comm"), name
        checked += 1
    assert checked >= 0.9 * (len(OPS) - len(cov["none"])), (checked, skipped)


def test_estimate_lists_ops_without_a_formula():
    from fw.core.ir import building
    from fw.core.ir.control import while_loop

    with building() as b:
        x = b.add_input(T([4], "float32"), "x")
        i = fw.full([], 0, "int64")
        _, y = while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [i, x])
        b.set_outputs(y.sum())
    e = estimate(b.program, None, _cluster())
    assert e.uncovered == {"while": 1}
    assert any("while" in n for n in e.notes) and "no formula for ['while']" in str(e)


# ---------------------------------------------------------------- calibration
def test_calibrate_tiny_budget_writes_a_valid_profile(tmp_path):
    path = str(tmp_path / "prof.json")
    prof = calibrate(path, budget=0.5, collectives=False, dtypes=("float32",))
    with open(path) as f:
        again = json.load(f)
    assert again == json.loads(json.dumps(prof)) and again["format"] == "fw-cost-profile"
    k = again["kernels"]
    for key in ("matmul_flops", "conv_flops", "vector_flops"):
        assert k[key]["float32"] > 1e6
    assert 1e8 < k["mem_bandwidth"] < 1e13 and 0 < k["op_overhead"] < 1e-2
    c = Cluster.this_machine(path)
    assert c.devices_per_node == again["machine"]["cores"] and c.oversubscribe
    e = estimate(_mlp(), ParallelConfig(), c, input_spec=SPEC, loss_fn=_mlp_loss)
    assert e.step_time > 0


def test_profile_errors(tmp_path):
    from fw.distributed.auto import load_profile

    with pytest.raises(FileNotFoundError, match="run fw.distributed.auto.calibrate"):
        load_profile(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="not an fw cost profile"):
        load_profile(str(bad))
    with pytest.raises(ValueError, match="budget must be positive"):
        calibrate(str(tmp_path / "p.json"), budget=0)


@pytest.mark.slow
def test_calibrate_with_collectives(tmp_path):
    prof = calibrate(str(tmp_path / "p.json"), budget=8, dtypes=("float32",), timeout=240)
    fits = prof["collectives"]["fits"]
    assert set(fits) == {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                         "send_recv"}
    assert all(f["beta"] > 0 and f["alpha"] >= 0 for f in fits.values())
    assert prof["contention"]["1"] == 1.0 and prof["contention"]["4"] >= 1.0
    assert set(prof["collectives"]["sync_wait"]) == {"2", "4"}
    assert all(v > 0 for v in prof["collectives"]["sync_chunk"].values())
    assert all(v >= 0 for v in prof["collectives"]["sync_wait"].values())
    assert Cluster.this_machine(str(tmp_path / "p.json")).sync_wait == \
        prof["collectives"]["sync_wait"]
    # the short-chunk waits and DataParallel's cost: 3 nets on 2 and 4 ranks
    col = prof["collectives"]
    assert set(col["sync_wait_short"]) == set(col["sync_chunk_short"]) == {"2", "4"}
    assert all(col["sync_chunk_short"][n] < col["sync_chunk"][n] for n in ("2", "4"))
    for n in ("2", "4"):
        pts = col["dp_sync"][n]
        assert [(b, k) for b, k, _ in pts] == [(4 * (2 * 256 * 512 + 512 + 256), 4),
                                                (4 * (2 * 512 * 1024 + 1024 + 512), 4),
                                                (4 * 12 * (64 * 64 + 64), 24)]
        assert all(t >= 0 for *_, t in pts)
    k = prof["kernels"]
    assert k["bmm_flops"]["float32"] > 1e6 and 1e6 < k["scatter_bandwidth"] < 1e12


# ---------------------------------------------------------------- cluster, strategy
def test_cluster_json_roundtrip_and_errors(tmp_path):
    c = Cluster.v100_dgx(2)
    path = str(tmp_path / "c.json")
    c.to_json(path)
    d = Cluster.from_json(path)
    assert d == c and d.num_devices == 16
    with pytest.raises(ValueError, match="unknown fields"):
        Cluster.from_json('{"device": {}, "gpus": 3}')
    with pytest.raises(ValueError, match="inter-node Link"):
        Cluster(c.device, nodes=2)
    with pytest.raises(ValueError, match="unknown dtype 'fp8'"):
        Device("x", {"fp8": 1.0}, 1.0, 1.0)
    with pytest.raises(ValueError, match="do not fit"):
        c.compute_slowdown(17)


def test_presets_cite_datasheet_peaks():
    a = Cluster.a100_dgx(1).device
    assert a.peak_flops["float16"] == 312e12 and a.memory == 80 * 2 ** 30
    v = Cluster.v100_dgx(1).device
    assert v.peak_flops["float32"] == 15.7e12 and v.mem_bandwidth == pytest.approx(720e9)


def test_strategy_paddle_fields_and_checks():
    s = Strategy()
    # Paddle 3.3.1's defaults (paddle.distributed.Strategy(), checked side by side)
    assert s.auto_mode == "semi" and s.sharding.degree == 8 and s.sharding.stage == 1
    assert s.full_graph is True
    assert s.pipeline.schedule_mode == "1F1B" and s.gradient_merge.avg is True
    assert s.amp.dtype == "float16" and s.amp.level == "o1" and s.recompute.enable is False
    s2 = Strategy({"auto_mode": "full", "sharding": {"enable": True, "stage": 3, "degree": 2}})
    assert s2.sharding.stage == 3 and s2.to_dict()["auto_mode"] == "full"
    with pytest.raises(ValueError, match="auto_mode: invalid value 'half'"):
        Strategy({"auto_mode": "half"})
    with pytest.raises(AttributeError, match="Strategy.sharding has no field 'stages'"):
        s.sharding.stages = 2
    with pytest.raises(ValueError, match="Expected a dictionary. But received"):
        Strategy([1])
    cfg = s2.to_parallel_config(world_size=8, mp_degree=2)
    assert (cfg.dp, cfg.mp, cfg.sharding, cfg.sharding_stage) == (2, 2, 2, 3)
    import fw.distributed as dist

    assert dist.Strategy is Strategy


def test_choose_full_and_semi():
    c = _cluster(n=4)
    s = choose(_mlp(), c, 4, input_spec=SPEC, loss_fn=_mlp_loss, micro_batches=(1,),
               recompute=(False,))
    best = s.search_result[0].config
    assert s.auto_mode == "full" and s.parallel_degrees["dp"] == best.dp
    assert s.to_parallel_config() == best
    assert s.sharding.enable == (best.sharding > 1) and s.pipeline.enable == (best.pp > 1)
    semi = Strategy()
    assert choose(_mlp(), c, 4, strategy=semi, input_spec=SPEC) is semi


# ---------------------------------------------------------------- published figures
def test_resnet50_paddle_table_within_20_percent():
    from fw.distributed.auto.models import resnet50_program

    prog = resnet50_program(batch=256)
    assert sum(v.type.numel() for v in prog.parameters()) == 25557032  # ResNet-50's count
    for gpus, published in ((1, 377.0), (8, 2907.0), (32, 11367.0)):
        c = Cluster.v100_dgx(max(gpus // 8, 1), memory_gb=32)
        if gpus > 8:
            c.inter = Link(0.8 * 12.5e9, 10e-6)
        e = estimate(prog, ParallelConfig(dp=gpus), c, optimizer_states=1)
        assert abs(256 * gpus / e.step_time - published) / published <= 0.2, gpus


@pytest.mark.slow
def test_megatron_1t_within_20_percent():
    from fw.distributed.auto.models import gpt_program

    L, h, a, s, V, B = 128, 25600, 160, 2048, 51200, 3072
    e = estimate(gpt_program(L, h, a, s, V), ParallelConfig(dp=6, mp=8, pp=64,
                 micro_batches=512, recompute=True, amp="float16"), Cluster.a100_dgx(384))
    flops = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))
    assert abs(flops / e.step_time / 1e15 - 502) / 502 <= 0.2
    assert e.memory <= 80 * 2 ** 30


def test_kendall_tau_of_the_validation_script():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
    from validate_cost_model import kendall_tau

    assert kendall_tau([1, 2, 3], [10, 20, 30]) == 1.0
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)


@pytest.mark.slow
def test_validation_script_quick(tmp_path):
    import subprocess

    tool = os.path.join(os.path.dirname(__file__), "..", "tools", "validate_cost_model.py")
    out = tmp_path / "report.md"
    subprocess.run([sys.executable, tool, "--quick", "--no-priority", "--out", str(out)],
                   timeout=900,
                   check=True, capture_output=True)
    text = out.read_text()
    assert "| mlp | single | 1 |" in text and "| gpt | dp2 | 2 |" in text
    assert "Megatron-LM 1T GPT" in text and "Kendall tau" in text


def test_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    for name in ("cluster", "comm", "estimate", "op_cost", "search", "strategy", "models",
                 "calibrate"):
        mod = importlib.import_module(f"fw.distributed.auto.{name}")
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert res.failed == 0 and res.attempted > 0, (name, res)


# ---------------------------------------------------------------- shared CPU cores
def test_oversubscribed_ranks_share_cores_for_compute_and_collectives():
    """4 ranks on 2 cores: compute and every collective take twice as long as on 2
    dedicated devices (MPI's shared-memory copies run on the ranks' cores)."""
    base = _cluster(n=4)
    shared = _cluster(n=2)
    shared.oversubscribe = True
    assert shared.core_sharing(2) == 1.0 and shared.core_sharing(4) == 2.0
    assert shared.compute_slowdown(4) == 2.0
    shared.contention = {"1": 1.0, "2": 1.1, "4": 2.6}    # measured above the sharing: kept
    assert shared.compute_slowdown(4) == pytest.approx(2.6)
    shared.contention = {"1": 1.0, "2": 1.0}               # measured below it: the sharing
    assert shared.compute_slowdown(4) == 2.0
    shared.contention = {}
    with pytest.raises(ValueError, match="do not fit"):
        base.core_sharing(8)
    cfg = ParallelConfig(dp=4)
    e_base = estimate(_mlp(), cfg, base, input_spec=SPEC, loss_fn=_mlp_loss)
    e_shared = estimate(_mlp(), cfg, shared, input_spec=SPEC, loss_fn=_mlp_loss)
    assert e_shared.communication == pytest.approx(2 * e_base.communication)
    assert e_shared.compute == pytest.approx(2 * e_base.compute)


def test_sync_wait_is_charged_per_blocking_collective():
    """dp: one wait per gradient bucket; mp: two per column/row pair (forward and
    backward all-reduce); ZeRO-2: buckets + an owner broadcast and a mask
    all-reduce per rank; pp: a send and a receive per cut and micro-batch + the
    loss broadcast; ZeRO-3: two gathers per layer (weight + bias) + buckets."""
    c = _cluster()
    c.sync_wait = {"2": 1e-3, "4": 5e-3}
    assert c.sync_cost(1) == 0.0 and c.sync_cost(2) == 1e-3 and c.sync_cost(3) == 1e-3
    assert c.sync_cost(4) == 5e-3 and c.sync_cost(8) == 5e-3

    def waits(**kw):
        e = estimate(_mlp(), ParallelConfig(**kw), c, input_spec=SPEC, loss_fn=_mlp_loss)
        return e.comm_detail.get("sync_wait", 0.0)

    assert waits() == 0.0
    assert waits(dp=2) == pytest.approx(1e-3)            # 1 bucket (< 1 MB of gradients)
    assert waits(mp=2) == pytest.approx(2 * 1e-3)        # 1 pair (the last linear is whole)
    assert waits(sharding=2, sharding_stage=2) == pytest.approx((1 + 2 + 2) * 1e-3)
    assert waits(pp=2, micro_batches=4) == pytest.approx((2 * 1 * 4 + 1) * 1e-3)
    assert waits(sharding=2, sharding_stage=3) == pytest.approx((2 * 3 + 1) * 1e-3)
    assert waits(dp=4) == pytest.approx(5e-3)
    # with the calibration's chunk: independent delays, sqrt(n * compute / chunk) waits
    c.sync_chunk = {"2": 0.01, "4": 0.01}
    assert c.sync_cost(2, 4, 0.01) == pytest.approx(1e-3 * 2.0)
    assert c.sync_cost(2, 1, 0.04) == pytest.approx(1e-3 * 2.0)
    e = estimate(_mlp(), ParallelConfig(mp=2), c, input_spec=SPEC, loss_fn=_mlp_loss)
    n = 2
    want = 1e-3 * math.sqrt(n * (e.compute - e.optimizer - e.accumulate) / 0.01)
    assert e.comm_detail["sync_wait"] == pytest.approx(want)


def test_zero3_gathers_twice_and_recomputes_the_forward():
    c = _cluster()
    z1 = estimate(_mlp(), ParallelConfig(sharding=2, sharding_stage=1), c, input_spec=SPEC,
                  loss_fn=_mlp_loss)
    z3 = estimate(_mlp(), ParallelConfig(sharding=2, sharding_stage=3), c, input_spec=SPEC,
                  loss_fn=_mlp_loss)
    one = sum(collective_time(c, "all_gather", r.type.numel() * 4, 2)
              for r in trace_step(_mlp(), [([32, 64], "float32"), ([32], "int64")],
                                  _mlp_loss).params)
    assert z3.comm_detail["zero3_param_all_gather"] == pytest.approx(2 * one)
    assert "zero3_param_all_gather" not in z1.comm_detail
    rc = estimate(_mlp(), ParallelConfig(sharding=2, sharding_stage=1, recompute=True), c,
                  input_spec=SPEC, loss_fn=_mlp_loss)
    # the forward runs twice, as with recompute (stage 1 + recompute has the same compute
    # minus stage 1's flatten/copy passes, which stage 3 does not have)
    assert z3.compute == pytest.approx(rc.compute - (rc.optimizer - z3.optimizer), rel=1e-9)


def test_pipeline_sends_block_every_micro_batch_without_overlap():
    spec = [([64, 64], "float32"), ([64], "int64")]
    blocking = estimate(_mlp(), ParallelConfig(pp=2, micro_batches=4), _cluster(overlap=0.0),
                        input_spec=spec, loss_fn=_mlp_loss)
    hidden = estimate(_mlp(), ParallelConfig(pp=2, micro_batches=4), _cluster(overlap=1.0),
                      input_spec=spec, loss_fn=_mlp_loss)
    assert blocking.comm_detail["pp_p2p"] == pytest.approx(4 * hidden.comm_detail["pp_p2p"])
    # micro-batches accumulate gradients: (m - 1) read-modify-write passes
    assert blocking.accumulate > 0 and hidden.accumulate == blocking.accumulate
