"""The collectives of ``paddle.distributed`` (Paddle 3.x names, arguments and
defaults): all_reduce, broadcast, reduce, all_gather, reduce_scatter, alltoall,
alltoall_single, scatter, gather, barrier.

Semantics shared by all of them:
- `group=None` is the world; on a rank outside `group` the op does nothing.
- `src`/`dst` are global ranks (as in Paddle), converted to group ranks here.
- In-place ops (all_reduce, broadcast, reduce at dst, reduce_scatter, scatter,
  alltoall_single's output) write into the tensor's own array: MPI receives
  straight into it (zero-copy; only a non-contiguous tensor goes through a
  contiguous copy). List outputs (all_gather, alltoall, gather) get new tensors
  that are views of one receive buffer.
- Every op returns a `Task`; with ``sync_op=True`` (default) it has already been
  waited on. Every wait has a deadline (`new_group`/`init_parallel_env` timeout).
"""
from __future__ import annotations

import numpy as np

from fw.distributed.communication import _lowering as L
from fw.distributed.communication import _tensors as T
from fw.distributed.communication._issue import group_rank_of, issue, noop, resolve
from fw.distributed.communication.reduce_op import ReduceOp

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "alltoall",
           "alltoall_single", "scatter", "gather", "barrier"]


def _host(a, fn, arg):
    """`a`, after checking that a GPU array has an engine (NCCL) to run on."""
    if a is not None and not T.is_host(a):
        from fw.distributed.communication import _engine_nccl

        _engine_nccl.require(fn, arg)
    return a


def _same_place(arrays, fn):
    """All of an op's buffers on the host, or all on a device (NCCL takes no host
    memory and MPI no device memory)."""
    kinds = {T.is_host(a) for a in arrays if a is not None}
    if len(kinds) > 1:
        raise ValueError(f"fw.distributed.{fn}: some tensors are on the GPU and some on the "
                         "CPU; move them to one device first")


def _check_list(lst, n, fn, arg, like=None):
    if not isinstance(lst, (list, tuple)):
        raise TypeError(f"fw.distributed.{fn}: {arg} must be a list of Tensors, got "
                        f"{type(lst).__name__}")
    if len(lst) != n:
        raise ValueError(f"fw.distributed.{fn}: {arg} must hold one tensor per rank of the "
                         f"group ({n}), got {len(lst)}")
    arrs = [_host(T.array_of(t, fn, f"{arg}[{i}]"), fn, arg) for i, t in enumerate(lst)]
    ref = like if like is not None else (arrs[0] if arrs else None)
    for i, a in enumerate(arrs):
        if ref is not None and (a.shape != ref.shape or a.dtype != ref.dtype):
            raise ValueError(f"fw.distributed.{fn}: {arg}[{i}] is {T.describe(a)} but the "
                             f"op needs {T.describe(ref)} for every entry")
    return arrs


def _concat(arrs, shape, dtype):
    _same_place(arrs, "collective")
    out = np.empty_like(arrs[0], shape=(len(arrs),) + tuple(shape), dtype=dtype)
    for i, a in enumerate(arrs):
        out[i] = a
    return out


def _fill_list(lst, recv, fn, arg):
    """Put the received chunks into the user's list: new tensors (views of `recv`)
    when the list is empty, else in place into its tensors (checked up front)."""
    if len(lst) == 0:
        lst.extend(T.new_tensor(recv[i, ...]) for i in range(recv.shape[0]))
        return
    for i, t in enumerate(lst):
        buf, done = T.inplace_buffer(t, fn, f"{arg}[{i}]")
        buf[...] = recv[i]
        done()


def _check_out_list(lst, n, shape, dtype, fn, arg):
    if not isinstance(lst, list):
        raise TypeError(f"fw.distributed.{fn}: {arg} must be a list (empty, or one tensor "
                        f"per rank), got {type(lst).__name__}")
    if lst:
        like = np.empty((0,), dtype)
        arrs = _check_list(lst, n, fn, arg)
        for i, a in enumerate(arrs):
            if tuple(a.shape) != tuple(shape) or a.dtype != like.dtype:
                raise ValueError(f"fw.distributed.{fn}: {arg}[{i}] is {T.describe(a)}, the "
                                 f"op produces {dtype}{list(shape)}")


