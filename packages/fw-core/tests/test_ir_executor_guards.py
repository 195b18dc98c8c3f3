"""Guards of the executor's memory planning, each on both sides: an optimizer update is
computed in place in the parameter exactly when nothing can still see the old value,
and a result goes into a dying operand's buffer only when the operand is really dead,
of the result's dtype and shape; the values are those of the unplanned program."""

import numpy as np

import fw
from fw.core.ir import TensorType, building, trace
from fw.core.ir.executor import Compiled
from fw.core.ops import call

T = TensorType


def _param(values, name, trainable=True):
    t = fw.to_tensor(np.asarray(values, np.float32))
    t.name = name
    t.persistable = True
    t.trainable = trainable
    t.stop_gradient = not trainable
    return t


def _sgd_program(view_first: bool, read_view: bool):
    """w <- sgd(w, g, lr) with a reshape of w (a view of its memory) before it."""
    w = _param([1.0, 2.0], "w")
    lr = _param([0.5], "lr", trainable=False)
    with building() as b:
        g = b.add_input(T([2], "float32"), "g")
        view = w.reshape([2, 1]) if view_first else None
        new = call("sgd", w, g, lr)
        b.record_update(w, new)
        outs = []
        if read_view:  # read after the update: must see the old values
            outs.append(view * 1.0)
        b.set_outputs(outs)
    return b.program, w


def test_an_unread_view_of_the_param_does_not_stop_the_inplace_update():
    # the view is the first op, the update the second: the view is never read
    p, w = _sgd_program(view_first=True, read_view=False)
    c = Compiled(p)
    assert "out=(" in c.source, c.source
    data = w._data
    c([np.ones(2, np.float32)])
    assert w._data is data
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])


def test_a_view_read_after_the_update_sees_the_old_values():
    p, w = _sgd_program(view_first=True, read_view=True)
    c = Compiled(p)
    assert "out=(" not in c.source
    (out,) = c([np.ones(2, np.float32)])
    np.testing.assert_array_equal(np.asarray(out).reshape(-1), [1.0, 2.0])
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])


def _reused(c):
    return [s.op.name for s in c.main.steps if s.reuse]


def test_no_reuse_into_a_buffer_of_another_dtype():
    """less(a, b) gives bool from float operands: the float buffer of a dying operand
    cannot hold it (the result would come back as 0.0/1.0 floats)."""
    p = trace(lambda x: (x.exp() < x.neg().exp()), [T([4], "float64")])
    c = Compiled(p)
    assert "less_than" not in _reused(c)
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    (got,) = c([x])
    assert np.asarray(got).dtype == np.bool_
    np.testing.assert_array_equal(got, np.exp(x) < np.exp(-x))


def test_no_reuse_of_an_operand_read_later():
    def f(x):
        a = x.exp()
        b = a.tanh()  # a is read again below: tanh must not write into it
        return b + a

    p = trace(f, [T([5], "float64")])
    c = Compiled(p)
    assert "tanh" not in _reused(c) and "add" in _reused(c)
    x = np.linspace(-1, 1, 5)
    np.testing.assert_array_equal(c([x])[0], np.tanh(np.exp(x)) + np.exp(x))


def test_no_reuse_of_a_smaller_operand_that_broadcasts():
    def f(x, y):
        a = x.exp()  # [1, 3] dies in the add, whose result is [4, 3]
        return a + y.exp()

    p = trace(f, [T([1, 3], "float64"), T([4, 3], "float64")])
    c = Compiled(p)
    x, y = np.full((1, 3), 0.5), np.arange(12.0).reshape(4, 3) / 10
    (got,) = c([x, y])
    np.testing.assert_array_equal(got, np.exp(x) + np.exp(y))
    # the [4, 3] operand is the one whose buffer can take the result
    add = [s for s in c.main.steps if s.op.name == "add"][0]
    assert add.reuse


def test_no_reuse_of_the_programs_constants():
    k = _param(np.arange(3.0), "k", trainable=False)

    def f(x):
        return (k * 2.0).exp() + x, k * 1.0  # k is a constant: never written

    p = trace(f, [T([3], "float32")])
    c = Compiled(p)
    for _ in range(2):
        a, b = c([np.zeros(3, np.float32)])
        np.testing.assert_array_equal(b, np.arange(3.0, dtype=np.float32))
        np.testing.assert_allclose(a, np.exp(np.arange(3.0) * 2), rtol=1e-6)


def test_ops_with_attributes_or_several_results_run_without_out():
    def f(x):
        a = x.exp()
        return call("scale", a, scale=2.0, bias=1.0), call("topk", x.neg(), k=2)[0]

    p = trace(f, [T([4], "float64")])
    c = Compiled(p)
    assert "scale" not in _reused(c) and "topk" not in _reused(c)
    x = np.array([0.1, -0.2, 0.3, 0.0])
    a, t = c([x])
    np.testing.assert_allclose(a, np.exp(x) * 2.0 + 1.0, rtol=1e-15)
    np.testing.assert_array_equal(t, [0.2, -0.0])


def test_ops_without_operands_make_their_results_on_the_programs_device():
    """full/arange compute on the host; in a program for a device their results are
    moved there (as eager mode does), and on the cpu they stay host arrays."""
    from fw.core.testing import device as _dev

    p = trace(lambda x: (call("full", shape=[2, 2], fill_value=1.5, dtype="float64"),
                         call("arange", start=0, end=3, step=1, dtype="int64"), x * 2.0),
              [T([2], "float64")])
    place = _dev.place()
    dev_type = type(fw.to_tensor(np.zeros(1), place=place)._data)
    x = fw.to_tensor(np.array([1.0, 2.0]), place=place)._data
    for backend, kind in ((place.kind, dev_type), ("cpu", np.ndarray)):
        arg = x if backend != "cpu" else np.array([1.0, 2.0])
        outs = Compiled(p, backend)([arg])
        assert [type(o) for o in outs] == [kind] * 3, (backend, [type(o) for o in outs])
        host = [np.asarray(_dev_host(o)) for o in outs]
        np.testing.assert_array_equal(host[0], np.full((2, 2), 1.5))
        np.testing.assert_array_equal(host[1], np.arange(3))
        np.testing.assert_array_equal(host[2], [2.0, 4.0])


def _dev_host(a):
    from fw.core.place import backend_of

    return backend_of(a).to_numpy(a)


def test_an_update_op_computes_its_states_in_place_too():
    """momentum writes the new param and the new velocity: both go straight into the
    captured tensors (no temporary for either), and the values are momentum's."""
    w = _param([1.0, 2.0], "w")
    v = _param([0.5, -0.5], "v", trainable=False)
    lr = _param([0.1], "lr", trainable=False)
    with building() as b:
        g = b.add_input(T([2], "float32"), "g")
        new_w, new_v = call("momentum", w, g, lr, v, mu=0.9)
        b.record_update(w, new_w)
        b.record_update(v, new_v)
        b.set_outputs([])
    c = Compiled(b.program)
    (line,) = [ln for ln in c.source.splitlines() if "out=(" in ln]
    outs = line.split("out=(")[1].split(")")[0]
    assert "None" not in outs and outs.count("v") == 2, line
    g = np.array([1.0, -2.0], np.float32)
    c([g])
    vel = 0.9 * np.array([0.5, -0.5], np.float32) + g
    np.testing.assert_allclose(v.numpy(), vel, rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), np.array([1.0, 2.0]) - 0.1 * vel, rtol=1e-6)
