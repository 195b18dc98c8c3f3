"""Run on 2 ranks with a mode: each failure must become an error that names the
ranks and ops involved, never a hang. Ranks print
``RESULT <rank> <seconds> <error type> <missing ranks> | <message>`` (newlines in
the message as ``\\n``) and exit 3 after an error, 0 otherwise."""
import os
import signal
import sys
import time

from _emit import emit

import fw
import fw.distributed as dist
from fw.distributed.communication._world import state

MODE = sys.argv[1]
TIMEOUT = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
dist.init_parallel_env(timeout=TIMEOUT)
R = dist.get_rank()
x = fw.ones([4])
dist.all_reduce(x)
dist.barrier()


def report(t0, exc):
    msg = str(exc).replace("\n", "\\n")
    missing = ",".join(map(str, getattr(exc, "missing", []))) or "-"
    emit("RESULT", R, f"{time.time() - t0:.2f} {type(exc).__name__} {missing} | {msg}")


if MODE == "raise" and R == 1:
    # uncaught: the rank must exit at once (not wait for rank 0 in MPI_Finalize)
    raise ValueError("boom on rank 1")
if MODE == "exit" and R == 1:
    # SystemExit skips the excepthook: the exit rendezvous sees rank 0 waiting
    sys.exit(2)

t0 = time.time()
try:
    if MODE in ("raise", "exit"):
        dist.all_reduce(x)
    elif MODE == "sleep":
        if R == 1:
            time.sleep(TIMEOUT + 20)
        task = dist.all_reduce(x, sync_op=False)     # an async handle times out too
        assert not task.is_completed()
        task.wait()
    elif MODE == "stale":
        if R == 1:       # a rank that stops publishing: dead, or stuck holding the GIL
            time.sleep(0.5)                  # its last record (the barrier) is out
            state.publisher.stop.set()
            state.publisher.join(timeout=10)
            time.sleep(TIMEOUT + 20)
        dist.all_reduce(x)
    elif MODE == "p2p_timeout":
        if R == 1:
            time.sleep(TIMEOUT + 20)
        dist.recv(fw.zeros([2]), src=1)
    elif MODE == "shape":
        dist.all_reduce(fw.ones([4 + R]))
    elif MODE == "order":
        if R == 0:
            dist.all_reduce(fw.ones([4]))
            dist.broadcast(fw.ones([4]), src=0)
        else:
            dist.broadcast(fw.ones([4]), src=0)
            dist.all_reduce(fw.ones([4]))
    elif MODE == "p2p_shape":
        if R == 0:
            dist.send(fw.ones([4]), dst=1)
            time.sleep(1.0)
        else:
            dist.recv(fw.zeros([3]), src=0)
    elif MODE in ("kill_reported", "kill_silent"):
        big = fw.ones([4 * 1024 * 1024])
        if R == 1:
            dist.all_reduce(big, sync_op=False)
            time.sleep(0.5)          # its progress record is published
            if MODE == "kill_reported":   # what the fw launcher does when a rank dies
                state.store.set(state.key("dead", 1), "signal SIGKILL")
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(1.0)
        dist.all_reduce(big)
    elif MODE in ("dp_shm_sleep", "dp_shm_desync"):
        # DataParallel's shared-memory buckets wait through the same deadline
        import fw.nn as nn

        fw.seed(0)
        dp = fw.DataParallel(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)))
        assert dp._reducer.shm is not None, "the shared-memory path is not in use"
        if R == 1:
            if MODE == "dp_shm_sleep":
                time.sleep(TIMEOUT + 20)
            else:  # one op more than rank 0 on the group before the buckets
                dist.all_reduce(fw.ones([4]), sync_op=False)
        dp(fw.ones([2, 8])).sum().backward()
    else:
        raise SystemExit(f"unknown mode {MODE}")
    emit("RESULT", R, f"{time.time() - t0:.2f} none - | no error")
except Exception as exc:  # noqa: BLE001
    report(t0, exc)
    # the communicators are unusable now: the next op says so at once
    t1 = time.time()
    try:
        dist.barrier()
    except Exception as exc2:  # noqa: BLE001
        emit("AFTER", R, f"{time.time() - t1:.2f} {type(exc2).__name__}")
    sys.exit(3)
