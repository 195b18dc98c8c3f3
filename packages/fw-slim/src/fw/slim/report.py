"""The quantization report: for every quantized layer, which kernel it runs (int8 or
fp32, and why), its scales, its output error against fp32 (SQNR), the measured latency
of both, and the whole model's speed-up and size ratio.

``report(model, sample, reference=None)``:

- ``model``: a converted model (``PTQ.convert`` / ``QAT.convert``) or the path of one
  saved with ``fw.jit.save``; ``reference``: the fp32 model (Layer or path), needed for
  the per-layer SQNR and the whole-model comparisons.
- Per layer (a Layer model): its input is captured on `sample` with forward hooks; the
  layer is timed as converted (quantize/dequantize + its op) and as an fp32 layer (the
  same op on the float input with the dequantized weight); SQNR compares its output
  with the reference model's layer of the same name, run on the reference's own input
  (so errors accumulated upstream count: that is what the user sees).
- Kernel. A layer runs an int8 kernel only when fw-core has a pass that folds its QDQ
  pattern into an int8 op (slim-int8's inference pass). The report traces the model,
  runs fw-core's ``inference`` pipeline plus every registered pass whose name says
  int8/quant, and reads the optimized program: a layer's op that became an int8 op is
  "int8"; otherwise it is "fp32" with the reason (no int8 pass in this fw-core, the
  layer was not quantized, or the pass left it in fp32). Latency "int8" is then the
  latency of what the program runs for it.

SQNR = 10 log10(sum(ref^2) / sum((q - ref)^2)) in dB (higher is better; 8-bit
quantization of a well-scaled tensor gives ~40 dB; below ~20 dB a layer usually costs
accuracy).
"""

from __future__ import annotations

import copy
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

import fw
import fw.nn as nn
from fw.slim._model_file import model_file_sizes

__all__ = ["report", "QuantReport", "LayerReport", "sqnr"]


def sqnr(ref, got) -> float:
    """The signal-to-quantization-noise ratio of `got` against `ref`, in dB.

    ``10 * log10(sum(ref^2) / sum((ref - got)^2))``; higher is better.

    Args:
        ref (numpy.ndarray|Tensor): the reference (float) output.
        got (numpy.ndarray|Tensor): the quantized output.

    Returns:
        float: the ratio in dB (inf when they are equal).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.slim import sqnr
        >>> round(sqnr(np.array([1.0, 1.0]), np.array([1.1, 0.9])), 4)
        20.0
        >>> sqnr(np.ones(4), np.ones(4))
        inf
    """
    ref, got = np.asarray(ref, np.float64), np.asarray(got, np.float64)
    if ref.shape != got.shape:
        raise ValueError(f"sqnr: shapes differ: {ref.shape} vs {got.shape}")
    noise = float(((got - ref) ** 2).sum())
    sig = float((ref ** 2).sum())
    if noise == 0:
        return math.inf
    return 10 * math.log10(sig / noise) if sig > 0 else -math.inf


@dataclass
class LayerReport:
    """One row of a `QuantReport`: how a converted layer runs and why.

    Args:
        name (str): the sublayer's name.
        type (str): its class name.
        kernel (str): ``"int8"`` or ``"fp32"``.
        reason (str): why that kernel.
        weight_scale (tuple, optional): (min, max) of the weight scales; () when not
            quantized.
        act_scale (float, optional): the activation scale.
        weight_bits (int, optional): the weight width.
        sqnr_db (float, optional): SQNR of the layer's output against fp32.
        ms_quant (float, optional): milliseconds quantized.
        ms_fp32 (float, optional): milliseconds in fp32.

    Examples:
        >>> import fw
        >>> from fw.slim import LayerReport
        >>> LayerReport("fc", "ConvertedLinear", "fp32", "too small").kernel
        'fp32'
    """

    name: str
    type: str
    kernel: str  # "int8" or "fp32"
    reason: str
    weight_scale: tuple = ()  # (min, max) of the weight scales; () when not quantized
    act_scale: float | None = None
    weight_bits: int | None = None
    sqnr_db: float | None = None
    ms_quant: float | None = None
    ms_fp32: float | None = None


