"""fw.distributed's all_reduce next to mpi4py's own Allreduce on NumPy buffers,
measured in the same run on the same ranks. Usage:

    python asv_bench/dist_side_by_side.py [--nranks 2] [--mb 64] [--repeat 9] [--json]

Re-launches itself under the mpich wheel's ``mpiexec -n NRANKS``. For each size
the methods run interleaved (one call each per round, a barrier before each), so
load on a shared machine hits them alike; the best and the median round are
reported as time and bus bandwidth (busbw = 2 (n-1)/n x bytes / time, the NCCL
tests' convention). Methods:

- ``mpi4py Allreduce``: ``comm.Allreduce(x, y)`` (out of place, blocking);
- ``mpi4py Allreduce IN_PLACE``: ``comm.Allreduce(MPI.IN_PLACE, x)``;
- ``fw all_reduce``: ``fw.distributed.all_reduce(t)`` (in place into the tensor's
  array, nonblocking + deadline poll, flight recorder, desync check);
- ``fw all_reduce (no desync check)``: the same with FW_DIST_DESYNC_CHECK=0.

The small sizes show the per-collective overhead of fw's machinery.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def _relaunch(args):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    cmd = [mpiexec, "-n", str(args.nranks), sys.executable, os.path.abspath(__file__),
           "--inner", "--mb", str(args.mb), "--repeat", str(args.repeat)]
    if args.json:
        cmd.append("--json")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "FW_"))}
    return subprocess.run(cmd, env=env, timeout=900).returncode


def _inner(args):
    import numpy as np

    import fw
    import fw.distributed as dist
    from fw.distributed.communication import _signature

    dist.init_parallel_env(timeout=300)
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    r, n = comm.Get_rank(), comm.Get_size()
    sizes = [4, 4096, 1 << 20, args.mb << 20]
    results = []
    for nbytes in sizes:
        results += _measure(comm, MPI, dist, fw, np, nbytes, args.repeat)
    assert _signature.enabled()
    if r == 0:
        if args.json:
            print(json.dumps({"nranks": n, "results": results}))
        else:
            print(f"all_reduce float32 on {n} ranks (best / median of {args.repeat} rounds)")
            print(f"{'bytes':>10} {'method':<34} {'best':>10} {'median':>10} {'busbw GB/s':>11}"
                  f" {'vs mpi4py':>9} {'vs IN_PLACE':>11}")
            by = {(e["bytes"], e["method"]): e for e in results}
            for e in results:
                ref = by[(e["bytes"], "mpi4py Allreduce")]["median_s"]
                ref_in = by[(e["bytes"], "mpi4py Allreduce IN_PLACE")]["median_s"]
                unit, scale = ("ms", 1e3) if e["bytes"] >= 1 << 20 else ("us", 1e6)
                print(f"{e['bytes']:>10} {e['method']:<34} "
                      f"{e['best_s'] * scale:>8.2f}{unit} {e['median_s'] * scale:>8.2f}{unit} "
                      f"{e['busbw_median_GBps']:>11.3f} {ref / e['median_s']:>8.1%} "
                      f"{ref_in / e['median_s']:>10.1%}")
    dist.barrier()


def _measure(comm, MPI, dist, fw, np, nbytes, repeat):
    n = comm.Get_size()
    count = nbytes // 4
    x = np.ones(count, np.float32)
    y = np.empty_like(x)
    t = fw.to_tensor(np.ones(count, np.float32))

    def m_out():
        comm.Allreduce(x, y)

    def m_in():
        comm.Allreduce(MPI.IN_PLACE, x)

    def f_on():
        dist.all_reduce(t)

    def f_off():
        os.environ["FW_DIST_DESYNC_CHECK"] = "0"
        try:
            dist.all_reduce(t)
        finally:
            del os.environ["FW_DIST_DESYNC_CHECK"]

    methods = [("mpi4py Allreduce", m_out), ("mpi4py Allreduce IN_PLACE", m_in),
               ("fw all_reduce", f_on), ("fw all_reduce (no desync check)", f_off)]
    inner = max(1, min(200, (4 << 20) // max(nbytes, 1)))   # calls per timing
    times = {name: [] for name, _ in methods}
    for _name, fn in methods:   # warm up
        fn()
    for _ in range(repeat):
        for name, fn in methods:
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            dt = (time.perf_counter() - t0) / inner
            times[name].append(comm.allreduce(dt, op=MPI.MAX))   # the slowest rank
    out = []
    for name, ts in times.items():
        ts.sort()
        best, med = ts[0], ts[len(ts) // 2]
        bus = 2 * (n - 1) / n * nbytes
        out.append({"bytes": nbytes, "method": name, "best_s": best, "median_s": med,
                    "busbw_best_GBps": bus / best / 1e9, "busbw_median_GBps": bus / med / 1e9})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nranks", type=int, default=2)
    p.add_argument("--mb", type=int, default=64)
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--json", action="store_true")
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.inner:
        _inner(args)
        return 0
    return _relaunch(args)


if __name__ == "__main__":
    sys.exit(main())
