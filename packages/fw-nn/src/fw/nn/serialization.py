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
``json`` and copies bytes into arrays: no code from the file is ever executed. A
Paddle ``.pdparams``/``.pdopt`` pickle is read by the restricted unpickler of
`fw.nn.safe_pickle` (arrays and plain containers only); any other pickle, a PyTorch
zip checkpoint (fw-hub's ``fw.hub.load_state_dict`` reads those) or any malformed file
raises `CheckpointError` naming the file.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import struct
from collections import OrderedDict

import ml_dtypes
import numpy as np

from fw.core.atomic_io import atomic_path
from fw.core.checksum import Hasher
from fw.core.errors import InvalidArgumentError
from fw.core.tensor import Tensor, to_tensor
from fw.nn import safe_pickle

__all__ = ["save", "load", "CheckpointError"]

FORMAT_VERSION = "1"
_MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit
# The header is {key: {"dtype", "shape": [...], "data_offsets": [...]}}: depth 3.
_MAX_HEADER_DEPTH = 8
# The structure nests 3 JSON levels per dict level ({"__dict__": [[k, v]]}): 200 is
# over 60 levels of user nesting, and far below the interpreter's recursion limit
# (``json.loads`` and the decoder recurse once per level).
_MAX_STRUCTURE_DEPTH = 200
_MAX_NDIM = 64  # NumPy's limit
_MAX_DIM = 2 ** 62  # a dim beside a zero one is not bounded by the file size

# NumPy dtype -> safetensors dtype code (everything fw has except complex128)
_CODE = {np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "U8", np.dtype(np.int8): "I8",
         np.dtype(np.int16): "I16", np.dtype(np.int32): "I32", np.dtype(np.int64): "I64",
         np.dtype(np.float16): "F16", np.dtype(ml_dtypes.bfloat16): "BF16",
         np.dtype(np.float32): "F32", np.dtype(np.float64): "F64",
         np.dtype(np.complex64): "C64", np.dtype(np.uint16): "U16",
         np.dtype(np.uint32): "U32", np.dtype(np.uint64): "U64"}
_BY_CODE = {v: k for k, v in _CODE.items()}


class CheckpointError(InvalidArgumentError):
    """A file that `fw.load` cannot read as an fw checkpoint (the message names the
    file and what is wrong). An `fw.core.errors.InvalidArgumentError`, so also a
    ValueError."""


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
    """Rebuilds the object from the structure, checking every node's shape (the
    structure is data from the file: a forged one must fail with CheckpointError)."""

    def __init__(self, arrays, return_numpy, fname):
        self.arrays = arrays
        self.return_numpy = return_numpy
        self.fname = fname
        self._made: dict = {}

    def _bad(self, what):
        return CheckpointError(f"fw.load: {self.fname}: malformed structure: {what}")

    def _array(self, key):
        if not isinstance(key, str) or key not in self.arrays:
            raise CheckpointError(f"fw.load: {self.fname}: the structure refers to a missing "
                                  f"tensor {key!r}")
        return self.arrays[key]

    def _items(self, node, tag):
        v = node[tag]
        if not isinstance(v, list):
            raise self._bad(f"{tag} holds a {type(v).__name__}, not a list")
        return v

    def _float(self, s):
        if not isinstance(s, str):
            raise self._bad(f"__float__ holds a {type(s).__name__}")
        try:
            return float(s)
        except ValueError:
            raise self._bad(f"__float__ {s[:40]!r} is not a number") from None

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict):
            raise self._bad(f"a {type(node).__name__} where a node belongs")
        if "__float__" in node:
            return self._float(node["__float__"])
        if "__tensor__" in node:
            key = node["__tensor__"]
            if not isinstance(key, str):
                raise self._bad(f"__tensor__ holds a {type(key).__name__}")
            if key in self._made:
                return self._made[key]
            a = self._array(key)
            sg, name = node.get("stop_gradient", True), node.get("name")
            if not isinstance(sg, bool) or not (name is None or isinstance(name, str)):
                raise self._bad(f"tensor {key!r} has a malformed stop_gradient or name")
            if self.return_numpy:
                out = a
            else:
                out = to_tensor(a, stop_gradient=sg)
                if name is not None:
                    out.name = name
            self._made[key] = out
            return out
        if "__ndarray__" in node:
            return self._array(node["__ndarray__"])
        if "__npscalar__" in node:
            a = self._array(node["__npscalar__"])
            if a.ndim:
                raise self._bad(f"the scalar {node['__npscalar__']!r} has shape {list(a.shape)}")
            return a[()]
        if "__dict__" in node:
            d = OrderedDict() if node.get("ordered") is True else {}
            for pair in self._items(node, "__dict__"):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise self._bad("a dict entry is not a [key, value] pair")
                d[self.key(pair[0])] = self.decode(pair[1])
            return d
        if "__list__" in node:
            return [self.decode(v) for v in self._items(node, "__list__")]
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in self._items(node, "__tuple__"))
        raise self._bad(f"unknown node {sorted(node)[:8]}")

    def key(self, k):
        if k is None or isinstance(k, (bool, int, float, str)):
            return k
        if isinstance(k, dict):
            if "__tuple__" in k:
                return tuple(self.key(e) for e in self._items(k, "__tuple__"))
            if "__float__" in k:
                return self._float(k["__float__"])
        raise self._bad(f"a dict key is a {type(k).__name__}")


