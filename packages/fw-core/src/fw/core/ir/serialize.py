"""The model file: one safetensors file holding a program and its weights.

Layout (safetensors: an 8-byte little-endian header length, a JSON header, then
the raw tensor bytes)::

    header "__metadata__" (all values are strings):
        "format":     "fw.model"
        "version":    "2"                      (the layout version; see VERSION)
        "fw_version": fw.core.__version__ of the writer
        "program":    the program's text form (fw.core.ir.printer)
        "tensors":    JSON {tensor name: {"label": ..., "role": "param"|"const",
                                           "dtype": fw dtype name, "shape": [...],
                                           "encoding": "native"|"real_pairs"}}
        "checksum":   JSON {"algorithm": "sha256", "program": digest of the text,
                            "table": digest of the "tensors" string,
                            "tensors": {tensor name: digest of its name, dtype,
                                        shape and stored bytes}}   (fw.core.checksum)
    tensors: one per block-0 parameter/constant, named by its label (a label
        safetensors reserves, ``__metadata__``, is stored as ``__fw_tensor_N``).

Every fw dtype is stored natively (BOOL, U8, I8, I16, I32, I64, F16, BF16, F32,
F64, C64) except complex128, which safetensors does not have: it is stored as
F64 with a trailing dimension of 2 (real, imaginary) — encoding ``real_pairs``
— and read back bit-exactly.

Loading reads data only: the header is JSON, the program is parsed (never
evaluated), then verified, and each tensor is checked against the program's
type and the table. Nothing is unpickled or executed. Any malformed file raises
`ModelFormatError` naming the file and the problem. In order:

- bounds first (`LoadLimits`; a file beyond one raises `ModelLimitError`): the
  header's size, the number of tensors, the number of operations and the
  nesting depth of blocks (counted while parsing, so a hostile text stops
  early), and the bytes of any value whose type is static; the tensor data the
  header declares must tile the rest of the file exactly (a truncated file is
  named as such), so nothing larger than the file is ever allocated for it;
- integrity (version 2): the program text, the tensor table and every tensor's
  bytes are checked against their checksums; the error names the file and what
  does not match ("the program", "the tensor table" or the tensor). Version 1
  files (no checksum) still load, with an `UnverifiedModelWarning`;
- meaning: the program is verified with ``strict_types``: a result type the
  file records must be what the op's ``infer`` gives from the operand types (or
  -1), so a lying type is reported here, naming the file, the op and both
  types, not later by a pass that re-infers it;
- purity: ``load(path, for_inference=True)`` refuses a program with state
  updates (``update`` lines: it would rewrite its weights on every run), naming
  the updated labels; ``strip_updates=True`` removes them instead (dead code
  removed, a warning logged on ``fw.core.ir``).

Writes are atomic (`fw.core.atomic_io`): the file is written under a temporary
name in the target directory, flushed to disk (fsync), then renamed over the
target (`os.replace`), so a crash or an error mid-write leaves the previous file
as it was.

`load` returns ``(program, params)``: ``params`` maps labels to Tensors, and
``program.captured`` is that same dict, so the program runs as loaded
(``fw.core.ir.run(program, x)``) and ``params`` is there to inspect or update.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import struct
import warnings

import numpy as np

from fw.core import checksum as _ck
from fw.core import dtypes as _dt
from fw.core.atomic_io import atomic_path
from fw.core.errors import FwError, InvalidArgumentError
from fw.core.ir.types import DYN, TensorType

__all__ = ["save", "load", "ModelFormatError", "ModelLimitError", "UnverifiedModelWarning",
           "LoadLimits", "DEFAULT_LIMITS", "FORMAT", "VERSION"]

FORMAT = "fw.model"
VERSION = "2"
_READS = ("1", "2")  # versions this fw reads (1: no checksum)
_RESERVED = "__metadata__"
_ENCODINGS = ("native", "real_pairs")
_log = logging.getLogger("fw.core.ir")
_MAX_BLOCK_DEPTH = 64

# safetensors dtype code -> NumPy dtype (the codes fw writes)
_CODES = {"BOOL": _dt.bool_.np, "U8": _dt.uint8.np, "I8": _dt.int8.np, "I16": _dt.int16.np,
          "I32": _dt.int32.np, "I64": _dt.int64.np, "F16": _dt.float16.np,
          "BF16": _dt.bfloat16.np, "F32": _dt.float32.np, "F64": _dt.float64.np,
          "C64": _dt.complex64.np}
_CODES = {k: np.dtype(v) for k, v in _CODES.items()}


class ModelFormatError(InvalidArgumentError):
    """A model file that fw cannot read (malformed, truncated, damaged — its
    checksum does not match —, another format or version, a program/weights that
    do not match, or a program that may not be loaded as asked)."""


class ModelLimitError(ModelFormatError):
    """A model file beyond one of the `LoadLimits` (``limit`` names it)."""

    def __init__(self, message: str, limit: str):
        super().__init__(message)
        self.limit = limit


class UnverifiedModelWarning(UserWarning):
    """A model file of format version 1: it has no checksum, so damage to it cannot
    be detected. Saving it again writes the current version."""


@dataclasses.dataclass(frozen=True)
class LoadLimits:
    """Bounds a model file must stay within to be loaded (`load`'s ``limits``;
    ``fw.inference.Config.set_model_limits``). The defaults admit any model fw
    itself writes for a realistic network; raise them for a huge one.

    Attributes:
        max_ops: operations in the program, nested blocks included.
        max_block_depth: nesting of blocks (block 0 is depth 0; the blocks of a
            ``cond``/``while`` in it are at depth 1); at most 64, the deepest the
            executor compiles (Python's own nesting limit comes soon after).
        max_tensors: tensors in the file.
        max_header_bytes: the JSON header (the program text and the tables).
        max_value_bytes: bytes of one value whose size the program states: the
            product of its static dims (a -1 counted as 1) times the item size, for
            every op result (a ``full`` of 10^12 elements is refused at load, not
            at run time).

    >>> LoadLimits().replace(max_ops=5).max_ops
    5
    """

    max_ops: int = 1_000_000
    max_block_depth: int = 32
    max_tensors: int = 100_000
    max_header_bytes: int = 100 << 20
    max_value_bytes: int = 8 << 30

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if type(v) is not int or v < 1:
                raise InvalidArgumentError(f"LoadLimits.{f.name} must be a positive int, got "
                                           f"{v!r}")
        if self.max_block_depth > _MAX_BLOCK_DEPTH:
            raise InvalidArgumentError(f"LoadLimits.max_block_depth is at most "
                                       f"{_MAX_BLOCK_DEPTH} (blocks nested deeper cannot be "
                                       f"compiled), got {self.max_block_depth}")

    def replace(self, **changes) -> LoadLimits:
        """A copy with `changes` (unknown names raise; None keeps a value)."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise InvalidArgumentError(f"LoadLimits has no {unknown}; its limits are "
                                       f"{sorted(names)}")
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


