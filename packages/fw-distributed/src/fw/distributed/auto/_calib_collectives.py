"""Collective half of `calibrate`: run under fw's launcher
(``python -m fw.distributed.launch --nproc_per_node N _calib_collectives.py OUT BUDGET MODE``).

MODE "collectives" (2 ranks): times each collective of the public API over a few
message sizes (the fastest of the repeats, ranks aligned by a barrier before each
call: the engine's own cost; waiting for a peer that the OS preempted is the
contention term's part, measured below).
Both modes then measure the *contention*: a fixed compute chunk (4 float32
matmuls of 512 x 512) run by rank 0 alone (the others asleep) and by every rank in
lockstep (barriers between chunks, as training ranks meet at collectives),
interleaved round by round; on a machine shared with other jobs, or with more
ranks than cores, the lockstep chunk takes longer. Rank 0 writes ``{op: [[bytes,
seconds], ...], "contention": lockstep / alone}`` as JSON to OUT."""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np


def lockstep_chunk():
    """The fixed compute whose time alone and in lockstep `calibrate` compares."""
    import fw

    # ~1 GFLOP (tens of ms): long against a barrier's cost on a loaded machine, so the
    # ratio measures the sharing of the cores, not the synchronisation
    a = fw.ones([512, 512], "float32")

    def chunk():
        for _ in range(4):
            fw.matmul(a, a)

    return chunk


def main(out_path, budget, mode):
    import fw
    import fw.distributed as dist

    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes = [256, 16 << 10, 256 << 10, 2 << 20]
    if budget >= 10:
        sizes.append(8 << 20)
    reps = 5 if budget < 10 else 9
    res = {}

    def timed(fn):
        ts = []
        for _ in range(reps + 1):
            dist.barrier()
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return min(ts[1:])

    for nbytes in (sizes if mode == "collectives" else ()):
        n = nbytes // 4
        x = fw.to_tensor(np.ones(n, "float32"))
        half = fw.to_tensor(np.ones(n // world, "float32"))
        outs = []
        parts = [fw.to_tensor(np.ones(n // world, "float32")) for _ in range(world)]
        res.setdefault("all_reduce", []).append([nbytes, timed(lambda x=x: dist.all_reduce(x))])
        res.setdefault("all_gather", []).append(
            [nbytes, timed(lambda o=outs, h=half: dist.all_gather(o, h) or o.clear())])
        res.setdefault("reduce_scatter", []).append(
            [nbytes, timed(lambda h=half, ps=parts: dist.reduce_scatter(h, ps))])
        res.setdefault("broadcast", []).append([nbytes, timed(lambda x=x: dist.broadcast(x, 0))])
        res.setdefault("reduce", []).append([nbytes, timed(lambda x=x: dist.reduce(x, 0))])

        def p2p(x=x):
            if rank == 0:
                dist.send(x, 1)
            elif rank == 1:
                dist.recv(x, 0)

        res.setdefault("send_recv", []).append([nbytes, timed(p2p)])
    # contention: alone and in lockstep, interleaved round by round so that a change
    # of the machine's load between the two measurements cannot fake a ratio. "Alone":
    # rank 0 computes while the other ranks sleep (not spin in a wait) long enough
    chunk = lockstep_chunk()
    chunk()
    t = time.perf_counter()
    chunk()
    nap = 3 * (time.perf_counter() - t) + 0.002
    alone, together = [], []
    for _ in range(7 if budget < 10 else 15):
        dist.barrier()
        if rank == 0:
            t = time.perf_counter()
            chunk()
            alone.append(time.perf_counter() - t)
        else:
            time.sleep(nap)
        dist.barrier()
        t = time.perf_counter()
        chunk()
        dist.barrier()
        together.append(time.perf_counter() - t)
    if rank == 0:
        res["contention"] = max(statistics.median(together) / statistics.median(alone), 1.0)
        with open(out_path, "w") as f:
            json.dump(res, f, sort_keys=True)
    dist.barrier()


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3])
