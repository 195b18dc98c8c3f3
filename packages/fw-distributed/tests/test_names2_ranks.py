"""The Paddle 3.3 names added by names2 on 2 CPU ranks (comm_scripts/names2_check.py):
object p2p, wait, group shutdown/restart, the gloo barrier, split against dense
NumPy, InMemoryDataset.global_shuffle, and flex checkpoints across a change of world
size (2 ranks write, one process merges; one process writes, 2 ranks load halves)."""
import os
import sys

import numpy as np

import fw
import fw.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comm_testutil import explain, rank_lines, run_mpi  # noqa: E402


def test_names2_on_two_ranks(tmp_path):
    one = str(tmp_path / "one_proc")
    dist.save_state_dict({"w2": fw.to_tensor(np.arange(24, dtype=np.float32).reshape(6, 4) * 2)},
                         one)
    two = str(tmp_path / "two_ranks")
    p = run_mpi("names2_check.py", 2, two, one, timeout=240)
    assert p.returncode == 0, explain(p)
    got = rank_lines(p.reports, "NAMES2")
    assert got == {0: "ok 7", 1: "ok 7"}, explain(p)
    # the 2-rank checkpoint, merged in this one process (world size 2 -> 1)
    merged = dist.load_merged_state_dict(two)
    np.testing.assert_array_equal(merged["m.w"].numpy(),
                                  np.arange(24, dtype=np.float32).reshape(4, 6))
    assert sorted(merged) == ["m.b", "m.w"] and merged["m.b"].shape == [6]
    # and loaded into a different split here: the middle two columns
    box = fw.zeros([4, 2])
    dist.load_state_dict({"m.w": dist.ShardedWeight("m.w", box, (4, 2), (4, 6), (0, 2))}, two)
    want = np.arange(24, dtype=np.float32).reshape(4, 6)[:, 2:4]
    np.testing.assert_array_equal(box.numpy(), want)
