"""Point-to-point ops: send, recv, isend, irecv (Paddle 3.x names; `dst`/`src`
are global ranks). Each op returns a `Task` with ``wait()``.

With the desync check on (the default, see `_signature`), every message is
preceded by a small header (the sender's signature: dtype, shape, sequence
number with that peer) on its own tag; the receiver compares it with its own
tensor and raises `CollectiveDesyncError` naming both sides, instead of reading
a message of another shape.
"""
from __future__ import annotations

import numpy as np

from fw.distributed._flight_recorder import recorder
from fw.distributed.communication import _lowering, _signature
from fw.distributed.communication import _tensors as T
from fw.distributed.communication._issue import group_rank_of, resolve
from fw.distributed.communication.task import (
    Task,
    _pending,
    check_usable,
    completed_task,
    progress_pending,
    track,
)

__all__ = ["send", "recv", "isend", "irecv"]

_TAG_HEADER = 7101
_TAG_DATA = 7102


def _start(tensor, peer, group, fn, sending, sync_op):
    if _lowering.tracing(tensor):   # no p2p op in programs: refuse, never run once at trace
        _lowering.refuse(fn)
    g = resolve(group, fn)
    if g is None:
        return completed_task()
    check_usable(fn)
    if _pending:
        progress_pending()
    arg = "dst" if sending else "src"
    if peer is None:
        peer = 0
    p = group_rank_of(g, peer, fn, arg)
    if p == g.rank:
        raise ValueError(f"fw.distributed.{fn}: {arg}={peer} is this rank itself")
    if sending:
        buf, done = T.send_buffer(tensor, fn, "tensor"), None
    else:
        buf, done = T.inplace_buffer(tensor, fn, "tensor")
    data_eng = g.engine
    if not T.is_host(buf):  # the data through NCCL; the signature header stays on the host
        from fw.distributed.communication import _engine_nccl

        data_eng = _engine_nccl.engine_for(g, fn)
    n = g._p2p_seq.get((peer, sending), 0) + 1
    g._p2p_seq[(peer, sending)] = n
    entry = recorder.record(g.id, n, fn, [buf.shape], [str(buf.dtype)], {arg: peer})
    g._last_p2p = entry     # not _last: p2p numbers ops per peer, not per group
    eng = g.engine
    reqs = []
    sig = None
    keep = [buf]
    check = _signature.enabled()
    try:
        if sending:
            if check:
                hdr = _signature.encode(n, "send", buf.dtype, buf.shape)
                keep.append(hdr)
                reqs.append(eng.isend(hdr, p, _TAG_HEADER))
            reqs.append(data_eng.isend(buf, p, _TAG_DATA))
        else:
            if check:
                hdr = np.empty(_signature.LEN, np.int64)
                mine = _signature.encode(n, "send", buf.dtype, buf.shape)
                me = g._global_rank
                keep += [hdr, mine]

                def compare():
                    if (hdr[4:] == mine[4:]).all() and hdr[0] == mine[0]:
                        return None
                    them = _signature.describe(hdr).replace("send(", "send(", 1)
                    ours = _signature.describe(mine).replace("send(", "recv(", 1)
                    return f"rank {peer} called {them} but rank {me} called {ours}"

                sig = (eng.irecv(hdr, p, _TAG_HEADER), compare, None)
            reqs.append(data_eng.irecv(buf, p, _TAG_DATA))
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - an MPI error at issue time
        t = Task(g, entry, [], None, sig, g.timeout, fn)
        t.peer = peer
        t._fail(t._mpi_error(exc))
    task = Task(g, entry, reqs, done, sig, g.timeout, fn)
    task.keep = keep
    task.peer = peer
    if sync_op:
        task.wait()
    else:
        track(task)
    return task


def send(tensor, dst=0, group=None, sync_op=True):
    """Send `tensor` to global rank `dst` (point to point).

    The receiver calls `recv` with a tensor of the same shape and dtype. A rank cannot
    send to itself, so a single process has nothing to pair with.

    Args:
        tensor (Tensor): the data to send.
        dst (int, optional): the receiving global rank. Default: 0.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): False returns at once with a `Task`. Default: True.

    Returns:
        Task: the operation's handle.

    Examples:
        Run under the launcher with two ranks (``python -m fw.distributed.launch
        --nproc_per_node 2 demo.py``)::

            import fw, fw.distributed as dist
            dist.init_parallel_env()
            x = fw.to_tensor([1, 2]) if dist.get_rank() == 0 else fw.zeros([2], "int64")
            if dist.get_rank() == 0:
                dist.send(x, dst=1)
            else:
                dist.recv(x, src=0)      # x is now [1, 2] on rank 1
    """
    return _start(tensor, dst, group, "send", True, sync_op)


def recv(tensor, src=0, group=None, sync_op=True):
    """Receive into `tensor` (in place) from global rank `src`.

    The sender's tensor must have the same dtype and shape.

    Args:
        tensor (Tensor): the buffer written in place.
        src (int, optional): the sending global rank. Default: 0.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): False returns at once with a `Task`. Default: True.

    Returns:
        Task: the operation's handle.

    Examples:
        Needs two ranks; see `send` for the full program::

            x = fw.zeros([2], "int64")
            dist.recv(x, src=0)
    """
    return _start(tensor, src, group, "recv", False, sync_op)


def isend(tensor, dst, group=None):
    """Start sending `tensor` to global rank `dst` without waiting (`send` with
    ``sync_op=False``).

    Args:
        tensor (Tensor): the data to send (do not modify it before the task completes).
        dst (int): the receiving global rank.
        group (Group, optional): the group to run in; None for the world. Default: None.

    Returns:
        Task: call ``wait()`` on it before reusing `tensor`.

    Examples:
        Needs two ranks; on rank 0 of a two-rank job::

            task = dist.isend(fw.to_tensor([1, 2]), dst=1)
            task.wait()
    """
    return _start(tensor, dst, group, "isend", True, False)


def irecv(tensor, src=None, group=None):
    """Start receiving into `tensor` from global rank `src` without waiting (`recv`
    with ``sync_op=False``).

    Args:
        tensor (Tensor): the buffer written in place once the task completes.
        src (int, optional): the sending global rank. Default: None.
        group (Group, optional): the group to run in; None for the world. Default: None.

    Returns:
        Task: call ``wait()`` on it before reading `tensor`.

    Examples:
        Needs two ranks; on rank 1 of a two-rank job::

            x = fw.zeros([2], "int64")
            dist.irecv(x, src=0).wait()
    """
    return _start(tensor, src, group, "irecv", False, False)
