"""Shape ops: Paddle's argument forms and semantics the generic record tests miss."""

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir import TensorType, run, trace
from fw.core.ops.shape import pad
from fw.core.tensor import version_of


def arange(*shape, dtype="float32"):
    return fw.to_tensor(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))


def np_of(t):
    return np.asarray(t.numpy())


# ---------------------------------------------------------------- reshape & views
def test_reshape_spellings():
    x = arange(2, 3, 4)
    assert fw.reshape(x, [0, -1]).shape == [2, 12]  # 0 keeps x's dim, -1 is inferred
    assert fw.reshape(x, fw.to_tensor([4, 6])).shape == [4, 6]
    assert fw.reshape(x, [fw.to_tensor(6), 4]).shape == [6, 4]
    assert x.reshape(4, 6).shape == [4, 6]  # PyTorch-style varargs
    assert x.reshape([24]).shape == [24]


def test_reshape_is_a_view_and_reshape_inplace_keeps_the_object():
    x = arange(2, 3)
    y = fw.reshape(x, [3, 2])
    assert np.shares_memory(np_of(x), np_of(y))
    v = version_of(x)
    r = x.reshape_([6])
    assert r is x and x.shape == [6] and version_of(x) > v
    assert x.squeeze_().shape == [6]
    assert x.unsqueeze_(0).shape == [1, 6]
    assert x.flatten_().shape == [6]


def test_view_shape_and_dtype():
    x = fw.zeros([2, 4, 6])
    assert fw.view(x, [8, 6]).shape == [8, 6]
    assert x.view(8, -1).shape == [8, 6]
    assert fw.view(x, "uint8").shape == [2, 4, 24]
    assert fw.view(x, fw.float64).shape == [2, 4, 3]
    assert fw.view_as(x, fw.zeros([48])).shape == [48]
    with pytest.raises(InvalidArgumentError, match="not a multiple"):
        fw.view(fw.zeros([3]), "float64")


def test_transpose_family():
    x = arange(2, 3, 4)
    assert fw.permute(x, (1, 0, 2)).shape == [3, 2, 4]
    assert x.permute(2, 0, 1).shape == [4, 2, 3]
    assert fw.swapaxes(x, 0, 2).shape == [4, 3, 2]
    assert fw.swapaxes(x, [1, 0, 2]).shape == [3, 2, 4]  # Paddle's transpose alias
    assert fw.swapdims(x, 1, 2).shape == [2, 4, 3]
    assert fw.moveaxis(x, [0, 1], [2, 0]).shape == list(np.moveaxis(np_of(x), [0, 1], [2, 0]).shape)
    np.testing.assert_array_equal(np_of(x.T), np_of(x).T)
    np.testing.assert_array_equal(np_of(x.mT), np.swapaxes(np_of(x), -1, -2))
    assert fw.t(fw.zeros([3])).shape == [3]
    assert fw.t(fw.zeros([2, 3])).shape == [3, 2]
    with pytest.raises(InvalidArgumentError, match="at most 2"):
        fw.t(x)
    with pytest.raises(InvalidArgumentError, match="at least 2"):
        _ = fw.zeros([3]).mT


def test_properties_on_ir_values():
    prog = trace(lambda v: v.T + 1.0, [TensorType([2, 3], "float32")])
    assert "transpose" in str(prog)
    out = run(prog, fw.zeros([2, 3]))
    assert out.shape == [3, 2]


# ---------------------------------------------------------------- squeeze family
def test_squeeze_ignores_axes_that_are_not_1():
    x = fw.zeros([1, 3, 1])
    assert fw.squeeze(x).shape == [3]
    assert fw.squeeze(x, axis=1).shape == [1, 3, 1]  # Paddle: a non-1 axis is kept
    assert fw.squeeze(x, axis=[0, 1]).shape == [3, 1]
    assert fw.squeeze(x, axis=fw.to_tensor([-1])).shape == [1, 3]


def test_unsqueeze_inserts_one_after_another():
    x = fw.zeros([5, 10])
    assert fw.unsqueeze(x, [0, 2]).shape == [1, 5, 1, 10]
    assert fw.unsqueeze(x, [2, 0]).shape == [1, 5, 10, 1]
    assert fw.unsqueeze(x, -1).shape == [5, 10, 1]
    assert fw.unsqueeze(x, fw.to_tensor([0])).shape == [1, 5, 10]


def test_flatten_ravel_unflatten():
    x = arange(2, 3, 4, 4)
    assert fw.flatten(x, start_axis=1, stop_axis=2).shape == [2, 12, 4]
    assert fw.flatten(fw.to_tensor(3.0)).shape == [1]
    assert fw.ravel(x).shape == [96]
    assert fw.unflatten(x, 1, [3, 1]).shape == [2, 3, 1, 4, 4]
    assert fw.unflatten(x, -1, [2, -1]).shape == [2, 3, 4, 2, 2]
    with pytest.raises(InvalidArgumentError, match="start_axis"):
        fw.flatten(x, 2, 1)


