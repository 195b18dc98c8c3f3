"""Collective communication ops: ``c_allreduce``, ``c_broadcast``, ``c_reduce``,
``c_allgather``, ``c_reducescatter`` (the names of Paddle's static collective ops) and
``all_to_all`` (Paddle 3's ``_C_ops.all_to_all``, the op its static reshard of
Shard(i) -> Shard(j) emits).

They make ``fw.distributed``'s collectives part of a program: under
``fw.jit.to_static`` (or ``fw.static``) ``fw.distributed.all_reduce(x)`` emits
``%y = c_allreduce(%x) {reduce_op="sum", ring_id=0}`` and the traced function goes
on with ``%y`` in place of ``x``. fw-core does not know how to communicate: each op's
kernel hands the array to the communication backend registered through
``fw.core.internal.collectives`` (fw-distributed registers its MPI engine in
``init_parallel_env``), see `fw.core.kernels.cpu.collective`.

Attributes: ``ring_id`` is the communication group (fw-distributed's ``Group.id``,
0 = the world); ``root`` is a rank *within* that group (as Paddle's ``root``/
``root_id``); ``nranks`` (the group's size) fixes the output shape of the gathering
and scattering ops, so a program's types are known without a live group;
``reduce_op`` is one of ``sum``, ``max``, ``min``, ``prod``, ``avg``.

The references below are the executable specification for a group of ONE rank
(identity, a copy); with more ranks they refuse instead of pretending. Every op is
``side_effect``: another rank waits for it, so passes never drop, merge or fold it.

Semantics with n ranks (x_k is rank k's input, y_k its output):

- ``c_allreduce``: y_k = x_0 ∘ … ∘ x_{n-1} (avg: the sum / n);
- ``c_broadcast``: y_k = x_root;
- ``c_reduce``: y_root = x_0 ∘ … ∘ x_{n-1}, y_k = 0 elsewhere (the zeros make it the
  conjugate of ``c_broadcast`` under differentiation; ``fw.distributed.reduce`` keeps
  the other ranks' tensors, so it is not traced to this op);
- ``c_allgather``: y_k = concat(x_0, …, x_{n-1}) along axis 0;
- ``c_reducescatter``: x_k split along axis 0 into n chunks; y_k = chunk k of the
  reduction;
- ``all_to_all``: x_k split along axis 0 into n equal chunks x_k[0..n-1]; y_k =
  concat(x_0[k], …, x_{n-1}[k]) along axis 0 (rank j's chunk k goes to rank k, in slot
  j). Same shape in and out; the exchange is a block transpose, so it is its own
  inverse (and its own VJP).
"""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.types import TensorType
from fw.core.ops._registry import defop

__all__ = ["REDUCE_OPS", "COLLECTIVE_OPS"]

REDUCE_OPS = ("sum", "max", "min", "prod", "avg")
COLLECTIVE_OPS = ("c_allreduce", "c_broadcast", "c_reduce", "c_allgather", "c_reducescatter",
                  "all_to_all")


def _int(v, op, arg, lo):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise InvalidTypeError(f"{op}: attribute '{arg}' must be an int, got {v!r}")
    v = int(v)
    if v < lo:
        raise InvalidArgumentError(f"{op}: attribute '{arg}' must be >= {lo}, got {v}")
    return v


def _canon(op):
    def canon(attrs):
        out = dict(attrs)
        if "reduce_op" in out:
            r = out["reduce_op"]
            r = r.lower() if isinstance(r, str) else r
            if r not in REDUCE_OPS:
                raise InvalidArgumentError(f"{op}: attribute 'reduce_op' must be one of "
                                           f"{list(REDUCE_OPS)}, got {attrs['reduce_op']!r}")
            out["reduce_op"] = r
        out["ring_id"] = _int(out["ring_id"], op, "ring_id", 0)
        if "root" in out:
            out["root"] = _int(out["root"], op, "root", 0)
        if "nranks" in out:
            out["nranks"] = _int(out["nranks"], op, "nranks", 1)
        return out

    return canon


def _check_avg(op, dtype, reduce_op):
    if reduce_op == "avg" and not dtype.is_inexact:
        raise InvalidTypeError(f"{op}: reduce_op='avg' needs a floating or complex x, got "
                               f"{dtype.name} (use 'sum' and divide)")
    if reduce_op in ("max", "min") and dtype.is_complex:
        raise InvalidTypeError(f"{op}: reduce_op={reduce_op!r} is not defined for complex x "
                               f"({dtype.name})")


def _one_rank(op, what):
    raise UnsupportedError(f"{op}: {what}, but no communication backend is registered (the "
                           f"reference kernel is the one-rank case); initialise one with "
                           f"fw.distributed.init_parallel_env()")


# ---------------------------------------------------------------- all-reduce
def _allreduce_infer(x, reduce_op="sum", ring_id=0):
    _check_avg("c_allreduce", x.dtype, reduce_op)
    return TensorType(x.shape, x.dtype)


def _allreduce_ref(x, reduce_op="sum", ring_id=0):
    # one rank: every reduction (avg too) of a single operand is the operand
    _check_avg("c_allreduce", _dtype_of(x), reduce_op)
    return x.copy()


def _dtype_of(a):
    from fw.core import dtypes as _dt

    return _dt.from_numpy(a.dtype)


