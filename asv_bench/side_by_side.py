"""Run the same workloads in fw, PyTorch and Paddle (when importable) and print
the times and ratios. Usage:

    python asv_bench/side_by_side.py [--only NAME] [--repeat N]

Each workload builds its state once per framework (`setup`) and times one call
of the returned closure (best of several runs of a timed loop). Frameworks that
are not installed, or workloads whose fw parts are not available yet, are
reported as "-". The figures in the issues come from this script and from asv.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import time

import numpy as np

WORKLOADS: dict = {}


def workload(name, unit="us"):
    def deco(cls):
        WORKLOADS[name] = (cls, unit)
        return cls

    return deco


def _have(mod):
    """Whether `mod` is installed (found, not imported: the parent process stays
    free of every framework)."""
    import importlib.util

    return importlib.util.find_spec(mod) is not None


def timeit(fn, min_time=0.2, repeat=5):
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / 5:
            break
        n *= 4
    best = float("inf")
    for _ in range(repeat):
        gc.disable()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
        gc.enable()
    return best


# ---------------------------------------------------------------- workloads
@workload("add_8 (a + b, 8 floats)")
class Add8:
    @staticmethod
    def fw():
        import fw

        a = fw.to_tensor(np.ones(8, np.float32))
        b = fw.to_tensor(np.ones(8, np.float32))
        return lambda: a + b

    @staticmethod
    def torch():
        import torch

        a, b = torch.ones(8), torch.ones(8)
        return lambda: a + b

    @staticmethod
    def paddle():
        import paddle

        a, b = paddle.ones([8]), paddle.ones([8])
        return lambda: a + b


@workload("add_8_requires_grad")
class Add8Grad:
    @staticmethod
    def fw():
        import fw

        a = fw.to_tensor(np.ones(8, np.float32), stop_gradient=False)
        b = fw.to_tensor(np.ones(8, np.float32), stop_gradient=False)
        if (a + b).stop_gradient:  # the first recorded op attaches fw-autograd, if installed
            raise RuntimeError("fw-autograd not available")
        return lambda: a + b

    @staticmethod
    def torch():
        import torch

        a = torch.ones(8, requires_grad=True)
        b = torch.ones(8, requires_grad=True)
        return lambda: a + b

    @staticmethod
    def paddle():
        import paddle

        a, b = paddle.ones([8]), paddle.ones([8])
        a.stop_gradient = False
        b.stop_gradient = False
        return lambda: a + b


@workload("matmul_1024 (fp32, GFLOP/s)", unit="gflops")
class Matmul1024:
    flops = 2 * 1024**3

    @staticmethod
    def fw():
        import fw

        a = fw.to_tensor(np.random.rand(1024, 1024).astype(np.float32))
        b = fw.to_tensor(np.random.rand(1024, 1024).astype(np.float32))
        return lambda: fw.matmul(a, b)

    @staticmethod
    def torch():
        import torch

        a, b = torch.rand(1024, 1024), torch.rand(1024, 1024)
        return lambda: a @ b

    @staticmethod
    def paddle():
        import paddle

        a, b = paddle.rand([1024, 1024]), paddle.rand([1024, 1024])
        return lambda: paddle.matmul(a, b)


def _fmt(v, unit):
    if v is None:
        return f"{'-':>12s}"
    if unit == "gflops":
        return f"{v:10.1f}GF"
    return f"{v * 1e6:10.2f}us" if v < 1e-3 else f"{v * 1e3:10.2f}ms"


def _ratio(row, a, b, unit):
    """time(a)/time(b): below 1 means `a` is faster."""
    if row.get(a) is None or row.get(b) is None:
        return "      -"
    r = row[b] / row[a] if unit == "gflops" else row[a] / row[b]
    return f"{r:8.2f}x"


def _extra_workloads():
    """Workloads for other packages register themselves from asv_bench/workloads_*.py."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    # they do `from side_by_side import workload`: run as a script this module is
    # `__main__`, and that import must not create a second WORKLOADS
    sys.modules.setdefault("side_by_side", sys.modules[__name__])
    for f in sorted(os.listdir(here)):
        if f.startswith("workloads_") and f.endswith(".py"):
            importlib.import_module(f[:-3])


def _measure(framework, only):
    """Time every workload for one framework (run in its own process)."""
    # The framework under test loads first: Paddle ships its own libdnnl.so.3,
    # and once fw's (an older oneDNN with the same soname) is loaded, Paddle's
    # libraries would bind to it. The workload modules import fw at the top.
    importlib.import_module(framework)
    if framework == "paddle":
        import paddle

        paddle.set_device("cpu")
    _extra_workloads()
    out = {}
    for name, (cls, unit) in WORKLOADS.items():
        if only and only not in name:
            continue
        try:
            fn = getattr(cls, framework)()
            t = timeit(fn)
            out[name] = (getattr(cls, "flops", 0) / t / 1e9) if unit == "gflops" else t
        except Exception as e:  # a missing piece of fw, or of a peer
            out[name] = None
            if os.environ.get("FW_BENCH_DEBUG"):
                print(f"  {framework} {name}: {type(e).__name__}: {e}", file=sys.stderr)
    return out


def main(argv=None):
    import json
    import subprocess

    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--frameworks", default="fw,torch,paddle")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure each framework this many times, alternating, and keep "
                         "each cell's best (for machines with noisy neighbours)")
    ap.add_argument("--measure", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:  # child process: one framework, results as JSON on stdout
        print(json.dumps(_measure(args.measure, args.only)))
        return
    # Each framework runs in its own process: their thread pools and native
    # libraries (each brings its own oneDNN/OpenMP) must not meet.
    _extra_workloads()
    fws = [f for f in args.frameworks.split(",") if f == "fw" or _have(f)]
    results = {f: {} for f in fws}
    for _ in range(max(1, args.rounds)):
        for f in fws:
            cmd = [sys.executable, os.path.abspath(__file__), "--measure", f]
            if args.only:
                cmd += ["--only", args.only]
            r = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            got = json.loads(lines[-1]) if lines else {}
            if r.returncode and os.environ.get("FW_BENCH_DEBUG"):
                print(r.stderr[-2000:], file=sys.stderr)
            for name, v in got.items():
                old_v = results[f].get(name)
                unit = WORKLOADS[name][1]
                better = old_v is None or (v is not None and (
                    v > old_v if unit == "gflops" else v < old_v))
                if better:
                    results[f][name] = v
    print(f"{'workload':44s}" + "".join(f"{f:>12s}" for f in fws) + "   fw/torch  fw/paddle")
    for name, (_cls, unit) in WORKLOADS.items():
        if args.only and args.only not in name:
            continue
        row = {f: results.get(f, {}).get(name) for f in fws}
        print(f"{name:44s}" + "".join(_fmt(row.get(f), unit) for f in fws)
              + f"  {_ratio(row, 'fw', 'torch', unit)} {_ratio(row, 'fw', 'paddle', unit)}")


if __name__ == "__main__":
    main()