@dataclass
class QuantReport:
    """What `report` returns: per-layer rows and whole-model figures; ``str()`` is
    `table`.

    Args:
        layers (list[LayerReport]): the rows.
        ms_quant (float, optional): whole-model milliseconds quantized.
        ms_fp32 (float, optional): whole-model milliseconds in fp32.
        bytes_quant (int, optional): weight bytes quantized.
        bytes_fp32 (int, optional): weight bytes in fp32.
        output_sqnr_db (float, optional): SQNR of the model output.
        int8_passes (tuple, optional): the IR passes that fold int8 kernels.

    Examples:
        >>> import fw
        >>> from fw.slim import QuantReport
        >>> QuantReport(ms_quant=1.0, ms_fp32=3.0).speedup
        3.0
    """

    layers: list = field(default_factory=list)
    ms_quant: float | None = None
    ms_fp32: float | None = None
    bytes_quant: int | None = None
    bytes_fp32: int | None = None
    output_sqnr_db: float | None = None
    int8_passes: tuple = ()

    @property
    def speedup(self):
        """fp32 time / quantized time of the whole model (None when not measured).

        Examples:
            >>> import fw
            >>> from fw.slim import LayerReport, QuantReport
            >>> rep = QuantReport(layers=[LayerReport("fc", "ConvertedLinear", "int8", "folded")],
            ...                   ms_quant=1.0, ms_fp32=2.5, bytes_quant=100, bytes_fp32=400)
            >>> rep.speedup
            2.5
        """
        return self.ms_fp32 / self.ms_quant if self.ms_quant and self.ms_fp32 else None

    @property
    def size_ratio(self):
        """fp32 bytes / quantized bytes of the weights (None when not measured).

        Examples:
            >>> import fw
            >>> from fw.slim import LayerReport, QuantReport
            >>> rep = QuantReport(layers=[LayerReport("fc", "ConvertedLinear", "int8", "folded")],
            ...                   ms_quant=1.0, ms_fp32=2.5, bytes_quant=100, bytes_fp32=400)
            >>> rep.size_ratio
            4.0
        """
        return self.bytes_fp32 / self.bytes_quant if self.bytes_quant and self.bytes_fp32 \
            else None

    def table(self) -> str:
        """The report as a fixed-width text table, one row per layer, then the
        whole-model figures.

        Returns:
            str: the table.

        Examples:
            >>> import fw
            >>> from fw.slim import LayerReport, QuantReport
            >>> rep = QuantReport(layers=[LayerReport("fc", "ConvertedLinear", "int8", "folded")],
            ...                   ms_quant=1.0, ms_fp32=2.5, bytes_quant=100, bytes_fp32=400)
            >>> print(rep.table().splitlines()[1].split()[:3])
            ['fc', 'ConvertedLinear', 'int8']
        """
        rows = [f"{'layer':16} {'type':16} {'kernel':6} {'w scale':>19} {'a scale':>9} "
                f"{'SQNR dB':>8} {'ms q':>8} {'ms fp32':>8}  why"]
        for r in self.layers:
            ws = f"{r.weight_scale[0]:.2e}..{r.weight_scale[1]:.2e}" if r.weight_scale else "-"
            a = f"{r.act_scale:.3e}" if r.act_scale is not None else "-"
            sq = f"{r.sqnr_db:8.1f}" if r.sqnr_db is not None else f"{'-':>8}"
            mq = f"{r.ms_quant:8.3f}" if r.ms_quant is not None else f"{'-':>8}"
            mf = f"{r.ms_fp32:8.3f}" if r.ms_fp32 is not None else f"{'-':>8}"
            rows.append(f"{r.name[:16]:16} {r.type[:16]:16} {r.kernel:6} {ws:>19} {a:>9} "
                        f"{sq} {mq} {mf}  {r.reason}")
        tail = []
        if self.speedup is not None:
            tail.append(f"whole model: {self.ms_quant:.3f} ms quantized vs {self.ms_fp32:.3f} "
                        f"ms fp32 ({self.speedup:.2f}x)")
        if self.size_ratio is not None:
            tail.append(f"size: {self.bytes_quant:,} vs {self.bytes_fp32:,} bytes of weights "
                        f"({self.size_ratio:.2f}x smaller)")
        if self.output_sqnr_db is not None:
            tail.append(f"output SQNR {self.output_sqnr_db:.1f} dB")
        return "\n".join(rows + tail)

    def __str__(self):
        return self.table()


