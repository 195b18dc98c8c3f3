"""Collectives as ops of a program, both ways:

- **emitting**: while a program is being built (``fw.jit.to_static``, ``fw.static``)
  `all_reduce`, `broadcast`, `all_gather` and `reduce_scatter` emit fw-core's
  collective ops (``c_allreduce``, ``c_broadcast``, ``c_allgather``,
  ``c_reducescatter``; `fw.core.ops.collective`) instead of communicating (the
  table's ``all_to_all`` is emitted by auto-parallel's static reshard, and lowered
  here like the others). The
  IR is SSA, so an in-place collective returns the new value: fw-jit's conversion
  rebinds ``x`` after ``dist.all_reduce(x)`` (and a parameter's ``.grad`` after
  ``dist.all_reduce(p.grad)``), and a concrete tensor the program captured
  (a parameter, a buffer) gets the result as a state update of the program.
- **lowering**: `run` is the communication backend fw-core's collective kernels
  call (registered through ``fw.core.internal.collectives`` by
  `init_parallel_env`): it runs the op with the eager collectives on this rank's
  engine, so a program's collectives have the same deadlines, desync check and
  flight recorder as eager ones.
"""
from __future__ import annotations

import numpy as np

from fw.core.dispatch import assign_inplace
from fw.core.internal import build_state, make_tensor
from fw.core.ir import Value
from fw.distributed.communication._issue import group_rank_of, noop, resolve
from fw.distributed.communication.reduce_op import ReduceOp

__all__ = ["tracing", "emit_all_reduce", "emit_broadcast", "emit_all_gather",
           "emit_all_gather_into", "emit_reduce_scatter", "run", "refuse"]

_NAMES = {ReduceOp.SUM: "sum", ReduceOp.MAX: "max", ReduceOp.MIN: "min",
          ReduceOp.PROD: "prod", ReduceOp.AVG: "avg"}
_CODES = {v: k for k, v in _NAMES.items()}


def tracing(*tensors) -> bool:
    """True when the collective must become an op of a program being built."""
    if build_state.builder is not None:
        return True
    for t in tensors:
        items = t if isinstance(t, (list, tuple)) else (t,)
        if any(isinstance(x, Value) for x in items):
            return True
    return False


def refuse(fn):
    raise NotImplementedError(
        f"fw.distributed.{fn}: not supported inside a program being built (fw.jit.to_static "
        "/ fw.static): it would run once, while tracing, and never in the program's runs; "
        "there all_reduce, broadcast, all_gather and reduce_scatter become ops of the "
        "program. Call it outside the converted function")


def _call(name, x, **attrs):
    from fw.core.ops import call

    return call(name, x, **attrs)


def _rebind(fn, tensor, out):
    # a Value: the caller rebinds (fw-jit's conversion); a captured concrete tensor:
    # a state update of the program (assign_inplace records it)
    return assign_inplace(f"fw.distributed.{fn}", tensor, out)


def emit_all_reduce(tensor, op, group, fn):
    g = resolve(group, fn)
    code = ReduceOp.check(op, fn)
    if g is None:  # not a member: the op does nothing here, as in eager mode
        return tensor
    out = _call("c_allreduce", tensor, reduce_op=_NAMES[code], ring_id=g.id)
    return _rebind(fn, tensor, out)


def emit_broadcast(tensor, src, group, fn):
    g = resolve(group, fn)
    if g is None:
        return tensor
    root = group_rank_of(g, src, fn, "src")
    out = _call("c_broadcast", tensor, root=root, ring_id=g.id)
    return _rebind(fn, tensor, out)


