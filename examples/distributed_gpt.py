"""The character-level GPT of char_gpt.py trained data-parallel on several ranks.

Every rank builds the same model (fleet broadcasts rank 0's parameters), draws its
own random windows of the text (a different stream per rank), and the gradients are
averaged over the ranks during backward (`fw.DataParallel`'s buckets), so the
global batch is ``--batch-size`` x ranks. ``--zero 1|2|3`` shards the optimizer
state (+ gradients, + parameters) with `group_sharded_parallel` instead. Rank 0
prints the losses; every rank prints a checksum of its parameters at the end, which
must be the same on all ranks (the replicas never drift apart). Run:

    mpiexec -n 2 python examples/distributed_gpt.py --quick
    python -m fw.distributed.launch --nproc_per_node 2 examples/distributed_gpt.py --quick

(one process works too: world size 1).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from char_gpt import DATA, CharGPT, CharVocab, get_batch, lm_loss  # noqa: E402

import fw  # noqa: E402
from fw.distributed import fleet  # noqa: E402
from fw.distributed.sharding import group_sharded_parallel  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (60 steps)")
    ap.add_argument("--steps", type=int, default=None, help="default 400 (quick: 60)")
    ap.add_argument("--batch-size", type=int, default=8, help="per rank")
    ap.add_argument("--block-size", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--zero", type=int, default=0, choices=[0, 1, 2, 3],
                    help="ZeRO stage via group_sharded_parallel (0: plain data parallel)")
    ap.add_argument("--text", default=DATA)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    steps = args.steps if args.steps is not None else (60 if args.quick else 400)
    fleet.init(is_collective=True, strategy=fleet.DistributedStrategy())
    rank, world = fleet.worker_index(), fleet.worker_num()
    fw.seed(args.seed)  # the same initial model everywhere (and rank 0's is broadcast)
    rng = np.random.default_rng([args.seed, rank])  # a different data stream per rank
    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    vocab = CharVocab(text)
    data = vocab.encode(text)
    model = CharGPT(len(vocab), args.block_size, args.layers, args.d_model, args.heads, 0.0)
    opt = fw.optimizer.AdamW(learning_rate=args.lr, parameters=model.parameters(),
                             weight_decay=0.01)
    if args.zero:
        level = {1: "os", 2: "os_g", 3: "p_g_os"}[args.zero]
        model, opt, _ = group_sharded_parallel(model, opt, level)
    else:
        model = fleet.distributed_model(model)
        opt = fleet.distributed_optimizer(opt)
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"{world} rank(s), global batch {args.batch_size * world} windows of "
        f"{args.block_size} characters, vocabulary {len(vocab)} (ln V = "
        f"{math.log(len(vocab)):.3f}), ZeRO stage {args.zero}")
    losses = []
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        loss = lm_loss(model, *get_batch(data, args.block_size, args.batch_size, rng))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
        if step == 1 or step % max(steps // 6, 1) == 0:
            say(f"step {step:4d}  loss (rank 0's batch) {np.mean(losses[-10:]):.3f}")
    seconds = time.perf_counter() - t0
    sd = model.state_dict()
    checksum = float(sum(np.abs(v.numpy()).astype(np.float64).sum() for v in sd.values()))
    tail = max(steps // 10, 1)
    initial, final = float(np.mean(losses[:tail])), float(np.mean(losses[-tail:]))
    say(f"loss {initial:.3f} -> {final:.3f} over {steps} steps ({seconds:.1f} s, "
        f"{1e3 * seconds / steps:.0f} ms/step)")
    print(f"rank {rank} parameter checksum {checksum:.6f}", flush=True)
    return {"initial_loss": initial, "final_loss": final, "checksum": checksum,
            "ln_vocab": math.log(len(vocab)), "rank": rank, "world": world}


if __name__ == "__main__":
    main()