# ---------------------------------------------------------------- join & split
def test_concat_axis_tensor_and_promotion():
    a, b = arange(2, 3), arange(2, 3, dtype="float64")
    out = fw.concat([a, b], axis=fw.to_tensor([1], dtype="int32"))
    assert out.shape == [2, 6] and out.dtype == fw.float64
    assert fw.cat((a, a), 0).shape == [4, 3]
    with pytest.raises(InvalidTypeError, match="list or tuple"):
        fw.concat(a)


def test_stack_helpers_match_numpy():
    a, b = np.arange(3.0, dtype="float32"), np.arange(3.0, 6.0, dtype="float32")
    ta, tb = fw.to_tensor(a), fw.to_tensor(b)
    for ours, theirs in [(fw.stack, lambda x: np.stack(x)), (fw.hstack, np.hstack),
                         (fw.vstack, np.vstack), (fw.row_stack, np.vstack),
                         (fw.dstack, np.dstack), (fw.column_stack, np.column_stack)]:
        np.testing.assert_array_equal(np_of(ours([ta, tb])), theirs([a, b]))
    m = np.ones((2, 2), "float32")
    np.testing.assert_array_equal(np_of(fw.hstack([fw.to_tensor(m)] * 2)), np.hstack([m, m]))


def test_atleast():
    s = fw.to_tensor(1.0)
    assert fw.atleast_1d(s).shape == [1]
    assert fw.atleast_2d(fw.zeros([3])).shape == [1, 3]
    assert fw.atleast_3d(fw.zeros([3])).shape == [1, 3, 1]
    assert fw.atleast_3d(fw.zeros([2, 3])).shape == [2, 3, 1]
    outs = fw.atleast_2d(s, fw.zeros([2, 2, 2]))
    assert [o.shape for o in outs] == [[1, 1], [2, 2, 2]]


def test_split_family():
    x = arange(3, 9, 5)
    assert [t.shape[1] for t in fw.split(x, 3, axis=1)] == [3, 3, 3]
    assert [t.shape[1] for t in fw.split(x, [2, 3, -1], axis=1)] == [2, 3, 4]
    assert [t.shape[1] for t in fw.split(x, [fw.to_tensor(2), 7], axis=-2)] == [2, 7]
    assert [t.shape[1] for t in fw.chunk(x, 3, axis=1)] == [3, 3, 3]
    parts = fw.tensor_split(fw.zeros([8]), 3)
    assert [p.shape for p in parts] == [[3], [3], [2]]
    parts = fw.tensor_split(fw.zeros([7, 8]), [2, 3], axis=1)
    assert [p.shape for p in parts] == [[7, 2], [7, 1], [7, 5]]
    assert [p.shape for p in fw.hsplit(fw.zeros([2, 4]), 2)] == [[2, 2], [2, 2]]
    assert [p.shape for p in fw.vsplit(fw.zeros([4, 2]), [1])] == [[1, 2], [3, 2]]
    assert [p.shape for p in fw.dsplit(fw.zeros([1, 1, 4]), 4)] == [[1, 1, 1]] * 4
    assert isinstance(fw.split(x, 1), list) and len(fw.split(x, 1)) == 1
    with pytest.raises(InvalidArgumentError, match="equal parts"):
        fw.split(x, 2, axis=1)


def test_split_and_unbind_in_a_program():
    prog = trace(lambda v: fw.split(v, [1, -1], axis=0), [TensorType([-1, 2], "float32")])
    x = arange(4, 2)
    a, b = run(prog, x)
    np.testing.assert_array_equal(np_of(b), np_of(x)[1:])
    prog = trace(lambda v: fw.unbind(v, 1), [TensorType([3, 2], "float32")])
    outs = run(prog, arange(3, 2))
    np.testing.assert_array_equal(np_of(outs[1]), np_of(arange(3, 2))[:, 1])
    with pytest.raises(UnsupportedError, match="static size"):
        trace(lambda v: fw.unbind(v, 0), [TensorType([-1, 2], "float32")])


# ---------------------------------------------------------------- broadcasting
def test_expand_and_broadcast():
    x = fw.zeros([1, 3])
    assert fw.expand(x, [2, -1]).shape == [2, 3]
    assert x.expand(4, 2, 3).shape == [4, 2, 3]
    assert fw.broadcast_to(x, fw.to_tensor([5, 3])).shape == [5, 3]
    assert fw.expand_as(x, fw.zeros([2, 3])).shape == [2, 3]
    y = fw.expand(x, [2, 3])
    y[0, 0] = 1.0  # a fresh, writable tensor (not a read-only broadcast view)
    assert float(x.sum()) == 0.0
    outs = fw.broadcast_tensors([fw.zeros([2, 1]), fw.zeros([3])])
    assert [o.shape for o in outs] == [[2, 3], [2, 3]]
    assert fw.broadcast_shape([2, 1, 3], [1, 3, 1]) == [2, 3, 3]
    with pytest.raises(InvalidArgumentError, match="broadcast_shape"):
        fw.broadcast_shape([2], [3])


