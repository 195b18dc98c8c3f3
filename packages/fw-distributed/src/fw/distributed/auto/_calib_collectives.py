"""Collective half of `calibrate`: run under fw's launcher
(``python -m fw.distributed.launch --nproc_per_node N _calib_collectives.py OUT BUDGET MODE``).

MODE "collectives" (2 ranks): times each collective of the public API over a few
message sizes (the fastest of the repeats, ranks aligned by a barrier before each
call: the engine's own cost; waiting for a peer that the OS preempted is the
contention term's part, measured below).
Both modes then time the *lockstep chunk*: every rank runs the same fixed compute
(8 float32 matmuls of 256 x 256) between barriers, as training ranks do between
collectives; on a machine shared with other jobs (or with more ranks than cores)
that takes longer than one process alone. Rank 0 writes ``{op: [[bytes,
seconds], ...], "lockstep": seconds}`` as JSON to OUT."""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np


def lockstep_chunk():
    """The fixed compute whose time alone and in lockstep `calibrate` compares."""
    import fw

    a = fw.ones([256, 256], "float32")

    def chunk():
        for _ in range(8):
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
    chunk = lockstep_chunk()
    chunk()
    ts = []
    dist.barrier()
    for _ in range(15 if budget < 10 else 31):
        t = time.perf_counter()
        chunk()
        dist.barrier()
        ts.append(time.perf_counter() - t)
    res["lockstep"] = statistics.median(ts)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(res, f, sort_keys=True)
    dist.barrier()


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3])
