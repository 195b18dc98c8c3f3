"""Point-to-point object lists: send_object_list, recv_object_list (Paddle 3.x).

The objects of the list are pickled one by one and travel as two p2p messages on
the group's engine: their sizes (int64, one per object), then the concatenated
bytes. Both messages go through `send`/`recv`, so they carry the desync check's
header: a receiving list of another length is a `CollectiveDesyncError`, never a
misread payload. Unpickling runs code chosen by the sender: for ranks of one
trusted job, as in Paddle and PyTorch.
"""
from __future__ import annotations

import pickle

import numpy as np

import fw
from fw.distributed.communication._issue import resolve
from fw.distributed.communication.p2p import recv, send

__all__ = ["send_object_list", "recv_object_list"]


def _peer(g, rank, in_group, fn, arg):
    """The global rank named by `rank` (global) or `in_group` (a group rank): exactly
    one of them, as Paddle requires."""
    if (rank is None) == (in_group is None):
        raise ValueError(f"fw.distributed.{fn}: give exactly one of {arg} (a global rank) and "
                         f"{arg}_in_group (a rank of the group), got {arg}={rank!r}, "
                         f"{arg}_in_group={in_group!r}")
    if in_group is None:
        return rank
    if isinstance(in_group, bool) or not isinstance(in_group, (int, np.integer)) or \
            not 0 <= int(in_group) < g.nranks:
        raise ValueError(f"fw.distributed.{fn}: {arg}_in_group must be a rank of group {g.id} "
                         f"in [0, {g.nranks}), got {in_group!r}")
    return g.ranks[int(in_group)]


def _check_list(object_list, fn):
    if not isinstance(object_list, list) or not object_list:
        raise TypeError(f"fw.distributed.{fn}: object_list must be a non-empty list, got "
                        f"{type(object_list).__name__}"
                        f"{'' if not isinstance(object_list, list) else ' of length 0'}")


def send_object_list(object_list, dst=None, group=None, dst_in_group=None):
    """Send a list of picklable Python objects to one rank, which receives them with
    `recv_object_list` into a list of the same length.

    Args:
        object_list (list): the objects to send (each must be picklable).
        dst (int, optional): the receiving global rank. Default: None.
        group (Group, optional): the group to run in; None for the world. Default: None.
        dst_in_group (int, optional): the receiving rank within `group`, instead of
            `dst`. Default: None.

    Returns:
        None.

    Examples:
        Run under the launcher with two ranks (``python -m fw.distributed.launch
        --nproc_per_node 2 demo.py``)::

            import fw.distributed as dist
            dist.init_parallel_env()
            if dist.get_rank() == 0:
                dist.send_object_list([{"lr": 0.1}, "done"], dst=1)
            else:
                got = [None, None]
                dist.recv_object_list(got, src=0)   # got == [{'lr': 0.1}, 'done']

        In one process there is no peer; the error says so:

        >>> import fw
        >>> import fw.distributed as dist
        >>> try:
        ...     dist.send_object_list([1], dst=0)
        ... except ValueError as e:
        ...     print("this rank itself" in str(e))
        True
    """
    fn = "send_object_list"
    _check_list(object_list, fn)
    g = resolve(group, fn)
    if g is None:
        return None
    peer = _peer(g, dst, dst_in_group, fn, "dst")
    blobs = []
    for i, obj in enumerate(object_list):
        try:
            blobs.append(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception as exc:  # noqa: BLE001
            raise TypeError(f"fw.distributed.{fn}: object_list[{i}] "
                            f"({type(obj).__name__}) cannot be pickled: {exc}") from exc
    sizes = np.array([len(b) for b in blobs], np.int64)
    payload = np.frombuffer(b"".join(blobs), np.uint8)
    send(fw.to_tensor(sizes), dst=peer, group=group)
    send(fw.to_tensor(payload), dst=peer, group=group)
    return None


def recv_object_list(object_list, src=None, group=None, src_in_group=None):
    """Receive a list of Python objects sent by `send_object_list`, replacing the
    elements of `object_list` in place (it must have as many elements as were sent).

    Args:
        object_list (list): placeholders, overwritten with the received objects.
        src (int, optional): the sending global rank. Default: None.
        group (Group, optional): the group to run in; None for the world. Default: None.
        src_in_group (int, optional): the sending rank within `group`, instead of
            `src`. Default: None.

    Returns:
        None.

    Examples:
        Needs two ranks; see `send_object_list` for the full program::

            got = [None, None]
            dist.recv_object_list(got, src=0)

        >>> import fw
        >>> import fw.distributed as dist
        >>> try:
        ...     dist.recv_object_list([None], src=0, src_in_group=0)
        ... except ValueError as e:
        ...     print("exactly one of src" in str(e))
        True
    """
    fn = "recv_object_list"
    _check_list(object_list, fn)
    g = resolve(group, fn)
    if g is None:
        return None
    peer = _peer(g, src, src_in_group, fn, "src")
    sizes = fw.zeros([len(object_list)], "int64")
    recv(sizes, src=peer, group=group)
    n = sizes.numpy().astype(np.int64)
    if (n < 0).any():
        raise ValueError(f"fw.distributed.{fn}: rank {peer} sent negative sizes {n.tolist()}")
    payload = fw.zeros([int(n.sum())], "uint8")
    recv(payload, src=peer, group=group)
    data = payload.numpy().tobytes()
    offs = np.concatenate([[0], np.cumsum(n)])
    for i in range(len(object_list)):
        object_list[i] = pickle.loads(data[offs[i]:offs[i + 1]])
    return None
