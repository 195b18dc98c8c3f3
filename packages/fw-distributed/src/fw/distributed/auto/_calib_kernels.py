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


def _tiny_mlp():
    import fw.nn as nn

    return nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(4, 4), nn.Tanh())])


def _TinyBlock(v=8, d=8, h=2):
    """A one-block causal transformer LM of width `d` (`h` heads, vocabulary `v`): at
    width 8, the op mix of GPT training at a size where every op is dispatch and
    autograd bookkeeping."""
    import fw
    import fw.nn as nn
    import fw.nn.functional as F

    class Block(nn.Layer):
        def __init__(self, v=8, d=8, h=2):
            super().__init__()
            self.v, self.d, self.h = v, d, h
            self.emb = nn.Embedding(v, d)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.act = nn.GELU()
            self.head = nn.Linear(d, v)

        def forward(self, ids, y):
            b, t = ids.shape
            x = self.emb(ids)
            q, k, v = fw.split(self.qkv(self.ln1(x)), 3, axis=-1)
            q, k, v = (z.reshape([b, t, self.h, self.d // self.h]) for z in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.reshape([b, t, self.d]))
            x = x + self.fc2(self.act(self.fc1(self.ln2(x))))
            logits = self.head(x)
            return F.cross_entropy(logits.reshape([-1, self.v]), y.reshape([-1]))

    return Block(v, d, h)


def main(budget, dtypes, transcendental):
    import fw
    from fw.autograd import append_backward
    from fw.core.ir import TensorType, building

    reps = 3 if budget < 5 else 7
    big = budget >= 5
    sustain = 0.1 if big else 0.0  # seconds each sustained measurement runs at least
    out = {"matmul_flops": {}, "conv_flops": {}, "vector_flops": {}, "samples": {}}
    rng = np.random.default_rng(0)

    # per-op overhead of eager training: tiny models' steps / the ops of their traced
    # steps. Two op mixes (an MLP of linear + tanh, and a transformer block: embedding,
    # layer norms, reshapes, causal attention, GELU, cross-entropy), timed in turn
    # (interleaved, so a burst of other jobs' load hits both), the median of each
    x = fw.to_tensor(rng.standard_normal((2, 4)).astype("float32"))
    ids = fw.to_tensor(rng.integers(0, 8, (1, 4)).astype("int64"))
    mixes = []
    for make, args, specs, loss_of in (
            (_tiny_mlp, (x,), [TensorType([2, 4], "float32")], lambda m, a: m(a).mean()),
            (_TinyBlock, (ids, ids), [TensorType([1, 4], "int64")] * 2,
             lambda m, a, b: m(a, b))):
        fw.seed(0)
        model = make()

        def tiny_step(model=model, args=args, loss_of=loss_of):
            loss_of(model, *args).backward()
            for p in model.parameters():
                p.clear_gradient()

        with building() as b:
            xs = [b.add_input(t, f"x{i}") for i, t in enumerate(specs)]
            loss = loss_of(model, *xs)
            append_backward(loss)
            b.set_outputs(loss)
        n_ops = len(b.program.block.ops) + len(list(model.parameters()))  # + clear_gradient
        tiny_step()
        mixes.append((tiny_step, n_ops, []))
    for _ in range(5 * reps):
        for fn, _, ts in mixes:
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    meds = [statistics.median(ts) for _, _, ts in mixes]
    n_all = sum(n for _, n, _ in mixes)
    out["op_overhead"] = sum(meds) / n_all
    out["samples"]["overhead"] = {"ops": n_all, "seconds": sum(meds),
                                  "per_mix": [[n, m] for (_, n, _), m in zip(mixes, meds)]}
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

    # batched matmul (float32): stacks of attention-sized products [B, 64, 32] @ [B, 32, 64]
    # (one small GEMM per slice); the rate is the slope over the stack depth
    pts = []
    for nb in (16, 32, 64) if big else (8, 16):
        a = fw.to_tensor(rng.standard_normal((nb, 64, 32)).astype("float32"))
        bm = fw.to_tensor(rng.standard_normal((nb, 32, 64)).astype("float32"))
        t = _sustained_time(lambda a=a, bm=bm: fw.matmul(a, bm), reps, sustain)
        pts.append([nb, t])
    out["samples"]["bmm_float32"] = pts
    bmm32 = 1.0 / max(_slope([(2 * nb * 64 * 32 * 64, t) for nb, t in pts]), 1e-15)
    # other dtypes: the large-matmul ratio to float32
    out["bmm_flops"] = {dt: bmm32 * out["matmul_flops"][dt] / out["matmul_flops"]["float32"]
                        for dt in dtypes}

    # scatter-add (index_add, the embedding gradient): rows of 128 float32 added into a
    # [64, 128] table; bytes/s of the added values, the slope over the row count
    table = fw.to_tensor(np.zeros((64, 128), "float32"))
    pts = []
    for rows in (512, 2048) if big else (256, 1024):
        idx = fw.to_tensor(rng.integers(0, 64, rows).astype("int64"))
        val = fw.to_tensor(rng.standard_normal((rows, 128)).astype("float32"))
        t = _sustained_time(lambda idx=idx, val=val: fw.index_add(table, idx, 0, val), reps,
                            sustain)
        pts.append([rows * 128 * 4 + rows * 8, t])
    out["samples"]["index_add_bytes_seconds"] = pts
    out["scatter_bandwidth"] = 1.0 / max(_slope(pts), 1e-15)

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
