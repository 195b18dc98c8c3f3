"""The collective ops' communication hook (``fw.core.internal.collectives``): the
kernels hand their array to the registered backend (eagerly and in the executor),
run the one-rank reference without one, and the passes keep collectives (another
rank waits for them). The references and infer rules are checked for every op by
the generic record tests (records/collective.py)."""

import numpy as np
import pytest

import fw
from fw.core.errors import UnsupportedError
from fw.core.internal import collectives
from fw.core.ir import TensorType, run, trace
from fw.core.ir.passes.dce import DeadCodeElimination
from fw.core.ops import OPS, call
from fw.core.ops.collective import COLLECTIVE_OPS


@pytest.fixture
def fake():
    """A backend that logs its calls and adds 100 (a recognisable 'reduction')."""
    log = []

    def backend(name, x, attrs):
        log.append((name, dict(attrs), x.shape))
        return x + 100

    old = collectives.register_backend(backend)
    yield log
    collectives.register_backend(old)


def test_ops_are_declared_side_effecting_and_not_public():
    for n in COLLECTIVE_OPS:
        op = OPS[n]
        assert op.side_effect and op.family == "collective"
        assert not hasattr(fw, n)


@pytest.fixture
def no_backend():
    """No backend registered for the test (fw-distributed may have left its own)."""
    old = collectives.register_backend(None)
    yield
    collectives.register_backend(old)


@pytest.mark.parametrize("op,attrs", [("c_allgather", {"nranks": 3}),
                                      ("c_reducescatter", {"nranks": 2}),
                                      ("c_broadcast", {"root": 1}),
                                      ("c_reduce", {"root": 2}),
                                      ("all_to_all", {"nranks": 2})])
def test_without_backend_the_one_rank_reference_runs(no_backend, op, attrs):
    x = fw.to_tensor(np.array([1.0, 2.0], np.float32))
    out = call(op, x)
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
    assert out._data is not x._data                    # a copy, as from a real exchange
    key, value = next(iter(attrs.items()))
    with pytest.raises(UnsupportedError, match=f"{op}: {key}={value}.*no communication "
                                               f"backend is registered"):
        call(op, x, **attrs)


def test_eager_kernel_calls_the_backend_with_canonical_attrs(fake):
    x = fw.to_tensor(np.array([1.0, 2.0], np.float32))
    out = call("c_allreduce", x, reduce_op="MAX", ring_id=3)
    np.testing.assert_array_equal(out.numpy(), [101.0, 102.0])
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])     # the input is not written
    assert fake == [("c_allreduce", {"reduce_op": "max", "ring_id": 3}, (2,))]


def test_executor_calls_the_backend(fake):
    p = trace(lambda v: call("c_broadcast", v * 2.0, root=1), [TensorType([3], "float32")])
    out = run(p, fw.to_tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(out.numpy(), [102.0] * 3)
    assert [(n, a["root"]) for n, a, _ in fake] == [("c_broadcast", 1)]


def test_dead_code_elimination_keeps_unused_collectives():
    def f(v):
        call("c_allreduce", v)       # result unused: still communicates
        return v + 1.0

    p = trace(f, [TensorType([2], "float32")])
    DeadCodeElimination().run(p)
    assert "c_allreduce" in str(p)


def test_register_and_unregister(no_backend):
    def a(name, x, attrs):
        return x

    def b(name, x, attrs):
        return x

    assert collectives.register_backend(a) is None
    try:
        assert collectives.register_backend(b) is a
        assert collectives.unregister_backend(a) is None      # not the current one
        assert collectives.backend is b
        assert collectives.unregister_backend(b) is b
        assert collectives.backend is None
    finally:
        collectives.register_backend(None)
    with pytest.raises(TypeError, match="register_backend: expected a callable"):
        collectives.register_backend(42)


def test_static_shapes_of_gather_and_scatter():
    g = trace(lambda v: call("c_allgather", v, nranks=4), [TensorType([-1, 3], "float32")])
    assert "f32[-1,3]" in str(g)
    g = trace(lambda v: call("c_allgather", v, nranks=4), [TensorType([2, 3], "float32")])
    assert "f32[8,3]" in str(g)
    s = trace(lambda v: call("c_reducescatter", v, nranks=2), [TensorType([6, 3], "float64")])
    assert "f64[3,3]" in str(s)
    a = trace(lambda v: call("all_to_all", v, nranks=3), [TensorType([6, 2], "float32")])
    assert "f32[6,2]" in str(a) and "all_to_all(" in str(a)
    with pytest.raises(Exception, match=r"all_to_all: axis 0 of x \(shape \[4, 2\]\) must "
                                        r"split evenly into nranks=3"):
        trace(lambda v: call("all_to_all", v, nranks=3), [TensorType([4, 2], "float32")])
