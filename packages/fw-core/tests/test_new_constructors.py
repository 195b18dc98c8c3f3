"""Tensor.new_zeros / new_ones / new_full / new_empty: shape forms, dtype, bad sizes named."""

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError


def test_shape_forms_and_dtype():
    x = fw.to_tensor(np.ones((2,), "float64"))
    assert x.new_zeros([2, 3]).shape == [2, 3] and x.new_zeros(2, 3).shape == [2, 3]
    assert x.new_ones(np.int64(4)).numpy().tolist() == [1.0] * 4
    assert x.new_zeros([2]).dtype == fw.float64
    assert x.new_ones([1], dtype="int32").dtype == fw.int32
    np.testing.assert_array_equal(x.new_full([2, 2], 7.0).numpy(), np.full((2, 2), 7.0))
    assert x.new_empty((3,)).shape == [3]


@pytest.mark.parametrize("call,err,what", [
    (lambda x: x.new_zeros([2, "a"]), InvalidTypeError, "Tensor.new_zeros: 'size'"),
    (lambda x: x.new_ones(2.5), InvalidTypeError, "Tensor.new_ones: 'size'"),
    (lambda x: x.new_empty([-1, 2]), InvalidArgumentError, "Tensor.new_empty: 'size'"),
])
def test_bad_sizes_are_named(call, err, what):
    with pytest.raises(err, match=what):
        call(fw.to_tensor([1.0]))
