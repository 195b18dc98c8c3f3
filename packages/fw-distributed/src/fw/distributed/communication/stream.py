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
    return _c.all_reduce(tensor, op, group, sync_op)


def broadcast(tensor, src, group=None, sync_op=True, use_calc_stream=False):
    return _c.broadcast(tensor, src, group, sync_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, sync_op=True, use_calc_stream=False):
    return _c.reduce(tensor, dst, op, group, sync_op)


def all_gather(tensor_or_tensor_list, tensor, group=None, sync_op=True, use_calc_stream=False):
    """With a Tensor as the first argument, it receives every rank's `tensor`
    concatenated along axis 0 (Paddle's stream form)."""
    if isinstance(tensor_or_tensor_list, list):
        return _c.all_gather(tensor_or_tensor_list, tensor, group, sync_op)
    return _c.all_gather_into_tensor(tensor_or_tensor_list, tensor, group, sync_op)


def reduce_scatter(tensor, tensor_or_tensor_list, op=ReduceOp.SUM, group=None, sync_op=True,
                   use_calc_stream=False):
    return _c.reduce_scatter(tensor, tensor_or_tensor_list, op, group, sync_op)


def alltoall(out_tensor_or_tensor_list, in_tensor_or_tensor_list, group=None, sync_op=True,
             use_calc_stream=False):
    if isinstance(in_tensor_or_tensor_list, list):
        return _c.alltoall(out_tensor_or_tensor_list, in_tensor_or_tensor_list, group, sync_op)
    return _c.alltoall_single(out_tensor_or_tensor_list, in_tensor_or_tensor_list, None, None,
                              group, sync_op)


def alltoall_single(out_tensor, in_tensor, in_split_sizes=None, out_split_sizes=None,
                    group=None, sync_op=True, use_calc_stream=False):
    return _c.alltoall_single(out_tensor, in_tensor, in_split_sizes, out_split_sizes, group,
                              sync_op)


def scatter(tensor, tensor_or_tensor_list=None, src=0, group=None, sync_op=True,
            use_calc_stream=False):
    return _c.scatter(tensor, tensor_or_tensor_list, src, group, sync_op)


def gather(tensor, gather_list=None, dst=0, group=None, sync_op=True, use_calc_stream=False):
    return _c.gather(tensor, gather_list, dst, group, sync_op)


def send(tensor, dst=0, group=None, sync_op=True, use_calc_stream=False):
    return _p.send(tensor, dst, group, sync_op)


def recv(tensor, src=0, group=None, sync_op=True, use_calc_stream=False):
    return _p.recv(tensor, src, group, sync_op)
