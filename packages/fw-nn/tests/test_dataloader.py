"""fw.io.DataLoader: batching in the main process and in workers, and every failure
mode of the workers (exception, death, timeout, shared memory). Each test checks
that no child process is left behind."""

import os
import signal
import time

import numpy as np
import pytest
from nn_testutil import child_pids

import fw
from fw import io
from fw.io import dataloader as dl_mod


@pytest.fixture(autouse=True)
def no_leftovers():
    before = set(child_pids())
    yield
    deadline = time.time() + 5
    while set(child_pids()) - before and time.time() < deadline:
        time.sleep(0.05)
    assert not set(child_pids()) - before, "the DataLoader left child processes behind"
    left = [f for f in os.listdir("/dev/shm") if f.startswith(f"fw_dl_{os.getpid()}_")]
    assert not left, f"shared-memory files left behind: {left}"


class Squares(io.Dataset):
    def __init__(self, n, size=4):
        self.n, self.size = n, size

    def __getitem__(self, i):
        return np.full(self.size, i, np.float32), np.int64(i * i)

    def __len__(self):
        return self.n


# ---------------------------------------------------------------- main process
def test_batching_drop_last_and_len():
    ld = io.DataLoader(Squares(7), batch_size=3)
    assert len(ld) == 3
    batches = list(ld)
    assert [b[0].shape for b in batches] == [[3, 4], [3, 4], [1, 4]]
    assert batches[1][1].tolist() == [9, 16, 25]
    assert isinstance(batches[0][0], fw.Tensor) and batches[0][0].dtype == fw.float32
    ld = io.DataLoader(Squares(7), batch_size=3, drop_last=True)
    assert len(ld) == 2 and len(list(ld)) == 2


def test_shuffle_covers_everything_once():
    np.random.seed(0)
    seen = [int(v) for b in io.DataLoader(Squares(10), batch_size=4, shuffle=True)
            for v in b[0][:, 0].tolist()]
    assert sorted(seen) == list(range(10)) and seen != list(range(10))


def test_custom_collate_and_unbatched():
    ld = io.DataLoader(Squares(4), batch_size=2, collate_fn=lambda b: np.stack([x for x, _ in b]))
    assert [t.shape for t in ld] == [[2, 4], [2, 4]]
    single = list(io.DataLoader(Squares(3), batch_size=None))
    assert single[2][0].shape == [4] and int(single[2][1]) == 4


def test_batch_sampler_argument():
    bs = io.BatchSampler(sampler=io.SequenceSampler(Squares(5)), batch_size=2)
    ld = io.DataLoader(Squares(5), batch_sampler=bs)
    assert [b[1].tolist() for b in ld] == [[0, 1], [4, 9], [16]]
    with pytest.raises(ValueError, match="exclusive"):
        io.DataLoader(Squares(5), batch_sampler=bs, batch_size=3)


class Stream(io.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = io.get_worker_info()
        if info is None:
            lo, hi = 0, self.n
        else:  # shard: worker k takes every num_workers-th block
            per = int(np.ceil(self.n / info.num_workers))
            lo, hi = info.id * per, min(self.n, (info.id + 1) * per)
        for i in range(lo, hi):
            yield np.int64(i)


def test_iterable_dataset_main_process():
    out = [b.tolist() for b in io.DataLoader(Stream(7), batch_size=3)]
    assert out == [[0, 1, 2], [3, 4, 5], [6]]
    out = [b.tolist() for b in io.DataLoader(Stream(7), batch_size=3, drop_last=True)]
    assert out == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="shuffle"):
        io.DataLoader(Stream(3), shuffle=True)
    with pytest.raises(TypeError, match="no length"):
        len(io.DataLoader(Stream(3)))


# ---------------------------------------------------------------- workers
class Jitter(Squares):
    """Random small delays so workers finish out of order."""

    def __getitem__(self, i):
        time.sleep(0.002 * ((i * 7) % 5))
        return super().__getitem__(i)


