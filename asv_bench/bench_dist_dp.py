r"""DataParallel scaling: N ranks x 1 thread vs 1 rank x 1 thread on the MLP and LeNet
training steps of benchmarks/bench_training.py (weak scaling: every rank trains on
its own batch of the benchmark's size, so N ranks process N times the samples per
step).

    python asv_bench/bench_dist_dp.py [--models mlp lenet] [--ranks 2] [--steps 30]
                                      [--rounds 3] [--json out.json]

Each configuration runs under ``mpiexec`` (the mpich wheel's hydra) with
``OMP_NUM_THREADS=1`` and fw's native kernels on one thread
(``fw.core.internal.native().set_num_threads(1)``). 1-rank and N-rank runs alternate
``--rounds`` times, interleaved, and the medians are reported, since the
machine may be shared. Reported: step time, throughput (samples/s), speed-up and
efficiency (speed-up / N), and, from one profiled step of the N-rank run, the
bucket timeline: when each bucket's all-reduce was launched and seen complete
relative to the end of backward — the overlap of communication with backward.

On a quiet machine, the whole check in two commands (about 10 minutes on 2 cores)::

    python asv_bench/bench_dist_dp.py --ab --rounds 5 --steps 40 \
        --configs mpi mpi-ops shm shm@64 --json ab.json
    python asv_bench/bench_dist_dp.py --rounds 3 --variants mpi mpi-ops mpi-nocma \
        mpi-nocma-cells mpich-async one-bucket --trace dp_trace --json dp.json

The first trains DataParallel configurations side by side in one job per round
(steps alternating, so a change of the machine's load hits all alike; `AB_CONFIGS`:
the MPI all-reduce path with its progress thread, with progress from the autograd
engine, the shared-memory buckets, ...) and checks they end with identical
parameters; the second runs the variants that need a process environment of their
own (MPICH's CVARs are read at MPI_Init). Both print the load, the 1-rank step, the
ceiling (independent replicas), each configuration's speed-up and its share of the
ceiling, and the bucket timelines (how many all-reduces completed during backward,
the wait after it); ``--trace`` writes one fw.profiler chrome trace per rank to
``dp_trace/`` (open in https://ui.perfetto.dev: the ``all_reduce bucket k``
Communication spans overlap backward's operators).

Also run as the worker: ``mpiexec -n N python asv_bench/bench_dist_dp.py --worker
MODEL STEPS`` prints one JSON line per rank.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(name, steps, mode="dp", bucket_mb=0.25, last_mb=0.0625, out=None, trace=None):
    sys.path.insert(0, HERE)
    from benchmarks.bench_training import _paddle_api_model, data

    import fw
    from fw.core.internal import native
    from fw.distributed import _fleet_comm as comm
    from fw.distributed.parallel import DataParallel, bind_to_core

    nat = native()
    if nat is not None and getattr(nat, "available", False):
        nat.set_num_threads(1)
    fw.seed(0)
    model = _paddle_api_model(fw.nn, name)
    if mode == "dp":
        model = DataParallel(model, comm_buffer_size=bucket_mb, last_comm_buffer_size=last_mb)
    elif comm.world_size() > 1:
        bind_to_core()  # (DataParallel does it itself) so FW_DIST_BIND_CORE applies alike
    opt = fw.optimizer.Adam(1e-3, parameters=model.parameters())
    if mode == "dp" and os.environ.get("FW_BENCH_OVERLAP_OPT") == "1":
        # the overlap-opt variants: each bucket's parameters stepped in backward
        assert model.set_overlap_optimizer(opt) or comm.world_size() == 1
    memory = {"parameters": sum(p._data.nbytes for p in model.parameters())}
    if mode == "zero3":
        from fw.distributed.sharding import group_sharded_parallel

        model, opt, _ = group_sharded_parallel(model, opt, "p_g_os",
                                               buffer_max_size=int(bucket_mb * (1 << 20)))
    elif mode == "dp" and model._reducer is not None:
        memory["buckets"] = sum(b.buf.nbytes for b in model._reducer.buckets)
    x, y = (fw.to_tensor(a) for a in data(name, seed=comm.world_rank()))
    loss_fn = fw.nn.functional.cross_entropy

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        if mode == "lockstep":
            comm.barrier()

    for _ in range(5):
        step()
    comm.barrier()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    if mode == "zero3":
        memory.update(model.memory_stats())
        memory["comm"] = model.comm_stats()
    if trace:  # one step recorded by fw.profiler: operators and bucket all-reduces
        from fw import profiler

        with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(
                trace, worker_name=f"{name}_{mode}_rank{comm.world_rank()}")):
            step()
    events, sizes, prof = [], [], []
    if mode == "dp" and model._reducer is not None:
        # profiled steps: the bucket timeline of each
        model.comm_profile(True)
        for _ in range(10):
            t0 = time.perf_counter()
            logits = model(x)
            t1 = time.perf_counter()
            loss_fn(logits, y).backward()
            t2 = time.perf_counter()
            opt.step()
            opt.clear_grad()
            events = model.comm_profile()
            prof.append({"forward_s": t1 - t0, "backward_s": t2 - t1, "events": events})
        model.comm_profile(False)
        sizes = [int(b.buf.nbytes) for b in model._reducer.buckets]
    row = json.dumps({"rank": comm.world_rank(), "ranks": comm.world_size(), "model": name,
                      "batch": int(x.shape[0]), "median_s": statistics.median(times),
                      "times": times, "events": events, "profiled": prof,
                      "bucket_bytes": sizes, "memory": memory})
    if out:  # one file per rank: the ranks' stdout lines may interleave
        with open(os.path.join(out, f"rank{comm.world_rank()}.json"), "w") as f:
            f.write(row)
    else:
        print(row, flush=True)


# The DataParallel configurations `--ab` trains side by side in one job (steps
# alternating). Each: environment read when the DataParallel is built, and whether
# the optimizer is overlapped. A name may end in ``@BUCKET_MB[/FIRST_MB]`` to give
# that copy its own bucket sizes (e.g. ``shm@64`` for one bucket).
AB_CONFIGS = {
    # the MPI all-reduce path (MPICH shared-memory transport) with the progress thread
    "mpi": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread"}, False),
    # MPI path, MPI progress driven by the autograd engine between backward ops
    "mpi-ops": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "ops"}, False),
    # MPI path, no progress help at all (hooks' own tests only)
    "mpi-none": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "off"}, False),
    "mpi-overlap": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread"}, True),
    # the shared-memory window path (the default on one node)
    "shm": ({"FW_DIST_DP_SHM": "1"}, False),
    "shm-overlap": ({"FW_DIST_DP_SHM": "1"}, True),
}


def _ab_config(spec, bucket_mb, last_mb):
    name, _, sizes = spec.partition("@")
    if name not in AB_CONFIGS:
        raise SystemExit(f"unknown --configs entry {spec!r}; known: {', '.join(AB_CONFIGS)} "
                         f"(optionally @BUCKET_MB[/FIRST_MB])")
    if sizes:
        b, _, f = sizes.partition("/")
        bucket_mb = float(b)
        last_mb = float(f) if f else bucket_mb
    env, overlap = AB_CONFIGS[name]
    return env, overlap, bucket_mb, last_mb


def worker_ab(name, steps, configs, bucket_mb, last_mb, out):
    """Several DataParallel configurations in one job, steps alternating (A, B, A, B,
    ...): a change of the machine's load hits all alike, which separate runs on a
    shared machine cannot promise. Also checks that all end with the same parameters
    (every configuration computes the same sums)."""
    sys.path.insert(0, HERE)
    from benchmarks.bench_training import _paddle_api_model, data

    import fw
    from fw.core.internal import native
    from fw.distributed import _fleet_comm as comm
    from fw.distributed.parallel import DataParallel

    nat = native()
    if nat is not None and getattr(nat, "available", False):
        nat.set_num_threads(1)
    setups = []
    for spec in configs:
        env, overlap, bmb, lmb = _ab_config(spec, bucket_mb, last_mb)
        fw.seed(0)
        net = _paddle_api_model(fw.nn, name)
        opt = fw.optimizer.Adam(1e-3, parameters=net.parameters())
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            model = DataParallel(net, comm_buffer_size=bmb, last_comm_buffer_size=lmb,
                                 overlap_optimizer=opt if overlap else None)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        setups.append((model, opt))
    x, y = (fw.to_tensor(a) for a in data(name, seed=comm.world_rank()))
    loss_fn = fw.nn.functional.cross_entropy

    def step(model, opt):
        loss_fn(model(x), y).backward()
        opt.step()
        opt.clear_grad()

    for _ in range(5):
        for s in setups:
            step(*s)
    comm.barrier()
    times = [[] for _ in setups]
    for _ in range(steps):
        for k, s in enumerate(setups):
            t0 = time.perf_counter()
            step(*s)
            times[k].append(time.perf_counter() - t0)
    ref = setups[0][0].parameters()
    same = all(all(bool((p.numpy() == q.numpy()).all()) for p, q in zip(ref, m.parameters()))
               for m, _ in setups[1:])
    prof = {}
    for spec, (model, opt) in zip(configs, setups):
        # the bucket timeline of 10 profiled steps per configuration (medians)
        model.comm_profile(True)
        rows = []
        for _ in range(10):
            step(model, opt)
            rows.append({"events": model.comm_profile()})
        model.comm_profile(False)
        prof[spec] = {"profiled": rows,
                      "bucket_bytes": [int(b.result.nbytes) for b in model._reducer.buckets]}
    row = {"rank": comm.world_rank(), "median_s": [statistics.median(t) for t in times],
           "identical": same, "configs": list(configs), "profile": prof}
    with open(os.path.join(out, f"rank{comm.world_rank()}.json"), "w") as f:
        f.write(json.dumps(row))


# --env K=V: set in every job's environment (MPICH's CVARs for all configurations)
JOB_ENV: dict = {}


def run(n, name, steps, mode="dp", bucket_mb=0.25, last_mb=0.0625, timeout=600, env=None,
        trace=None, configs=()):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", **JOB_ENV, **(env or {}))
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([mpiexec, "-n", str(n), sys.executable, os.path.abspath(__file__),
                            "--worker", name, str(steps), "--mode", mode,
                            "--bucket-mb", str(bucket_mb), "--last-bucket-mb", str(last_mb),
                            "--out", out, *(["--trace", trace] if trace else []),
                            *(["--configs", *configs] if configs else [])],
                           capture_output=True, text=True, timeout=timeout, env=env)
        if p.returncode:
            raise RuntimeError(f"{n} ranks of {name} failed:\n{p.stdout}\n{p.stderr}")
        rows = []
        for r in range(n):
            with open(os.path.join(out, f"rank{r}.json")) as f:
                rows.append(json.load(f))
    return rows


# The DataParallel variants measured against each other (issue 12: make communication
# progress during backward). Each: (name, environment, bucket MB, first-bucket MB).
VARIANTS = {
    # --- the MPI all-reduce path (FW_DIST_DP_SHM=0; the default before the shared-memory
    # buckets): how MPI's progress is driven, and MPICH's own knobs (read at MPI_Init,
    # so they need runs of their own; `mpivars` lists this wheel's CVARs)
    "mpi": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread"}, None, None),
    "no-progress": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "off"}, None, None),
    "driver-100us": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread",
                      "FW_DIST_PROGRESS_US": "100"}, None, None),
    "driver-30us": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread",
                     "FW_DIST_PROGRESS_US": "30"}, None, None),
    "driver-300us": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread",
                      "FW_DIST_PROGRESS_US": "300"}, None, None),
    # progress from the autograd engine between backward ops instead of a thread
    "mpi-ops": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "ops"}, None, None),
    "mpich-async": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "off",
                     "MPIR_CVAR_ASYNC_PROGRESS": "1"}, None, None),
    # ch4 sends messages >= 8 kB between local ranks by CMA (process_vm_readv) after a
    # rendezvous handshake, which needs the peer's progress twice; above this threshold
    # they go eagerly through the shared-memory cell queue instead (8 kB cells x 64)
    "mpi-nocma": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread",
                   "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": str(1 << 30)}, None, None),
    # ... with 64 kB cells, so a whole bucket fits the queue (4 MB)
    "mpi-nocma-cells": ({"FW_DIST_DP_SHM": "0", "FW_DIST_PROGRESS": "thread",
                         "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": str(1 << 30),
                         "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "65536",
                         # (MPICH asserts its pack buffers hold a cell)
                         "MPIR_CVAR_CH4_PACK_BUFFER_SIZE": "65536"}, None, None),
    "mpi-small-buckets": ({"FW_DIST_DP_SHM": "0"}, 0.0625, 0.016),
    "desync-off": ({"FW_DIST_DP_SHM": "0", "FW_DIST_DESYNC_CHECK": "0"}, None, None),
    # (the last two, and mpi-overlap-opt, with the MPI path's default progress: ops)
    # --- DataParallel as shipped (shared-memory buckets on one node)
    "one-bucket": ({}, 64.0, 64.0),
    "small-buckets": ({}, 0.0625, 0.016),
    # ranks not pinned to their cores (parallel.bind_to_core pins one rank per core by
    # default; the ceiling's replicas are pinned alike)
    "no-bind": ({"FW_DIST_BIND_CORE": "0"}, None, None),
    # ZeRO-3 (group_sharded_parallel "p_g_os"): 0.25 MB reduce-scatter buckets, prefetch
    "zero3": ({}, None, None),
    # DataParallel(overlap_optimizer=opt): each bucket's Adam step in backward, the last
    # bucket's all-reduce in flight meanwhile (issue 12's second speed pass)
    "overlap-opt": ({"FW_BENCH_OVERLAP_OPT": "1"}, None, None),
    "mpi-overlap-opt": ({"FW_BENCH_OVERLAP_OPT": "1", "FW_DIST_DP_SHM": "0"}, None, None),
    # three buckets (the MLP's second layer alone), so two steps hide the last all-reduce
    "overlap-opt-small": ({"FW_BENCH_OVERLAP_OPT": "1"}, 0.0625, 0.008),
}
DEFAULT_VARIANTS = ["default", "mpi"]


def summary(row):
    """Medians over the profiled steps: backward compute, wait after it, and how
    many buckets had been launched / had completed before backward ended."""
    back, wait, launched, done = [], [], [], []
    for st in row["profiled"]:
        ev = st["events"]
        end = next(t for w, _, t in ev if w == "backward_end")
        synced = next(t for w, _, t in ev if w == "synced")
        launch = [t for w, _, t in ev if w == "launch"]
        back.append(end)
        wait.append(synced - end)
        launched.append(sum(t <= end for t in launch))
        done.append(sum(1 for w, _, t in ev if w == "done" and t <= end))
    med = statistics.median
    return (f"    over {len(back)} profiled steps (medians): backward {1e3 * med(back):.2f} ms, "
            f"wait for the all-reduces after it {1e3 * med(wait):.2f} ms; all-reduces started "
            f"during backward: {med(launched):.0f} of {len(row['bucket_bytes'])}, finished "
            f"during backward: {med(done):.0f}")


def timeline(row):
    ev = row["events"]
    end = next(t for w, _, t in ev if w == "backward_end")
    lines = []
    for w, b, t in ev:
        if w in ("ready", "launch", "done", "stepped"):
            lines.append(f"    bucket {b} ({row['bucket_bytes'][b] / 1e3:.0f} kB) {w:6s} at "
                         f"{1e3 * t:7.2f} ms ({1e3 * (t - end):+7.2f} ms vs backward end)")
    synced = next(t for w, _, t in ev if w == "synced")
    lines.append(f"    backward end at {1e3 * end:.2f} ms, all buckets synced at "
                 f"{1e3 * synced:.2f} ms (wait after backward: {1e3 * (synced - end):.2f} ms)")
    return "\n".join(lines)


def main_ab(a):
    """Per round: 1 rank, N independent replicas (the ceiling) and one job training
    every ``--configs`` configuration with steps alternating; speed-ups per round
    against that round's 1-rank run, medians over rounds."""
    med = statistics.median
    cfgs = a.configs
    print(f"load average at the start: {os.getloadavg()[0]:.1f} (1 min), "
          f"{os.cpu_count()} cores; configurations {', '.join(cfgs)}"
          f"{'; environment ' + ' '.join(a.env) if a.env else ''}", flush=True)
    results = {}
    n = a.ranks
    for name in a.models:
        t1, ceil, per, loads, prof = [], [], {c: [] for c in cfgs}, [], None
        for _ in range(a.rounds):
            loads.append(os.getloadavg()[0])
            t1.append(run(1, name, a.steps)[0]["median_s"])
            ceil.append(max(r["median_s"] for r in run(n, name, a.steps, "plain")))
            rows = run(n, name, a.steps, "ab", a.bucket_mb, a.last_bucket_mb, configs=cfgs)
            assert all(r["identical"] for r in rows), "the configurations trained differently"
            for k, c in enumerate(cfgs):
                per[c].append(max(r["median_s"][k] for r in rows))
            prof = rows
        loads.append(os.getloadavg()[0])
        sp_ceil = [n * t / c for t, c in zip(t1, ceil)]
        res = {"t1_s": med(t1), "ceiling_speedup": med(sp_ceil), "ceiling_rounds": sp_ceil,
               "loads": loads, "configs": {}}
        print(f"{name}: {a.rounds} rounds, load average {min(loads):.1f}-{max(loads):.1f}; "
              f"1 rank {1e3 * med(t1):.2f} ms/step; ceiling ({n} independent replicas) "
              f"{med(sp_ceil):.2f}x (rounds: {', '.join(f'{x:.2f}' for x in sp_ceil)})",
              flush=True)
        for c in cfgs:
            sp = [n * t / s for t, s in zip(t1, per[c])]
            share = [x / y for x, y in zip(sp, sp_ceil)]
            vs = [p0 / p for p0, p in zip(per[cfgs[0]], per[c])]
            res["configs"][c] = {"step_s": med(per[c]), "speedup": med(sp), "speedups": sp,
                                 "share_of_ceiling": med(share), f"vs_{cfgs[0]}": vs}
            print(f"  {c:14s} {1e3 * med(per[c]):6.2f} ms/step, speed-up {med(sp):.2f}x "
                  f"(rounds: {', '.join(f'{x:.2f}' for x in sp)}), {100 * med(share):.0f} % "
                  f"of the ceiling; step time {cfgs[0]}/{c} per round: "
                  f"{', '.join(f'{x:.2f}' for x in vs)}", flush=True)
        for c in cfgs:  # the profile of the last round, per rank
            for row in prof:
                p = row["profile"][c]
                print(f"  {c} rank {row['rank']} ({len(p['bucket_bytes'])} buckets, "
                      f"{', '.join(f'{b / 1e3:.0f}' for b in p['bucket_bytes'])} kB):")
                print(summary(p))
            p = prof[0]["profile"][c]
            print(f"  {c}: the bucket timeline of the last profiled step on rank 0:")
            print(timeline({"events": p["profiled"][-1]["events"],
                            "bucket_bytes": p["bucket_bytes"]}))
        results[name] = res
    print(f"parameters identical across configurations in every round; load average at "
          f"the end: {os.getloadavg()[0]:.1f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", nargs=2, metavar=("MODEL", "STEPS"))
    ap.add_argument("--models", nargs="+", default=["mlp", "lenet"])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", nargs="*", default=DEFAULT_VARIANTS,
                    help=f"DataParallel variants besides 'default' (DataParallel as shipped): "
                         f"{', '.join(VARIANTS)}")
    ap.add_argument("--json")
    ap.add_argument("--ab", action="store_true",
                    help="DataParallel configurations (--configs) trained side by side, "
                         "steps alternating in one job per round, against a 1-rank run and "
                         "independent replicas per round")
    ap.add_argument("--configs", nargs="+", default=["mpi", "shm"],
                    help=f"--ab: configurations, the first is the reference: "
                         f"{', '.join(AB_CONFIGS)}, each optionally @BUCKET_MB[/FIRST_MB]")
    ap.add_argument("--trace", help="a directory for fw.profiler chrome traces of one step "
                                    "per rank (DataParallel as shipped): operators and the "
                                    "bucket all-reduces (Communication events)")
    ap.add_argument("--env", nargs="+", default=[], metavar="K=V",
                    help="environment for every job (e.g. an MPICH CVAR, so that --ab "
                         "compares the configurations under it)")
    ap.add_argument("--out", help="worker: the directory for its per-rank JSON")
    ap.add_argument("--mode", default="dp", choices=["dp", "plain", "lockstep", "zero3", "ab"],
                    help="worker: DataParallel, independent replicas (no communication), or "
                         "independent replicas that meet at a barrier after each step")
    ap.add_argument("--bucket-mb", type=float, default=0.25)
    ap.add_argument("--last-bucket-mb", type=float, default=0.0625)
    a = ap.parse_args(argv)
    for kv in a.env:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            ap.error(f"--env wants K=V, got {kv!r}")
        JOB_ENV[k] = v
    if a.worker and a.mode == "ab":
        worker_ab(a.worker[0], int(a.worker[1]), a.configs, a.bucket_mb, a.last_bucket_mb,
                  a.out)
        return 0
    if a.worker:
        worker(a.worker[0], int(a.worker[1]), a.mode, a.bucket_mb, a.last_bucket_mb, a.out,
               a.trace)
        return 0
    if a.ab:
        return main_ab(a)
    variants = ["default"] + [v for v in a.variants if v != "default"]
    for v in variants:
        if v != "default" and v not in VARIANTS:
            ap.error(f"unknown variant {v!r}; known: {', '.join(VARIANTS)}")
    results = {}
    med = statistics.median
    print(f"load average at the start: {os.getloadavg()[0]:.1f} (1 min), "
          f"{os.cpu_count()} cores", flush=True)
    for name in a.models:
        # every configuration once per round, interleaved, so a change of the machine's
        # load hits all of them; speed-ups are per round (vs that round's 1-rank run),
        # then the median over rounds
        per = {k: [] for k in ["1", "plain", "lockstep", *variants]}
        rows_of = {}
        loads = []
        for _ in range(a.rounds):
            loads.append(os.getloadavg()[0])
            for key in per:
                if key == "1":
                    rows = run(1, name, a.steps)
                elif key in ("plain", "lockstep"):
                    rows = run(a.ranks, name, a.steps, key)
                else:
                    env, bmb, lmb = VARIANTS.get(key, ({}, None, None))
                    rows = run(a.ranks, name, a.steps, "zero3" if key == "zero3" else "dp",
                               a.bucket_mb if bmb is None else bmb,
                               a.last_bucket_mb if lmb is None else lmb, env=env,
                               trace=a.trace if key == "default" else None)
                    rows_of.setdefault(key, rows)
                    if per[key] and max(r["median_s"] for r in rows) < min(per[key]):
                        rows_of[key] = rows  # the profile of the best round
                per[key].append(max(r["median_s"] for r in rows))  # the slowest rank
        b = rows_of["default"][0]["batch"]
        n = a.ranks
        t1 = per["1"]

        def speedups(key, n=n, t1=t1, per=per):
            return [n * t1[i] / per[key][i] for i in range(len(t1))]

        res = {"batch": b, "t1_s": med(t1), "loads": loads,
               "ceiling_speedup": med(speedups("plain")),
               "lockstep_speedup": med(speedups("lockstep")), "variants": {}}
        print(f"{name}: batch {b}/rank, {a.rounds} rounds, load average {min(loads):.1f}-"
              f"{max(loads):.1f}; 1 rank {1e3 * med(t1):.2f} ms/step (median)")
        print(f"  ceiling, {n} independent replicas (no communication): speed-up "
              f"{res['ceiling_speedup']:.2f}x; replicas meeting at a barrier each step: "
              f"{res['lockstep_speedup']:.2f}x")
        for key in variants:
            sp = speedups(key)
            res["variants"][key] = {"step_s": med(per[key]), "speedup": med(sp),
                                    "speedups": sp}
            print(f"  DataParallel {key:14s}: {1e3 * med(per[key]):6.2f} ms/step, speed-up "
                  f"{med(sp):.2f}x (rounds: {', '.join(f'{x:.2f}' for x in sp)}), efficiency "
                  f"{100 * med(sp) / n:.0f} %, {100 * med(sp) / res['ceiling_speedup']:.0f} % "
                  f"of the ceiling")
            mem = rows_of[key][0].get("memory")
            res["variants"][key]["memory_rank0"] = mem
            if mem:
                print(f"    memory per rank (rank 0, bytes): {mem}")
        for key in variants:
            rows = rows_of[key]
            if not rows[0]["events"]:
                continue
            print(f"  {key}: bucket timeline of one profiled step on rank 0 "
                  f"({len(rows[0]['bucket_bytes'])} buckets):")
            print(timeline(rows[0]))
            for row in rows:
                print(f"  rank {row['rank']}:")
                print(summary(row))
        results[name] = res
    print(f"load average at the end: {os.getloadavg()[0]:.1f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
