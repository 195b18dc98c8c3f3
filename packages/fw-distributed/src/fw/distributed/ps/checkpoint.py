"""Saving the tables (each server its shard) and loading them onto any number of
servers.

Layout of a checkpoint directory::

    manifest.json                         format, version, the number of shards,
                                          the hash, each table's config and files
    <table>.shard-00001-of-00002.npz      one server's rows of a sparse table:
                                          ids, values and the optimizer states
    dense.shard-00001-of-00002.npz        one server's dense slice (+ states)

Files are ``.npz`` of plain numeric arrays plus JSON; loading uses
``np.load(allow_pickle=False)``, so reading a checkpoint never runs code.
Rows are placed by id (`_hash.shard_of`), so a server of a job with another
number of servers reads every saved shard and keeps the ids it owns now: a
table saved by 2 servers reloads onto 1 or 3 with the same rows.
"""
from __future__ import annotations

import json
import os

import numpy as np

from fw.distributed.ps._hash import shard_of
from fw.distributed.ps.table import DenseTable, SparseTable

__all__ = ["shard_file", "save_shard", "write_manifest", "read_manifest", "load_tables",
           "FORMAT"]

FORMAT = "fw-ps-tables"
VERSION = 1


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def shard_file(table: str, index: int, num: int) -> str:
    return f"{_safe(table)}.shard-{index:05d}-of-{num:05d}.npz"


def _write_npz(path, arrays):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)   # a crash mid-write never leaves a half file under the name


def save_shard(dirname: str, index: int, num: int, sparse: dict, dense) -> dict:
    """Write server `index`'s tables; returns ``{table name: {"file", "rows"}}``."""
    os.makedirs(dirname, exist_ok=True)
    out = {}
    for t in sparse.values():
        f = shard_file(t.name, index, num)
        sd = t.state_dict()
        _write_npz(os.path.join(dirname, f), sd)
        out[t.name] = {"file": f, "rows": int(sd["ids"].size)}
    if dense is not None:
        f = shard_file("dense", index, num)
        arrays = {"values": dense.values[0], "begin": np.int64(dense.begin),
                  "end": np.int64(dense.end)}
        for k, v in dense.states.items():
            arrays[k] = v[0]
        _write_npz(os.path.join(dirname, f), arrays)
        out["<dense>"] = {"file": f, "rows": 1}
    return out


def write_manifest(dirname: str, num: int, sparse_configs: list, dense_config, shards: list):
    """`shards`: each server's `save_shard` result, by server index."""
    tables = []
    for cfg in sparse_configs:
        tables.append({**cfg, "files": [sh[cfg["name"]]["file"] for sh in shards],
                       "rows": sum(sh[cfg["name"]]["rows"] for sh in shards)})
    man = {"format": FORMAT, "version": VERSION, "num_shards": num, "hash": "splitmix64",
           "sparse": tables,
           "dense": None if dense_config is None else
           {**dense_config, "files": [sh["<dense>"]["file"] for sh in shards]}}
    tmp = os.path.join(dirname, "manifest.json.tmp")
    with open(tmp, "w") as f:
        json.dump(man, f, indent=1)
    os.replace(tmp, os.path.join(dirname, "manifest.json"))
    return man


def read_manifest(dirname: str) -> dict:
    path = os.path.join(dirname, "manifest.json")
    try:
        with open(path) as f:
            man = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"fleet.init_server: {path} does not exist (not a checkpoint "
                                "written by fleet.save_persistables in parameter-server "
                                "mode)") from None
    if man.get("format") != FORMAT or man.get("version") != VERSION:
        raise ValueError(f"fleet.init_server: {path} is not a {FORMAT} v{VERSION} manifest "
                         f"(format {man.get('format')!r}, version {man.get('version')!r})")
    return man


def _npz(dirname, name):
    path = os.path.join(dirname, os.path.basename(name))
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def load_tables(dirname: str, index: int, num: int):
    """The tables server `index` of `num` holds after loading `dirname`:
    ``({name: SparseTable}, DenseTable | None)``."""
    man = read_manifest(dirname)
    sparse = {}
    for cfg in man["sparse"]:
        t = SparseTable(cfg["name"], cfg["dim"], cfg["rule"], cfg["init"], cfg["seed"],
                        cfg["vocab"], cfg.get("entry"))
        for f in cfg["files"]:
            arrays = _npz(dirname, f)
            keep = shard_of(arrays["ids"], num) == index
            t.load_rows({k: v[keep] for k, v in arrays.items()})
        sparse[t.name] = t
    dense = None
    d = man["dense"]
    if d is not None:
        from fw.distributed.ps.client import dense_bounds

        b, e = dense_bounds(d["total"], num)[index]
        dense = DenseTable("<dense>", b, e, d["rule"])
        filled = 0
        for f in d["files"]:
            arrays = _npz(dirname, f)
            sb, se = int(arrays["begin"]), int(arrays["end"])
            lo, hi = max(b, sb), min(e, se)
            if lo >= hi:
                continue
            dense.values[0, lo - b:hi - b] = arrays["values"][lo - sb:hi - sb]
            for k, st in dense.states.items():
                if st.shape[1] == 1:          # a scalar state (Adam's step count)
                    st[0, 0] = arrays[k][0]
                else:
                    st[0, lo - b:hi - b] = arrays[k][lo - sb:hi - sb]
            filled += hi - lo
        if filled != e - b:
            raise ValueError(f"fleet.init_server: {dirname} covers {filled} of the "
                             f"{e - b} dense values of server {index}")
        dense.initialized = True
    return sparse, dense
