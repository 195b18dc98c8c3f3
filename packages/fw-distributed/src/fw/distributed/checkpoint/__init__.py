"""Sharded checkpoints (Paddle's ``paddle.distributed.save_state_dict`` /
``load_state_dict``): each rank writes its own shard, one index describes them all,
and loading with another world size or another split re-shards.

Layout of a checkpoint directory::

    index.json                      {"format": "fw-dist-ckpt/1", "world_size": N,
                                     "tensors": {key: {"global_shape", "dtype",
                                                       "shards": [{"file", "entry",
                                                                   "offset", "shape"}]}}}
    shard-00000-of-00002.safetensors   rank 0's pieces (`fw.save`: safetensors + checksum)
    shard-00001-of-00002.safetensors

A value of the state dict is either a whole tensor (replicated on every rank: only
the lowest rank of the group writes it) or a `ShardedWeight`: this rank's box
(``global_offset``, local shape) of a tensor of ``global_shape``. Loading fills
each requested tensor or box from every saved box that overlaps it
(`_boxes.copy_overlap`), so a checkpoint written by tensor parallel on 2 ranks loads
into a dense model in one process, and the other way round. Nothing is unpickled:
the shards are safetensors read by `fw.load`, the index is JSON.
"""

from __future__ import annotations

import json
import os

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distributed import _fleet_comm as comm
from fw.distributed.checkpoint._boxes import copy_overlap, covers, intersect

__all__ = ["ShardedWeight", "save_state_dict", "load_state_dict", "sharded_state_dict",
           "intersect", "copy_overlap", "CheckpointIndexError"]

FORMAT = "fw-dist-ckpt/1"


class CheckpointIndexError(ValueError):
    """A checkpoint directory's index is missing, malformed or does not hold a key.

    Examples:
        >>> import fw
        >>> import fw.distributed.checkpoint as dcp
        >>> try:
        ...     dcp.load_state_dict({}, "no_such_checkpoint")
        ... except dcp.CheckpointIndexError as e:
        ...     print("index.json does not exist" in str(e))
        True
    """


class ShardedWeight:
    """This rank's box of a larger tensor: `local` (a Tensor or array, written into in
    place on load), the whole tensor's `global_shape` and this box's `global_offset`.

    Args:
        local (Tensor|numpy.ndarray): this rank's box.
        global_shape (list[int]): the whole tensor's shape.
        global_offset (list[int]): where the box starts in it.

    Examples:
        >>> import fw
        >>> from fw.distributed.checkpoint import ShardedWeight
        >>> ShardedWeight(fw.zeros([2, 4]), [4, 4], [2, 0])
        ShardedWeight(shape=[2, 4], global_shape=[4, 4], offset=[2, 0])
    """

    def __init__(self, local, global_shape, global_offset):
        self.local = local
        self.global_shape = [int(x) for x in global_shape]
        self.global_offset = [int(x) for x in global_offset]
        a = _array(local)
        if len(self.global_shape) != a.ndim or len(self.global_offset) != a.ndim:
            raise ValueError(f"ShardedWeight: local shape {list(a.shape)}, global_shape "
                             f"{self.global_shape} and global_offset {self.global_offset} "
                             f"must have the same rank")
        for o, s, g in zip(self.global_offset, a.shape, self.global_shape):
            if o < 0 or o + s > g:
                raise ValueError(f"ShardedWeight: the box at {self.global_offset} of shape "
                                 f"{list(a.shape)} does not fit in {self.global_shape}")

    def __repr__(self):
        return (f"ShardedWeight(shape={list(_array(self.local).shape)}, "
                f"global_shape={self.global_shape}, offset={self.global_offset})")


def _array(v):
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, np.ndarray):
        return v
    raise TypeError(f"sharded checkpoint: values must be Tensors, arrays or ShardedWeight, "
                    f"got {type(v).__name__}")


