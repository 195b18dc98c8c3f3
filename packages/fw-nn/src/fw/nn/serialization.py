"""`fw.save` / `fw.load`: checkpoints as ONE safetensors file, never pickle.

What is stored: Tensors (and Parameters), NumPy arrays and scalars, Python
``int``/``float``/``bool``/``str``/``None`` and dicts (any scalar or tuple keys),
lists and tuples nesting them — layer and optimizer state dicts included.

File layout (the safetensors format: an 8-byte little-endian header length, a
JSON header, then the raw tensor bytes):

- each distinct tensor/array is one safetensors entry, keyed by its flattened
  path in the object (``"fc1.weight"``, ``"opt.0.moment1"``); the same tensor met
  twice is stored once;
- dtypes safetensors names are stored natively (``BF16`` included); complex128,
  which it does not name, is stored as ``F64`` with a trailing axis of 2;
- ``__metadata__`` holds ``fw.format`` (a version), ``fw.structure`` (the object
  with every tensor replaced by a reference to its entry, as JSON) and
  ``fw.checksum``: a SHA-256 over the structure and every entry's bytes, checked
  on load, so a corrupted or truncated file raises instead of loading wrong values.

Writes are atomic (`fw.core.atomic_io`): the file is written to a temporary file
in the same directory, flushed and fsync'ed, then renamed over `path`
(``os.replace``); a failure at any point leaves a previous file at `path` intact
(missing parent directories are created). Loading parses the header with
``json`` and copies bytes into arrays: no code from the file is ever executed; a
pickle (Paddle's or PyTorch's old format) or any malformed file raises
`CheckpointError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
from collections import OrderedDict

import ml_dtypes
import numpy as np

from fw.core.atomic_io import atomic_path
from fw.core.tensor import Tensor, to_tensor

__all__ = ["save", "load", "CheckpointError"]

FORMAT_VERSION = "1"
_MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit

# NumPy dtype -> safetensors dtype code (everything fw has except complex128)
_CODE = {np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "U8", np.dtype(np.int8): "I8",
         np.dtype(np.int16): "I16", np.dtype(np.int32): "I32", np.dtype(np.int64): "I64",
         np.dtype(np.float16): "F16", np.dtype(ml_dtypes.bfloat16): "BF16",
         np.dtype(np.float32): "F32", np.dtype(np.float64): "F64",
         np.dtype(np.complex64): "C64", np.dtype(np.uint16): "U16",
         np.dtype(np.uint32): "U32", np.dtype(np.uint64): "U64"}
_BY_CODE = {v: k for k, v in _CODE.items()}


class CheckpointError(ValueError):
    """A file that `fw.load` cannot read as an fw checkpoint."""


# ---------------------------------------------------------------- encoding the structure
class _Encoder:
    """Walks an object, replacing arrays by references and collecting the arrays."""

    def __init__(self):
        self.arrays: OrderedDict[str, np.ndarray] = OrderedDict()
        self.real_dtype: dict = {}
        self._by_id: dict = {}
        self._keepalive = []

    def _entry(self, path, arr, obj):
        key = self._by_id.get(id(obj))
        if key is not None:
            return key
        key = path or "_"
        base, n = key, 1
        while key in self.arrays:
            key = f"{base}#{n}"
            n += 1
        a = _contiguous(arr)
        if a.dtype == np.complex128:
            self.real_dtype[key] = "complex128"
            a = a.reshape(-1).view(np.float64).reshape(a.shape + (2,))
        elif a.dtype not in _CODE:
            raise TypeError(f"fw.save: cannot store an array of dtype {a.dtype} (at "
                            f"{path or 'the top level'})")
        self.arrays[key] = a
        self._by_id[id(obj)] = key
        self._keepalive.append(obj)
        return key

    def encode(self, obj, path=""):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"__float__": repr(obj)}
        if isinstance(obj, Tensor):
            from fw.nn.parameter import Parameter

            node = {"__tensor__": self._entry(path, obj.numpy(), obj),
                    "stop_gradient": bool(obj.stop_gradient)}
            n = obj.__dict__.get("_name")
            if n is not None:
                node["name"] = str(n)
            if isinstance(obj, Parameter):
                node["parameter"] = True
            return node
        if isinstance(obj, np.ndarray):
            return {"__ndarray__": self._entry(path, obj, obj)}
        if isinstance(obj, np.generic):
            return {"__npscalar__": self._entry(path, np.asarray(obj), obj)}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                items.append([self._key(k, path), self.encode(v, _join(path, k))])
            return {"__dict__": items, "ordered": isinstance(obj, OrderedDict)}
        if isinstance(obj, (list, tuple)):
            enc = [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]
            return {"__list__": enc} if isinstance(obj, list) else {"__tuple__": enc}
        kind = type(obj).__name__
        hint = " (save its state_dict() instead)" if hasattr(obj, "state_dict") else ""
        raise TypeError(f"fw.save: cannot store a {kind} at {path or 'the top level'}{hint}; "
                        f"checkpoints hold Tensors, NumPy arrays, numbers, strings, None and "
                        f"dicts/lists/tuples of them")

    def _key(self, k, path):
        if k is None or isinstance(k, (bool, int, str)):
            return k
        if isinstance(k, float):
            return self.encode(k)
        if isinstance(k, tuple):
            return {"__tuple__": [self._key(e, path) for e in k]}
        raise TypeError(f"fw.save: dict keys must be str, int, float, bool, None or tuples of "
                        f"them; got a {type(k).__name__} key at {path or 'the top level'}")


def _contiguous(a):
    # np.ascontiguousarray would turn a 0-d array into a 1-d one
    a = np.asarray(a)
    return a if a.flags.c_contiguous else a.copy()


def _join(path, k):
    k = str(k)
    return f"{path}.{k}" if path else k


class _Decoder:
    def __init__(self, arrays, return_numpy, fname):
        self.arrays = arrays
        self.return_numpy = return_numpy
        self.fname = fname
        self._made: dict = {}

    def _array(self, key):
        if not isinstance(key, str) or key not in self.arrays:
            raise CheckpointError(f"fw.load: {self.fname}: the structure refers to a missing "
                                  f"tensor {key!r}")
        return self.arrays[key]

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            raise CheckpointError(f"fw.load: {self.fname}: malformed structure")
        if not isinstance(node, dict):
            raise CheckpointError(f"fw.load: {self.fname}: malformed structure")
        if "__float__" in node:
            return float(node["__float__"])
        if "__tensor__" in node:
            key = node["__tensor__"]
            if key in self._made:
                return self._made[key]
            a = self._array(key)
            if self.return_numpy:
                out = a
            else:
                out = to_tensor(a, stop_gradient=bool(node.get("stop_gradient", True)))
                if "name" in node:
                    out.name = node["name"]
            self._made[key] = out
            return out
        if "__ndarray__" in node:
            return self._array(node["__ndarray__"])
        if "__npscalar__" in node:
            return self._array(node["__npscalar__"])[()]
        if "__dict__" in node:
            d = OrderedDict() if node.get("ordered") else {}
            for pair in node["__dict__"]:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise CheckpointError(f"fw.load: {self.fname}: malformed dict entry")
                d[self.key(pair[0])] = self.decode(pair[1])
            return d
        if "__list__" in node:
            return [self.decode(v) for v in node["__list__"]]
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in node["__tuple__"])
        raise CheckpointError(f"fw.load: {self.fname}: unknown structure node {sorted(node)}")

    def key(self, k):
        if isinstance(k, dict):
            if "__tuple__" in k:
                return tuple(self.key(e) for e in k["__tuple__"])
            if "__float__" in k:
                return float(k["__float__"])
            raise CheckpointError(f"fw.load: {self.fname}: malformed dict key")
        return k


# ---------------------------------------------------------------- checksum
def _digest(structure_json: str, arrays) -> str:
    h = hashlib.sha256()
    h.update(structure_json.encode("utf-8"))
    for k, a in arrays.items():
        h.update(k.encode("utf-8"))
        h.update(str(a.dtype).encode("ascii"))
        h.update(str(list(a.shape)).encode("ascii"))
        h.update(_contiguous(a).reshape(-1).view(np.uint8).data)
    return h.hexdigest()


# ---------------------------------------------------------------- save
def save(obj, path, protocol=4, **configs):
    """Save `obj` (a state dict, a Tensor, or nested dicts/lists/tuples of Tensors,
    arrays and Python scalars) to `path` as one safetensors file, atomically.

    Args:
        obj: what to save.
        path: the file name (any suffix, e.g. Paddle's ``.pdparams``); missing parent
            directories are created.
        protocol: accepted for Paddle compatibility (no pickle is involved).

    >>> import fw, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "m.pdparams")
    >>> fw.save(fw.nn.Linear(2, 3).state_dict(), p)
    >>> sorted(fw.load(p))
    ['bias', 'weight']
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path or path.endswith(("/", os.sep)):
        raise ValueError(f"fw.save: 'path' must be a file name, got {path!r}")
    enc = _Encoder()
    structure = json.dumps(enc.encode(obj), separators=(",", ":"), allow_nan=False)
    arrays = enc.arrays
    header: dict = {}
    off = 0
    for k, a in arrays.items():
        header[k] = {"dtype": _CODE[a.dtype], "shape": list(a.shape),
                     "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    meta = {"fw.format": FORMAT_VERSION, "fw.structure": structure,
            "fw.checksum": _digest(structure, arrays)}
    if enc.real_dtype:
        meta["fw.dtypes"] = json.dumps(enc.real_dtype)
    header["__metadata__"] = meta
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * (-len(hbytes) % 8)  # the data starts 8-byte aligned
    with atomic_path(path, make_parents=True) as tmp:
        _write(tmp, hbytes, arrays)