def _best_ms(fn, repeat):
    """The fastest of `repeat` timed runs after a warm-up, in ms: on a shared machine the
    least disturbed run is the closest to the kernel's own cost (medians there measure
    the neighbours)."""
    fn()  # warm-up (first-call compilation, caches)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e3 * float(np.min(ts))


def _as_tensor(sample):
    return sample if isinstance(sample, fw.Tensor) else fw.to_tensor(np.asarray(sample))


def _layer_bytes(model):
    seen, total = set(), 0
    for t in list(model.parameters()) + [b for _, b in model.named_buffers()]:
        if id(t) in seen or t is None:
            continue
        seen.add(id(t))
        total += int(np.asarray(t.numpy()).nbytes)
    return total


def _capture(model, names, x):
    """Inputs and outputs of the named sublayers on one forward pass."""
    got, hooks = {}, []
    subs = dict(model.named_sublayers())
    for n in names:
        if n in subs:
            def hook(layer, inputs, output, n=n):
                got[n] = (inputs[0], output)
            hooks.append(subs[n].register_forward_post_hook(hook))
    import fw.jit

    # eager values: a model fw.jit.to_static converted (an exported one) would trace
    # instead (fw.jit has no query of the switch; it is on unless a user turned it off)
    fw.jit.enable_to_static(False)
    try:
        with fw.no_grad():
            out = model(x)
    finally:
        fw.jit.enable_to_static(True)
        for h in hooks:
            h.remove()
    return got, out


def _int8_passes():
    """The registered passes that run QDQ programs on int8 ops (slim-int8's fold_qdq)."""
    from fw.core.ir.passes import PASSES

    return tuple(sorted(n for n in PASSES if "int8" in n or "quant" in n or "qdq" in n))


def _optimized_program(model, x, passes, chains=None):
    """`model` saved with fw.jit.save, read back, and run through fw-core's ``inference``
    pipeline (plus any int8 pass it does not list): the program a Predictor runs. A dict
    `chains` receives fold_qdq's float Linear chains of the saved program ({layer: why})."""
    import tempfile

    import fw.jit
    from fw.core.ir.passes import PIPELINES, PassManager
    from fw.core.ir.serialize import load

    # to_static converts the layer it is given: trace a copy. A model exported before
    # holds traced programs; their ops refer to the op table's OpDefs, which must stay
    # the table's own objects in the copy (the verifier checks identity)
    from fw.core.ops import OPS
    from fw.static import InputSpec

    model = copy.deepcopy(model, {id(op): op for op in OPS.values()})
    model.eval()
    spec = [InputSpec([None] + list(x.shape[1:]), x.dtype.name, name="x")]
    with tempfile.TemporaryDirectory() as tmp:
        f = fw.jit.save(fw.jit.to_static(model, input_spec=spec), os.path.join(tmp, "m"),
                        input_spec=spec)
        program, _ = load(f)
    if chains is not None and "fold_qdq" in passes:
        from fw.core.ir.passes import get_pass

        if getattr(get_pass("fold_qdq"), "float_linear_chains", False):
            from fw.core.ir.passes.int8_linear_chain import float_chain_layers

            chains.update(float_chain_layers(program))
    extra = [p for p in passes if p not in PIPELINES["inference"]]
    PassManager(["inference", *extra]).run(program)
    return program


def _int8_ops(program):
    """{layer name: int8 op name} from the weight labels of the program's int8 ops."""
    found = {}
    for op in program.block.ops:
        if op.name.startswith("quantized_") or "int8" in op.name:
            for v in op.operands:
                label = getattr(v, "label", None) or ""
                if label.endswith(".weight"):
                    found[label[:-len(".weight")]] = op.name
    return found


def _program_ms(program, x, repeat):
    from fw.core.ir import run

    return _best_ms(lambda: run(program, x), repeat)


class _Alone(nn.Layer):
    """One converted layer as a model (its own program), or its fp32 twin: the same op
    on the dequantized weight, no quantize/dequantize."""

    def __init__(self, layer, fp32=False):
        super().__init__()
        self.inner = layer
        self._w = fw.to_tensor(layer.float_weight()) if fp32 else None

    def forward(self, x):
        if self._w is None:
            return self.inner(x)
        return self.inner._run(x, self._w)


