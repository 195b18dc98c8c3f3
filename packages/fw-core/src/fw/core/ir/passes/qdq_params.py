"""The constant parameters of quantize_linear / dequantize_linear ops, read by the int8
inference passes (``fold_qdq``, ``int8_concat``)."""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.ir.passes.fold_batch_norm import captured_array

_QDTYPES = {_dt.int8: "int8", _dt.uint8: "uint8"}
_F32 = np.float32


def _const(rw, v):
    return None if v is None else captured_array(v, rw.program)


def _dq_params(rw, op):
    """(q value, scale array, zero-point array, axis) of a dequantize_linear with constant
    scale and zero point, else None."""
    if op is None or op.name != "dequantize_linear":
        return None
    q, s, z = (list(op.operands) + [None])[:3]
    sa = _const(rw, s)
    za = np.zeros(1, np.int32) if z is None else _const(rw, z)
    if sa is None or za is None or q.type.dtype not in _QDTYPES:
        return None
    return q, sa.astype(_F32).reshape(-1), za.astype(np.int64).reshape(-1), op.attrs.get("axis", -1)


def _q_params(rw, op):
    """(scale, zero point, qmin, qmax, result dtype) of a per-tensor quantize_linear."""
    x, s, z = (list(op.operands) + [None])[:3]
    sa = _const(rw, s)
    za = np.zeros(1, np.int32) if z is None else _const(rw, z)
    if sa is None or za is None or sa.size != 1 or za.size != 1:
        return None
    dt = _QDTYPES.get(op.results[0].type.dtype)
    if dt is None:
        return None
    return (float(sa.reshape(-1)[0]), int(za.reshape(-1)[0]), int(op.attrs.get("qmin", -128)),
            int(op.attrs.get("qmax", 127)), dt, s, z)
