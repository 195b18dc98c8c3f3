"""Scalar event files in TensorBoard's format, written and read without TensorFlow.

An event file is a sequence of TFRecords: ``uint64 length``, ``uint32
masked_crc32c(length)``, ``data``, ``uint32 masked_crc32c(data)`` (little endian),
where each ``data`` is a serialized ``Event`` protobuf. The writer encodes the few
fields scalars need by hand:

- ``Event``: ``wall_time`` (1, double), ``step`` (2, varint), ``file_version`` (3,
  string; the first record, ``"brain.Event:2"``), ``summary`` (5, message);
- ``Summary``: ``value`` (1, repeated message);
- ``Summary.Value``: ``tag`` (1, string), ``simple_value`` (2, float).

CRC32C is the Castagnoli polynomial (reflected 0x82F63B78); the mask is
``((crc >> 15) | (crc << 17)) + 0xa282ead8`` modulo 2**32.
"""

from __future__ import annotations

import os
import socket
import struct
import time

__all__ = ["EventFileWriter", "read_events", "crc32c", "masked_crc32c"]

_POLY = 0x82F63B78
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data: bytes) -> int:
    """The CRC32C (Castagnoli) checksum of `data`."""
    crc = 0xFFFFFFFF
    t = _TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---------------------------------------------------------------- protobuf encoding
def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int64 two's complement, as protobuf encodes negative varints
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _bytes_field(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def encode_scalar_event(tag: str, value: float, step: int, wall_time: float) -> bytes:
    val = _bytes_field(1, tag.encode("utf-8")) + _key(2, 5) + struct.pack("<f", float(value))
    summary = _bytes_field(1, val)
    return (_key(1, 1) + struct.pack("<d", wall_time) + _key(2, 0) + _varint(int(step)) +
            _bytes_field(5, summary))


def encode_version_event(wall_time: float) -> bytes:
    return _key(1, 1) + struct.pack("<d", wall_time) + _bytes_field(3, b"brain.Event:2")


def _record(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data +
            struct.pack("<I", masked_crc32c(data)))


class EventFileWriter:
    """Append scalar summaries to a new event file in `log_dir`.

    >>> import tempfile, fw
    >>> d = tempfile.mkdtemp()
    >>> w = fw.hapi.tensorboard.EventFileWriter(d)
    >>> w.add_scalar("loss", 0.5, step=1); w.close()
    >>> [(e["tag"], e["value"]) for e in fw.hapi.tensorboard.read_events(w.path) if "tag" in e]
    [('loss', 0.5)]
    """

    def __init__(self, log_dir, filename_suffix=""):
        os.makedirs(log_dir, exist_ok=True)
        now = time.time()
        name = f"events.out.tfevents.{int(now)}.{socket.gethostname()}{filename_suffix}"
        self.path = os.path.join(log_dir, name)
        self._f = open(self.path, "ab")
        self._f.write(_record(encode_version_event(now)))
        self._f.flush()

    def add_scalar(self, tag, value, step, walltime=None):
        """Write one scalar (`value` a number or one-element tensor)."""
        if hasattr(value, "item"):
            value = value.item()
        self._f.write(_record(encode_scalar_event(str(tag), float(value), int(step),
                                                  time.time() if walltime is None
                                                  else float(walltime))))

    def flush(self):
        self._f.flush()

    def close(self):
        if not self._f.closed:
            self._f.flush()
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------- reading back
def _read_varint(buf, i):
    shift = n = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, i
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of a serialized message."""
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(buf, i)
        elif wire == 1:
            v = buf[i:i + 8]
            i += 8
        elif wire == 2:
            n, i = _read_varint(buf, i)
            v = buf[i:i + n]
            i += n
        elif wire == 5:
            v = buf[i:i + 4]
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield field, wire, v


def _decode_event(data):
    ev = {}
    for field, wire, v in _fields(data):
        if field == 1 and wire == 1:
            ev["wall_time"] = struct.unpack("<d", v)[0]
        elif field == 2 and wire == 0:
            ev["step"] = v - (1 << 64) if v >= 1 << 63 else v
        elif field == 3 and wire == 2:
            ev["file_version"] = bytes(v).decode("utf-8")
        elif field == 5 and wire == 2:
            for f2, w2, val in _fields(v):
                if f2 == 1 and w2 == 2:
                    for f3, w3, x in _fields(val):
                        if f3 == 1 and w3 == 2:
                            ev["tag"] = bytes(x).decode("utf-8")
                        elif f3 == 2 and w3 == 5:
                            ev["value"] = struct.unpack("<f", x)[0]
    return ev


def read_events(path):
    """The events of an event file as dicts (``wall_time``, ``step``, and
    ``file_version`` or ``tag``/``value``); raises ValueError on a bad checksum."""
    with open(path, "rb") as f:
        data = f.read()
    out, i = [], 0
    while i < len(data):
        if i + 12 > len(data):
            raise ValueError(f"{path}: truncated record header at byte {i}")
        header = data[i:i + 8]
        (n,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", data[i + 8:i + 12])
        if hcrc != masked_crc32c(header):
            raise ValueError(f"{path}: bad length checksum at byte {i}")
        body = data[i + 12:i + 12 + n]
        if len(body) != n or i + 16 + n > len(data):
            raise ValueError(f"{path}: truncated record at byte {i}")
        (dcrc,) = struct.unpack("<I", data[i + 12 + n:i + 16 + n])
        if dcrc != masked_crc32c(body):
            raise ValueError(f"{path}: bad data checksum at byte {i}")
        out.append(_decode_event(memoryview(body).tobytes()))
        i += 16 + n
    return out
