"""int8 side by side: the fw Predictor on a quantized (QDQ) zoo model against the fw
Predictor on the float model, and onnxruntime's own int8 (``quantize_static``,
QOperator, per-channel int8 weights, uint8 activations) against its float model, in the
same run. Medians in ms per batch; onnxruntime columns are "-" when it (or onnx) is not
installed.

    python asv_bench/int8_side_by_side.py [--only resnet18] [--threads 1] [--cpu-time]
                                          [--rounds 7] [--outputs]

``--outputs`` adds the QDQ program after ``fw.quantization.quantize_outputs`` (a quantize
at each layer output, onnxruntime's QDQ layout) on the fw Predictor, and onnxruntime on
fw.onnx's export of both QDQ programs (onnxruntime fuses what it recognises into its
int8 kernels): a second table.

The fw int8 model is the float model saved with ``fw.jit.save`` and rewritten into the
QDQ form fw-slim's PTQ convert writes (``fw.core.testing.qdq.quantize_program``:
per-channel symmetric int8 weights, per-tensor int8 activations calibrated by abs-max
on 2 batches); the Predictor's inference pipeline (``fold_qdq`` first) runs it on the
int8 kernels. onnxruntime quantizes fw.onnx's export of the same float model with the
same 2 calibration batches. Each framework runs in its own process (their OpenMP
runtimes must not meet) with the same thread count; inside a process the float and
int8 models are timed in interleaved rounds (a loaded machine slows both alike), and
the median over all calls is reported. ``--cpu-time`` times by the process's CPU time
(use with ``--threads 1`` on a shared machine, as asv_bench/deploy_side_by_side.py
explains).
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "tests")]

# (row label, zoo name, batch, spatial size or None)
ROWS = [
    ("ResNet-18 16x3x64x64", "resnet18", 16, 64),
    ("ResNet-18 1x3x224x224", "resnet18", 1, 224),
    ("MobileNetV2 1x3x224x224", "mobilenet_v2", 1, 224),
    ("LeNet b64", "lenet", 64, None),
]
CALIBRATION_SEEDS = (1, 2)
CLOCK = time.perf_counter
OUTPUTS = False  # --outputs: also fw.quantization.quantize_outputs' program (both runtimes)


def interleaved_ms(fns: dict, rounds: int, per_round: int = 3) -> dict:
    """Median ms per call of each of `fns` (name -> no-argument callable), timed in
    interleaved rounds after two warm-up calls each."""
    for f in fns.values():
        f()
        f()
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            for _ in range(per_round):
                t0 = CLOCK()
                f()
                times[k].append(CLOCK() - t0)
    return {k: float(np.median(v)) * 1e3 for k, v in times.items()}


def _calibration(zoo, fw, name, batch, hw):
    return [zoo.example_input(fw, name, batch=batch, hw=hw, seed=s).numpy()
            for s in CALIBRATION_SEEDS]


def run_fw(rows, threads, rounds, workdir):
    import zoo

    import fw
    import fw.inference as infer
    from fw.core.ir import load, save
    from fw.core.testing.qdq import quantize_program

    def predictor(path):
        config = infer.Config(path)
        config.set_cpu_math_library_num_threads(threads)
        config.disable_glog_info()
        return infer.create_predictor(config)

    out = {}
    for label, name, batch, hw in rows:
        fw.seed(0)
        model = zoo.build(fw, name)
        x = zoo.example_input(fw, name, batch=batch, hw=hw)
        spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
        base = os.path.join(workdir, f"{name}_{batch}_{hw}")
        path = fw.jit.save(fw.jit.to_static(model, input_spec=spec), base)
        prog, _ = load(path)
        calib = _calibration(zoo, fw, name, batch, hw)
        quantize_program(prog, calib)
        qpath = base + "_qdq.fwmodel"
        save(prog, qpath)
        for i, c in enumerate(calib):
            np.save(f"{base}_calib{i}.npy", c)
        np.save(f"{base}_x.npy", x.numpy())
        pf, pq = predictor(path), predictor(qpath)
        xs = [x.numpy()]
        fns = {"fp32": lambda pf=pf, xs=xs: pf.run(xs), "int8": lambda pq=pq, xs=xs: pq.run(xs)}
        if OUTPUTS:
            # the same QDQ program with its layer outputs quantized (fw-slim), and both
            # QDQ programs as ONNX for onnxruntime's own QDQ fusions
            import onnx

            from fw.onnx import program_to_onnx
            from fw.quantization import quantize_outputs

            onnx.save(program_to_onnx(prog), base + "_qdq.onnx")
            quantize_outputs(prog, calib)
            opath = base + "_qdq_out.fwmodel"
            save(prog, opath)
            onnx.save(program_to_onnx(prog), base + "_qdq_out.onnx")
            po = predictor(opath)
            fns["int8 out"] = lambda po=po, xs=xs: po.run(xs)
        ms = interleaved_ms(fns, rounds)
        out[label] = {"fw fp32": ms["fp32"], "fw int8": ms["int8"]}
        if OUTPUTS:
            out[label]["fw int8, outputs quantized"] = ms["int8 out"]
        try:
            import fw.onnx

            fw.onnx.export(model, base + "_fp32", spec)
        except Exception as e:  # noqa: BLE001 - reported, the row shows "-"
            print(f"fw.onnx export of {name}: {e}", file=sys.stderr)
    return out


def run_ort(rows, threads, rounds, workdir):
    import onnxruntime as ort
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self, name, arrays):
            self.items = iter([{name: a} for a in arrays])

        def get_next(self):
            return next(self.items, None)

    def session(path):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    out = {}
    for label, name, batch, hw in rows:
        base = os.path.join(workdir, f"{name}_{batch}_{hw}")
        fp32 = base + "_fp32.onnx"
        if not os.path.exists(fp32):
            continue
        sf = session(fp32)
        in_name = sf.get_inputs()[0].name
        calib = [np.load(f"{base}_calib{i}.npy") for i in range(len(CALIBRATION_SEEDS))]
        qpath = base + "_ort_int8.onnx"
        quantize_static(fp32, qpath, Reader(in_name, calib), quant_format=QuantFormat.QOperator,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        sq = session(qpath)
        feed = {in_name: np.load(f"{base}_x.npy")}
        fns = {"fp32": lambda sf=sf, feed=feed: sf.run(None, feed),
               "int8": lambda sq=sq, feed=feed: sq.run(None, feed)}
        if OUTPUTS and os.path.exists(base + "_qdq_out.onnx"):
            for k, f in (("fw QDQ", "_qdq.onnx"), ("fw QDQ out", "_qdq_out.onnx")):
                fns[k] = lambda s=session(base + f), feed=feed: s.run(None, feed)
        ms = interleaved_ms(fns, rounds)
        out[label] = {"onnxruntime fp32": ms["fp32"], "onnxruntime int8": ms["int8"]}
        if "fw QDQ" in ms:
            out[label]["onnxruntime on fw's QDQ export"] = ms["fw QDQ"]
            out[label]["onnxruntime on fw's output-quantized export"] = ms["fw QDQ out"]
    return out


RUNNERS = {"fw": run_fw, "onnxruntime": run_ort}


def _child(args):
    global CLOCK, OUTPUTS
    if args.cpu_time:
        CLOCK = time.process_time
    OUTPUTS = args.outputs
    rows = [r for r in ROWS if not args.only or r[1] in args.only]
    res = RUNNERS[args.child](rows, args.threads, args.rounds, args.workdir)
    json.dump(res, sys.stdout)


def _spawn(kind, args, workdir, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--workdir", workdir,
           "--threads", str(args.threads), "--rounds", str(args.rounds)]
    if args.cpu_time:
        cmd.append("--cpu-time")
    if args.outputs:
        cmd.append("--outputs")
    for o in args.only or ():
        cmd += ["--only", o]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"{kind}: no result within {timeout} s", file=sys.stderr)
        return {}
    if r.returncode:
        print(f"{kind} failed:\n{r.stderr[-3000:]}", file=sys.stderr)
        return {}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _have(mod):
    import importlib.util

    return importlib.util.find_spec(mod) is not None


def table(res) -> str:
    cols = ["fw fp32", "fw int8", "fw speed-up", "onnxruntime fp32", "onnxruntime int8",
            "onnxruntime speed-up", "fw int8 / ort int8"]
    lines = ["| model | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for label, *_ in ROWS:
        r = res.get(label)
        if not r:
            continue
        r = dict(r)
        if "fw fp32" in r:
            r["fw speed-up"] = r["fw fp32"] / r["fw int8"]
        if "onnxruntime int8" in r:
            r["onnxruntime speed-up"] = r["onnxruntime fp32"] / r["onnxruntime int8"]
            if "fw int8" in r:
                r["fw int8 / ort int8"] = r["fw int8"] / r["onnxruntime int8"]
        cells = []
        for c in cols:
            v = r.get(c)
            cells.append("-" if v is None else (f"{v:.2f}x" if "speed" in c or "/" in c
                                                 else f"{v:.2f}"))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def outputs_table(res) -> str:
    cols = ["fw int8", "fw int8, outputs quantized", "onnxruntime fp32",
            "onnxruntime on fw's QDQ export", "onnxruntime on fw's output-quantized export"]
    lines = ["| model | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for label, *_ in ROWS:
        r = res.get(label)
        if r:
            lines.append(f"| {label} | " + " | ".join(
                "-" if r.get(c) is None else f"{r[c]:.2f}" for c in cols) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help="zoo name (repeatable)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu-time", action="store_true")
    ap.add_argument("--outputs", action="store_true",
                    help="also time the output-quantized QDQ program (fw.quantization."
                         "quantize_outputs) on fw and onnxruntime, and onnxruntime on fw's "
                         "plain QDQ export")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per framework")
    args = ap.parse_args(argv)
    if args.child:
        return _child(args)
    with tempfile.TemporaryDirectory() as workdir:
        res = {}
        kinds = ["fw"] + (["onnxruntime"] if _have("onnxruntime") and _have("onnx") else [])
        for kind in kinds:
            for label, vals in _spawn(kind, args, workdir, args.timeout).items():
                res.setdefault(label, {}).update(vals)
    print(f"threads={args.threads}, clock={'CPU time' if args.cpu_time else 'wall'}, "
          f"medians in ms per batch")
    print(table(res))
    if args.outputs:
        print()
        print(outputs_table(res))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main()
