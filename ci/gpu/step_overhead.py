"""The Python cost of fw's train step per op on a device, and its host syncs.

    FW_DISABLE_NATIVE=1 python ci/gpu/step_overhead.py [--device fake|gpu] [--steps N]
        [--static] [--cprofile K]

Runs the MLP step of the GPU issue (784-256-256-10, Adam, cross entropy) with tiny
sizes (batch 2, hidden 8) so that the kernels' own work is negligible and the step
time is the framework's Python work: dispatch, autograd, the optimizer. Prints the
step time, the number of kernel calls per step (every op table kernel is wrapped
with a counter) and their ratio, the microseconds per op. On the 'fake' device
(``fw.core.testing.fake_device``, a NumPy subclass) it also counts the host syncs
per step: every ``.item()``, ``float()``, ``int()``, ``bool()``, ``tolist()`` or
host copy of a device array, each of which waits for the GPU on a real device.
With --cprofile K it prints the K functions with the most own time.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import sys
import time
import traceback


def _count_kernels(counts):
    """Wrap every op's kernels with a call counter (restored by the returned fn)."""
    from fw.core.ops._registry import OPS

    saved = []
    for name, op in OPS.items():
        for key in list(op.kernels):
            k = op.kernels[key]
            saved.append((op.kernels, key, k))
            op.kernels[key] = _counted(k, name, counts)
        saved.append((op, "reference", op.reference))
        op.reference = _counted(op.reference, name, counts)

    def restore():
        for obj, key, k in saved:
            if isinstance(obj, dict):
                obj[key] = k
            else:
                setattr(obj, key, k)
    return restore


def _counted(fn, name, counts):
    def k(*a, **kw):
        counts[name] += 1
        return fn(*a, **kw)
    k.__wrapped__ = fn  # signature() and the executor's ufunc check see the kernel
    return k


def _count_syncs(syncs, where):
    """Count host reads of fake-device arrays; `where` collects their call sites."""
    import numpy as np

    from fw.core.testing.fake_device import FakeArray

    def wrap(name):
        orig = getattr(np.ndarray, name)
        if syncs is None:  # stop counting
            return orig

        def f(self, *a, **kw):
            if type(self) is FakeArray:
                syncs[0] += 1
                if where is not None:
                    st = traceback.extract_stack(limit=3)[0]
                    where[f"{name} {os.path.basename(st.filename)}:{st.lineno}"] += 1
            return orig(self, *a, **kw)
        return f

    for name in ("item", "__float__", "__int__", "__bool__", "tolist", "__index__"):
        setattr(FakeArray, name, wrap(name))


def build(device, static, model="mlp"):
    import numpy as np

    import fw
    from fw.core.testing import device as _dev

    os.environ["FW_TEST_DEVICE"] = device
    p = _dev.place()
    fw.seed(0)
    nn = fw.nn
    rng = np.random.default_rng(0)
    if model == "transformer":  # 2 layers, d 16, 2 heads, AdamW, mse
        net = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0), 2)
        x = fw.to_tensor(rng.standard_normal((2, 4, 16)).astype(np.float32), place=p)
        y = fw.to_tensor(rng.standard_normal((2, 4, 16)).astype(np.float32), place=p)
        loss_fn = fw.nn.functional.mse_loss
        opt_cls = fw.optimizer.AdamW
    else:
        net = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                            nn.Linear(8, 4))
        x = fw.to_tensor(rng.standard_normal((2, 16)).astype(np.float32), place=p)
        y = fw.to_tensor(rng.integers(0, 4, 2).astype(np.int64), place=p)
        loss_fn = fw.nn.functional.cross_entropy
        opt_cls = fw.optimizer.Adam
    model = net.to(device=p)
    opt = opt_cls(1e-3, parameters=model.parameters())

    def step(a, b):
        loss = loss_fn(model(a), b)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    if static:
        step = fw.jit.to_static(step)
    return lambda: step(x, y)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="fake", choices=["fake", "gpu"])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--static", action="store_true")
    ap.add_argument("--model", default="mlp", choices=["mlp", "transformer"])
    ap.add_argument("--cprofile", type=int, default=0)
    ap.add_argument("--where", action="store_true", help="print where the syncs are")
    args = ap.parse_args(argv)
    counts = collections.Counter()
    restore = _count_kernels(counts)  # while compiling too: a program binds its kernels
    counted = build(args.device, args.static, args.model)
    for _ in range(3):
        counted()
    counts.clear()
    counted()
    restore()
    n_ops = sum(counts.values())
    step = build(args.device, args.static, args.model)
    for _ in range(5):
        step()
    syncs, where = [0], (collections.Counter() if args.where else None)
    if args.device == "fake":
        _count_syncs(syncs, where)
        step()
        _count_syncs(None, None)
    sync = None
    if args.device == "gpu":
        import cupy

        sync = cupy.cuda.Device().synchronize
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(args.steps):
            step()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - t) / args.steps)
    mode = "to_static" if args.static else "eager"
    print(f"{args.model} {args.device} {mode}: step {best * 1e6:.0f} us, {n_ops} kernel calls, "
          f"{best * 1e6 / max(n_ops, 1):.1f} us/op, "
          f"{syncs[0] if args.device == 'fake' else '-'} host syncs/step")
    print("  ops:", ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    if where:
        for k, v in where.most_common():
            print(f"  sync {v}x {k}")
    if args.cprofile:
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(args.steps):
            step()
        pr.disable()
        pstats.Stats(pr, stream=sys.stdout).sort_stats("tottime").print_stats(args.cprofile)


if __name__ == "__main__":
    main()
