"""Which ops of fw-core's table run on a device, and how the others fail: one line per
op record ("ok", "RAISE <error> @ <file:line>", "HOST" for an output that left the
device, "VALUE" for a wrong value), then a count. The device is FW_TEST_DEVICE ('gpu',
or the 'fake' one). `--shard i/n` runs every n-th record from the i-th (for parallel
processes on a machine with many cores); `--examples` draws per record.

    FW_TEST_DEVICE=gpu python ci/gpu/op_status.py --shard 0/4 > status-0.txt
"""

from __future__ import annotations

import argparse
import collections
import sys
import traceback

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import fw
from fw.core.dispatch import invoke
from fw.core.ops import OPS
from fw.core.testing import device as _dev
from fw.core.testing import load_all, reference_call


def _where(e):
    """file:line of the innermost fw frame of the error (or of its cause)."""
    while e.__cause__ is not None:
        e = e.__cause__
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/fw/" in f.filename
              and "/testing/" not in f.filename]
    if not frames:
        return f"{type(e).__name__}: {str(e)[:160]}"
    f = frames[-1]
    return f"{type(e).__name__}: {str(e)[:160]} @ {f.filename.split('/fw/')[-1]}:{f.lineno}"


def status(rec, p, examples):
    out = []

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(data=st.data())
    def run(data):
        if out:
            return
        op = OPS[rec.op]
        dtype = data.draw(st.sampled_from(rec.dtypes))
        s = rec.sample(data.draw, dtype)
        fw.seed(0)
        want, _ = reference_call(op, s.args, dict(s.attrs))
        args = _dev.move(s.args, p)
        fw.seed(0)
        try:
            with _dev.on(p):
                got = invoke(op, args, dict(s.attrs))
        except Exception as e:
            out.append(f"RAISE ({dtype.name}) {_where(e)}")
            return
        try:
            _dev.check_outputs(rec, dtype, s.attrs, got, want, p)
        except _dev.LeftTheDevice as e:
            out.append(f"HOST ({dtype.name}) {e}")
        except AssertionError as e:
            out.append(f"VALUE ({dtype.name}): {str(e)[:160]}")

    try:
        run()
    except Exception as e:
        out.append(f"HARNESS {_where(e)}")
    return out[0] if out else "ok"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--examples", type=int, default=2)
    ap.add_argument("--only", default=None)
    a = ap.parse_args(argv)
    i, n = (int(v) for v in a.shard.split("/"))
    p = _dev.place()
    recs = [(f"{name}-{j}", r) for name, rs in sorted(load_all().items())
            if name in OPS and name not in ("cond", "while") for j, r in enumerate(rs)]
    if a.only:
        recs = [(k, r) for k, r in recs if k.rsplit("-", 1)[0] in a.only.split(",")]
    counts = collections.Counter()
    for k, r in recs[i::n]:
        st_ = status(r, p, a.examples)
        counts[st_.split()[0]] += 1
        print(f"{k}: {st_}", flush=True)
    print(f"# {p}: {dict(counts)}", file=sys.stderr)


if __name__ == "__main__":
    main()
