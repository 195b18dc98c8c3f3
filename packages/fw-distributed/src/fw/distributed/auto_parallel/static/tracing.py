"""Tracing a layer (+ loss, + backward) to one *global* program with fw-core's
IR builder (`fw.core.ir.builder.Builder`, what fw.jit's tracer builds on; the
import-linter contract keeps fw.distributed off fw.jit, and nothing here needs
it: the backward is fw-autograd's `gradients` on IR values, the optimizer step is
emitted per rank from fw-nn's ``Optimizer.update_plan()`` contract).

The program sees global shapes: a distributed parameter is traced through a
stand-in of its global shape and name (its data is never read: partition
captures each rank's block instead), a batch element through an input of its
global shape. The annotations — the placements of the distributed inputs and
parameters — are returned next to the program."""

from __future__ import annotations

import numpy as np

from fw.core.ir.builder import Builder
from fw.core.ir.types import TensorType
from fw.core.tensor import Tensor
from fw.distributed.auto_parallel.dist_tensor import DistTensor

__all__ = ["Traced", "trace_step"]


class Traced:
    """A traced step: the global ``program``; ``annotations`` (block-0 arg ->
    placements); ``params`` (label -> the layer's parameter object); ``grads``
    (labels of the parameters whose gradients are outputs 1..); ``n_outputs``
    (outputs before the gradients)."""

    def __init__(self, program, annotations, params, grads, n_outputs):
        self.program, self.annotations, self.params = program, annotations, params
        self.grads, self.n_outputs = grads, n_outputs


def _global_meta(x, i, fn):
    if isinstance(x, DistTensor):
        return list(x.shape), x.dtype, list(x.placements), x.process_mesh
    if isinstance(x, Tensor):
        return list(x.shape), x.dtype, None, None
    if isinstance(x, np.ndarray):
        from fw.core.tensor import to_tensor

        t = to_tensor(x)
        return list(t.shape), t.dtype, None, None
    raise TypeError(f"{fn}: batch element {i} must be a Tensor (or numpy array), got "
                    f"{type(x).__name__}")


def _params(layer):
    """[(sublayer, attribute name, parameter)] of every parameter slot."""
    out = []
    for sub in layer.sublayers(include_self=True):
        for pname, p in sub._parameters.items():
            if p is not None:
                out.append((sub, pname, p))
    return out


def trace_step(layer, loss_fn, batch, mode, mesh, fn="dist.to_static", amp=None,
               loss_scale=1.0):
    """Trace one step of `layer` on `batch` in `mode` ("train", "eval", "predict").

    train: outputs ``[loss, grad_0, …]`` (the trainable parameters' gradients);
    eval: ``[loss]``; predict: the layer's outputs (flattened). With a loss, the
    last batch element is the label (Paddle's DistModel feeds inputs, then labels).
    `amp`: a context factory (``fw.amp.auto_cast``) the forward and the loss are
    traced under (the backward is not, as eager ``loss.backward()`` runs after the
    region); `loss_scale`: the gradients are those of ``loss * loss_scale``, divided
    by it (float16's fixed loss scaling; the loss output is unscaled).
    """
    import contextlib

    amp = amp or contextlib.nullcontext
    from fw.distributed.auto_parallel.dist_tensor import DistParameter
    from fw.nn import Parameter

    metas = [_global_meta(x, i, fn) for i, x in enumerate(batch)]
    for i, m in enumerate(metas):
        if m[3] is not None and m[3] != mesh:
            raise ValueError(f"{fn}: batch element {i} lives on {m[3]}, the model on {mesh}; "
                             f"one mesh per model is supported (no pipeline meshes yet)")
    slots = _params(layer)
    standin: dict = {}
    for _sub, _n, p in slots:
        if isinstance(p, DistParameter) and id(p) not in standin:
            if p.process_mesh != mesh:
                raise ValueError(f"{fn}: parameter {p.name!r} lives on {p.process_mesh}, "
                                 f"the model on {mesh}")
            s = Parameter._wrap(np.zeros(list(p.shape), p.dtype.np), name=p.name,
                                trainable=not p._sg)
            standin[id(p)] = (s, p)
    was_training = layer.training
    b = Builder()
    try:
        for sub, n, p in slots:
            if id(p) in standin:
                sub._parameters[n] = standin[id(p)][0]
        if mode == "train":
            layer.train()
        else:
            layer.eval()
        with b:
            args = [b.add_input(TensorType(m[0], m[1]), f"input_{i}")
                    for i, m in enumerate(metas)]
            if loss_fn is not None and mode != "predict":
                if len(args) < 2:
                    raise ValueError(f"{fn}: with a loss, a batch is (inputs..., label): got "
                                     f"{len(args)} element(s)")
                with amp():
                    out = layer(*args[:-1])
                    loss = loss_fn(out, args[-1])
                outs = [loss]
            elif mode == "predict":
                with amp():
                    out = layer(*args)
                outs = list(out) if isinstance(out, (list, tuple)) else [out]
                loss = None
            else:
                with amp():
                    loss = layer(*args)
                outs = [loss]
            grads = []
            if mode == "train":
                from fw.autograd import gradients

                if loss is None or list(loss.shape) not in ([], [1]):
                    raise ValueError(f"{fn}: training needs a scalar loss, got "
                                     f"{None if loss is None else loss.shape}")
                ptens = []
                for a in b.program.parameters():
                    t = b.program.captured.get(a.label)
                    if isinstance(t, Tensor) and not t._sg and t.dtype.is_inexact:
                        ptens.append((a.label, t))
                target = loss if loss_scale == 1.0 else loss * loss_scale
                gs = gradients([target], [b.current_value(t) for _, t in ptens], None,
                               allow_unused=True)
                for (label, _t), g in zip(ptens, gs):
                    if g is not None:
                        grads.append(label)
                        outs.append(g if loss_scale == 1.0 else g * (1.0 / loss_scale))
            b.set_outputs(outs)
    finally:
        for sub, n, p in slots:
            if id(p) in standin:
                sub._parameters[n] = p
        if was_training:
            layer.train()
        else:
            layer.eval()
    prog = b.program
    by_label = {}
    for a in prog.block.args:
        if a.role in ("param", "const"):
            by_label[a.label] = a
    annotations = {}
    params = {}
    for a in prog.inputs():
        i = int(a.label.split("_")[1])
        if metas[i][2] is not None:
            annotations[a] = metas[i][2]
    back = {id(s): p for s, p in standin.values()}
    for label, t in prog.captured.items():
        orig = back.get(id(t))
        if orig is not None:
            annotations[by_label[label]] = list(orig.placements)
            params[label] = orig
        elif isinstance(t, Parameter):
            params[label] = t
    return Traced(prog, annotations, params, grads, len(outs) - len(grads))
