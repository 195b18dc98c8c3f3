"""Kernel half of `calibrate` (run as ``python _calib_kernels.py BUDGET DTYPES K`` with
OMP_NUM_THREADS=1; K: the FLOPs the cost model counts per transcendental element):
prints one JSON line of rates measured through fw's eager ops."""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np


def _sustained_time(fn, reps, min_time=0.0):
    """Seconds per call of `fn`, sustained: the mean over back-to-back calls (at
    least `reps`, and at least `min_time` seconds in all) after one warm-up call.
    The mean, not the median: a training step runs its ops back to back for tens of
    milliseconds, long enough to share the core with other jobs' timeslices and to
    find the caches disturbed by them, and the median of short calls would see an
    idle core instead."""
    fn()  # warm-up (first-call caches, oneDNN primitive creation)
    n, t0 = 0, time.perf_counter()
    t_end = t0 + min_time
    while n < reps or time.perf_counter() < t_end:
        fn()
        n += 1
        if n >= 50 * reps:
            break
    return (time.perf_counter() - t0) / n


def _slope(points):
    """Median of the pairwise slopes (Theil-Sen) of ``[(x, t)]``: one size slowed by a
    burst of load from other processes does not set the rate."""
    s = sorted((t2 - t1) / (x2 - x1) for i, (x1, t1) in enumerate(points)
               for x2, t2 in points[i + 1:] if x2 > x1)
    return statistics.median(s) if s else points[-1][1] / points[-1][0]


def main(budget, dtypes, transcendental):
    import fw
    import fw.nn as nn
    from fw.autograd import append_backward
    from fw.core.ir import TensorType, building

    reps = 3 if budget < 5 else 7
    big = budget >= 5
    sustain = 0.1 if big else 0.0  # seconds each sustained measurement runs at least
    out = {"matmul_flops": {}, "conv_flops": {}, "vector_flops": {}, "samples": {}}
    rng = np.random.default_rng(0)

    # per-op overhead of eager training: a tiny MLP's step / the ops of its traced step
    fw.seed(0)
    tiny = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(4, 4), nn.Tanh())])
    x = fw.to_tensor(rng.standard_normal((2, 4)).astype("float32"))

    def tiny_step():
        loss = tiny(x).mean()
        loss.backward()
        for p in tiny.parameters():
            p.clear_gradient()

    with building() as b:
        xi = b.add_input(TensorType([2, 4], "float32"), "x")
        loss = tiny(xi).mean()
        append_backward(loss)
        b.set_outputs(loss)
    n_ops = len(b.program.block.ops) + len(list(tiny.parameters()))  # + clear_gradient
    t = _sustained_time(tiny_step, 5 * reps, sustain)
    out["op_overhead"] = t / n_ops
    out["samples"]["overhead"] = {"ops": n_ops, "seconds": t}
    ovh = out["op_overhead"]

    # AdamW: per-parameter-tensor overhead (2 vs 18 tiny parameters)
    def opt_time(k):
        ps = [fw.create_parameter([4], "float32") for _ in range(k)]
        for p in ps:
            p.grad = fw.ones([4], "float32")
        opt = fw.optimizer.AdamW(learning_rate=1e-3, parameters=ps)
        return _sustained_time(opt.step, 3 * reps, sustain)

    t2, t18 = opt_time(2), opt_time(18)
    out["optimizer_overhead"] = max((t18 - t2) / 16, 0.0)
    out["samples"]["adamw"] = {"2": t2, "18": t18}

    # matmul per dtype over square sizes; the rate is the robust slope of time over FLOPs
    sizes = [64, 128, 256] + ([512] if big else [])
    for dt in dtypes:
        pts = []
        for n in sizes:
            a = fw.to_tensor(rng.standard_normal((n, n))).astype(dt)
            bm = fw.to_tensor(rng.standard_normal((n, n))).astype(dt)
            t = _sustained_time(lambda a=a, bm=bm: fw.matmul(a, bm), reps, sustain)
            pts.append([n, t])
        out["samples"][f"matmul_{dt}"] = pts
        out["matmul_flops"][dt] = 1.0 / max(_slope([(2 * n ** 3, t) for n, t in pts]), 1e-15)

    # convolution (float32): [8, 16, 32, 32] * [32, 16, 3, 3]
    xc = fw.to_tensor(rng.standard_normal((8, 16, 32, 32)).astype("float32"))
    wc = fw.to_tensor(rng.standard_normal((32, 16, 3, 3)).astype("float32"))
    import fw.nn.functional as F

    t = _sustained_time(lambda: F.conv2d(xc, wc, padding=1), reps, sustain)
    flops = 2 * 8 * 32 * 32 * 32 * 16 * 9
    out["conv_flops"]["float32"] = flops / max(t - ovh, t * 0.5)
    out["samples"]["conv_float32"] = t
    for dt in dtypes:
        if dt != "float32":  # convolutions in other dtypes: the matmul ratio
            out["conv_flops"][dt] = (out["conv_flops"]["float32"] * out["matmul_flops"][dt]
                                     / out["matmul_flops"]["float32"])

    # memory bandwidth: add of two large float32 arrays (2 reads + 1 write)
    n = (4 << 20) if big else (1 << 20)
    u = fw.to_tensor(rng.standard_normal(n).astype("float32"))
    v = fw.to_tensor(rng.standard_normal(n).astype("float32"))
    t = _sustained_time(lambda: u + v, reps, sustain)
    out["mem_bandwidth"] = 3 * 4 * n / max(t - ovh, t * 0.5)
    out["samples"]["add_bytes_seconds"] = [12 * n, t]

    # vector FLOP/s: exp (TRANSCENDENTAL FLOPs per element by the cost model's count)
    for dt in dtypes:
        w = fw.to_tensor(rng.standard_normal(n // 4)).astype(dt)
        t = _sustained_time(lambda w=w: fw.exp(w), reps, sustain)
        out["vector_flops"][dt] = transcendental * (n // 4) / max(t - ovh, t * 0.5)
        out["samples"][f"exp_{dt}"] = t
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(float(sys.argv[1]), [d for d in sys.argv[2].split(",") if d], int(sys.argv[3]))
