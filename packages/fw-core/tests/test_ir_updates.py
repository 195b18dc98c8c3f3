"""State updates: ``program.updates`` (captured param/const <- block-0 value) in
the builder, the text form, the verifier, the passes, the executor and the model
file; and the hooks that record them (``Tensor.set_value``, in-place ops)."""

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError, UnsupportedError
from fw.core.ir import TensorType, building, parse, run, verify
from fw.core.ir.control import cond
from fw.core.ir.core import Program
from fw.core.ir.executor import Compiled
from fw.core.ir.passes import PassManager
from fw.core.ir.passes.rewrite import Rewriter
from fw.core.ir.verifier import VerificationError
from fw.core.ops import call
from fw.core.tensor import version_of

T = TensorType


def _param(values, name):
    t = fw.to_tensor(np.asarray(values, np.float32))
    t.name = name
    t.persistable = True
    return t


def _counter_program():
    """out = x * w; w <- w + x (written after each run)."""
    w = _param([1.0, 2.0], "w")
    with building() as b:
        x = b.add_input(T([2], "float32"), "x")
        y = x * w
        b.record_update(w, w + x)
        b.set_outputs([y])
    return b.program, w


def test_record_update_text_round_trip_and_run():
    p, w = _counter_program()
    text = str(p)
    assert "update %c0 = %" in text
    assert text.index("update") < text.index("return")
    assert str(parse(text)) == text
    verify(p)
    v0 = version_of(w)
    (out,) = [run(p, np.ones(2, np.float32))]
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(w.numpy(), [2.0, 3.0])
    assert version_of(w) > v0
    np.testing.assert_array_equal(run(p, np.ones(2, np.float32)).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(w.numpy(), [3.0, 4.0])
    q = p.clone()
    assert list(q.updates.labels) == ["w"]


def test_reads_after_an_update_see_the_new_value():
    w = _param([1.0], "w")
    with building() as b:
        w.set_value(w * 3)  # Tensor.set_value while building records an update
        y = w + 0  # reads the updated value
        b.set_outputs([y])
    np.testing.assert_array_equal(run(b.program).numpy(), [3.0])
    np.testing.assert_array_equal(w.numpy(), [3.0])


def test_inplace_op_on_a_captured_tensor_records_an_update():
    w = _param([1.0, 2.0], "w")
    with building() as b:
        x = b.add_input(T([2], "float32"), "x")
        w.add_(x)
        b.set_outputs([x * 1])
    assert b.program.updates
    run(b.program, np.ones(2, np.float32))
    np.testing.assert_array_equal(w.numpy(), [2.0, 3.0])


def test_updates_write_in_place_so_views_stay_valid():
    base = np.zeros(6, np.float32)
    w = fw.core.tensor.wrap(base[2:4].reshape(2))
    w.name = "w"
    w.persistable = True
    with building() as b:
        x = b.add_input(T([2], "float32"), "x")
        b.record_update(w, x * 2)
        b.set_outputs([x])
    run(b.program, np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(base, [0, 0, 2, 4, 0, 0])


def test_swapping_updates_read_the_old_values():
    a, c = _param([1.0], "a"), _param([2.0], "c")
    with building() as b:
        b.record_update(a, c + 0)
        b.record_update(c, a + 0)
        b.set_outputs([])
    # reads after the first update see the new a: both end up 2
    run(b.program)
    assert float(a) == 2.0 and float(c) == 2.0
    a2, c2 = _param([1.0], "a"), _param([2.0], "c")
    p = Program()
    with building(p) as b:
        va, vc = b.capture(a2), b.capture(c2)
        b.record_update(va, vc)  # plain block arguments: a real swap
        b.record_update(vc, va)
        b.set_outputs([])
    run(p)
    assert float(a2) == 2.0 and float(c2) == 1.0


def test_update_inside_a_nested_block_needs_a_scope():
    w = _param([1.0], "w")
    with building() as b:
        x = b.add_input(T([], "float32"), "x")
        with pytest.raises(UnsupportedError, match="cond/while block"):
            cond(x > 0, lambda: b.record_update(w, w + 1), lambda: None)


def test_update_scopes_carry_nested_updates():
    from fw.core.ir.core import Block

    w = _param([1.0], "w")
    with building() as b:
        b.push(Block(b.program))  # as a cond branch would
        b.push_update_scope()
        new = b.record_update(w, w + 5)
        assert b.current_value(w) is new  # reads in the branch see the update
        scope = b.pop_update_scope()
        b.pop()
        assert [(t, v) for t, v in scope.values()] == [(w, new)]
        assert b.current_value(w) is b.state_arg(w)  # outside: the old value again
        assert not b.program.updates


def test_verifier_checks_updates():
    p, w = _counter_program()
    p.updates.set("nope", p.updates.outputs[0])
    with pytest.raises(VerificationError, match="'nope' is not a param/const"):
        verify(p)
    p, w = _counter_program()
    x = p.inputs()[0]
    p.updates.outputs[0] = call_in(p, lambda: x.sum())
    with pytest.raises(VerificationError, match="f32\\[\\] but 'w' is f32\\[2\\]"):
        verify(p)


def call_in(p, fn):
    with building(p):
        return fn()


def test_parser_rejects_bad_updates():
    p, _ = _counter_program()
    text = str(p)
    with pytest.raises(InvalidArgumentError, match="not a param/const"):
        parse(text.replace("update %c0", "update %x"))
    line = [ln for ln in text.splitlines() if "update" in ln][0]
    with pytest.raises(InvalidArgumentError, match="updated twice"):
        parse(text.replace(line, line + "\n" + line))


def test_passes_keep_update_values():
    w = _param([1.0, 2.0], "w")
    with building() as b:
        x = b.add_input(T([2], "float32"), "x")
        u1 = x * 2
        u2 = x * 2  # CSE merges it into u1
        b.record_update(w, u2 + w)
        b.set_outputs([u1])
    p = b.program
    PassManager(["cse", "dce", "constant_folding"]).run(p)
    verify(p)
    run(p, np.ones(2, np.float32))
    np.testing.assert_array_equal(w.numpy(), [3.0, 4.0])
    rw = Rewriter(p)
    assert any(owner is p.updates for owner, _ in rw.users(p.updates.outputs[0]))


def test_constant_folding_does_not_fold_written_constants():
    c = _param([1.0], "c")
    with building() as b:
        y = c * 2
        b.record_update(c, y)
        b.set_outputs([y])
    p = b.program
    PassManager(["constant_folding", "dce"]).run(p)
    run(p)
    run(p)
    assert float(c) == 4.0


def test_inplace_optimizer_update_without_copies():
    from fw.core.ops.optimizer import UPDATE_OPS

    assert "sgd" in UPDATE_OPS
    w = _param([1.0, 2.0], "w")
    w.trainable = True
    w.stop_gradient = False
    lr = _param([0.5], "lr")
    with building() as b:
        g = b.add_input(T([2], "float32"), "g")
        new = call("sgd", w, g, lr)
        b.record_update(w, new)
        b.set_outputs([])
    c = Compiled(b.program)
    assert "out=(" in c.source
    data = w._data
    c([np.ones(2, np.float32)])
    assert w._data is data
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])


