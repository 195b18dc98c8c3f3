"""The per-rank flight recorder: a ring buffer of the last N ops with op, shapes,
dtypes, group and sequence number, dumped as JSON on demand, on SIGUSR1, and on
a timeout or desync (those dumps are checked in test_timeouts.py)."""
import json
import os
import signal
import subprocess
import sys

import pytest

import fw
import fw.distributed as dist
from fw.distributed import _flight_recorder as fr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comm_testutil import clean_env  # noqa: E402


def test_ring_buffer_keeps_the_last_n(tmp_path):
    r = fr.FlightRecorder(size=3)
    for i in range(5):
        r.record(0, i + 1, "all_reduce", [(4, i)], ["float32"], {"op": "SUM"})
    assert r.count == 5 and [e.seq for e in r.entries] == [3, 4, 5]
    assert r.last.describe() == "all_reduce #5 in group 0 (float32[4, 4]) op=SUM [issued]"
    path = r.dump("test", str(tmp_path / "d.json"))
    with open(path) as f:
        doc = json.load(f)
    assert doc["reason"] == "test" and doc["entries_recorded"] == 5
    assert [e["seq"] for e in doc["entries"]] == [3, 4, 5]
    assert doc["entries"][0] | {"t_issue": 0} == {
        "id": 2, "group": 0, "seq": 3, "op": "all_reduce", "shapes": [[4, 2]],
        "dtypes": ["float32"], "extra": {"op": "SUM"}, "t_issue": 0, "t_end": None,
        "state": "issued"}
    off = fr.FlightRecorder(size=0)
    off.record(0, 1, "barrier", [], [], {})
    assert off.count == 1 and len(off.entries) == 0
    with pytest.raises(ValueError, match="FW_FLIGHT_RECORDER_SIZE must be >= 0"):
        fr.FlightRecorder(size=-1)


def test_ops_are_recorded_with_their_state():
    dist.destroy_process_group()
    try:
        g = dist.new_group([0])
        n0 = fr.recorder.count
        dist.all_reduce(fw.ones([2, 3]), op=dist.ReduceOp.MAX, group=g)
        task = dist.broadcast(fw.zeros([5], "int64"), src=0, sync_op=False)
        task.wait()
        assert fr.recorder.count == n0 + 2
        a, b = list(fr.recorder.entries)[-2:]
        assert (a.op, a.group, a.seq, a.shapes, a.dtypes, a.extra, a.state) == (
            "all_reduce", g.id, 1, [(2, 3)], ["float32"], {"op": "MAX"}, "completed")
        assert (b.op, b.group, b.shapes, b.dtypes, b.extra, b.state) == (
            "broadcast", 0, [(5,)], ["int64"], {"src": 0}, "completed")
        assert b.t_end >= b.t_issue
    finally:
        dist.destroy_process_group()


_SIGUSR1_SCRIPT = """
import os, signal, time
import fw, fw.distributed as dist
dist.init_parallel_env()
for _ in range(3):
    dist.all_reduce(fw.ones([7]))
dist.all_gather([], fw.ones([2], "int32"))
os.kill(os.getpid(), signal.SIGUSR1)
time.sleep(0.2)
print("done", flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="no SIGUSR1 on this platform")
def test_sigusr1_dumps_the_recorder(tmp_path):
    p = subprocess.run([sys.executable, "-c", _SIGUSR1_SCRIPT], capture_output=True, text=True,
                       timeout=120, env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    assert p.returncode == 0 and "done" in p.stdout, p.stderr
    assert "flight recorder dumped to" in p.stderr and "(last op: all_gather" in p.stderr
    (dump,) = list(tmp_path.glob("fw_flight_recorder_*_rank0_*.json"))
    doc = json.loads(dump.read_text())
    assert doc["reason"] == "SIGUSR1" and doc["rank"] == 0
    assert [e["op"] for e in doc["entries"]] == ["all_reduce"] * 3 + ["all_gather"]
    assert doc["entries"][-1]["shapes"] == [[2]] and doc["entries"][-1]["dtypes"] == ["int32"]


def test_a_program_handler_for_sigusr1_is_kept():
    prev = signal.getsignal(signal.SIGUSR1)

    def mine(signum, frame):
        pass

    signal.signal(signal.SIGUSR1, mine)
    try:
        assert fr.install_sigusr1() is False
        assert signal.getsignal(signal.SIGUSR1) is mine
    finally:
        signal.signal(signal.SIGUSR1, prev)
