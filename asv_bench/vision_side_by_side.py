"""fw.vision against Paddle (+ OpenCV, its backend for NumPy images) on the same machine:
nms and the NumPy-image transforms that data loading spends its time in. Usage:

    python asv_bench/vision_side_by_side.py [--paddle-python PATH] [--repeat N]

fw runs in this interpreter; Paddle runs here when importable, else in the interpreter
given by ``--paddle-python`` (a child process with a timeout, which runs this script
with ``--framework paddle`` and prints JSON). Each figure is the best mean time of one
call over ``--repeat`` timed loops, in milliseconds; "-" when a framework is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time

import numpy as np


def _timeit(fn, repeat: int, min_time: float = 0.1) -> float:
    fn()
    n, best = 1, float("inf")
    for _ in range(repeat):
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            dt = time.perf_counter() - t0
            if dt >= min_time or n >= 1 << 14:
                break
            n *= 2
        best = min(best, dt / n)
    return best * 1e3


def _inputs():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (375, 500, 3)).astype(np.uint8)
    xy = rng.uniform(0, 400, (2000, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(10, 100, (2000, 2))], 1).astype(np.float32)
    scores = rng.uniform(0, 1, 2000).astype(np.float32)
    cats = rng.integers(0, 10, 2000).astype(np.int64)
    return img, boxes, scores, cats


def workloads(pd):
    """{name: closure} for a Paddle-like module `pd` (fw or paddle)."""
    T = pd.vision.transforms
    img, boxes, scores, cats = _inputs()
    b, s, c = pd.to_tensor(boxes), pd.to_tensor(scores), pd.to_tensor(cats)
    resize_crop = T.Compose([T.Resize(256), T.CenterCrop(224)])
    bicubic = T.Resize((300, 400), interpolation="bicubic")
    rotation = T.RandomRotation(30)
    jitter = T.ColorJitter(0.4, 0.4, 0.4, 0.1)
    affine = T.RandomAffine(15, translate=(0.1, 0.1), scale=(0.9, 1.1), interpolation="bilinear")
    persp = T.RandomPerspective(prob=1.0, distortion_scale=0.3)
    return {
        "nms 2000 boxes (scores)": lambda: pd.vision.ops.nms(b, 0.5, scores=s),
        "nms 2000 boxes, 10 categories": lambda: pd.vision.ops.nms(
            b, 0.5, scores=s, category_idxs=c, categories=list(range(10)), top_k=300),
        "Resize(256)+CenterCrop(224) u8": lambda: resize_crop(img),
        "Resize bicubic 375x500->300x400 u8": lambda: bicubic(img),
        "RandomRotation(30) u8": lambda: rotation(img),
        "RandomAffine bilinear u8": lambda: affine(img),
        "RandomPerspective u8": lambda: persp(img),
        "ColorJitter(.4,.4,.4,.1) u8": lambda: jitter(img),
    }


def run(framework: str, repeat: int) -> dict:
    if framework == "paddle":
        import paddle as pd

        pd.set_device("cpu")
    else:
        import fw as pd
        import fw.vision  # noqa: F401
    pd.seed(0)
    return {name: _timeit(fn, repeat) for name, fn in workloads(pd).items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paddle-python", help="an interpreter with paddle (and cv2) installed")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--framework", choices=["fw", "paddle"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.framework:  # child mode: one framework, JSON out
        print(json.dumps(run(args.framework, args.repeat)))
        return
    res = {"fw": run("fw", args.repeat)}
    if importlib.util.find_spec("paddle") is not None:
        res["paddle"] = run("paddle", args.repeat)
    elif args.paddle_python:
        p = subprocess.run([args.paddle_python, __file__, "--framework", "paddle",
                            "--repeat", str(args.repeat)], capture_output=True, text=True,
                           timeout=900, check=False)
        if p.returncode == 0:
            res["paddle"] = json.loads(p.stdout.strip().splitlines()[-1])
        else:
            print(f"paddle run failed:\n{p.stderr[-2000:]}", file=sys.stderr)
    names = list(res["fw"])
    print(f"{'workload':40s} {'fw ms':>9s} {'paddle ms':>10s} {'fw/paddle':>9s}")
    for n in names:
        f = res["fw"][n]
        p = res.get("paddle", {}).get(n)
        ratio = f"{f / p:9.2f}" if p else f"{'-':>9s}"
        ptxt = f"{p:10.3f}" if p else f"{'-':>10s}"
        print(f"{n:40s} {f:9.3f} {ptxt} {ratio}")


if __name__ == "__main__":
    main()
