"""strided_slice's bound clamping (Paddle's and Python's rules) against NumPy slicing,
for every combination of negative and out-of-range starts and ends with positive and
negative strides: e.g. ``x[0::-1]`` is ``[x[0]]``, ``x[-10::-1]`` is empty. Eager, and
in a program traced with a dynamic input shape."""

import itertools

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, trace

BOUNDS = [-100, -6, -5, -4, -1, 0, 1, 4, 5, 6, 100]
CASES = [(s, e, st) for s, e in itertools.product(BOUNDS, BOUNDS) for st in (-3, -1, 1, 2)]


def _numpy(a, s, e, st):
    # Paddle clamps like Python's slice.indices, with any huge end meaning "to the end"
    return a[slice(s, e, st)]


@pytest.mark.parametrize("s,e,st", CASES)
def test_strided_slice_matches_numpy(s, e, st):
    a = np.arange(5.0)
    got = fw.strided_slice(fw.to_tensor(a), axes=[0], starts=[s], ends=[e], strides=[st])
    np.testing.assert_array_equal(got.numpy(), _numpy(a, s, e, st))


def test_strided_slice_in_a_program_with_a_dynamic_shape():
    a = np.arange(20.0).reshape(4, 5)
    for s, e, st in [(0, -100, -1), (-10, 100, -1), (3, -7, -2), (100, 0, -1), (-2, 5, 2)]:
        prog = trace(lambda x, s=s, e=e, st=st: fw.strided_slice(
            x, axes=[1], starts=[s], ends=[e], strides=[st]),
            [TensorType([-1, -1], fw.float64)])
        got = fw.core.ir.run(prog, fw.to_tensor(a))
        np.testing.assert_array_equal(got.numpy(), a[:, slice(s, e, st)], err_msg=str((s, e, st)))


@pytest.mark.parametrize("bound_type,pattern", [
    (TensorType([1], fw.float32), r"slice bound given as a tensor must hold one integer, "
                                  r"got f32\[1\]"),
    (TensorType([3], fw.int64), r"slice bound given as a tensor must hold one integer, "
                                r"got i64\[3\]"),
])
def test_a_symbolic_slice_bound_must_be_one_integer(bound_type, pattern):
    def f(x, b):
        return x[b:]

    with pytest.raises(fw.core.errors.InvalidTypeError, match=pattern):
        trace(f, [TensorType([5], fw.float32), bound_type])


def test_a_symbolic_integer_slice_bound_works():
    prog = trace(lambda x, b: x[b:], [TensorType([5], fw.float32), TensorType([1], fw.int64)])
    got = fw.core.ir.run(prog, fw.to_tensor(np.arange(5.0, dtype=np.float32)),
                         fw.to_tensor(np.array([2])))
    np.testing.assert_array_equal(got.numpy(), [2.0, 3.0, 4.0])
