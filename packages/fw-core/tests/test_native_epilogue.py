"""The epilogue activations are one table (fw.core._epilogue): the native enum agrees
with it exactly, every user of the vocabulary takes it from there, and each row's
NumPy function is its unfused op's reference."""

import numpy as np
import pytest

from fw.core import _epilogue, _native
from fw.core.errors import InvalidArgumentError
from fw.core.ops import OPS
from fw.core.ops import fused as fused_ops
from fw.core.testing.records.fused import fused_matmul_oracle

native = pytest.mark.skipif(not _native.available, reason="FW_DISABLE_NATIVE=1")


@native
def test_the_native_enum_is_the_python_table():
    assert _native.C.epilogue_activations() == [(a.name, a.value) for a in _epilogue.TABLE]
    assert _native.C.epilogue_aliases() == [
        (alias, name) for alias, name in _epilogue.ALIASES.items() if alias is not None]


def test_values_are_the_row_numbers():
    # the native enum is dense from 0 (none): a new row takes the next value
    assert [a.value for a in _epilogue.TABLE] == list(range(len(_epilogue.TABLE)))
    assert _epilogue.TABLE[0].name == "none" and _epilogue.TABLE[0].numpy is None


def test_every_spelling_is_taken_from_the_table():
    assert fused_ops.ACTIVATIONS == _epilogue.NAMES
    assert set(_native.ACTIVATIONS) == set(_epilogue.NAMES) | {
        a for a in _epilogue.ALIASES if a is not None}
    for alias, name in _epilogue.ALIASES.items():
        assert _epilogue.canonical(alias) == name
        canon = OPS["fused_matmul"].canon({**OPS["fused_matmul"].attrs, "activation": alias})
        assert canon["activation"] == name
    assert _epilogue.canonical("ReLU") == "relu"
    assert _epilogue.canonical("mish") is None and _epilogue.canonical([1]) is None
    with pytest.raises(InvalidArgumentError, match="unknown activation 'mish'"):
        OPS["fused_matmul"].canon({**OPS["fused_matmul"].attrs, "activation": "mish"})
    with pytest.raises(ValueError, match="unknown activation"):
        _native.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
                       activation="mish")


@pytest.mark.parametrize("act", _epilogue.TABLE, ids=lambda a: a.name)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_row_computes_its_unfused_op_exactly(act, dtype):
    v = np.linspace(-6, 6, 97, dtype=dtype).reshape(1, 97)
    want = v if act.op is None else OPS[act.op].reference(v, **dict(act.attrs))
    got = v.copy() if act.numpy is None else act.numpy(v.copy())
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("act", [a for a in _epilogue.TABLE if a.op is not None],
                         ids=lambda a: a.name)
def test_the_fusion_pass_recognises_each_row_by_its_op(act):
    assert _epilogue.of_op(act.op, dict(act.attrs)) == act.name
    assert _epilogue.of_op("exp", {}) is None


@pytest.mark.parametrize("name", _epilogue.NAMES)
def test_native_matmul_fallback_and_kernel_agree_with_the_oracle(name):
    # a float64 product runs the NumPy fallback of _native.matmul, a float32 one the
    # native epilogue (when built): both are the table's formula
    rng = np.random.default_rng(0)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        x = rng.standard_normal((70, 64)).astype(dtype)
        y = rng.standard_normal((64, 66)).astype(dtype)
        b = rng.standard_normal(66).astype(dtype)
        got = _native.matmul(x, y, bias=b, activation=name)
        want = fused_matmul_oracle(x, y, b, activation=name)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_a_numeric_attribute_must_be_the_rows_exact_value():
    # hardsigmoid fuses only with Paddle's default slope/offset (the native row bakes
    # them in); any other slope stays an unfused op
    assert _epilogue.of_op("hardsigmoid", {"slope": 0.1666667, "offset": 0.5}) == "hardsigmoid"
    assert _epilogue.of_op("hardsigmoid", {"slope": 0.2, "offset": 0.5}) is None
    assert _epilogue.of_op("hardsigmoid", {"slope": 0.1666667}) is None
    assert _epilogue.of_op("relu6", {}) == "relu6"
