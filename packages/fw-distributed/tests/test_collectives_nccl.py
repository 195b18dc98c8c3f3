"""The NCCL engine (communication/_engine_nccl.py) without a GPU: importing it never
imports CuPy, and against a fake ``cupy.cuda.nccl`` (recording every call) it
exchanges the unique id through the store and issues the NCCL calls with the
right pointers, counts, types, roots and peers. What only a GPU can show (that
NCCL really moves the bytes) is unverified; a GPU tensor given to a collective is
refused with a clear error until then."""
import json
import subprocess
import sys
import types

import numpy as np
import pytest

import fw.distributed as dist
from fw.core.internal import make_tensor
from fw.distributed.communication import _engine_nccl


class FakeArray:
    """A device array stand-in: NumPy memory plus a fake device pointer."""

    def __init__(self, a, ptr=1 << 20):
        self.a = a
        self.data = types.SimpleNamespace(ptr=ptr)

    size = property(lambda self: self.a.size)
    nbytes = property(lambda self: self.a.nbytes)
    dtype = property(lambda self: self.a.dtype)

    def reshape(self, *shape):
        return FakeArray(self.a.reshape(*shape), self.data.ptr)

    def view(self, dt):
        return FakeArray(self.a.view(dt), self.data.ptr)

    def __getitem__(self, i):
        if isinstance(i, slice):
            start = i.start or 0
            return FakeArray(self.a[i], self.data.ptr + start * self.a.itemsize)
        row = self.a[i]
        return FakeArray(row, self.data.ptr + i * row.nbytes)


class FakeStore:
    def __init__(self):
        self.kv = {}

    def set(self, k, v):
        self.kv[k] = v.encode() if isinstance(v, str) else v

    def get(self, k, timeout=None):
        return self.kv[k]


def _fake_cupy(calls):
    nccl = types.ModuleType("cupy.cuda.nccl")
    for n in (["NCCL_INT8", "NCCL_UINT8", "NCCL_INT32", "NCCL_INT64", "NCCL_FLOAT16",
                           "NCCL_FLOAT32", "NCCL_FLOAT64", "NCCL_BFLOAT16", "NCCL_SUM",
                           "NCCL_PROD", "NCCL_MAX", "NCCL_MIN"]):
        setattr(nccl, n, n)
    nccl.get_unique_id = lambda: tuple(range(-64, 64))
    nccl.groupStart = lambda: calls.append(("groupStart",))
    nccl.groupEnd = lambda: calls.append(("groupEnd",))

    class Comm:
        def __init__(self, size, uid, rank):
            calls.append(("init", size, uid, rank))

        def __getattr__(self, name):
            return lambda *a: calls.append((name,) + a)

    nccl.NcclCommunicator = Comm

    class Event:
        def __init__(self, disable_timing=True):
            self.done = False

        def record(self, stream=None):
            calls.append(("event_record", getattr(stream, "ptr", None)))

    class Stream:
        ptr = 777

        def __init__(self, non_blocking=False):
            pass

        def wait_event(self, ev):
            calls.append(("wait_event",))

    class Current:
        def record(self):
            return Event()

    cuda = types.ModuleType("cupy.cuda")
    cuda.nccl, cuda.Event, cuda.Stream = nccl, Event, Stream
    cuda.get_current_stream = lambda: Current()
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda
    cupy.zeros = lambda n, dt: FakeArray(np.zeros(n, dt), ptr=99)
    cupy.float32 = np.float32
    return {"cupy": cupy, "cupy.cuda": cuda, "cupy.cuda.nccl": nccl}


