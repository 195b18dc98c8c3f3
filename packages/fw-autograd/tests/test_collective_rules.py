"""The VJP rules of the collective ops emit their conjugate collectives (all-reduce
<-> all-reduce, all-gather <-> reduce-scatter, broadcast <-> reduce), eagerly and in
static backward programs, with the op's group; non-linear reductions refuse. A fake
backend logs what the kernels run and stands for a world of 3 ranks where every
rank holds the same values (so the values are known: sums are 3x)."""

import numpy as np
import pytest

import fw
from fw.autograd import gradients
from fw.core.errors import UnsupportedError
from fw.core.internal import collectives
from fw.core.ir import TensorType, trace
from fw.core.ops import call

N = 3


def _backend(log):
    def run(name, x, attrs):
        log.append((name, attrs.get("reduce_op"), attrs.get("root"), attrs["ring_id"]))
        if name == "c_allreduce":
            return x * (N if attrs["reduce_op"] == "sum" else 1)
        if name == "c_allgather":
            return np.concatenate([x] * N)
        if name == "c_reducescatter":
            return x[: x.shape[0] // N] * (N if attrs["reduce_op"] == "sum" else 1)
        if name == "c_reduce":
            return x * N      # this rank is the root
        if name == "all_to_all":  # a block permutation: chunks in reverse order
            k = x.shape[0] // attrs["nranks"]
            return np.concatenate([x[i * k:(i + 1) * k] for i in reversed(range(N))])
        return x.copy()       # c_broadcast

    return run


@pytest.fixture
def log():
    entries = []
    old = collectives.register_backend(_backend(entries))
    yield entries
    collectives.register_backend(old)


def _grad(op, x, **attrs):
    t = fw.to_tensor(x)
    t.stop_gradient = False
    y = call(op, t, **attrs)
    (y * fw.to_tensor(np.arange(y.size, dtype=x.dtype).reshape(y.shape))).sum().backward()
    return t.grad.numpy()


@pytest.mark.parametrize("op,attrs,backward,scale", [
    ("c_allreduce", {"reduce_op": "sum", "ring_id": 2}, ("c_allreduce", "sum", None, 2), N),
    ("c_allreduce", {"reduce_op": "avg", "ring_id": 2}, ("c_allreduce", "avg", None, 2), 1),
    ("c_broadcast", {"root": 1, "ring_id": 0}, ("c_reduce", "sum", 1, 0), N),
    ("c_reduce", {"root": 0, "ring_id": 0}, ("c_broadcast", None, 0, 0), 1),
])
def test_same_shape_rules(log, op, attrs, backward, scale):
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    g = _grad(op, x, **attrs)
    assert log[1] == backward
    # the cotangent is arange(6); the conjugate op of the fake world scales it
    np.testing.assert_allclose(g, np.arange(6.0).reshape(2, 3) * scale)


def test_all_gather_backward_is_a_reduce_scatter(log):
    x = np.ones((2, 2))
    g = _grad("c_allgather", x, nranks=N, ring_id=1)
    assert [e[0] for e in log] == ["c_allgather", "c_reducescatter"] and log[1][3] == 1
    # the reduce-scatter (sum) of arange(12).reshape(6, 2) gives this rank's chunk x N
    np.testing.assert_allclose(g, np.arange(4.0).reshape(2, 2) * N)


def test_reduce_scatter_backward_is_an_all_gather(log):
    x = np.ones((6, 2))
    g = _grad("c_reducescatter", x, nranks=N, reduce_op="avg")
    assert [e[0] for e in log] == ["c_reducescatter", "c_allgather"]
    # avg: the all-gathered cotangent divided by the rank count
    np.testing.assert_allclose(g, np.concatenate([np.arange(4.0).reshape(2, 2)] * N) / N)


def test_all_to_all_backward_is_the_inverse_exchange(log):
    # the fake exchange reverses the chunks (an involution, as a real equal-chunk
    # all-to-all is): the gradient is the cotangent's chunks exchanged back
    x = np.ones((6, 2))
    g = _grad("all_to_all", x, nranks=N, ring_id=5)
    assert [(e[0], e[3]) for e in log] == [("all_to_all", 5), ("all_to_all", 5)]
    cot = np.arange(12.0).reshape(6, 2)
    np.testing.assert_allclose(g, np.concatenate([cot[4:], cot[2:4], cot[:2]]))


@pytest.mark.parametrize("op,attrs", [("c_allreduce", {"reduce_op": "max"}),
                                      ("c_reducescatter", {"reduce_op": "prod"}),
                                      ("c_reduce", {"reduce_op": "avg"})])
def test_non_linear_reductions_have_no_gradient(log, op, attrs):
    with pytest.raises(UnsupportedError, match=f"{op}: no gradient for reduce_op"):
        _grad(op, np.ones((3, 2)), **attrs)


def test_static_backward_emits_the_conjugate_ops():
    def f(v):
        y = call("c_allgather", call("c_allreduce", v, ring_id=4), nranks=2, ring_id=4)
        return gradients([y.sum()], [v])[0]

    text = str(trace(f, [TensorType([2, 3], "float32")]))
    ops = [line.split("= ")[1].split("(")[0] for line in text.splitlines() if " = c_" in line]
    assert ops == ["c_allreduce", "c_allgather", "c_reducescatter", "c_allreduce"], text
    assert text.count("ring_id=4") == 4
