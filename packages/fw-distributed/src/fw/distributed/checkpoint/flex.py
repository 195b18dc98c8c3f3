"""Paddle 3.3's flex-checkpoint names on fw's sharded checkpoints:
`ShardedWeight` (with the flex signature: key, local tensor, local shape, global
shape and offset), `ShardedStateDict`, `build_sharded_state_dict` and
`load_merged_state_dict`.

They sit on the checkpoint format of this package (``checkpoint/__init__.py``): a
flex `ShardedWeight` *is* one of its boxes, so ``save_state_dict`` writes it as this
rank's shard and ``load_state_dict`` re-shards into it under any world size.
`load_merged_state_dict` reads a checkpoint back as whole (unsharded) tensors.
"""
from __future__ import annotations

import numpy as np

import fw
from fw.distributed.checkpoint import ShardedWeight as _Box
from fw.distributed.checkpoint import _array, _read_index, load_state_dict

__all__ = ["ShardedWeight", "ShardedStateDict", "shard_weight", "build_sharded_state_dict",
           "load_merged_state_dict"]


class ShardedWeight(_Box):
    """This rank's piece of a checkpointed tensor, described by its place in the whole
    (Paddle's ``paddle.distributed.ShardedWeight``).

    Args:
        key (str): the tensor's name in the checkpoint.
        local_tensor (Tensor): this rank's piece (filled in place on load).
        local_shape (tuple[int]): its shape.
        global_shape (tuple[int]): the whole tensor's shape.
        global_offset (tuple[int]): where the piece starts in the whole tensor.
        is_flattened (bool, optional): the piece is a flattened range of the box
            (Paddle's ZeRO-style flattening); not supported by fw (must be False).
            Default: False.
        flattened_range (slice, optional): that range. Default: None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> w = dist.ShardedWeight("w", fw.zeros([2, 4]), (2, 4), (4, 4), (2, 0))
        >>> w.key, w.global_shape, w.global_offset
        ('w', [4, 4], [2, 0])
    """

    def __init__(self, key, local_tensor, local_shape, global_shape, global_offset,
                 is_flattened=False, flattened_range=None):
        if not isinstance(key, str) or not key:
            raise TypeError(f"ShardedWeight: key must be a non-empty str, got {key!r}")
        if is_flattened or flattened_range is not None:
            raise NotImplementedError(f"ShardedWeight {key!r}: flattened pieces "
                                      "(is_flattened=True, flattened_range) are not supported; "
                                      "pass the piece as a box of local_shape")
        super().__init__(local_tensor, global_shape, global_offset)
        actual = list(_array(local_tensor).shape)
        if [int(s) for s in local_shape] != actual:
            raise ValueError(f"ShardedWeight {key!r}: local_shape {list(local_shape)} does not "
                             f"match local_tensor's shape {actual}")
        self.key = key
        self.local_tensor = local_tensor
        self.local_shape = tuple(actual)
        self.is_flattened = False
        self.flattened_range = None

    def __repr__(self):
        return (f"ShardedWeight(key={self.key!r}, local_shape={list(self.local_shape)}, "
                f"global_shape={self.global_shape}, global_offset={self.global_offset})")


# Paddle's alias (a typing construct there too): a dict of name -> ShardedWeight
ShardedStateDict = dict[str, ShardedWeight]


def shard_weight(key, weight, axis, group):
    """Describe `weight` as this rank's piece of a tensor split evenly along `axis`
    over `group` (every member holds an equal piece; this rank's starts at
    ``group.rank * weight.shape[axis]``), as a `ShardedWeight` for ``save_state_dict``.

    Args:
        key (str): the tensor's name in the checkpoint.
        weight (Tensor): this rank's piece.
        axis (int): the split axis, ``0 <= axis < weight.ndim``.
        group (Group): the ranks that hold the pieces (``fw.distributed.new_group`` or
            fleet's model-parallel group).

    Returns:
        ShardedWeight: the piece with its global shape and offset.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> w = dist.shard_weight("fc.w", fw.zeros([2, 3]), 1, dist.new_group([0]))
        >>> w.global_shape, w.global_offset
        ([2, 3], [0, 0])
    """
    fn = "fw.distributed.shard_weight"
    shape = list(_array(weight).shape)
    if isinstance(axis, bool) or not isinstance(axis, int) or not 0 <= axis < len(shape):
        raise ValueError(f"{fn}: axis {axis!r} is not an axis of {key!r}'s shape {shape} "
                         f"(0 <= axis < {len(shape)})")
    nranks, rank = getattr(group, "nranks", None), getattr(group, "rank", None)
    if not isinstance(nranks, int) or not isinstance(rank, int):
        raise TypeError(f"{fn}: group must be a Group (with rank and nranks), got "
                        f"{type(group).__name__}")
    if rank < 0:
        raise ValueError(f"{fn}: this process is not a member of group {group.ranks!r}, "
                         f"so it holds no piece of {key!r}")
    gshape = list(shape)
    gshape[axis] *= nranks
    off = [0] * len(shape)
    off[axis] = rank * shape[axis]
    return ShardedWeight(key, weight, shape, gshape, off)


