"""fw.inference — run saved fw models (Paddle Inference's API).

>>> import numpy as np
>>> import fw.inference as infer
>>> config = infer.Config("model.fwmodel")                      # doctest: +SKIP
>>> predictor = infer.create_predictor(config)                  # doctest: +SKIP
>>> h = predictor.get_input_handle(predictor.get_input_names()[0])  # doctest: +SKIP
>>> h.copy_from_cpu(np.ones((1, 784), np.float32))              # doctest: +SKIP
>>> predictor.run()                                             # doctest: +SKIP
>>> out = predictor.get_output_handle("output_0").copy_to_cpu()  # doctest: +SKIP

Depends on fw-core only (an import-linter contract checks it). See README.md.
"""

from fw.inference.backends import XpuConfig, get_trt_compile_version, get_trt_runtime_version
from fw.inference.config import MODEL_SUFFIX, Config, PassBuilder
from fw.inference.enums import DataType, PlaceType, PrecisionType, get_num_bytes_of_data_type
from fw.inference.mixed_precision import convert_to_mixed_precision
from fw.inference.pool import PredictorPool
from fw.inference.predictor import Predictor, create_predictor
from fw.inference.tensor import Tensor

__version__ = "0.1.0"

__all__ = ["Config", "PassBuilder", "Predictor", "PredictorPool", "create_predictor", "Tensor",
           "DataType", "PrecisionType", "PlaceType", "get_num_bytes_of_data_type", "get_version",
           "MODEL_SUFFIX", "__version__", "convert_to_mixed_precision", "XpuConfig",
           "get_trt_compile_version", "get_trt_runtime_version"]


def get_version() -> str:
    """The versions of fw-inference and the fw-core it runs on.

    Returns:
        str: a one-line description (``fw-inference X, fw-core Y, ...``).

    Examples:
        >>> import fw
        >>> import fw.inference
        >>> fw.inference.get_version().startswith("fw-inference ")
        True
    """
    from fw.core import __version__ as core
    from fw.core.internal import native as _native_module

    _native = _native_module()
    if _native is None:
        native = "not built"
    else:
        native = "oneDNN" if _native.available else "disabled (FW_DISABLE_NATIVE=1)"
    return f"fw-inference {__version__}, fw-core {core}, native kernels: {native}"
