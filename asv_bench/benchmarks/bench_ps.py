"""fw.distributed.ps: sparse pull/push throughput (ids/s).

- `SparseTableThroughput`: one server's table in this process (the id index, row
  creation, the Adagrad rule): pull of existing rows, pull creating rows, push.
- `PullPushOverMPI`: end to end on a launched job (``python -m
  fw.distributed.launch --run_mode ps --server_num 2 --trainer_num 1`` running
  this file as the script): one trainer pulls (creating rows), pushes (Adagrad)
  and pulls again (existing rows) batches of BATCH distinct ids drawn from a
  10^6-id space through 2 servers over MPI, and times a 1-id pull (the round
  trip); medians over ROUNDS rounds.

Run by hand: ``python asv_bench/benchmarks/bench_ps.py`` prints the job's JSON.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

VOCAB = 10 ** 6
DIM = 8
BATCH = 10_000
ROUNDS = 30


def _table():
    from fw.distributed.ps.table import SparseTable

    return SparseTable("bench", DIM, {"name": "adagrad", "learning_rate": 0.05},
                       {"kind": "uniform", "low": -0.01, "high": 0.01}, seed=1, vocab=VOCAB)


class SparseTableThroughput:
    """One table in process: BATCH distinct ids per call from a 10^6-id space."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.t = _table()
        self.ids = np.unique(rng.integers(0, VOCAB, BATCH))
        self.t.pull(self.ids)
        self.grads = rng.standard_normal((self.ids.size, DIM)).astype(np.float32)
        self.fresh = np.unique(rng.integers(0, VOCAB, BATCH))

    def _rate(self, fn):
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return self.ids.size / best

    def track_pull_existing_ids_per_s(self):
        return self._rate(lambda: self.t.pull(self.ids))

    track_pull_existing_ids_per_s.unit = "ids/s"

    def track_push_adagrad_ids_per_s(self):
        return self._rate(lambda: self.t.push(self.ids, self.grads))

    track_push_adagrad_ids_per_s.unit = "ids/s"

    def track_pull_creating_ids_per_s(self):
        def create():
            t = _table()
            t0 = time.perf_counter()
            t.pull(self.fresh)
            return time.perf_counter() - t0
        return self.fresh.size / min(create() for _ in range(5))

    track_pull_creating_ids_per_s.unit = "ids/s"


def run_job(timeout=600):
    """Launch the 2-server, 1-trainer job; returns its JSON result."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "FW_", "PADDLE_"))
           and k not in ("TRAINING_ROLE", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["OMP_NUM_THREADS"] = "1"
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "result.json")
        p = subprocess.run([sys.executable, "-m", "fw.distributed.launch", "--run_mode", "ps",
                            "--server_num", "2", "--trainer_num", "1", "--log_dir",
                            os.path.join(d, "log"), os.path.abspath(__file__), "--job", out],
                           capture_output=True, text=True, timeout=timeout, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"bench_ps job failed:\n{p.stdout}\n{p.stderr}")
        with open(out) as f:
            return json.load(f)


class PullPushOverMPI:
    """2 servers, 1 trainer, over MPI: BATCH distinct ids per request."""

    timeout = 900

    def setup_cache(self):
        return run_job()

    def track_pull_ids_per_s(self, res):
        return res["pull_ids_per_s"]

    track_pull_ids_per_s.unit = "ids/s"

    def track_pull_existing_ids_per_s(self, res):
        return res["pull_existing_ids_per_s"]

    track_pull_existing_ids_per_s.unit = "ids/s"

    def track_push_ids_per_s(self, res):
        return res["push_ids_per_s"]

    track_push_ids_per_s.unit = "ids/s"

    def track_round_trip_1_id_us(self, res):
        return res["one_id_round_trip_s"] * 1e6

    track_round_trip_1_id_us.unit = "us"


def _job(out):
    import fw
    from fw.distributed import fleet
    from fw.distributed.ps import SparseEmbedding, runtime

    fleet.init(role_maker=fleet.PaddleCloudRoleMaker())
    emb = SparseEmbedding([VOCAB, DIM], param_attr=fw.nn.initializer.Uniform(-0.01, 0.01),
                          name="bench")
    lin = fw.nn.Linear(DIM, 1)
    fleet.distributed_optimizer(fw.optimizer.Adagrad(0.05, parameters=lin.parameters()))
    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()
        return
    fleet.init_worker()
    c = runtime.current().client
    rng = np.random.default_rng(0)
    pulls, again, pushes, ones = [], [], [], []
    grads = rng.standard_normal((BATCH, DIM)).astype(np.float32)
    for r in range(ROUNDS + 3):
        ids = np.unique(rng.integers(0, VOCAB, BATCH))
        t0 = time.perf_counter()
        c.pull_sparse(emb.table_id, ids, DIM)          # creates the rows: the first touch
        t1 = time.perf_counter()
        c.call(c.push_sparse(emb.table_id, ids, grads[:ids.size]), "bench push")
        t2 = time.perf_counter()
        c.pull_sparse(emb.table_id, ids[:1], DIM)
        t3 = time.perf_counter()
        c.pull_sparse(emb.table_id, ids, DIM)          # the same rows again: they exist
        t4 = time.perf_counter()
        if r >= 3:                                      # warm-up rounds left out
            pulls.append(ids.size / (t1 - t0))
            pushes.append(ids.size / (t2 - t1))
            ones.append(t3 - t2)
            again.append(ids.size / (t4 - t3))
    res = {"pull_ids_per_s": float(np.median(pulls)),
           "pull_existing_ids_per_s": float(np.median(again)),
           "push_ids_per_s": float(np.median(pushes)),
           "one_id_round_trip_s": float(np.median(ones)), "batch": BATCH, "rounds": ROUNDS,
           "servers": 2, "loadavg": os.getloadavg()[0]}
    with open(out, "w") as f:
        json.dump(res, f)
    fleet.stop_worker()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--job":
        _job(sys.argv[2])
    else:
        print(json.dumps(run_job()))
