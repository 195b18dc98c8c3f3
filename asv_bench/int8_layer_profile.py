"""Per-op time table of the fw Predictor on a zoo model, float32 against its QDQ
(int8) program: which ops the optimized programs run, with what operand types, and how
long each takes (median microseconds per call over interleaved runs; 1 thread).

    python asv_bench/int8_layer_profile.py [--model lenet] [--batch 64] [--hw N]
                                           [--rounds 200] [--outputs] [--fold OPT=V ...]

The int8 model is the float program in the QDQ form fw-slim's convert writes
(``fw.core.testing.qdq.quantize_program``, as asv_bench/int8_side_by_side.py);
``--outputs`` quantizes its layer outputs too (``fw.quantization.quantize_outputs``);
``--skip 2,3,4`` leaves those products (program order) in float32, as a PTQ config's
``skip`` does (the accuracy that config keeps is the PTQ run's to check);
``--prune 0.5`` compares the float32 model with a copy whose conv channels are pruned
by that ratio (``fw.slim.L1NormFilterPruner``, as asv_bench/benchmarks/bench_prune.py;
``--round-to 8`` keeps multiples of 8 channels) instead of the int8 program;
``--fold min_channel_pairs=0`` etc. replace the Predictor's ``fold_qdq`` options (a
what-if: the Predictor's default pipeline is what runs without it).

How: every op's kernel in the Predictor's compiled program is wrapped (through
``fw.core.kernels.cpu.prepared.prepare``, which the executor asks for each op's
kernel) by a timer; the sum of the per-op times is the program's time less the
generated code's own per-op overhead (the "run" row is the measured whole call).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "tests")]

CLOCK = time.perf_counter


def _install_timers(records: dict):
    """Wrap every kernel the executor prepares: records[op] gets each call's seconds."""
    from fw.core.kernels.cpu import prepared

    orig = prepared.prepare

    def timed(op, kernel, checked=True):
        k = orig(op, kernel, checked)
        if k is None:
            attrs = dict(op.attrs)

            def k(*args, _kernel=kernel, _attrs=attrs):
                return _kernel(*args, **_attrs)
        times = records.setdefault(op, [])

        def run(*args, _k=k, _t=times):
            t0 = CLOCK()
            r = _k(*args)
            _t.append(CLOCK() - t0)
            return r

        return run

    prepared.prepare = timed


def _describe(op) -> str:
    """The op's computed operands (not constants) and its result, as dtype[shape]."""
    def t(v):
        return f"{str(v.type.dtype).replace('fw.', '')}{list(v.type.shape)}"

    from fw.core.ir.passes.rewrite import Rewriter

    ins = [t(v) for v in op.operands if Rewriter.producer(v) is not None or
           (v is not None and v.owner is not None and not getattr(v, "label", None))]
    return f"{', '.join(ins) or '-'} -> {t(op.results[0]) if op.results else '-'}"


def _weight_only(prog, ops):
    """Products `ops` read their weight through dequantize_linear of
    per-channel int8 codes, with no activation quantization: what fw-slim's convert
    writes for a layer configured ``activation=None, weight=<per-channel observer>``."""
    from fw.core.ir.passes.fold_batch_norm import captured_array
    from fw.core.ir.passes.rewrite import Rewriter
    rw = Rewriter(prog)
    for i, op in enumerate(ops):
        W = captured_array(op.operands[1], prog).astype(np.float32)
        axis = 0 if op.name == "conv" else 1
        red = tuple(d for d in range(W.ndim) if d != axis)
        s = (np.abs(W).max(axis=red) / 127.0).astype(np.float32)
        s[s == 0] = 1.0
        shape = [1] * W.ndim
        shape[axis] = -1
        q = np.clip(np.rint(W / s.reshape(shape)), -127, 127).astype(np.int8)
        qv, sv = rw.add_const(q, f"wo{i}.int8"), rw.add_const(s, f"wo{i}.scale")
        zv = rw.add_const(np.zeros(s.size, np.int32), f"wo{i}.zero_point")
        wd = rw.create("dequantize_linear", [qv, sv, zv], {"axis": axis}, before=op)
        rw.set_operand(op, 1, wd.results[0])


