"""fw.distributed.auto: the per-kernel pricing of attention and scatter-adds, batched
matmuls, and the calibrated DataParallel and sync-wait models — each against a value
computed by hand."""

from __future__ import annotations

import pytest

import fw
import fw.nn as nn
from fw.core.ir import TensorType
from fw.distributed.auto import Cluster, Device, Link, ParallelConfig, cost_of, estimate
from fw.distributed.auto.cluster import dp_fit, wait_line
from fw.distributed.auto.estimate import _op_time

T = TensorType
MM, BMM, VEC, BW, SC = 1e11, 2e10, 1e9, 1e10, 5e8


def _dev(**kw):
    return Device("d", {"float32": MM}, mem_bandwidth=BW, memory=1e9, op_overhead=1e-5,
                  vector_flops={"float32": VEC}, bmm_flops={"float32": BMM},
                  scatter_bandwidth=SC, **kw)


def test_attention_priced_kernel_by_kernel():
    # B=2, T=16, H=4, D=8, causal: n = 2*4*16*16 = 2048 scores of 4 bytes
    q = T([2, 16, 4, 8], "float32")
    c = cost_of("scaled_dot_product_attention", [q, q, q, None], [q], {"is_causal": True})
    n, sb, qb = 2048, 8192, 4096                  # scores, score bytes, one of q/k/v bytes
    want = [(0, 2 * 3 * qb, "vector"),             # heads split: q, k, v copied
            (2 * n * 8, 2 * qb + sb, "bmm"),       # q k^T
            (n, 2 * sb, "vector"),                 # * scale
            (n, 2 * sb + 2 * 16 * 16, "vector"),   # causal triangle + where
            (12 * n, 7 * sb, "vector"),            # softmax: 7 passes, 8 + 4 FLOPs
            (2 * n * 8, sb + qb + qb, "bmm"),      # p v
            (0, 2 * qb, "vector")]                 # heads merged
    assert [(p.flops, p.bytes, p.kind) for p in c.parts] == want
    dev = _dev()
    by_hand = 1e-5 + sum(max(f / (BMM if k == "bmm" else VEC), b / BW) for f, b, k in want)
    assert _op_time(c, dev, None, 1.0) == pytest.approx(by_hand)
    # one roofline over the summed work would be far cheaper: the parts matter
    assert by_hand > 1e-5 + max(c.flops / BMM, c.bytes / BW) * 1.5


def test_index_add_is_a_copy_then_a_scatter():
    x, idx, val = T([64, 128], "float32"), T([1024], "int64"), T([1024, 128], "float32")
    c = cost_of("index_add", [x, idx, val], [x], {"axis": 0})
    assert [(p.bytes, p.kind) for p in c.parts] == [(2 * 64 * 128 * 4, "vector"),
                                                   (1024 * 128 * 4 + 1024 * 8, "scatter")]
    t = _op_time(c, _dev(), None, 1.0)
    assert t == pytest.approx(1e-5 + 2 * 64 * 128 * 4 / BW + (1024 * 128 * 4 + 8192) / SC)


def test_batched_matmul_kind_and_rate():
    a, b = T([64, 64, 32], "float32"), T([64, 32, 64], "float32")
    c = cost_of("matmul", [a, b], [T([64, 64, 64], "float32")], {})
    assert c.kind == "bmm" and c.flops == 2 * 64 * 64 * 32 * 64
    assert _op_time(c, _dev(), None, 1.0) == pytest.approx(1e-5 + c.flops / BMM)
    # a batched activation times a weight matrix is one GEMM over the rows
    w = cost_of("matmul", [a, T([32, 16], "float32")], [T([64, 64, 16], "float32")], {})
    assert w.kind == "matmul"
    # without a calibrated batched rate, the matmul rate is used
    plain = Device("d", {"float32": MM}, mem_bandwidth=BW, memory=1e9)
    assert plain.rate("bmm", "float32") == MM


def test_wait_line_through_two_points():
    # short: 2 ms of work, 3 ms wait; long: 20 ms of work, 4.8 ms wait
    w0, w1 = wait_line(0.002, 0.003, 0.020, 0.0048)
    assert (w0, w1) == pytest.approx((0.0028, 0.1))
    assert wait_line(0.002, 0.005, 0.020, 0.004) == pytest.approx((0.0045, 0.0))  # flat mean
    assert wait_line(0.002, 0.0001, 0.020, 0.004) == pytest.approx((0.0, 0.2))   # through 0


def test_sync_cost_uses_the_line_per_collective():
    c = Cluster(_dev(), devices_per_node=2, intra=Link(1e9, 1e-5), comm_overlap=0.0,
                sync_wait={"2": 0.0048}, sync_chunk={"2": 0.020},
                sync_wait_short={"2": 0.003}, sync_chunk_short={"2": 0.002})
    # 5 collectives over 30 ms of compute: 5 * 2.8 ms + 0.1 * 30 ms
    assert c.sync_cost(2, 5, 0.030) == pytest.approx(5 * 0.0028 + 0.1 * 0.030)
    assert c.sync_cost(1, 5, 0.030) == 0.0


