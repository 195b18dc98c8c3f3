"""The executor: eager == executor, control flow, input checking, buffer reuse
that never writes memory someone else can see."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir import TensorType, run, trace
from fw.core.ir.control import cond, while_loop
from fw.core.ir.executor import Compiled, compile_program
from fw.core.ops import call
from fw.core.testing.programs import draw_program

T = TensorType


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("memory_optimize", [True, False])
@given(data=st.data())
def test_random_programs_match_eager_exactly(memory_optimize, data):
    rp = draw_program(data.draw)
    p = rp.trace()
    want = rp.eager()
    inputs = [x.copy() for x in rp.inputs_]
    got = _tuple(run(p, *inputs, memory_optimize=memory_optimize))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert type(g.numpy()) is np.ndarray
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    for a, b in zip(inputs, rp.inputs_):  # inputs are never written
        np.testing.assert_array_equal(a, b)
    # a second run gives the same (params/consts were not written either)
    again = _tuple(run(p, *inputs, memory_optimize=memory_optimize))
    for g, w in zip(again, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


# ---------------------------------------------------------------- control flow
def test_cond_with_one_result_and_with_none():
    p = trace(lambda x: cond(x.sum() > 0.0, lambda: x * 2.0, lambda: -x), [T([2, 3], "float32")])
    x = np.ones((2, 3), np.float32)
    assert run(p, x).shape == [2, 3]
    np.testing.assert_array_equal(run(p, x).numpy(), x * 2)
    np.testing.assert_array_equal(run(p, -x).numpy(), x)

    q = trace(lambda x: (cond(x.sum() > 0.0, lambda: None, lambda: None), x.exp())[1],
              [T([2], "float64")])
    np.testing.assert_array_equal(run(q, np.zeros(2)).numpy(), [1.0, 1.0])


def test_while_variants():
    i0 = fw.to_tensor(np.int64(0))

    def f(x, n):
        k = x * 3.0  # used inside the loop: must survive every iteration

        def body(i, v, w):
            inner = while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, u + 1.0), [i0, v])[1]
            return i + 1, inner * 0.5 + k, w  # w is carried unchanged

        return while_loop(lambda i, v, w: i < n, body, [i0, x, k])

    p = trace(f, [T([-1], "float32"), T([], "int64")])
    x = np.arange(3, dtype=np.float32)
    for n in (0, 1, 4):
        i, v, w = run(p, x, np.int64(n))
        ev = x.copy()
        for _ in range(n):
            ev = (ev + 2.0) * 0.5 + 3 * x
        assert int(i.numpy()) == n
        np.testing.assert_allclose(v.numpy(), ev, rtol=1e-6)
        np.testing.assert_array_equal(w.numpy(), 3 * x)
    np.testing.assert_array_equal(x, np.arange(3, dtype=np.float32))


def test_predicate_with_more_than_one_value_is_an_error():
    p = trace(lambda x: cond(x > 0.0, lambda: x, lambda: -x), [T([-1], "float32")])
    assert run(p, np.ones(1, np.float32)).shape == [1]
    with pytest.raises(InvalidArgumentError, match="cond.*predicate must hold one value"):
        run(p, np.ones(2, np.float32))


# ---------------------------------------------------------------- input checks and errors
def test_inputs_are_checked_against_the_program_types():
    p = trace(lambda x, y: x + y, [T([-1, 3], "float32"), T([3], "float32")], names=["x", "y"])
    ok = np.zeros((2, 3), np.float32), np.zeros(3, np.float32)
    run(p, *ok)
    with pytest.raises(InvalidArgumentError, match=r"takes 2 inputs \(x, y\), got 1"):
        run(p, ok[0])
    with pytest.raises(InvalidArgumentError, match=r"'x' expects float32\[-1, 3\].*got "
                                                   r"float64\[2, 3\]"):
        run(p, ok[0].astype(np.float64), ok[1])
    with pytest.raises(InvalidArgumentError, match=r"'y' expects float32\[3\].*got float32\[4\]"):
        run(p, ok[0], np.zeros(4, np.float32))
    with pytest.raises(InvalidArgumentError, match=r"'x' expects .* got float32\[3\]"):
        run(p, ok[1], ok[1])
    with pytest.raises(InvalidTypeError, match="program input 1: expected a Tensor"):
        run(p, ok[0], object())


def test_params_missing_or_mismatched():
    w = fw.to_tensor(np.ones((3, 2), np.float32))
    w.name = "fc.w"
    w.trainable = True
    p = trace(lambda x: fw.matmul(x, w), [T([-1, 3], "float32")])
    c = Compiled(p)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(c([x])[0], [[3.0, 3.0]])
    np.testing.assert_array_equal(c([x], params={"fc.w": np.zeros((3, 2), np.float32)})[0],
                                  [[0.0, 0.0]])
    with pytest.raises(InvalidArgumentError, match="needs the parameters/constants .fc.w."):
        c([x], params={})
    with pytest.raises(InvalidArgumentError, match=r"'fc.w' must be f32\[3,2\]"):
        c([x], params={"fc.w": np.zeros((2, 2), np.float32)})
    w.set_value(np.full((3, 2), 2.0, np.float32))  # updates between runs are seen
    np.testing.assert_array_equal(run(p, x).numpy(), [[6.0, 6.0]])


def test_a_failing_kernel_names_the_op_and_its_line():
    p = trace(lambda x, y: fw.matmul(x.exp(), y), [T([-1, -1], "float32")] * 2)
    with pytest.raises(InvalidArgumentError) as info:
        run(p, np.ones((2, 3), np.float32), np.ones((4, 2), np.float32))
    msg = str(info.value)
    assert msg.startswith("matmul: failed while running `%1 = matmul(%0, %arg1)")
    assert "(line 4 of the program)" in msg and "test_ir_executor.py" in msg


def test_generated_code_contains_no_program_text():
    w = fw.to_tensor(np.ones(2, np.float32))
    w.name = '"); import os; os.system("echo pwned"); ("'
    w.trainable = True
    p = trace(lambda x: x * w, [T([2], "float32")], names=["import"])
    c = Compiled(p)
    assert "import" not in c.source and "os" not in c.source.replace("_ps", "")
    np.testing.assert_array_equal(c([np.ones(2, np.float32)])[0], [1.0, 1.0])


def test_compile_cache():
    p = trace(lambda x: x.exp(), [T([2], "float32")])
    c = compile_program(p)
    assert compile_program(p) is c
    assert compile_program(p, memory_optimize=False) is not c
    p.touch()
    assert compile_program(p) is not c


def test_zero_dim_results_are_arrays():
    p = trace(lambda x: (x.sum() * 2.0).exp(), [T([3], "float32")])
    out = run(p, np.ones(3, np.float32))
    assert type(out._data) is np.ndarray and out.shape == []


# ---------------------------------------------------------------- buffer reuse
def _chain(x):
    for _ in range(5):
        x = (x * 1.5).tanh().neg()
    return x


def test_elementwise_chain_plans_reuse():
    p = trace(lambda x: _chain(x.exp()), [T([8], "float32")])
    c = Compiled(p)
    reused = [s for s in c.main.steps if s.reuse]
    assert len(reused) >= 10
    assert all(s.op.name in ("multiply", "tanh", "neg") for s in reused)
    assert not any(s.reuse for s in Compiled(p, memory_optimize=False).main.steps)
    x = np.linspace(-1, 1, 8).astype(np.float32)
    np.testing.assert_array_equal(c([x])[0], _chain(fw.to_tensor(x).exp()).numpy())


def test_reuse_writes_into_the_dead_buffer():
    ptrs = []

    def exp_recording(x):
        r = np.exp(x)
        ptrs.append(r.ctypes.data)
        return r

    def sum_recording(x, **kw):
        ptrs.append(x.ctypes.data)
        return np.sum(x, dtype=x.dtype)

    p = trace(lambda x: x.exp().neg().tanh().sum(), [T([1000], "float64")])
    x = np.linspace(-1, 1, 1000)
    want = np.tanh(-np.exp(x)).sum()
    for mem, same in ((True, True), (False, False)):
        ptrs.clear()
        c = Compiled(p, kernel_override={"exp": exp_recording, "sum": sum_recording},
                     memory_optimize=mem)
        np.testing.assert_allclose(c([x])[0], want)
        assert (ptrs[0] == ptrs[1]) is same


def test_reuse_never_writes_inputs_params_or_viewed_buffers():
    w = fw.to_tensor(np.full(4, 2.0))
    w.name = "w"
    w.trainable = True

    def f(x):
        a = x.neg()  # x: a program input, never written
        b = w.exp()  # w: a parameter, never written
        e = (a * 1.0).exp()  # a fresh buffer ...
        view = fw.reshape(e, [2, 2])  # ... viewed by a value that stays live
        g = e.tanh()  # e dies here, but its memory is still seen through `view`
        return a, b, g, view

    p = trace(f, [T([4], "float64")])
    x = np.arange(4.0)
    a, b, g, view = run(p, x)
    np.testing.assert_array_equal(x, np.arange(4.0))
    np.testing.assert_array_equal(w.numpy(), np.full(4, 2.0))
    np.testing.assert_array_equal(view.numpy().reshape(-1), np.exp(-np.arange(4.0)))
    np.testing.assert_array_equal(g.numpy(), np.tanh(np.exp(-np.arange(4.0))))


def test_reuse_never_writes_a_buffer_held_twice():
    # a kernel that returns its input: two values share one array
    p = trace(lambda x: (lambda e: (e.tanh(), e.neg()))(x.exp()), [T([3], "float64")])
    c = Compiled(p, kernel_override={"tanh": lambda a: a})
    t, n = c([np.zeros(3)])
    np.testing.assert_array_equal(t, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(n, [-1.0, -1.0, -1.0])


def test_reuse_with_dynamic_shapes_and_broadcasting():
    def f(x, y):
        a = x.exp()
        b = a + y  # y may broadcast a to a bigger shape: a's buffer is too small
        c = b.tanh() + 1.0  # a scalar broadcasts into b: fine
        return c

    p = trace(f, [T([-1, -1], "float64"), T([-1, -1], "float64")])
    for xs, ys in (((2, 3), (2, 3)), ((1, 3), (4, 3)), ((4, 1), (4, 3)), ((4, 3), (1, 1))):
        x, y = np.full(xs, 0.5), np.full(ys, 0.25)
        want = np.tanh(np.exp(x) + y) + 1.0
        np.testing.assert_array_equal(run(p, x, y).numpy(), want)


def test_constants_are_computed_once_and_cannot_be_changed():
    calls = []

    def full_counting(**attrs):
        calls.append(attrs["fill_value"])
        return np.full(attrs["shape"], attrs["fill_value"], attrs["dtype"].np)

    def f(x):
        c = call("full", shape=(4,), fill_value=2.0, dtype="float32")
        return x * c, fw.reshape(c, [2, 2])  # a view of the constant reaches the user

    p = trace(f, [T([4], "float32")])
    c = Compiled(p, kernel_override={"full": full_counting})
    assert "= c" in c.source and calls == [2.0]
    for _ in range(3):
        prod, view = c([np.ones(4, np.float32)])
        np.testing.assert_array_equal(prod, [2.0] * 4)
        np.testing.assert_array_equal(view, [[2.0, 2.0], [2.0, 2.0]])
    assert calls == [2.0]
    assert not view.flags.writeable  # writing it would change every later run
    out = run(p, np.ones(4, np.float32))[1]
    with pytest.raises(InvalidArgumentError, match="read-only"):
        out.add_(fw.to_tensor(np.ones((2, 2), np.float32)))
    np.testing.assert_array_equal(run(p, np.ones(4, np.float32))[1].numpy(), [[2.0] * 2] * 2)


# ---------------------------------------------------------------- plans that must back off
def _counter(value, name, trainable=True):
    t = fw.to_tensor(np.asarray(value))
    t.name = name
    t.persistable = True
    t.trainable = trainable
    t.stop_gradient = not trainable
    return t


def _sgd_program():
    from fw.core.ir import building

    w, lr = _counter([1.0, 2.0], "w"), _counter([0.5], "lr", trainable=False)
    with building() as b:
        g = b.add_input(T([2], "float64"), "g")
        b.record_update(w, call("sgd", w, g, lr))
        b.set_outputs([])
    return b.program, w


def test_in_place_updates_need_a_kernel_taking_out():
    p, w = _sgd_program()
    assert "out=(" in Compiled(p).source
    c = Compiled(p, kernel_override={"sgd": lambda param, grad, learning_rate:
                                     param - learning_rate * grad})
    assert "out=(" not in c.source  # the kernel cannot write in place
    c([np.ones(2)])
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])
    assert "out=(" not in Compiled(p, memory_optimize=False).source


def test_update_of_the_wrong_run_time_shape_or_into_read_only_memory():
    from fw.core.ir import building

    w = _counter([1.0, 2.0], "w")
    with building() as b:
        x = b.add_input(T([-1], "float64"), "x")
        b.record_update(w, x * 2.0)  # [-1] may be [2]: accepted when compiled
        b.set_outputs([])
    c = Compiled(b.program)
    with pytest.raises(InvalidArgumentError, match=r"state update of 'w'.*shape \[3\].*\[2\]"):
        c([np.ones(3)])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    w._data.flags.writeable = False
    with pytest.raises(InvalidArgumentError, match="cannot write into the captured tensor"):
        c([np.ones(2)])
    w._data.flags.writeable = True
    c([np.ones(2)])
    np.testing.assert_array_equal(w.numpy(), [2.0, 2.0])


def test_constant_ops_the_compiler_cannot_precompute_run_each_time():
    def failing_full(**attrs):
        raise ValueError("no constants at compile time")

    p = trace(lambda x: x + call("full", shape=[2], fill_value=1.0, dtype="float64"),
              [T([2], "float64")])
    c = Compiled(p, kernel_override={"full": failing_full})
    with pytest.raises(InvalidArgumentError, match="full: failed while running.*no constants"):
        c([np.zeros(2)])
    calls = []

    def scalar_full(**attrs):  # a NumPy scalar for a 0-d constant: kept as an array
        calls.append(1)
        return np.float64(attrs["fill_value"])

    q = trace(lambda x: x * call("full", shape=[], fill_value=3.0, dtype="float64"),
              [T([2], "float64")])
    c = Compiled(q, kernel_override={"full": scalar_full})
    np.testing.assert_array_equal(c([np.ones(2)])[0], [3.0, 3.0])
    c([np.ones(2)])
    assert calls == [1]  # computed once, at compile time

    def wrong_dtype(**attrs):
        calls.append(2)
        return np.full(attrs["shape"], attrs["fill_value"], np.float32)

    c = Compiled(p, kernel_override={"full": wrong_dtype})  # not what the type says:
    c([np.zeros(2)])  # tried once when compiling, then left to each run
    c([np.zeros(2)])
    assert calls.count(2) == 3


def test_kernel_errors_keep_their_kind():
    p = trace(lambda x: x.exp() * 2.0, [T([2], "float64")])

    def raise_(exc):
        def k(*a, **kw):
            raise exc
        return k

    for exc, kind in ((TypeError("bad"), InvalidTypeError), (ValueError("bad"),
                                                             InvalidArgumentError),
                      (MemoryError("big"), MemoryError)):
        c = Compiled(p, kernel_override={"exp": raise_(exc)})
        with pytest.raises(kind, match=r"exp: failed while running `%0 = exp\(%arg0\) : f64\[2\]`"):
            c([np.zeros(2)])


def test_run_takes_lists_and_returns_one_tensor_or_a_tuple():
    p = trace(lambda x: x * 2.0, [T([2], "float32")])
    out = run(p, fw.to_tensor(np.ones(2, np.float32)))
    assert isinstance(out, fw.Tensor)
    q = trace(lambda x: (x * 2.0, x + 1.0), [T([2], "float32")])
    a, b = run(q, [1.0, 2.0])  # a list becomes a tensor (float32 by default)
    np.testing.assert_array_equal(a.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(b.numpy(), [2.0, 3.0])


def _traced_twice(x):
    y = x * 2.0
    return y.exp()  # the op that fails below: traced on this line


def test_kernel_error_names_the_file_and_line_the_op_was_traced_at():
    p = trace(_traced_twice, [T([2], "float64")])
    code = _traced_twice.__code__
    exp_line = code.co_firstlineno + 2  # hand-counted: `return y.exp()`

    def boom(*a, **kw):
        raise ValueError("boom")

    c = Compiled(p, kernel_override={"exp": boom})
    with pytest.raises(InvalidArgumentError) as e:
        c([np.zeros(2)])
    msg = str(e.value)
    assert f", traced at {code.co_filename}:{exp_line}: ValueError: boom" in msg, msg
    assert msg.startswith("exp: failed while running `%")
