"""Sizes of an fw model file (fw.core.ir.serialize's layout: one safetensors file, an
8-byte header length, a JSON header holding the program text and the tensor table,
then the raw tensor bytes)."""

from __future__ import annotations

import os
import struct

__all__ = ["model_file_sizes"]


def model_file_sizes(path) -> dict:
    """``{"total": bytes, "weights": bytes of tensor data, "header": bytes of the header
    (program text, tensor table, checksums)}`` of a model file written by fw.jit.save.
    The "weights" part is what Paddle keeps in its separate ``.pdiparams`` file."""
    total = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read(8)
    if len(raw) != 8:
        raise ValueError(f"model_file_sizes: {os.fspath(path)!r} is not an fw model file "
                         f"({total} bytes)")
    (n,) = struct.unpack("<Q", raw)
    if n > total - 8:
        raise ValueError(f"model_file_sizes: {os.fspath(path)!r} is not an fw model file "
                         f"(header length {n} > file size {total})")
    return {"total": total, "weights": total - 8 - n, "header": 8 + n}
