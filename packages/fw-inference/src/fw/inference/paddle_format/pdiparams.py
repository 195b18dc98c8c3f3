"""Paddle's ``.pdiparams``: the weights ``paddle.jit.save`` writes, read as data.

The file is the parameters' serialized tensors one after another, with no names
and no index; the program file says which parameters there are, and they are
stored in the order of their names sorted (checked on files written by Paddle
3.3.1 for both program formats, see tests/fixtures/paddle/gen_fixtures.py). Each
tensor, as observed in those files (all little-endian):

    uint32  version (0)
    uint64  number of LoD levels, then per level: uint64 byte size + that many
            bytes of size_t offsets (0 levels for parameters)
    uint32  tensor version (0)
    int32   size of the TensorDesc message, then the message (protobuf:
            field 1 the data type enum, field 2 the dims, see wire.py)
    raw     the elements, C order, numel * itemsize bytes

Nothing is unpickled or evaluated: the reader checks every size against the file
and against the config's `LoadLimits` before reading it.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from fw.inference.paddle_format import wire

__all__ = ["DTYPES", "read_pdiparams"]

# Paddle's VarType.Type values for tensor element types (Paddle's public
# framework.proto enum; 0..6 and 20..24 are the ones a saved tensor can have)
DTYPES = {0: np.dtype(np.bool_), 1: np.dtype(np.int16), 2: np.dtype(np.int32),
          3: np.dtype(np.int64), 4: np.dtype(np.float16), 5: np.dtype(np.float32),
          6: np.dtype(np.float64), 20: np.dtype(np.uint8), 21: np.dtype(np.int8),
          23: np.dtype(np.complex64), 24: np.dtype(np.complex128)}
BF16 = 22  # stored as uint16 bits; fw's bfloat16 dtype reads them


def _dtype(code: int):
    if code in DTYPES:
        return DTYPES[code]
    if code == BF16:
        from fw.core import dtypes

        return np.dtype(dtypes.bfloat16.np)
    return None


def read_pdiparams(path, names, limits, fail, over) -> dict:
    """``{name: ndarray}`` for `names` (stored in sorted order) from `path`.

    Args:
        path: the ``.pdiparams`` file.
        names: the program's parameter names.
        limits: a `LoadLimits` (``max_tensors``, ``max_value_bytes``).
        fail(msg) / over(what, n, limit, name): build the ModelFormatError /
            ModelLimitError to raise (they name the file).
    """
    order = sorted(names)
    if len(order) > limits.max_tensors:
        raise over("the number of tensors", len(order), limits.max_tensors, "max_tensors")
    size = os.path.getsize(path)
    out = {}
    with open(path, "rb") as f:
        buf = memoryview(f.read())  # slices below are views: one copy per tensor, its own
    pos = 0

    def take(n, what):
        nonlocal pos
        if n < 0 or pos + n > size:
            raise fail(f"truncated: {what} of tensor {name!r} needs {n} bytes at offset {pos}, "
                       f"the file has {size} bytes")
        b = buf[pos:pos + n]
        pos += n
        return b

    for name in order:
        (version,) = struct.unpack("<I", take(4, "the version"))
        if version != 0:
            raise fail(f"tensor {name!r} at offset {pos - 4}: version {version}, expected 0 "
                       f"(not a .pdiparams file, or the parameters do not match the program)")
        (levels,) = struct.unpack("<Q", take(8, "the LoD level count"))
        if levels > 64:
            raise fail(f"tensor {name!r}: {levels} LoD levels; the file is damaged")
        for _ in range(levels):
            (n,) = struct.unpack("<Q", take(8, "a LoD level size"))
            take(n, "a LoD level")
        struct.unpack("<I", take(4, "the tensor version"))
        (n,) = struct.unpack("<i", take(4, "the TensorDesc size"))
        if n < 0 or n > 4096:
            raise fail(f"tensor {name!r}: a TensorDesc of {n} bytes; the file is damaged")
        try:
            desc = wire.message(take(n, "the TensorDesc"))
            code = desc.get(1, [(0, -1)])[0][1]
            dims = wire.repeated_ints(desc.get(2, []))
        except wire.WireError as e:
            raise fail(f"tensor {name!r}: its TensorDesc is malformed: {e}") from e
        dt = _dtype(code)
        if dt is None:
            raise fail(f"tensor {name!r}: unknown data type enum {code} (known: "
                       f"{sorted([*DTYPES, BF16])})")
        if any(d < 0 for d in dims):
            raise fail(f"tensor {name!r}: negative dims {dims}")
        numel = int(np.prod(dims, dtype=np.int64)) if dims else 1
        nbytes = numel * dt.itemsize
        if nbytes > limits.max_value_bytes:
            raise over(f"the size of tensor {name!r} in bytes", nbytes, limits.max_value_bytes,
                       "max_value_bytes")
        raw = take(nbytes, "the data")
        out[name] = np.frombuffer(raw, dtype=dt).reshape(dims).copy()
    if pos != size:
        raise fail(f"{size - pos} bytes follow the last of the {len(order)} tensors the program "
                   f"names; the params file does not belong to this program")
    return out
