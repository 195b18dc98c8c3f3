"""fw.inference.serving: requests per second with dynamic batching against one
request per model call.

The workload: an MLP 784-2048-2048-10 (ReLU; 23 MB of float32 weights, so a
batch-1 call is a memory-bound matrix-vector product of a few ms, more than the
HTTP path costs) served on 127.0.0.1 by uvicorn in a thread of the benchmark
process; 16 client threads with keep-alive connections (http.client) send 256
requests of one row each as ``.npy`` bodies and read the answers. ``batched``:
``max_batch_size=32, batch_timeout_ms=2``; ``one_at_a_time``: ``max_batch_size=1``.
Both run the model on one math thread (``cpu_threads=1``): with the cores shared by
the clients and the event loop, a multi-threaded oneDNN call mostly waits for its
threads. The clients share the process (and its GIL) with the server, so the
figures include their cost; both modes pay it alike.

Run as a script for both figures side by side:
``python asv_bench/benchmarks/bench_serving.py [rounds]``.
"""

import http.client
import io
import tempfile
import threading
import time

import numpy as np

SIZES = (784, 2048, 2048, 10)
REQUESTS = 256
CLIENTS = 16
MODES = {"batched": dict(max_batch_size=32, batch_timeout_ms=2.0, cpu_threads=1),
         "one_at_a_time": dict(max_batch_size=1, cpu_threads=1)}


def _mlp_file(directory):
    # bench_inference's MLP, wider (imported here: asv runs this file as
    # benchmarks.bench_serving, with the benchmarks package importable)
    from benchmarks.bench_inference import _mlp_file as mlp_file

    return mlp_file(directory, SIZES)[0]


def _bodies(n):
    rng = np.random.default_rng(1)
    out = []
    for _ in range(n):
        buf = io.BytesIO()
        np.save(buf, rng.standard_normal((1, SIZES[0])).astype(np.float32))
        out.append(buf.getvalue())
    return out


def _blast(port, bodies, clients=CLIENTS):
    """Send every body from `clients` threads; returns requests per second."""
    todo = iter(range(len(bodies)))
    lock = threading.Lock()
    failed = []

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            while True:
                with lock:
                    i = next(todo, None)
                if i is None:
                    return
                conn.request("POST", "/v1/models/mlp:predict", bodies[i],
                             {"Content-Type": "application/x-npy"})
                r = conn.getresponse()
                r.read()
                if r.status != 200:
                    failed.append(r.status)
        finally:
            conn.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    seconds = time.perf_counter() - t0
    if failed or any(t.is_alive() for t in threads):
        raise RuntimeError(f"serving benchmark: {len(failed)} requests failed ({failed[:5]}) "
                           f"or clients hung")
    return len(bodies) / seconds


class Throughput:
    params = [list(MODES)]
    param_names = ["mode"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, mode):
        from fw.inference.serving import Server, ServingOptions

        self.dir = tempfile.TemporaryDirectory()
        path = _mlp_file(self.dir.name)
        self.server = Server({"mlp": path}, ServingOptions(**MODES[mode]), port=0).start(120)
        self.bodies = _bodies(REQUESTS)
        _blast(self.server.port, self.bodies[:32])  # warm up connections and kernels

    def teardown(self, mode):
        self.server.stop(60)
        self.dir.cleanup()

    def track_requests_per_second(self, mode):
        return _blast(self.server.port, self.bodies)

    track_requests_per_second.unit = "requests/s"


if __name__ == "__main__":
    import sys

    sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])  # for benchmarks.bench_inference
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    best = {m: 0.0 for m in MODES}
    for _ in range(rounds):  # interleaved: both modes see the same machine load
        for mode in MODES:
            b = Throughput()
            b.setup(mode)
            try:
                best[mode] = max(best[mode], b.track_requests_per_second(mode))
            finally:
                b.teardown(mode)
    for mode, rps in best.items():
        print(f"{mode:14s} {rps:8.0f} requests/s (best of {rounds})")
    print(f"batched / one at a time: {best['batched'] / best['one_at_a_time']:.2f}x")
