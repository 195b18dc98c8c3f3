"""Tensor.item(*index): one index is flat (row-major), several index each dimension, as
NumPy's ndarray.item and Paddle 3.3.1's Tensor.item (checked against the real Paddle:
``paddle.to_tensor([[1, 2], [3, 4]]).item(3) == 4``)."""

import pytest

import fw


def test_item_with_one_index_is_flat_and_with_several_per_dimension():
    x = fw.to_tensor([[1, 2], [3, 4]])
    assert x.item(3) == 4
    assert x.item(-1) == 4
    assert x.item(1, 0) == 3
    assert fw.to_tensor([2.5]).item() == 2.5


def test_item_errors_name_the_problem():
    x = fw.to_tensor([[1, 2], [3, 4]])
    with pytest.raises(IndexError):
        x.item(4)
    with pytest.raises(ValueError, match="one element"):
        x.item()
