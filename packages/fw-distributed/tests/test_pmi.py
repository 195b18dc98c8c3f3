"""The PMI-1 server: the wire protocol line by line, barrier timeouts that name the
missing ranks, the cross-node exchange through the store, and real MPICH ranks
joining one COMM_WORLD through it (no mpiexec)."""

import os
import subprocess
import sys
import time

import pytest

from fw.distributed import _pmi
from fw.distributed.store import TCPStore

TIMEOUT = 60  # seconds for any subprocess of this file (generous: the machine is shared)


class Client:
    """A fake rank speaking PMI-1 on its end of the channel."""

    def __init__(self, sock):
        self.sock = sock
        self.sock.settimeout(20)
        self.buf = b""

    def call(self, line, expect_reply=True):
        self.sock.sendall((line + "\n").encode())
        if not expect_reply:
            return None
        return self.read()

    def read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(4096)
            assert chunk, "the PMI server closed the channel"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def close(self):
        self.sock.close()


def fields(line):
    return dict(t.split("=", 1) for t in line.split() if "=" in t)


def make(ranks, size, **kw):
    failures = []
    kw.setdefault("on_failure", failures.append)
    server = _pmi.PMIServer(ranks, size, _pmi.process_mapping(size // len(ranks), len(ranks)),
                            **kw)
    clients = [Client(server.channel(r)) for r in ranks]
    server.start()
    return server, clients, failures


def test_process_mapping_strings():
    assert _pmi.process_mapping(1, 4) == "(vector,(0,1,4))"
    assert _pmi.process_mapping(2, 2) == "(vector,(0,2,2))"


def test_protocol_replies_line_by_line():
    server, (a, b), failures = make([0, 1], 2, kvsname="kvs_t")
    try:
        assert a.call("cmd=init pmi_version=1 pmi_subversion=1") == \
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0"
        b.call("cmd=init pmi_version=1 pmi_subversion=1")
        assert fields(a.call("cmd=get_maxes")) == {
            "cmd": "maxes", "kvsname_max": "256", "keylen_max": "256", "vallen_max": "1024",
            "rc": "0"}
        assert a.call("cmd=get_appnum") == "cmd=appnum appnum=0 rc=0"
        assert a.call("cmd=get_my_kvsname") == "cmd=my_kvsname kvsname=kvs_t rc=0"
        assert a.call("cmd=get_universe_size") == "cmd=universe_size size=2 rc=0"
        assert a.call("cmd=get kvsname=kvs_t key=PMI_process_mapping") == \
            "cmd=get_result rc=0 value=(vector,(0,1,2))"
        assert a.call("cmd=put kvsname=kvs_t key=card0 value=tcp://x=1") == "cmd=put_result rc=0"
        miss = fields(b.call("cmd=get kvsname=kvs_t key=PMI_hwloc_xmlfile"))
        assert miss["rc"] == "-1" and "not_found" in miss["msg"]
        # a barrier answers nobody until everyone is in it
        a.call("cmd=barrier_in", expect_reply=False)
        time.sleep(0.2)
        a.sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            a.sock.recv(1)
        a.sock.setblocking(True)
        a.sock.settimeout(20)
        assert b.call("cmd=barrier_in") == "cmd=barrier_out rc=0"
        assert a.read() == "cmd=barrier_out rc=0"
        # a value containing '=' comes back whole
        assert b.call("cmd=get kvsname=kvs_t key=card0") == "cmd=get_result rc=0 value=tcp://x=1"
        assert server.barriers_done == 1
        assert b.call("cmd=spawn nprocs=2").startswith("cmd=spawn_result rc=-1")
        assert a.call("cmd=finalize") == "cmd=finalize_ack rc=0"
        assert server.finalized == [0]
        assert server.status(0) == "finalized" and server.status(1) == "initialized"
        assert failures == []
    finally:
        for c in (a, b):
            c.close()
        server.close()


def test_barrier_timeout_names_the_missing_ranks():
    server, clients, failures = make([0, 1, 2], 3, barrier_timeout=0.5)
    try:
        for c in clients:
            c.call("cmd=init pmi_version=1 pmi_subversion=1")
        for c in clients[:2]:
            c.call("cmd=barrier_in", expect_reply=False)
        deadline = time.monotonic() + 20
        while not failures and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(failures) == 1
        err = failures[0]
        assert isinstance(err, _pmi.PMIBarrierTimeout)
        assert err.missing == [2]
        msg = str(err)
        assert "rank(s) 2 did not arrive within 0.5 s" in msg
        assert "rank(s) 0-1 waited" in msg
        assert "rank 2: initialized" in msg
        assert server.error is err
    finally:
        for c in clients:
            c.close()
        server.close()


def test_waiting_for_reports_who_waits_on_an_absent_rank():
    server, (a, b), failures = make([0, 1], 2)
    try:
        assert server.waiting_for(1) == []
        a.call("cmd=init pmi_version=1 pmi_subversion=1")
        a.call("cmd=barrier_in", expect_reply=False)
        deadline = time.monotonic() + 20
        while server.waiting_for(1) != [0] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.waiting_for(1) == [0]
        assert server.waiting_for(0) == []
    finally:
        a.close()
        b.close()
        server.close()


def test_abort_is_reported_with_the_rank_and_code():
    aborts = []
    server, (a,), failures = make([0], 1, on_abort=lambda *x: aborts.append(x))
    try:
        a.call("cmd=abort exitcode=7", expect_reply=False)
        deadline = time.monotonic() + 20
        while not aborts and time.monotonic() < deadline:
            time.sleep(0.02)
        assert aborts and aborts[0][:2] == (0, "7")
    finally:
        a.close()
        server.close()


def test_channel_rejects_a_rank_of_another_node():
    server = _pmi.PMIServer([2, 3], 4, _pmi.process_mapping(2, 2))
    try:
        with pytest.raises(ValueError, match=r"rank 0 is not one of this node's ranks 2-3"):
            server.channel(0)
    finally:
        server.close()


def test_barrier_timeout_env_is_checked(monkeypatch):
    monkeypatch.setenv("FW_PMI_TIMEOUT", "12.5")
    assert _pmi.barrier_timeout_from_env() == 12.5
    monkeypatch.setenv("FW_PMI_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="FW_PMI_TIMEOUT='soon'"):
        _pmi.barrier_timeout_from_env()
    monkeypatch.setenv("FW_PMI_TIMEOUT", "0")
    with pytest.raises(ValueError, match="must be > 0"):
        _pmi.barrier_timeout_from_env()


def _two_nodes(store_port, timeout=30.0):
    """Two PMIServers (nodes) of 2 ranks each, exchanging through one store."""
    servers, clients, failures = [], [], []
    for node in range(2):
        kvs = _pmi.StoreKVS(TCPStore("127.0.0.1", store_port, timeout=30), "job.0/pmi", node,
                            2, 2, poll=0.1)
        s = _pmi.PMIServer([2 * node, 2 * node + 1], 4, _pmi.process_mapping(2, 2), kvs=kvs,
                           barrier_timeout=timeout, on_failure=failures.append)
        clients += [Client(s.channel(r)) for r in s.ranks]
        servers.append(s.start())
    return servers, clients, failures


def test_store_exchange_makes_every_nodes_puts_visible_after_the_barrier():
    master = TCPStore("127.0.0.1", 0, is_master=True)
    servers, clients, failures = _two_nodes(master.port)
    try:
        for r, c in enumerate(clients):
            c.call("cmd=init pmi_version=1 pmi_subversion=1")
            assert c.call(f"cmd=put kvsname=k key=addr[{r}] value=host{r}:{1000 + r}") == \
                "cmd=put_result rc=0"
        for c in clients:
            c.call("cmd=barrier_in", expect_reply=False)
        for c in clients:
            assert c.read() == "cmd=barrier_out rc=0"
        for c in clients:
            for r in range(4):
                assert c.call(f"cmd=get kvsname=k key=addr[{r}]") == \
                    f"cmd=get_result rc=0 value=host{r}:{1000 + r}"
        # a second epoch moves only its own puts, under its own key
        clients[3].call("cmd=put kvsname=k key=late value=yes")
        for c in clients:
            c.call("cmd=barrier_in", expect_reply=False)
        for c in clients:
            assert c.read() == "cmd=barrier_out rc=0"
        assert clients[0].call("cmd=get kvsname=k key=late") == "cmd=get_result rc=0 value=yes"
        assert master.check(["job.0/pmi/0/0", "job.0/pmi/0/1", "job.0/pmi/1/1"])
        assert failures == []
    finally:
        for c in clients:
            c.close()
        for s in servers:
            s.close()
        master.close()


def test_store_exchange_timeout_names_the_absent_nodes_ranks():
    master = TCPStore("127.0.0.1", 0, is_master=True)
    kvs = _pmi.StoreKVS(TCPStore("127.0.0.1", master.port, timeout=30), "j.0/pmi", 0, 2, 2,
                        poll=0.1)
    failures = []
    server = _pmi.PMIServer([0, 1], 4, _pmi.process_mapping(2, 2), kvs=kvs,
                            barrier_timeout=0.6, on_failure=failures.append)
    clients = [Client(server.channel(r)) for r in (0, 1)]
    server.start()
    try:
        for c in clients:
            c.call("cmd=barrier_in", expect_reply=False)
        deadline = time.monotonic() + 20
        while not failures and time.monotonic() < deadline:
            time.sleep(0.05)
        assert failures, "the cross-node barrier did not time out"
        err = failures[0]
        assert isinstance(err, _pmi.PMIBarrierTimeout)
        assert err.missing == [2, 3]
        assert "node(s) 1 (global ranks 2-3) did not arrive" in str(err)
    finally:
        for c in clients:
            c.close()
        server.close()
        master.close()


MPI_SCRIPT = r"""
import os, sys
from mpi4py import MPI
c = MPI.COMM_WORLD
v = c.allreduce(c.Get_rank() + 1)
shm = c.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
print(f"{c.Get_rank()} {c.Get_size()} {v} {shm}", flush=True)
"""


@pytest.mark.parametrize("nnodes_seen", [1, 3])
def test_real_mpich_ranks_join_one_world_through_the_server(tmp_path, nnodes_seen):
    """3 MPICH processes started by hand, PMI_FD from the server: one COMM_WORLD, and
    PMI_process_mapping decides which ranks MPICH treats as sharing a node."""
    script = tmp_path / "w.py"
    script.write_text(MPI_SCRIPT)
    n = 3
    per_node = n // nnodes_seen
    server = _pmi.PMIServer(range(n), n, _pmi.process_mapping(nnodes_seen, per_node),
                            barrier_timeout=TIMEOUT)
    procs = []
    try:
        for r in range(n):
            theirs = server.channel(r)
            env = dict(os.environ, PMI_FD=str(theirs.fileno()), PMI_RANK=str(r), PMI_SIZE=str(n))
            procs.append(subprocess.Popen([sys.executable, str(script)], env=env,
                                          pass_fds=(theirs.fileno(),), stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
            theirs.close()
        server.start()
        outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        server.close()
    assert [p.returncode for p in procs] == [0] * n, outs
    rows = sorted(tuple(int(x) for x in o.split()) for o, _ in outs)
    # rank, size, the sum of rank+1, and how many ranks MPICH says share our node
    assert rows == [(r, n, 6, per_node) for r in range(n)]
    assert server.error is None
    assert server.finalized == [0, 1, 2]


def test_close_releases_the_thread_and_every_channel():
    server = _pmi.PMIServer([0, 1], 2, _pmi.process_mapping(1, 2))
    theirs = [server.channel(r) for r in (0, 1)]
    server.start()
    server.close()
    for t in theirs:
        t.settimeout(5)
        assert t.recv(1) == b""  # our end is closed: the rank sees EOF
        t.close()
    assert not server._thread.is_alive()
    assert server._wake_r.fileno() == -1 and server._wake_w.fileno() == -1


def test_init_timeout_names_the_ranks_that_never_called_mpi_init():
    """Ranks of one node meet in shared memory during MPI_Init, not in a PMI barrier:
    the bound is that every rank says PMI init within the timeout of the first."""
    server, clients, failures = make([0, 1, 2], 3, barrier_timeout=0.5)
    try:
        clients[0].call("cmd=init pmi_version=1 pmi_subversion=1")
        clients[2].call("cmd=init pmi_version=1 pmi_subversion=1")
        assert server.waiting_for(1) == [0, 2]
        deadline = time.monotonic() + 20
        while not failures and time.monotonic() < deadline:
            time.sleep(0.05)
        assert failures and isinstance(failures[0], _pmi.PMIBarrierTimeout)
        assert failures[0].missing == [1]
        assert "MPI_Init: rank(s) 1 did not call MPI_Init within 0.5 s of the first rank " \
            "(rank(s) 0, 2 did" in str(failures[0])
    finally:
        for c in clients:
            c.close()
        server.close()


def test_no_init_at_all_is_not_timed():
    # scripts that never use MPI run without a PMI deadline
    server, clients, failures = make([0, 1], 2, barrier_timeout=0.2)
    try:
        time.sleep(0.6)
        assert failures == [] and server.error is None
        assert server.waiting_for(0) == []
    finally:
        for c in clients:
            c.close()
        server.close()