def _write(path, hbytes, arrays):
    """Write the file's bytes: header length, header, then each array's data."""
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hbytes)))
        f.write(hbytes)
        for a in arrays.values():
            if a.nbytes:
                f.write(a.reshape(-1).view(np.uint8).data)


# ---------------------------------------------------------------- load
def _looks_like_pickle(head: bytes) -> str | None:
    if head[:1] == b"\x80" and len(head) > 1 and 2 <= head[1] <= 5:
        return "a Python pickle"
    if head[:4] == b"PK\x03\x04":
        return "a zip archive (PyTorch's pickle-based format)"
    return None


def _read(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"fw.load: no such file: {path}") from None
    if len(data) < 8:
        kind = _looks_like_pickle(data)
        raise CheckpointError(f"fw.load: {path} is {kind or 'too short'} and not an fw "
                              f"checkpoint (a safetensors file written by fw.save)")
    (n,) = struct.unpack("<Q", data[:8])
    kind = _looks_like_pickle(data[:8])
    if kind is not None and (n > len(data) - 8 or n > _MAX_HEADER):
        raise CheckpointError(f"fw.load: {path} is {kind}; fw never unpickles (it could run "
                              f"code). Convert it to a safetensors checkpoint in the program "
                              f"that wrote it")
    if n > len(data) - 8 or n > _MAX_HEADER or n < 2:
        raise CheckpointError(f"fw.load: {path} is not an fw checkpoint: its header length "
                              f"{n} does not fit the file of {len(data)} bytes")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"fw.load: {path} is not an fw checkpoint: unreadable header "
                              f"({e})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"fw.load: {path}: the header is not a JSON object")
    return data, 8 + n, header