def test_dp_fit_and_estimate_use_calibrated_data_parallel():
    pts = [[1e6, 4, 0.0031], [4e6, 4, 0.0061], [4e5, 24, 0.0045]]
    # t = 1.7 ms + 1 ns per byte + 0.1 ms per tensor passes through all three
    assert dp_fit(pts) == pytest.approx((0.0017, 1e-9, 1e-4))
    # a negative coefficient is dropped and the rest refitted
    a, b, c = dp_fit([[1e6, 4, 0.004], [4e6, 4, 0.001], [2e6, 8, 0.003]])
    assert a >= 0 and b == 0.0 and c >= 0
    cl = Cluster(_dev(), devices_per_node=2, intra=Link(1e9, 1e-5), comm_overlap=0.0,
                 dp_sync={"2": pts})
    fw.seed(0)
    mlp = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    grad = 4 * (64 * 128 + 128 + 128 * 10 + 10)
    e = estimate(mlp, ParallelConfig(dp=2), cl, input_spec=[([32, 64], "float32")])
    assert e.comm_detail["dp_sync"] == pytest.approx(0.0017 + 1e-9 * grad + 1e-4 * 4)
    assert "dp_grad_all_reduce" not in e.comm_detail
    # ZeRO-1 reduces through DataParallel as well
    z = estimate(mlp, ParallelConfig(sharding=2), cl, input_spec=[([32, 64], "float32")])
    assert z.comm_detail["zero_grad_all_reduce"] == pytest.approx(e.comm_detail["dp_sync"])
    # uncalibrated: the bucketed all-reduce model
    cl.dp_sync = {}
    e2 = estimate(mlp, ParallelConfig(dp=2), cl, input_spec=[([32, 64], "float32")])
    assert "dp_sync" not in e2.comm_detail and e2.comm_detail["dp_grad_all_reduce"] > 0


def test_fused_softmax_device_reads_the_scores_once():
    q = T([2, 16, 4, 8], "float32")
    c = cost_of("scaled_dot_product_attention", [q, q, q, None], [q], {"is_causal": True})
    n, sb, qb = 2048, 8192, 4096
    dev = _dev(fused_softmax=True)
    # head copies, q k^T, one fused pass (1 + 1 + 12 FLOPs per score, scores read and
    # written once), p v, heads merged
    want = (max(0, 6 * qb / BW) + max(2 * n * 8 / BMM, (2 * qb + sb) / BW)
            + max(14 * n / VEC, 2 * sb / BW) + max(2 * n * 8 / BMM, (sb + 2 * qb) / BW)
            + 2 * qb / BW)
    assert _op_time(c, dev, None, 1.0) == pytest.approx(1e-5 + want)
    # memory-bound passes (a fast vector unit): scale (2), causal select (2 + the
    # triangle's bytes) and softmax (7) passes over the scores become 2
    fast = {"mem_bandwidth": BW, "memory": 1e9, "vector_flops": {"float32": 1e15}}
    unfused = _op_time(c, Device("u", {"float32": MM}, **fast), None, 1.0)
    fused = _op_time(c, Device("f", {"float32": MM}, fused_softmax=True, **fast), None, 1.0)
    assert unfused - fused == pytest.approx(((11 - 2) * sb + 2 * 16 * 16) / BW)
    assert Cluster.a100_dgx().device.fused_softmax and not _dev().fused_softmax


def test_dp_group_smaller_than_world_is_slowed_by_core_sharing():
    # 2 cores, 4 ranks (dp2 x mp2): the 2-rank DataParallel cost, x2 for the sharing
    pts2 = [[1e6, 4, 0.0031], [4e6, 4, 0.0061], [4e5, 24, 0.0045]]
    pts4 = [[1e6, 4, 0.0300], [4e6, 4, 0.0600], [4e5, 24, 0.0450]]
    cl = Cluster(_dev(), devices_per_node=2, intra=Link(1e9, 1e-5), comm_overlap=0.0,
                 oversubscribe=True, dp_sync={"2": pts2, "4": pts4})
    fw.seed(0)
    mlp = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    e = estimate(mlp, ParallelConfig(dp=2, mp=2), cl, input_spec=[([32, 64], "float32")])
    # the column/row pair's parameters (weights and biases) count 1/mp per rank
    grad = 4 * (64 * 128 / 2 + 128 / 2 + 128 * 10 / 2 + 10 / 2)
    assert e.comm_detail["dp_sync"] == pytest.approx(2 * (0.0017 + 1e-9 * grad + 1e-4 * 4))
    # dp over all 4 ranks: the 4-rank points as measured (already oversubscribed)
    e4 = estimate(mlp, ParallelConfig(dp=4), cl, input_spec=[([32, 64], "float32")])
    a, b, c = dp_fit(pts4)
    assert e4.comm_detail["dp_sync"] == pytest.approx(a + b * 4 * (64 * 128 + 128 + 1290) + c * 4)
