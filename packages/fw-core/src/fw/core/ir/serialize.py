"""The model file: one safetensors file holding a program and its weights.

Layout (safetensors: an 8-byte little-endian header length, a JSON header, then
the raw tensor bytes)::

    header "__metadata__" (all values are strings):
        "format":     "fw.model"
        "version":    "1"                      (the layout version; see VERSION)
        "fw_version": fw.core.__version__ of the writer
        "program":    the program's text form (fw.core.ir.printer)
        "tensors":    JSON {tensor name: {"label": ..., "role": "param"|"const",
                                           "dtype": fw dtype name, "shape": [...],
                                           "encoding": "native"|"real_pairs"}}
    tensors: one per block-0 parameter/constant, named by its label (a label
        safetensors reserves, ``__metadata__``, is stored as ``__fw_tensor_N``).

Every fw dtype is stored natively (BOOL, U8, I8, I16, I32, I64, F16, BF16, F32,
F64, C64) except complex128, which safetensors does not have: it is stored as
F64 with a trailing dimension of 2 (real, imaginary) — encoding ``real_pairs``
— and read back bit-exactly.

Loading reads data only: the header is JSON, the program is parsed (never
evaluated), then verified, and each tensor is checked against the program's
type and the table. Nothing is unpickled or executed. Any malformed file raises
`ModelFormatError` naming the file and the problem.

Writes are atomic (`fw.core.atomic_io`): the file is written under a temporary
name in the target directory, flushed to disk (fsync), then renamed over the
target (`os.replace`), so a crash or an error mid-write leaves the previous file
as it was.

`load` returns ``(program, params)``: ``params`` maps labels to Tensors, and
``program.captured`` is that same dict, so the program runs as loaded
(``fw.core.ir.run(program, x)``) and ``params`` is there to inspect or update.
"""

from __future__ import annotations

import json
import os

import numpy as np

from fw.core import dtypes as _dt
from fw.core.atomic_io import atomic_path
from fw.core.errors import FwError, InvalidArgumentError
from fw.core.ir.types import TensorType

__all__ = ["save", "load", "ModelFormatError", "FORMAT", "VERSION"]

FORMAT = "fw.model"
VERSION = "1"
_RESERVED = "__metadata__"
_ENCODINGS = ("native", "real_pairs")


class ModelFormatError(InvalidArgumentError):
    """A model file that fw cannot read (malformed, truncated, another format or
    version, or a program/weights that do not match)."""


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
            invalid program.

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

    verify(program)
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
    metadata = {"format": FORMAT, "version": VERSION, "fw_version": __version__,
                "program": text, "tensors": json.dumps(table, sort_keys=True)}
    with atomic_path(path) as tmp:
        _write_file(tensors, tmp, metadata)


# ---------------------------------------------------------------- load
def load(path):
    """Read a model file written by `save`.

    Args:
        path: the file.
    Returns:
        ``(program, params)``: a verified Program whose ``captured`` is
        ``params``, a dict ``{label: Tensor}`` (parameters have
        ``stop_gradient=False``), so the program runs as it is.
    Raises:
        FileNotFoundError: no such file.
        ModelFormatError: anything wrong with the file, naming it and the problem.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no model file at {path!r}")
    try:
        return _load(path)
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


def _fail(path, msg):
    return ModelFormatError(f"{path}: {msg}")


def _load(path):
    from safetensors import safe_open

    from fw.core.ir.parser import ParseError, parse
    from fw.core.ir.verifier import VerificationError, verify
    from fw.core.tensor import wrap

    try:
        handle = safe_open(path, framework="np")
    except Exception as e:
        raise _fail(path, f"not a safetensors file (or a damaged one): {e}") from e
    with handle as f:
        meta = f.metadata() or {}
        if meta.get("format") != FORMAT:
            raise _fail(path, f"not an fw model file (metadata 'format' is "
                              f"{meta.get('format')!r}, expected {FORMAT!r})")
        if meta.get("version") != VERSION:
            raise _fail(path, f"model format version {meta.get('version')!r} is not supported "
                              f"(this fw reads version {VERSION}; the file was written by fw "
                              f"{meta.get('fw_version', '?')})")
        text = meta.get("program")
        if not isinstance(text, str):
            raise _fail(path, "the metadata has no 'program'")
        try:
            table = json.loads(meta.get("tensors", ""))
        except ValueError as e:
            raise _fail(path, f"the metadata 'tensors' is not JSON: {e}") from e
        _check_table(path, table)
        try:
            program = parse(text)
        except ParseError as e:
            raise _fail(path, f"the program does not parse: {e}") from e
        try:
            verify(program)
        except VerificationError as e:
            raise _fail(path, f"the program is not valid: {e}") from e
        names = set(f.keys())
        if names != set(table):
            extra, absent = sorted(names - set(table)), sorted(set(table) - names)
            raise _fail(path, f"the tensors do not match the metadata table (in the file only: "
                              f"{extra}, in the table only: {absent})")
        by_label = {e["label"]: (n, e) for n, e in table.items()}
        params = {}
        for a in program.params():
            if a.label not in by_label:
                raise _fail(path, f"no tensor for the program's {a.role} {a.label!r}")
            name, e = by_label[a.label]
            if e["role"] != a.role or e["dtype"] != a.type.dtype.name:
                raise _fail(path, f"tensor {name!r} is listed as {e['role']} {e['dtype']} but the "
                                  f"program has {a.role} {a.label!r}: {a.type}")
            try:
                raw = f.get_tensor(name)
            except Exception as ex:
                raise _fail(path, f"cannot read tensor {name!r}: {ex}") from ex
            arr = _decode(raw, a.type.dtype, e["encoding"])
            want = TensorType(e["shape"], a.type.dtype)
            if arr is None or arr.dtype != a.type.dtype.np or list(arr.shape) != e["shape"] or \
                    not want.compatible(a.type):
                got = "unreadable" if arr is None else f"{arr.dtype}{list(arr.shape)}"
                raise _fail(path, f"tensor {name!r} ({a.role} {a.label!r}) is {got}, the "
                                  f"program needs {a.type} (table: {e['dtype']}{e['shape']})")
            t = wrap(np.array(arr, copy=True))  # own memory, writable, file closed after
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
    return program, params


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