def _arrays_from(path, data, start, header):
    buf_len = len(data) - start
    meta = header.pop("__metadata__", None)
    spans = []
    arrays = OrderedDict()
    for k, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise CheckpointError(f"fw.load: {path}: malformed entry for {k!r}")
        dt = _BY_CODE.get(e["dtype"]) if isinstance(e["dtype"], str) else None
        shape, offs = e["shape"], e["data_offsets"]
        if dt is None:
            raise CheckpointError(f"fw.load: {path}: entry {k!r} has unsupported dtype "
                                  f"{e['dtype']!r}")
        if (not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape)
                or not isinstance(offs, list) or len(offs) != 2
                or not all(type(o) is int for o in offs)):
            raise CheckpointError(f"fw.load: {path}: malformed shape/offsets for {k!r}")
        b, end = offs
        if not 0 <= b <= end <= buf_len or end - b != math.prod(shape) * dt.itemsize:
            raise CheckpointError(f"fw.load: {path}: entry {k!r} ({e['dtype']}{shape}) has "
                                  f"data offsets {offs} inconsistent with the file")
        spans.append((b, end))
        arrays[k] = np.frombuffer(data, dtype=dt, count=math.prod(shape),
                                  offset=start + b).reshape(shape).copy()
    spans.sort()
    pos = 0
    for b, end in spans:
        if b != pos:
            raise CheckpointError(f"fw.load: {path}: tensor data overlaps or leaves gaps")
        pos = end
    if pos != buf_len:
        raise CheckpointError(f"fw.load: {path}: {buf_len - pos} trailing bytes after the "
                              f"tensor data (truncated or corrupted file)")
    return meta, arrays


