"""Deployment side by side: the zoo models (tests/zoo.py) in fw eager, the fw
Predictor, PyTorch eager, onnxruntime and Paddle Inference, medians in ms per batch,
plus the peak RSS of a ResNet-50 predictor. Peers that are not installed are "-".

    python asv_bench/deploy_side_by_side.py [--only resnet18] [--threads 2] [--rss] [--cpu-time]

Each framework runs in its own process (their oneDNN/OpenMP copies must not meet),
with the same thread count. onnxruntime runs the PyTorch twin's ONNX export
(torch.onnx, as a user would) or, without torch, fw.onnx's export of the fw model.
Weights are random and differ between frameworks; architectures, shapes and dtypes
are the same (asv_bench/zoo_torch.py mirrors tests/zoo.py layer for layer).

``--cpu-time`` times each call by the CPU time of the process (``time.process_time``)
instead of the wall clock: on a machine shared with other jobs, wall-clock medians
include the time the core was given to someone else (the same row measured 11 and
23 ms minutes apart), CPU time does not (it still includes slower memory when the
other core's job shares the caches). With ``--threads 1`` both frameworks compute on
the calling thread only, so the CPU time is the call's; use it there.

``--threads 2`` on a loaded machine: fw's kernels run OpenMP (libgomp, through oneDNN and
its own C++), whose threads spin at each region's end; when the other core is busy a
region can wait for a scheduler slice. Measured with a load average of 10-18 on the
2-core reference VM: LeNet b64 32-75 ms per batch by default, 0.73 ms with
``OMP_WAIT_POLICY=PASSIVE`` in the environment (set it for this script's processes to
measure the kernels rather than the scheduler; onnxruntime has its own thread pool).

The fw Predictor runs with ``Config.enable_memory_optim()`` (``--no-memory-optim``: Paddle's
default, off), as a deployment tuned for speed configures it: each intermediate is freed
at its last use and elementwise ops write into dead buffers. onnxruntime's arena and
memory patterns are on by default; Paddle Inference runs with its defaults (3.3.1's
``enable_memory_optim()`` fails on its PIR programs: "Not find predictor_id 0 and
pass_name memory_optimize_pass"). The RSS row
(``--rss``) loads a ResNet-50 with the same setting; onnxruntime's ResNet-50 there is
PyTorch's export or, without PyTorch, fw.onnx's.

The one command that re-measures the deployment table (1 thread, CPU time, RSS)::

    hatch run python asv_bench/deploy_side_by_side.py --threads 1 --cpu-time --rss

``--bf16`` adds a column: the fw Predictor with ``Config.enable_mkldnn_bfloat16()`` (its
products in bfloat16 with float32 accumulation, on a CPU with native bf16; elsewhere the
switch warns and the column shows "-"), with its ratios to onnxruntime (float32) and fw
eager, and Paddle Inference with its own ``enable_mkldnn_bfloat16()``. The float32
columns stay the comparison: the other peers run float32.

``--ort-export fw`` makes onnxruntime run fw.onnx's export even where PyTorch is
installed (both baselines: PyTorch's export packs Q, K and V into one projection and
gets onnxruntime's BiasGelu fusion; fw.onnx's keeps three products and an Erf chain).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
    ("ResNet-18 1x3x224x224", "resnet18", 1, 224),
    ("ResNet-18 16x3x64x64", "resnet18", 16, 64),
    ("MobileNetV2 1x3x224x224", "mobilenet_v2", 1, 224),
    ("LeNet b1", "lenet", 1, None),
    ("LeNet b64", "lenet", 64, None),
    ("BERT-style 4L d256 s128 b1", "bert_encoder", 1, None),
    ("BERT-style 4L d256 s128 b8", "bert_encoder", 8, None),
]
COLUMNS = ["fw eager", "fw Predictor", "PyTorch eager", "onnxruntime", "Paddle Inference"]


CLOCK = time.perf_counter  # time.process_time with --cpu-time


def median_ms(fn, *args, min_time=1.0, min_runs=5, max_runs=200):
    """Median time (wall, or CPU with --cpu-time) of ``fn(*args)`` in ms, after two
    warm-up calls."""
    fn(*args)
    fn(*args)
    times = []
    clock = CLOCK
    t_end = time.perf_counter() + min_time
    while len(times) < min_runs or (time.perf_counter() < t_end and len(times) < max_runs):
        t0 = clock()
        fn(*args)
        times.append(clock() - t0)
    return float(np.median(times) * 1e3)


def _have(mod):
    import importlib.util

    return importlib.util.find_spec(mod) is not None


# ---------------------------------------------------------------- per framework
MEMORY_OPTIM = True  # the Predictor's Config.enable_memory_optim (--no-memory-optim: off)
BF16 = False  # --bf16: also a Predictor with Config.enable_mkldnn_bfloat16(), its own column
ORT_FROM_FW = False  # --ort-export fw: onnxruntime runs fw.onnx's export even with PyTorch


def run_fw(rows, threads, workdir):
    import zoo

    import fw
    import fw.inference as infer
    from fw.core import _native

    _native.set_num_threads(threads)  # eager's oneDNN threads (the Predictor's: its Config)
    out = {}
    for label, name, batch, hw in rows:
        fw.seed(0)
        model = zoo.build(fw, name)
        x = zoo.example_input(fw, name, batch=batch, hw=hw)
        with fw.no_grad():
            out[(label, "fw eager")] = median_ms(model, x)
        spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
        prefix = os.path.join(workdir, f"fw_{name}_{batch}_{hw}")
        fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
        config = infer.Config(prefix)
        config.set_cpu_math_library_num_threads(threads)
        config.disable_glog_info()
        config.enable_memory_optim(MEMORY_OPTIM)
        predictor = infer.create_predictor(config)
        xs = [x.numpy()]
        out[(label, "fw Predictor")] = median_ms(predictor.run, xs)
        if BF16:
            config.enable_mkldnn_bfloat16()  # warns and stays float32 without native bf16
            if config.mkldnn_bfloat16_enabled():
                out[(label, "fw Predictor bf16")] = median_ms(
                    infer.create_predictor(config).run, xs)
        if (ORT_FROM_FW or not _have("torch")) and _have("onnx"):
            try:
                import fw.onnx

                fw.onnx.export(model, os.path.join(workdir, f"ort_{name}_{batch}_{hw}"), spec)
            except Exception as e:  # noqa: BLE001 - reported, the row shows "-"
                print(f"fw.onnx export of {name}: {e}", file=sys.stderr)
    return out


def run_torch(rows, threads, workdir):
    import torch
    import zoo_torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    out = {}
    for label, name, batch, hw in rows:
        model = zoo_torch.build(name)
        x = zoo_torch.example_input(name, batch, hw)
        with torch.inference_mode():
            out[(label, "PyTorch eager")] = median_ms(model, x)
        path = os.path.join(workdir, f"ort_{name}_{batch}_{hw}.onnx")
        if not os.path.exists(path):
            try:
                torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                                  opset_version=17, dynamo=False)
            except Exception as e:  # noqa: BLE001
                print(f"torch.onnx export of {name}: {e}", file=sys.stderr)
    return out


def run_ort(rows, threads, workdir):
    import onnxruntime as ort
    import zoo

    out = {}
    for label, name, batch, hw in rows:
        path = os.path.join(workdir, f"ort_{name}_{batch}_{hw}.onnx")
        if not os.path.exists(path):
            continue
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        shape, dtype = zoo.INPUTS[name]
        rng = np.random.default_rng(0)
        if dtype == "int64":
            x = rng.integers(0, zoo.BERT_VOCAB, (batch, *shape)).astype("int64")
        else:
            x = rng.standard_normal((batch, shape[0], *(2 * [hw] if hw else shape[1:]))
                                    ).astype("float32")
        feed = {sess.get_inputs()[0].name: x}
        out[(label, "onnxruntime")] = median_ms(sess.run, None, feed)
    return out


def run_paddle(rows, threads, workdir):
    import paddle
    import paddle.inference as pinf
    import zoo

    paddle.set_device("cpu")
    out = {}
    for label, name, batch, hw in rows:
        paddle.seed(0)
        model = zoo.build(paddle, name)
        x = zoo.example_input(paddle, name, batch=batch, hw=hw)
        spec = [paddle.static.InputSpec([None, *x.shape[1:]], x.dtype)]
        prefix = os.path.join(workdir, f"pd_{name}_{batch}_{hw}")
        paddle.jit.save(paddle.jit.to_static(model, input_spec=spec), prefix)
        prog = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
        config = pinf.Config(prog, prefix + ".pdiparams")
        config.set_cpu_math_library_num_threads(threads)
        config.enable_mkldnn()
        config.disable_glog_info()
        predictor = pinf.create_predictor(config)
        h = predictor.get_input_handle(predictor.get_input_names()[0])
        xn = x.numpy()

        def step(h, xn, predictor):
            h.copy_from_cpu(xn)
            predictor.run()
            predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()

        out[(label, "Paddle Inference")] = median_ms(step, h, xn, predictor)
        if BF16:  # Paddle's own switch, the same settings otherwise
            config = pinf.Config(prog, prefix + ".pdiparams")
            config.set_cpu_math_library_num_threads(threads)
            config.enable_mkldnn()
            config.enable_mkldnn_bfloat16()
            config.disable_glog_info()
            try:
                predictor = pinf.create_predictor(config)
                h = predictor.get_input_handle(predictor.get_input_names()[0])
                out[(label, "Paddle Inference bf16")] = median_ms(step, h, xn, predictor)
            except Exception as e:  # noqa: BLE001 - reported, the cell shows "-"
                print(f"Paddle Inference bf16 on {name}: {e}", file=sys.stderr)
    return out


def rss_fw(workdir):
    import zoo

    import fw

    fw.seed(0)
    model = zoo.build(fw, "resnet50")
    x = zoo.example_input(fw, "resnet50", batch=1, hw=224)
    prefix = os.path.join(workdir, "rss_fw_resnet50")
    spec = [fw.static.InputSpec([None, 3, 224, 224], "float32")]
    fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    if not _have("torch") and _have("onnx") and _have("onnxruntime"):
        import fw.onnx

        fw.onnx.export(model, os.path.join(workdir, "rss_ort_resnet50"), spec)
    return prefix, x.numpy()


# ---------------------------------------------------------------- driver
def _picked(only, row) -> bool:
    """Whether `row` is one of ``--only``'s: its zoo name, or a part of its label (any
    case: ``--only bert`` picks both BERT rows)."""
    return not only or only == row[1] or only.lower() in row[0].lower()


RUNNERS = {"fw": run_fw, "torch": run_torch, "onnxruntime": run_ort, "paddle": run_paddle}


def _child(args):
    rows = [r for r in ROWS if _picked(args.only, r)]
    if args.child.startswith("rss-"):
        return _rss_child(args)
    res = RUNNERS[args.child](rows, args.threads, args.workdir)
    print(json.dumps([[k[0], k[1], v] for k, v in res.items()]))


def _rss_child(args):
    """Peak RSS (MiB) of a process that loads a ResNet-50 model, creates a predictor
    and runs one 1x3x224x224 batch; the model file was written beforehand."""
    which = args.child[4:]
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    if which == "fw":
        import fw.inference as infer

        config = infer.Config(os.path.join(args.workdir, "rss_fw_resnet50"))
        config.set_cpu_math_library_num_threads(args.threads)
        config.disable_glog_info()
        config.enable_memory_optim(MEMORY_OPTIM)
        infer.create_predictor(config).run([x])
    else:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        sess = ort.InferenceSession(os.path.join(args.workdir, "rss_ort_resnet50.onnx"), so,
                                    providers=["CPUExecutionProvider"])
        sess.run(None, {sess.get_inputs()[0].name: x})
    print(json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def _spawn(kind, args, workdir):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--workdir", workdir,
           "--threads", str(args.threads)] + (["--only", args.only] if args.only else []) + \
        (["--cpu-time"] if args.cpu_time else []) + \
        ([] if args.memory_optim else ["--no-memory-optim"]) + \
        ["--ort-export", args.ort_export] + (["--bf16"] if args.bf16 else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("[", "{")) or
             ln.replace(".", "", 1).isdigit()]
    if r.returncode or not lines:
        print(f"[{kind}] failed (exit {r.returncode}): {r.stderr[-1500:]}", file=sys.stderr)
        return None
    return json.loads(lines[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None, help="rows whose model or label contains this")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rss", action="store_true", help="also the ResNet-50 peak RSS row")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time calls by the process's CPU time (a shared machine)")
    ap.add_argument("--no-memory-optim", dest="memory_optim", action="store_false",
                    help="the fw Predictor without Config.enable_memory_optim()")
    ap.add_argument("--ort-export", choices=("torch", "fw"), default="torch",
                    help="the ONNX file onnxruntime runs: PyTorch's export of the twin model "
                         "(when PyTorch is installed) or fw.onnx's export of the fw model")
    ap.add_argument("--bf16", action="store_true",
                    help="also the fw Predictor with Config.enable_mkldnn_bfloat16() (a "
                         "separate column; the float32 columns stay the comparison)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global CLOCK, MEMORY_OPTIM, ORT_FROM_FW, BF16
    MEMORY_OPTIM = args.memory_optim
    BF16 = args.bf16
    ORT_FROM_FW = args.ort_export == "fw"
    if args.cpu_time:
        CLOCK = time.process_time
    if args.child:
        return _child(args)
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as workdir:
        cells = {}
        for kind in ("fw", "torch", "onnxruntime", "paddle"):
            if kind != "fw" and not _have(kind):
                continue
            got = _spawn(kind, args, workdir) or []
            cells.update({(a, b): v for a, b, v in got})
        rows = [r for r in ROWS if _picked(args.only, r)]
        clock = "CPU time" if args.cpu_time else "wall time"
        memopt = "on" if args.memory_optim else "off"
        ort_src = "fw.onnx" if ORT_FROM_FW or not _have("torch") else "PyTorch"
        print(f"threads={args.threads}; medians of {clock} in ms per batch; fw Predictor "
              f"memory_optim {memopt}; onnxruntime on {ort_src}'s export; load average "
              f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
        cols = COLUMNS + (["fw Predictor bf16", "Paddle Inference bf16"] if args.bf16 else [])
        extra = " | bf16/ort | bf16/eager" if args.bf16 else ""
        print("| model | " + " | ".join(cols) + f" | Predictor/ort | Predictor/eager{extra} |")
        print("|---" * (len(cols) + 3 + 2 * args.bf16) + "|")
        for label, *_ in rows:
            vals = [cells.get((label, c)) for c in cols]
            fmt = ["-" if v is None else f"{v:.3g}" if v < 10 else f"{v:.0f}" for v in vals]
            p, e, o = vals[1], vals[0], vals[3]
            r1 = f"{p / o:.2f}x" if p and o else "-"
            r2 = f"{p / e:.2f}x" if p and e else "-"
            if args.bf16:
                b = vals[cols.index("fw Predictor bf16")]
                r2 += f" | {b / o:.2f}x" if b and o else " | -"
                r2 += f" | {b / e:.2f}x" if b and e else " | -"
            print(f"| {label} | " + " | ".join(fmt) + f" | {r1} | {r2} |")
        if args.rss:
            _rss(args, workdir)


def _rss(args, workdir):
    subprocess.run([sys.executable, "-c", f"import sys; sys.path[:0]={sys.path[:2]!r}; "
                    "import deploy_side_by_side as d; d.rss_fw(" + repr(workdir) + ")"],
                   check=True, timeout=1800)
    row = {"fw Predictor": _spawn("rss-fw", args, workdir)}
    if _have("onnxruntime") and not _have("torch") and os.path.exists(
            os.path.join(workdir, "rss_ort_resnet50.onnx")):
        row["onnxruntime"] = _spawn("rss-ort", args, workdir)
    elif _have("torch") and _have("onnxruntime"):
        subprocess.run([sys.executable, "-c", "import sys; sys.path[:0]="
                        f"{sys.path[:2]!r}; import torch, zoo_torch; "
                        "m = zoo_torch.build('resnet50'); "
                        "torch.onnx.export(m, (torch.randn(1, 3, 224, 224),), "
                        f"{os.path.join(workdir, 'rss_ort_resnet50.onnx')!r}, opset_version=17, "
                        "dynamo=False)"], check=True, timeout=1800)
        row["onnxruntime"] = _spawn("rss-ort", args, workdir)
    print("ResNet-50 1x3x224x224, peak RSS of the process (MiB): "
          + ", ".join(f"{k} {v:.0f}" if v else f"{k} -" for k, v in row.items()))


if __name__ == "__main__":
    main()