def sharded_state_dict(model):
    """`model.state_dict()` with each tensor-parallel parameter (``is_distributed``
    with a ``split_axis``) described as a `ShardedWeight` of the dense tensor, ready
    for `save_state_dict`.

    Args:
        model (Layer): the model.

    Returns:
        dict: name -> Tensor or ShardedWeight.

    Examples:
        >>> import fw
        >>> from fw.distributed.checkpoint import sharded_state_dict
        >>> sorted(sharded_state_dict(fw.nn.Linear(4, 2)))
        ['bias', 'weight']
    """
    from fw.distributed.fleet import fleet_base

    hcg = fleet_base._hcg_or_none()
    mp = hcg.get_model_parallel_group() if hcg is not None else None
    out = {}
    for k, t in model.state_dict().items():
        ax = getattr(t, "split_axis", None)
        if getattr(t, "is_distributed", False) and ax is not None and mp is not None:
            shape = list(t._data.shape)
            gshape = list(shape)
            gshape[ax] *= mp.nranks
            off = [0] * len(shape)
            off[ax] = mp.rank * shape[ax]
            out[k] = ShardedWeight(t, gshape, off)
        else:
            out[k] = t
    return out


def _is_whole(v):
    return (not any(v.global_offset)
            and list(_array(v.local).shape) == list(v.global_shape))


def _file(rank, n):
    return f"shard-{rank:05d}-of-{n:05d}.safetensors"


def save_state_dict(state_dict, path, process_group=None, coordinator_rank=0):
    """Write a (possibly sharded) state dict as a distributed checkpoint directory.

    A collective over `process_group`: every rank calls it. Each whole tensor is written
    once (by the lowest rank holding it), each `ShardedWeight` by its owner; the
    directory gets safetensors shard files and an ``index.json`` that `load_state_dict`
    reads back under any world size or split.

    Args:
        state_dict (dict[str, Tensor|ShardedWeight]): the tensors to save.
        path (str): the checkpoint directory (created if needed).
        process_group (Group, optional): the ranks taking part. Default: None (all).
        coordinator_rank (int, optional): the rank that writes the index. Default: 0.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import os
        >>> import fw.distributed as dist
        >>> net = fw.nn.Linear(2, 2)
        >>> dist.save_state_dict(net.state_dict(), "ckpt")
        >>> sorted(os.listdir("ckpt"))
        ['index.json', 'shard-00000-of-00001.safetensors']
    """
    g = comm.world() if process_group is None else process_group
    n, r = g.nranks, g.rank
    os.makedirs(path, exist_ok=True)
    for key in state_dict:
        if not isinstance(key, str):
            raise TypeError(f"save_state_dict: keys must be strings, got {key!r}")
    # a whole (unsharded) tensor is written once, by the lowest rank that holds it:
    # replicated tensors by rank 0, a tensor only one rank has (a ZeRO owner's
    # optimizer state) by that rank
    # a ShardedWeight that is the whole tensor (a replicated piece, as flex's
    # build_sharded_state_dict makes) is saved as a whole tensor: written once
    state_dict = {k: v.local if isinstance(v, ShardedWeight) and _is_whole(v) else v
                  for k, v in state_dict.items()}
    whole = sorted(k for k, v in state_dict.items() if not isinstance(v, ShardedWeight))
    holders = comm.all_gather_bytes(json.dumps(whole).encode(), group=g)
    writer = {}
    for q, b in enumerate(holders):
        for k in json.loads(b):
            writer.setdefault(k, q)
    entries, meta = {}, {}
    for key, v in state_dict.items():
        if isinstance(v, ShardedWeight):
            a = np.ascontiguousarray(_array(v.local))
            gshape, off = v.global_shape, v.global_offset
        else:
            a = np.ascontiguousarray(_array(v))
            gshape, off = list(a.shape), [0] * a.ndim
            if writer[key] != r:
                meta[key] = {"global_shape": gshape, "dtype": str(a.dtype), "shards": []}
                continue
        entry = f"{key}@{r}"
        entries[entry] = a
        meta[key] = {"global_shape": gshape, "dtype": str(a.dtype),
                     "shards": [{"file": _file(r, n), "entry": entry, "offset": off,
                                 "shape": list(a.shape)}]}
    fw.save(entries, os.path.join(path, _file(r, n)))
    metas = comm.all_gather_bytes(json.dumps(meta).encode(), group=g)
    if r == coordinator_rank:
        tensors = {}
        for m in metas:
            for key, d in json.loads(m).items():
                cur = tensors.setdefault(key, {"global_shape": d["global_shape"],
                                               "dtype": d["dtype"], "shards": []})
                if cur["global_shape"] != d["global_shape"] or cur["dtype"] != d["dtype"]:
                    raise ValueError(f"save_state_dict: ranks disagree on {key!r}: "
                                     f"{cur['global_shape']} {cur['dtype']} vs "
                                     f"{d['global_shape']} {d['dtype']}")
                cur["shards"].extend(d["shards"])
        for key, d in tensors.items():
            boxes = [(s["offset"], s["shape"]) for s in d["shards"]]
            if not covers(boxes, d["global_shape"]):
                raise ValueError(f"save_state_dict: the shards of {key!r} do not cover its "
                                 f"global shape {d['global_shape']} exactly once")
        index = {"format": FORMAT, "world_size": n, "tensors": tensors}
        tmp = os.path.join(path, "index.json.tmp")
        with open(tmp, "w") as f:
            json.dump(index, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(path, "index.json"))
    comm.barrier(g)


