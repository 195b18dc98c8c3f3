"""fw.jit: a function WITHOUT source (made by ``exec``) with one tensor-dependent
branch, captured by trace with a graph break at the branch (`fw.jit._segments`),
against the same function run eagerly.

The body is non-trivial (a 3-layer tanh MLP step on a 16x64 batch, ~25 ops
before the branch and ~12 after it): captured, each side is one compiled program (two
segments per call, the branch outcome a guard), so the call saves per-op
dispatch (the small sizes make dispatch, not the matmul kernels, the cost: that
is where a captured function gains). Both branch outcomes are cached after the
first calls. `CaptureOneBranchLarge` is the matmul-heavy case; `time_whole_program` is the
same body with source (AST conversion, one program). Run as a script for a quick
table (interleaved medians): ``python asv_bench/benchmarks/bench_jit_capture.py``.
"""

import numpy as np

import fw

_SRC = """
def body(x, w1, w2, w3):
    h = fw.tanh(fw.matmul(x, w1))
    for w in (w2, w3, w2):
        h = fw.tanh(fw.matmul(h, w)) + h * 0.5
        h = fw.nn.functional.gelu(h) - fw.sigmoid(h) * 0.25 + fw.exp(-h * h)
    if h.mean() > 0:
        for w in (w2, w3):
            h = fw.tanh(fw.matmul(h, w)) * 2.0 + h
            h = fw.nn.functional.silu(h) + fw.abs(h) * 0.1 - 0.05
    else:
        for w in (w3, w1):
            h = fw.tanh(fw.matmul(h, w)) * 0.5 - h
            h = fw.nn.functional.softplus(h) - fw.sqrt(h * h + 1.0)
    return (h * h).mean(axis=1)
"""


def _make():
    ns = {"fw": fw}
    exec(_SRC, ns)  # noqa: S102 - the point: a function whose source is not available
    return ns["body"]


def _make_with_source(directory):
    """The same body from a real file: AST conversion, one whole program."""
    import importlib.util
    import os

    path = os.path.join(directory, "bench_jit_capture_body.py")
    with open(path, "w") as f:
        f.write("import fw\n" + _SRC)
    spec = importlib.util.spec_from_file_location("bench_jit_capture_body", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.body


class CaptureOneBranch:
    """`time_captured` vs `time_eager`: the same call, positive and negative inputs."""

    batch, width = 16, 64

    def setup(self):
        import tempfile

        rng = np.random.default_rng(0)
        self.fn = _make()
        self.sf = fw.jit.to_static(self.fn)
        self._dir = tempfile.TemporaryDirectory()
        self.whole = fw.jit.to_static(_make_with_source(self._dir.name))
        n, b = self.width, self.batch
        self.ws = [fw.to_tensor(rng.standard_normal((n, n)).astype("float32") * 0.06)
                   for _ in range(3)]
        self.xp = fw.to_tensor(np.abs(rng.standard_normal((b, n))).astype("float32"))
        self.xn = fw.to_tensor(-np.abs(rng.standard_normal((b, n))).astype("float32"))
        with fw.no_grad():
            for x in (self.xp, self.xn):  # trace both paths
                self.sf(x, *self.ws)
                self.whole(x, *self.ws)

    def teardown(self):
        self._dir.cleanup()

    def time_whole_program(self):
        with fw.no_grad():
            self.whole(self.xp, *self.ws)
            self.whole(self.xn, *self.ws)

    def time_eager(self):
        with fw.no_grad():
            self.fn(self.xp, *self.ws)
            self.fn(self.xn, *self.ws)

    def time_captured(self):
        with fw.no_grad():
            self.sf(self.xp, *self.ws)
            self.sf(self.xn, *self.ws)


class CaptureOneBranchLarge(CaptureOneBranch):
    """The same with a matmul-heavy body (64x256 batch, 256x256 weights): the oneDNN
    products dominate; captured and eager run the same kernels (brgemm, float32: see
    test_capture_reads' kernel guard), so the capture may only save dispatch. On a
    loaded 2-core machine oneDNN's OpenMP pool (2 threads, spinning) makes single
    timings swing 2-10x: compare medians of interleaved runs, or run with
    ``OMP_NUM_THREADS=1``."""

    batch, width = 64, 256


if __name__ == "__main__":
    import statistics
    import time

    for cls in (CaptureOneBranch, CaptureOneBranchLarge):
        b = cls()
        b.setup()
        names = ("time_eager", "time_captured", "time_whole_program")
        times: dict = {n: [] for n in names}
        for _ in range(15):  # interleaved, so load changes hit every variant alike
            for n in names:
                t0 = time.perf_counter()
                for _ in range(5):
                    getattr(b, n)()
                times[n].append((time.perf_counter() - t0) / 5)
        for n in names:
            print(f"{cls.__name__}.{n}: median {statistics.median(times[n]) * 1e3:.3f} ms, "
                  f"min {min(times[n]) * 1e3:.3f} ms per pair of calls")
        b.teardown()
    print(b.sf.conversion_report)
