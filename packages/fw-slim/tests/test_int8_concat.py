"""int8 concatenation (fw.core.ir.passes.int8_concat, run by fold_qdq): a small
Inception-like block, PTQ-converted, runs its branch concat on bytes (every branch's
int8 conv requantizes to the concat's one scale), and equals the fake-quant program —
exactly where the concat's quantization is pushed into its operands (input-only QDQ
from ``convert``), within one step of that scale where the operands' own output
quantizations (``quantize_outputs``) are replaced by it."""

import collections
import os

import numpy as np

import fw
import fw.jit
import fw.nn as nn
from fw.core.ir import load, run
from fw.core.ir.passes import PassManager
from fw.core.ir.passes.fold_batch_norm import captured_array
from fw.core.ir.passes.fold_qdq import FoldQDQ
from fw.quantization import PTQ, QuantConfig, quantize_outputs
from fw.quantization.observers import AbsMaxChannelWiseWeightObserver, AbsmaxObserver


class Inception(nn.Layer):
    """stem -> [1x1, 3x3, pool -> 1x1] -> concat -> 1x1 -> pool -> fc."""

    def __init__(self, c=16):
        super().__init__()
        self.stem = nn.Conv2D(3, c, 3, padding=1)
        self.b1 = nn.Conv2D(c, c, 1)
        self.b2 = nn.Conv2D(c, c, 3, padding=1)
        self.pool = nn.MaxPool2D(3, stride=1, padding=1)
        self.b3 = nn.Conv2D(c, c, 1)
        self.head = nn.Conv2D(3 * c, 2 * c, 1)
        self.relu = nn.ReLU()
        self.gap = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(2 * c, 5)

    def forward(self, x):
        h = self.relu(self.stem(x))
        a = self.relu(self.b1(h))
        b = self.relu(self.b2(h))
        c = self.relu(self.b3(self.pool(h)))
        y = self.relu(self.head(fw.concat([a, b, c], axis=1)))
        return self.fc(fw.flatten(self.gap(y), 1))


def _converted(tmp_path, seed=0):
    fw.seed(seed)
    net = Inception()
    net.eval()
    rng = np.random.default_rng(seed)
    cfg = QuantConfig(activation=AbsmaxObserver(), weight=AbsMaxChannelWiseWeightObserver())
    ptq = PTQ(cfg)
    q = ptq.quantize(net)
    calib = [rng.standard_normal((2, 3, 8, 8)).astype("float32") for _ in range(3)]
    for c in calib:
        q(fw.to_tensor(c))
    spec = [fw.jit.InputSpec([-1, 3, 8, 8], "float32", "x")]
    path = fw.jit.save(ptq.convert(q), os.fspath(tmp_path / "m"), input_spec=spec)
    prog, _ = load(path)
    return prog, calib, rng.standard_normal((2, 3, 8, 8)).astype("float32"), path


def _ops(prog):
    return collections.Counter(op.name for op in prog.block.ops)


def _concat(prog):
    (cat,) = [op for op in prog.block.ops if op.name == "concat"]
    return cat


def _fold(prog, **kw):
    p = prog.clone()
    PassManager([FoldQDQ(signed_inputs=True, **kw)]).run(p)
    return p


def test_concat_runs_on_bytes_and_is_exact(tmp_path):
    prog, _, x, _ = _converted(tmp_path)
    want = run(prog, x).numpy()
    opt = _fold(prog)
    cat = _concat(opt)
    # every operand is the int8 output of a branch conv requantized to the concat's scale
    assert [v.owner.name for v in cat.operands] == ["quantized_conv2d"] * 3
    assert all(str(v.type.dtype) in ("int8", "fw.int8") for v in cat.operands), cat.operands
    assert str(cat.results[0].type.dtype) in ("int8", "fw.int8")
    names = _ops(opt)
    # input quantize, and the one for the float stem's output (read by b1, b2 and the pool)
    assert names["quantized_conv2d"] == 4 and names["conv"] == 1, names
    # one shared output scale (the int8 op's operand 7), the concat's reader's
    scales = {float(captured_array(v.owner.operands[7], opt).reshape(-1)[0])
              for v in cat.operands}
    assert len(scales) == 1, scales
    # pushing the concat's quantize into its operands gives the same codes: the int8
    # program equals the float-concat int8 program to float32 rounding of folded scales
    ref = _fold(prog, int8_concat=False).clone()
    assert _ops(ref)["concat"] == 1 and str(_concat(ref).results[0].type.dtype) in (
        "float32", "fw.float32")
    np.testing.assert_allclose(run(opt, x).numpy(), run(ref, x).numpy(), rtol=1e-5,
                               atol=1e-5 * np.abs(want).max())
    # and the QDQ (fake-quant) program within a step of the last layers' inputs
    np.testing.assert_allclose(run(opt, x).numpy(), want, atol=0.03 * np.abs(want).max())