# ---------------------------------------------------------------- checksum
def _digest(structure_json: str, arrays, dtypes_json: str | None = None) -> str:
    # fw-core's one content checksum (fw.core.checksum), as model files use it
    h = Hasher().update_text(structure_json)
    if dtypes_json is not None:
        # the complex128 record decides what an entry's bytes mean, so it is covered
        # too (dropping it would load complex128 values as float64 pairs)
        h.update_text("\0fw.dtypes\0" + dtypes_json)
    for k, a in arrays.items():
        h.update_array(k, a)
    return h.hexdigest()


# ---------------------------------------------------------------- save
def save(obj, path, protocol=4, **configs):
    """Save `obj` (a state dict, a Tensor, or nested dicts/lists/tuples of Tensors,
    arrays and Python scalars) to `path` as one safetensors file, atomically.

    The file is written to a temporary name beside `path` and renamed, so a crash
    never leaves a half-written checkpoint. Nothing is pickled: `fw.load` rebuilds
    the same nesting without running code from the file.

    Args:
        obj (object): What to save: a Tensor, a NumPy array, a Python scalar or string,
            or dicts / lists / tuples nesting them (``Layer.state_dict()``,
            ``Optimizer.state_dict()``).
        path (str|os.PathLike): The file name (any suffix, e.g. Paddle's ``.pdparams``);
            missing parent directories are created.
        protocol (int, optional): Accepted for Paddle compatibility; no pickle is
            involved. Default: 4.
        **configs: Paddle's extra options; accepted and unused.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> layer = fw.nn.Linear(2, 3)
        >>> fw.save(layer.state_dict(), "ckpt/linear.pdparams")
        >>> state = fw.load("ckpt/linear.pdparams")
        >>> sorted(state)
        ['bias', 'weight']
        >>> bool((state["weight"] == layer.weight).all())
        True
        >>> fw.save({"step": 7, "lr": [0.1, 0.01]}, "meta.pdopt")
        >>> fw.load("meta.pdopt")
        {'step': 7, 'lr': [0.1, 0.01]}
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path or path.endswith(("/", os.sep)):
        raise ValueError(f"fw.save: 'path' must be a file name, got {path!r}")
    enc = _Encoder()
    try:
        structure = json.dumps(enc.encode(obj), separators=(",", ":"), allow_nan=False)
    except RecursionError:
        structure = None
    if structure is None or _json_depth(structure.encode("utf-8")) > _MAX_STRUCTURE_DEPTH:
        # fw.load refuses deeper structures (a forged file must not exhaust the stack)
        raise InvalidArgumentError(f"fw.save: the object nests too deeply to be a checkpoint "
                                   f"(at most {_MAX_STRUCTURE_DEPTH} JSON levels: 3 per dict, "
                                   f"2 per list or tuple); {path} was not written")
    arrays = enc.arrays
    header: dict = {}
    off = 0
    for k, a in arrays.items():
        header[k] = {"dtype": _CODE[a.dtype], "shape": list(a.shape),
                     "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    dtypes = json.dumps(enc.real_dtype) if enc.real_dtype else None
    meta = {"fw.format": FORMAT_VERSION, "fw.structure": structure,
            "fw.checksum": _digest(structure, arrays, dtypes)}
    if dtypes is not None:
        meta["fw.dtypes"] = dtypes
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
        return ("a zip archive (PyTorch's pickle-based format: fw-hub's "
                "fw.hub.load_state_dict reads it without running code)")
    return None


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _json_depth(raw: bytes) -> int:
    """How deeply `raw` (JSON) nests arrays and objects, found without recursion
    (``json.loads`` recurses, and a forged file could nest past the stack)."""
    b = np.frombuffer(_STRING.sub(b"", raw), np.uint8)
    step = ((b == 0x5B).astype(np.int32) + (b == 0x7B)) - (b == 0x5D) - (b == 0x7D)
    return int(np.cumsum(step).max(initial=0))


def _parse_json(path, raw: bytes, what: str, max_depth: int):
    depth = _json_depth(raw)
    if depth > max_depth:
        raise CheckpointError(f"fw.load: {path}: the {what} nests {depth} levels deep (at "
                              f"most {max_depth}: not a file fw.save writes)")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise CheckpointError(f"fw.load: {path} is not an fw checkpoint: unreadable {what} "
                              f"({e})") from None


def _open_regular(path):
    """Open `path` for reading if it is a regular file. O_NONBLOCK: opening a FIFO
    must not wait for a writer (it is refused right after); a device such as
    /dev/zero would never end."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"fw.load: no such file: {path}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO"
                if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "not a regular file")
        raise CheckpointError(f"fw.load: {path} is {kind}; a checkpoint is a regular file "
                              f"written by fw.save")
    return os.fdopen(fd, "rb"), st.st_size


