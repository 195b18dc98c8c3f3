"""No hang, ever: a rank that does not arrive, collectives out of step, a p2p
shape mismatch and a killed rank each become an error naming the ranks and ops
(comm_scripts/failures_check.py on 2 ranks), within timeout + 10 s, and the
processes exit."""
import os
import re
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comm_testutil import clean_env, explain, rank_lines, run_launcher, run_mpi  # noqa: E402,I001


def _results(p):
    out = {}
    for r, text in rank_lines(p.reports, "RESULT").items():
        head, msg = text.split(" | ", 1)
        secs, typ, missing = head.split()
        out[r] = (float(secs), typ, missing, msg.replace("\\n", "\n"))
    return out


def test_a_rank_that_does_not_arrive_is_named_within_the_timeout(tmp_path):
    timeout = 3.0
    t0 = time.monotonic()
    p = run_mpi("failures_check.py", 2, "sleep", timeout, timeout=90,
                env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    wall = time.monotonic() - t0
    res = _results(p)
    assert 0 in res, explain(p)
    secs, typ, missing, msg = res[0]
    assert typ == "CollectiveTimeoutError" and missing == "1", explain(p)
    assert timeout - 0.5 <= secs <= timeout + 10, secs
    assert "rank 1 did not arrive" in msg, msg
    # the last op each rank entered: rank 1 is still at the barrier before
    assert re.search(r"rank 1: did not arrive; its last op in group 0 is barrier #2", msg), msg
    assert "rank 0 (this rank): all_reduce #3 in group 0 (float32[4])" in msg, msg
    # the flight recorder was dumped where asked, as JSON
    dump = re.search(r"flight recorder: (\S+\.json)", msg).group(1)
    assert dump.startswith(str(tmp_path)) and os.path.exists(dump)
    # later ops fail at once (the MPI state is unusable), and the job ends: no hang at exit
    assert rank_lines(p.reports, "AFTER")[0].split()[1] == "CommunicatorBrokenError"
    assert p.returncode != 0 and wall < 60, (p.returncode, wall)


def test_dataparallel_shared_memory_buckets_name_the_missing_rank(tmp_path):
    """The shared-memory bucket path (DataParallel's default on one node) waits with
    the group's deadline and names the rank that never published its gradients."""
    timeout = 3.0
    p = run_mpi("failures_check.py", 2, "dp_shm_sleep", timeout, timeout=90,
                env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    res = _results(p)
    assert 0 in res, explain(p)
    secs, typ, missing, msg = res[0]
    assert typ == "CollectiveTimeoutError" and missing == "1", explain(p)
    assert timeout - 0.5 <= secs <= timeout + 10, secs
    assert "rank 1 did not arrive" in msg and "via=shared memory" in msg, msg


def test_dataparallel_shared_memory_buckets_report_a_desync(tmp_path):
    """A peer that ran one op more on the group is reported as out of step at once,
    naming both sequence numbers, instead of its bucket being read."""
    p = run_mpi("failures_check.py", 2, "dp_shm_desync", 3.0, timeout=90,
                env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    res = _results(p)
    assert 0 in res, explain(p)
    secs, typ, missing, msg = res[0]
    assert typ == "CollectiveDesyncError" and secs < 3.0, explain(p)
    assert re.search(r"this rank is at op #(\d+), group rank 1 published op #(\d+)", msg), msg
    a, b = map(int, re.search(r"op #(\d+), group rank 1 published op #(\d+)", msg).groups())
    assert b == a + 1, msg


def test_a_rank_without_heartbeat_is_reported(tmp_path):
    p = run_mpi("failures_check.py", 2, "stale", 6, timeout=90,
                env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    res = _results(p)
    assert 0 in res, explain(p)
    secs, typ, missing, msg = res[0]
    assert typ == "CollectiveTimeoutError" and missing == "1", explain(p)
    assert re.search(r"rank 1: did not arrive; .* — no heartbeat for \d+\.\d s \(dead, or "
                     r"stuck without releasing the GIL\)", msg), msg


@pytest.mark.parametrize("mode,ranks_msg", [
    ("shape", "rank 0 called all_reduce(float32[4], op=SUM) #3 but rank 1 called "
              "all_reduce(float32[5], op=SUM) #3"),
    ("order", "rank 0 called all_reduce(float32[4], op=SUM) #3 but rank 1 called "
              "broadcast(float32[4], root=0) #3"),
])
def test_collectives_out_of_step_name_both_sides(mode, ranks_msg, tmp_path):
    p = run_mpi("failures_check.py", 2, mode, 30, timeout=90,
                env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    res = _results(p)
    assert sorted(res) == [0, 1], explain(p)
    for r in (0, 1):
        secs, typ, _, msg = res[r]
        assert typ == "CollectiveDesyncError", explain(p)
        assert ranks_msg in msg, msg
        assert secs < 10, secs      # detected at once, not by the 30 s timeout


def test_a_recv_without_its_send_names_the_peer(tmp_path):
    p = run_mpi("failures_check.py", 2, "p2p_timeout", 2, timeout=90,
                env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    res = _results(p)
    assert 0 in res, explain(p)
    secs, typ, missing, msg = res[0]
    assert typ == "CollectiveTimeoutError" and missing == "1", explain(p)
    assert 1.5 <= secs <= 12, secs
    assert ("timed out after 2 s in recv #1 in group 0 (float32[2]) src=1 [timed out]: "
            "rank 1 did not post the matching send") in msg, msg
    assert "rank 1: its last op in group 0 is barrier #2" in msg, msg


def test_p2p_shape_mismatch_names_both_sides(tmp_path):
    p = run_mpi("failures_check.py", 2, "p2p_shape", 30, timeout=90,
                env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path))
    res = _results(p)
    assert 1 in res, explain(p)
    secs, typ, _, msg = res[1]
    assert typ == "CollectiveDesyncError", explain(p)
    assert "rank 0 called send(float32[4]) #1 but rank 1 called recv(float32[3]) #1" in msg, msg


@pytest.mark.parametrize("mode", ["kill_reported", "kill_silent"])
def test_a_killed_rank_is_named(mode, tmp_path):
    """Under the fw launcher, rank 1 is SIGKILLed in the middle of an all-reduce of
    16 MB: rank 0 names it. kill_reported: the script writes the launcher's
    ``dead`` key itself first, so the error comes at once; kill_silent: the
    launcher's own key (written when it sees the death) does it."""
    timeout = 30.0
    t0 = time.monotonic()
    p = run_launcher("failures_check.py", 2, mode, timeout, timeout=120,
                     env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path),
                     launcher_args=("--grace", "20"))
    wall = time.monotonic() - t0
    res = _results(p)
    assert 0 in res, explain(p)
    secs, typ, missing, msg = res[0]
    assert typ == "CollectiveTimeoutError" and missing == "1", explain(p)
    assert "rank 1 died (signal SIGKILL)" in msg, msg
    assert secs < 10, secs          # from the dead key, long before the 30 s timeout
    assert wall < 100, wall


@pytest.mark.parametrize("mode", ["raise", "exit"])
def test_a_rank_that_exits_early_is_named_at_once(mode, tmp_path):
    """Rank 1 raises (or calls sys.exit(2)) before a collective rank 0 is waiting in:
    rank 1 must exit instead of waiting for rank 0 in MPI_Finalize (an uncaught
    exception skips it; at a plain exit the store rendezvous sees rank 0 blocked),
    and rank 0 must name it from the launcher's ``dead`` key, long before the 30 s
    timeout."""
    t0 = time.monotonic()
    p = run_launcher("failures_check.py", 2, mode, 30.0, timeout=120,
                     env=clean_env(FW_FLIGHT_RECORDER_DIR=tmp_path),
                     launcher_args=("--grace", "20"))
    wall = time.monotonic() - t0
    res = _results(p)
    assert 0 in res, explain(p)
    secs, typ, missing, msg = res[0]
    assert typ == "CollectiveTimeoutError" and missing == "1", explain(p)
    assert "rank 1 died (exit code 1)" in msg, msg
    assert secs < 15, secs
    assert p.returncode != 0 and wall < 100, (p.returncode, wall)
