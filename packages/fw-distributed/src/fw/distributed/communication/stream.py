"""``fw.distributed.stream``: Paddle's stream variants of the collectives, with
the extra ``use_calc_stream`` argument. On the CPU engine there are no streams:
``use_calc_stream`` is accepted and has no effect; the ops are the same as the
plain ones and return a Task."""
from __future__ import annotations

from fw.distributed.communication import collectives as _c
from fw.distributed.communication import p2p as _p
from fw.distributed.communication.reduce_op import ReduceOp

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "alltoall",
           "alltoall_single", "scatter", "gather", "send", "recv"]


def all_reduce(tensor, op=ReduceOp.SUM, group=None, sync_op=True, use_calc_stream=False):
    """Reduce `tensor` over the ranks in place (``dist.all_reduce``).

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        tensor (Tensor): the data, overwritten with the result.
        op (int, optional): a `ReduceOp`. Default: ReduceOp.SUM.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> t = fw.to_tensor([1.0, 2.0])
        >>> _ = stream.all_reduce(t, use_calc_stream=True)   # one rank: unchanged
        >>> t.tolist()
        [1.0, 2.0]
    """
    return _c.all_reduce(tensor, op, group, sync_op)


def broadcast(tensor, src, group=None, sync_op=True, use_calc_stream=False):
    """Copy `src`'s `tensor` to every rank.

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        tensor (Tensor): the data (sent by `src`, overwritten elsewhere).
        src (int): the source rank.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> t = fw.to_tensor([1.0, 2.0])
        >>> _ = stream.broadcast(t, src=0)
        >>> t.tolist()
        [1.0, 2.0]
    """
    return _c.broadcast(tensor, src, group, sync_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, sync_op=True, use_calc_stream=False):
    """Reduce `tensor` over the ranks into rank `dst`'s `tensor`.

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        tensor (Tensor): the data.
        dst (int, optional): the rank that gets the result. Default: 0.
        op (int, optional): a `ReduceOp`. Default: ReduceOp.SUM.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> t = fw.to_tensor([1.0, 2.0])
        >>> _ = stream.reduce(t, dst=0)
        >>> t.tolist()
        [1.0, 2.0]
    """
    return _c.reduce(tensor, dst, op, group, sync_op)


def all_gather(tensor_or_tensor_list, tensor, group=None, sync_op=True, use_calc_stream=False):
    """Every rank's `tensor`: into a list, or, with a Tensor as the first argument,
    concatenated along axis 0 (Paddle's stream form).

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        tensor_or_tensor_list (Tensor|list): the output tensor or list.
        tensor (Tensor): this rank's data.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> out = fw.zeros([2])
        >>> _ = stream.all_gather(out, fw.to_tensor([3.0, 4.0]))
        >>> out.tolist()
        [3.0, 4.0]
    """
    if isinstance(tensor_or_tensor_list, list):
        return _c.all_gather(tensor_or_tensor_list, tensor, group, sync_op)
    return _c.all_gather_into_tensor(tensor_or_tensor_list, tensor, group, sync_op)


def reduce_scatter(tensor, tensor_or_tensor_list, op=ReduceOp.SUM, group=None, sync_op=True,
                   use_calc_stream=False):
    """Reduce the inputs over the ranks and give rank i the i-th block.

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        tensor (Tensor): the output block.
        tensor_or_tensor_list (Tensor|list): the input (one tensor split along axis 0,
            or one tensor per rank).
        op (int, optional): a `ReduceOp`. Default: ReduceOp.SUM.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> out = fw.zeros([2])
        >>> _ = stream.reduce_scatter(out, fw.to_tensor([5.0, 6.0]))
        >>> out.tolist()
        [5.0, 6.0]
    """
    return _c.reduce_scatter(tensor, tensor_or_tensor_list, op, group, sync_op)


def alltoall(out_tensor_or_tensor_list, in_tensor_or_tensor_list, group=None, sync_op=True,
             use_calc_stream=False):
    """Send block i of the input to rank i and receive block j from rank j.

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        out_tensor_or_tensor_list (Tensor|list): the output.
        in_tensor_or_tensor_list (Tensor|list): the input, split along axis 0 or one
            tensor per rank.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> out = fw.zeros([2])
        >>> _ = stream.alltoall(out, fw.to_tensor([7.0, 8.0]))
        >>> out.tolist()
        [7.0, 8.0]
    """
    if isinstance(in_tensor_or_tensor_list, list):
        return _c.alltoall(out_tensor_or_tensor_list, in_tensor_or_tensor_list, group, sync_op)
    return _c.alltoall_single(out_tensor_or_tensor_list, in_tensor_or_tensor_list, None, None,
                              group, sync_op)