def test_workers_deliver_in_order():
    ld = io.DataLoader(Jitter(23, size=20000), batch_size=2, num_workers=3, prefetch_factor=3)
    got = [b[1].tolist() for b in ld]
    assert got == [[i * i for i in range(j, min(j + 2, 23))] for j in range(0, 23, 2)]
    big = next(iter(io.DataLoader(Squares(4, size=30000), batch_size=4, num_workers=1)))
    assert big[0].shape == [4, 30000] and float(big[0][3, 0]) == 3.0


def test_without_shared_memory():
    ld = io.DataLoader(Squares(6, size=50000), batch_size=3, num_workers=2,
                       use_shared_memory=False)
    assert [b[1].tolist() for b in ld] == [[0, 1, 4], [9, 16, 25]]


_INIT = [None]


def _init(worker_id):
    _INIT[0] = 100 + worker_id


class WhoAmI(io.Dataset):
    def __getitem__(self, i):
        info = io.get_worker_info()
        init = -1 if _INIT[0] is None else _INIT[0]
        return np.array([info.id, init, os.getpid(), np.random.randint(0, 2**30),
                         info.seed], np.int64)

    def __len__(self):
        return 8


def test_worker_init_fn_info_and_seeds():
    rows = np.concatenate([b.numpy() for b in io.DataLoader(WhoAmI(), batch_size=2,
                                                             num_workers=2,
                                                             worker_init_fn=_init)])
    for wid, init, _, _, _ in rows:
        assert init == 100 + wid
    # batches alternate between the workers; their generators are seeded differently
    assert set(rows[:, 0]) == {0, 1}
    w0, w1 = rows[rows[:, 0] == 0], rows[rows[:, 0] == 1]
    assert w0[0, 4] != w1[0, 4] and w0[0, 3] != w1[0, 3]


def test_persistent_workers_are_reused():
    ld = io.DataLoader(WhoAmI(), batch_size=2, num_workers=2, persistent_workers=True)
    pids1 = {int(r[2]) for b in ld for r in b.numpy()}
    pids2 = {int(r[2]) for b in ld for r in b.numpy()}
    assert pids1 == pids2 and len(pids1) == 2
    workers = list(ld._iterator._workers)
    del ld
    import gc

    gc.collect()
    assert not any(p.is_alive() for p in workers)
    fresh = io.DataLoader(WhoAmI(), batch_size=2, num_workers=2)
    assert {int(r[2]) for b in fresh for r in b.numpy()} != pids1


