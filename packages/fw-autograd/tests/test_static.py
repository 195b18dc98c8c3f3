"""Static (IR) backward: append_backward / fw.grad on Values, with the same
rules as eager mode; executor gradients must equal eager gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.autograd import append_backward
from fw.core.errors import UnsupportedError
from fw.core.ir import TensorType, building, run
from fw.core.ir.control import cond, while_loop
from fw.core.ops import call


def param(values, name):
    t = fw.to_tensor(np.asarray(values, dtype=np.float64), stop_gradient=False)
    t.trainable = True
    t.name = name
    return t


def static_grads(fn, inputs, params, input_types=None):
    """Trace fn(*inputs) into a program, append its backward, run it."""
    with building() as b:
        vals = [b.add_input(t if t is not None else
                            TensorType(np.shape(a), str(np.asarray(a).dtype)), f"in{i}")
                for i, (a, t) in enumerate(zip(inputs, input_types or [None] * len(inputs)))]
        loss = fn(*vals)
        pg = append_backward(loss)
        b.set_outputs([loss] + [g for _, g in pg])
    outs = run(b.program, *[fw.to_tensor(a) for a in inputs])
    outs = outs if isinstance(outs, tuple) else (outs,)
    by_name = {p.label: o.numpy() for (p, _), o in zip(pg, outs[1:])}
    return outs[0].numpy(), by_name, b.program


def eager_grads(fn, inputs, params):
    for p in params:
        p.clear_grad()
    loss = fn(*[fw.to_tensor(a) for a in inputs])
    loss.backward()
    return loss.numpy(), {p.name: (None if p.grad is None else p.grad.numpy()) for p in params}


def assert_same(fn, inputs, params, input_types=None):
    sl, sg, prog = static_grads(fn, inputs, params, input_types)
    el, eg = eager_grads(fn, inputs, params)
    np.testing.assert_allclose(sl, el, rtol=1e-10)
    for name, g in eg.items():
        if g is None:  # unreached eagerly; statically it may be a branch not taken: zeros
            assert name not in sg or not np.any(sg[name])
        else:
            np.testing.assert_allclose(sg[name], g, rtol=1e-9, atol=1e-12, err_msg=name)
    return prog


def test_mlp_with_a_dynamic_batch():
    rng = np.random.default_rng(0)
    w1 = param(rng.standard_normal((4, 8)), "w1")
    b1 = param(rng.standard_normal(8), "b1")
    w2 = param(rng.standard_normal((8, 2)), "w2")

    def f(x):
        h = fw.tanh(fw.matmul(x, w1) + b1)
        return fw.mean(fw.matmul(h, w2) ** 2)

    xv = rng.standard_normal((5, 4))
    assert_same(f, [xv], [w1, b1, w2], [TensorType([-1, 4], "float64")])


@pytest.mark.parametrize("flag", [True, False])
def test_gradient_through_cond_is_a_cond_of_gradients(flag):
    w = param([0.5, -1.0, 2.0], "w")
    v = param([1.5], "v")

    def f(x, p):
        h = x * w
        return cond(p, lambda: (fw.sin(h) * v).sum(), lambda: (h * h).sum())

    prog = assert_same(f, [np.array([1.0, 2.0, 3.0]), np.array(flag)], [w, v])
    assert sum(1 for op in prog.walk() if op.name == "cond") == 2


def _counter():
    return fw.full([], 0, dtype="int64")


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_gradient_through_a_while_loop(trips):
    w = param([0.5, -1.5], "w")
    v = param([0.25], "v")

    def f(x, n):
        _, h = while_loop(lambda i, h: i < n,
                          lambda i, h: (i + 1, fw.sin(h * w) + h * v), [_counter(), x])
        return (h * h).sum() + (h * w).sum()

    prog = assert_same(f, [np.array([1.0, -0.3]), np.array(trips)], [w, v])
    assert sum(1 for op in prog.walk() if op.name == "while") == 3  # forward, record, reverse


def test_gradient_through_a_while_loop_with_a_data_dependent_trip_count_and_dynamic_batch():
    w = param([[0.9, -0.2], [0.3, 0.8]], "w")

    def f(x):
        def body(h, k):
            h = fw.tanh(fw.matmul(h, w)) * 1.5
            return h, k + 1

        h, k = while_loop(lambda h, k: (fw.abs(h).sum() > 0.5) & (k < 20), body,
                          [x, _counter()])
        return fw.mean(h * h) + k.astype("float64") * 0.0

    rng = np.random.default_rng(0)
    assert_same(f, [rng.standard_normal((3, 2))], [w], [TensorType([-1, 2], "float64")])


def test_gradient_through_nested_loops_and_a_cond_in_the_body():
    w = param([0.7, 1.1], "w")

    def f(x):
        def inner(j, g):
            return j + 1, g * w + 0.1

        def outer(i, h):
            _, h = while_loop(lambda j, g: j < 2, inner, [_counter(), h])
            h = cond(h.sum() > 0, lambda: fw.sin(h), lambda: h * w)
            return i + 1, h

        _, h = while_loop(lambda i, h: i < 3, outer, [_counter(), x])
        return (h * h).sum()

    for xv in ([0.5, 0.2], [-2.0, 0.1]):
        assert_same(f, [np.array(xv)], [w])


def test_loop_carrying_outer_values_and_a_loop_inside_a_cond_branch():
    w = param([0.5, -1.5], "w")
    u = param([2.0, 1.0], "u")

    def carries_outer(x):  # a carry set to an outer value, one passed through unchanged
        _, a, b, c = while_loop(lambda i, a, b, c: i < 3,
                                lambda i, a, b, c: (i + 1, a * w, u, c),
                                [_counter(), x, x * 2.0, x])
        return (a * b).sum() + (c * w).sum()

    assert_same(carries_outer, [np.array([1.0, 2.0])], [w, u])

    def in_branch(x, p):
        def loop():
            _, h = while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, fw.sin(h * w)),
                              [_counter(), x * u])
            return (h * h).sum()
        return cond(p, loop, lambda: (x * w).sum())

    for flag in (True, False):
        assert_same(in_branch, [np.array([0.3, -0.7]), np.array(flag)], [w, u])


def test_gradient_of_the_loop_input_and_a_clear_error_for_second_order():
    with building() as b:
        x = b.add_input(TensorType([2], "float64"), "x")
        _, h = while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * x), [_counter(), x])
        y = h.sum()  # sum(x ** 4)
        (g,) = fw.grad(y, x, create_graph=True)
        b.set_outputs([y, g])
        with pytest.raises(UnsupportedError, match="order 2 and higher through a while loop"):
            fw.grad(g.sum(), x)
    xv = np.array([1.5, -0.5])
    y, g = run(b.program, fw.to_tensor(xv))
    np.testing.assert_allclose(y.numpy(), np.sum(xv ** 4))
    np.testing.assert_allclose(g.numpy(), 4 * xv ** 3)


def test_while_outside_the_gradient_path_is_fine():
    w = param([2.0], "w")
    with building() as b:
        x = b.add_input(TensorType([1], "float64"), "x")
        _, k = while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * 2.0),
                          [fw.full([], 0, dtype="int64"), x])
        loss = (x * w).sum() + k.sum()
        (pg,) = append_backward(loss)
        b.set_outputs([pg[1]])
    np.testing.assert_allclose(run(b.program, fw.to_tensor(np.array([3.0]))).numpy(), [3.0])


def test_fw_grad_on_values_and_second_order_static():
    with building() as b:
        x = b.add_input(TensorType([3], "float64"), "x")
        y = (x ** 3).sum()
        (g,) = fw.grad(y, x, create_graph=True)
        (h,) = fw.grad(g.sum(), x)
        b.set_outputs([g, h])
    g, h = run(b.program, fw.to_tensor(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0, 27.0])
    np.testing.assert_allclose(h.numpy(), [6.0, 12.0, 18.0])


def test_append_backward_program_first_and_no_grad_set():
    w = param([1.0, 2.0], "w")
    u = param([3.0], "u")
    with building() as b:
        x = b.add_input(TensorType([2], "float64"), "x")
        loss = (x * w).sum() * u.sum()
    pg = append_backward(b.program, loss, no_grad_set=["u"])
    assert [p.label for p, _ in pg] == ["w"]
    pg = append_backward(loss, parameter_list=["u"])
    assert [p.label for p, _ in pg] == ["u"]


# ---------------------------------------------------------------- property test
UNARY = [fw.tanh, fw.sin, fw.sigmoid, lambda t: fw.exp(fw.tanh(t)), lambda t: t * t,
         lambda t: fw.core.ops.call("softmax", t, axis=-1), lambda t: fw.abs(t) + 1.0,
         lambda t: fw.transpose(fw.transpose(t, [1, 0]), [1, 0]),
         lambda t: t - fw.mean(t, axis=1, keepdim=True),
         lambda t: fw.cumsum(t, axis=0), lambda t: fw.flip(t, axis=[1])]
BINARY = [fw.add, fw.subtract, fw.multiply, lambda a, b: a / (fw.exp(b) + 1.0), fw.maximum,
          lambda a, b: fw.where(a > b, a, b * 2.0),
          lambda a, b: fw.concat([a, b], axis=0)[1:4],
          lambda a, b: a * fw.sum(b),
          lambda a, b: fw.matmul(a, fw.transpose(b, [1, 0])) @ b * 0.1]


@st.composite
def programs(draw):
    n = draw(st.integers(2, 6))
    steps = []
    for _ in range(n):
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, 99))))
        else:
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, 99)), draw(st.integers(0, 99))))
    return steps


def build(steps, x, params):
    pool = [x] + [fw.matmul(x, p) for p in params]
    for s in steps:
        if s[0] == "u":
            pool.append(UNARY[s[1]](pool[s[2] % len(pool)]))
        else:
            pool.append(BINARY[s[1]](pool[s[2] % len(pool)], pool[s[3] % len(pool)]))
    out = pool[-1]
    for v in pool[1:-1]:  # every value contributes, so every rule is exercised
        out = out + 0.1 * v
    return fw.mean(out * out)


@settings(max_examples=12, deadline=None)
@given(steps=programs(), seed=st.integers(0, 2**31 - 1))
def test_random_programs_static_equals_eager(steps, seed):
    rng = np.random.default_rng(seed)
    params = [param(rng.standard_normal((4, 4)) * 0.5, f"p{i}") for i in range(2)]
    xv = rng.standard_normal((3, 4))
    assert_same(lambda x: build(steps, x, params), [xv], params)


LAYERS = {
    "conv_pool": lambda x, w: fw.sum(call("max_pool", call("conv", x, w, None, padding=1),
                                           kernel_size=2) ** 2),
    "avg_pool_softmax": lambda x, w: fw.sum(call("softmax", call("avg_pool", x * w[0, 0, 0, 0],
                                                                  kernel_size=2), axis=-1)
                                            * x[:, :, :2, :2]),
    "layer_norm_getitem": lambda x, w: fw.sum(call("layer_norm", x, None, None,
                                                   begin_norm_axis=2)[0][:, :, 1:] * w[0, 0, 1, 1]),
    "fft": lambda x, w: fw.sum(fw.abs(fw.fft.rfft(x * w[0, 0, 0, 0])) ** 2),
    "linalg": lambda x, w: fw.sum(fw.linalg.inv(fw.matmul(x[0, 0], fw.transpose(x[0, 0],
                                                                               [1, 0]))
                                                + 4.0 * fw.eye(4, dtype="float64"))
                                  * w[0, 0, 0, 0]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_families_static_equals_eager(name):
    rng = np.random.default_rng(3)
    w = param(rng.standard_normal((2, 1, 3, 3)), "w")
    xv = rng.standard_normal((2, 1, 4, 4))
    assert_same(lambda x: LAYERS[name](x, w), [xv], [w])
