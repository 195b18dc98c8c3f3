"""Collectives of picklable Python objects: all_gather_object,
broadcast_object_list, scatter_object_list (Paddle 3.x names).

Objects are pickled (the only place fw.distributed pickles: tensors always go as
raw buffers) and moved as bytes in two rounds, sizes then payload, each with the
group's timeout. Unpickling runs code chosen by the sending rank, so these are
for ranks of one trusted job, as in Paddle and PyTorch.
"""
from __future__ import annotations

import pickle

import numpy as np

from fw.distributed.communication._issue import group_rank_of, issue, noop, resolve

__all__ = ["all_gather_object", "broadcast_object_list", "scatter_object_list"]


def _dumps(obj, fn):
    try:
        return np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)
    except Exception as exc:  # noqa: BLE001
        raise TypeError(f"fw.distributed.{fn}: cannot pickle {type(obj).__name__}: {exc}") \
            from exc


def _loads(b):
    return pickle.loads(b.tobytes())


def all_gather_object(object_list, obj, group=None):
    """Gather a picklable Python object from every rank into `object_list`.

    Objects travel pickled; `object_list` is extended in group-rank order.

    Args:
        object_list (list): the output list.
        obj (object): this rank's picklable object.
        group (Group, optional): the group to run in; None for the world. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> out = []
        >>> dist.all_gather_object(out, {"step": 3})
        >>> out
        [{'step': 3}]
    """
    fn = "all_gather_object"
    if not isinstance(object_list, list):
        raise TypeError(f"fw.distributed.{fn}: object_list must be a list, got "
                        f"{type(object_list).__name__}")
    g = resolve(group, fn)
    if g is None:
        return None
    data = _dumps(obj, fn)
    mine = np.array([data.size], np.int64)
    sizes = np.empty(g.nranks, np.int64)
    issue(g, fn, [mine], {"stage": "sizes"}, lambda e: e.allgather(mine, sizes), None, True,
          keep=(mine, sizes))
    recv = np.empty(int(sizes.sum()), np.uint8)
    issue(g, fn, [data], {"stage": "payload"},
          lambda e: e.allgatherv(data, recv, sizes.tolist()), None, True, shape_any=True,
          keep=(data, recv))
    offs = np.concatenate([[0], np.cumsum(sizes)])
    object_list.extend(_loads(recv[offs[i]:offs[i + 1]]) for i in range(g.nranks))
    return None


def broadcast_object_list(object_list, src, group=None):
    """Replace the contents of `object_list` on every rank with global rank
    `src`'s (the objects travel pickled).

    Args:
        object_list (list): the objects to send on `src`; overwritten elsewhere.
        src (int): the sending global rank.
        group (Group, optional): the group to run in; None for the world. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> objs = [{"lr": 0.1}, "cfg"]
        >>> dist.broadcast_object_list(objs, src=0)
        >>> objs
        [{'lr': 0.1}, 'cfg']
    """
    fn = "broadcast_object_list"
    if not isinstance(object_list, list):
        raise TypeError(f"fw.distributed.{fn}: object_list must be a list, got "
                        f"{type(object_list).__name__}")
    g = resolve(group, fn)
    if g is None:
        return None
    root = group_rank_of(g, src, fn, "src")
    data = _dumps(list(object_list), fn) if g.rank == root else None
    size = np.array([data.size if data is not None else 0], np.int64)
    issue(g, fn, [size], {"stage": "size"}, lambda e: e.bcast(size, root), None, True,
          root=root, keep=size)
    if data is None:
        data = np.empty(int(size[0]), np.uint8)
    issue(g, fn, [data], {"stage": "payload"}, lambda e: e.bcast(data, root), None, True,
          root=root, keep=data)
    if g.rank != root:
        object_list[:] = _loads(data)
    return None


def scatter_object_list(out_object_list, in_object_list=None, src=0, group=None):
    """Send ``in_object_list[i]`` from global rank `src` to group rank i.

    Each rank's `out_object_list` becomes ``[the object it received]``.

    Args:
        out_object_list (list): the output list (its contents are replaced).
        in_object_list (list, optional): one picklable object per group rank, read on
            `src`. Default: None.
        src (int, optional): the sending global rank. Default: 0.
        group (Group, optional): the group to run in; None for the world. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> out = []
        >>> dist.scatter_object_list(out, [[1, 2]], src=0)
        >>> out
        [[1, 2]]
    """
    fn = "scatter_object_list"
    if not isinstance(out_object_list, list):
        raise TypeError(f"fw.distributed.{fn}: out_object_list must be a list, got "
                        f"{type(out_object_list).__name__}")
    g = resolve(group, fn)
    if g is None:
        return noop(True)
    root = group_rank_of(g, src, fn, "src")
    n = g.nranks
    sizes = np.zeros(n, np.int64)
    chunks = None
    if g.rank == root:
        if not isinstance(in_object_list, (list, tuple)) or len(in_object_list) != n:
            raise ValueError(f"fw.distributed.{fn}: in_object_list must be a list of {n} "
                             f"objects on the source rank {src}, got {in_object_list!r:.80}")
        chunks = [_dumps(o, fn) for o in in_object_list]
        sizes[:] = [c.size for c in chunks]
    issue(g, fn, [sizes], {"stage": "sizes"}, lambda e: e.bcast(sizes, root), None, True,
          root=root, keep=sizes)
    width = int(sizes.max()) if n else 0
    send = None
    if chunks is not None:
        send = np.zeros((n, width), np.uint8)
        for i, c in enumerate(chunks):
            send[i, :c.size] = c
    recv = np.empty(width, np.uint8)
    issue(g, fn, [recv], {"stage": "payload"}, lambda e: e.scatter(send, recv, root), None,
          True, root=root, keep=(send, recv))
    out_object_list[:] = [_loads(recv[:int(sizes[g.rank])])]
    return None
