"""Two launchers as two "nodes" on the loopback interface (--nnodes 2 --master
--rank): one COMM_WORLD across them through the store-backed PMI exchange, a rank
death on one node stops the other, a node that never comes is named. The same
over two network namespaces is tests/test_dist_multinode.py."""

import json
import signal
import socket
import subprocess
import sys
import time

import pytest

from fw.distributed.launch.env import clean_environ

TIMEOUT = 120


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(node, port, script, args, cwd, extra=(), nproc=2, env=None):
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nnodes", "2", "--rank", str(node),
           "--master", f"127.0.0.1:{port}", "--nproc_per_node", str(nproc), "--log_dir",
           f"log{node}", "--rendezvous_timeout", "60", *extra, script, *args]
    full = clean_environ()
    full.update(env or {})
    return subprocess.Popen(cmd, cwd=cwd, env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(procs):
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=TIMEOUT))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    return outs


SCRIPT = r"""
import json, os, sys
import numpy as np
from mpi4py import MPI
c = MPI.COMM_WORLD
r = c.Get_rank()
x = np.full(1000, r + 1.0)
y = np.empty_like(x)
c.Allreduce(x, y)
shm = c.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "PADDLE_TRAINER_ENDPOINTS", "FW_JOB_ID",
        "FW_STORE_ENDPOINT", "MASTER_ADDR", "MASTER_PORT", "PADDLE_CURRENT_ENDPOINT"]
with open(os.path.join(sys.argv[1], f"r{r}.json"), "w") as f:
    json.dump({"rank": r, "size": c.Get_size(), "sum": float(y[0]),
               "all_equal": bool((y == y[0]).all()), "shm": shm,
               "env": {k: os.environ.get(k) for k in keys}}, f)
print("done", r, flush=True)
"""


