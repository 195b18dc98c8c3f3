"""The desync check: every rank of a group exchanges a fixed-size signature of
the collective it is entering (sequence number, op, reduce op, root, dtype,
shape) before the data moves, and all raise `CollectiveDesyncError` naming both
sides when they differ, instead of letting MPI hang or corrupt the result.

The signatures travel in one nonblocking MPI_Iallgather issued together with the
data op (no extra round trip in series: the check overlaps the transfer). The
idea follows PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL collective fingerprints;
the encoding is fw's own.

On by default; ``FW_DIST_DESYNC_CHECK=0`` turns it off (then a mismatch is caught
only as an MPI error or a timeout, whose message still lists the last op of every
rank); ``FW_DIST_DEBUG=1`` forces it on.
"""
from __future__ import annotations

import os
import zlib

import numpy as np

from fw.distributed.communication.reduce_op import ReduceOp

__all__ = ["OPS", "DTYPES", "LEN", "encode", "describe", "mismatch", "enabled"]

# op names <-> codes (the signature carries codes; names are for messages)
OPS = ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "alltoall",
       "alltoall_single", "scatter", "gather", "barrier", "all_gather_object",
       "broadcast_object_list", "scatter_object_list", "send", "recv", "gather_object"]
_OP_CODE = {n: i for i, n in enumerate(OPS)}
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128", "bytes"]
_DT_CODE = {n: i for i, n in enumerate(DTYPES)}
MAX_DIMS = 8
LEN = 8 + MAX_DIMS   # seq, op, reduce op, root, dtype, ndim, numel, shape hash, dims…
ANY = -1             # "not compared" (e.g. alltoall_single's per-rank sizes)


def enabled() -> bool:
    if os.environ.get("FW_DIST_DEBUG", "0") not in ("", "0"):
        return True
    return os.environ.get("FW_DIST_DESYNC_CHECK", "1") not in ("", "0")


def encode(seq, op, dtype, shape, reduce_op=ANY, root=ANY, shape_any=False) -> np.ndarray:
    s = np.full(LEN, ANY, np.int64)
    s[0] = seq
    s[1] = _OP_CODE[op]
    s[2] = reduce_op
    s[3] = root
    s[4] = _DT_CODE.get(str(dtype), len(DTYPES)) if dtype is not None else ANY
    if shape is not None and not shape_any:
        s[5] = len(shape)
        s[6] = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
        # the hash covers dims past MAX_DIMS, which the slots below cannot hold
        s[7] = zlib.crc32(np.asarray(shape, np.int64).tobytes())
        for i, d in enumerate(list(shape)[:MAX_DIMS]):
            s[8 + i] = d
    return s


def describe(s) -> str:
    """``all_reduce(float32[4], op=SUM) #3`` from a signature row."""
    op = OPS[s[1]] if 0 <= s[1] < len(OPS) else f"op{s[1]}"
    parts = []
    if s[4] != ANY:
        dt = DTYPES[s[4]] if s[4] < len(DTYPES) else "?"
        if s[5] == ANY:
            parts.append(f"{dt}[any shape]")
        else:
            dims = [int(d) for d in s[8:8 + min(int(s[5]), MAX_DIMS)]]
            more = ", …" if s[5] > MAX_DIMS else ""
            parts.append(f"{dt}{dims}"[:-1] + more + "]" if dims else f"{dt}[]")
    if s[2] != ANY:
        parts.append(f"op={ReduceOp.name_of(int(s[2]))}")
    if s[3] != ANY:
        parts.append(f"root={int(s[3])}")
    return f"{op}({', '.join(parts)}) #{int(s[0])}"


def mismatch(rows: np.ndarray, ranks) -> str | None:
    """None when every row agrees with row 0 (ANY matches anything in the shape
    fields), else a message naming the first pair of ranks that differ."""
    ref = rows[0]
    for i in range(1, rows.shape[0]):
        r = rows[i]
        same = (r[:5] == ref[:5]).all()
        if same and r[5] != ANY and ref[5] != ANY:
            same = (r[5:] == ref[5:]).all()
        if not same:
            return (f"rank {ranks[0]} called {describe(ref)} but rank {ranks[i]} called "
                    f"{describe(r)}")
    return None
