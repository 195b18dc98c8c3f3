"""Build quantize/dequantize (QDQ) programs for tests and benchmarks of the int8 path.

`quantize_program(program, calibration)` rewrites a float program (e.g. a zoo model
saved with ``fw.jit.save`` and loaded with ``fw.core.ir.load``) into the form the fw-slim
contract fixes for a converted PTQ model: for each ``conv`` / ``linear`` / ``matmul``
with a constant float32 weight, the weight becomes an int8 constant read through
``dequantize_linear`` (symmetric, per output channel: axis 0 of a conv's ``[O, I, kh,
kw]``, axis 1 of a Linear's ``[in, out]``), and its input gets a ``quantize_linear`` ->
``dequantize_linear`` pair with a per-tensor scale from abs-max calibration (symmetric
int8, zero point 0). Batch norms and everything else stay float, as a converter leaves
them. It is a small stand-in for ``fw.quantization``'s PTQ (fw-slim), so fw-core's
int8 pass can be tested on whole models without depending on fw-slim.
"""

from __future__ import annotations

import numpy as np

from fw.core.ir.passes.fold_batch_norm import captured_array
from fw.core.ir.passes.rewrite import Rewriter

__all__ = ["quantize_program", "products"]

_PRODUCTS = ("conv", "linear", "matmul")


def products(program, min_channels=1):
    """The top-level conv/linear/matmul ops of `program` with a constant float32 weight
    (2-D for linear/matmul, untransposed), in program order."""
    out = []
    for op in program.block.ops:
        if op.name not in _PRODUCTS:
            continue
        w = op.operands[1]
        arr = captured_array(w, program)
        if arr is None or arr.dtype != np.float32:
            continue
        if op.name == "matmul" and (op.attrs["transpose_x"] or op.attrs["transpose_y"]
                                    or arr.ndim != 2):
            continue
        if op.name == "linear" and arr.ndim != 2:
            continue
        if op.name == "conv" and arr.shape[1] * op.attrs["groups"] < min_channels:
            continue
        out.append(op)
    return out


def _calibrate(program, calibration, n_ops):
    """abs-max of each product's input over the calibration batches."""
    from fw.core.ir import run
    from fw.core.tensor import to_tensor

    probe = program.clone()
    ops = products(probe)[:n_ops]
    probe.block.outputs = [op.operands[0] for op in ops]
    amax = np.zeros(len(ops))
    for batch in calibration:
        batch = batch if isinstance(batch, (list, tuple)) else [batch]
        outs = run(probe, *[to_tensor(np.asarray(b)) for b in batch])
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for i, o in enumerate(outs):
            amax[i] = max(amax[i], float(np.abs(o.numpy()).max(initial=0.0)))
    return amax


def quantize_program(program, calibration, skip=()) -> int:
    """Rewrite `program` in place into its QDQ form (see the module doc), calibrating
    activation scales on `calibration` (an iterable of input arrays, or of lists of
    them). Products whose index (in `products` order) is in `skip` stay float.
    Returns how many products were quantized."""
    ops = products(program)
    amax = _calibrate(program, list(calibration), len(ops))
    rw = Rewriter(program)
    zero1 = rw.add_const(np.zeros(1, np.int32), "qdq.zero")
    n = 0
    for i, op in enumerate(ops):
        if i in skip:
            continue
        w = op.operands[1]
        W = captured_array(w, program).astype(np.float32)
        axis = 0 if op.name == "conv" else 1
        red = tuple(d for d in range(W.ndim) if d != axis)
        s = (np.abs(W).max(axis=red) / 127.0).astype(np.float32)
        s[s == 0] = 1.0
        shape = [1] * W.ndim
        shape[axis] = -1
        q = np.clip(np.rint(W / s.reshape(shape)), -127, 127).astype(np.int8)
        label = w.label or f"w{i}"
        qv = rw.add_const(q, f"{label}.int8")
        sv = rw.add_const(s, f"{label}.scale")
        zv = rw.add_const(np.zeros(s.size, np.int32), f"{label}.zero_point")
        wd = rw.create("dequantize_linear", [qv, sv, zv], {"axis": axis}, before=op)
        xs = rw.add_const(np.array([max(amax[i], 1e-8) / 127.0], np.float32), f"act{i}.scale")
        x = op.operands[0]
        xq = rw.create("quantize_linear", [x, xs, zero1], {"qmin": -128, "qmax": 127},
                       before=op)
        xd = rw.create("dequantize_linear", [xq.results[0], xs, zero1], {}, before=op)
        rw.set_operand(op, 0, xd.results[0])
        rw.set_operand(op, 1, wd.results[0])
        n += 1
    return n
