"""Paddle 3's program file: the PIR program ``paddle.jit.save`` writes as
``prefix + ".json"``, read as data into a `PaddleGraph`.

The layout, as observed in files written by Paddle 3.3.1 (tests/fixtures/paddle):

    {"base_code": {"magic": "pir", "version": 4, ...},
     "program": {"regions": [{"blocks": [{"args": [], "ops": [OP, ...]}]}]}}

An OP is ``{"#": "<dialect>.<name>", "A": attrs, "I": [{"%": id}, ...],
"O": [{"%": id, "TT": type}, ...]}``; dialect ``1`` is Paddle's operator dialect
(``1.conv2d``), ``0`` the builtin one (``0.combine``); ``"p"`` is a parameter:
its ``A`` ends with the parameter's name and ``O`` is one output (not a list).
An attribute is ``{"N": name, "AT": {"#": kind, "D": data}}`` (kinds
``0.a_i32``, ``0.a_f32``, ``0.a_str``, ``0.a_array`` of attributes,
``1.a_intarray``, ``1.a_dtype``, ...); a type is
``{"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, dims, layout, lod, offset]}``.
Value id 0 is an absent optional operand. ``1.data`` declares an input,
``1.fetch`` an output.

The JSON is parsed by `json.loads` (data only); its size is held to
``max_header_bytes`` and its op count to ``max_ops``.
"""

from __future__ import annotations

import json
import os

from fw.core.errors import FwError
from fw.inference.paddle_format.graph import PaddleGraph, PaddleOp, Spec

__all__ = ["read_pir_json", "looks_like_pir"]

_TYPES = {"t_bool": "bool", "t_i8": "int8", "t_ui8": "uint8", "t_i16": "int16",
          "t_i32": "int32", "t_i64": "int64", "t_f16": "float16", "t_bf16": "bfloat16",
          "t_f32": "float32", "t_f64": "float64", "t_c64": "complex64",
          "t_c128": "complex128"}


def looks_like_pir(doc) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("base_code"), dict)
            and doc["base_code"].get("magic") == "pir" and isinstance(doc.get("program"), dict))


def _attr(a):
    kind, data = a.get("#", ""), a.get("D")
    if kind.endswith("a_array"):
        return [_attr(x) for x in data]
    return data


def _spec(tt, fail):
    if not isinstance(tt, dict):
        return None
    if tt.get("#", "").endswith("t_dtensor"):
        d = tt.get("D")
        if not isinstance(d, list) or len(d) < 2:
            raise fail(f"a tensor type is malformed: {json.dumps(tt)[:200]}")
        kind = d[0].get("#", "").split(".")[-1] if isinstance(d[0], dict) else ""
        if kind not in _TYPES:
            raise fail(f"unknown element type {kind!r} (known: {sorted(_TYPES)})")
        return Spec(_TYPES[kind], tuple(int(x) for x in d[1]))
    return None  # a vector type (combine's result) carries no Spec of its own


def read_pir_json(path, limits, fail, over) -> PaddleGraph:
    size = os.path.getsize(path)
    if size > limits.max_header_bytes:
        raise over("the program file's size in bytes", size, limits.max_header_bytes,
                   "max_header_bytes")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise fail(f"not a Paddle PIR program: the file is not valid JSON ({e})") from e
    if not looks_like_pir(doc):
        keys = sorted(doc)[:8] if isinstance(doc, dict) else type(doc).__name__
        raise fail(f"a JSON file but not a Paddle PIR program (paddle.jit.save's .json has "
                   f"'base_code': {{'magic': 'pir'}} and 'program'); it has {keys}")
    try:
        ops = doc["program"]["regions"][0]["blocks"][0]["ops"]
        if not isinstance(ops, list):
            raise TypeError("'ops' is not a list")
    except (KeyError, IndexError, TypeError) as e:
        raise fail(f"a PIR program without regions[0].blocks[0].ops ({e})") from e
    if len(ops) > limits.max_ops:
        raise over("the number of operations", len(ops), limits.max_ops, "max_ops")
    feeds, params, body, fetches = [], [], [], []
    for i, op in enumerate(ops):
        try:
            name = op["#"]
            if name == "p":
                out = op["O"]
                params.append((op["A"][-1], out["%"], _spec(out.get("TT"), fail)))
                continue
            dialect, _, short = name.partition(".")
            if any(isinstance(r, dict) and r.get("#") for r in op.get("regions", []) or []):
                raise fail(f"op {i} ({name}) holds nested blocks; control flow is not "
                           f"supported")
            attrs = {a["N"]: _attr(a["AT"]) for a in op.get("A", [])}
            attrs.pop("struct_name", None)
            ins = [None if x.get("%", 0) == 0 else x["%"] for x in op.get("I", [])]
            outs = op.get("O", [])
            outs = outs if isinstance(outs, list) else [outs]
            keys = [o["%"] for o in outs]
            specs = [_spec(o.get("TT"), fail) for o in outs]
        except FwError:  # already names the file and the problem
            raise
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
            raise fail(f"op {i} is malformed ({type(e).__name__}: {e}): "
                       f"{json.dumps(op)[:200]}") from e
        if short == "data":
            feeds.append((attrs.get("name", f"x{len(feeds)}"), keys[0], specs[0]))
        elif short == "fetch":
            fetches.append((attrs.get("col", len(fetches)), ins[0]))
        else:
            body.append(PaddleOp(short, ins, attrs, keys, specs))
    fetches = [k for _, k in sorted(fetches, key=lambda c: c[0])]
    return PaddleGraph(os.fspath(path), feeds, params, body, fetches)