def load(path, **configs):
    """Load what `save` wrote: Tensors come back as Tensors (with their
    stop_gradient and name) or, with ``return_numpy=True``, as NumPy arrays.

    Also reads plain safetensors files (e.g. exported weights): a flat dict of
    tensors. Never executes code from the file: pickles are refused.

    Raises:
        CheckpointError: not a checkpoint (pickle, random bytes, truncated, corrupted
            — the checksum did not match).
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    return_numpy = bool(configs.get("return_numpy", False))
    data, start, header = _read(path)
    meta, arrays = _arrays_from(path, data, start, header)
    if meta is not None and not isinstance(meta, dict):
        raise CheckpointError(f"fw.load: {path}: malformed __metadata__")
    ours = meta is not None and any(str(k).startswith("fw") for k in meta)
    if ours and not {"fw.format", "fw.structure", "fw.checksum"} <= set(meta):
        raise CheckpointError(f"fw.load: {path}: the fw metadata is incomplete (corrupted "
                              f"file)")
    if not ours:
        # a plain safetensors file: a flat dict of tensors
        return OrderedDict((k, a if return_numpy else to_tensor(a)) for k, a in arrays.items())
    if not all(isinstance(v, str) for v in meta.values()):
        raise CheckpointError(f"fw.load: {path}: malformed __metadata__")
    if meta.get("fw.format") != FORMAT_VERSION:
        raise CheckpointError(f"fw.load: {path} has checkpoint format "
                              f"{meta.get('fw.format')!r}; this fw reads {FORMAT_VERSION!r}")
    structure = meta["fw.structure"]
    if _digest(structure, arrays) != meta.get("fw.checksum"):
        raise CheckpointError(f"fw.load: {path} is corrupted: its checksum does not match its "
                              f"contents")
    try:
        real = json.loads(meta.get("fw.dtypes", "{}"))
        for k, name in real.items():
            if name != "complex128" or k not in arrays:
                raise CheckpointError(f"fw.load: {path}: bad dtype record {k!r}: {name!r}")
            a = arrays[k]
            if a.ndim == 0 or a.shape[-1] != 2:
                raise CheckpointError(f"fw.load: {path}: complex128 entry {k!r} has shape "
                                      f"{list(a.shape)}")
            arrays[k] = _contiguous(a).reshape(-1).view(np.complex128).reshape(a.shape[:-1])
        tree = json.loads(structure)
    except (json.JSONDecodeError, AttributeError, TypeError, ValueError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"fw.load: {path}: malformed structure ({e})") from None
    return _Decoder(arrays, return_numpy, path).decode(tree)

