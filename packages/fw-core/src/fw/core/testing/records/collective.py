"""Records for the collective ops, in the one-rank world a single process is (no
communication backend registered): every op is the identity, which the oracle
states independently of the references; the gradients (fw-autograd's records
test) are then those of the identity too, through the collective VJP rules.
The references' refusal of more ranks is tested in tests/test_collective_ops.py
(with no backend registered, whatever ran before); multi-rank semantics by
fw-distributed's launcher tests."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, COMPLEX, FLOATS_LOW, Sample, arrays, record, shapes

F32 = np.float32
I64 = np.int64
ALL = ALL_NUMERIC + FLOATS_LOW + COMPLEX + (_dt.bool_,)


def _identity(x, **_attrs):
    return np.array(x, copy=True)


def _linear_op(draw, dtype):
    """'sum'/'avg' on floating dtypes (avg needs one), any reduction on integers."""
    if dtype.is_inexact:
        return draw(st.sampled_from(("sum", "avg")))
    return draw(st.sampled_from(("sum", "max", "min", "prod")))


def _allreduce(draw, dtype):
    return Sample([arrays(draw, dtype, shapes(draw))],
                  {"reduce_op": _linear_op(draw, dtype), "ring_id": 0})


def _rooted(reduce):
    def sample(draw, dtype):
        attrs = {"root": 0, "ring_id": 0}
        if reduce:
            attrs["reduce_op"] = "sum"
        return Sample([arrays(draw, dtype, shapes(draw))], attrs)

    return sample


def _gather(draw, dtype):
    return Sample([arrays(draw, dtype, shapes(draw, min_dims=1))], {"nranks": 1, "ring_id": 0})


def _scatter(draw, dtype):
    return Sample([arrays(draw, dtype, shapes(draw, min_dims=1))],
                  {"reduce_op": _linear_op(draw, dtype), "nranks": 1, "ring_id": 0})


_BAD_OP = ([np.ones(2, F32)], {"reduce_op": "mean"}, InvalidArgumentError, "reduce_op")
_AVG_INT = ([np.ones(2, I64)], {"reduce_op": "avg"}, InvalidTypeError, "floating")
_RING = ([np.ones(2, F32)], {"ring_id": -1}, InvalidArgumentError, "ring_id")

record("c_allreduce", _allreduce, dtypes=ALL, grad_order=2, oracle=_identity,
       errors=[_BAD_OP, _AVG_INT, _RING,
               ([np.ones(2, np.complex64)], {"reduce_op": "max"}, InvalidTypeError, "complex")])
record("c_broadcast", _rooted(False), dtypes=ALL, grad_order=2, oracle=_identity,
       errors=[_RING])
record("c_reduce", _rooted(True), dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=2, oracle=_identity,
       errors=[_BAD_OP, ([np.ones(2, F32)], {"root": -1}, InvalidArgumentError, "root")])
record("c_allgather", _gather, dtypes=ALL, grad_order=2, oracle=_identity,
       errors=[([np.ones((), F32)], {}, InvalidArgumentError, "at least one axis"),
               ([np.ones(2, F32)], {"nranks": 0}, InvalidArgumentError, "nranks")])
record("c_reducescatter", _scatter, dtypes=ALL_NUMERIC + FLOATS_LOW, grad_order=2,
       oracle=_identity,
       errors=[([np.ones(3, F32)], {"nranks": 2}, InvalidArgumentError, "split evenly"),
               _AVG_INT])



def _a2a(draw, dtype):
    return Sample([arrays(draw, dtype, shapes(draw, min_dims=1))], {"nranks": 1, "ring_id": 0})


record("all_to_all", _a2a, dtypes=ALL, grad_order=2, oracle=_identity,
       errors=[([np.ones((), F32)], {}, InvalidArgumentError, "at least one axis"),
               ([np.ones(3, F32)], {"nranks": 2}, InvalidArgumentError, "split evenly"),
               ([np.ones(2, F32)], {"nranks": 0}, InvalidArgumentError, "nranks")])