def emit_all_gather(tensor_list, tensor, group, fn):
    """The list form: ``tensor_list`` gets one value per rank (extended when empty,
    else its entries are replaced: the program's values cannot be written)."""
    g = resolve(group, fn)
    if g is None:
        return noop(True)
    if not isinstance(tensor_list, list):
        raise TypeError(f"fw.distributed.{fn}: tensor_list must be a list (empty, or one "
                        f"tensor per rank), got {type(tensor_list).__name__}")
    n = g.nranks
    if tensor_list and len(tensor_list) != n:
        raise ValueError(f"fw.distributed.{fn}: tensor_list must hold one tensor per rank of "
                         f"the group ({n}), got {len(tensor_list)}")
    import fw

    stacked = _call("c_allgather", fw.unsqueeze(tensor, 0), nranks=n, ring_id=g.id)
    parts = fw.unbind(stacked, 0)
    if tensor_list:
        tensor_list[:] = parts
    else:
        tensor_list.extend(parts)
    return noop(True)


def emit_all_gather_into(out, tensor, group, fn):
    """The tensor form (``stream.all_gather(out, x)``): ``out`` is rebound to the
    concatenation along axis 0."""
    g = resolve(group, fn)
    if g is None:
        return out
    res = _call("c_allgather", tensor, nranks=g.nranks, ring_id=g.id)
    return _rebind(fn, out, res)


def emit_reduce_scatter(tensor, tensor_list, op, group, fn):
    g = resolve(group, fn)
    code = ReduceOp.check(op, fn)
    if g is None:
        return tensor
    import fw

    if isinstance(tensor_list, (list, tuple)):
        if len(tensor_list) != g.nranks:
            raise ValueError(f"fw.distributed.{fn}: tensor_list must hold one tensor per rank "
                             f"of the group ({g.nranks}), got {len(tensor_list)}")
        src = fw.concat(list(tensor_list), axis=0)
    else:
        src = tensor_list
    out = _call("c_reducescatter", src, reduce_op=_NAMES[code], nranks=g.nranks, ring_id=g.id)
    return _rebind(fn, tensor, out)


# ---------------------------------------------------------------- the backend
def run(op_name, x, attrs):
    """fw-core's collective kernels call this (``fw.core.internal.collectives``):
    run `op_name` on array `x` over group ``attrs["ring_id"]``; returns a new array."""
    from fw.distributed.communication import collectives as C
    from fw.distributed.communication.group import get_group

    g = get_group(attrs["ring_id"])
    if not isinstance(x, np.ndarray):  # a device array: NCCL, on a C-ordered copy
        from fw.distributed.communication import _engine_nccl

        _engine_nccl.require(op_name, "x")
        buf = x.copy(order="C")
    else:
        buf = np.array(x, copy=True, order="C")
    if g.rank < 0:  # not a member: the op leaves the value as it is
        return buf
    t = make_tensor(buf)
    n = g.nranks
    if op_name == "c_allreduce":
        C.all_reduce(t, _CODES[attrs["reduce_op"]], g)
        return buf
    if op_name in ("c_broadcast", "c_reduce"):
        root = attrs["root"]
        if root >= n:
            raise ValueError(f"{op_name}: root={root} is not a rank of group {g.id} "
                             f"({n} ranks)")
        if op_name == "c_broadcast":
            C.broadcast(t, g.ranks[root], g)
        else:
            C.reduce(t, g.ranks[root], _CODES[attrs["reduce_op"]], g)
            if g.rank != root:
                buf[...] = 0
        return buf
    want = attrs["nranks"]
    if want != n:
        raise ValueError(f"{op_name}: the program was built for nranks={want} but group "
                         f"{g.id} has {n} ranks")
    if op_name == "c_allgather":
        out = np.empty_like(buf, shape=(n * buf.shape[0],) + buf.shape[1:])
        C.all_gather_into_tensor(make_tensor(out), t, g)
        return out
    if op_name == "c_reducescatter":
        out = np.empty_like(buf, shape=(buf.shape[0] // n,) + buf.shape[1:])
        C.reduce_scatter(make_tensor(out), t, _CODES[attrs["reduce_op"]], g)
        return out
    if op_name == "all_to_all":  # equal chunks of axis 0: alltoall_single's even split
        out = np.empty_like(buf)
        C.alltoall_single(make_tensor(out), t, group=g)
        return out
    raise ValueError(f"fw.distributed: no lowering for op {op_name!r}")
