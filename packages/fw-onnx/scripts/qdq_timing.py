"""Timing of a quantized (QDQ) program: fw's int8 Predictor against onnxruntime on
fw.onnx's export of the *same* QDQ program (ORT_ENABLE_ALL: onnxruntime fuses the
DQ -> op -> Q patterns it finds into its own int8 kernels), and onnxruntime on the float
model's export for reference. Medians in ms per batch; one thread each.

    python packages/fw-onnx/scripts/qdq_timing.py [--rounds 7] [--only lenet]

The QDQ program is what fw-slim's PTQ convert writes (``fw.core.testing.qdq.
quantize_program``: per-channel symmetric int8 weights, per-tensor int8 activations,
abs-max calibration on 2 batches). fw and onnxruntime run in separate processes (their
OpenMP runtimes must not meet), each timing interleaved with nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
ROWS = [("LeNet b64", "lenet", 64, None), ("ResNet-18 1x3x224x224", "resnet18", 1, 224)]


def median_ms(f, rounds, per_round=3):
    f()
    f()
    ts = []
    for _ in range(rounds * per_round):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)) * 1e3


def run_fw(rows, rounds, workdir):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import zoo

    import fw
    import fw.inference as infer
    import fw.onnx
    from fw.core.ir import load, save
    from fw.core.testing.qdq import quantize_program
    from fw.onnx import program_to_onnx

    out = {}
    for label, name, batch, hw in rows:
        fw.seed(0)
        model = zoo.build(fw, name)
        x = zoo.example_input(fw, name, batch=batch, hw=hw)
        spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype, "x")]
        base = os.path.join(workdir, name)
        path = fw.jit.save(fw.jit.to_static(model, input_spec=spec), base)
        prog, _ = load(path)
        calib = [zoo.example_input(fw, name, batch=batch, hw=hw, seed=s).numpy() for s in (1, 2)]
        quantize_program(prog, calib)
        qpath = base + "_qdq.fwmodel"
        save(prog, qpath)
        import onnx

        onnx.save(program_to_onnx(prog), base + "_qdq.onnx")
        fw.onnx.export(model, base + "_fp32", spec)  # the float model, for reference
        np.save(base + "_x.npy", x.numpy())
        config = infer.Config(qpath)
        config.set_cpu_math_library_num_threads(1)
        config.disable_glog_info()
        pred = infer.create_predictor(config)
        xs = [x.numpy()]
        (want,) = pred.run(xs)
        np.save(base + "_fw_out.npy", np.asarray(want))
        out[label] = {"fw int8 Predictor": median_ms(lambda p=pred, v=xs: p.run(v), rounds)}
    return out


def run_ort(rows, rounds, workdir):
    import onnxruntime as ort

    def session(path):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    out = {}
    for label, name, _, _ in rows:
        base = os.path.join(workdir, name)
        sq, sf = session(base + "_qdq.onnx"), session(base + "_fp32.onnx")
        feed = {sq.get_inputs()[0].name: np.load(base + "_x.npy")}
        got = sq.run(None, feed)[0]
        diff = float(np.abs(got - np.load(base + "_fw_out.npy")).max())
        out[label] = {"ort on exported QDQ": median_ms(lambda s=sq, f=feed: s.run(None, f),
                                                       rounds),
                      "ort fp32": median_ms(lambda s=sf, f=feed: s.run(None, f), rounds),
                      "max |ort - fw|": diff}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", action="append")
    ap.add_argument("--child")
    ap.add_argument("--workdir")
    ap.add_argument("--timeout", type=float, default=1200.0)
    a = ap.parse_args(argv)
    rows = [r for r in ROWS if not a.only or r[1] in a.only]
    if a.child:
        fn = run_fw if a.child == "fw" else run_ort
        print(json.dumps(fn(rows, a.rounds, a.workdir)))
        return
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for kind in ("fw", "ort"):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--workdir", d,
                   "--rounds", str(a.rounds)] + sum((["--only", o] for o in a.only or ()), [])
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            if r.returncode:
                sys.exit(f"{kind} failed:\n{r.stderr[-3000:]}")
            for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items():
                res.setdefault(k, {}).update(v)
    print("| model | fw int8 Predictor ms | ort on the QDQ export ms | fw int8 / ort QDQ | "
          "ort fp32 ms | max |ort QDQ - fw int8| |")
    print("|---|---|---|---|---|---|")
    for label, v in res.items():
        f, o = v["fw int8 Predictor"], v["ort on exported QDQ"]
        print(f"| {label} | {f:.2f} | {o:.2f} | {f / o:.2f}x | {v['ort fp32']:.2f} | "
              f"{v['max |ort - fw|']:.3g} |")

if __name__ == "__main__":
    main()
