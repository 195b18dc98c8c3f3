"""Per-op wall time of a zoo model's Predictor, from fw.profiler's op events (the
executor reports one event per op while a profiler records): the table behind the
README's per-op figures for the BERT encoder and ResNet-18, float32 and with
``Config.enable_mkldnn_bfloat16()``.

    hatch run python asv_bench/profile_predictor_ops.py bert_encoder --batch 1 [--bf16]

One oneDNN thread; the first runs are warm-up; prints, per op name, its calls per run and
the sum of each call's fastest wall time over the recorded runs (on a shared machine the
minimum mostly leaves out the time the core was given to other jobs), slowest first.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), "tests")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a tests/zoo.py name (bert_encoder, resnet18, ...)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--hw", type=int, default=None, help="image size (vision models)")
    ap.add_argument("--bf16", action="store_true", help="Config.enable_mkldnn_bfloat16()")
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)

    import zoo

    import fw
    import fw.inference as infer
    import fw.profiler as profiler

    fw.seed(0)
    model = zoo.build(fw, args.model)
    x = zoo.example_input(fw, args.model, batch=args.batch, hw=args.hw)
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "m")
        spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
        fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
        config = infer.Config(prefix)
        config.set_cpu_math_library_num_threads(1)
        config.disable_glog_info()
        config.enable_memory_optim()
        if args.bf16:
            config.enable_mkldnn_bfloat16()
        predictor = infer.create_predictor(config)
    xs = [x.numpy()]
    for _ in range(3):
        predictor.run(xs)
    t0 = time.process_time()  # one thread: the run's CPU time (a shared machine)
    for _ in range(args.runs):
        predictor.run(xs)
    plain_ms = (time.process_time() - t0) / args.runs * 1e3
    with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                           on_trace_ready=lambda p: None) as prof:
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(args.runs):  # one recorded range (prof.step() would end it)
            predictor.run(xs)
        w1, c1 = time.perf_counter(), time.process_time()
    print(f"profiled runs: {(w1 - w0) / args.runs * 1e3:.2f} ms wall, "
          f"{(c1 - c0) / args.runs * 1e3:.2f} ms CPU per run")
    # each op's fastest of the runs (position by position: run r's k-th op event is
    # that op's r-th sample): on a shared machine a wall-clock event includes the time
    # the core was given to other jobs, the minimum over runs mostly does not
    ops = [e for e in prof.events if e.kind == "Operator"]
    n = len(ops) // args.runs
    per = collections.defaultdict(lambda: [0, 0.0])
    for k in range(n):
        best = min((ops[r * n + k].end - ops[r * n + k].start) / 1e3 for r in range(args.runs))
        per[ops[k].name][0] += 1
        per[ops[k].name][1] += best
    total = sum(v[1] for v in per.values())
    kind = "bf16" if args.bf16 else "fp32"
    print(f"{args.model} b{args.batch} {kind}: run {plain_ms:.2f} ms CPU time unprofiled; "
          f"the ops' fastest runs add up to {total / 1e3:.2f} ms; load "
          f"{os.getloadavg()[0]:.1f}")
    print("| op | calls/run | us/run | % |")
    print("|---|---|---|---|")
    for name, (count, us) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {us:.0f} | {100 * us / total:.1f} |")


if __name__ == "__main__":
    main()