def test_model_file_keeps_updates(tmp_path):
    p, w = _counter_program()
    path = tmp_path / "m.fwmodel"
    fw.core.ir.save(p, path)
    q, params = fw.core.ir.load(path)
    assert list(q.updates.labels) == ["w"]
    run(q, np.ones(2, np.float32))
    np.testing.assert_array_equal(params["w"].numpy(), [2.0, 3.0])


def test_value_backward_without_fw_jit_hook():
    from fw.core.ir.core import value_hooks

    saved = value_hooks.backward
    value_hooks.backward = None
    try:
        with building() as b:
            x = b.add_input(T([], "float32"), "x")
            with pytest.raises(UnsupportedError, match="backward"):
                x.backward()
    finally:
        value_hooks.backward = saved


def test_implicit_builder_hook():
    from fw.core.ir.core import _state

    p = Program()
    x = p.block.add_arg(T([2], "float32"), "input", "x")
    with pytest.raises(UnsupportedError, match="no program is being built"):
        x + 1
    seen = []

    def implicit(op, args, attrs):
        seen.append(op.name)
        with building(p) as b:
            return b.emit(op, args, attrs)

    _state.implicit = implicit
    try:
        y = x + 1
    finally:
        _state.implicit = None
    assert seen == ["add"] and y.owner.name == "add"


