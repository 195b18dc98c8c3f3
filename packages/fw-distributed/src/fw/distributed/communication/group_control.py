"""Group life cycle beyond new_group/destroy: `wait` (finish a tensor's pending
ops), `shutdown_process_group` / `restart_process_group` (Paddle 3.x,
``paddle.distributed.collective``).

Paddle shuts a group down to free its communicator (NCCL memory, for fault
tolerance) while keeping the `Group` object, and restarts it later with the same
id and ranks. fw does the same with the group's engines: shutdown frees its MPI
communicator (and NCCL communicator, if one was made); restart makes a new MPI
communicator over the same ranks (`MPI_Comm_create_group` after a store barrier of
the members, as `new_group`), so code holding the `Group` keeps working. An op on a
shut-down group raises an error saying so.
"""
from __future__ import annotations

import numpy as np

from fw.core.tensor import Tensor
from fw.distributed.communication import group as _group
from fw.distributed.communication._issue import resolve
from fw.distributed.communication._world import state

__all__ = ["wait", "shutdown_process_group", "restart_process_group"]

# group id -> Group, the groups shut down and not restarted yet (Paddle's
# _shutdown_group_map_by_name, keyed by id: fw's group names derive from ids)
_shut = {}


def wait(tensor, group=None, use_calc_stream=True):
    """Wait until every unfinished asynchronous op of `group` that reads or writes
    `tensor` has completed (Paddle synchronises the tensor's CUDA stream; fw's CPU
    engine has no streams, so it completes the ops themselves).

    Args:
        tensor (Tensor): the tensor used by earlier ``sync_op=False`` ops.
        group (Group, optional): the group whose ops to finish; None for every group.
            Default: None.
        use_calc_stream (bool, optional): accepted for Paddle compatibility (no
            streams on the CPU engine). Default: True.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> x = fw.ones([3])
        >>> task = dist.all_reduce(x, sync_op=False)
        >>> dist.wait(x)
        >>> task.is_completed(), x.tolist()
        (True, [1.0, 1.0, 1.0])
    """
    fn = "wait"
    if not isinstance(tensor, Tensor):
        raise TypeError(f"fw.distributed.{fn}: tensor must be a Tensor, got "
                        f"{type(tensor).__name__}")
    if group is not None and resolve(group, fn) is None:
        return None     # not a member: nothing of ours runs there (as Paddle)
    from fw.distributed.communication.task import _pending

    mine = tensor._data
    for t in list(_pending.values()):
        if group is not None and t.group is not group:
            continue
        keep = t.keep if isinstance(t.keep, (list, tuple)) else [t.keep]
        if any(isinstance(k, np.ndarray) and np.shares_memory(k, mine) for k in keep):
            t.wait()
    return None


def _groups_of(group, fn):
    if group is not None:
        if not hasattr(group, "ranks") or not hasattr(group, "id"):
            raise TypeError(f"fw.distributed.{fn}: group must be a Group from new_group() or "
                            f"None, got {type(group).__name__}")
        if group.id == 0:
            raise ValueError(f"fw.distributed.{fn}: the world group (id 0) cannot be shut down "
                             f"or restarted; pass a group from new_group()")
        return [group]
    return None


def shutdown_process_group(group=None):
    """Free a group's communicators but keep the `Group`, to be brought back by
    `restart_process_group`; ops on it meanwhile raise an error.

    Args:
        group (Group, optional): the group; None for every group except the world
            group. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> g = dist.new_group([0])
        >>> dist.shutdown_process_group(g)
        >>> try:
        ...     dist.all_reduce(fw.ones([2]), group=g)
        ... except ValueError as e:
        ...     print("restart_process_group" in str(e))
        True
        >>> dist.restart_process_group(g)
        >>> x = fw.ones([2])
        >>> _ = dist.all_reduce(x, group=g)
        >>> x.tolist()
        [1.0, 1.0]
    """
    fn = "shutdown_process_group"
    _group._require_init(fn)
    todo = _groups_of(group, fn)
    if todo is None:
        todo = [g for gid, g in sorted(_group._groups.items()) if gid != 0]
    for g in todo:
        if g.id in _shut or g.id not in _group._groups:
            continue
        if g.engine is not None:
            g.engine.free()
        if g.nccl is not None:
            g.nccl.free()
            g.nccl = None
        g.engine = None
        g._shut_down = True
        _shut[g.id] = g
    return None


def restart_process_group(group=None):
    """Give a group shut down by `shutdown_process_group` new communicators over the
    same ranks. Every member calls it (a collective over the group's members).

    Args:
        group (Group, optional): the group; None for every group that is shut down,
            in id order. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> g = dist.new_group([0])
        >>> dist.shutdown_process_group()
        >>> dist.restart_process_group()
        >>> g.backend
        'SELF'
    """
    fn = "restart_process_group"
    _group._require_init(fn)
    todo = _groups_of(group, fn)
    if todo is None:
        todo = [_shut[k] for k in sorted(_shut)]
    for g in todo:
        if _shut.pop(g.id, None) is None:
            continue      # not shut down: nothing to do (as Paddle)
        if state.rank in g.ranks:
            if state.store is not None and len(g.ranks) > 1:
                from fw.distributed.store import store_barrier

                epoch = getattr(g, "_restarts", 0) + 1
                g._restarts = epoch
                store_barrier(state.store, state.key("comm", "restart", g.id, epoch),
                              g.ranks.index(state.rank), len(g.ranks), g.timeout)
            g.engine = state.world.engine.split(g.ranks)
        g._shut_down = False
    return None
