"""The program an export writes: a Layer (or function) traced by fw.jit in eval
mode for the given input specs, cut down to the outputs, without state updates.

No inference passes run on it (no BN folding, no fusion): the exported graph
holds fw's own ops one for one, so every op needs exactly one lowering and the
fused ops of fw's IR passes never reach the exporter; onnxruntime does its own
fusions when it loads the model. Only dead-code elimination runs (to_static has
already applied CSE/DCE to the traced program).
"""

from __future__ import annotations

import numpy as np

from fw.core.ir.passes import PassManager
from fw.core.tensor import Tensor
from fw.jit import InputSpec, StaticFunction

__all__ = ["inference_program"]


def _is_layer(obj) -> bool:
    return "_sub_layers" in getattr(obj, "__dict__", ()) and hasattr(type(obj), "forward")


def _specs(input_spec):
    out = []
    for i, s in enumerate(input_spec):
        if isinstance(s, InputSpec):
            out.append(s)
        elif isinstance(s, Tensor):
            out.append(InputSpec.from_tensor(s, name=f"input_{i}"))
        elif isinstance(s, np.ndarray):
            out.append(InputSpec.from_numpy(s, name=f"input_{i}"))
        else:
            out.append(s)  # a Python value: traced as a constant
    return out


def _static_function(layer):
    if _is_layer(layer):
        fwd = layer.forward
        if isinstance(fwd, StaticFunction):
            return fwd, layer
        return StaticFunction(type(layer).forward, instance=layer), layer
    if isinstance(layer, StaticFunction):
        # a converted forward: its layer is what the original method is bound to
        return layer, getattr(layer.dygraph_function, "__self__", None)
    if callable(layer):
        return StaticFunction(layer), None
    raise TypeError(f"fw.onnx.export: expected a Layer or a function, got "
                    f"{type(layer).__name__}")


def inference_program(layer, input_spec=None, output_spec=None):
    """(program, labels): the eval-mode program of `layer` for `input_spec` and a map
    from its parameter/constant labels to the layer's structured names
    (``"fc.weight"``), which become the ONNX initializer names."""
    sf, inst = _static_function(layer)
    was_training = getattr(inst, "training", None)
    if inst is not None and hasattr(inst, "eval"):
        inst.eval()
    try:
        if input_spec is None and isinstance(getattr(inst, "input_spec", None), list):
            input_spec = inst.input_spec  # a loaded model (fw.jit.load) knows its inputs
        if input_spec is not None:
            cp = sf.get_concrete_program(*_specs(list(input_spec)))
        else:
            try:
                cp = sf.concrete_program
            except RuntimeError:
                raise ValueError("fw.onnx.export: give input_spec (the layer has no input_spec "
                                 "of its own and has not been called, so the input shapes are "
                                 "unknown)") from None
    finally:
        if was_training:
            inst.train()
    prog = cp.main_program.clone()
    outs = list(prog.block.outputs[:len(cp.outputs)])
    if output_spec is not None:
        outs = [outs[int(i)] for i in output_spec]
    prog.block.outputs = outs
    prog.updates.clear()
    prog.touch()
    PassManager(["dce"], verify=False).run(prog)
    return prog, _labels(prog, inst)


def _labels(prog, layer) -> dict:
    if layer is None:
        return {}
    names = {}
    for n, p in layer.named_parameters():
        names[id(p)] = n
    for n, b in layer.named_buffers():
        names.setdefault(id(b), n)
    return {label: names[id(t)] for label, t in prog.captured.items() if id(t) in names}