DEFAULT_LIMITS = LoadLimits()


# ---------------------------------------------------------------- helpers
def _host(x) -> np.ndarray:
    from fw.core import place as _pl
    from fw.core.tensor import Tensor

    a = x._data if isinstance(x, Tensor) else x
    if not isinstance(a, np.ndarray):
        if isinstance(a, np.generic):
            a = np.asarray(a)
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            a = _pl.backend_of(a).to_numpy(a)
        else:
            raise InvalidArgumentError(f"a parameter value must be a Tensor or an array, got "
                                       f"{type(x).__name__}")
    return a


def _encode(a: np.ndarray, dtype):
    """(array safetensors can store, encoding)."""
    if dtype is _dt.complex128:  # copies of the parts: bit-exact, NaN payloads included
        return np.stack([a.real, a.imag], axis=-1), "real_pairs"
    return np.asarray(a, order="C"), "native"  # (ascontiguousarray would make 0-d 1-d)


def _decode(a: np.ndarray, dtype, encoding):
    if encoding == "real_pairs":
        if a.dtype != np.float64 or a.ndim == 0 or a.shape[-1] != 2:
            return None
        out = np.empty(a.shape[:-1], np.complex128)
        out.real = a[..., 0]
        out.imag = a[..., 1]
        return out
    return a


def _checksums(text: str, table_json: str, tensors: dict) -> str:
    """The "checksum" metadata of a file with this program text, tensor table
    string and ``{tensor name: stored array}``."""
    return json.dumps({"algorithm": _ck.ALGORITHM, "program": _ck.text_digest(text),
                       "table": _ck.text_digest(table_json),
                       "tensors": {n: _ck.array_digest(n, a) for n, a in tensors.items()}},
                      sort_keys=True)


