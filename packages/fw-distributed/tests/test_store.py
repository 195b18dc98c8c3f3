"""fw.distributed.store: the job's TCP key-value store (rendezvous, liveness)."""

import socket
import subprocess
import sys
import threading
import time

import pytest

from fw.distributed.store import StoreError, StoreTimeoutError, TCPStore, store_barrier


@pytest.fixture
def master():
    s = TCPStore("127.0.0.1", 0, is_master=True, timeout=20)
    yield s
    s.close()


def client(master, **kw):
    return TCPStore("127.0.0.1", master.port, timeout=kw.pop("timeout", 20), **kw)


def test_set_get_roundtrip_bytes_and_str(master):
    c = client(master)
    master.set("a", "xyz")
    c.set("b", bytes(range(256)) * 1000)
    assert c.get("a") == b"xyz"
    assert master.get("b") == bytes(range(256)) * 1000
    assert master.endpoint == f"127.0.0.1:{master.port}" and master.port > 0
    c.close()


def test_get_blocks_until_another_client_sets(master):
    c = client(master)
    got = []
    t = threading.Thread(target=lambda: got.append(c.get("late", timeout=10)))
    t.start()
    time.sleep(0.2)
    assert not got
    master.set("late", b"here")
    t.join(timeout=10)
    assert got == [b"here"]


def test_get_times_out_naming_the_key(master):
    t0 = time.monotonic()
    with pytest.raises(StoreTimeoutError, match=r"key 'never' was not set within 0.3 s") as e:
        master.get("never", timeout=0.3)
    assert 0.25 < time.monotonic() - t0 < 10
    assert e.value.missing == ["never"]
    master.set("after", b"1")  # the connection is still usable after a timeout
    assert master.get("after") == b"1"


def test_wait_lists_only_the_missing_keys(master):
    master.set("k0", b"")
    with pytest.raises(StoreTimeoutError) as e:
        master.wait(["k0", "k1", "k2"], timeout=0.2)
    assert e.value.missing == ["k1", "k2"]
    assert master.check(["k0"]) and not master.check(["k0", "k1"])


def test_add_is_atomic_across_clients_and_threads(master):
    clients = [client(master) for _ in range(4)]

    def bump(c):
        for _ in range(50):
            c.add("n", 1)
    ts = [threading.Thread(target=bump, args=(c,)) for c in clients]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=30)
    assert master.add("n", 0) == 200
    assert master.add("n", -5) == 195
    assert master.get("n") == b"195"


def test_compare_set_delete_num_keys_multi_get(master):
    assert master.compare_set("c", b"", b"first") == b"first"   # unset -> set
    assert master.compare_set("c", b"wrong", b"x") == b"first"  # mismatch: unchanged
    assert master.compare_set("c", b"first", b"second") == b"second"
    assert master.compare_set("unset", b"nope", b"x") == b""    # unset and not expected
    assert not master.check(["unset"])
    master.set("d", b"4")
    assert master.multi_get(["c", "d"]) == [b"second", b"4"]
    n = master.num_keys()
    assert master.delete_key("d") and not master.delete_key("d")
    assert master.num_keys() == n - 1


def test_store_barrier_names_the_ranks_that_did_not_arrive(master):
    errors = []

    def rank(r):
        try:
            store_barrier(client(master), "b1", r, 4, timeout=0.5)
        except StoreTimeoutError as e:
            errors.append(str(e))
    ts = [threading.Thread(target=rank, args=(r,)) for r in (0, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=20)
    assert len(errors) == 2
    assert all("rank(s) [1, 3] of 4 did not arrive" in e for e in errors)


def test_store_barrier_passes_when_all_arrive(master):
    done = []
    ts = [threading.Thread(target=lambda r=r: (store_barrier(client(master), "b2", r, 3, 10),
                                               done.append(r))) for r in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=20)
    assert sorted(done) == [0, 1, 2]


def test_clients_in_other_processes(master):
    code = ("from fw.distributed.store import TCPStore\n"
            f"s = TCPStore('127.0.0.1', {master.port}, timeout=20)\n"
            "s.set('from_child/' + str(s.add('children', 1)), b'hi')\n")
    ps = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(3)]
    for p in ps:
        assert p.wait(timeout=60) == 0
    master.wait([f"from_child/{i}" for i in (1, 2, 3)], timeout=10)


def test_unreachable_store_is_named_and_bounded():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(StoreError, match=rf"could not reach the store at 127.0.0.1:{port} "
                                         r"within 0.5 s"):
        TCPStore("127.0.0.1", port, timeout=0.5)
    assert time.monotonic() - t0 < 10


def test_busy_port_is_a_clear_error(master):
    with pytest.raises(StoreError, match=rf"cannot listen on 127.0.0.1:{master.port}"):
        TCPStore("127.0.0.1", master.port, is_master=True)


def test_garbage_from_a_stranger_does_not_kill_the_server(master):
    with socket.create_connection(("127.0.0.1", master.port), timeout=5) as s:
        s.sendall(b"\xff\xff\xff\xffGET / HTTP/1.1\r\n\r\n")
        s.settimeout(5)
        assert s.recv(10) == b""  # dropped
    master.set("still", b"alive")
    assert client(master).get("still") == b"alive"


def test_bad_arguments():
    with pytest.raises(ValueError, match="port 0"):
        TCPStore("127.0.0.1", 0)
    with pytest.raises(ValueError, match="'timeout'"):
        TCPStore("127.0.0.1", 1234, timeout=0)


def test_bad_keys_and_values(master):
    with pytest.raises(TypeError, match="TCPStore.set: key must be a non-empty str"):
        master.set("", b"x")
    with pytest.raises(TypeError, match="TCPStore.set: value must be bytes or str, got int"):
        master.set("k", 3)
    with pytest.raises(TypeError, match="TCPStore.add: amount must be an int"):
        master.add("k", 1.5)
