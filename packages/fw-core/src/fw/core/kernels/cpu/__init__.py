"""Fast cpu kernels, one module per op family, named like the family's module in
``fw/core/ops/`` (an op's family is ``OPS[name].family``): ``layer_norm``'s kernel is
in ``norm.py``, ``fused_matmul``'s in ``fused.py``, the explicit backward ops' in
``nn_grad.py``, ``fused_attention``'s in ``attention.py``. ``_common.py`` holds what
the families share (dtypes, operand adapters, the plan cache, the fallback guard,
`attach`).

Importing a family module attaches its kernels (``op.kernels["cpu"]``) when the part of
the native extension they call is loaded; importing this package attaches all of them.
"""

from fw.core.kernels.cpu import (
    activation,
    attention,
    bf16,
    collective,
    conv,
    fused,
    int8,
    linalg,
    loss,
    nn_grad,
    nn_misc,
    norm,
    optimizer,
    pool,
    quant,
)

__all__ = ["activation", "attention", "bf16", "collective", "conv", "fused", "int8", "linalg",
           "loss", "nn_grad", "nn_misc", "norm", "optimizer", "pool", "quant"]