def _write_file(tensors: dict, path: str, metadata: dict) -> None:
    """Write the safetensors file (a seam: tests make it fail midway)."""
    from safetensors.numpy import save_file

    save_file(tensors, path, metadata=metadata)


# ---------------------------------------------------------------- save
def save(program, path, params=None) -> None:
    """Write `program` and its parameter/constant values to one model file.

    Args:
        program: the Program (verified before writing).
        path: the file to write (replaced atomically if it exists).
        params: ``{label: Tensor or array}`` for the program's params/consts;
            defaults to ``program.captured``. Labels the program does not use are
            ignored.
    Raises:
        InvalidArgumentError: a param/const is missing (all are named) or its
            value does not match the program's type; VerificationError for an
            invalid program (checked with ``strict_types``, as `load` does, so
            that every file written can be read back).

    >>> import fw, numpy as np, tempfile, os
    >>> from fw.core.ir import TensorType, trace, save, load, run
    >>> w = fw.to_tensor(np.ones((2, 2), np.float32))
    >>> p = trace(lambda x: fw.matmul(x, w), [TensorType([-1, 2], "float32")])
    >>> f = os.path.join(tempfile.mkdtemp(), "m.fwm")
    >>> save(p, f)
    >>> q, params = load(f)
    >>> run(q, np.ones((1, 2), np.float32)).numpy().tolist()
    [[2.0, 2.0]]
    """
    from fw.core import __version__
    from fw.core.ir.verifier import verify

    verify(program, strict_types=True)
    text = str(program)
    values = program.captured if params is None else params
    needed = program.params()
    missing = [a.label for a in needed if a.label not in values]
    if missing:
        raise InvalidArgumentError(f"save: no value for the program's params/consts "
                                   f"{missing} (pass params= or capture them)")
    tensors, table = {}, {}
    for k, a in enumerate(needed):
        arr = _host(values[a.label])
        t = a.type
        if arr.dtype != t.dtype.np or arr.ndim != t.ndim or any(
                e not in (-1, g) for e, g in zip(t.shape, arr.shape)):
            raise InvalidArgumentError(f"save: {a.role} {a.label!r} must be {t}, got "
                                       f"{arr.dtype}{list(arr.shape)}")
        name = a.label if a.label != _RESERVED else f"__fw_tensor_{k}"
        while name in tensors:
            name = f"__fw_tensor_{k}_{len(tensors)}"
        enc, encoding = _encode(arr, t.dtype)
        tensors[name] = enc
        table[name] = {"label": a.label, "role": a.role, "dtype": t.dtype.name,
                       "shape": list(arr.shape), "encoding": encoding}
    table_json = json.dumps(table, sort_keys=True)
    metadata = {"format": FORMAT, "version": VERSION, "fw_version": __version__,
                "program": text, "tensors": table_json,
                "checksum": _checksums(text, table_json, tensors)}
    with atomic_path(path) as tmp:
        _write_file(tensors, tmp, metadata)


# ---------------------------------------------------------------- load
def load(path, *, for_inference: bool = False, strip_updates: bool = False, limits=None):
    """Read a model file written by `save`.

    Args:
        path: the file.
        for_inference: the program will only be run for its outputs (a predictor,
            ``fw.jit.load``): a program that writes its params/consts (state
            updates) is refused, naming the updated labels.
        strip_updates: remove the program's state updates (and the ops only they
            needed) instead, logging what was removed (``fw.core.ir``, WARNING).
        limits: a `LoadLimits` (default `DEFAULT_LIMITS`).
    Returns:
        ``(program, params)``: a verified Program whose ``captured`` is
        ``params``, a dict ``{label: Tensor}`` (parameters have
        ``stop_gradient=False``), so the program runs as it is.
        ``program.meta`` has ``"source"`` (the path), ``"format_version"`` and,
        when updates were stripped, ``"stripped_updates"`` (their labels).
    Raises:
        FileNotFoundError: no such file.
        ModelFormatError: anything wrong with the file, naming it and the problem
            (`ModelLimitError` for a file beyond `limits`).
    """
    path = os.fspath(path)
    if limits is None:
        limits = DEFAULT_LIMITS
    elif not isinstance(limits, LoadLimits):
        raise InvalidArgumentError(f"load: limits must be a LoadLimits, got "
                                   f"{type(limits).__name__}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no model file at {path!r}")
    try:
        program, checked = _load(path, limits)
    except ModelFormatError:
        raise
    except RecursionError as e:
        raise ModelFormatError(f"{path}: the model file nests too deeply: {e}") from e
    except MemoryError as e:
        raise ModelFormatError(f"{path}: the model file asks for more memory than there is: "
                               f"{e}") from e
    except Exception as e:  # every failure of a malformed file is a format error
        raise ModelFormatError(f"{path}: cannot read the model file: {type(e).__name__}: "
                               f"{e}") from e
    if not checked:
        warnings.warn(f"{path}: model format version 1 has no checksum, so damage to the file "
                      f"cannot be detected; save the model again to add one",
                      UnverifiedModelWarning, stacklevel=2)
    if program.updates:
        labels = list(program.updates.labels)
        if strip_updates:
            _strip_updates(program, path, labels)
        elif for_inference:
            raise ModelFormatError(
                f"{path}: the program writes its own weights on every run (state updates "
                f"of {labels}); a model loaded for inference must not change between runs "
                f"(fw.jit.save never writes updates: this file comes from a training "
                f"program or was edited). Load it with strip_updates=True "
                f"(fw.inference: config.enable_strip_state_updates()) to run it without them")
    return program, program.captured