def test_inplace_update_is_not_planned_over_a_live_view():
    w = _param([1.0, 2.0], "w")
    w.trainable = True
    w.stop_gradient = False
    lr = _param([0.5], "lr")
    with building() as b:
        g = b.add_input(T([2], "float32"), "g")
        view = w.reshape([2, 1])  # may share w's memory, and is returned
        b.record_update(w, call("sgd", w, g, lr))
        b.set_outputs([view])
    c = Compiled(b.program)
    assert "out=(" not in c.source
    (out,) = c([np.ones(2, np.float32)])
    np.testing.assert_array_equal(out.reshape(-1), [1.0, 2.0])  # the old values
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])



def _momentum_no_out(param, grad, learning_rate, velocity, mu=0.9, **attrs):
    v = mu * velocity + grad
    return param - learning_rate * v, v


class _OpaqueKernel:
    """A kernel whose signature cannot be read (as a native extension's function may
    have none): inspect.signature raises TypeError on it."""

    __signature__ = "(no signature: a native kernel)"

    def __call__(self, *args, **attrs):
        return _momentum_no_out(*args, **attrs)


@pytest.mark.parametrize("kernel", [_momentum_no_out, _OpaqueKernel()],
                         ids=["no-out", "no-signature"])
def test_inplace_planning_goes_on_past_an_update_kernel_without_out(kernel):
    """An update op whose kernel cannot write in place (no ``out=``, or no signature
    to tell) is skipped, not the end of the planning: a later update op with an
    ``out=`` kernel is still computed in place."""
    w2 = _param([3.0, -4.0], "w2")
    w3 = _param([1.0, 1.0], "w3")
    v3 = _param([0.0, 0.0], "v3")
    lr = _param([0.5], "lr")
    with building() as b:
        g = b.add_input(T([2], "float32"), "g")
        p3, nv = call("momentum", w3, g, lr, v3)  # first: its kernel is not planned
        b.record_update(w3, p3)
        b.record_update(v3, nv)
        b.record_update(w2, call("sgd", w2, g, lr))
        b.set_outputs([])
    c = Compiled(b.program, kernel_override={"momentum": kernel})
    planned = [ln for ln in c.source.splitlines() if "out=(" in ln]
    assert len(planned) == 1  # the sgd after the momentum is still planned in place
    before = w2._data
    c([np.array([1.0, 2.0], np.float32)])
    assert w2._data is before
    # NumPy reference: momentum v = 0.9 * 0 + g, p - lr * v; sgd p - lr * g
    np.testing.assert_allclose(w3.numpy(), [0.5, 0.0])
    np.testing.assert_allclose(v3.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(w2.numpy(), [2.5, -5.0])


def _adam_on_the_test_device():
    """One adam step of a param on the test device (fw.core.testing.device: the fake
    device without a GPU), its beta powers host state: [1] tensors on the host."""
    from fw.core.testing import device as _dev

    p = _dev.place()

    def state(v, name, place=None):
        t = fw.to_tensor(np.asarray(v, np.float64), place=place)
        t.name, t.persistable = name, True
        return t

    w = state([1.0, 2.0], "w", p)
    w.trainable, w.stop_gradient = True, False
    m1, m2 = state([0.0, 0.0], "m1", p), state([0.0, 0.0], "m2", p)
    b1, b2 = state([0.9], "b1"), state([0.999], "b2")
    lr = state([0.1], "lr")  # one element too, but not updated: a device constant
    with building() as b:
        g = b.add_input(T([2], "float64"), "g")
        outs = call("adam", w, g, lr, m1, m2, b1, b2, None)
        for t, o in zip((w, m1, m2, b1, b2), outs):
            b.record_update(t, o)
        b.set_outputs([])
    return b.program, p, (w, m1, m2, b1, b2)


def test_device_program_keeps_one_element_state_on_the_host(monkeypatch):
    """On a device, one-element state the program updates (adam's beta powers) stays on
    the host, where the update kernels take it by value; other constants, one-element
    ones included, and the params and moments go to the device. No update makes a
    round trip through the host."""
    from fw.core.ir import executor
    from fw.core.ops import OPS

    prog, p, (w, m1, m2, b1, b2) = _adam_on_the_test_device()
    ref = OPS["adam"].kernels.get(p.kind) or OPS["adam"].reference
    seen = []

    def recording(*args, **attrs):
        seen.append([type(a) for a in args])
        return ref(*args, **attrs)

    host_trips = []
    real_on_host = executor.on_host
    monkeypatch.setattr(executor, "on_host", lambda v: host_trips.append(v) or real_on_host(v))
    c = Compiled(prog, p.kind, kernel_override={"adam": recording})
    g = np.array([0.5, -1.0])
    for _step in range(2):
        c([fw.to_tensor(g, place=p)._data])
        types = seen[-1]
        dev = type(w._data)
        assert types[:5] == [dev] * 5  # param, grad, lr, moments: on the device
        assert types[5:7] == [np.ndarray, np.ndarray]  # beta powers: host state
        assert host_trips == []
        assert type(b1._data) is np.ndarray and type(w._data) is dev
    # NumPy reference of two adam steps (bias-corrected form)
    pw, mm1, mm2 = np.array([1.0, 2.0]), np.zeros(2), np.zeros(2)
    for t in (1, 2):
        mm1 = 0.9 * mm1 + 0.1 * g
        mm2 = 0.999 * mm2 + 0.001 * g * g
        pw = pw - 0.1 * (mm1 / (1 - 0.9 ** t)) / (np.sqrt(mm2 / (1 - 0.999 ** t)) + 1e-8)
    np.testing.assert_allclose(w.numpy(), pw, rtol=1e-12)
    np.testing.assert_allclose(m1.numpy(), mm1, rtol=1e-12)
    np.testing.assert_allclose(m2.numpy(), mm2, rtol=1e-12)
    np.testing.assert_allclose(b1.numpy(), [0.9 ** 3], rtol=1e-12)
    np.testing.assert_allclose(b2.numpy(), [0.999 ** 3], rtol=1e-12)


def test_device_program_host_state_computed_on_the_device_goes_back_to_the_host():
    """A device kernel may return the new beta powers on the device: the update moves
    them back into the host arrays (and the device state stays on the device)."""
    from fw.core.ops import OPS

    prog, p, (w, m1, m2, b1, b2) = _adam_on_the_test_device()
    ref = OPS["adam"].kernels.get(p.kind) or OPS["adam"].reference
    be = fw.core.place.get_backend(p.kind)

    def device_pows(*args, **attrs):
        outs = list(ref(*args, **attrs))
        outs[3:5] = [be.asarray(o, p.index) for o in outs[3:5]]
        assert type(outs[3]) is not np.ndarray
        return tuple(outs)

    b1_array = b1._data
    Compiled(prog, p.kind, kernel_override={"adam": device_pows})(
        [fw.to_tensor(np.array([0.5, -1.0]), place=p)._data])
    assert b1._data is b1_array and type(b1._data) is np.ndarray
    np.testing.assert_allclose(b1.numpy(), [0.81], rtol=1e-12)
    np.testing.assert_allclose(b2.numpy(), [0.999 ** 2], rtol=1e-12)
    # first step: m_hat = g, v_hat = g^2, so p - lr * g / (|g| + eps)
    want = [1.0 - 0.1 * 0.5 / (0.5 + 1e-8), 2.0 + 0.1 / (1.0 + 1e-8)]
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-12)


def test_device_program_moves_host_constants_to_the_current_device_index(monkeypatch):
    """Host constants go to the current place's device when it is of the program's
    kind, else to device 0."""
    from fw.core.testing import device as _dev

    prog, p, _ = _adam_on_the_test_device()
    be = fw.core.place.get_backend(p.kind)
    indices = []
    real = type(be).asarray
    monkeypatch.setattr(type(be), "asarray",
                        lambda self, host, index=0: indices.append(index) or real(self, host))
    c = Compiled(prog, p.kind)
    g = fw.to_tensor(np.array([0.5, -1.0]), place=p)._data
    c([g])  # the current place is the cpu: device 0
    assert indices and set(indices) == {0}
    if be.device_count() < 2:  # a real GPU machine with one device
        return
    indices.clear()
    with _dev.on(fw.core.place.Place(p.kind, 1)):
        c([g])
    assert indices and set(indices) == {1}
