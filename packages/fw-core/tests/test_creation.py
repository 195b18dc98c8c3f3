"""Creation semantics the generic record tests do not pin down: Paddle's argument
spellings (tensors as sizes and values), dtype defaults, public wrappers."""

import warnings

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir import TensorType, run, trace


def t(data, dtype=None):
    return fw.to_tensor(data, dtype=dtype)


def check(got, want, dtype):
    """Shape, then dtype, then values."""
    want = np.asarray(want)
    assert got.shape == list(want.shape)
    assert got.dtype == dtype, f"{got.dtype} != {dtype}"
    np.testing.assert_array_equal(got.numpy(), want)


# ---------------------------------------------------------------- full and friends
def test_full_accepts_tensor_shapes_and_values():
    check(fw.full([3, 2], 1.0), np.ones((3, 2)), fw.float32)
    check(fw.full(t([3, 2]), 2.0), np.full((3, 2), 2.0), fw.float32)
    check(fw.full([t(3), t(2)], 3.0), np.full((3, 2), 3.0), fw.float32)
    check(fw.full([2], fw.full([], 2.0, "float32")), [2.0, 2.0], fw.float32)
    check(fw.full([2], 7), [7.0, 7.0], fw.float32)  # an int fill is still float32
    check(fw.full([2], True), [True, True], fw.bool)
    check(fw.full([1], 1 + 2j), [1 + 2j], fw.complex64)
    check(fw.full([2], 7, "int32"), [7, 7], fw.int32)
    with pytest.raises(InvalidTypeError, match="complex value"):
        fw.full([1], 1 + 2j, "float32")


def test_zeros_ones_empty_and_like():
    check(fw.zeros([2]), [0.0, 0.0], fw.float32)
    check(fw.ones(t([2]), "int64"), [1, 1], fw.int64)
    check(fw.empty([0, 3]), np.zeros((0, 3)), fw.float32)
    x = t([[1, 2, 3]], "int32")
    check(fw.zeros_like(x), [[0, 0, 0]], fw.int32)
    check(fw.ones_like(x, dtype="float16"), [[1, 1, 1]], fw.float16)
    check(fw.empty_like(x), [[0, 0, 0]], fw.int32)
    check(fw.full_like(x, 2.7), [[2, 2, 2]], fw.int32)
    check(fw.full_like(x, t(1.5), dtype="float64"), [[1.5, 1.5, 1.5]], fw.float64)
    fw.set_default_dtype("float64")
    try:
        assert fw.zeros([1]).dtype == fw.float64
        assert fw.eye(2).dtype == fw.float64
    finally:
        fw.set_default_dtype("float32")


def test_like_ops_follow_dynamic_shapes_in_programs():
    prog = trace(lambda x: fw.ones_like(x) * fw.numel(x).astype("float32"),
                 [TensorType([-1, 3], "float32")])
    out = run(prog, t(np.zeros((2, 3), np.float32)))
    check(out, np.full((2, 3), 6.0), fw.float32)
    prog = trace(lambda x: fw.shape(x), [TensorType([-1, 3], "float32")])
    out = run(prog, t(np.zeros((4, 3), np.float32)))
    check(out, [4, 3], fw.int64)


def test_tensor_sizes_are_rejected_while_building():
    with pytest.raises(UnsupportedError, match="symbolic"):
        trace(lambda n: fw.eye(n), [TensorType([], "int64")])


# ---------------------------------------------------------------- ranges
def test_arange_dtypes_and_tensor_bounds():
    check(fw.arange(5), [0, 1, 2, 3, 4], fw.int64)
    check(fw.arange(1, 2, 0.5), [1.0, 1.5], fw.float32)
    check(fw.arange(t(3)), [0, 1, 2], fw.int64)
    check(fw.arange(1.0, 5.0, dtype="float32"), [1.0, 2.0, 3.0, 4.0], fw.float32)
    with pytest.raises(InvalidArgumentError, match="'step' must not be 0"):
        fw.arange(0, 5, 0)


