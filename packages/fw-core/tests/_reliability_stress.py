"""Thread stress of every op family with a native kernel (run by test_reliability_threads.py
in a subprocess, so that a crash is a test failure, not a dead pytest).

Each case is a function of a seed returning NumPy arrays. The results of every case on
every seed are computed once in the main thread, then recomputed from THREADS threads at
once (each thread walks the seeds in its own order, so cached primitives created by one
thread run in the others) and compared exactly. Prints one summary line.

usage: python _reliability_stress.py THREADS ROUNDS
"""

import sys
import threading
import time

import numpy as np

import fw
from fw.core.ops import call

F = fw.nn.functional


def _t(rng, *shape, scale=1.0):
    return fw.to_tensor((rng.standard_normal(shape) * scale).astype(np.float32))


def _conv(groups, cin=16, cout=16):
    def case(seed):
        rng = np.random.default_rng(seed)
        x = _t(rng, 1 + seed % 8, cin, 8, 8)
        w = _t(rng, cout, cin // groups, 3, 3)
        return [F.conv2d(x, w, padding=1, groups=groups).numpy()]
    return case


def conv_transpose(seed):
    rng = np.random.default_rng(seed)
    x, w = _t(rng, 1 + seed % 4, 8, 6, 6), _t(rng, 8, 4, 3, 3)
    return [F.conv2d_transpose(x, w, stride=2, padding=1).numpy()]


def matmul(seed):
    rng = np.random.default_rng(seed)
    m = 32 + 16 * (seed % 5)
    return [fw.matmul(_t(rng, m, 96), _t(rng, 96, 80)).numpy(),
            F.linear(_t(rng, 4, m, 64), _t(rng, 64, 48), _t(rng, 48)).numpy()]


def pool(seed):
    rng = np.random.default_rng(seed)
    x = _t(rng, 1 + seed % 4, 8, 12, 12)
    return [F.max_pool2d(x, 3, 2, 1).numpy(), F.avg_pool2d(x, 2, 2).numpy()]


def norm_softmax(seed):
    rng = np.random.default_rng(seed)
    x = _t(rng, 2 + seed % 4, 8, 6, 6)
    mean, var = fw.zeros([8]), fw.ones([8])
    h = _t(rng, 3 + seed % 5, 64)
    return [F.batch_norm(x, mean, var, training=False).numpy(),
            F.layer_norm(h, [64]).numpy(), F.softmax(h, axis=-1).numpy(),
            F.log_softmax(h, axis=-1).numpy()]


def fused(seed):
    rng = np.random.default_rng(seed)
    act = ("relu", "gelu_tanh", "gelu_erf", "sigmoid", "tanh", "silu")[seed % 6]
    x, y, b, r = _t(rng, 64, 64), _t(rng, 64, 64), _t(rng, 64), _t(rng, 64, 64)
    xc, wc, bc = _t(rng, 2, 16, 8, 8), _t(rng, 16, 4, 3, 3), _t(rng, 16)
    rc = _t(rng, 2, 16, 8, 8)
    return [call("fused_matmul", x, y, b, r, activation=act).numpy(),
            call("fused_conv", xc, wc, bc, rc, padding=1, groups=4, activation=act).numpy(),
            F.gelu(_t(rng, 300, 300)).numpy(), F.silu(_t(rng, 300, 300)).numpy()]


def loss(seed):
    rng = np.random.default_rng(seed)
    logits = _t(rng, 16 + seed % 8, 10)
    label = fw.to_tensor(rng.integers(0, 10, (16 + seed % 8, 1)).astype(np.int64))
    return [F.cross_entropy(logits, label).numpy()]


def train_step(seed):
    """conv/linear forward and backward plus an Adam update (the optimizer kernels)."""
    rng = np.random.default_rng(seed)
    conv = fw.nn.Conv2D(4, 8, 3, padding=1, groups=2)
    fc = fw.nn.Linear(8 * 6 * 6, 10)
    for p in conv.parameters() + fc.parameters():  # not fw.seed: the global rng is shared
        p.set_value((rng.standard_normal(p.shape) * 0.1).astype(np.float32))
    opt = fw.optimizer.Adam(parameters=conv.parameters() + fc.parameters())
    x = _t(rng, 4, 4, 6, 6)
    for _ in range(2):
        out = fc(F.relu(conv(x)).reshape([4, -1]))
        out.mean().backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy() for p in conv.parameters() + fc.parameters()]


CASES = {"conv": _conv(1), "conv_grouped": _conv(4), "conv_depthwise": _conv(16),
         "conv_transpose": conv_transpose, "matmul_linear": matmul, "pool": pool,
         "norm_softmax": norm_softmax, "fused": fused, "loss": loss, "train_step": train_step}


def main():
    threads, rounds = int(sys.argv[1]), int(sys.argv[2])
    seeds = range(8)
    want = {(name, s): case(s) for name, case in CASES.items() for s in seeds}
    errors = []

    def worker(tid):
        try:
            for r in range(rounds):
                for name, case in CASES.items():
                    for k in range(len(seeds)):
                        s = seeds[(k + tid + r) % len(seeds)]
                        for a, b in zip(case(s), want[(name, s)]):
                            np.testing.assert_array_equal(a, b, err_msg=f"{name} seed {s}")
        except BaseException as e:  # noqa: BLE001 - reported by the parent test
            errors.append(f"thread {tid}: {type(e).__name__}: {e}")

    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    calls = threads * rounds * len(seeds) * len(CASES)
    print(f"STRESS threads={threads} rounds={rounds} cases={len(CASES)} calls={calls} "
          f"seconds={time.perf_counter() - t0:.1f} errors={len(errors)}")
    for e in errors[:5]:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