def alltoall_single(out_tensor, in_tensor, in_split_sizes=None, out_split_sizes=None,
                    group=None, sync_op=True, use_calc_stream=False):
    """`alltoall` on single tensors, with optional uneven split sizes.

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        out_tensor (Tensor): the output.
        in_tensor (Tensor): the input.
        in_split_sizes (list[int], optional): rows sent to each rank. Default: None (even).
        out_split_sizes (list[int], optional): rows received from each rank. Default: None.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> out = fw.zeros([2])
        >>> _ = stream.alltoall_single(out, fw.to_tensor([7.0, 8.0]))
        >>> out.tolist()
        [7.0, 8.0]
    """
    return _c.alltoall_single(out_tensor, in_tensor, in_split_sizes, out_split_sizes, group,
                              sync_op)


def scatter(tensor, tensor_or_tensor_list=None, src=0, group=None, sync_op=True,
            use_calc_stream=False):
    """Give rank i the i-th tensor of `src`'s list.

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        tensor (Tensor): the output.
        tensor_or_tensor_list (Tensor|list, optional): the inputs (on `src`). Default: None.
        src (int, optional): the source rank. Default: 0.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> out = fw.zeros([2])
        >>> _ = stream.scatter(out, [fw.to_tensor([1.0, 9.0])], src=0)
        >>> out.tolist()
        [1.0, 9.0]
    """
    return _c.scatter(tensor, tensor_or_tensor_list, src, group, sync_op)


def gather(tensor, gather_list=None, dst=0, group=None, sync_op=True, use_calc_stream=False):
    """Collect every rank's `tensor` into `gather_list` on rank `dst`.

    The stream form of the collective (Paddle's ``distributed.stream``); on the
    CPU engine there are no streams.

    Args:
        tensor (Tensor): this rank's data.
        gather_list (list, optional): the output list (on `dst`). Default: None.
        dst (int, optional): the receiving rank. Default: 0.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.communication import stream
        >>> got = []
        >>> _ = stream.gather(fw.to_tensor([1.0, 9.0]), got, dst=0)
        >>> [t.tolist() for t in got]
        [[1.0, 9.0]]
    """
    return _c.gather(tensor, gather_list, dst, group, sync_op)


def send(tensor, dst=0, group=None, sync_op=True, use_calc_stream=False):
    """Send `tensor` to rank `dst`.

    The stream form (Paddle's ``distributed.stream``).

    Args:
        tensor (Tensor): the data.
        dst (int, optional): the receiving rank. Default: 0.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        Between two ranks started by ``python -m fw.distributed.launch --nproc_per_node 2``
        (not run here: it needs a peer)::

            import fw
            import fw.distributed as dist
            from fw.distributed.communication import stream
            dist.init_parallel_env()
            if dist.get_rank() == 0:
                stream.send(fw.to_tensor([1.0, 2.0]), dst=1)
            else:
                t = fw.zeros([2])
                stream.recv(t, src=0)      # t is now [1.0, 2.0]
    """
    return _p.send(tensor, dst, group, sync_op)


def recv(tensor, src=0, group=None, sync_op=True, use_calc_stream=False):
    """Receive into `tensor` from rank `src`.

    The stream form (Paddle's ``distributed.stream``).

    Args:
        tensor (Tensor): the buffer, overwritten.
        src (int, optional): the sending rank. Default: 0.
        group (Group, optional): the group; None: all ranks. Default: None.
        sync_op (bool, optional): wait for completion before returning. Default: True.
        use_calc_stream (bool, optional): accepted; no effect on the CPU engine. Default: False.

    Returns:
        Task: the op's task (already waited when `sync_op`).

    Examples:
        Between two ranks started by ``python -m fw.distributed.launch --nproc_per_node 2``
        (not run here: it needs a peer)::

            import fw
            import fw.distributed as dist
            from fw.distributed.communication import stream
            dist.init_parallel_env()
            if dist.get_rank() == 0:
                stream.send(fw.to_tensor([1.0, 2.0]), dst=1)
            else:
                t = fw.zeros([2])
                stream.recv(t, src=0)      # t is now [1.0, 2.0]
    """
    return _p.recv(tensor, src, group, sync_op)