def test_predictor_matches_fake_quant(tmp_path):
    import fw.inference as infer

    prog, _, x, path = _converted(tmp_path)
    want = run(prog, x).numpy()
    pred = infer.create_predictor(infer.Config(path))
    (got,) = pred.run([x])
    np.testing.assert_allclose(np.asarray(got), want, atol=0.03 * np.abs(want).max())


def test_output_quantized_operands_share_the_concat_scale(tmp_path):
    """quantize_outputs gives each branch output its own quantization before the concat;
    the pass replaces them by the concat's (each operand's step is within 2x of it) and
    stays within one step of that scale of the QDQ program at the concat."""
    prog, calib, x, _ = _converted(tmp_path)
    quantize_outputs(prog, calib)
    cat = _concat(prog)
    assert all(v.owner.name == "dequantize_linear" for v in cat.operands)
    want = run(prog, x).numpy()
    opt = _fold(prog)
    cat = _concat(opt)
    assert [v.owner.name for v in cat.operands] == ["quantized_conv2d"] * 3
    assert str(cat.results[0].type.dtype) in ("int8", "uint8", "fw.int8", "fw.uint8")
    np.testing.assert_allclose(run(opt, x).numpy(), want, atol=0.05 * np.abs(want).max())


def test_scale_rule_on_values():
    """Where the scales allow (operand step <= 2x the concat's): requantized once, within
    one step of the double rounding; a coarser operand keeps its own rounding (exact)."""
    from fw.core.ir.passes.int8_concat import MAX_STEP_RATIO, _mapped_range

    assert MAX_STEP_RATIO == 2.0
    # int8 operand of step 0.1 (range -12.8..12.7) on a concat grid of step 0.2 (uint8,
    # zero point 128): codes 128 - 64 .. 128 + 64 (rounded), inside 0..255
    assert _mapped_range((0.1, 0, -128, 127), (0.2, 128, 0, 255)) == (64, 192)
    # a wider operand is clipped by the concat's own range
    assert _mapped_range((0.4, 0, -128, 127), (0.2, 0, -128, 127)) == (-128, 127)
    rng = np.random.default_rng(0)
    u = rng.normal(0, 3, 10000)
    for s_i in (0.05, 0.1, 0.2, 0.3):
        p = 0.15
        ref = np.clip(np.rint(np.clip(np.rint(u / s_i), -128, 127) * s_i / p), -128, 127)
        lo, hi = _mapped_range((s_i, 0, -128, 127), (p, 0, -128, 127))
        got = np.clip(np.rint(u / p), lo, hi)
        assert np.abs(got - ref).max() <= 1, s_i


def test_signed_concat_scale_keeps_one_code_type(tmp_path):
    """quantize_outputs(unsigned=False): the branch outputs are relu outputs quantized as
    uint8 0..255, the concat's reader quantizes as int8. Mapping a uint8 operand onto the
    int8 grid would change its code type, so those operands are requantized exactly
    (their dequantized values quantized with the shared scale): one int8 concat, exact
    against the QDQ program at the concat."""
    prog, calib, x, _ = _converted(tmp_path)
    quantize_outputs(prog, calib, unsigned=False)
    want = run(prog, x).numpy()
    opt = _fold(prog)
    cat = _concat(opt)
    assert len({str(v.type.dtype) for v in cat.operands}) == 1, cat.operands
    assert str(cat.results[0].type.dtype) in ("int8", "fw.int8")
    np.testing.assert_allclose(run(opt, x).numpy(), want, atol=0.05 * np.abs(want).max())