def _read_exact(path, f, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise CheckpointError(f"fw.load: {path} was truncated while being read (expected "
                              f"{n} more bytes, got {len(data)})")
    return data


def _read(path):
    """(file object, file size, data start, header): the 8-byte length and the
    header, each read only as far as the file's size allows."""
    f, size = _open_regular(path)
    try:
        head = _read_exact(path, f, min(size, 8))
        if size < 8:
            kind = _looks_like_pickle(head)
            raise CheckpointError(f"fw.load: {path} is {kind or 'too short'} and not an fw "
                                  f"checkpoint (a safetensors file written by fw.save)")
        (n,) = struct.unpack("<Q", head)
        kind = _looks_like_pickle(head)
        if kind is not None and (n > size - 8 or n > _MAX_HEADER):
            raise CheckpointError(f"fw.load: {path} is {kind}; fw never unpickles (it could "
                                  f"run code). Convert it to a safetensors checkpoint in the "
                                  f"program that wrote it")
        if n > size - 8 or n > _MAX_HEADER or n < 2:
            raise CheckpointError(f"fw.load: {path} is not an fw checkpoint: its header length "
                                  f"{n} does not fit the file of {size} bytes")
        header = _parse_json(path, _read_exact(path, f, n), "header", _MAX_HEADER_DEPTH)
        if not isinstance(header, dict):
            raise CheckpointError(f"fw.load: {path}: the header is not a JSON object")
    except BaseException:
        f.close()
        raise
    return f, size, 8 + n, header


def _entries(path, header, buf_len):
    """{key: (dtype, shape, begin, end)} checked against the data's length: every
    size comes from the header and must account for the file exactly."""
    out = OrderedDict()
    for k, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise CheckpointError(f"fw.load: {path}: malformed entry for {k!r}")
        dt = _BY_CODE.get(e["dtype"]) if isinstance(e["dtype"], str) else None
        shape, offs = e["shape"], e["data_offsets"]
        if dt is None:
            raise CheckpointError(f"fw.load: {path}: entry {k!r} has unsupported dtype "
                                  f"{str(e['dtype'])[:40]!r}")
        if (not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape)
                or not isinstance(offs, list) or len(offs) != 2
                or not all(type(o) is int for o in offs)):
            raise CheckpointError(f"fw.load: {path}: malformed shape/offsets for {k!r}")
        if len(shape) > _MAX_NDIM or any(s > _MAX_DIM for s in shape):
            raise CheckpointError(f"fw.load: {path}: entry {k!r} has shape {shape[:8]}... "
                                  f"({len(shape)} dims; fw tensors have at most {_MAX_NDIM} "
                                  f"dims of at most {_MAX_DIM})")
        b, end = offs
        if not 0 <= b <= end <= buf_len or end - b != math.prod(shape) * dt.itemsize:
            raise CheckpointError(f"fw.load: {path}: entry {k!r} ({e['dtype']}{shape}) has "
                                  f"data offsets {offs} inconsistent with the file")
        out[k] = (dt, shape, b, end)
    pos = 0
    for b, end in sorted((b, end) for _, _, b, end in out.values()):
        if b != pos:
            raise CheckpointError(f"fw.load: {path}: tensor data overlaps or leaves gaps")
        pos = end
    if pos != buf_len:
        raise CheckpointError(f"fw.load: {path}: {buf_len - pos} trailing bytes after the "
                              f"tensor data (truncated or corrupted file)")
    return out


