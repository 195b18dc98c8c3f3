"""LeNet b64 on the fw.inference Predictor: dense against 50 % channel-pruned (L1, as
asv_bench/benchmarks/bench_prune.py), each with fw-core's small-channel direct
convolution (csrc/nn_conv_small.cpp) on and off, all four interleaved in one run.

    python asv_bench/bench_slim_prune_kernels.py [--rounds 40] [--round-to 1]

Prints the median CPU time per run (one thread, ``time.process_time``: on a shared
machine the wall clock also counts other jobs' slices) of each variant, the pruning
speed-up with the kernel on (the issue's target: >= 1.6x) and off, and what the kernel
does to the dense model (it must not slow it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "benchmarks"), os.path.join(os.path.dirname(HERE), "tests")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--round-to", type=int, default=1)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import zoo

    import fw
    import fw.inference as infer
    import fw.slim
    from fw.core import _native

    C = _native.C
    x = zoo.example_input(fw, "lenet", batch=64).numpy()
    preds = {}
    with tempfile.TemporaryDirectory() as d:
        for pruned in (False, True):
            fw.seed(0)
            model = zoo.build(fw, "lenet")
            if pruned:
                pruner = fw.slim.L1NormFilterPruner(model, [1, *x.shape[1:]],
                                                    round_to=args.round_to)
                pruner.prune(0.5)
            prefix = os.path.join(d, f"lenet_{int(pruned)}")
            spec = [fw.static.InputSpec([None, 1, 28, 28], "float32")]
            fw.jit.save(model, prefix, input_spec=spec)
            cfg = infer.Config(prefix)
            cfg.disable_glog_info()
            cfg.set_cpu_math_library_num_threads(1)
            preds[pruned] = infer.create_predictor(cfg)
        outs = {}
        for on in (True, False):
            C.conv_small_set_enabled(on)
            for pruned, p in preds.items():
                for _ in range(5):
                    outs[(pruned, on)] = p.run([x])[0]
        for pruned in (False, True):  # the kernel changes no value beyond float rounding
            np.testing.assert_allclose(outs[(pruned, True)], outs[(pruned, False)], rtol=1e-4,
                                       atol=1e-4)
        times = {k: [] for k in outs}
        reps = 5
        for _ in range(args.rounds):
            for on in (True, False):
                C.conv_small_set_enabled(on)
                for pruned, p in preds.items():
                    t0 = time.process_time()
                    for _ in range(reps):
                        p.run([x])
                    times[(pruned, on)].append((time.process_time() - t0) / reps)
        C.conv_small_set_enabled(True)
    med = {k: float(np.median(v)) * 1e6 for k, v in times.items()}
    print(f"LeNet b64, Predictor, 1 thread, CPU us per run (median of {args.rounds} rounds x "
          f"{reps}), load {os.getloadavg()[0]:.1f}, direct-conv ISA {C.conv_small_isa()}")
    for on in (True, False):
        d, p = med[(False, on)], med[(True, on)]
        print(f"  small-channel conv {'on ' if on else 'off'}: dense {d:7.1f}  pruned {p:7.1f}  "
              f"pruning speed-up {d / p:.2f}x")
    print(f"  the kernel on the dense model: {med[(False, False)] / med[(False, True)]:.2f}x, "
          f"on the pruned one: {med[(True, False)] / med[(True, True)]:.2f}x")


if __name__ == "__main__":
    main()