def _read_index(path):
    p = os.path.join(path, "index.json")
    try:
        with open(p) as f:
            index = json.load(f)
    except FileNotFoundError:
        raise CheckpointIndexError(f"load_state_dict: {p} does not exist (not a sharded "
                                   f"checkpoint directory written by save_state_dict)") from None
    except json.JSONDecodeError as e:
        raise CheckpointIndexError(f"load_state_dict: {p} is not valid JSON: {e}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT or \
            not isinstance(index.get("tensors"), dict):
        raise CheckpointIndexError(f"load_state_dict: {p} is not an index of format {FORMAT}")
    return index


def load_state_dict(state_dict, path, process_group=None, coordinator_rank=0):
    """Fill a state dict's tensors in place from a checkpoint of `save_state_dict`.

    Works whatever world size and split wrote the checkpoint: each rank reads the
    slices its tensors (and `ShardedWeight` boxes) cover. A key missing from the
    checkpoint or a global shape that differs raises an error naming the key.

    Args:
        state_dict (dict[str, Tensor|ShardedWeight]): the tensors to fill, in place.
        path (str): the checkpoint directory.
        process_group (Group, optional): the ranks taking part. Default: None (all).
        coordinator_rank (int, optional): accepted for Paddle compatibility. Default: 0.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> src = fw.nn.Linear(2, 2)
        >>> dist.save_state_dict(src.state_dict(), "ckpt")
        >>> dst = fw.nn.Linear(2, 2)
        >>> dist.load_state_dict(dst.state_dict(), "ckpt")
        >>> bool((dst.weight == src.weight).all())
        True
    """
    index = _read_index(path)
    files = {}

    def entry(fname, name):
        if fname not in files:
            if os.path.basename(fname) != fname:
                raise CheckpointIndexError(f"load_state_dict: bad file name {fname!r} in the "
                                           f"index")
            files[fname] = fw.load(os.path.join(path, fname), return_numpy=True)
        return np.asarray(files[fname][name])

    for key, v in state_dict.items():
        d = index["tensors"].get(key)
        if d is None:
            raise CheckpointIndexError(f"load_state_dict: {key!r} is not in the checkpoint at "
                                       f"{path} (it holds {sorted(index['tensors'])[:10]})")
        if isinstance(v, ShardedWeight):
            dst, off, gshape = _array(v.local), v.global_offset, v.global_shape
        else:
            dst = _array(v)
            off, gshape = [0] * dst.ndim, list(dst.shape)
        if list(gshape) != list(d["global_shape"]):
            raise ValueError(f"load_state_dict: {key!r} has global shape {d['global_shape']} "
                             f"in the checkpoint but {list(gshape)} here")
        buf = np.empty(dst.shape, dtype=dst.dtype)
        got = 0
        for s in d["shards"]:
            if intersect(off, dst.shape, s["offset"], s["shape"]) is None:
                continue
            src = entry(s["file"], s["entry"])
            got += copy_overlap(buf, off, src.astype(dst.dtype, copy=False), s["offset"])
        if got != dst.size:
            raise ValueError(f"load_state_dict: the checkpoint's shards cover {got} of the "
                             f"{dst.size} elements of {key!r} requested here")
        np.copyto(dst, buf)
        if isinstance(v, Tensor):
            from fw.core.internal import bump_version

            bump_version(v)
        elif isinstance(v, ShardedWeight) and isinstance(v.local, Tensor):
            from fw.core.internal import bump_version

            bump_version(v.local)
