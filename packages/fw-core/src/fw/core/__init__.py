"""fw.core: tensor, dtypes, devices, the op table and kernels, the IR, passes,
the executor and the model file format. See README.md beside this package."""

__version__ = "0.1.0"

import numpy as _np

# Deep-learning code routinely makes inf/nan on purpose (log(0), masks, overflow
# checks in loss scaling); NumPy's floating-point warnings would be noise, as
# they are not raised by PyTorch or Paddle either.
_np.seterr(divide="ignore", invalid="ignore", over="ignore", under="ignore")

from fw.core import _memory  # noqa: E402

_memory.tune_malloc_if_asked()  # opt-in: FW_MALLOC_TUNING=1 (see _memory.py)

from fw.core import dtypes, errors, ir, ops, place  # noqa: E402

# device programs compile with their elementwise chains fused (issue 17); registered
# here, the one module above both the executor and the pass machinery
from fw.core.kernels.gpu import program as _device_program  # noqa: E402
from fw.core.ops import FUNCTIONS, OPS  # noqa: E402
from fw.core.tensor import Tensor, is_tensor, to_tensor  # noqa: E402

_device_program.register()

__all__ = ["Tensor", "to_tensor", "is_tensor", "dtypes", "place", "errors", "ops", "OPS",
           "FUNCTIONS", "ir", "__version__"]
