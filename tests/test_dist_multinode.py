"""Multi-node for real: two network namespaces joined by a veth pair, one
``python -m fw.distributed.launch`` per namespace (``ip netns exec``), 2 ranks
each, an all-reduce over mpi4py across them.

The namespaces share the machine's memory, so UCX would otherwise take its
shared-memory transports between the "nodes"; ``UCX_TLS=tcp,self`` keeps it to
the network, and the veth's byte counters prove the all-reduce crossed it. The
launcher itself picks the interface (``UCX_NET_DEVICES``) from the address each
node advertises. Needs root and ``ip``; skipped with the reason otherwise. The
namespaces are removed in a ``finally``.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from fw.distributed.launch.env import clean_environ

TIMEOUT = 120

SCRIPT = r"""
import json, os, sys
import numpy as np
from mpi4py import MPI
c = MPI.COMM_WORLD
r = c.Get_rank()
x = np.full(1 << 18, r + 1.0)            # 2 MiB of float64
y = np.empty_like(x)
for _ in range(4):
    c.Allreduce(x, y)
with open(os.path.join(sys.argv[1], f"r{r}.json"), "w") as f:
    json.dump({"rank": r, "size": c.Get_size(), "sum": float(y[0]),
               "all_equal": bool((y == y[0]).all()),
               "shm": c.Split_type(MPI.COMM_TYPE_SHARED).Get_size(),
               "ucx_dev": os.environ.get("UCX_NET_DEVICES"),
               "store": os.environ.get("FW_STORE_ENDPOINT"),
               "endpoints": os.environ.get("PADDLE_TRAINER_ENDPOINTS")}, f)
"""


def sh(*cmd, check=True):
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=30, check=check)


def rx_bytes(ns, dev):
    out = sh("ip", "netns", "exec", ns, "cat", f"/sys/class/net/{dev}/statistics/rx_bytes")
    return int(out.stdout)


@pytest.fixture
def two_namespaces():
    if shutil.which("ip") is None:
        pytest.skip("needs the 'ip' tool (iproute2) to create network namespaces")
    if os.geteuid() != 0:
        pytest.skip("needs root to create network namespaces")
    tag = f"{os.getpid() % 100000}"
    names = [f"fwtA{tag}", f"fwtB{tag}"]
    devs = [f"fwva{tag}", f"fwvb{tag}"]
    addrs = ["10.213.7.1", "10.213.7.2"]
    created = []
    try:
        for ns in names:
            res = sh("ip", "netns", "add", ns, check=False)
            if res.returncode != 0:
                pytest.skip(f"'ip netns add' failed: {res.stderr.strip()}")
            created.append(ns)
        res = sh("ip", "link", "add", devs[0], "type", "veth", "peer", "name", devs[1],
                 check=False)
        if res.returncode != 0:
            pytest.skip(f"cannot create a veth pair: {res.stderr.strip()}")
        for ns, dev, addr in zip(names, devs, addrs):
            sh("ip", "link", "set", dev, "netns", ns)
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield names, devs, addrs
    finally:
        for ns in created:
            # deleting a namespace deletes the veth end inside it (and so its peer)
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=30)


def test_two_namespaces_two_ranks_each_allreduce_over_the_veth(tmp_path, two_namespaces):
    names, devs, addrs = two_namespaces
    script = tmp_path / "w.py"
    script.write_text(SCRIPT)
    # a free port in node 0's namespace (bound to 0 there, released)
    port = int(sh("ip", "netns", "exec", names[0], sys.executable, "-c",
                  "import socket; s = socket.socket(); s.bind(('" + addrs[0] + "', 0)); "
                  "print(s.getsockname()[1])").stdout)
    env = clean_environ()
    env["UCX_TLS"] = "tcp,self"
    before = rx_bytes(names[1], devs[1])
    procs = []
    try:
        for node in (1, 0):
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", names[node], sys.executable, "-m",
                 "fw.distributed.launch", "--nnodes", "2", "--rank", str(node), "--master",
                 f"{addrs[0]}:{port}", "--nproc_per_node", "2", "--log_dir", f"log{node}",
                 "--rendezvous_timeout", "60", str(script), str(tmp_path)],
                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True))
        outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    assert [p.returncode for p in procs] == [0, 0], outs
    rows = [json.loads((tmp_path / f"r{r}.json").read_text()) for r in range(4)]
    assert [(d["rank"], d["size"], d["sum"], d["all_equal"]) for d in rows] == \
        [(r, 4, 10.0, True) for r in range(4)]
    assert [d["shm"] for d in rows] == [2, 2, 2, 2]
    # each node's launcher advertised its own address and told UCX its interface
    assert [d["ucx_dev"] for d in rows] == [devs[0], devs[0], devs[1], devs[1]]
    assert {d["store"] for d in rows} == {f"{addrs[0]}:{port}"}
    hosts = [ep.rsplit(":", 1)[0] for ep in rows[0]["endpoints"].split(",")]
    assert hosts == [addrs[0], addrs[0], addrs[1], addrs[1]]
    # the all-reduce of 2 MiB vectors crossed the veth (4 times, both directions)
    assert rx_bytes(names[1], devs[1]) - before > 2 << 20