def _strip_updates(program, path, labels) -> None:
    from fw.core.ir.passes import get_pass

    program.updates.clear()
    n_ops = sum(1 for _ in program.walk())
    get_pass("dce").run(program)
    program.touch()
    dropped = n_ops - sum(1 for _ in program.walk())
    program.meta["stripped_updates"] = labels
    _log.warning("%s: removed the program's state updates of %s (and %d op%s only they "
                 "used): it runs without writing its weights", path, labels, dropped,
                 "" if dropped == 1 else "s")


def _fail(path, msg):
    return ModelFormatError(f"{path}: {msg}")


def _over(path, what, n, limit, name):
    return ModelLimitError(
        f"{path}: {what} ({n}) exceeds the limit {name}={limit}; if the file is trusted, "
        f"raise it: load(..., limits=LoadLimits().replace({name}=...)) or, for a "
        f"predictor, config.set_model_limits({name}=...)", name)


def _read_header(path, f, size, limits):
    """(header dict, offset of the tensor data)."""
    head = f.read(8)
    if len(head) < 8:
        raise _fail(path, f"not a safetensors file (or a damaged one): {size} bytes is too "
                          f"short for a model file")
    if head[:1] in (b"{", b"["):  # a JSON document (Paddle 3's model.json is one)
        raise _fail(path, "a JSON file, not an fw model file (a safetensors file written by "
                          "fw.jit.save / fw.core.ir.save); a Paddle 3 program (model.json) is "
                          "loaded by fw.inference.Config(prefix + '.json', prefix + "
                          "'.pdiparams')")
    (n,) = struct.unpack("<Q", head)
    if n > size - 8:
        raise _fail(path, f"not a safetensors file (or a damaged one): the header length {n} "
                          f"exceeds the file ({size} bytes); the file is truncated or damaged")
    if n > limits.max_header_bytes:
        raise _over(path, "the header's size in bytes", n, limits.max_header_bytes,
                    "max_header_bytes")
    raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _fail(path, f"not a safetensors file (or a damaged one): the header is not "
                          f"JSON ({e})") from None
    if not isinstance(header, dict):
        raise _fail(path, "not a safetensors file (or a damaged one): the header is not a "
                          "JSON object")
    return header, 8 + n


