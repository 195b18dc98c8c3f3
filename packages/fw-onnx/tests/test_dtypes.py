"""dtypes through export: float32/float64/int32/int64/bool run on onnxruntime;
float16 too (with float16's tolerance: fw computes these ops in float32 and rounds
once, onnxruntime rounds after each op); bfloat16 graphs are valid ONNX but
onnxruntime's CPU provider has no bfloat16 MatMul, so they run on ONNX's reference
evaluator (``onnx.reference``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx_testutil import assert_same, check, export_run, fw_outputs, specs_for

import fw
import fw.nn.functional as F
import fw.onnx

R = np.random.default_rng(3)
W = R.standard_normal((3, 4))


def _layerish(w):
    def fn(x):
        return F.relu(fw.matmul(x, w) + 1.0) * x.sum(-1, keepdim=True)

    return fn


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float(dtype):
    fn = _layerish(fw.to_tensor(W.astype(dtype)))
    check(fn, [R.standard_normal((2, 3)).astype(dtype)])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integers_and_bools(dtype):
    def fn(a, b):
        m = (a > b) | (a == 0)
        return fw.where(m, a * b - 3, a // b), m, fw.cast(m, dtype).sum(axis=0)

    a = R.integers(-9, 10, (3, 4)).astype(dtype)
    b = (R.integers(1, 5, (3, 4)) * R.choice([-1, 1], (3, 4))).astype(dtype)
    got, path = export_run(fn, [a, b])
    want = fw_outputs(fn, [a, b])
    assert got[0].dtype == np.dtype(dtype) and got[1].dtype == np.dtype(bool)
    assert_same(got, want)  # dtypes too (fw's sum of int32 is int64, as Paddle's)


def test_float16():
    fn = _layerish(fw.to_tensor(W.astype(np.float16)))
    x = R.standard_normal((2, 3)).astype(np.float16)
    got, _ = export_run(fn, [x])
    (want,) = fw_outputs(fn, [x])
    assert got[0].dtype == np.float16
    np.testing.assert_allclose(got[0].astype(np.float32), want.astype(np.float32),
                               rtol=4e-3, atol=4e-3)


def test_bfloat16_on_the_reference_evaluator(tmp_path):
    from onnx.reference import ReferenceEvaluator

    fn = _layerish(fw.to_tensor(W.astype(ml_dtypes.bfloat16)))
    x = R.standard_normal((2, 3)).astype(ml_dtypes.bfloat16)
    path = fw.onnx.export(fn, tmp_path / "m", specs_for([x]))
    (got,) = ReferenceEvaluator(path).run(None, {"in0": x})
    (want,) = fw_outputs(fn, [x])
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2,
                               atol=1e-2)