def _macs(layer, x, out):
    """Multiply-adds of the layer's product for one sample (as fold_qdq counts them)."""
    w = layer.weight.shape
    per_out = int(np.prod(w[1:])) if isinstance(layer, _conv_types()) else int(w[0])
    return int(np.prod(out.shape[1:])) * per_out


def _conv_types():
    from fw.quantization.layers import ConvertedConv2D

    return (ConvertedConv2D,)


def _fp32_reason(layer, macs, passes):
    from fw.core.ir.passes import get_pass

    try:
        fold = get_pass("fold_qdq")
        min_macs = fold.min_macs
    except Exception:  # noqa: BLE001  (another int8 pass: no threshold known)
        fold, min_macs = None, None
    if min_macs is not None and macs is not None and macs < min_macs:
        return (f"{macs:,} MACs per sample < fold_qdq's min_macs {min_macs:,}: int8 does not "
                "pay for so small a product; the QDQ runs around the fp32 op")
    if fold is not None and isinstance(layer, _conv_types()):
        from fw.core.ir.passes.fold_qdq import narrow_conv

        shape, groups = tuple(layer.weight.shape), int(layer._conv.get("groups", 1))
        pairs = getattr(fold, "min_channel_pairs", 0)
        if narrow_conv(shape, groups, pairs):
            return (f"C_in/groups x C_out/groups = {shape[1]} x {shape[0] // groups} < "
                    f"fold_qdq's min_channel_pairs {pairs}: oneDNN's int8 conv pads so few "
                    "channels to its blocks and loses to fp32 (LeNet's stem); the QDQ runs "
                    "around the fp32 op")
    from fw.core.kernels.cpu.int8 import EXACT_U8S8

    if layer.act_scale is not None and layer._arange[0] < 0 and not EXACT_U8S8:
        return ("its input is quantized as signed int8: without VNNI fold_qdq runs only "
                "uint8 0..127 inputs in int8 (a relu's output); fp32 with QDQ here")
    return f"the int8 passes {list(passes)} left it in fp32"


def _scales(layer):
    ws = getattr(layer, "weight_scale", None)
    w = (float(ws.numpy().min()), float(ws.numpy().max())) if ws is not None else ()
    a = getattr(layer, "act_scale", None)
    return w, (float(a.numpy().reshape(-1)[0]) if a is not None else None)