def _entries(path, header, data_len, limits) -> dict:
    """{tensor name: (NumPy dtype, shape, begin, end)} from the safetensors header,
    checked to tile the `data_len` bytes after it exactly."""
    n = len(header)
    if n > limits.max_tensors:
        raise _over(path, "the number of tensors", n, limits.max_tensors, "max_tensors")
    out, spans = {}, []
    for name, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise _fail(path, f"the header entry of tensor {name!r} is malformed")
        dt = _CODES.get(e["dtype"]) if isinstance(e["dtype"], str) else None
        shape, offs = e["shape"], e["data_offsets"]
        if dt is None:
            raise _fail(path, f"tensor {name!r} has a dtype fw does not store "
                              f"({str(e['dtype'])[:20]!r})")
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape) \
                or not isinstance(offs, list) or len(offs) != 2 or \
                not all(type(o) is int for o in offs):
            raise _fail(path, f"the header entry of tensor {name!r} has a malformed shape or "
                              f"offsets")
        b, end = offs
        if not 0 <= b <= end or end - b != math.prod(shape) * dt.itemsize:
            raise _fail(path, f"tensor {name!r} ({e['dtype']}{shape}) has data offsets {offs} "
                              f"that do not fit its size")
        out[name] = (dt, tuple(shape), b, end)
        spans.append((b, end))
    spans.sort()
    pos = 0
    for b, end in spans:
        if b != pos:
            raise _fail(path, "the tensors' data overlap or leave gaps (damaged file)")
        pos = end
    if pos > data_len:
        raise _fail(path, f"the file is truncated: its header declares {pos} bytes of tensor "
                          f"data but only {data_len} follow the header")
    if pos < data_len:
        raise _fail(path, f"{data_len - pos} bytes follow the tensor data the header declares "
                          f"(a damaged file)")
    return out


def _read_tensor(path, f, start, name, entry):
    dt, shape, b, end = entry
    arr = np.empty(shape, dt)
    if end > b:
        f.seek(start + b)
        got = f.readinto(memoryview(arr.reshape(-1).view(np.uint8)))
        if got != end - b:
            raise _fail(path, f"the file is truncated: tensor {name!r} ends after {got} of its "
                              f"{end - b} bytes")
    return arr


def _load(path, limits):
    from fw.core.ir.parser import ParseError, parse
    from fw.core.ir.verifier import VerificationError, problems
    from fw.core.tensor import wrap

    size = os.path.getsize(path)
    with open(path, "rb") as f:
        header, start = _read_header(path, f, size, limits)
        meta = header.pop(_RESERVED, None)
        if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
            raise _fail(path, "not an fw model file (no string metadata in the header)")
        if meta.get("format") != FORMAT:
            raise _fail(path, f"not an fw model file (metadata 'format' is "
                              f"{meta.get('format')!r}, expected {FORMAT!r})")
        version = meta.get("version")
        if version not in _READS:
            raise _fail(path, f"model format version {version!r} is not supported "
                              f"(this fw reads versions {', '.join(_READS)}; the file was "
                              f"written by fw {meta.get('fw_version', '?')})")
        entries = _entries(path, header, size - start, limits)
        text = meta.get("program")
        if not isinstance(text, str):
            raise _fail(path, "the metadata has no 'program'")
        table_json = meta.get("tensors", "")
        sums = _read_checksums(path, meta, version, text, table_json)
        try:
            table = json.loads(table_json)
        except ValueError as e:
            raise _fail(path, f"the metadata 'tensors' is not JSON: {e}") from e
        _check_table(path, table)
        try:
            program = parse(text, max_ops=limits.max_ops,
                            max_block_depth=limits.max_block_depth)
        except ParseError as e:
            if e.limit is not None:
                raise _over(path, e.what, e.count, getattr(limits, e.limit), e.limit) from e
            raise _fail(path, f"the program does not parse: {e}") from e
        found = problems(program, strict_types=True)
        if found:
            body = "\n".join(f"  line {ln}: {m}" if ln else f"  {m}" for ln, m in found)
            raise _fail(path, f"the program is not valid ({len(found)} problem"
                              f"{'s' if len(found) > 1 else ''}):\n{body}") from \
                VerificationError("the program is not valid", found)
        _check_value_sizes(path, program, limits)
        if set(entries) != set(table):
            extra, absent = sorted(set(entries) - set(table)), sorted(set(table) - set(entries))
            raise _fail(path, f"the tensors do not match the metadata table (in the file only: "
                              f"{extra}, in the table only: {absent})")
        if sums is not None and set(sums) != set(entries):
            raise _fail(path, f"the checksums do not match the tensors (no checksum for "
                              f"{sorted(set(entries) - set(sums))}, checksums of absent "
                              f"tensors {sorted(set(sums) - set(entries))}): the file is "
                              f"damaged")
        by_label = {e["label"]: (n, e) for n, e in table.items()}
        params = {}
        for a in program.params():
            if a.label not in by_label:
                raise _fail(path, f"no tensor for the program's {a.role} {a.label!r}")
            name, e = by_label[a.label]
            if e["role"] != a.role or e["dtype"] != a.type.dtype.name:
                raise _fail(path, f"tensor {name!r} is listed as {e['role']} {e['dtype']} but the "
                                  f"program has {a.role} {a.label!r}: {a.type}")
            raw = _read_tensor(path, f, start, name, entries[name])
            if sums is not None and _ck.array_digest(name, raw) != sums[name]:
                raise _fail(path, f"tensor {name!r} ({a.role} {a.label!r}) does not match its "
                                  f"checksum: its bytes were changed after it was written "
                                  f"(the file is damaged)")
            arr = _decode(raw, a.type.dtype, e["encoding"])
            want = TensorType(e["shape"], a.type.dtype)
            if arr is None or arr.dtype != a.type.dtype.np or list(arr.shape) != e["shape"] or \
                    not want.compatible(a.type):
                got = "unreadable" if arr is None else f"{arr.dtype}{list(arr.shape)}"
                raise _fail(path, f"tensor {name!r} ({a.role} {a.label!r}) is {got}, the "
                                  f"program needs {a.type} (table: {e['dtype']}{e['shape']})")
            t = wrap(arr)  # its own memory (read from the file), writable
            t.name = a.label
            t.persistable = True
            if a.role == "param":
                t.stop_gradient = False
            params[a.label] = t
        unused = sorted(set(by_label) - set(params))
        if unused:
            raise _fail(path, f"tensors for labels the program does not use: {unused}")
    program.captured = params
    program.meta["source"] = path
    program.meta["format_version"] = version
    return program, sums is not None


