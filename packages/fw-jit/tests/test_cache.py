"""The program cache: what reuses a program and what traces a new one."""

import pytest
from jit_testutil import assert_same

import fw
from fw.static import InputSpec

T = fw.to_tensor


def _counting():
    traces = []

    @fw.jit.to_static(full_graph=True)
    def f(x, k=1, cfg=None):
        traces.append(1)
        y = x * k
        if cfg is not None:
            y = y + cfg["bias"]
        return y

    return f, traces


def test_same_signature_reuses_the_program():
    f, traces = _counting()
    f(T([1.0, 2.0]))
    f(T([3.0, 4.0]))
    assert len(traces) == 1 and len(f.program_cache) == 1


@pytest.mark.parametrize("second", [
    lambda: (T([1.0, 2.0, 3.0]),),  # new shape
    lambda: (T([1, 2]),),  # new dtype
    lambda: (T([1.0, 2.0]), 3),  # new Python value
    lambda: (T([1.0, 2.0]), 1, {"bias": 2.0}),  # new nested structure
])
def test_new_signature_traces_again(second):
    f, traces = _counting()
    f(T([1.0, 2.0]))
    args = second()
    out = f(*args)
    assert len(traces) == 2 and len(f.program_cache) == 2
    assert_same(out, f.dygraph_function(*args))


def test_stop_gradient_of_an_input_is_part_of_the_signature():
    f, traces = _counting()
    f(T([1.0]))
    f(T([1.0], stop_gradient=False))
    assert len(traces) == 2


def test_input_spec_dynamic_dims_accept_any_size():
    traces = []

    @fw.jit.to_static(input_spec=[InputSpec([None, 3], "float32", "x")], full_graph=True)
    def f(x):
        traces.append(1)
        return x.sum(axis=1)

    for n in (1, 4, 9):
        assert f(fw.ones([n, 3])).shape == [n]
    assert len(traces) == 1
    cp = f.concrete_program
    assert [a.label for a in cp.inputs] == ["x"]
    assert cp.inputs[0].type.shape == (-1, 3)
    with pytest.raises(ValueError, match="input_spec"):
        f(fw.ones([2, 4]))


def test_get_concrete_program_and_specs():
    @fw.jit.to_static(full_graph=True)
    def f(x, y):
        return x + y

    cp = f.get_concrete_program(InputSpec([-1, 2]), InputSpec([2]))
    assert [a.type.shape for a in cp.inputs] == [(-1, 2), (2,)]
    assert f.get_concrete_program(InputSpec([-1, 2]), InputSpec([2])) is cp
    assert "add" in str(cp.main_program)


def test_concrete_program_without_calls_needs_a_spec():
    @fw.jit.to_static(full_graph=True)
    def f(x):
        return x

    with pytest.raises(RuntimeError, match="input_spec"):
        _ = f.concrete_program


def test_layer_training_flag_retraces():
    m = fw.jit.to_static(fw.nn.Dropout(0.5), full_graph=True)
    x = fw.ones([4, 4])
    m(x)
    m.eval()
    assert_same(m(x), x)
    assert len(m.forward.program_cache) == 2


def test_input_spec_from_tensor_and_numpy():
    import numpy as np

    s = InputSpec.from_tensor(fw.ones([2, 3], dtype="int32"), name="a")
    assert s.shape == (2, 3) and s.dtype is fw.int32 and s.name == "a"
    s2 = InputSpec.from_numpy(np.zeros((4,), np.float64))
    assert s2.shape == (4,) and s2.dtype is fw.float64
    assert InputSpec([None, 2]).batch(8).shape == (8, -1, 2)
    assert InputSpec([8, 2]).unbatch().shape == (2,)
    with pytest.raises(ValueError):
        InputSpec([-3])


def test_captured_tensors_are_read_at_each_run():
    scale = fw.to_tensor([2.0])
    buf = fw.to_tensor([1.0, 1.0])

    @fw.jit.to_static(full_graph=True)
    def f(x):
        return x * scale + buf * 1.0

    assert_same(f(T([1.0, 1.0])), T([3.0, 3.0]))
    scale.set_value(fw.to_tensor([5.0]))
    buf.set_value(fw.to_tensor([0.0, 2.0]))
    assert_same(f(T([1.0, 1.0])), T([5.0, 7.0]))
    assert len(f.program_cache) == 1
