"""Where the time of one training step goes, op by op.

    python asv_bench/profile_step.py mlp|lenet|transformer [--steps N] [--cprofile K]

Wraps every op's cpu kernel with a timer, runs the step of
benchmarks/bench_training.py, and prints the step time, the time spent inside
kernels (per op, with call counts) and the rest ("other": dispatch, autograd,
optimizer bookkeeping, layer calls). With --cprofile K it also prints the K
functions with the most own time under cProfile. Profile before optimising.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["mlp", "lenet", "transformer"])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--cprofile", type=int, default=0)
    args = ap.parse_args(argv)

    from benchmarks.bench_training import fw_step

    from fw.core.ops import OPS

    step = fw_step(args.model)
    for _ in range(10):
        step()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(args.steps):
            step()
        best = min(best, (time.perf_counter() - t) / args.steps)

    acc, cnt = collections.defaultdict(float), collections.Counter()
    clock = time.perf_counter

    def timed(name, kernel):
        def run(*a, **kw):
            t0 = clock()
            r = kernel(*a, **kw)
            acc[name] += clock() - t0
            cnt[name] += 1
            return r

        return run

    saved = {name: dict(op.kernels) for name, op in OPS.items()}
    for name, op in OPS.items():
        op.kernels["cpu"] = timed(name, op.kernels.get("cpu") or op.reference)
    try:
        step()
        acc.clear()
        cnt.clear()
        t = clock()
        for _ in range(args.steps):
            step()
        wall = (clock() - t) / args.steps
    finally:
        for name, op in OPS.items():
            op.kernels.clear()
            op.kernels.update(saved[name])
    inside = sum(acc.values()) / args.steps
    print(f"{args.model}: best step {best * 1e3:.3f} ms; instrumented {wall * 1e3:.3f} ms = "
          f"kernels {inside * 1e3:.3f} ms + other {(wall - inside) * 1e3:.3f} ms")
    print("note: attribution misses the specialised unary/binary fast paths (their kernels "
          "are bound at import)")
    for name, v in sorted(acc.items(), key=lambda kv: -kv[1]):
        print(f"  {name:36s} {v / args.steps * 1e6:9.1f} us  x{cnt[name] // args.steps}")
    if args.cprofile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.steps):
            step()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.cprofile)


if __name__ == "__main__":
    main()
