"""Compare the asv benchmarks of two checkouts, interleaved, on a noisy machine.

asv's own ``continuous`` builds an environment per commit; here both checkouts
already have their hatch environment (each with its in-place native build), so
this runs each benchmark in a fresh interpreter of each checkout in turn,
``--rounds`` times, and keeps each cell's best time (the usual estimate of the
undisturbed cost when neighbours add noise).

Usage (from either checkout):
    python asv_bench/ab.py A_DIR B_DIR [--rounds 5] [--only SUBSTRING]

Each checkout runs its own ``asv_bench/benchmarks`` with its hatch environment's Python.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# (module, class, method, params): the rows the README's speed table is built from
BENCHMARKS = [
    ("bench_dispatch", "EagerDispatch", "time_add_8", None),
    ("bench_dispatch", "EagerDispatch", "time_mul_scalar_8", None),
    ("bench_dispatch", "EagerDispatch", "time_exp_8", None),
    ("bench_dispatch", "EagerDispatch", "time_matmul_8x8", None),
    ("bench_dispatch", "EagerDispatch", "time_getitem_row", None),
    ("bench_autograd", "RecordAdd", "time_add_requires_grad", None),
    ("bench_autograd", "Backward", "time_chain_forward_backward", None),
    ("bench_autograd", "Backward", "time_mlp_forward_backward", None),
    ("bench_executor", "MLP", "time_executor", None),
    ("bench_inference", "Predictor", "time_handles", None),
    ("bench_inference", "Predictor", "time_run", None),
    ("bench_fused", "FusedMatmul", "time_bias_gelu_residual", ("native",)),
    ("bench_training", None, None, None),
    ("bench_jit", None, None, None),
]

_RUNNER = r"""
import importlib, inspect, json, sys, timeit
sys.path[:0] = ["asv_bench/benchmarks", "asv_bench"]  # bench_jit imports benchmarks.bench_training
mod_name, cls_name, meth, params = json.loads(sys.argv[1])
mod = importlib.import_module(mod_name)
rows = []
classes = [getattr(mod, cls_name)] if cls_name else [
    c for _, c in inspect.getmembers(mod, inspect.isclass) if c.__module__ == mod.__name__
    and any(n.startswith("time_") for n in dir(c))]
for cls in classes:
    methods = [meth] if meth else sorted(n for n in dir(cls) if n.startswith("time_"))
    grid = [tuple(params)] if params else [()]
    if not params and getattr(cls, "params", None):
        p = cls.params
        grid = [(v,) for v in p] if not isinstance(p[0], (list, tuple)) else [
            (v,) for v in p[0]]
    for args in grid:
        obj = cls()
        if hasattr(obj, "setup"):
            try:
                obj.setup(*args)
            except NotImplementedError:
                continue
        for m in methods:
            f = getattr(obj, m)
            f(*args)
            n, t = 1, 0.0
            while t < 0.05:
                t = timeit.timeit(lambda: f(*args), number=n)
                n *= 4
            n //= 4
            best = min(timeit.repeat(lambda: f(*args), number=max(n, 1), repeat=5)) / max(n, 1)
            rows.append([f"{cls.__name__}.{m}{list(args) if args else ''}", best])
print("AB-RESULT " + json.dumps(rows))
"""


_PYTHONS: dict = {}


def _python(tree: str) -> str:
    # the checkout's own hatch environment (hatch's `run` would expand the braces of
    # the runner's source as its context fields)
    if tree not in _PYTHONS:
        env = subprocess.run(["hatch", "env", "find"], cwd=tree, capture_output=True,
                             text=True, check=True).stdout.split()[0]
        _PYTHONS[tree] = f"{env}/bin/python"
    return _PYTHONS[tree]


def _run(tree: str, spec) -> dict:
    out = subprocess.run([_python(tree), "-c", _RUNNER, json.dumps(spec)], cwd=tree,
                         capture_output=True, text=True, timeout=900)
    for line in out.stdout.splitlines():
        if line.startswith("AB-RESULT "):
            return dict(json.loads(line[len("AB-RESULT "):]))
    print(f"{tree}: {spec} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
    return {}


def _fmt(t: float) -> str:
    return f"{t * 1e6:9.2f} us" if t < 1e-3 else f"{t * 1e3:9.3f} ms"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    best: dict = {}
    specs = [s for s in BENCHMARKS if args.only in s[0] + (s[1] or "") + (s[2] or "")]
    for r in range(args.rounds):
        for spec in specs:
            for side, tree in (("a", args.a), ("b", args.b)) if r % 2 == 0 else \
                    (("b", args.b), ("a", args.a)):
                for name, t in _run(tree, spec).items():
                    cell = best.setdefault(name, {})
                    cell[side] = min(cell.get(side, float("inf")), t)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"{'benchmark':58s} {'A':>12s} {'B':>12s}  B/A")
    for name, cell in best.items():
        a, b = cell.get("a"), cell.get("b")
        if a is None or b is None:
            continue
        print(f"{name:58s} {_fmt(a)} {_fmt(b)}  {b / a:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