def _read_checksums(path, meta, version, text, table_json):
    """{tensor name: digest} after checking the program's and the table's digests;
    None for a version-1 file (no checksum)."""
    if version == "1":
        return None
    raw = meta.get("checksum")
    if not isinstance(raw, str):
        raise _fail(path, "the metadata has no 'checksum' (a version 2 file always has one): "
                          "the file is damaged")
    try:
        sums = json.loads(raw)
    except ValueError as e:
        raise _fail(path, f"the metadata 'checksum' is not JSON: the file is damaged "
                          f"({e})") from None
    ok = isinstance(sums, dict) and isinstance(sums.get("program"), str) and \
        isinstance(sums.get("table"), str) and isinstance(sums.get("tensors"), dict) and \
        all(isinstance(v, str) for v in sums["tensors"].values())
    if not ok:
        raise _fail(path, "the metadata 'checksum' is malformed: the file is damaged")
    if sums.get("algorithm") != _ck.ALGORITHM:
        raise _fail(path, f"the checksum algorithm {sums.get('algorithm')!r} is not supported "
                          f"(this fw uses {_ck.ALGORITHM!r})")
    if _ck.text_digest(text) != sums["program"]:
        raise _fail(path, "the program does not match its checksum: its text was changed "
                          "after it was written (the file is damaged)")
    if _ck.text_digest(table_json) != sums["table"]:
        raise _fail(path, "the tensor table (metadata 'tensors') does not match its checksum "
                          "(the file is damaged)")
    return sums["tensors"]


def _check_value_sizes(path, program, limits) -> None:
    cap = limits.max_value_bytes
    for op in program.walk():
        for r in op.results:
            t = r.type
            n = t.dtype.itemsize
            for d in t.shape:
                if d != DYN:
                    n *= d
            if n > cap:
                what = f"the size in bytes of the {t} result of {op.name}" + (
                    " (static dims only)" if not t.is_static else "")
                raise _over(path, what, n, cap, "max_value_bytes")


def _check_table(path, table) -> None:
    if not isinstance(table, dict):
        raise _fail(path, "the metadata 'tensors' must be a JSON object")
    labels = set()
    for name, e in table.items():
        ok = isinstance(e, dict) and isinstance(e.get("label"), str) and \
            e.get("role") in ("param", "const") and isinstance(e.get("dtype"), str) and \
            isinstance(e.get("shape"), list) and e.get("encoding") in _ENCODINGS and all(
                type(d) is int and d >= 0 for d in e["shape"])
        if not ok:
            raise _fail(path, f"the metadata entry for tensor {name!r} is malformed: "
                              f"{json.dumps(e)[:200]}")
        if e["label"] in labels:
            raise _fail(path, f"label {e['label']!r} appears twice in the metadata")
        labels.add(e["label"])
        try:
            _dt.convert_dtype(e["dtype"])
        except (TypeError, ValueError, FwError):
            raise _fail(path, f"tensor {name!r} has an unknown dtype {e['dtype']!r}") from None
