"""The protobuf wire format, read by hand: just enough to decode the small messages
of Paddle's files (a tensor's TensorDesc in ``.pdiparams``, the ProgramDesc of a
``.pdmodel``) without a protobuf dependency and without generated code.

A message is a sequence of fields ``key = (number << 3) | wire_type`` followed by
the value: wire type 0 a varint, 1 eight bytes, 2 a varint length then that many
bytes (strings, sub-messages, packed repeated scalars), 5 four bytes
(https://protobuf.dev/programming-guides/encoding/). Nothing in a message is
evaluated; a malformed one raises `WireError` (the callers turn it into a
``ModelFormatError`` naming the file).
"""

from __future__ import annotations

import struct

__all__ = ["WireError", "fields", "varint", "as_int64", "packed_varints", "message"]


class WireError(ValueError):
    """A byte string that is not a well-formed protobuf message."""


def varint(buf, pos: int) -> tuple:
    """(value, next position) of the varint at `pos`."""
    result = shift = 0
    n = len(buf)
    while True:
        if pos >= n:
            raise WireError("a varint runs past the end of the message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError("a varint is longer than 10 bytes")


def as_int64(v: int) -> int:
    """A varint read as a signed 64-bit value (negative ints are 10-byte varints)."""
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def fields(buf):
    """Yield ``(field number, wire type, value)`` of message `buf`: an int for wire
    types 0/1/5 and a memoryview slice for type 2."""
    buf = memoryview(buf)
    pos, n = 0, len(buf)
    while pos < n:
        key, pos = varint(buf, pos)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise WireError("field number 0")
        if wt == 0:
            v, pos = varint(buf, pos)
        elif wt == 1:
            if pos + 8 > n:
                raise WireError("a fixed64 field runs past the end of the message")
            v = struct.unpack_from("<q", buf, pos)[0]
            pos += 8
        elif wt == 5:
            if pos + 4 > n:
                raise WireError("a fixed32 field runs past the end of the message")
            v = struct.unpack_from("<i", buf, pos)[0]
            pos += 4
        elif wt == 2:
            ln, pos = varint(buf, pos)
            if pos + ln > n:
                raise WireError(f"a field of {ln} bytes runs past the end of the message")
            v = buf[pos:pos + ln]
            pos += ln
        else:
            raise WireError(f"unsupported wire type {wt} (field {num})")
        yield num, wt, v


def packed_varints(v) -> list:
    """The values of a repeated scalar field given packed (wire type 2)."""
    out, pos = [], 0
    while pos < len(v):
        x, pos = varint(v, pos)
        out.append(x)
    return out


def message(buf) -> dict:
    """``{field number: [values in order]}`` of message `buf`."""
    out: dict = {}
    for num, wt, v in fields(buf):
        out.setdefault(num, []).append((wt, v))
    return out


def repeated_ints(entries) -> list:
    """A repeated int field's values, whether each entry came packed or not."""
    out = []
    for wt, v in entries:
        if wt == 2:
            out.extend(packed_varints(v))
        else:
            out.append(v)
    return [as_int64(x) for x in out]


def text(v) -> str:
    try:
        return bytes(v).decode("utf-8")
    except UnicodeDecodeError as e:
        raise WireError(f"a string field is not UTF-8: {e}") from e


def f32(v: int) -> float:
    """A fixed32 field (read as int32) as the float32 it holds."""
    return struct.unpack("<f", struct.pack("<i", v))[0]