def report(model_or_path, sample, reference=None, repeat=20):
    """Build the quantization report of a converted model on `sample` (one input batch).

    Args:
        model_or_path: a converted model (Layer) or the path of one saved by fw.jit.save.
        sample: the input batch (array or Tensor).
        reference: the fp32 model (Layer or saved path) for SQNR, speed-up and size.
        repeat: timed runs per measurement (the fastest is reported).
    Returns:
        a `QuantReport`; ``str(report)`` is a table.

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> import fw.slim
        >>> from fw.quantization import PTQ, QuantConfig
        >>> from fw.quantization.observers import AbsmaxObserver
        >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
        >>> q = ptq.quantize(net)
        >>> x = fw.randn([16, 4])
        >>> _ = q(x)                      # calibration
        >>> rep = fw.slim.report(ptq.convert(q), x, repeat=1)
        >>> [(r.name, r.kernel) for r in rep.layers]     # too small for int8 kernels
        [('0', 'fp32'), ('2', 'fp32')]
    """
    from fw.quantization.layers import _Converted

    x = _as_tensor(sample)
    rep = QuantReport()
    if isinstance(model_or_path, (str, os.PathLike)):
        return _report_files(model_or_path, x, reference, repeat, rep)
    model = model_or_path
    if not isinstance(model, nn.Layer):
        raise TypeError(f"report: 'model_or_path' must be a Layer or a model file path, got "
                        f"{type(model).__name__}")
    model.eval()
    convs = {n: m for n, m in model.named_sublayers() if isinstance(m, _Converted)}
    if not convs:
        raise ValueError("report: the model has no converted quantized layers (run "
                         "PTQ/QAT quantize and convert first)")
    rep.int8_passes = _int8_passes()
    chains: dict = {}
    int8_ops = _int8_ops(_optimized_program(model, x, rep.int8_passes, chains)) \
        if rep.int8_passes else {}
    got, out_q = _capture(model, list(convs), x)
    ref_got, out_ref = ({}, None)
    if isinstance(reference, nn.Layer):
        reference.eval()
        ref_got, out_ref = _capture(reference, list(convs), x)
        rep.output_sqnr_db = sqnr(out_ref.numpy(), out_q.numpy())
    for name, layer in convs.items():
        quantized = layer.weight_bits is not None or layer.act_scale is not None
        macs = _macs(layer, got[name][0], got[name][1]) if name in got else None
        if name in int8_ops:
            kernel, why = "int8", f"folded into {int8_ops[name]}"
        elif not quantized:
            kernel, why = "fp32", "not quantized (config)"
        elif layer.act_scale is None:
            # activation=None in the config: the file keeps int8 weights; the Predictor
            # dequantizes them once at load and computes in float32 (chosen where int8
            # loses: LeNet's stem and classifier, see the README)
            kernel, why = "fp32", ("weight-only (activation=None in the config): int8 "
                                   "weights dequantized once when loaded, fp32 compute")
        elif name in chains:
            kernel, why = "fp32", chains[name]
        elif not rep.int8_passes:
            kernel, why = "fp32", ("no int8 pass in this fw-core: quantize/dequantize run as "
                                   "reference kernels around the fp32 op")
        else:
            kernel, why = "fp32", _fp32_reason(layer, macs, rep.int8_passes)
        w, a = _scales(layer)
        lr = LayerReport(name, type(layer).__name__, kernel, why, w, a, layer.weight_bits)
        if name in got:
            # each layer alone, as the Predictor would run it: its optimized program (int8
            # ops where the pass folded it) and the fp32 twin's
            xin = got[name][0]
            for attr, fp32 in (("ms_quant", False), ("ms_fp32", True)):
                prog = _optimized_program(_Alone(layer, fp32), xin, rep.int8_passes)
                setattr(lr, attr, _program_ms(prog, xin, repeat))
                if not fp32 and name not in chains and \
                        bool(_int8_ops(prog)) != (kernel == "int8"):
                    lr.reason += " (alone, the pass decides otherwise: its input is not " \
                                 "an int8 value there)"
            if name in ref_got:
                lr.sqnr_db = sqnr(ref_got[name][1].numpy(), got[name][1].numpy())
        rep.layers.append(lr)
    inside = tuple(n + "." for n in convs)
    for name, layer in model.named_sublayers():
        if isinstance(layer, (nn.Conv2D, nn.Linear)) and not name.startswith(inside):
            rep.layers.append(LayerReport(name, type(layer).__name__, "fp32",
                                          "not quantized (skipped by the config)"))
    rep.bytes_quant = _layer_bytes(model)
    if isinstance(reference, nn.Layer):
        rep.bytes_fp32 = _layer_bytes(reference)
        rep.ms_quant = _program_ms(_optimized_program(model, x, rep.int8_passes), x, repeat)
        rep.ms_fp32 = _program_ms(_optimized_program(reference, x, rep.int8_passes), x, repeat)
    return rep


def _file(path):
    """fw.jit.save's file for a path or a path prefix."""
    p = os.fspath(path)
    return p if os.path.exists(p) or p.endswith(".fwmodel") else p + ".fwmodel"


def _report_files(path, x, reference, repeat, rep):
    """Whole-model figures of saved files (run with fw.jit.load: fw-slim does not
    depend on fw.inference); per-layer figures need the Layer."""
    import fw.jit

    q = fw.jit.load(os.fspath(path))
    rep.bytes_quant = model_file_sizes(_file(path))["weights"]
    rep.int8_passes = _int8_passes()
    out_q = q(x)
    rep.ms_quant = _best_ms(lambda: q(x), repeat)
    if reference is not None:
        ref = fw.jit.load(os.fspath(reference)) if isinstance(reference, (str, os.PathLike)) \
            else reference
        out_r = ref(x)
        rep.output_sqnr_db = sqnr(out_r.numpy(), out_q.numpy())
        rep.ms_fp32 = _best_ms(lambda: ref(x), repeat)
        if isinstance(reference, (str, os.PathLike)):
            rep.bytes_fp32 = model_file_sizes(_file(reference))["weights"]
        else:
            rep.bytes_fp32 = _layer_bytes(ref)
    return rep
