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

from fw.distributed.launch.env import clean_environ

TIMEOUT = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(node, port, script, args, cwd, extra=(), nproc=2):
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nnodes", "2", "--rank", str(node),
           "--master", f"127.0.0.1:{port}", "--nproc_per_node", str(nproc), "--log_dir",
           f"log{node}", "--rendezvous_timeout", "60", *extra, script, *args]
    return subprocess.Popen(cmd, cwd=cwd, env=clean_environ(), stdout=subprocess.PIPE,
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


def test_nodes_must_agree_on_nproc_per_node(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('never runs')\n")
    port = free_port()
    procs = [start(0, port, str(script), [], tmp_path, nproc=2),
             start(1, port, str(script), [], tmp_path, nproc=1)]
    outs = finish(procs)
    assert [p.returncode for p in procs] == [2, 2], outs
    assert "every node must use the same values" in outs[0][1] + outs[1][1]
