"""One process of a parameter-server test job (started by
``python -m fw.distributed.launch --run_mode ps``): wide & deep CTR training.

argv: OUT_DIR MODE STEPS [--batch B] [--lr LR] [--save DIR] [--load DIR]
      [--check-rows DIR] [--kill-server I AFTER_S]
--check-rows: trainer 0 compares the rows and dense values the servers serve with
the checkpoint's files; with --kill-server, server I then kills itself (SIGKILL)
AFTER_S seconds later while the trainers go on training.
Each process writes OUT_DIR/pid.<role>.<index>; trainer 0 writes
OUT_DIR/result.json (test AUC, scores, the dense parameters).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ps_ctr as C  # noqa: E402

import fw  # noqa: E402
from fw.distributed import fleet  # noqa: E402
from fw.distributed.ps import PSError, SparseEmbedding  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("mode", choices=["sync", "async", "geo"])
p.add_argument("steps", type=int)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--lr", type=float, default=0.05)
p.add_argument("--save")
p.add_argument("--load")
p.add_argument("--kill-server", nargs=2, type=float)
p.add_argument("--check-rows")
args = p.parse_args()

fleet.init(role_maker=fleet.PaddleCloudRoleMaker())
role = "server" if fleet.is_server() else "trainer"
index = fleet.server_index() if fleet.is_server() else fleet.worker_index()
with open(os.path.join(args.out, f"pid.{role}.{index}"), "w") as f:
    f.write(str(os.getpid()))

fw.seed(0)
init = fw.nn.initializer.Uniform(*C.INIT)
model = C.WideDeep(lambda size, name: SparseEmbedding(size, param_attr=init, name=name))
strategy = fleet.DistributedStrategy()
strategy.a_sync = args.mode != "sync"
if args.mode == "geo":
    strategy.a_sync_configs = {"k_steps": 4}
opt = fleet.distributed_optimizer(fw.optimizer.Adagrad(args.lr, parameters=model.parameters()),
                                  strategy)

if fleet.is_server():
    fleet.init_server(args.load)
    if args.kill_server and int(args.kill_server[0]) == index:
        def die():
            # with --check-rows: once trainer 0 checked the reloaded rows
            flag = os.path.join(args.out, "check.0.json")
            while args.check_rows and not os.path.exists(flag):
                time.sleep(0.05)
            time.sleep(args.kill_server[1])
            print(f"KILLING server {index} at {time.time():.3f}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        threading.Thread(target=die, daemon=True).start()
    fleet.run_server()
    print(f"server {index} done", flush=True)
    sys.exit(0)


def train():
    fleet.init_worker()
    tid, T = fleet.worker_index(), fleet.worker_num()
    if args.check_rows and tid == 0:
        # every row and the dense parameters as saved (read from the files directly)
        from fw.distributed.ps.checkpoint import read_manifest

        man = read_manifest(args.check_rows)
        worst = 0.0
        for cfg in man["sparse"]:
            layer = model.wide if cfg["name"] == "wide" else model.deep
            for fname in cfg["files"]:
                with np.load(os.path.join(args.check_rows, fname), allow_pickle=False) as z:
                    ids, vals = z["ids"], z["values"]
                got = opt.pull_rows(layer, ids, create=False)
                worst = max(worst, float(np.abs(got - vals).max()) if ids.size else 0.0)
        tmp = os.path.join(args.out, "check.tmp")
        with open(tmp, "w") as f:
            json.dump({"max_abs_diff": worst, "dense": opt.dense_flat().tolist(),
                       "rows": sum(c["rows"] for c in man["sparse"])}, f)
        os.replace(tmp, os.path.join(args.out, "check.0.json"))
    if args.check_rows and not args.kill_server:
        fleet.stop_worker()
        return

    # the data of at most 200 steps, cycled (the killed-server job runs until it fails)
    n_data = max(1, min(args.steps, 200))
    ids, dense, y = C.batches(n_data, T, args.batch)
    B = args.batch
    losses = []
    t0 = time.time()
    for s in range(args.steps):
        k = s % n_data
        sl = slice((k * T + tid) * B, (k * T + tid + 1) * B)
        loss = C.bce(model(fw.to_tensor(ids[sl]), fw.to_tensor(dense[sl])), fw.to_tensor(y[sl]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    train_s = time.time() - t0
    if args.mode == "geo":
        opt.flush()
    fleet.barrier_worker()
    if tid == 0:
        model.eval()
        tids, tdense, ty = C.test_set()
        with fw.no_grad():
            score = model(fw.to_tensor(tids), fw.to_tensor(tdense)).numpy()
        res = {"auc": C.auc(score, ty), "score": score.tolist(), "losses": losses,
               "dense": opt.dense_flat().tolist(), "train_s": train_s}
        if args.save:
            fleet.save_persistables(dirname=args.save)
        with open(os.path.join(args.out, "result.json"), "w") as f:
            json.dump(res, f)
    fleet.stop_worker()
    print(f"trainer {tid} done", flush=True)


try:
    train()
except PSError as e:
    print(f"TRAINER {fleet.worker_index()} FAILED at {time.time():.3f}: "
          f"{type(e).__name__}: {e}", flush=True)
    raise