def test_tile_and_repeat_interleave():
    x = fw.to_tensor([[1, 2], [3, 4]])
    np.testing.assert_array_equal(np_of(fw.tile(x, [2, 1])), np.tile(np_of(x), [2, 1]))
    assert fw.tile(x, [2]).shape == [2, 4]
    assert fw.tile(x, [2, 1, 1]).shape == [2, 2, 2]
    assert fw.repeat_interleave(x, 2).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    out = fw.repeat_interleave(x, fw.to_tensor([1, 2]), axis=0)
    assert out.tolist() == [[1, 2], [3, 4], [3, 4]]
    assert fw.repeat_interleave(x, [0, 3], axis=1).tolist() == [[2, 2, 2], [4, 4, 4]]


# ---------------------------------------------------------------- reorder
def test_flip_rot90_roll():
    x = arange(3, 2, 2)
    n = np_of(x)
    np.testing.assert_array_equal(np_of(fw.flip(x, [0, 1])), np.flip(n, (0, 1)))
    np.testing.assert_array_equal(np_of(fw.flip(x, -1)), np.flip(n, -1))
    np.testing.assert_array_equal(np_of(fw.rot90(x, 3, [1, 2])), np.rot90(n, 3, (1, 2)))
    m = arange(3, 3)
    np.testing.assert_array_equal(np_of(fw.roll(m, 1)), np.roll(np_of(m), 1))
    np.testing.assert_array_equal(np_of(fw.roll(m, [1, -1], [0, 1])),
                                  np.roll(np_of(m), [1, -1], (0, 1)))


def test_pad_modes_match_numpy():
    x = arange(2, 3)
    n = np_of(x)
    np.testing.assert_array_equal(np_of(pad(x, [1, 0, 0, 2], value=-1.0)),
                                  np.pad(n, ((1, 0), (0, 2)), constant_values=-1))
    for mode, np_mode in [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")]:
        np.testing.assert_array_equal(np_of(pad(x, [1, 1, 2, 2], mode)),
                                      np.pad(n, ((1, 1), (2, 2)), np_mode))
    np.testing.assert_array_equal(np_of(pad(x, [0, 0, -1, 1])),
                                  np.pad(n[:, 1:], ((0, 0), (0, 1))))
    assert pad(fw.to_tensor([1, 2]), [1, 1], value=7).tolist() == [7, 1, 2, 7]


def test_crop():
    x = fw.to_tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert fw.crop(x, [2, 2]).tolist() == [[1, 2], [4, 5]]
    assert fw.crop(x, fw.to_tensor([2, 2], "int32"), fw.to_tensor([0, 1], "int32")).tolist() \
        == [[2, 3], [5, 6]]
    assert fw.crop(x, [-1, 1], [1, 2]).tolist() == [[6], [9]]
    with pytest.raises(InvalidArgumentError, match="exceeds"):
        fw.crop(x, [2, 2], [2, 0])


# ---------------------------------------------------------------- products
def test_kron_cartesian_prod_combinations():
    a = np.array([[1, 2], [3, 4]])
    b = np.array([[0, 1], [1, 0], [2, 2]])
    np.testing.assert_array_equal(np_of(fw.kron(fw.to_tensor(a), fw.to_tensor(b))),
                                  np.kron(a, b))
    res = fw.cartesian_prod([fw.to_tensor([1, 2, 3]), fw.to_tensor([5, 6])])
    assert res.tolist() == [[1, 5], [1, 6], [2, 5], [2, 6], [3, 5], [3, 6]]
    assert fw.cartesian_prod([fw.zeros([0]), fw.zeros([2])]).shape == [0, 2]
    assert fw.combinations(fw.to_tensor([1, 2, 3])).tolist() == [[1, 2], [1, 3], [2, 3]]
    assert fw.combinations(fw.to_tensor([1, 2]), 2, True).tolist() == [[1, 1], [1, 2], [2, 2]]
    assert fw.combinations(fw.to_tensor([1, 2]), 3).shape == [0, 3]


def test_as_strided():
    x = arange(3, 3)
    out = fw.as_strided(x, [2, 2], [1, 3], 1)
    np.testing.assert_array_equal(np_of(out), [[1, 4], [2, 5]])
    with pytest.raises(InvalidArgumentError, match="only 9 elements"):
        fw.as_strided(x, [3, 3], [3, 2])
