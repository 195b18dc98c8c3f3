"""Request bodies in, answers out: JSON, ``.npy`` and safetensors, checked against
a model's `ModelSpec` before anything reaches the model.

Request formats (``POST /v1/models/{name}:predict``):

- JSON ``{"inputs": {"<input>": nested list, ...}}``; or Paddle Serving's
  ``{"feed": [{"<input>": value, ...}, ...], "fetch": ["<output>", ...]}``, where
  each feed entry is one sample (the input's shape without the batch dim) or, when
  it has the input's full rank, a batch; the entries are concatenated.
- ``.npy`` (``Content-Type: application/x-npy``, or any body starting with the
  npy magic): one array for the model's only input, or for ``?input=NAME``.
- safetensors (``Content-Type: application/x-safetensors``): one tensor per
  input, named like the inputs.

Conversion rules. JSON numbers become the input's dtype when nothing is lost:
integers into a float input are fine; a fractional number into an integer input,
an integer out of the input's range, a number beyond float32's range, booleans
into a number input (or numbers into a bool input), strings, nulls, NaN/Infinity
and ragged lists are refused. Binary arrays keep their dtype: it must be the
input's or convert to it exactly (``np.can_cast(..., "safe")``: int8 into
float32 is fine, float64 into float32 is not). Every refusal is a 400 that names
the input, what it expects and what it got.

Answers: JSON ``{"outputs": {"<output>": nested list}}`` (``{"result": ...}``
for a feed/fetch request, as Paddle Serving answers), ``.npy`` (one output) or
safetensors (all outputs), chosen by ``Accept`` or else by the request's format.
"""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np

from fw.inference.serving.errors import RequestError
from fw.inference.serving.model import ModelSpec, TensorSpec

__all__ = ["Decoded", "decode", "encode", "NPY", "SAFETENSORS", "JSON"]

JSON = "application/json"
NPY = "application/x-npy"
SAFETENSORS = "application/x-safetensors"
_NPY_MAGIC = b"\x93NUMPY"


@dataclasses.dataclass
class Decoded:
    """A checked request: one array per model input (model order), the outputs to
    answer with, and the format the request came in."""

    arrays: list
    fetch: list
    protocol: str  # "v1" ({"inputs"}), "paddle" ({"feed", "fetch"}), NPY or SAFETENSORS


def _bad(message: str) -> RequestError:
    return RequestError(400, message)


# ---------------------------------------------------------------- decoding
def decode(body: bytes, content_type: str, spec: ModelSpec, query: dict) -> Decoded:
    """Parse and check `body` for model `spec`. Raises `RequestError` (400)."""
    ctype = content_type.split(";")[0].strip().lower()
    if ctype == NPY or body[:6] == _NPY_MAGIC:
        return _decode_npy(body, spec, query)
    if ctype == SAFETENSORS or (ctype == "application/octet-stream"):
        return _decode_safetensors(body, spec, query)
    return _decode_json(body, spec)


def _check_fetch(fetch, spec: ModelSpec) -> list:
    if fetch is None:
        return spec.output_names
    if isinstance(fetch, str):
        fetch = [fetch]
    if not isinstance(fetch, list) or not all(isinstance(f, str) for f in fetch) or not fetch:
        raise _bad(f"'fetch' is a non-empty list of output names (model '{spec.name}' has "
                   f"{spec.output_names}), got {json.dumps(fetch)[:200]}")
    unknown = [f for f in fetch if f not in spec.output_names]
    if unknown:
        raise _bad(f"model '{spec.name}' has no output(s) {unknown}; its outputs are "
                   f"{spec.output_names}")
    return list(dict.fromkeys(fetch))


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number (send finite numbers)")


def _decode_json(body: bytes, spec: ModelSpec) -> Decoded:
    try:  # JSON is UTF-8 (RFC 8259); json.loads would guess UTF-16/32 from the bytes
        doc = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as e:
        raise _bad(f"the body is not UTF-8 JSON: {e}") from None
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        raise _bad(f"malformed JSON body: {e}") from None
    if not isinstance(doc, dict):
        raise _bad(f"the JSON body is an object {{\"inputs\": {{name: list}}}} (or "
                   f"{{\"feed\": [...], \"fetch\": [...]}}), got a {type(doc).__name__}")
    if "inputs" in doc:
        extra = sorted(set(doc) - {"inputs", "outputs"})
        if extra:
            raise _bad(f"unknown key(s) {extra} in the JSON body (it takes 'inputs' and "
                       f"optionally 'outputs')")
        inputs = doc["inputs"]
        if not isinstance(inputs, dict):
            raise _bad(f"'inputs' maps input names {spec.input_names} to nested lists, got a "
                       f"{type(inputs).__name__}")
        _check_names(inputs, spec)
        arrays = [_from_json(spec.input(n), inputs[n]) for n in spec.input_names]
        return Decoded(arrays, _check_fetch(doc.get("outputs"), spec), "v1")
    if "feed" in doc:
        return _decode_feed(doc, spec)
    raise _bad(f"the JSON body has no 'inputs' (or Paddle Serving's 'feed'); its keys are "
               f"{sorted(doc)[:10]}")