def _kept(model):
    import fw.nn as nn

    return {n: m._out_channels for n, m in model.named_sublayers() if isinstance(m, nn.Conv2D)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="lenet")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--hw", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--outputs", action="store_true")
    ap.add_argument("--fold", nargs="*", default=[])
    ap.add_argument("--cpu-time", action="store_true",
                    help="time by the process's CPU time (a loaded machine's waits drop out)")
    ap.add_argument("--weight-only", action="store_true",
                    help="the --skip products keep int8 weights (dequantized once when the "
                    "Predictor loads, as a PTQ config with activation=None writes them)")
    ap.add_argument("--skip", default="", help="products (conv/linear, in program order) "
                    "left in float32 by the quantization, e.g. 2,3,4 (LeNet's classifier)")
    ap.add_argument("--prune", type=float, default=None,
                    help="compare with the model pruned by this conv channel ratio (fp32)")
    ap.add_argument("--round-to", type=int, default=1,
                    help="with --prune: keep a multiple of this many channels per conv")
    ap.add_argument("--prune-only", default="",
                    help="with --prune: only these groups (comma-separated layer names)")
    args = ap.parse_args(argv)
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    import zoo

    import fw
    import fw.inference as infer
    from fw.core.ir import load, save
    from fw.core.testing.qdq import quantize_program

    records: dict = {}
    _install_timers(records)
    if args.fold:
        from fw.core.ir import passes as P
        from fw.core.ir.passes.fold_qdq import FoldQDQ

        opts = {k: (v if not v.lstrip("-").isdigit() else int(v)) for k, v in
                (kv.split("=", 1) for kv in args.fold)}
        opts = {k: ({"True": True, "False": False}.get(v, v) if isinstance(v, str) else v)
                for k, v in opts.items()}
        P.PASSES["fold_qdq"] = lambda **kw: FoldQDQ(**{**opts, **kw})  # the what-if

    with tempfile.TemporaryDirectory() as tmp:
        fw.seed(0)
        model = zoo.build(fw, args.model)
        x = zoo.example_input(fw, args.model, batch=args.batch, hw=args.hw)
        spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
        path = fw.jit.save(fw.jit.to_static(model, input_spec=spec), os.path.join(tmp, "m"))
        prog, _ = load(path)
        calib = [zoo.example_input(fw, args.model, batch=args.batch, hw=args.hw,
                                   seed=s).numpy() for s in (1, 2)]
        skip = {int(i) for i in args.skip.split(",") if i}
        from fw.core.testing.qdq import products

        skipped = [op for i, op in enumerate(products(prog)) if i in skip]
        quantize_program(prog, calib, skip=skip)
        if args.weight_only:
            _weight_only(prog, skipped)
        if args.outputs:
            from fw.quantization import quantize_outputs

            quantize_outputs(prog, calib)
        qpath = os.path.join(tmp, "q.fwmodel")
        save(prog, qpath)
        other = "int8"
        if args.prune is not None:
            other = "pruned"
            fw.seed(0)
            pm = zoo.build(fw, args.model)
            pm.set_state_dict(model.state_dict())
            pm.eval()
            fw.slim.L1NormFilterPruner(pm, [1, *x.shape[1:]],
                                       round_to=args.round_to).prune(
                {g: args.prune for g in args.prune_only.split(",")} if args.prune_only
                else args.prune)
            print("pruned channels kept:", {g: n for g, n in _kept(pm).items()})
            qpath = fw.jit.save(fw.jit.to_static(pm, input_spec=spec),
                                os.path.join(tmp, "p"))

        def predictor(p):
            c = infer.Config(p)
            c.set_cpu_math_library_num_threads(1)
            c.disable_glog_info()
            return infer.create_predictor(c)

        preds = {"fp32": predictor(path), other: predictor(qpath)}
        xs = [x.numpy()]
        whole = {k: [] for k in preds}
        for p in preds.values():
            p.run(xs)
            p.run(xs)
        for v in records.values():
            v.clear()
        for _ in range(args.rounds):
            for k, p in preds.items():
                t0 = CLOCK()
                p.run(xs)
                whole[k].append(CLOCK() - t0)
        for k, p in preds.items():
            ops = [op for op in p.program.block.ops if op in records]
            print(f"\n{k}: {args.model} b{args.batch}, {len(ops)} ops, run median "
                  f"{np.median(whole[k]) * 1e6:.0f} us")
            print("| # | op | operands -> result | us (median) |")
            print("|---|---|---|---|")
            total = 0.0
            for i, op in enumerate(ops):
                us = float(np.median(records[op])) * 1e6
                total += us
                print(f"| {i} | {op.name} | {_describe(op)} | {us:.1f} |")
            print(f"| | sum of ops | | {total:.0f} |")
        print(f"\n{other} / fp32 run time: "
              f"{np.median(whole[other]) / np.median(whole['fp32']):.3f}"
              f" (speed-up of {other} over fp32: "
              f"{np.median(whole['fp32']) / np.median(whole[other]):.3f}x); load "
              f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
