"""fw.jit: a function WITHOUT source (made by ``exec``) with one tensor-dependent
branch, captured by trace with a graph break at the branch (`fw.jit._segments`),
against the same function run eagerly.

The body is non-trivial (a 3-layer tanh MLP step on a 16x64 batch, ~25 ops
before the branch and ~12 after it): captured, each side is one compiled program (two
segments per call, the branch outcome a guard), so the call saves per-op
dispatch (the small sizes make dispatch, not the matmul kernels, the cost: that
is where a captured function gains). Both branch outcomes are cached after the
first calls. Run as a script for a quick table:
``python asv_bench/benchmarks/bench_jit_capture.py``.
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


class CaptureOneBranch:
    """`time_captured` vs `time_eager`: the same call, positive and negative inputs."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.fn = _make()
        self.sf = fw.jit.to_static(self.fn)
        self.ws = [fw.to_tensor(rng.standard_normal((64, 64)).astype("float32") * 0.06)
                   for _ in range(3)]
        self.xp = fw.to_tensor(np.abs(rng.standard_normal((16, 64))).astype("float32"))
        self.xn = fw.to_tensor(-np.abs(rng.standard_normal((16, 64))).astype("float32"))
        with fw.no_grad():
            for x in (self.xp, self.xn):  # trace both paths
                self.sf(x, *self.ws)

    def time_eager(self):
        with fw.no_grad():
            self.fn(self.xp, *self.ws)
            self.fn(self.xn, *self.ws)

    def time_captured(self):
        with fw.no_grad():
            self.sf(self.xp, *self.ws)
            self.sf(self.xn, *self.ws)


if __name__ == "__main__":
    import timeit

    b = CaptureOneBranch()
    b.setup()
    for name in ("time_eager", "time_captured"):
        t = min(timeit.repeat(getattr(b, name), number=50, repeat=5)) / 50
        print(f"{name}: {t * 1e3:.3f} ms per pair of calls")
    print(b.sf.conversion_report)