def test_linspace_and_logspace():
    check(fw.linspace(0, 1, 5), [0.0, 0.25, 0.5, 0.75, 1.0], fw.float32)
    check(fw.linspace(t(0.0), t(10.0), t(3)), [0.0, 5.0, 10.0], fw.float32)
    check(fw.linspace(2, 9, 1), [2.0], fw.float32)
    check(fw.linspace(0, 1, 0), np.zeros(0), fw.float32)
    check(fw.linspace(-3, 3, 4, "int64"), [-3, -1, 1, 3], fw.int64)
    check(fw.linspace(0, 1, 3, dtype="int32"), [0, 0, 1], fw.int32)  # truncates
    out = fw.logspace(0, 10, 5, 2, "float32")
    np.testing.assert_allclose(out.numpy(), 2.0 ** np.array([0, 2.5, 5, 7.5, 10]), rtol=1e-6)
    check(fw.logspace(0, 10, 1, 2, "float32"), [1.0], fw.float32)
    check(fw.logspace(1, 3, 3), [10.0, 100.0, 1000.0], fw.float32)


# ---------------------------------------------------------------- matrices
def test_eye():
    check(fw.eye(3, dtype="int32"), np.eye(3, dtype=np.int32), fw.int32)
    check(fw.eye(2, 3), np.eye(2, 3), fw.float32)
    check(fw.eye(2, 0), np.eye(2, 0), fw.float32)  # an empty matrix is allowed
    check(fw.eye(0), np.eye(0), fw.float32)
    check(fw.eye(t(2)), np.eye(2), fw.float32)
    check(fw.eye(0), np.zeros((0, 0)), fw.float32)


def test_tril_triu_batched_and_inplace():
    data = fw.arange(1, 13, dtype="int64").reshape([3, -1])
    a = data.numpy()
    check(fw.tril(data), np.tril(a), fw.int64)
    check(fw.tril(data, diagonal=2), np.tril(a, 2), fw.int64)
    check(fw.triu(data, -1), np.triu(a, -1), fw.int64)
    b = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    check(t(b).triu(1), np.triu(b, 1), fw.float32)
    x = t(b)
    assert x.tril_() is x
    check(x, np.tril(b), fw.float32)
    with pytest.raises(InvalidArgumentError, match="tril: 'x' must have at least 2"):
        fw.tril(t([1.0, 2.0]))


def test_triangle_indices():
    check(fw.tril_indices(4, 4, -1), np.stack(np.tril_indices(4, -1, 4)), fw.int64)
    check(fw.triu_indices(4, 4, 2), np.stack(np.triu_indices(4, 2, 4)), fw.int64)
    check(fw.triu_indices(3), np.stack(np.triu_indices(3)), fw.int64)
    check(fw.tril_indices(3, 5, 1, "int32"), np.stack(np.tril_indices(3, 1, 5)), fw.int32)
    check(fw.tril_indices(0, 3), np.zeros((2, 0)), fw.int64)


def test_diag_diagflat_diag_embed():
    check(fw.diag(t([1, 2])), [[1, 0], [0, 2]], fw.int64)
    check(fw.diag(t([1.0, 2.0]), offset=1, padding_value=9),
          [[9, 1, 9], [9, 9, 2], [9, 9, 9]], fw.float32)
    m = t([[1, 2, 3], [4, 5, 6]])
    check(fw.diag(m), [1, 5], fw.int64)
    check(fw.diag(m, 1), [2, 6], fw.int64)
    check(fw.diag(m, -1), [4], fw.int64)
    check(fw.diag(m, 5), np.zeros(0, np.int64), fw.int64)
    check(fw.diagflat(t([[1, 2], [3, 4]]), -1), np.diagflat([1, 2, 3, 4], -1), fw.int64)
    x = fw.arange(6)
    check(fw.diag_embed(x), np.diag(np.arange(6)), fw.int64)
    check(fw.diag_embed(x, offset=-1, dim1=0, dim2=1), np.diag(np.arange(6), -1), fw.int64)
    x2 = np.arange(6).reshape(2, 3)
    out = fw.diag_embed(t(x2), offset=0, dim1=0, dim2=2)
    want = np.zeros((3, 2, 3), np.int64)
    for b in range(2):
        for i in range(3):
            want[i, b, i] = x2[b, i]
    check(out, want, fw.int64)
    check(fw.diag_embed(t(x2), dim1=-1, dim2=-2),
          np.stack([np.diag(r) for r in x2]).transpose(0, 2, 1), fw.int64)