defop("c_allreduce", ("x",), {"reduce_op": "sum", "ring_id": 0}, infer=_allreduce_infer,
      reference=_allreduce_ref, canon=_canon("c_allreduce"), promote=None, side_effect=True,
      family="collective", api=False, method=False,
      doc="Reduce x over the ranks of group ring_id; every rank gets the result.")


# ---------------------------------------------------------------- broadcast / reduce
def _rooted_infer(op):
    def infer(x, root=0, ring_id=0, reduce_op="sum"):
        _check_avg(op, x.dtype, reduce_op)
        return TensorType(x.shape, x.dtype)

    return infer


def _rooted_ref(op):
    def ref(x, root=0, ring_id=0, reduce_op="sum"):
        if root != 0:
            _one_rank(op, f"root={root} names a rank other than 0")
        _check_avg(op, _dtype_of(x), reduce_op)
        return x.copy()

    return ref


defop("c_broadcast", ("x",), {"root": 0, "ring_id": 0}, infer=_rooted_infer("c_broadcast"),
      reference=_rooted_ref("c_broadcast"), canon=_canon("c_broadcast"), promote=None,
      side_effect=True, family="collective", api=False, method=False,
      doc="Every rank of group ring_id gets x of its rank root.")
defop("c_reduce", ("x",), {"reduce_op": "sum", "root": 0, "ring_id": 0},
      infer=_rooted_infer("c_reduce"), reference=_rooted_ref("c_reduce"),
      canon=_canon("c_reduce"), promote=None, side_effect=True, family="collective",
      api=False, method=False,
      doc="Rank root of group ring_id gets the reduction of x; the other ranks get zeros.")


# ---------------------------------------------------------------- gather / scatter
def _gather_infer(x, nranks=1, ring_id=0):
    if len(x.shape) == 0:
        raise InvalidArgumentError("c_allgather: x must have at least one axis (the "
                                   "gathered axis 0), got a 0-D tensor")
    d0 = x.shape[0]
    return TensorType((d0 * nranks if d0 >= 0 else -1,) + tuple(x.shape[1:]), x.dtype)


def _gather_ref(x, nranks=1, ring_id=0):
    if x.ndim == 0:
        raise InvalidArgumentError("c_allgather: x must have at least one axis (the "
                                   "gathered axis 0), got a 0-D tensor")
    if nranks != 1:
        _one_rank("c_allgather", f"nranks={nranks}")
    return x.copy()


defop("c_allgather", ("x",), {"nranks": 1, "ring_id": 0}, infer=_gather_infer,
      reference=_gather_ref, canon=_canon("c_allgather"), promote=None, side_effect=True,
      family="collective", api=False, method=False,
      doc="Concatenate x of every rank of group ring_id (nranks ranks) along axis 0.")


def _scatter_shape(shape, nranks):
    if len(shape) == 0:
        raise InvalidArgumentError("c_reducescatter: x must have at least one axis (the "
                                   "scattered axis 0), got a 0-D tensor")
    d0 = shape[0]
    if d0 >= 0 and d0 % nranks:
        raise InvalidArgumentError(f"c_reducescatter: axis 0 of x (shape {list(shape)}) must "
                                   f"split evenly into nranks={nranks} chunks")
    return (d0 // nranks if d0 >= 0 else -1,) + tuple(shape[1:])


def _scatter_infer(x, reduce_op="sum", nranks=1, ring_id=0):
    _check_avg("c_reducescatter", x.dtype, reduce_op)
    return TensorType(_scatter_shape(x.shape, nranks), x.dtype)


def _scatter_ref(x, reduce_op="sum", nranks=1, ring_id=0):
    _scatter_shape(x.shape, nranks)
    _check_avg("c_reducescatter", _dtype_of(x), reduce_op)
    if nranks != 1:
        _one_rank("c_reducescatter", f"nranks={nranks}")
    return x.copy()


defop("c_reducescatter", ("x",), {"reduce_op": "sum", "nranks": 1, "ring_id": 0},
      infer=_scatter_infer, reference=_scatter_ref, canon=_canon("c_reducescatter"),
      promote=None, side_effect=True, family="collective", api=False, method=False,
      doc="Reduce x over group ring_id; rank k gets chunk k (of nranks, along axis 0).")


# ---------------------------------------------------------------- all-to-all
def _a2a_check(shape, nranks):
    if len(shape) == 0:
        raise InvalidArgumentError("all_to_all: x must have at least one axis (the exchanged "
                                   "axis 0), got a 0-D tensor")
    d0 = shape[0]
    if d0 >= 0 and d0 % nranks:
        raise InvalidArgumentError(f"all_to_all: axis 0 of x (shape {list(shape)}) must split "
                                   f"evenly into nranks={nranks} chunks")


def _a2a_infer(x, nranks=1, ring_id=0):
    _a2a_check(x.shape, nranks)
    return TensorType(x.shape, x.dtype)


def _a2a_ref(x, nranks=1, ring_id=0):
    _a2a_check(x.shape, nranks)
    if nranks != 1:
        _one_rank("all_to_all", f"nranks={nranks}")
    return x.copy()


defop("all_to_all", ("x",), {"nranks": 1, "ring_id": 0}, infer=_a2a_infer,
      reference=_a2a_ref, canon=_canon("all_to_all"), promote=None, side_effect=True,
      family="collective", api=False, method=False,
      doc="Split x along axis 0 into nranks chunks; chunk k goes to rank k of group "
          "ring_id, which concatenates what it receives in rank order.")