def _arrays_from(path, f, size, start, header):
    meta = header.pop("__metadata__", None)
    entries = _entries(path, header, size - start)
    data = _read_exact(path, f, size - start)  # == what the entries account for
    arrays = OrderedDict()
    for k, (dt, shape, b, end) in entries.items():
        arrays[k] = np.frombuffer(data, dtype=dt, count=(end - b) // dt.itemsize,
                                  offset=b).reshape(shape).copy()
    return meta, arrays


def _check_model_file(path, meta):
    if isinstance(meta, dict) and meta.get("format") == "fw.model":
        raise CheckpointError(f"fw.load: {path} is an fw model file (a program and its "
                              f"weights, written by fw.jit.save): load it with fw.jit.load "
                              f"(or fw.inference), not fw.load")


def load(path, **configs):
    """Load what `save` wrote: Tensors come back as Tensors (with their
    stop_gradient and name) or, with ``return_numpy=True``, as NumPy arrays.

    Also reads plain safetensors files (e.g. exported weights): a flat dict of
    tensors; and Paddle's ``.pdparams`` / ``.pdopt`` pickles (name -> array dicts written
    by ``paddle.save``) through the restricted unpickler of `fw.nn.safe_pickle`: only
    NumPy arrays and plain containers are rebuilt, any other global is refused (named)
    and nothing from the file is executed; ``keep_name_table=True`` keeps Paddle's
    ``StructuredToParameterName@@`` entry. Other pickles are refused. Reads are
    bounded by the file's size (every size in the header is checked against it
    first) and only regular files are opened (a FIFO or a device is refused).

    Args:
        path (str|os.PathLike): The file to read.
        **configs: ``return_numpy`` (bool, default False): give NumPy arrays instead of
            Tensors; ``keep_name_table`` (bool, default False): keep Paddle's structured
            name table when reading a Paddle pickle. Other Paddle options are ignored.

    Returns:
        object: the saved object, with the nesting it was saved with.

    Raises:
        CheckpointError: not a checkpoint (an unsafe or non-Paddle pickle, random bytes,
            truncated, corrupted — the checksum did not match —, nested too deeply, a
            model file, not a regular file); the message names the file and what is
            wrong.
        OSError: the file cannot be read (FileNotFoundError, PermissionError, ...).

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> fw.save({"x": x, "epoch": 3}, "state.pdparams")
        >>> state = fw.load("state.pdparams")
        >>> state["x"].tolist(), state["epoch"]
        ([[1.0, 2.0], [3.0, 4.0]], 3)
        >>> arrays = fw.load("state.pdparams", return_numpy=True)
        >>> type(arrays["x"]).__name__, arrays["x"].dtype
        ('ndarray', dtype('float32'))
        >>> with open("junk.pdparams", "wb") as f:
        ...     _ = f.write(b"not a checkpoint")
        >>> try:
        ...     fw.load("junk.pdparams")
        ... except fw.nn.serialization.CheckpointError as e:
        ...     print("refused")
        refused
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    return_numpy = bool(configs.get("return_numpy", False))
    try:
        return _load(path, return_numpy, bool(configs.get("keep_name_table", False)))
    except (CheckpointError, OSError):
        raise
    except (RecursionError, MemoryError, ValueError, TypeError, KeyError, IndexError,
            OverflowError, AttributeError) as e:
        # a backstop: the checks above should name the problem; whatever slips past
        # them is still a malformed file, not a bug to show as a bare exception
        raise CheckpointError(f"fw.load: {path}: malformed checkpoint ({type(e).__name__}: "
                              f"{str(e)[:200]})") from e


_NAME_TABLE = "StructuredToParameterName@@"
_BIG_PARAMS = "UnpackBigParamInfor@@"  # sic: Paddle's key


class _RefusedPickle(CheckpointError, safe_pickle.UnsafePickleError):
    """fw.load's error for a pickle the restricted unpickler refused."""


def _is_pickle_file(path) -> bool:
    """Whether the file starts like a pickle and not like a safetensors file. Both can
    begin with the bytes 0x80 0x02..0x05: a safetensors header of 640 bytes has the
    length 0x0280 (little-endian 80 02 ...), so a file whose 8-byte length fits its
    size and is followed by "{" is safetensors, never a pickle."""
    f, size = _open_regular(path)
    with f:
        head = f.read(9)
    if _looks_like_pickle(head[:2]) != "a Python pickle":
        return False
    if len(head) == 9 and head[8:9] == b"{":
        (n,) = struct.unpack("<Q", head[:8])
        if 2 <= n <= size - 8:
            return False
    return True


