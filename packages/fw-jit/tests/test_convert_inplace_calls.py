"""Functions that write into their first argument (fw.distributed's in-place
collectives, matched by name: ``_transform.INPLACE_FIRST_ARG``): in a converted
function the statement ``all_reduce(x)`` rebinds ``x`` to what the call returns
while tracing, ``all_reduce(p.grad)`` makes that the gradient ``opt.step()`` reads,
and a call that returns a concrete value leaves the variable alone. The stand-ins
below have the same protocol as fw.distributed's (eager: write in place, return a
handle; tracing: return the new value) without any communication."""

import numpy as np

import fw
from fw import nn
from fw.core.internal import build_state
from fw.core.ir import Value
from fw.jit._transform import INPLACE_FIRST_ARG


class _Handle:
    def wait(self):
        return True


def all_reduce(x, scale=3.0):
    """Stand-in: multiplies x by `scale` in place (eager) or returns the product."""
    if build_state.builder is not None or isinstance(x, Value):
        return x * scale
    with fw.no_grad():
        x.set_value(x * scale)
    return _Handle()


def broadcast(x, src=0):
    """A same-named function that is not in place: returns a concrete value."""
    return 7


def unlisted(x):
    return x * 100.0


def test_the_rewritten_names():
    assert INPLACE_FIRST_ARG == {"all_reduce", "broadcast", "reduce_scatter", "all_gather"}


def test_statement_rebinds_the_argument():
    def f(x):
        y = x + 1.0
        all_reduce(y)
        broadcast(y)      # returns a Python value: y stays
        unlisted(y)       # not an in-place name: not rewritten
        return y

    xv = np.array([1.0, 2.0], np.float32)
    eager = f(fw.to_tensor(xv)).numpy()
    sf = fw.jit.to_static(f, full_graph=True)
    static = sf(fw.to_tensor(xv)).numpy()
    np.testing.assert_array_equal(eager, (xv + 1) * 3)
    np.testing.assert_array_equal(static, eager)
    code = sf.code
    assert "y = __fw_jst.convert_inplace(y, __fw_jst.convert_call(all_reduce)(y))" in code, code
    assert "\n    __fw_jst.convert_call(unlisted)(y)" in code, code


def test_statement_in_a_tensor_branch():
    def f(x):
        y = x * 1.0
        if x.sum() > 0:
            all_reduce(y, 2.0)
        return y

    sf = fw.jit.to_static(f, full_graph=True)
    np.testing.assert_array_equal(sf(fw.to_tensor([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(sf(fw.to_tensor([-1.0, -2.0])).numpy(), [-1.0, -2.0])


def test_gradient_attribute_feeds_the_step():
    fw.seed(0)
    lin = nn.Linear(2, 1)
    opt = fw.optimizer.SGD(1.0, parameters=lin.parameters())
    params = list(lin.parameters())
    before = [p.numpy().copy() for p in params]

    @fw.jit.to_static(full_graph=True)
    def step(x):
        loss = lin(x).sum()
        loss.backward()
        for p in params:
            all_reduce(p.grad, 10.0)
        opt.step()
        opt.clear_grad()
        return loss

    step(fw.to_tensor(np.ones((3, 2), np.float32)))
    # d(sum(x W + b))/dW = 3, /db = 3; the stand-in scaled them by 10
    np.testing.assert_allclose(params[0].numpy(), before[0] - 30.0, rtol=1e-6)
    np.testing.assert_allclose(params[1].numpy(), before[1] - 30.0, rtol=1e-6)
