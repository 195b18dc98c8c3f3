"""FLAGS_check_nan_inf (issue 16): the first eager op producing NaN/Inf raises, naming
the op, its inputs' shapes and the user's source line; nothing is checked when off."""

import numpy as np
import pytest

import fw
from fw.core._observe import NanInfError
from fw.core.dispatch import observe_state


@pytest.fixture
def nan_flag():
    fw.set_flags({"FLAGS_check_nan_inf": True})
    try:
        yield
    finally:
        fw.set_flags({"FLAGS_check_nan_inf": False})


def test_eager_op_producing_nan_is_named_with_shapes_and_line(nan_flag):
    x = fw.to_tensor(np.array([[1.0, -1.0, 4.0]], np.float32))
    y = fw.sqrt(x + 1.0)  # finite: passes
    np.testing.assert_allclose(y.numpy(), np.sqrt([[2.0, 0.0, 5.0]]), rtol=1e-6)
    with pytest.raises(NanInfError) as ei:
        fw.log(x - 1.0)  # log(-2) = nan on the second element  # the user's line
    msg = str(ei.value)
    assert "'log'" in msg and "NaN" in msg
    assert "float32[1, 3]" in msg  # the input's dtype and shape
    assert "test_check_nan_inf.py" in msg and "fw.log(x - 1.0)" in msg


def test_inf_through_the_operator_lane(nan_flag):
    a = fw.to_tensor(np.array([1.0, 2.0], np.float32))
    z = fw.to_tensor(np.array([0.0], np.float32))
    want = r"'divide' produced Inf .*x: float32\[2\], y: float32\[1\]"
    with pytest.raises(NanInfError, match=want):
        a / z  # `/` takes the binary fast lane when the check is off


def test_off_by_default_and_integers_are_not_checked():
    assert observe_state.hook is None
    x = fw.to_tensor(np.array([-1.0], np.float32))
    assert np.isnan(fw.log(x).numpy()).all()  # no check: NaN flows through
    fw.set_flags({"FLAGS_check_nan_inf": True})
    try:
        assert observe_state.hook is not None
        i = fw.to_tensor(np.array([3], np.int64))
        assert (i // i).numpy().tolist() == [1]
    finally:
        fw.set_flags({"FLAGS_check_nan_inf": False})
    assert observe_state.hook is None