def _paddle_tensors(obj, return_numpy):
    # paddle.save stores a Tensor met outside a state dict as (name, ndarray); paddle.load
    # turns such pairs back into tensors, and so does fw
    if isinstance(obj, np.ndarray):
        return obj if return_numpy else to_tensor(obj)
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str) \
            and isinstance(obj[1], np.ndarray):
        return obj[1] if return_numpy else to_tensor(obj[1])
    if isinstance(obj, dict):
        return type(obj)((k, _paddle_tensors(v, return_numpy)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_paddle_tensors(v, return_numpy) for v in obj)
    return obj


def _load_paddle_pickle(path, return_numpy, keep_name_table):
    """A Paddle ``.pdparams``/``.pdopt`` pickle, read by the restricted unpickler of
    `fw.nn.safe_pickle` (no code from the file runs; a global other than NumPy's array
    constructors and plain containers is refused, named)."""
    f, _ = _open_regular(path)
    with f:
        try:
            obj = safe_pickle.load(f, what=f"fw.load: {path}")
        except safe_pickle.UnsafePickleError as e:
            raise _RefusedPickle(str(e)) from None
    if not isinstance(obj, dict) or not all(isinstance(k, str) for k in obj):
        raise CheckpointError(f"fw.load: {path} is a pickle of a {type(obj).__name__}, not a "
                              f"Paddle state dict (name -> array); fw reads only those")
    obj = OrderedDict(obj)
    big = obj.pop(_BIG_PARAMS, None)
    if big is not None:  # paddle.save(protocol<4) splits arrays over 1 GiB into slices
        if not isinstance(big, dict):
            raise CheckpointError(f"fw.load: {path}: malformed {_BIG_PARAMS} record")
        for key, info in big.items():
            try:
                parts = [obj.pop(p) for p in info["slices"]]
                obj[key] = np.concatenate(parts).reshape(info["OriginShape"])
            except (KeyError, TypeError, ValueError) as e:
                raise CheckpointError(f"fw.load: {path}: the slices of {key!r} do not fit "
                                      f"together ({type(e).__name__}: {e})") from None
    if not keep_name_table:
        obj.pop(_NAME_TABLE, None)
    return _paddle_tensors(obj, return_numpy)


def _load(path, return_numpy, keep_name_table=False):
    if _is_pickle_file(path):
        return _load_paddle_pickle(path, return_numpy, keep_name_table)
    f, size, start, header = _read(path)
    with f:
        _check_model_file(path, header.get("__metadata__"))
        meta, arrays = _arrays_from(path, f, size, start, header)
    if meta is not None and not isinstance(meta, dict):
        raise CheckpointError(f"fw.load: {path}: malformed __metadata__")
    ours = meta is not None and any(str(k).startswith("fw.") for k in meta)
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
                              f"{meta.get('fw.format')[:40]!r}; this fw reads "
                              f"{FORMAT_VERSION!r}")
    structure = meta["fw.structure"]
    checksum = meta.get("fw.checksum")
    if _digest(structure, arrays, meta.get("fw.dtypes")) != checksum and not (
            # written before the checksum covered the complex128 record
            "fw.dtypes" in meta and _digest(structure, arrays) == checksum):
        raise CheckpointError(f"fw.load: {path} is corrupted: its checksum does not match its "
                              f"contents")
    real = _parse_json(path, meta.get("fw.dtypes", "{}").encode("utf-8"), "dtype record", 2)
    if not isinstance(real, dict):
        raise CheckpointError(f"fw.load: {path}: malformed dtype record")
    for k, name in real.items():
        if name != "complex128" or k not in arrays:
            raise CheckpointError(f"fw.load: {path}: bad dtype record {k!r}: {name!r}")
        a = arrays[k]
        if a.dtype != np.float64 or a.ndim == 0 or a.shape[-1] != 2:
            raise CheckpointError(f"fw.load: {path}: complex128 entry {k!r} is {a.dtype}"
                                  f"{list(a.shape)}, not float64 pairs")
        arrays[k] = _contiguous(a).reshape(-1).view(np.complex128).reshape(a.shape[:-1])
    tree = _parse_json(path, structure.encode("utf-8"), "structure", _MAX_STRUCTURE_DEPTH)
    return _Decoder(arrays, return_numpy, path).decode(tree)