def build_sharded_state_dict(state_dict, shard_rules=None, prefix=""):
    """Describe a state dict as `ShardedWeight` pieces, ready for ``save_state_dict``:
    the tensors named in `shard_rules` are this rank's tensor-parallel shards along the
    given axis (the whole tensor is the concatenation over fleet's model-parallel
    group, this rank's piece at ``rank * local size``); the others are replicated
    (offset 0, the whole tensor).

    Args:
        state_dict (dict[str, Tensor]): the local tensors.
        shard_rules (dict[str, int], optional): name -> tensor-parallel axis. Default:
            None (nothing sharded).
        prefix (str, optional): put before every key. Default: "".

    Returns:
        dict[str, ShardedWeight]: the pieces, keyed ``prefix + name``.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> sd = dist.build_sharded_state_dict(fw.nn.Linear(4, 2).state_dict(), prefix="fc.")
        >>> sorted(sd), sd["fc.weight"].global_shape
        (['fc.bias', 'fc.weight'], [4, 2])
    """
    fn = "build_sharded_state_dict"
    if not isinstance(state_dict, dict):
        raise TypeError(f"fw.distributed.{fn}: state_dict must be a dict, got "
                        f"{type(state_dict).__name__}")
    rules = dict(shard_rules or {})
    unknown = sorted(set(rules) - set(state_dict))
    if unknown:
        raise KeyError(f"fw.distributed.{fn}: shard_rules name {unknown}, which are not in "
                       f"the state dict")
    group = None
    if rules:
        from fw.distributed import _fleet_comm as comm
        from fw.distributed.fleet import fleet_base

        hcg = fleet_base._hcg_or_none()
        group = hcg.get_model_parallel_group() if hcg is not None else comm.self_group()
    out = {}
    for name, t in state_dict.items():
        key = f"{prefix}{name}"
        shape = list(_array(t).shape)
        if name in rules:
            ax = rules[name]
            if isinstance(ax, bool) or not isinstance(ax, int) or not -len(shape) <= ax < \
                    len(shape):
                raise ValueError(f"fw.distributed.{fn}: axis {ax!r} for {name!r} is not an "
                                 f"axis of its shape {shape}")
            ax %= len(shape)
            gshape = list(shape)
            gshape[ax] *= group.nranks
            off = [0] * len(shape)
            off[ax] = max(group.rank, 0) * shape[ax]
            out[key] = ShardedWeight(key, t, shape, gshape, off)
        else:
            out[key] = ShardedWeight(key, t, shape, shape, [0] * len(shape))
    return out


def load_merged_state_dict(path, prefix=None, unique_id=None, offload=False, aoa_config=None,
                           safetensors=False):
    """Read a checkpoint written by ``save_state_dict`` (under any world size) as whole
    tensors: every shard of each tensor is merged into one dense tensor.

    Args:
        path (str): the checkpoint directory.
        prefix (str, optional): only the keys that start with it. Default: None (all).
        unique_id (int, optional): Paddle's checkpoint version; fw keeps one version per
            directory, so it must be None or 0. Default: None.
        offload (bool, optional): accepted (the tensors are on the CPU). Default: False.
        aoa_config (dict, optional): Paddle's key-rewriting config; not supported (must
            be None). Default: None.
        safetensors (bool, optional): accepted (fw's shards are always safetensors).
            Default: False.

    Returns:
        dict[str, Tensor]: key -> the whole tensor.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> net = fw.nn.Linear(3, 2)
        >>> dist.save_state_dict(net.state_dict(), "ckpt")
        >>> merged = dist.load_merged_state_dict("ckpt", prefix="w")
        >>> list(merged), bool((merged["weight"] == net.weight).all())
        (['weight'], True)
    """
    fn = "load_merged_state_dict"
    if unique_id not in (None, 0):
        raise ValueError(f"fw.distributed.{fn}: unique_id={unique_id!r}: fw keeps one "
                         f"checkpoint version per directory (None or 0)")
    if aoa_config is not None:
        raise NotImplementedError(f"fw.distributed.{fn}: aoa_config (key rewriting on load) is "
                                  f"not supported; pass None and rename the keys afterwards")
    index = _read_index(path)
    want = {}
    for key, d in index["tensors"].items():
        if prefix is None or key.startswith(prefix):
            want[key] = np.zeros(d["global_shape"], dtype=np.dtype(d["dtype"]))
    load_state_dict(want, path)
    return {k: fw.to_tensor(v) for k, v in want.items()}