def test_two_nodes_two_ranks_each_allreduce(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(SCRIPT)
    port = free_port()
    procs = [start(n, port, str(script), [str(tmp_path)], tmp_path) for n in (1, 0)]
    outs = finish(procs)
    assert [p.returncode for p in procs] == [0, 0], outs
    rows = [json.loads((tmp_path / f"r{r}.json").read_text()) for r in range(4)]
    assert [(d["rank"], d["size"], d["sum"], d["all_equal"]) for d in rows] == \
        [(r, 4, 10.0, True) for r in range(4)]
    # PMI_process_mapping made MPICH see 2 nodes of 2 ranks
    assert [d["shm"] for d in rows] == [2, 2, 2, 2]
    envs = [d["env"] for d in rows]
    assert [e["LOCAL_RANK"] for e in envs] == ["0", "1", "0", "1"]
    assert len({e["FW_JOB_ID"] for e in envs}) == 1
    assert {e["FW_STORE_ENDPOINT"] for e in envs} == {f"127.0.0.1:{port}"}
    assert {f"{e['MASTER_ADDR']}:{e['MASTER_PORT']}" for e in envs} == {f"127.0.0.1:{port}"}
    endpoints = envs[0]["PADDLE_TRAINER_ENDPOINTS"].split(",")
    assert len(set(endpoints)) == 4
    assert [e["PADDLE_CURRENT_ENDPOINT"] for e in envs] == endpoints
    # each node keeps its own ranks' logs; node 0 streams global rank 0
    assert "done 2" in (tmp_path / "log1" / "workerlog.2").read_text()
    assert not (tmp_path / "log1" / "workerlog.0").exists()
    assert "[rank 0] done 0" in outs[1][0]
    assert "[rank" not in outs[0][0]


KILL = r"""
import os, signal, sys
import numpy as np
from mpi4py import MPI
c = MPI.COMM_WORLD
x = np.ones(4096); y = np.empty_like(x)
for step in range(10**6):
    if c.Get_rank() == 3 and step == 10:
        os.kill(os.getpid(), signal.SIGKILL)
    c.Allreduce(x, y)
"""


def test_a_rank_killed_on_one_node_stops_both(tmp_path):
    script = tmp_path / "k.py"
    script.write_text(KILL)
    port = free_port()
    t0 = time.monotonic()
    procs = [start(n, port, str(script), [], tmp_path, extra=["--grace", "1"]) for n in (0, 1)]
    (out0, err0), (out1, err1) = finish(procs)
    assert time.monotonic() - t0 < 90
    assert procs[1].returncode == 128 + signal.SIGKILL, err1
    assert "rank 3 (node 1, pid" in err1 and "died: signal SIGKILL" in err1
    assert procs[0].returncode != 0, err0
    assert "another node stopped the job: node 1: rank 3 (node 1, pid" in err0


def test_a_node_that_never_comes_is_named(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('never runs')\n")
    port = free_port()
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nnodes", "2", "--rank", "0",
           "--master", f"127.0.0.1:{port}", "--rendezvous_timeout", "2", str(script)]
    res = subprocess.run(cmd, cwd=tmp_path, env=clean_environ(), capture_output=True,
                         text=True, timeout=TIMEOUT)
    assert res.returncode == 2
    assert "rendezvous: node(s) [1] did not join within 2 s" in res.stderr


def test_ctrl_c_while_waiting_for_the_other_nodes_leaves_at_once(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('never runs')\n")
    port = free_port()
    proc = start(0, port, str(script), [], tmp_path)
    try:
        # node 0 hosts the store, then waits for node 1 (60 s here)
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert proc.poll() is None and time.monotonic() < deadline
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        time.sleep(0.3)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
        assert time.monotonic() - t0 < 30
    finally:
        finish([proc])
    assert proc.returncode == 128 + signal.SIGINT, err
    assert "got SIGINT while waiting for the other nodes; stopping" in err


def test_nodes_must_agree_on_nproc_per_node(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('never runs')\n")
    port = free_port()
    procs = [start(0, port, str(script), [], tmp_path, nproc=2),
             start(1, port, str(script), [], tmp_path, nproc=1)]
    outs = finish(procs)
    assert [p.returncode for p in procs] == [2, 2], outs
    assert "every node must use the same values" in outs[0][1] + outs[1][1]


RESTART = r"""
import os, signal
from mpi4py import MPI
c = MPI.COMM_WORLD
attempt = int(os.environ["FW_RESTART_COUNT"])
total = c.allreduce(1)
print(f"attempt {attempt} rank {c.Get_rank()} total {total} job {os.environ['FW_JOB_ID']}",
      flush=True)
if attempt == 0 and c.Get_rank() == 3:
    os.kill(os.getpid(), signal.SIGKILL)
c.Barrier()
"""


def test_both_nodes_restart_after_a_rank_death(tmp_path):
    script = tmp_path / "r.py"
    script.write_text(RESTART)
    port = free_port()
    procs = [start(n, port, str(script), [], tmp_path, extra=["--max_restart", "1", "--grace",
                                                              "1"]) for n in (0, 1)]
    (out0, err0), (out1, err1) = finish(procs)
    assert [p.returncode for p in procs] == [0, 0], (err0, err1)
    for err in (err0, err1):
        assert "restarting the job: attempt 1 of 1 (FW_RESTART_COUNT=1)" in err
    assert "another node stopped the job: node 1: rank 3" in err0
    lines = {}
    for node, ranks in ((0, (0, 1)), (1, (2, 3))):
        for r in ranks:
            lines[r] = (tmp_path / f"log{node}" / f"workerlog.{r}").read_text().splitlines()
    jobs = set()
    for r in range(4):
        rows = [ln.split() for ln in lines[r] if ln.startswith("attempt")]
        # both attempts formed a 4-rank world; each attempt had one job id on every node
        assert [(a[1], a[5]) for a in rows] == [("0", "4"), ("1", "4")], lines[r]
        jobs.add(tuple(a[7] for a in rows))
    assert len(jobs) == 1 and len(set(next(iter(jobs)))) == 2


SLEEP = r"""
import os, sys, time
from mpi4py import MPI
MPI.COMM_WORLD.Barrier()
open(os.path.join(sys.argv[1], f"up.{MPI.COMM_WORLD.Get_rank()}"), "w").write(str(os.getpid()))
time.sleep(300)
"""


def _wait_up(tmp_path, procs, n=4):
    deadline = time.monotonic() + TIMEOUT
    while not all((tmp_path / f"up.{r}").exists() for r in range(n)):
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline, "the ranks did not come up"
        time.sleep(0.05)
    time.sleep(0.2)
    return [int((tmp_path / f"up.{r}").read_text()) for r in range(n)]


@pytest.mark.slow  # a launcher dying: waits on heartbeats and reconnects
def test_a_vanished_node_launcher_is_noticed_by_its_heartbeat(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(SLEEP)
    port = free_port()
    env = {"FW_LAUNCH_HEARTBEAT_TIMEOUT": "3"}
    procs = [start(n, port, str(script), [str(tmp_path)], tmp_path, extra=["--grace", "0"],
                   env=env) for n in (0, 1)]
    try:
        _wait_up(tmp_path, procs)
        t0 = time.monotonic()
        procs[1].kill()  # node 1's launcher vanishes; its ranks die with it (PDEATHSIG)
        out0, err0 = procs[0].communicate(timeout=TIMEOUT)
        assert time.monotonic() - t0 < 60
    finally:
        finish(procs)
    assert procs[0].returncode == 1, err0
    assert "node 1's launcher (127.0.0.1) stopped answering for 3 s" in err0


@pytest.mark.slow  # a launcher dying: waits on heartbeats and reconnects
def test_losing_node_0_and_its_store_stops_the_other_node(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(SLEEP)
    port = free_port()
    procs = [start(n, port, str(script), [str(tmp_path)], tmp_path, extra=["--grace", "0"])
             for n in (0, 1)]
    try:
        pids = _wait_up(tmp_path, procs)
        t0 = time.monotonic()
        procs[0].kill()
        out1, err1 = procs[1].communicate(timeout=TIMEOUT)
        assert time.monotonic() - t0 < 60
    finally:
        finish(procs)
    assert procs[1].returncode == 1, err1
    assert f"lost the job's store at 127.0.0.1:{port}" in err1
    # every rank of both nodes is gone: node 0's by PDEATHSIG, node 1's killed by its launcher
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
