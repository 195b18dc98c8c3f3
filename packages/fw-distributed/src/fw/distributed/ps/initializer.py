"""How a sparse table's rows start: a JSON-able spec and the rows it gives.

A row is created the first time its id is pulled (Paddle's ``MemorySparseTable``
creates rows on first access the same way), from a generator keyed by
``(seed, id, column)`` only (`_hash.uniform01`), so the row of an id is the same
on whichever server creates it, in whichever order, and equal to the row a
single-process table creates: a trained table reloaded onto another number of
servers and a never-seen id on a restarted server both give reproducible rows.

The spec is taken from fw-nn's initializer objects (`param_attr=...` of
`SparseEmbedding`, like Paddle's ``sparse_embedding(param_attr=ParamAttr(
initializer=...))``); the default is Paddle's default weight initializer for a
``[vocab, dim]`` parameter, Xavier-uniform.
"""
from __future__ import annotations

import math

import numpy as np

from fw.distributed.ps._hash import uniform01

__all__ = ["spec_from_initializer", "make_rows", "check_spec"]

_KINDS = ("constant", "uniform", "normal", "truncated_normal")


def check_spec(spec, where: str) -> dict:
    """`spec` validated (a dict with ``kind`` and its numbers); raises ValueError."""
    if not isinstance(spec, dict) or spec.get("kind") not in _KINDS:
        raise ValueError(f"{where}: an initializer spec is a dict with 'kind' in {_KINDS}, "
                         f"got {spec!r}")
    need = {"constant": ("value",), "uniform": ("low", "high"), "normal": ("mean", "std"),
            "truncated_normal": ("mean", "std", "a", "b")}[spec["kind"]]
    for k in need:
        v = spec.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{where}: initializer {spec['kind']!r} needs a finite number "
                             f"{k!r}, got {v!r}")
    if spec["kind"] == "uniform" and spec["low"] > spec["high"]:
        raise ValueError(f"{where}: uniform initializer needs low <= high, got {spec}")
    if spec["kind"] == "truncated_normal" and not spec["a"] < spec["b"]:
        raise ValueError(f"{where}: truncated_normal initializer needs a < b, got {spec}")
    return {k: (spec[k] if k == "kind" else float(spec[k])) for k in ("kind",) + need}


def spec_from_initializer(init, size, where: str) -> dict:
    """The spec of an fw-nn initializer object (None: Xavier-uniform over `size`,
    Paddle's default for weights). Initializers whose values depend on the whole
    matrix (orthogonal, assign, ...) cannot create one row at a time: ValueError."""
    vocab, dim = int(size[0]), int(size[1])
    name = type(init).__name__ if init is not None else "XavierUniform"
    if init is None or name == "XavierUniform":
        fi = getattr(init, "fan_in", None) or vocab
        fo = getattr(init, "fan_out", None) or dim
        gain = float(getattr(init, "gain", 1.0))
        lim = gain * math.sqrt(6.0 / max(fi + fo, 1))
        return {"kind": "uniform", "low": -lim, "high": lim}
    if name == "XavierNormal":
        fi = init.fan_in or vocab
        fo = init.fan_out or dim
        return {"kind": "normal", "mean": 0.0, "std": init.gain * math.sqrt(2.0 / (fi + fo))}
    if name == "Constant":
        return check_spec({"kind": "constant", "value": float(init.value)}, where)
    if name == "Uniform":
        return check_spec({"kind": "uniform", "low": init.low, "high": init.high}, where)
    if name == "Normal":
        return check_spec({"kind": "normal", "mean": init.mean, "std": init.std}, where)
    if name == "TruncatedNormal":
        # fw-nn's bounds a, b are absolute values, as in Paddle's TruncatedNormal
        return check_spec({"kind": "truncated_normal", "mean": init.mean, "std": init.std,
                           "a": init.a, "b": init.b}, where)
    raise ValueError(f"{where}: initializer {name} cannot create sparse-table rows one id at "
                     "a time; use Constant, Uniform, Normal, TruncatedNormal, XavierUniform "
                     "or XavierNormal")


def _normal(seed, ids, dim, rnd=0):
    # Box-Muller on two independent counter streams (seed and seed ^ a constant)
    u1 = uniform01(seed * 2 + 1 + 1000003 * rnd, ids, dim)
    u2 = uniform01(seed * 2 + 2 + 1000003 * rnd, ids, dim)
    return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)


def make_rows(spec: dict, seed: int, ids, dim: int, dtype=np.float32) -> np.ndarray:
    """The initial rows ``[len(ids), dim]`` of `ids` under `spec`."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    kind = spec["kind"]
    if kind == "constant":
        return np.full((ids.size, dim), spec["value"], dtype=dtype)
    if kind == "uniform":
        u = uniform01(seed, ids, dim)
        return (spec["low"] + (spec["high"] - spec["low"]) * u).astype(dtype)
    if kind == "normal":
        return (spec["mean"] + spec["std"] * _normal(seed, ids, dim)).astype(dtype)
    # truncated normal: redraw out-of-range elements from further counter rounds
    out = spec["mean"] + spec["std"] * _normal(seed, ids, dim)
    lo, hi = spec["a"], spec["b"]
    bad = (out < lo) | (out > hi)
    for rnd in range(1, 200):
        if not bad.any():
            break
        again = spec["mean"] + spec["std"] * _normal(seed, ids, dim, rnd)
        take = bad & (again >= lo) & (again <= hi)
        out[take] = again[take]
        bad &= ~take
    if bad.any():
        raise ValueError(f"truncated_normal initializer: [a, b] = [{lo}, {hi}] has almost no "
                         f"mass under N({spec['mean']}, {spec['std']}^2)")
    return out.astype(dtype)