def test_persistent_workers_survive_an_abandoned_epoch():
    ld = io.DataLoader(Squares(10), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(ld)
    next(it)  # leave the epoch early: its in-flight batches must be discarded
    assert [b[1].tolist() for b in ld] == [[0, 1], [4, 9], [16, 25], [36, 49], [64, 81]]
    ld._iterator._shutdown_workers()


def test_iterable_dataset_sharded_across_workers():
    got = [int(v) for b in io.DataLoader(Stream(10), batch_size=3, num_workers=2)
           for v in b.tolist()]
    assert sorted(got) == list(range(10))


def test_breaking_out_early_shuts_down_on_collection():
    import gc

    it = iter(io.DataLoader(Squares(100), batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    del it
    gc.collect()
    assert all(not p.is_alive() for p in workers)


# ---------------------------------------------------------------- failure modes
class Raises(Squares):
    def __getitem__(self, i):
        if i == 5:
            raise KeyError_(f"no sample {i}")
        return super().__getitem__(i)


class KeyError_(LookupError):
    pass


class Fails(Squares):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"sample {i} is corrupt")
        return super().__getitem__(i)


def test_exception_in_worker_is_reraised_with_traceback():
    with pytest.raises(ValueError) as info:
        list(io.DataLoader(Fails(10), batch_size=2, num_workers=2, timeout=10))
    msg = str(info.value)
    assert "DataLoader worker" in msg and "sample 5 is corrupt" in msg
    assert "Traceback" in msg and "__getitem__" in msg and "test_dataloader.py" in msg


def test_exception_of_a_user_type_becomes_runtime_error():
    with pytest.raises(RuntimeError, match=r"worker \d raised KeyError_: no sample 5"):
        list(io.DataLoader(Raises(10), batch_size=2, num_workers=2))


def test_exception_in_worker_init_fn():
    def bad_init(wid):
        raise OSError(f"cannot open shard for worker {wid}")

    with pytest.raises(OSError, match="cannot open shard for worker"):
        list(io.DataLoader(Squares(4), batch_size=2, num_workers=1, worker_init_fn=bad_init))


class Dies(Squares):
    def __init__(self, n, how):
        super().__init__(n)
        self.how = how

    def __getitem__(self, i):
        if i == 4:
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            else:
                os._exit(3)
        return super().__getitem__(i)


def test_killed_worker_is_detected():
    t0 = time.time()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \d \(pid \d+\) was killed by "
                                           r"SIGKILL"):
        list(io.DataLoader(Dies(10, "kill"), batch_size=2, num_workers=2))
    assert time.time() - t0 < 10


def test_worker_exiting_is_detected():
    with pytest.raises(RuntimeError, match=r"worker 0 \(pid \d+\) exited with exit code 3"):
        list(io.DataLoader(Dies(10, "exit"), batch_size=2, num_workers=1))


class Sleeps(Squares):
    def __getitem__(self, i):
        if i == 0:
            time.sleep(30)
        return super().__getitem__(i)


def test_timeout_names_batch_and_worker():
    t0 = time.time()
    with pytest.raises(RuntimeError, match=r"timed out after 1 s waiting for batch 0 from "
                                           r"worker 0"):
        list(io.DataLoader(Sleeps(4), batch_size=2, num_workers=2, timeout=1))
    assert time.time() - t0 < 8  # one second of waiting plus a bounded shutdown


class SlowAfterFirst(Squares):
    def __getitem__(self, i):
        if i >= 2:
            time.sleep(0.5)  # only the first batch exists when it is checked
        return super().__getitem__(i)


def test_shared_memory_need_is_checked(monkeypatch):
    class Usage:
        total, used, free = 10**9, 10**9 - 1000, 1000

    monkeypatch.setattr(dl_mod.shutil, "disk_usage", lambda path: Usage)
    with pytest.raises(RuntimeError) as info:
        list(io.DataLoader(SlowAfterFirst(8, size=40000), batch_size=2, num_workers=2,
                           prefetch_factor=2))
    msg = str(info.value)
    assert "not enough shared memory" in msg and "prefetch_factor=2" in msg
    assert "num_workers=2" in msg and "use_shared_memory=False" in msg and "MiB" in msg


def test_full_shared_memory_in_a_worker_is_an_error_not_a_crash(monkeypatch):
    import errno

    from fw.io import _shm

    def no_room(fd, off, n):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_shm.os, "posix_fallocate", no_room)
    with pytest.raises(RuntimeError, match="(?s)has no room.*\\(/dev/shm\\) is full"):
        list(io.DataLoader(Squares(4, size=40000), batch_size=2, num_workers=1))


def test_argument_errors():
    with pytest.raises(ValueError, match="num_workers"):
        io.DataLoader(Squares(2), num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers"):
        io.DataLoader(Squares(2), persistent_workers=True)
    with pytest.raises(ValueError, match="prefetch_factor"):
        io.DataLoader(Squares(2), num_workers=1, prefetch_factor=0)


def test_unbatched_samples_through_workers():
    got = list(io.DataLoader(Squares(3), batch_size=None, num_workers=2))
    assert [int(y) for _, y in got] == [0, 1, 4] and got[1][0].shape == [4]
    got = [int(v) for v in io.DataLoader(Stream(5), batch_size=None, num_workers=1)]
    assert got == [0, 1, 2, 3, 4]


def test_keyboard_interrupt_while_waiting_shuts_the_workers_down(monkeypatch):
    it = iter(io.DataLoader(Sleeps(4), batch_size=2, num_workers=2))
    workers = list(it._workers)

    def interrupted(timeout=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(it._result_queue, "get", interrupted)
    with pytest.raises(KeyboardInterrupt):
        next(it)
    assert it._shutdown and not any(p.is_alive() for p in workers)
