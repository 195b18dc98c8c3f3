"""The argument helpers every op's canon uses (`fw.core.ops._args`) and expand's shape
rule, on the inputs users pass: Python ints, NumPy scalars and arrays of every integer
kind, one-element tensors, and the wrong kinds of each (which must name the op and
the argument)."""

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN
from fw.core.ops._args import as_axes, as_int, as_ints, scalar_value
from fw.core.ops._shape_np import _expand_shape


@pytest.mark.parametrize("v,want", [
    (3, 3), (np.int32(4), 4), (np.uint8(5), 5), (np.array(6, np.int64), 6),
    (np.array([7], np.int16), 7), (np.array([[8]], np.uint16), 8), (np.array([True]), 1),
    (np.array([-2], np.int8), -2),
])
def test_as_int_takes_ints_numpy_integers_and_one_element_arrays(v, want):
    got = as_int(v, "op", "n")
    assert got == want and type(got) is int


def test_as_int_takes_one_element_integer_tensors():
    assert as_int(fw.to_tensor([9]), "op", "n") == 9
    assert as_int(fw.to_tensor(True), "op", "n") == 1


@pytest.mark.parametrize("v,exc,pattern", [
    (np.array([1, 2]), InvalidTypeError, r"op: 'n' must be an integer"),
    (np.array([1.0], np.float32), InvalidTypeError, r"op: 'n' must be an integer"),
    (np.array([], np.int64), InvalidTypeError, r"op: 'n' must be an integer"),
    (1.5, InvalidTypeError, r"op: 'n' must be an integer, got float 1.5"),
    ("3", InvalidTypeError, r"got str"),
])
def test_as_int_refuses_what_is_not_one_integer(v, exc, pattern):
    with pytest.raises(exc, match=pattern):
        as_int(v, "op", "n")


def test_as_int_refuses_tensors_that_are_not_one_integer():
    with pytest.raises(InvalidArgumentError, match=r"op: 'n' given as a tensor must hold one"):
        as_int(fw.to_tensor([1, 2]), "op", "n")
    with pytest.raises(InvalidTypeError, match=r"op: 'n' must be an integer, got a float32"):
        as_int(fw.to_tensor([1.0]), "op", "n")


def test_as_ints_and_as_axes():
    assert as_ints(3, "op", "s") == (3,)
    assert as_ints([1, np.int64(2), fw.to_tensor(3)], "op", "s") == (1, 2, 3)
    assert as_ints(np.array([[4, 5]]), "op", "s") == (4, 5)
    assert as_ints(fw.to_tensor([6, 7]), "op", "s") == (6, 7)
    assert as_axes(None, "op") is None and as_axes(-1, "op") == (-1,)
    with pytest.raises(InvalidTypeError, match=r"1-D integer tensor, got float32"):
        as_ints(fw.to_tensor([1.0]), "op", "s")
    with pytest.raises(InvalidTypeError, match=r"1-D integer tensor, got int64\[1, 2\]"):
        as_ints(fw.to_tensor([[1, 2]]), "op", "s")


def test_scalar_value():
    assert scalar_value(2.5, "op", "v") == 2.5
    assert scalar_value(np.float32(0.5), "op", "v") == 0.5
    assert scalar_value(fw.to_tensor([3.0]), "op", "v") == 3.0
    with pytest.raises(InvalidArgumentError, match=r"op: 'v' must be a number or a tensor"):
        scalar_value(fw.to_tensor([1.0, 2.0]), "op", "v")
    with pytest.raises(InvalidTypeError, match=r"op: 'v' must be a number, got list"):
        scalar_value([1.0], "op", "v")


@pytest.mark.parametrize("shape,target,keep,want", [
    ((3, 1), (3, 4), True, [3, 4]),
    ((3, 1), (2, 3, 4), True, [2, 3, 4]),
    ((3, 1), (-1, 5), True, [3, 5]),        # -1 keeps x's dimension
    ((3, 1), (2, -1, 5), True, [2, 3, 5]),
    ((1,), (4,), True, [4]),
    ((DYN, 1), (DYN, 6), False, [DYN, 6]),   # expand_as on IR values: -1 is dynamic
    ((5, 1), (DYN, 6), False, [5, 6]),       # a known dim of x fills a dynamic target
    ((1, 1), (DYN, 6), False, [DYN, 6]),     # a 1 of x broadcasts: the size stays unknown
    ((2,), (DYN, 2), False, [DYN, 2]),       # a new leading dim stays unknown
])
def test_expand_shape(shape, target, keep, want):
    assert _expand_shape(shape, target, keep) == want


@pytest.mark.parametrize("shape,target,pattern", [
    ((3, 1), (4,), "fewer dimensions"),
    ((3,), (-1, 3), "-1 in the target shape .* new leading dimension 0"),
    ((3,), (-2,), "negative size"),
    ((3, 2), (3, 4), r"dimension 1 has size 2, which is not 1 and differs from 4"),
])
def test_expand_shape_errors(shape, target, pattern):
    with pytest.raises(InvalidArgumentError, match=pattern):
        _expand_shape(shape, target, True)
