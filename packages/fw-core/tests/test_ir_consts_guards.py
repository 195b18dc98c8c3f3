"""What the passes may know about constant values (fw.core.ir.passes.consts): a
``full`` result or a block-0 constant up to a size limit (inclusive), never a
parameter nor a constant the program writes; and the one value every element of a
constant equals, bit for bit (-0.0 and 0.0 differ, NaN equals itself)."""

import math

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, building, trace
from fw.core.ir.passes.consts import constant_array, uniform_value
from fw.core.ops import call

T = TensorType


def _tensor(a, name, trainable=False):
    t = fw.to_tensor(np.asarray(a))
    t.name = name
    t.persistable = True
    t.trainable = trainable
    t.stop_gradient = not trainable
    return t


def _values(fn, *types):
    """The program of fn and the block values it returns (its outputs)."""
    p = trace(fn, list(types))
    return p, list(p.block.outputs)


def test_constant_array_of_a_full_up_to_the_size_limit():
    p, (v,) = _values(lambda: call("full", shape=[4], fill_value=2.5, dtype="float32"))
    a = constant_array(v, p, 16)  # 4 float32: exactly 16 bytes
    assert a.dtype == np.float32 and a.shape == (4,)
    np.testing.assert_array_equal(a, np.full(4, 2.5, np.float32))
    assert constant_array(v, p, 15) is None


def test_constant_array_of_captured_constants_only():
    k = _tensor(np.arange(6.0).reshape(2, 3), "k")
    w = _tensor(np.ones(3), "w", trainable=True)
    c = _tensor(np.zeros(2), "c")

    with building() as b:
        x = b.add_input(T([2, 3], "float64"), "x")
        outs = [x * k, x * w]
        b.record_update(c, c + 1.0)
        outs.append(c * 1.0)
        b.set_outputs(outs)
    p = b.program
    by_label = {a.label: a for a in p.block.args}
    np.testing.assert_array_equal(constant_array(by_label["k"], p, 48),
                                  np.arange(6.0).reshape(2, 3))
    assert constant_array(by_label["k"], p, 47) is None  # 48 bytes
    assert constant_array(by_label["w"], p, 1 << 20) is None  # a trainable parameter
    assert constant_array(by_label["c"], p, 1 << 20) is None  # written by the program
    assert constant_array(by_label["x"], p, 1 << 20) is None  # an input
    assert constant_array(None, p, 1 << 20) is None


@pytest.mark.parametrize("fill,dtype,want", [
    (2.0, "float32", 2.0), (1.0000001, "float16", 1.0), (-0.0, "float32", -0.0),
    (3, "int32", 3), (True, "bool", True), (1 + 2j, "complex64", 1 + 2j)])
def test_uniform_value_of_a_full_is_the_stored_element(fill, dtype, want):
    p, (v,) = _values(lambda: call("full", shape=[2, 2], fill_value=fill, dtype=dtype))
    got = uniform_value(v, p)
    assert got == want and type(got) is type(want)
    if isinstance(want, float):
        assert math.copysign(1.0, got) == math.copysign(1.0, want)


@pytest.mark.parametrize("arr,want", [
    (np.full(5, 0.5, np.float32), 0.5), (np.full((2, 2), -0.0), -0.0),
    (np.full(3, np.nan), "nan"), (np.array([7, 7, 7], np.int64), 7),
    (np.array([0.0, -0.0]), None), (np.array([1.0, 1.0, 2.0]), None),
    (np.array([1.0, 1.0, 1.0 + 1e-16, 1.0]), 1.0),  # 1 + 1e-16 rounds to 1.0: equal bits
    (np.zeros(0), None)])
def test_uniform_value_of_a_captured_constant_bit_for_bit(arr, want):
    k = _tensor(arr, "u")
    p, _ = _values(lambda x: x * k, T(list(arr.shape), str(arr.dtype)))
    v = next(a for a in p.block.args if a.label == "u")
    got = uniform_value(v, p)
    if want is None:
        assert got is None
    elif want == "nan":
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def test_uniform_value_size_limit_and_what_is_not_a_constant():
    k = _tensor(np.full(8, 3.0), "k8")  # 64 bytes
    w = _tensor(np.full(8, 3.0), "w8", trainable=True)
    p, _ = _values(lambda x: (x * k, x * w), T([8], "float64"))
    args = {a.label: a for a in p.block.args}
    assert uniform_value(args["k8"], p, 64) == 3.0
    assert uniform_value(args["k8"], p, 63) is None
    assert uniform_value(args["w8"], p) is None  # a parameter may change
    x = next(a for a in p.block.args if a.role == "input")
    assert uniform_value(x, p) is None
    assert uniform_value(p.block.outputs[0], p) is None  # a computed value