def _check_names(given, spec: ModelSpec, where="'inputs'"):
    unknown = [n for n in given if spec.input(n) is None]
    if unknown:
        raise _bad(f"model '{spec.name}' has no input(s) {unknown}; its inputs are "
                   f"{spec.input_names}")
    missing = [n for n in spec.input_names if n not in given]
    if missing:
        raise _bad(f"{where} lacks input(s) {missing} of model '{spec.name}' (it needs "
                   f"{spec.input_names})")


def _decode_feed(doc: dict, spec: ModelSpec) -> Decoded:
    # Paddle Serving's HTTP body: each feed entry is a sample (or, with the input's
    # full rank, a batch); the samples of each input are stacked in order.
    extra = sorted(set(doc) - {"feed", "fetch"})
    if extra:
        raise _bad(f"unknown key(s) {extra} in the JSON body (Paddle Serving's format takes "
                   f"'feed' and 'fetch')")
    feed = doc["feed"]
    if isinstance(feed, dict):
        feed = [feed]
    if not isinstance(feed, list) or not feed or not all(isinstance(f, dict) for f in feed):
        raise _bad("'feed' is a non-empty list of {input name: value} objects")
    parts = {n: [] for n in spec.input_names}
    for i, entry in enumerate(feed):
        _check_names(entry, spec, where=f"feed[{i}]")
        for n in spec.input_names:
            t = spec.input(n)
            a = _from_json(t, entry[n], allow_sample=True, where=f"feed[{i}]")
            parts[n].append(a)
    arrays = []
    for n in spec.input_names:
        ps = parts[n]
        if len(ps) == 1:
            arrays.append(ps[0])
            continue
        try:
            arrays.append(np.concatenate(ps))
        except ValueError:
            shapes = [list(p.shape) for p in ps]
            raise _bad(f"input '{n}': the feed entries have shapes {shapes}, which do not "
                       f"stack into one batch") from None
    return Decoded(arrays, _check_fetch(doc.get("fetch"), spec), "paddle")


def _from_json(t: TensorSpec, value, allow_sample=False, where="") -> np.ndarray:
    """The JSON `value` of input `t` as an array of t's dtype, or a 400."""
    at = f"{where}: " if where else ""
    try:
        raw = np.array(value)
    except ValueError:  # NumPy >= 1.24 refuses inhomogeneous nesting
        where = _ragged(value, t.name) or "uneven nesting"
        raise _bad(f"{at}input '{t.name}' is a ragged list: {where} (every row must have "
                   f"the same length; expected shape {list(t.shape)})") from None
    if allow_sample and raw.ndim == len(t.shape) - 1 and len(t.shape) >= 1:
        raw = raw[None]  # one sample: add the batch dim
    a = _convert_json(t, raw, value, at)
    _check_shape(t, a.shape, at)
    return a


def _ragged(value, path) -> str:
    """Where nested list `value` stops being rectangular, in words."""
    if not isinstance(value, list):
        return f"{path} is not a list"
    kinds = {isinstance(v, list) for v in value}
    if len(kinds) > 1:
        return f"{path} mixes lists and numbers"
    if kinds == {True}:
        lengths = [len(v) for v in value]
        for i, n in enumerate(lengths):
            if n != lengths[0]:
                return f"{path}[0] has {lengths[0]} elements, {path}[{i}] has {n}"
        for i, v in enumerate(value):
            inner = _ragged(v, f"{path}[{i}]")
            if inner:
                return inner
    return ""


def _convert_json(t: TensorSpec, raw: np.ndarray, value, at: str) -> np.ndarray:
    want = np.dtype(t.dtype)
    kind = raw.dtype.kind
    got = {"b": "booleans", "i": "integers", "u": "integers", "f": "numbers with a fraction",
           "U": "strings", "S": "strings", "O": "nulls, objects or out-of-range integers"}
    if raw.size == 0:
        return raw.astype(want)
    if kind not in "biuf":
        raise _bad(f"{at}input '{t.name}' expects {want.name} numbers, got "
                   f"{got.get(kind, raw.dtype.name)}")
    if want.kind == "b":
        if kind != "b":
            raise _bad(f"{at}input '{t.name}' expects booleans (true/false), got "
                       f"{got[kind]}")
        return raw.astype(want)
    if kind == "b":
        raise _bad(f"{at}input '{t.name}' expects {want.name} numbers, got booleans")
    if want.kind in "iu":
        info = np.iinfo(want)
        if kind == "f":  # floats in the JSON, or integers NumPy could only hold as floats
            v = _first_leaf(value, lambda v: isinstance(v, float))
            if v is not None:
                raise _bad(f"{at}input '{t.name}' expects {want.name} integers, got numbers "
                           f"written with a fraction or exponent (e.g. {v!r})")
            v = _first_leaf(value, lambda v: not info.min <= v <= info.max)
            raise _bad(f"{at}input '{t.name}' expects {want.name} integers in "
                       f"[{info.min}, {info.max}], got {v}")
        lo, hi = raw.min(), raw.max()
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise _bad(f"{at}input '{t.name}' expects {want.name} integers in "
                       f"[{info.min}, {info.max}], got {int(bad)}")
        return raw.astype(want)
    # a float input: integers and floats are fine; a value beyond its range is not
    with np.errstate(over="ignore", invalid="ignore"):
        a = raw.astype(want)
    finite = np.isfinite(a if a.dtype.kind == "f" else a.astype(np.float32))  # bfloat16: "V"
    if not finite.all():
        bad = float(raw[~finite].reshape(-1)[0])
        raise _bad(f"{at}input '{t.name}' expects {want.name} numbers, got {bad!r}, which is "
                   f"beyond {want.name}'s range")
    return a


