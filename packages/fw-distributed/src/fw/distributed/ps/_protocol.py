"""The wire format of parameter-server requests and replies: one MPI message each.

A message is one contiguous byte buffer (so one ``MPI_Isend`` and one matched
receive carry it, whatever its size)::

    int64[8] header: MAGIC, op, request id, table id, number of ids,
                     number of float32 values, JSON length, 0
    JSON metadata (UTF-8, padded to 8 bytes; table configs, errors, options)
    int64[ids]       ids
    float32[values]  rows, gradients, deltas or dense values

No pickle: a peer's bytes are parsed as numbers and JSON only. `decode` checks
every length against the buffer so a short or foreign message is an error, not
a bad read.
"""
from __future__ import annotations

import json

import numpy as np

__all__ = ["Op", "Message", "encode", "decode", "ProtocolError"]

MAGIC = 0x46575053_00000001   # "FWPS", version 1
_HDR = 8


class ProtocolError(RuntimeError):
    """A message that is not a well-formed fw parameter-server message."""


class Op:
    """Request kinds (a reply carries its request's op, or ERROR)."""
    CREATE = 1        # meta: table config; make the table (or check it matches)
    PULL_SPARSE = 2   # ids -> rows; meta {"create": bool}
    PUSH_SPARSE = 3   # ids + gradients; meta {"scale"?}; sync mode: a step's share
    ADD_SPARSE = 4    # ids + deltas (geo)
    INIT_DENSE = 5    # values: the initial dense slice, kept only if none yet
    PUSH_DENSE = 6    # gradient slice -> the updated slice
    PULL_DENSE = 7    # -> the slice
    ADD_DENSE = 8     # delta slice (geo) -> the updated slice
    BARRIER = 9       # replied once every trainer sent one
    SAVE = 10         # meta {"dirname"}: write this server's shard
    STOP = 11         # a trainer is done
    ERROR = 99        # reply: meta {"error": message}

    NAMES = {}


Op.NAMES = {v: k for k, v in vars(Op).items() if isinstance(v, int)}


class Message:
    __slots__ = ("op", "req", "table", "meta", "ids", "vals")

    def __init__(self, op, req, table, meta, ids, vals):
        self.op, self.req, self.table = op, req, table
        self.meta, self.ids, self.vals = meta, ids, vals

    def __repr__(self):
        return (f"Message({Op.NAMES.get(self.op, self.op)}, req={self.req}, table={self.table}, "
                f"ids={None if self.ids is None else self.ids.size}, "
                f"vals={None if self.vals is None else self.vals.size})")


def encode(op: int, req: int, table: int = 0, meta: dict | None = None, ids=None,
           vals=None) -> np.ndarray:
    """The message as a uint8 buffer."""
    js = json.dumps(meta, separators=(",", ":")).encode() if meta else b""
    pad = (-len(js)) % 8
    ids = np.empty(0, np.int64) if ids is None else np.ascontiguousarray(ids, np.int64).ravel()
    vals = (np.empty(0, np.float32) if vals is None
            else np.ascontiguousarray(vals, np.float32).ravel())
    hdr = np.array([MAGIC, op, req, table, ids.size, vals.size, len(js), 0], np.int64)
    n = _HDR * 8 + len(js) + pad + ids.nbytes + vals.nbytes
    buf = np.empty(n, np.uint8)
    o = 0
    for part in (hdr.view(np.uint8), np.frombuffer(js + b"\0" * pad, np.uint8),
                 ids.view(np.uint8), vals.view(np.uint8)):
        buf[o:o + part.size] = part
        o += part.size
    return buf


def decode(buf: np.ndarray) -> Message:
    """Parse `buf` (uint8); the ids and values are views of it."""
    if buf.size < _HDR * 8:
        raise ProtocolError(f"message of {buf.size} bytes is shorter than the header")
    hdr = buf[:_HDR * 8].view(np.int64)
    if int(hdr[0]) != MAGIC:
        raise ProtocolError(f"bad magic {int(hdr[0]):#x} (not an fw parameter-server message, "
                            "or another version)")
    op, req, table, n_ids, n_vals, n_js = (int(x) for x in hdr[1:7])
    if min(n_ids, n_vals, n_js) < 0:
        raise ProtocolError("negative length in the header")
    o = _HDR * 8
    js_end = o + n_js
    ids_at = js_end + (-n_js) % 8
    vals_at = ids_at + 8 * n_ids
    end = vals_at + 4 * n_vals
    if end != buf.size:
        raise ProtocolError(f"message of {buf.size} bytes, header says {end}")
    meta = json.loads(bytes(buf[o:js_end]).decode()) if n_js else {}
    ids = buf[ids_at:vals_at].view(np.int64)
    vals = buf[vals_at:end].view(np.float32)
    return Message(op, req, table, meta, ids, vals)
