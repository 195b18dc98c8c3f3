"""Step time of `dist.to_static` on 4 ranks, mesh [2, 2] (dp x mp), for the test GPT
of tests/test_dist_static_ranks.py (examples/char_gpt.py: 1 layer, d_model 32,
4 heads, batch 4 x 16 characters; the token embedding and the head annotated
``[Replicate(), Shard(1)]``, the batch sharded over dp), next to dense eager
training of the same model in one process — the figures in the README's
"dist.to_static" section.

    python packages/fw-distributed/tools/time_dist_static_gpt.py [--steps 20] [--no-priority]

Each run prints the machine's load average before and after. ``--no-priority``
measures at normal priority; by default the job runs at raised priority
(`validate_cost_model.prioritize`: nice -20 and the session's CFS autogroup at -20,
root only) so that other jobs on the shared machine stay out of the figures.
``--worker`` (internal) is one rank."""

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
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")


def _gpt_and_batches(fw, n):
    import numpy as np

    sys.path.insert(0, EXAMPLES)
    from char_gpt import DATA, CharGPT, CharVocab

    with open(DATA) as f:
        text = f.read()
    vocab = CharVocab(text)
    fw.seed(11)
    model = CharGPT(len(vocab), 16, n_layer=1, d_model=32, n_head=4, tied=False)
    data = vocab.encode(text)
    rng = np.random.default_rng(5)
    out = []
    for _ in range(n):
        start = rng.integers(0, len(data) - 17, 4)
        idx = start[:, None] + np.arange(16)[None, :]
        out.append((data[idx], data[idx + 1]))
    return model, out


def _loss(fw):
    import fw.nn.functional as F

    def loss(logits, label):
        return F.cross_entropy(logits.reshape([-1, logits.shape[-1]]), label.reshape([-1]))
    return loss


def worker(steps, out_path):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import fw
    import fw.distributed as dist

    dist.init_parallel_env()
    rank = dist.get_rank()
    R, S1 = dist.Replicate(), dist.Shard(1)
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    model, batches = _gpt_and_batches(fw, steps + 3)

    def shard_fn(name, layer, m):
        if name in ("tok", "head"):
            layer.weight = dist.shard_tensor(layer.weight, m, [R, S1])

    model = dist.shard_layer(model, mesh, shard_fn)
    opt = fw.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters())
    loader = dist.shard_dataloader([(fw.to_tensor(x), fw.to_tensor(y)) for x, y in batches],
                                   mesh, shard_dims="dp")
    dm = dist.to_static(model, loader, _loss(fw), opt)
    times, build = [], None
    for i, (x, y) in enumerate(loader):
        dist.barrier()
        t = time.perf_counter()
        float(dm(x, y))
        dt = time.perf_counter() - t
        if i == 0:
            build = dt
        elif i >= 3:
            times.append(dt)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"first_call": build, "times": times}, f)
    dist.barrier()


def dense(steps):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import fw

    model, batches = _gpt_and_batches(fw, steps + 3)
    opt = fw.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters())
    loss_fn = _loss(fw)
    times = []
    for i, (x, y) in enumerate(batches):
        t = time.perf_counter()
        loss = loss_fn(model(fw.to_tensor(x)), fw.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        float(loss)
        if i >= 3:
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--no-priority", action="store_true")
    ap.add_argument("--worker", nargs=2, metavar=("STEPS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(int(args.worker[0]), args.worker[1])
    sys.path.insert(0, HERE)
    from validate_cost_model import _env, prioritize

    priority = [] if args.no_priority else prioritize()
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="fw_time_static_") as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", "4",
               "--log_dir", os.path.join(tmp, "log"), "--timeout", str(args.timeout),
               os.path.abspath(__file__), "--worker", str(args.steps), out]
        p = subprocess.run(cmd, capture_output=True, text=True, env=_env(),
                           timeout=args.timeout + 30, process_group=0)
        if p.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"the 4-rank job failed (exit {p.returncode}):\n"
                               f"{(p.stdout + p.stderr)[-3000:]}")
        with open(out) as f:
            res = json.load(f)
    d = dense(args.steps)
    load1 = os.getloadavg()
    print(f"priority: {', '.join(priority) or 'normal'}; load average before "
          f"{load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f}, after "
          f"{load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f}")
    print(f"dist.to_static [2, 2] on 4 ranks: first call (build + step) "
          f"{res['first_call']:.2f} s, step median {statistics.median(res['times']) * 1e3:.1f} ms "
          f"(min {min(res['times']) * 1e3:.1f}, max {max(res['times']) * 1e3:.1f}, "
          f"{len(res['times'])} steps)")
    print(f"dense eager, one process: step median {d * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