def _first_leaf(value, pred):
    """The first number in nested list `value` for which `pred` holds (None: none);
    only called on the error path."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(reversed(v))
        elif pred(v):
            return v
    return None


def _check_shape(t: TensorSpec, shape, at=""):
    if len(shape) != len(t.shape) or any(e != -1 and e != g for e, g in zip(t.shape, shape)):
        raise _bad(f"{at}input '{t.name}' expects shape {list(t.shape)} (-1: any size), got "
                   f"{list(shape)}")


def _check_binary(t: TensorSpec, a: np.ndarray, what: str) -> np.ndarray:
    want = np.dtype(t.dtype)
    if a.dtype != want:
        try:
            safe = np.can_cast(a.dtype, want, "safe")
        except TypeError:
            safe = False
        if not safe:
            raise _bad(f"input '{t.name}' expects {want.name} data, got {a.dtype.name} in the "
                       f"{what} (binary data is converted only when nothing is lost: send "
                       f"{want.name})")
        a = a.astype(want)
    _check_shape(t, a.shape)
    return np.ascontiguousarray(a)


def _decode_npy(body: bytes, spec: ModelSpec, query: dict) -> Decoded:
    if len(spec.inputs) != 1:
        raise _bad(f"an .npy body carries one array and model '{spec.name}' has inputs "
                   f"{spec.input_names}: send safetensors or JSON")
    t = spec.inputs[0]
    named = query.get("input")
    if named is not None and named != t.name:
        raise _bad(f"model '{spec.name}' has no input {named!r}; its input is '{t.name}'")
    try:
        a = np.load(io.BytesIO(body), allow_pickle=False)
    except Exception as e:  # truncated, bad header, object arrays (pickles are refused)
        raise _bad(f"malformed .npy body for input '{t.name}': {type(e).__name__}: "
                   f"{e}") from None
    if not isinstance(a, np.ndarray):
        raise _bad(f"the .npy body for input '{t.name}' holds no array")
    return Decoded([_check_binary(t, a, ".npy body")], _query_fetch(query, spec), NPY)


def _decode_safetensors(body: bytes, spec: ModelSpec, query: dict) -> Decoded:
    from safetensors import SafetensorError
    from safetensors.numpy import load

    try:
        tensors = load(body)
    except (SafetensorError, ValueError, TypeError, OverflowError) as e:
        raise _bad(f"malformed safetensors body: {type(e).__name__}: {e}") from None
    _check_names(tensors, spec, where="the safetensors body")
    arrays = [_check_binary(spec.input(n), tensors[n], "safetensors body")
              for n in spec.input_names]
    return Decoded(arrays, _query_fetch(query, spec), SAFETENSORS)


def _query_fetch(query: dict, spec: ModelSpec) -> list:
    """The outputs a binary request asks for: ``?output=a,b`` (default: all)."""
    named = query.get("output")
    return _check_fetch(None if named is None else named.split(","), spec)


# ---------------------------------------------------------------- answers
def answer_type(accept: str, protocol: str) -> str:
    """The answer's format: what ``Accept`` asks for, else the request's own format."""
    accept = (accept or "").lower()
    for t in (SAFETENSORS, NPY, JSON):
        if t in accept:
            return t
    return protocol if protocol in (NPY, SAFETENSORS) else JSON


def encode(outputs: dict, kind: str, protocol: str, model: str) -> bytes:
    """The answer body holding `outputs` ({name: array}, fetched ones only)."""
    if kind == NPY:
        if len(outputs) != 1:
            raise _bad(f"an .npy answer holds one array and model '{model}' answers with "
                       f"{list(outputs)}: pick one with ?output=NAME, or ask for "
                       f"Accept: {SAFETENSORS} or {JSON}")
        buf = io.BytesIO()
        np.save(buf, next(iter(outputs.values())), allow_pickle=False)
        return buf.getvalue()
    if kind == SAFETENSORS:
        from safetensors.numpy import save

        return save({n: np.ascontiguousarray(a) for n, a in outputs.items()})
    body = {}
    for n, a in outputs.items():
        if a.dtype.kind not in "biuf":  # bfloat16 and friends: JSON gets float32 values
            a = a.astype(np.float32)
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise RequestError(500, f"output '{n}' of model '{model}' holds NaN or Inf, which "
                                    f"JSON cannot carry; ask for Accept: {NPY} or "
                                    f"{SAFETENSORS}")
        body[n] = a.tolist()
    key = "result" if protocol == "paddle" else "outputs"
    return json.dumps({key: body}, separators=(",", ":")).encode()
