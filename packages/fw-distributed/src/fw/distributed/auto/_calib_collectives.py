"""Collective half of `calibrate`: run under fw's launcher
(``python -m fw.distributed.launch --nproc_per_node N _calib_collectives.py OUT BUDGET MODE``).

MODE "collectives" (2 ranks): times each collective of the public API over a few
message sizes (the median of the repeats, ranks aligned by a barrier before each
call: the engine's own cost as it usually is; waiting for a peer that is still
computing is the sync wait's part, measured below).
Both modes then measure the *contention*: a fixed compute chunk (two eager
training steps of a small MLP, `lockstep_chunk`) run by rank 0 alone (the others
asleep) and by every rank in lockstep (barriers between chunks, as training ranks
meet at collectives), interleaved round by round; on a machine shared with other
jobs, or with more ranks than cores, the lockstep chunk takes longer. Rank 0 writes ``{op: [[bytes,
seconds], ...], "contention": lockstep / alone, "sync_wait": s, "sync_chunk": s}``
as JSON to OUT
(``sync_wait``: the mean wait of a rank at the barrier after its lockstep chunk, less
an aligned barrier's cost — what a blocking collective adds after a stretch of
training work, beyond the engine's own cost).

The same lockstep is measured with a short chunk too (one eager step of a net an
eighth the size: the work between two tensor-parallel collectives), interleaved
with the long one, so the wait is known as a function of the work before it
(``sync_wait_short``, ``sync_chunk_short``; `Cluster.sync_cost` fits a line).

Finally fw's own ``DataParallel`` is timed: an eager training step of nets with
1 MB and 4 MB of float32 gradients in 4 tensors and 0.4 MB in 24, wrapped and
not wrapped, interleaved, in
lockstep on every rank; the medians' difference is what DataParallel adds per
step (copies into and out of its buckets, the bucket all-reduces, the used-
parameter mask's all-reduce, the progress thread, the waits) and goes into
``dp_sync`` as ``[[gradient bytes, tensors, seconds], ...]``."""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np


def lockstep_chunk():
    """The fixed compute whose time alone and in lockstep `calibrate` compares: an
    eager training step (forward, backward, gradients cleared) of a small MLP,
    i.e. the mix of matmuls, elementwise passes over activations, allocation and
    Python dispatch that a training rank runs — two ranks sharing the caches and
    the memory bus slow each other on that more than on a cache-resident matmul."""
    import numpy as np

    import fw
    import fw.nn as nn

    fw.seed(0)
    net = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512))
    x = fw.to_tensor(np.ones((128, 512), "float32"))

    # ~0.8 GFLOP and ~20 MB of activations per chunk (tens of ms): long against a
    # barrier's cost, so the ratio measures the sharing, not the synchronisation
    def chunk():
        for _ in range(2):
            net(x).mean().backward()
            for p in net.parameters():
                p.clear_gradient()

    return chunk


def _net(d_in, d_hidden):
    import fw
    import fw.nn as nn

    fw.seed(0)
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_in))


def short_chunk():
    """An eighth of `lockstep_chunk`'s work: one step of a [64, 256] x 256-512-256 MLP."""
    import fw

    net = _net(256, 512)
    x = fw.to_tensor(np.ones((64, 256), "float32"))

    def chunk():
        net(x).mean().backward()
        for p in net.parameters():
            p.clear_gradient()

    return chunk


def dp_overhead(dist, reps):
    """``[[gradient bytes, parameter tensors, seconds DataParallel adds to a step],
    ...]`` for three nets (1 MB in 4 tensors, 4 MB in 4, 0.4 MB in 24: bytes and
    tensor count vary independently), each the median over `reps` interleaved
    wrapped / plain steps in lockstep."""
    import fw
    import fw.nn as nn

    def deep():
        fw.seed(0)
        return nn.Sequential(*[m for _ in range(12) for m in (nn.Linear(64, 64), nn.ReLU())])

    out = []
    for make, d_in in ((lambda: _net(256, 512), 256), (lambda: _net(512, 1024), 512),
                       (deep, 64)):
        plain = make()
        wrapped = fw.DataParallel(make())
        x = fw.to_tensor(np.ones((64, d_in), "float32"))
        params = list(plain.parameters())
        nbytes = 4 * sum(int(np.prod(p.shape)) for p in params)

        def step(net, x=x):
            net(x).mean().backward()
            for p in net.parameters():
                p.clear_gradient()

        step(plain)
        step(wrapped)
        tp, tw = [], []
        for _ in range(reps):
            for net, ts in ((plain, tp), (wrapped, tw)):
                dist.barrier()
                t = time.perf_counter()
                step(net)
                dist.barrier()   # both variants end at a barrier: its cost cancels
                ts.append(time.perf_counter() - t)
        out.append([nbytes, len(params), max(statistics.median(tw) - statistics.median(tp),
                                             0.0)])
    return out


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
        # the median, not the fastest: a training step's collectives meet the engine
        # as it usually is (its copies share the cores with other work), not at best
        return statistics.median(ts[1:])

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
    short = short_chunk()
    short()
    alone, together, waits = [], [], []
    s_together, s_waits = [], []
    for _ in range(7 if budget < 10 else 40):
        dist.barrier()
        t = time.perf_counter()
        short()
        t1 = time.perf_counter()
        dist.barrier()
        s_together.append(t1 - t)
        s_waits.append(time.perf_counter() - t1)
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
        t1 = time.perf_counter()
        dist.barrier()
        t2 = time.perf_counter()
        together.append(t1 - t)      # the chunk itself: the wait is sync_wait's
        waits.append(t2 - t1)
    # the wait at a synchronising collective after a chunk of training work: the
    # peers finish their equal work at different times (timeslices, caches), the
    # mean over the ranks of each one's mean wait (the waits of a step add up, and
    # they are heavy-tailed: a median would miss the preempted rounds), less an
    # aligned barrier's cost
    aligned = []
    for _ in range(5):
        dist.barrier()
        t = time.perf_counter()
        dist.barrier()
        aligned.append(time.perf_counter() - t)
    mine = [max(statistics.mean(waits) - min(aligned), 0.0),
            max(statistics.mean(s_waits) - min(aligned), 0.0)]
    w = fw.to_tensor(np.array(mine, "float64"))
    dist.all_reduce(w)
    dp = dp_overhead(dist, 5 if budget < 10 else 15)
    if rank == 0:
        res["sync_wait_short"] = float(w.numpy()[1]) / world
        res["sync_chunk_short"] = statistics.median(s_together)
        res["dp_sync"] = dp
        res["contention"] = max(statistics.median(together) / statistics.median(alone), 1.0)
        res["sync_wait"] = float(w.numpy()[0]) / world
        res["sync_chunk"] = statistics.median(together)   # the work before each wait
        with open(out_path, "w") as f:
            json.dump(res, f, sort_keys=True)
    dist.barrier()


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3])