# ---------------------------------------------------------------- reductions
def all_reduce(tensor, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduce `tensor` over the group, in place on every rank.

    Args:
        tensor (Tensor): input and output.
        op (ReduceOp): SUM, MAX, MIN, PROD or AVG (floating dtypes).
        group (Group|None): None for the world.
        sync_op (bool): False returns at once with a `Task` to ``wait()`` on.

    Returns:
        Task; while a program is being built (``fw.jit.to_static``, ``fw.static``) the
        op becomes ``c_allreduce`` in it and the new value is returned instead (the
        converted function rebinds `tensor` to it; `sync_op` does not apply).

    Example:
        >>> import fw, fw.distributed as dist
        >>> x = fw.to_tensor([1.0, 2.0])
        >>> _ = dist.all_reduce(x)      # one rank: unchanged
        >>> x.numpy().tolist()
        [1.0, 2.0]
    """
    fn = "all_reduce"
    if L.tracing(tensor):
        return L.emit_all_reduce(tensor, op, group, fn)
    g = resolve(group, fn)
    buf, done = T.inplace_buffer(tensor, fn, "tensor")
    _host(buf, fn, "tensor")
    work, mop, post = T.reduce_plan(buf, op, fn, g.nranks if g else 1)
    if g is None:
        return noop(sync_op)

    def finish():
        post(buf)
        done()

    return issue(g, fn, [buf], {"op": ReduceOp.name_of(op)},
                 lambda e: e.allreduce(work, mop), finish, sync_op, reduce_op=op,
                 keep=(work, buf))


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduce `tensor` over the group into `tensor` of global rank `dst`.

    Every rank contributes its `tensor`; only rank `dst` receives the reduced value (other
    ranks' tensors are unchanged). Without a launcher (one rank) the tensor is unchanged.

    Args:
        tensor (Tensor): the input, and the output on rank `dst`.
        dst (int): the global rank that receives the result.
        op (ReduceOp, optional): SUM, MAX, MIN, PROD or AVG. Default: ReduceOp.SUM.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle (already complete when `sync_op` is True). It
        cannot be recorded in a program being built (``fw.jit.to_static``,
        ``fw.static``): that raises an error naming the op.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> x = fw.to_tensor([1.0, 2.0])
        >>> task = dist.reduce(x, dst=0, op=dist.ReduceOp.SUM)
        >>> x.numpy().tolist()     # one rank: the sum of one tensor
        [1.0, 2.0]
    """
    fn = "reduce"
    if L.tracing(tensor):
        L.refuse(fn)
    g = resolve(group, fn)
    buf, done = T.inplace_buffer(tensor, fn, "tensor")
    _host(buf, fn, "tensor")
    work, mop, post = T.reduce_plan(buf, op, fn, g.nranks if g else 1)
    if g is None:
        return noop(sync_op)
    root = group_rank_of(g, dst, fn, "dst")

    def finish():
        if g.rank == root:
            post(buf)
            done()

    return issue(g, fn, [buf], {"op": ReduceOp.name_of(op), "dst": dst},
                 lambda e: e.reduce(work, mop, root), finish, sync_op, reduce_op=op,
                 root=root, keep=(work, buf))


def reduce_scatter(tensor, tensor_list, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduce a list of per-rank chunks over the group and give rank i the i-th.

    `tensor_list` holds one tensor per rank (or is one tensor whose first axis is
    ``nranks * tensor.shape[0]``); the chunks are reduced elementwise over all ranks and
    group rank i receives the reduced i-th chunk in `tensor`.

    Args:
        tensor (Tensor): the output, of the shape and dtype of one chunk.
        tensor_list (list[Tensor]|Tensor): the chunks, one per group rank.
        op (ReduceOp, optional): SUM, MAX, MIN, PROD or AVG. Default: ReduceOp.SUM.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle (already complete when `sync_op` is True). While a
        program is being built (``fw.jit.to_static``, ``fw.static``) the op is recorded
        instead and its new value is returned (as `all_reduce`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> out = fw.zeros([2])
        >>> task = dist.reduce_scatter(out, [fw.to_tensor([3.0, 4.0])])
        >>> out.numpy().tolist()
        [3.0, 4.0]
    """
    fn = "reduce_scatter"
    if L.tracing(tensor, tensor_list):
        return L.emit_reduce_scatter(tensor, tensor_list, op, group, fn)
    g = resolve(group, fn)
    if g is None:
        return noop(sync_op)
    buf, done = T.inplace_buffer(tensor, fn, "tensor")
    _host(buf, fn, "tensor")
    n = g.nranks
    if isinstance(tensor_list, (list, tuple)):
        arrs = _check_list(tensor_list, n, fn, "tensor_list", like=buf)
        send = _concat(arrs, buf.shape, buf.dtype)
    else:
        src = _host(T.send_buffer(tensor_list, fn, "tensor_list"), fn, "tensor_list")
        if src.dtype != buf.dtype or src.size != n * buf.size:
            raise ValueError(f"fw.distributed.{fn}: tensor_list {T.describe(src)} must hold "
                             f"{n} chunks of tensor's {T.describe(buf)}")
        send = src
    _same_place([buf, send], fn)
    swork, mop, _ = T.reduce_plan(send, op, fn, n)
    rwork, _, post = T.reduce_plan(buf, op, fn, n)

    def finish():
        post(buf)
        done()

    return issue(g, fn, [buf, send], {"op": ReduceOp.name_of(op)},
                 lambda e: e.reduce_scatter_block(swork, rwork, mop), finish, sync_op,
                 reduce_op=op, keep=(swork, rwork, buf))


# ---------------------------------------------------------------- data movement
def broadcast(tensor, src, group=None, sync_op=True):
    """Copy global rank `src`'s `tensor` into `tensor` on every rank of the group.

    Args:
        tensor (Tensor): the data to send on rank `src`, the buffer written (in place) on
            the other ranks; same shape and dtype everywhere.
        src (int): the global rank whose tensor is sent.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle (already complete when `sync_op` is True). While a
        program is being built (``fw.jit.to_static``, ``fw.static``) the op is recorded
        instead and its new value is returned (as `all_reduce`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> x = fw.to_tensor([1, 2, 3])
        >>> task = dist.broadcast(x, src=0)
        >>> x.numpy().tolist()
        [1, 2, 3]
    """
    fn = "broadcast"
    if L.tracing(tensor):
        return L.emit_broadcast(tensor, src, group, fn)
    g = resolve(group, fn)
    buf, done = T.inplace_buffer(tensor, fn, "tensor")
    _host(buf, fn, "tensor")
    if g is None:
        return noop(sync_op)
    root = group_rank_of(g, src, fn, "src")
    return issue(g, fn, [buf], {"src": src}, lambda e: e.bcast(buf, root), done, sync_op,
                 root=root, keep=buf)


def all_gather(tensor_list, tensor, group=None, sync_op=True):
    """Gather every rank's `tensor` into `tensor_list`, in group-rank order.

    An empty `tensor_list` is extended with new tensors; a list that already holds one
    tensor per rank is written into in place.

    Args:
        tensor_list (list[Tensor]): the output list.
        tensor (Tensor): this rank's contribution (same shape and dtype on every rank).
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle (already complete when `sync_op` is True). While a
        program is being built (``fw.jit.to_static``, ``fw.static``) it is recorded
        as one ``c_allgather`` whose per-rank parts fill the list.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> parts = []
        >>> task = dist.all_gather(parts, fw.to_tensor([1.0, 2.0]))
        >>> [p.numpy().tolist() for p in parts]     # one rank: one part
        [[1.0, 2.0]]
    """
    fn = "all_gather"
    if L.tracing(tensor):
        return L.emit_all_gather(tensor_list, tensor, group, fn)
    g = resolve(group, fn)
    a = _host(T.send_buffer(tensor, fn, "tensor"), fn, "tensor")
    if g is None:
        return noop(sync_op)
    _check_out_list(tensor_list, g.nranks, a.shape, a.dtype, fn, "tensor_list")
    recv = np.empty_like(a, shape=(g.nranks,) + a.shape)
    return issue(g, fn, [a], {}, lambda e: e.allgather(a, recv),
                 lambda: _fill_list(tensor_list, recv, fn, "tensor_list"), sync_op,
                 keep=(a, recv))


def all_gather_into_tensor(out, tensor, group=None, sync_op=True):
    """Gather every rank's `tensor` into `out`, concatenated along axis 0.

    Args:
        out (Tensor): the output, with ``nranks * tensor.shape[0]`` rows.
        tensor (Tensor): this rank's contribution.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> out = fw.zeros([2])
        >>> task = dist.all_gather_into_tensor(out, fw.to_tensor([5.0, 6.0]))
        >>> out.numpy().tolist()
        [5.0, 6.0]
    """
    fn = "stream.all_gather"
    if L.tracing(tensor, out):
        return L.emit_all_gather_into(out, tensor, group, fn)
    g = resolve(group, fn)
    a = _host(T.send_buffer(tensor, fn, "tensor"), fn, "tensor")
    buf, done = T.inplace_buffer(out, fn, "tensor_or_tensor_list")
    _host(buf, fn, "tensor_or_tensor_list")
    if g is None:
        return noop(sync_op)
    _same_place([a, buf], fn)
    n = g.nranks
    want = (n * a.shape[0],) + a.shape[1:] if a.ndim else (n,)
    if buf.shape != want or buf.dtype != a.dtype:
        raise ValueError(f"fw.distributed.{fn}: the output tensor is {T.describe(buf)}; "
                         f"gathering {T.describe(a)} from {n} ranks gives {a.dtype}{list(want)}")
    return issue(g, "all_gather", [a], {}, lambda e: e.allgather(a, buf), done, sync_op,
                 keep=(a, buf))


def alltoall(out_tensor_list, in_tensor_list, group=None, sync_op=True):
    """Exchange chunks between all ranks: rank i sends ``in_tensor_list[j]`` to rank j.

    After the call ``out_tensor_list[i]`` holds the chunk that group rank i sent to this
    rank. All chunks share one shape and dtype. An empty output list is extended.

    Args:
        out_tensor_list (list[Tensor]): the received chunks, one per group rank.
        in_tensor_list (list[Tensor]): the chunks to send, one per group rank.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> out = []
        >>> task = dist.alltoall(out, [fw.to_tensor([5, 6])])
        >>> [t.numpy().tolist() for t in out]
        [[5, 6]]
    """
    fn = "alltoall"
    if L.tracing(out_tensor_list, in_tensor_list):
        L.refuse(fn)
    g = resolve(group, fn)
    if g is None:
        return noop(sync_op)
    n = g.nranks
    arrs = _check_list(in_tensor_list, n, fn, "in_tensor_list")
    a0 = arrs[0]
    _check_out_list(out_tensor_list, n, a0.shape, a0.dtype, fn, "out_tensor_list")
    send = _concat(arrs, a0.shape, a0.dtype)
    recv = np.empty_like(send)
    return issue(g, fn, [a0], {"n": n}, lambda e: e.alltoall(send, recv),
                 lambda: _fill_list(out_tensor_list, recv, fn, "out_tensor_list"), sync_op,
                 keep=(send, recv))


def _splits(sizes, total, n, fn, arg, t):
    if sizes is None:
        if total % n:
            raise ValueError(f"fw.distributed.{fn}: {arg} is None, so the first axis of "
                             f"{t} ({total}) must divide evenly among {n} ranks")
        return [total // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or any(s < 0 for s in sizes) or sum(sizes) != total:
        raise ValueError(f"fw.distributed.{fn}: {arg} must be {n} non-negative sizes summing "
                         f"to the first axis of {t} ({total}), got {sizes}")
    return sizes


def alltoall_single(out_tensor, in_tensor, in_split_sizes=None, out_split_sizes=None,
                    group=None, sync_op=True):
    """All-to-all on one tensor split along axis 0.

    `in_tensor` is split along axis 0 (by `in_split_sizes`, equal parts by default), piece
    j goes to group rank j, and the pieces received are written into `out_tensor` in rank
    order (sized by `out_split_sizes`).

    Args:
        out_tensor (Tensor): the output buffer, written in place.
        in_tensor (Tensor): the input.
        in_split_sizes (list[int], optional): rows sent to each rank. Default: None (equal).
        out_split_sizes (list[int], optional): rows received from each rank. Default: None
            (equal).
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> out = fw.zeros([3], "int64")
        >>> task = dist.alltoall_single(out, fw.to_tensor([1, 2, 3]))
        >>> out.numpy().tolist()
        [1, 2, 3]
    """
    fn = "alltoall_single"
    if L.tracing(out_tensor, in_tensor):
        L.refuse(fn)
    g = resolve(group, fn)
    if g is None:
        return noop(sync_op)
    n = g.nranks
    a = _host(T.send_buffer(in_tensor, fn, "in_tensor"), fn, "in_tensor")
    out, done = T.inplace_buffer(out_tensor, fn, "out_tensor")
    _host(out, fn, "out_tensor")
    _same_place([a, out], fn)
    if a.ndim == 0 or out.ndim == 0 or a.dtype != out.dtype or a.shape[1:] != out.shape[1:]:
        raise ValueError(f"fw.distributed.{fn}: in_tensor {T.describe(a)} and out_tensor "
                         f"{T.describe(out)} need one dtype and equal trailing axes")
    ins = _splits(in_split_sizes, a.shape[0], n, fn, "in_split_sizes", T.describe(a))
    outs = _splits(out_split_sizes, out.shape[0], n, fn, "out_split_sizes", T.describe(out))
    row = int(np.prod(a.shape[1:], dtype=np.int64)) * a.dtype.itemsize
    uneven = in_split_sizes is not None or out_split_sizes is not None
    return issue(g, fn, [a, out], {},
                 lambda e: e.alltoallv(a, [s * row for s in ins], out, [s * row for s in outs]),
                 done, sync_op, sig_array=a, shape_any=uneven, keep=(a, out))


def scatter(tensor, tensor_list=None, src=0, group=None, sync_op=True):
    """Send ``tensor_list[i]`` from global rank `src` to group rank i.

    Each rank receives its chunk into `tensor`; `tensor_list` is read on `src` only.

    Args:
        tensor (Tensor): the output buffer, written in place.
        tensor_list (list[Tensor], optional): the chunks, one per group rank (needed on
            `src`). Default: None.
        src (int, optional): the global rank that sends. Default: 0.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> t = fw.zeros([2])
        >>> task = dist.scatter(t, [fw.to_tensor([7.0, 8.0])], src=0)
        >>> t.numpy().tolist()
        [7.0, 8.0]
    """
    fn = "scatter"
    if L.tracing(tensor, tensor_list):
        L.refuse(fn)
    g = resolve(group, fn)
    if g is None:
        return noop(sync_op)
    buf, done = T.inplace_buffer(tensor, fn, "tensor")
    _host(buf, fn, "tensor")
    root = group_rank_of(g, src, fn, "src")
    send = None
    if g.rank == root:
        if tensor_list is None:
            raise ValueError(f"fw.distributed.{fn}: tensor_list is required on the source "
                             f"rank {src}")
        if isinstance(tensor_list, (list, tuple)):
            arrs = _check_list(tensor_list, g.nranks, fn, "tensor_list", like=buf)
            send = _concat(arrs, buf.shape, buf.dtype)
        else:
            send = _host(T.send_buffer(tensor_list, fn, "tensor_list"), fn, "tensor_list")
            if send.dtype != buf.dtype or send.size != g.nranks * buf.size:
                raise ValueError(f"fw.distributed.{fn}: tensor_list {T.describe(send)} must "
                                 f"hold {g.nranks} chunks of tensor's {T.describe(buf)}")
        _same_place([send, buf], fn)
    return issue(g, fn, [buf], {"src": src}, lambda e: e.scatter(send, buf, root), done,
                 sync_op, root=root, keep=(send, buf))


def gather(tensor, gather_list=None, dst=0, group=None, sync_op=True):
    """Gather every rank's `tensor` into `gather_list` on global rank `dst`.

    Args:
        tensor (Tensor): this rank's contribution.
        gather_list (list[Tensor], optional): the output on `dst`; an empty list is
            extended with new tensors. Default: None.
        dst (int, optional): the global rank that receives. Default: 0.
        group (Group, optional): the group to run in; None for the world. Default: None.
        sync_op (bool, optional): True waits for the result; False returns at once with a
            `Task` to ``wait()`` on. Default: True.

    Returns:
        Task: the operation's handle.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> got = []
        >>> task = dist.gather(fw.to_tensor([1.0, 2.0]), got, dst=0)
        >>> [t.numpy().tolist() for t in got]
        [[1.0, 2.0]]
    """
    fn = "gather"
    if L.tracing(tensor, gather_list):
        L.refuse(fn)
    g = resolve(group, fn)
    if g is None:
        return noop(sync_op)
    a = _host(T.send_buffer(tensor, fn, "tensor"), fn, "tensor")
    root = group_rank_of(g, dst, fn, "dst")
    recv = None
    if g.rank == root:
        if gather_list is None:
            raise ValueError(f"fw.distributed.{fn}: gather_list is required on the "
                             f"destination rank {dst}")
        _check_out_list(gather_list, g.nranks, a.shape, a.dtype, fn, "gather_list")
        recv = np.empty_like(a, shape=(g.nranks,) + a.shape)

    def finish():
        if recv is not None:
            _fill_list(gather_list, recv, fn, "gather_list")

    return issue(g, fn, [a], {"dst": dst}, lambda e: e.gather(a, recv, root), finish,
                 sync_op, root=root, keep=(a, recv))


def barrier(group=None):
    """Block until every rank of the group has called `barrier`.

    The wait is bounded by the group's timeout (`init_parallel_env`'s `timeout`), after
    which a `CollectiveTimeoutError` names the ranks that did not arrive.

    Args:
        group (Group, optional): the group to run in; None for the world. Default: None.

    Returns:
        Task: the completed operation's handle.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> task = dist.barrier()     # one rank: returns at once
    """
    fn = "barrier"
    if L.tracing():     # a barrier traced once would not wait in later runs
        L.refuse(fn)
    g = resolve(group, fn)
    if g is None:
        return noop(True)
    return issue(g, fn, [], {}, lambda e: e.barrier(), None, True)
