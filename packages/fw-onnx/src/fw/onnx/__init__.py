"""fw.onnx — export fw models to ONNX (Paddle's ``paddle.onnx``).

``fw.onnx.export(layer, path, input_spec, opset_version=17)`` traces the layer with
``fw.jit`` and lowers its program op by op to an ONNX graph (``path + ".onnx"``).
See packages/fw-onnx/README.md for the design and for adding an op's lowering.
"""

from fw.onnx._export import DEFAULT_OPSET, MIN_OPSET, export, program_to_onnx, unsupported_ops
from fw.onnx.errors import ExportError
from fw.onnx.lowering import LOWERINGS, lowers

__all__ = ["export", "program_to_onnx", "unsupported_ops", "ExportError", "LOWERINGS",
           "lowers", "DEFAULT_OPSET", "MIN_OPSET"]