def test_meshgrid():
    a, b = fw.meshgrid(t([1, 2]), t([3, 4, 5]))
    ga, gb = np.meshgrid([1, 2], [3, 4, 5], indexing="ij")
    check(a, ga, fw.int64)
    check(b, gb, fw.int64)
    a, b, c = fw.meshgrid([t([1.0, 2.0]), t([3.0]), t(7.0)], indexing="xy")
    ga, gb, gc = np.meshgrid([1.0, 2.0], [3.0], [7.0], indexing="xy")
    for g, w in ((a, ga), (b, gb), (c, gc)):
        check(g, w, fw.float32)
    (only,) = fw.meshgrid(t([1, 2]))
    check(only, [1, 2], fw.int64)
    with pytest.raises(InvalidArgumentError, match="'ij' or 'xy'"):
        fw.meshgrid(t([1]), indexing="ji")


# ---------------------------------------------------------------- complex from parts
def test_complex_and_polar():
    z = fw.complex(fw.arange(2, dtype="float32").reshape([2, 1]), fw.arange(3, dtype="float32"))
    check(z, np.arange(2.0)[:, None] + 1j * np.arange(3.0), fw.complex64)
    z = fw.complex(t([0.0], "float64"), t([np.inf], "float64"))
    check(z, [complex(0, np.inf)], fw.complex128)  # not nan + inf j
    p = fw.polar(t([1.0, 2.0], "float64"), t([np.pi / 2, np.pi], "float64"))
    np.testing.assert_allclose(p.numpy(), [1j, -2], atol=1e-12)
    assert p.dtype == fw.complex128
    with pytest.raises(InvalidTypeError, match="must be real"):
        fw.complex(t([1j]), t([1.0]))


# ---------------------------------------------------------------- copies and casts
def test_assign_clone_and_output():
    x = t([1.0, 2.0])
    y = fw.assign(x)
    y += 1
    check(x, [1.0, 2.0], fw.float32)
    check(fw.assign(np.array([1, 2], np.int32)), [1, 2], fw.int32)
    check(fw.assign([[1.5]]), [[1.5]], fw.float32)
    out = fw.zeros([5], "int64")
    assert fw.assign(x, output=out) is out
    check(out, [1.0, 2.0], fw.float32)
    check(fw.clone(x), [1.0, 2.0], fw.float32)
    check(x.clone(), [1.0, 2.0], fw.float32)


def test_cast_complex_to_real_keeps_real_part_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(fw.cast(t([1.5 + 2j]), "float32"), [1.5], fw.float32)
        check(t([3 + 1j]).astype("int32"), [3], fw.int32)
    check(fw.cast(t([2.0, 3.0, 4.0], "float64"), "uint8"), [2, 3, 4], fw.uint8)
    check(t([1.5]).cast("bfloat16"), np.array([1.5], fw.bfloat16.np), fw.bfloat16)


def test_increment_is_in_place():
    x = fw.zeros([1])
    assert fw.increment(x) is x
    check(x, [1.0], fw.float32)
    x.increment(2.5)
    check(x, [3.5], fw.float32)
    i = t(3)
    fw.increment(i, 2)
    check(i, 5, fw.int64)
    with pytest.raises(InvalidArgumentError, match="increment: 'x' must hold exactly one"):
        fw.increment(fw.zeros([2]))


def test_shape_queries():
    x = fw.zeros([2, 0, 3])
    check(fw.numel(x), 0, fw.int64)
    check(fw.ones([2, 3]).numel(), 6, fw.int64)
    check(fw.shape(x), [2, 0, 3], fw.int64)
    check(fw.is_empty(x), True, fw.bool)
    check(fw.ones([1]).is_empty(), False, fw.bool)
    assert fw.is_floating_point(t([1.0], "bfloat16")) is True
    assert fw.is_floating_point(t([1])) is False
    assert t([1j]).is_complex() is True
    assert fw.is_integer(t([1], "uint8")) is True
    assert fw.is_integer(t([True])) is False
    with pytest.raises(InvalidTypeError, match="expected a Tensor"):
        fw.is_complex(3)


def test_to_tensor_spellings():
    x = fw.tensor(1, requires_grad=True)
    assert x.dtype == fw.int64 and not x.stop_gradient
    y = fw.as_tensor(x)
    assert y is not x and y.stop_gradient
    z = fw.asarray([[0.1, 0.2]], device=fw.CPUPlace(), requires_grad=True)
    assert z.dtype == fw.float32 and not z.stop_gradient and z.place == fw.CPUPlace()
    check(fw.asarray([[1 + 1j, 2]], dtype="complex64"), [[1 + 1j, 2]], fw.complex64)
    check(fw.as_tensor(np.arange(3, dtype=np.int16), device="cpu"), [0, 1, 2], fw.int16)