def test_importing_the_engine_never_imports_cupy():
    code = ("import sys, fw.distributed, fw.distributed.communication._engine_nccl as e; "
            "print('cupy' in sys.modules, e.nccl_available())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[0] == "False"


@pytest.fixture
def fake(monkeypatch):
    calls = []
    for name, mod in _fake_cupy(calls).items():
        monkeypatch.setitem(sys.modules, name, mod)
    return calls


def test_unique_id_goes_through_the_store(fake):
    store = FakeStore()
    _engine_nccl.NcclEngine(store, "job/comm/nccl_uid/3", 0, 2, 5.0)
    assert json.loads(store.kv["job/comm/nccl_uid/3"]) == list(range(-64, 64))
    _engine_nccl.NcclEngine(store, "job/comm/nccl_uid/3", 1, 2, 5.0)
    inits = [c for c in fake if c[0] == "init"]
    assert inits == [("init", 2, tuple(range(-64, 64)), 0), ("init", 2, tuple(range(-64, 64)), 1)]


def test_collective_calls_carry_pointers_counts_types_and_roots(fake):
    e = _engine_nccl.NcclEngine(FakeStore(), "k", 0, 2, 5.0)
    x = FakeArray(np.zeros((3, 4), np.float32), ptr=4096)
    fake.clear()
    req = e.allreduce(x, 1)
    assert ("allReduce", 4096, 4096, 12, "NCCL_FLOAT32", "NCCL_MAX", 777) in fake
    assert req.Test() is False
    req.event.done = True
    assert req.Test() is True
    e.reduce(x, 3, 1)
    assert ("reduce", 4096, 4096, 12, "NCCL_FLOAT32", "NCCL_PROD", 1, 777) in fake
    e.bcast(x, 1)
    assert ("broadcast", 4096, 4096, 48, "NCCL_UINT8", 1, 777) in fake
    out = FakeArray(np.zeros((2, 3, 4), np.float32), ptr=8192)
    e.allgather(x, out)
    assert ("allGather", 4096, 8192, 48, "NCCL_UINT8", 777) in fake
    e.reduce_scatter_block(out, x, 0)
    assert ("reduceScatter", 8192, 4096, 12, "NCCL_FLOAT32", "NCCL_SUM", 777) in fake
    # the comm stream waits for the producers on the current stream before each op
    assert fake.count(("wait_event",)) == 5


def test_alltoall_is_one_group_of_sends_and_recvs_per_peer(fake):
    store = FakeStore()
    store.set("k", json.dumps(list(range(-64, 64))))
    e = _engine_nccl.NcclEngine(store, "k", 1, 2, 5.0)
    send = FakeArray(np.zeros((2, 4), np.float64), ptr=1000)
    recv = FakeArray(np.zeros((2, 4), np.float64), ptr=5000)
    fake.clear()
    e.alltoall(send, recv)
    body = [c for c in fake if c[0] in ("groupStart", "groupEnd", "send", "recv")]
    u8 = "NCCL_UINT8"
    assert body == [("groupStart",),
                    ("send", 1000, 32, u8, 0, 777), ("send", 1032, 32, u8, 1, 777),
                    ("recv", 5000, 32, u8, 0, 777), ("recv", 5032, 32, u8, 1, 777),
                    ("groupEnd",)]
    fake.clear()
    e.alltoallv(send, [8, 56], recv, [40, 24])
    body = [c for c in fake if c[0] in ("send", "recv")]
    assert body == [("send", 1000, 8, u8, 0, 777), ("send", 1008, 56, u8, 1, 777),
                    ("recv", 5000, 40, u8, 0, 777), ("recv", 5040, 24, u8, 1, 777)]
    fake.clear()
    e.isend(send, 0, 0)
    e.irecv(recv, 0, 0)
    assert [c for c in fake if c[0] in ("send", "recv")] == [
        ("send", 1000, 64, u8, 0, 777), ("recv", 5000, 64, u8, 0, 777)]
    e.abort()
    e.free()
    assert ("abort",) in fake and ("destroy",) in fake


def test_a_gpu_tensor_is_refused_until_the_engine_is_verified():
    t = make_tensor(FakeArray(np.zeros(3, np.float32)))
    try:
        with pytest.raises(NotImplementedError, match="all_reduce: tensor is a GPU tensor; the "
                                                      "NCCL engine .* not verified"):
            dist.all_reduce(t)
    finally:
        dist.destroy_process_group()
