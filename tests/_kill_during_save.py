"""kill -9 during fw.save / fw.jit.save (issue 10): run by tests/test_kill_during_save.py
and by hand for longer runs::

    python tests/_kill_during_save.py DIR N_SAVE N_JIT SEED

This process imports fw once and forks one writer per kill (so a kill costs
milliseconds, not an interpreter start): the writer saves versions 1, 2, 3, ... of a
small checkpoint (or model file) in a loop, and is killed with SIGKILL after a random
short delay. Then this process checks that the target holds one whole version (the old
one or a newer one: fw.load's checksum passes and every value is that version), forks
one more writer that saves once and exits, and checks that no temporary file of the
target is left. It prints one JSON line of figures; an assertion error exits non-zero.
Nothing here runs kernels before forking (children only), so forking is safe.
"""

import json
import os
import random
import signal
import sys
import time

import numpy as np

import fw
import fw.jit
import fw.nn as nn
from fw.core.ir import load as ir_load


def ckpt(v):
    return {"w": np.full((256, 512), v, np.float32), "b": np.full(4096, v, np.int64),
            "meta": {"v": v, "name": f"version {v}"}}


def check_ckpt(p):
    o = fw.load(p, return_numpy=True)
    v = o["meta"]["v"]
    assert (o["w"] == v).all() and (o["b"] == v).all() and o["meta"]["name"] == f"version {v}"
    return v


def jit_save(v, p):
    layer = nn.Linear(64, 128)
    layer.weight.set_value(np.full((64, 128), v, np.float32))
    layer.bias.set_value(np.full((128,), v, np.float32))
    fw.jit.save(layer, p, input_spec=[fw.jit.InputSpec([None, 64], "float32")])


def check_model(p):
    fw.jit.load(p)  # loadable as a layer
    _, params = ir_load(p + ".fwmodel")
    vals = {float(np.asarray(t.numpy()).flat[0]) for t in params.values()}
    assert len(vals) == 1, f"a model file mixes versions {vals}"
    v = vals.pop()
    assert all((np.asarray(t.numpy()) == v).all() for t in params.values())
    return int(v)


def hidden_files(target):
    """Temporary files of `target` (whatever their naming): hidden names holding its name."""
    d, base = os.path.split(target)
    return sorted(n for n in os.listdir(d) if n.startswith(".") and base in n)


def _fork(fn):
    pid = os.fork()
    if pid == 0:  # the writer: never returns into the caller's code
        code = 1
        try:
            fn()
            code = 0
        finally:
            os._exit(code)
    return pid


def run(target, save, check, kills, rng):
    figures = {"kills": 0, "mid_write": 0, "versions_seen": set()}
    t = time.perf_counter()
    os.waitpid(_fork(lambda: save(0, target)), 0)
    # the delays: up to a few saves' time, so kills land before, in and after writes
    max_delay = 3 * (time.perf_counter() - t)
    figures["max_delay_ms"] = round(1000 * max_delay, 1)
    prev = check(target)
    for i in range(kills):
        base = 1000 * (i + 1)

        def loop(base=base):
            v = base
            while True:
                v += 1
                save(v, target)

        pid = _fork(loop)
        time.sleep(rng.uniform(0.0, max_delay))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        figures["kills"] += 1
        figures["mid_write"] += bool(hidden_files(target))
        v = check(target)  # whole, checksum OK
        assert v == prev or base < v < base + 1000, (v, prev, base)
        figures["versions_seen"].add("old" if v == prev else "new")
        nxt = base + 999
        pid = _fork(lambda nxt=nxt: save(nxt, target))
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the next save failed"
        left = hidden_files(target)
        assert not left, f"temporary files left after the next save: {left}"
        prev = check(target)
        assert prev == nxt
    figures["versions_seen"] = sorted(figures["versions_seen"])
    return figures


def main():
    d, n_save, n_jit, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    t0 = time.perf_counter()
    out = {"save": run(os.path.join(d, "model.pdparams"), lambda v, q: fw.save(ckpt(v), q),
                       check_ckpt, n_save, rng)}
    if n_jit:
        out["jit_save"] = run(os.path.join(d, "net"), jit_save, check_model, n_jit, rng)
    out["seconds"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
