"""The four communication ops of Megatron-style tensor parallelism, as PyLayers
whose forward and backward are conjugate (Shoeybi et al., 2019, "Megatron-LM",
section 3; Paddle's ``c_identity``/``c_split``/``c_concat``/``mp_allreduce``):

- `identity_to_mp`  forward: identity,            backward: all-reduce (sum)
- `allreduce_mp`    forward: all-reduce (sum),    backward: identity
- `split_mp`        forward: keep my block of the last axis, backward: all-gather it
- `gather_mp`       forward: all-gather the last axis,       backward: keep my block

With a tensor-parallel group of one rank each is the identity (no PyLayer at all).
"""

from __future__ import annotations

import numpy as np

from fw.autograd import PyLayer
from fw.core.tensor import wrap
from fw.distributed import _fleet_comm as comm

__all__ = ["identity_to_mp", "allreduce_mp", "split_mp", "gather_mp"]


def _allreduce(a, group):
    out = np.ascontiguousarray(a).copy()
    comm.all_reduce(out, group=group)
    return out


def _block(a, group):
    n, r = group.nranks, group.rank
    d = a.shape[-1]
    if d % n:
        raise ValueError(f"tensor parallel: the last axis ({d}) is not divisible by the "
                         f"model-parallel degree {n} (shape {list(a.shape)})")
    k = d // n
    return np.ascontiguousarray(a[..., r * k:(r + 1) * k])


def _gather_last(a, group):
    parts = comm.all_gather(np.ascontiguousarray(a), group=group)  # [n, ..., k]
    return np.ascontiguousarray(np.concatenate(list(parts), axis=-1))


class _Identity(PyLayer):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return wrap(x._data.copy())

    @staticmethod
    def backward(ctx, dy):
        return wrap(_allreduce(dy._data, ctx.group))


class _AllReduce(PyLayer):
    @staticmethod
    def forward(ctx, x, group):
        return wrap(_allreduce(x._data, group))

    @staticmethod
    def backward(ctx, dy):
        return wrap(dy._data.copy())


class _Split(PyLayer):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return wrap(_block(x._data, group))

    @staticmethod
    def backward(ctx, dy):
        return wrap(_gather_last(dy._data, ctx.group))


class _Gather(PyLayer):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return wrap(_gather_last(x._data, group))

    @staticmethod
    def backward(ctx, dy):
        return wrap(_block(dy._data, ctx.group))


def _apply(cls, x, group):
    if group is None or group.nranks == 1:
        return x
    return cls.apply(x, group)


def identity_to_mp(x, group):
    return _apply(_Identity, x, group)


def allreduce_mp(x, group):
    return _apply(_AllReduce, x, group)


def split_mp(x, group):
    return _apply(_Split, x, group)


def gather_mp(x, group):
    return _apply(_Gather, x, group)
