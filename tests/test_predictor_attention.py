"""The fused attention of the inference pipeline (``fuse_attention``, the
``fused_attention`` op and its cpu kernel) on the BERT-style zoo encoder: every
layer's attention chain becomes one op, and the predictor's float32 outputs equal
eager's and the unfused predictor's within 1e-5 (packages/fw-core/tests/
test_fuse_attention.py checks that the native kernel, not its reference fallback,
answers on float32)."""

import os
import sys

import numpy as np
import pytest

import fw
import fw.inference as infer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

LAYERS = 2


def _config(prefix, fuse):
    config = infer.Config(prefix)
    config.disable_glog_info()
    config.set_cpu_math_library_num_threads(1)
    if not fuse:
        config.pass_builder().delete_pass("fuse_attention")
    return config


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    fw.seed(0)
    model = zoo.build(fw, "bert_encoder", layers=LAYERS, seq=32)
    spec = [fw.static.InputSpec([None, 32], "int64")]
    prefix = str(tmp_path_factory.mktemp("bert") / "bert")
    fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    return model, prefix


def _ops(predictor):
    return [op.name for op in predictor.program.walk()]


@pytest.mark.parametrize("batch", [1, 3])
def test_fused_attention_predictor_equals_eager(encoder, batch):
    model, prefix = encoder
    fused = infer.create_predictor(_config(prefix, True))
    plain = infer.create_predictor(_config(prefix, False))
    ops = _ops(fused)
    assert ops.count("fused_attention") == LAYERS
    assert "softmax" not in ops and "transpose" not in ops
    assert "fused_attention" not in _ops(plain) and _ops(plain).count("softmax") == LAYERS
    rng = np.random.default_rng(batch)
    ids = rng.integers(0, zoo.BERT_VOCAB, (batch, 32)).astype("int64")
    with fw.no_grad():
        want = model(fw.to_tensor(ids)).numpy()
    got = fused.run([ids])[0].numpy()
    unfused = plain.run([ids])[0].numpy()
    assert got.shape == want.shape == (batch, 32, 256) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, unfused, rtol=1e-5, atol=1e-5)
