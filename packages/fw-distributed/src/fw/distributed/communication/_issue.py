"""The one path every collective takes: check the group, count the op in the
group's sequence, record it in the flight recorder, issue the signature exchange
(desync check) and the data op nonblocking, and wrap them in a `Task`."""
from __future__ import annotations

import numpy as np

from fw.distributed._flight_recorder import recorder
from fw.distributed.communication import _signature
from fw.distributed.communication.group import default_group
from fw.distributed.communication.task import (
    Task,
    _pending,
    check_usable,
    completed_task,
    progress_pending,
    track,
)

__all__ = ["resolve", "issue", "group_rank_of"]

# signatures by (op, dtype, shape, reduce op, root, wildcard): a training loop repeats
# the same few calls, so encoding (a crc of the shape, …) is done once per kind
_sig_cache: dict = {}
_dt_names: dict = {}


def _dtype_name(dt) -> str:
    """str(dtype), cached (numpy's dtype.__str__ costs microseconds per call)."""
    name = _dt_names.get(dt)
    if name is None:
        name = _dt_names[dt] = str(dt)
    return name


def resolve(group, fn):
    """The Group to run on (the world when None); None when this rank is not a
    member (the op is then a no-op, as in Paddle)."""
    if group is None:
        return default_group(fn)
    default_group(fn)
    if not hasattr(group, "engine") or not hasattr(group, "ranks"):
        raise TypeError(f"fw.distributed.{fn}: group must be a Group from new_group() or "
                        f"None, got {type(group).__name__}")
    if group.rank < 0:
        return None
    if group.engine is None:
        if getattr(group, "_shut_down", False):
            raise ValueError(f"fw.distributed.{fn}: group {group.id} was shut down by "
                             f"shutdown_process_group; call restart_process_group first")
        raise ValueError(f"fw.distributed.{fn}: group {group.id} was destroyed")
    return group


def group_rank_of(g, rank, fn, arg):
    """The group rank of global `rank` (Paddle's src/dst are global ranks)."""
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)):
        raise TypeError(f"fw.distributed.{fn}: {arg} must be an int rank, got {rank!r}")
    r = g.get_group_rank(int(rank))
    if r < 0:
        raise ValueError(f"fw.distributed.{fn}: {arg}={rank} is not a member of group "
                         f"{g.id} (ranks {g.ranks})")
    return r


def issue(g, fn, arrays, extra, start, finish, sync_op, *, reduce_op=-1, root=-1,
          sig_array=None, shape_any=False, keep=None):
    """Issue `start(engine) -> request(s)` on group `g` as op `fn`.

    arrays: the arrays recorded in the flight recorder; sig_array: the one whose
    dtype and shape every rank must agree on (default arrays[0])."""
    check_usable(fn)
    if _pending:
        progress_pending()
    g._seq += 1
    seq = g._seq
    entry = recorder.record(g.id, seq, fn, [a.shape for a in arrays],
                            [_dtype_name(a.dtype) for a in arrays], extra)
    g._last = entry
    eng = g.engine
    data_eng = eng
    for a in arrays:  # GPU tensors go through NCCL; the signatures stay on the host engine
        if a is not None and not isinstance(a, np.ndarray):
            from fw.distributed.communication._engine_nccl import engine_for

            data_eng = engine_for(g, fn)
            break
    sig = None
    if g.nranks > 1 and _signature.enabled():
        s = sig_array if sig_array is not None else (arrays[0] if arrays else None)
        key = (fn, s.dtype if s is not None else None, s.shape if s is not None else None,
               reduce_op, root, shape_any)
        mine = _sig_cache.get(key)
        if mine is None:
            if len(_sig_cache) > 4096:
                _sig_cache.clear()
            mine = _sig_cache[key] = _signature.encode(
                0, fn, _dtype_name(key[1]) if s is not None else None, key[2], reduce_op, root,
                shape_any)
        mine = mine.copy()
        mine[0] = seq
        rows = np.empty((g.nranks, _signature.LEN), np.int64)
        sreq = eng.allgather(mine, rows)
        ranks = g.ranks
        sig = (sreq, lambda: _signature.mismatch(rows, ranks), (mine, rows))
    try:
        reqs = start(data_eng)
    except Exception as exc:  # noqa: BLE001 - an MPI error at issue time
        task = Task(g, entry, [], None, sig, g.timeout, fn)
        task._fail(task._mpi_error(exc))
    if not isinstance(reqs, list):
        reqs = [reqs]
    task = Task(g, entry, reqs, finish, sig, g.timeout, fn)
    task.keep = keep
    if sync_op:
        task.wait()
    else:
        track(task)
    return task


def noop(sync_op):
    return completed_task()
