"""Sharded checkpoints: the box arithmetic, the index format, and re-sharding (a
tensor-parallel checkpoint written on 2 ranks loads into the dense model in one
process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.distributed.checkpoint import (
    CheckpointIndexError,
    ShardedWeight,
    copy_overlap,
    intersect,
    load_state_dict,
    save_state_dict,
)

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


def test_intersect_and_copy_overlap():
    assert intersect([0, 0], [4, 3], [0, 3], [4, 3]) is None
    assert intersect([0, 0], [4, 4], [2, 3], [4, 3]) == ([2, 3], [2, 1])
    g = np.arange(24.0).reshape(4, 6)
    dst = np.zeros((2, 6))
    n = copy_overlap(dst, [1, 0], g[:, 3:], [0, 3]) + copy_overlap(dst, [1, 0], g[:, :3], [0, 0])
    assert n == 12
    np.testing.assert_array_equal(dst, g[1:3])


def test_save_load_single_process_and_boxes(tmp_path):
    fw.seed(0)
    m = nn.Linear(4, 6)
    save_state_dict(m.state_dict(), str(tmp_path))
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["format"] == "fw-dist-ckpt/1" and index["world_size"] == 1
    assert index["tensors"]["weight"]["global_shape"] == [4, 6]
    m2 = nn.Linear(4, 6)
    load_state_dict(m2.state_dict(), str(tmp_path))
    np.testing.assert_array_equal(m2.weight.numpy(), m.weight.numpy())
    # load a box of the saved tensor (re-sharding into a column split of 3)
    part = np.zeros((4, 2), "float32")
    load_state_dict({"weight": ShardedWeight(part, [4, 6], [0, 2])}, str(tmp_path))
    np.testing.assert_array_equal(part, m.weight.numpy()[:, 2:4])


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(CheckpointIndexError, match="index.json does not exist"):
        load_state_dict({}, str(tmp_path))
    fw.seed(0)
    m = nn.Linear(2, 3)
    save_state_dict(m.state_dict(), str(tmp_path))
    with pytest.raises(CheckpointIndexError, match="'nope' is not in the checkpoint"):
        load_state_dict({"nope": np.zeros(2)}, str(tmp_path))
    with pytest.raises(ValueError, match="global shape \\[2, 3\\] in the checkpoint"):
        load_state_dict({"weight": np.zeros((3, 3), "float32")}, str(tmp_path))
    with pytest.raises(ValueError, match="does not fit in"):
        ShardedWeight(np.zeros((2, 2)), [3, 3], [2, 0])
    (tmp_path / "index.json").write_text("{not json")
    with pytest.raises(CheckpointIndexError, match="not valid JSON"):
        load_state_dict({}, str(tmp_path))


def test_two_rank_tensor_parallel_checkpoint_loads_dense(tmp_path):
    if not os.path.exists(MPIEXEC):
        pytest.skip("mpiexec (the mpich wheel) is not installed beside this Python")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for k in ("PMI_SIZE", "PMI_RANK", "PMI_FD", "PADDLE_TRAINERS_NUM", "WORLD_SIZE"):
        env.pop(k, None)
    ck = tmp_path / "ck"
    p = subprocess.run([MPIEXEC, "-n", "2", sys.executable,
                        os.path.join(HERE, "_fleet_worker.py"), "checkpoint", str(ck)],
                       capture_output=True, text=True, timeout=180, env=env)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    w = [np.load(tmp_path / f"rank{r}_weights.npy") for r in range(2)]
    # rank r's flat parameters: col weight [4,3], col bias [3], row weight [3,2], row bias [2]
    parts = [np.split(x, np.cumsum([12, 3, 6])) for x in w]
    dense = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    load_state_dict(dense.state_dict(), str(ck))
    np.testing.assert_array_equal(
        dense[0].weight.numpy(),
        np.concatenate([parts[r][0].reshape(4, 3) for r in range(2)], axis=1))
    np.testing.assert_array_equal(dense[0].bias.numpy(),
                                  np.concatenate([parts[r][1] for r in range(2)]))
    np.testing.assert_array_equal(
        dense[2].weight.numpy(),
        np.concatenate([parts[r][2].reshape(3, 2) for r in range(2)], axis=0))
    np.testing.assert_array_equal(dense[2].bias.numpy(), parts[0][3])
    # tensors only one rank held were written by that rank
    only = {f"opt.only_rank{r}": np.zeros(3, "float32") for r in range(2)}
    load_state_dict(only, str(ck))
    np.testing.assert_array_equal(only["opt.only_rank1"], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(only["opt.only_rank0"], [1.0, 1.0, 1.0])
