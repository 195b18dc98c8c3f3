"""Distributed training == single-process training, on 2 and 4 CPU ranks
(``mpiexec``, the mpich wheel's hydra): DP, ZeRO 1/2/3, tensor parallel, pipeline
parallel, hybrid dp2 x mp2, recompute and gradient merge. The cases are in
tests/_dist_workers.py; each rank compares its parameters after k Adam steps with
the dense model trained on the full batch (fp32 tolerance 2e-5) and exits non-zero
on a mismatch."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")
pytest.importorskip("fw.distributed")

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


def run_ranks(n, *cases, timeout=240):
    if not os.path.exists(MPIEXEC):
        pytest.skip("mpiexec (the mpich wheel) is not installed beside this Python")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for k in ("PMI_SIZE", "PMI_RANK", "PMI_FD", "PADDLE_TRAINERS_NUM", "WORLD_SIZE"):
        env.pop(k, None)
    try:
        p = subprocess.run([MPIEXEC, "-n", str(n), sys.executable,
                            os.path.join(HERE, "_dist_workers.py"), *cases],
                           capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{n} ranks running {cases} did not finish in {timeout} s:\n"
                             f"{e.stdout}\n{e.stderr}") from None
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    for c in cases:
        for r in range(n):
            assert f"OK {c} rank {r}" in out, out[-4000:]


def test_dp_zero_recompute_on_2_ranks():
    run_ranks(2, "dp", "recompute", "zero", "zero3_tied", "zero3_memory", "zero3_buckets")


def test_fleet_sharding_stages_1_2_equal_dense():
    run_ranks(2, "fleet_sharding")


def test_tensor_parallel_mp2_equals_dense():
    run_ranks(2, "tp")


def test_pipeline_pp2_4_microbatches_equals_dense():
    run_ranks(2, "pp")


def test_gradient_merge_k4_equals_batch_x4():
    run_ranks(2, "gradient_merge")


# 4 oversubscribed ranks on the 2-core CI machine: this once passed every case and
# then did not exit within 240 s. The cause was the exit rendezvous: under plain
# mpiexec rank 0 hosts the job's store, MPI_Finalize holds the GIL (freezing the
# store's thread), and ranks still polling the store blocked for the client's 30 s
# margin. Fixed in fw.distributed's exit rendezvous (the store host finalizes last;
# packages/fw-distributed/tests/test_exit.py); 24 runs in a row at load 15-21 took
# 5-7 s each (34-35 s before the fix).
def test_hybrid_dp2_mp2_pp2_dp2_pp2_mp2_on_4_ranks_equal_dense():
    run_ranks(4, "hybrid", "pp_dp", "pp_mp")


def test_distributed_gpt_example_under_the_launcher_on_2_ranks(tmp_path):
    """examples/distributed_gpt.py under ``python -m fw.distributed.launch
    --nproc_per_node 2``: the loss falls and the replicas end with identical
    parameters (rank 0's output is streamed, every rank's is in its log file)."""
    import re

    env = dict(os.environ, OMP_NUM_THREADS="1")
    for k in ("PMI_SIZE", "PMI_RANK", "PMI_FD", "PADDLE_TRAINERS_NUM", "WORLD_SIZE"):
        env.pop(k, None)
    ex = os.path.join(os.path.dirname(HERE), "examples", "distributed_gpt.py")
    logs = tmp_path / "log"
    p = subprocess.run([sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", "2",
                        "--log_dir", str(logs), "--timeout", "240", ex, "--quick"],
                       capture_output=True, text=True, timeout=300, env=env)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    a, b = map(float, re.search(r"loss ([\d.]+) -> ([\d.]+) over", out).groups())
    assert b < a - 0.7, out  # ~3.5 -> ~2.4
    sums = {}
    for r in range(2):
        text = (logs / f"workerlog.{r}").read_text()
        sums[r] = re.search(rf"rank {r} parameter checksum ([\d.]+)", text).group(1)
    assert sums[0] == sums[1], sums
