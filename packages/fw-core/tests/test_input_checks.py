"""Input checks Paddle makes that NumPy would let through (issue 10): pooling padding
over half the kernel, negative reshape sizes other than one -1, integer floor division
and remainder by zero. Each is refused eagerly and while a program is built or run."""

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, run, trace
from fw.core.ops import call

X = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)


# ---------------------------------------------------------------- pooling padding
@pytest.mark.parametrize("op,attrs", [
    ("max_pool", {}), ("max_pool_with_index", {}), ("avg_pool", {}),
    ("lp_pool", {"norm_type": 2.0}),
])
@pytest.mark.parametrize("kernel,padding", [(2, 2), (3, 2), ([2, 4], [0, 0, 0, 3]),
                                            ([3, 3], [1, 2])])
def test_pool_padding_over_half_the_kernel_is_refused(op, attrs, kernel, padding):
    kw = dict(attrs, kernel_size=kernel, padding=padding)
    with pytest.raises(InvalidArgumentError, match=rf"^{op}: padding .* more than half the "
                                                   r"kernel size .*at most half"):
        call(op, fw.to_tensor(X), **kw)
    with pytest.raises(InvalidArgumentError, match=rf"^{op}: .*at most half"):
        trace(lambda x: call(op, x, **kw), [TensorType([1, 2, 4, 4], "float32")])


@pytest.mark.parametrize("kw,shape", [
    ({"kernel_size": 2, "padding": 1}, [1, 2, 3, 3]),
    ({"kernel_size": 3, "padding": 1, "ceil_mode": True, "stride": 2}, [1, 2, 3, 3]),
    ({"kernel_size": [3, 2], "padding": [1, 0, 0, 1]}, [1, 2, 1, 2]),
    ({"kernel_size": 4, "stride": 1, "padding": "SAME"}, [1, 2, 4, 4]),
    ({"kernel_size": 4, "padding": "VALID"}, [1, 2, 1, 1]),
])
def test_pool_padding_up_to_half_the_kernel_still_works(kw, shape):
    for op in ("max_pool", "avg_pool"):
        assert call(op, fw.to_tensor(X), **kw).shape == shape
    x = fw.randn([1, 2, 5, 5])
    assert fw.nn.functional.adaptive_avg_pool2d(x, 3).shape == [1, 2, 3, 3]
    assert fw.nn.functional.adaptive_max_pool2d(x, 3).shape == [1, 2, 3, 3]


def test_functional_pooling_refuses_a_large_padding():
    F = fw.nn.functional
    x = fw.to_tensor(X)
    for fn, xs in ((F.max_pool2d, x), (F.avg_pool2d, x), (F.max_pool1d, x[0]),
                   (F.avg_pool3d, x.unsqueeze(0))):
        with pytest.raises(InvalidArgumentError, match="at most half of the kernel size"):
            fn(xs, kernel_size=2, padding=2)


# ---------------------------------------------------------------- reshape
@pytest.mark.parametrize("shape", [[-2, 3], [2, -3], [0, -2], [-2], [6, -1, -5]])
def test_reshape_refuses_negative_sizes_other_than_minus_one(shape):
    x = fw.arange(6)
    for f in (lambda: fw.reshape(x, shape), lambda: x.reshape(shape), lambda: x.view(shape),
              lambda: x.clone().reshape_(shape)):
        with pytest.raises(InvalidArgumentError, match=r"^reshape: .*negative dimension -"):
            f()
    with pytest.raises(InvalidArgumentError, match=r"^reshape: .*negative dimension -"):
        trace(lambda v: fw.reshape(v, shape), [TensorType([6], "int64")])


def test_reshape_to_run_time_sizes_refuses_negative_sizes_other_than_minus_one():
    # sizes known only when the program runs go through reshape_dyn, whose NumPy
    # kernel would read -2 as -1 (fw.shape(v)[0] - 8 is -2 for 6 elements)
    x = fw.arange(6).astype("float32")
    call_ok = call("reshape_dyn", x, fw.to_tensor(np.array([2, 3])), static_shape=(-1, -1))
    assert call_ok.shape == [2, 3]
    with pytest.raises(InvalidArgumentError, match=r"reshape_dyn: .*negative dimension -2"):
        call("reshape_dyn", x, fw.to_tensor(np.array([-2, 3])), static_shape=(-1, -1))
    prog = trace(lambda v: fw.reshape(v, [fw.shape(v)[0] - 8, 3]), [TensorType([-1], "float32")])
    assert "reshape_dyn" in str(prog)
    with pytest.raises(InvalidArgumentError, match=r"reshape_dyn: .*negative dimension -2"):
        run(prog, np.arange(6, dtype=np.float32))


def test_reshape_keeps_zero_and_one_minus_one():
    x = fw.arange(6).reshape([2, 3])
    assert fw.reshape(x, [0, -1]).shape == [2, 3]
    assert fw.reshape(x, [-1]).shape == [6]
    with pytest.raises(InvalidArgumentError, match="more than one -1"):
        fw.reshape(x, [-1, -1])


# ---------------------------------------------------------------- integer division by zero
_X = np.array([5, -7, 3], np.int32)
_Z = np.array([1, 0, 2], np.int32)


@pytest.mark.parametrize("name,f", [
    ("floor_divide", lambda x, y: x // y), ("remainder", lambda x, y: x % y),
    ("floor_divide", fw.floor_divide), ("remainder", fw.remainder), ("remainder", fw.mod),
    ("remainder", fw.floor_mod), ("floor_divide", lambda x, y: x // 0),
    ("remainder", lambda x, y: x % 0), ("floor_divide", lambda x, y: 7 // y),
    ("floor_divide", lambda x, y: x.clone().floor_divide_(y)),
    ("remainder", lambda x, y: x.clone().remainder_(y)),
])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_integer_division_by_zero_is_an_error(name, f, dtype):
    x, y = fw.to_tensor(np.abs(_X).astype(dtype)), fw.to_tensor(_Z.astype(dtype))
    with pytest.raises(InvalidArgumentError, match=rf"^{name}: integer division by zero"):
        f(x, y)


def test_integer_division_by_zero_in_a_program():
    t = TensorType([3], "int32")
    for op, fn in (("floor_divide", lambda x, y: x // y), ("remainder", lambda x, y: x % y)):
        p = trace(fn, [t, t])
        assert run(p, fw.to_tensor(_X), fw.to_tensor(np.array([1, 2, 2], np.int32))).shape == [3]
        with pytest.raises(InvalidArgumentError, match=rf"^{op}: .*integer division by zero"):
            run(p, fw.to_tensor(_X), fw.to_tensor(_Z))


def test_float_division_by_zero_keeps_inf_and_nan():
    x = fw.to_tensor(np.array([1.0, -1.0, 0.0], np.float32))
    z = fw.zeros([3])
    np.testing.assert_array_equal((x // z).numpy(), np.floor_divide(x.numpy(), 0.0))
    assert np.isnan((x % z).numpy()).all()
    assert np.isnan((x % 0.0).numpy()).all()
    # nonzero integer divisors are unchanged (Python's floor semantics)
    xi = fw.to_tensor(_X)
    assert (xi // 2).tolist() == [2, -4, 1] and (xi % -2).tolist() == [-1, -1, -1]
