"""The lowering table of fw.onnx: ``LOWERINGS[fw op name] = fn(op, ctx)``.

One module per fw op family, named like the family's module in fw-core
(``fw/core/ops/<family>.py``); importing this package registers them all. See
`fw.onnx.lowering._registry` for the contract of a lowering and
`fw.onnx._context.Context` for what `ctx` offers.
"""

from fw.onnx.lowering import (  # noqa: F401  (each module registers its lowerings)
    activation,
    control,
    conv,
    creation,
    cumulative,
    elementwise,
    indexing,
    linalg,
    nn_misc,
    norm,
    pool,
    quant,
    reduce,
    search,
    shape,
)
from fw.onnx.lowering._registry import LOWERINGS, lowers

__all__ = ["LOWERINGS", "lowers"]
