"""DLPack exchange is zero-copy in both directions."""

import ml_dtypes
import numpy as np
import pytest

import fw
from fw.core.errors import InvalidTypeError, UnsupportedError


def test_numpy_to_fw_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = fw.from_dlpack(a)
    assert t.shape == [2, 3] and t.dtype == fw.float32
    a[0, 0] = 42.0
    assert t.numpy()[0, 0] == 42.0


def test_fw_to_numpy_shares_memory():
    t = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.from_dlpack(t)
    t.set_value(fw.to_tensor([[5.0, 6.0], [7.0, 8.0]]))
    assert a.tolist() == [[5.0, 6.0], [7.0, 8.0]]


def test_capsule_round_trip_and_single_use():
    t = fw.arange(5)
    cap = fw.utils.dlpack.to_dlpack(t)
    u = fw.utils.dlpack.from_dlpack(cap)
    assert u.tolist() == [0, 1, 2, 3, 4] and u.dtype == fw.int64
    with pytest.raises(InvalidTypeError, match="consumed once"):
        fw.utils.dlpack.from_dlpack(cap)


def test_strided_views_keep_their_strides():
    a = np.arange(12, dtype=np.float64).reshape(3, 4).T
    t = fw.from_dlpack(a)
    assert t.numpy().strides == a.strides
    np.testing.assert_array_equal(t.numpy(), a)


def test_bfloat16_export_is_refused_with_a_clear_error():
    t = fw.to_tensor(np.ones(3, ml_dtypes.bfloat16))
    with pytest.raises(UnsupportedError, match="bfloat16"):
        fw.utils.dlpack.to_dlpack(t)


def test_torch_round_trip_zero_copy():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = fw.from_dlpack(x)
    x[1, 2] = -1.0
    assert t.numpy()[1, 2] == -1.0
    y = torch.from_dlpack(t)
    t.set_value(fw.zeros([2, 3]))
    assert float(y.abs().sum()) == 0.0


def test_torch_bfloat16_imports_as_bits():
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16)
    t = fw.from_dlpack(x)
    assert t.dtype == fw.bfloat16
    np.testing.assert_array_equal(t.numpy().astype(np.float32), [1.5, -2.0, 3.25])
    x[0] = 8.0
    assert float(t.numpy()[0]) == 8.0
