"""The DataLoader failure matrix: every way a worker or the parent can fail ends
in bounded time, with an error naming the worker, the batch and sample indices
(and the worker's traceback for exceptions), and leaves no process and no
/dev/shm file behind.

Every test runs under a SIGALRM guard (`BOUND` seconds) that turns a hang into a
failure; the bound is a guard against hangs, not a speed assertion.
"""

import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest
from nn_testutil import child_pids

from fw import io
from fw.io import _shm

BOUND = 20  # seconds; a hang guard only
SIZE = 20000  # float32 elements per sample: 80 KB, so batches travel through /dev/shm


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _shm_files(pid):
    return [f for f in os.listdir("/dev/shm") if f.startswith(f"fw_dl_{pid}_")]


def _wait_until(cond, bound=BOUND, step=0.05):
    deadline = time.monotonic() + bound
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


@pytest.fixture(autouse=True)
def bounded_and_clean():
    before = set(child_pids(zombies=False))

    def hung(signum, frame):
        raise TimeoutError(f"the DataLoader hung for more than {BOUND} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, BOUND)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert _wait_until(lambda: not set(child_pids(zombies=False)) - before, bound=5), \
        "the DataLoader left child processes behind"
    assert not _shm_files(os.getpid()), "shared-memory files left behind"


# ---------------------------------------------------------------- datasets
class Data(io.Dataset):
    """Sample i is a SIZE-vector of i; sample `bad` misbehaves as `how` says."""

    def __init__(self, how=None, bad=5, n=12):
        self.how, self.bad, self.n = how, bad, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            if self.how == "raise":
                raise ValueError(f"sample {i} is corrupt")
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.how == "segfault":
                import ctypes

                ctypes.string_at(0)  # a crash in native code
            if self.how == "hang":
                time.sleep(60)
            if self.how == "unpicklable":
                return threading.Lock()
            if self.how == "bad str":
                raise BadStr()
            if self.how == "unloadable":
                return LoadFails()
            if self.how == "float64":
                return np.full(SIZE, i, np.float64)
        return np.full(SIZE, i, np.float32)


class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no text")


def _refuse_to_load():
    raise ValueError("this object refuses to be unpickled")


class LoadFails:
    """Pickles in the worker; unpickling it in the parent fails."""

    def __reduce__(self):
        return (_refuse_to_load, ())


class Stream(io.IterableDataset):
    def __iter__(self):
        for i in range(10):
            if i == 3:
                raise ValueError("record 3 is truncated")
            yield np.full(4, i, np.float32)


def keep(batch):
    return batch


def collate_fails(batch):
    if any(float(np.asarray(b).flat[0]) == 5 for b in batch):
        raise ValueError("cannot collate the batch holding sample 5")
    return np.stack(batch)


def init_fails(worker_id):
    if worker_id == 1:
        raise OSError(f"worker {worker_id} cannot open its shard")


# batch_size=2 over 2 workers: batch 2 = samples [4, 5] goes to worker 0
CASES = {
    "getitem raises": (dict(dataset=Data("raise")), ValueError,
                       [r"DataLoader worker 0 raised ValueError: sample 5 is corrupt",
                        r"loading sample 5", r"batch 2", r"sample indices \[4, 5\]",
                        r"Traceback in the worker process", r"__getitem__"]),
    "collate_fn raises": (dict(dataset=Data(), collate_fn=collate_fails), ValueError,
                          [r"worker 0 raised ValueError: cannot collate", r"running collate_fn",
                           r"batch 2", r"sample indices \[4, 5\]", r"in collate_fails"]),
    "worker_init_fn raises": (dict(dataset=Data(), worker_init_fn=init_fails), OSError,
                              [r"worker 1 raised OSError: worker 1 cannot open its shard",
                               r"running worker_init_fn", r"in init_fails"]),
    "unpicklable sample": (dict(dataset=Data("unpicklable"), collate_fn=keep), TypeError,
                           [r"worker 0 raised TypeError: cannot pickle '_thread.lock'",
                            r"pickling the batch", r"batch 2", r"sample indices \[4, 5\]",
                            r"must be picklable"]),
    "unpicklable unbatched sample": (dict(dataset=Data("unpicklable"), batch_size=None),
                                     TypeError,
                                     [r"worker 1 raised TypeError: cannot pickle",
                                      r"batch 5", r"sample indices 5"]),
    "batch cannot be unpickled in the parent": (
        dict(dataset=Data("unloadable"), collate_fn=keep), RuntimeError,
        [r"batch 2 \(sample indices \[4, 5\]\) from worker 0 \(pid \d+\) could not be "
         r"unpickled in the main process: ValueError: this object refuses to be unpickled"]),
    "exception whose str() fails": (dict(dataset=Data("bad str")), RuntimeError,
                                    [r"worker 0 raised BadStr: <BadStr whose str\(\) failed> "
                                     r"\(while loading sample 5, batch 2"]),
    "worker killed": (dict(dataset=Data("kill")), RuntimeError,
                      [r"DataLoader worker 0 \(pid \d+\) was killed by SIGKILL",
                       r"loading sample 5 \(index\) of batch 2",
                       r"batch 2 \(sample indices \[4, 5\]\)"]),
    "worker crashes in native code": (dict(dataset=Data("segfault")), RuntimeError,
                                     [r"worker 0 \(pid \d+\) was killed by SIGSEGV",
                                      r"loading sample 5 \(index\) of batch 2",
                                      r"Fatal Python error: Segmentation fault",
                                      r"line \d+ in __getitem__"]),
    "worker hangs, timeout set": (dict(dataset=Data("hang"), timeout=5), RuntimeError,
                                  [r"timed out after 5 s waiting for batch 2 from worker 0",
                                   r"sample indices \[4, 5\]",
                                   r"that worker is loading sample 5 \(index\) of batch 2",
                                   r"Python stack of worker 0 \(pid \d+",
                                   r"test_dataloader_failures.py\", line \d+ in __getitem__"]),
    "iterable dataset raises": (dict(dataset=Stream(), num_workers=1), ValueError,
                                [r"worker 0 raised ValueError: record 3 is truncated",
                                 r"loading sample 3 \(position in this worker's stream\)",
                                 r"batch 1"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_worker_failure_is_an_error_naming_worker_and_samples(case):
    kwargs, exc_type, patterns = CASES[case]
    kwargs = {"batch_size": 2, "num_workers": 2, **kwargs}
    with pytest.raises(exc_type) as info:
        for _ in io.DataLoader(**kwargs):
            pass
    msg = str(info.value)
    for pat in patterns:
        assert re.search(pat, msg), f"{pat!r} not in:\n{msg}"


def test_normal_epochs_leave_nothing_behind():
    for shm in (True, False):
        ld = io.DataLoader(Data(), batch_size=2, num_workers=2, use_shared_memory=shm)
        assert [float(b[1, 0]) for b in ld] == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]


class Keyed(io.Dataset):
    """Samples looked up by string keys (a custom sampler yields the keys)."""

    def __getitem__(self, key):
        if key == "bad":
            raise KeyError(key)
        return np.full(3, len(key), np.float32)

    def __len__(self):
        return 4


def test_non_integer_sample_keys_are_named():
    keys = [["a", "bb"], ["ccc", "dddd"]]
    got = [b[:, 0].tolist() for b in io.DataLoader(Keyed(), batch_sampler=keys, num_workers=1)]
    assert got == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match=r"(?s)raised KeyError: 'bad' \(while loading sample "
                                           r"bad, batch 1, sample indices \[x, bad\]\)"):
        list(io.DataLoader(Keyed(), batch_sampler=[["a"], ["x", "bad"]], num_workers=1))


def test_early_break_with_a_hung_worker_and_batches_in_flight():
    ld = io.DataLoader(Data("hang", bad=7), batch_size=2, num_workers=2, prefetch_factor=2)
    for _ in ld:
        break  # the iterator is collected here: workers stop, in-flight shm is removed


def test_second_ctrl_c_during_shutdown_still_stops_the_workers(monkeypatch):
    it = iter(io.DataLoader(Data("hang", bad=0), batch_size=2, num_workers=2))
    workers = list(it._workers)

    def interrupted(timeout=None):
        monkeypatch.undo()  # once
        raise KeyboardInterrupt

    monkeypatch.setattr(workers[0], "join", interrupted)  # Ctrl-C in the grace period
    with pytest.raises(KeyboardInterrupt):
        it._shutdown_workers()
    assert _wait_until(lambda: not any(p.is_alive() for p in workers), bound=5)
    for p in workers:
        p.join(timeout=5)


class DataWarning(UserWarning):
    pass


class Warns(Data):
    def __getitem__(self, i):
        if i == 3:
            warnings.warn("sample 3 looks odd", DataWarning, stacklevel=1)
        return super().__getitem__(i)


def test_warnings_in_workers_reach_the_parent_with_their_category():
    with pytest.warns(DataWarning, match="sample 3 looks odd") as rec:
        assert len(list(io.DataLoader(Warns(), batch_size=2, num_workers=2))) == 6
    assert len(rec) == 1 and rec[0].filename == __file__


def test_collate_promotes_mixed_dtypes_with_a_warning():
    # as Paddle (np.stack): the batch is float64, but a warning names the odd sample
    batches = []
    with pytest.warns(UserWarning, match="sample 1 of the batch has dtype float64 but sample 0 "
                                         "has float32; the batch is promoted to float64"):
        batches = list(io.DataLoader(Data("float64"), batch_size=2))
    assert [str(b.dtype) for b in batches] == ["fw.float32"] * 2 + ["fw.float64"] + \
        ["fw.float32"] * 3
    assert float(batches[2][1, 0]) == 5.0
    # with workers, the warning is re-emitted in the parent (not lost on their stderr)
    with pytest.warns(UserWarning, match="sample 1 of the batch has dtype float64") as rec:
        batches = list(io.DataLoader(Data("float64"), batch_size=2, num_workers=2))
    assert str(batches[2].dtype) == "fw.float64" and rec[0].category is UserWarning
    with pytest.warns(UserWarning, match="sample 2 of the batch has dtype int64"):
        out = io.default_collate_fn([np.ones(2, np.float32), np.ones(2, np.float32),
                                     np.ones(2, np.int64)])
    assert str(out.dtype) == "fw.float64"


def test_files_of_loaders_gone_with_their_workers_are_swept(monkeypatch):
    # a loader whose lock file is free (its parent and workers all died at once)
    # loses its files; one whose lock is held keeps them, whatever the pids say
    import fcntl

    dead, live = "fw_dl_999999999_0_", "fw_dl_999999998_0_"
    paths = [f"/dev/shm/{p}{s}" for p in (dead, live) for s in ("lock", "0_1_0")]
    for path in paths:
        with open(path, "wb") as f:
            f.write(b"x")
    fd = os.open(f"/dev/shm/{live}lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        monkeypatch.setattr(_shm, "_swept", False)
        _shm.sweep_stale()
        assert [os.path.exists(p) for p in paths] == [False, False, True, True]
    finally:
        os.close(fd)
        for path in paths:
            if os.path.exists(path):
                os.unlink(path)


def test_a_running_loader_holds_its_lock():
    it = iter(io.DataLoader(Data(), batch_size=2, num_workers=1))
    next(it)
    lock = f"/dev/shm/fw_dl_{it._tag}_lock"
    assert os.path.exists(lock)
    _shm._swept = False
    _shm.sweep_stale()  # must not touch a live loader
    assert os.path.exists(lock)
    assert [float(b[0, 0]) for b in it] == [2.0, 4.0, 6.0, 8.0, 10.0]
    assert not os.path.exists(lock)


# ---------------------------------------------------------------- the parent dies
PARENT = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from fw import io

    class D(io.Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            if i in (8, 9):  # batch 4, worker 0's third batch: it hangs there
                time.sleep(120)
            return np.full(20000, i, np.float32)

    it = iter(io.DataLoader(D(), batch_size=2, num_workers=2, prefetch_factor=2))
    next(it)
    print(" ".join(str(p.pid) for p in it._workers), flush=True)
    if sys.argv[1] == "wait":  # waiting for the hung batch 4 when Ctrl-C comes
        for _ in it:
            pass
    time.sleep(120)  # batches 1-3 wait in /dev/shm
""")


def _run_parent(mode, sig, group=False):
    p = subprocess.Popen([sys.executable, "-c", PARENT, mode], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=group)
    try:
        ready, _, _ = select.select([p.stdout], [], [], BOUND)
        assert ready, "the parent script did not start"
        workers = [int(w) for w in p.stdout.readline().split()]
        assert len(workers) == 2, p.stderr.read()
        # batches 1..3 were prefetched into shared memory
        assert _wait_until(lambda: _shm_files(p.pid), bound=10)
        time.sleep(0.3)  # let the parent reach its wait
        if group:  # the parent and its workers at once: nobody can clean up
            os.killpg(p.pid, sig)
        else:
            os.kill(p.pid, sig)
        p.wait(timeout=BOUND)
        assert _wait_until(lambda: not any(_alive(w) for w in workers), bound=10), \
            "workers outlived their parent"
        def gone():
            if group:  # files are left behind until a loader starts (in any process:
                # on a shared machine another one may already have swept them). The
                # sweep is retried: the killed processes' lock can outlive their
                # /proc entries by a moment while the kernel tears them down.
                _shm._swept = False
                _shm.sweep_stale()
            return not _shm_files(p.pid)

        assert _wait_until(gone, bound=10), \
            f"shared memory of the dead parent left: {_shm_files(p.pid)}"
        return p.returncode, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()


def test_parent_sigkill_workers_exit_and_shared_memory_is_removed():
    code, _ = _run_parent("sleep", signal.SIGKILL)
    assert code == -signal.SIGKILL


def test_whole_process_group_sigkilled_files_are_swept_by_the_next_loader():
    code, _ = _run_parent("sleep", signal.SIGKILL, group=True)
    assert code == -signal.SIGKILL


def test_parent_ctrl_c_while_waiting_stops_workers_and_removes_shared_memory():
    code, err = _run_parent("wait", signal.SIGINT)
    assert code != 0 and "KeyboardInterrupt" in err
