"""Weight-only quantization side by side on the char-level GPT of examples/char_gpt.py:
the float32 model against ``fw.quantization.weight_only_quantize`` int8 and int4
(per channel, and group-wise with ``--group``), in the same process:

- decode-step latency at batch 1: one eager forward (``fw.no_grad``) of ``[1, T]``
  token ids, for each context length T of ``--contexts`` (the example has no KV cache, so
  a decode step re-reads the context: every Linear runs with M = T rows);
- the Linear kernels alone at M = 1 (``F.linear`` vs ``weight_only_linear``): the GEMV
  that a decode step with a KV cache would run;
- the weights' bytes (what ``fw.jit.save`` stores as tensor data), split into Linear
  weights, embeddings and the rest (biases, layer norms, scales), which says where
  a ratio short of 4x / 8x comes from.

Medians in ms of interleaved rounds (a loaded machine slows every variant alike).

    python asv_bench/woq_side_by_side.py [--d-model 64] [--layers 2] [--untied]
                                         [--contexts 1,8,64] [--group -1] [--rounds 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLOCK = time.perf_counter


def _char_gpt():
    spec = importlib.util.spec_from_file_location("_char_gpt", os.path.join(ROOT, "examples",
                                                                           "char_gpt.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def interleaved_ms(fns: dict, rounds: int, per_round: int = 5) -> dict:
    """Median ms per call of each of `fns`, timed in interleaved rounds after warm-up."""
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


def weight_bytes(model) -> dict:
    """Bytes of the model's tensors by kind: Linear weights (float or quantized codes),
    embeddings, and the rest (biases, norms, weight-only scales)."""
    import fw.nn as nn
    from fw.nn.quant import WeightOnlyLinear

    out = {"linear": 0, "embedding": 0, "other": 0}
    for _, layer in model.named_sublayers(include_self=True):
        own = dict(layer.named_parameters(include_sublayers=False))
        own.update(dict(layer.named_buffers(include_sublayers=False)))
        for name, t in own.items():
            b = int(np.asarray(t.numpy()).nbytes)
            if isinstance(layer, (nn.Linear, WeightOnlyLinear)) and name == "weight":
                out["linear"] += b
            elif isinstance(layer, nn.Embedding):
                out["embedding"] += b
            else:
                out["other"] += b
    out["total"] = sum(out.values())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=65)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--untied", action="store_true")
    ap.add_argument("--contexts", default="1,8,64")
    ap.add_argument("--group", type=int, default=-1)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)

    import fw
    import fw.nn.functional as F
    from fw.core import _native
    from fw.nn.quant import WeightOnlyLinear, weight_only_linear
    from fw.quantization import weight_only_quantize

    fw.seed(0)
    gpt = _char_gpt().CharGPT(args.vocab, args.block_size, args.layers, args.d_model,
                              args.heads, 0.0, tied=not args.untied)
    gpt.eval()
    models = {"fp32": gpt}
    for wd in ("int8", "int4"):
        models[wd] = weight_only_quantize(gpt, algo=f"weight_only_{wd}", group_size=args.group)
        models[wd].eval()
    isa = _native.C.int8_cpu_isa() if _native.C is not None else "-"
    simd = bool(_native.C.woq_simd()) if hasattr(_native.C, "woq_simd") else False
    print(f"char GPT d={args.d_model} layers={args.layers} vocab={args.vocab} "
          f"{'untied' if args.untied else 'tied'} head, group_size={args.group}; "
          f"oneDNN ISA {isa}, AVX2 weight-only GEMV {simd}")

    sizes = {k: weight_bytes(m) for k, m in models.items()}
    print("\nweights (bytes)   linear  embedding  other   total   ratio vs fp32")
    for k, s in sizes.items():
        print(f"  {k:5s}  {s['linear']:>12,} {s['embedding']:>10,} {s['other']:>7,} "
              f"{s['total']:>9,}   {sizes['fp32']['total'] / s['total']:.2f}x "
              f"(linear only {sizes['fp32']['linear'] / max(s['linear'], 1):.2f}x)")

    rng = np.random.default_rng(0)
    print("\ndecode step at batch 1 (ms, eager forward of [1, T])")
    with fw.no_grad():
        for t in [int(v) for v in args.contexts.split(",")]:
            ids = fw.to_tensor(rng.integers(0, args.vocab, (1, t)).astype(np.int64))
            res = interleaved_ms({k: (lambda m=m, ids=ids: m(ids)) for k, m in models.items()},
                                 args.rounds)
            print(f"  T={t:<4d} " + "  ".join(f"{k} {v:.3f}" for k, v in res.items())
                  + "   int8/fp32 {:.2f}x  int4/fp32 {:.2f}x".format(
                      res["fp32"] / res["int8"], res["fp32"] / res["int4"]))

        print("\nLinear kernels at M=1 (ms per call): fp32 F.linear vs weight_only_linear")
        seen = set()
        for name, lin in gpt.named_sublayers():
            if type(lin) is not fw.nn.Linear or tuple(lin.weight.shape) in seen:
                continue
            seen.add(tuple(lin.weight.shape))
            x = fw.randn([1, lin.weight.shape[0]])
            fns = {"fp32": lambda lin=lin, x=x: F.linear(x, lin.weight, lin.bias)}
            for wd in ("int8", "int4"):
                q = WeightOnlyLinear.from_linear(lin, f"weight_only_{wd}", args.group)
                fns[wd] = (lambda q=q, wd=wd, x=x: weight_only_linear(
                    x, q.weight, q.bias, q.weight_scale, weight_dtype=wd,
                    group_size=args.group))
            res = interleaved_ms(fns, args.rounds, per_round=20)
            print(f"  {name:24s} {list(lin.weight.shape)!s:12s} " +
                  "  ".join(f"{k} {v:.4f}" for k, v in res.items()))
    return sizes


if __name__ == "__main__":
    sys.exit(main() and 0)
