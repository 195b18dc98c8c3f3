"""LeNet with 50 % of its conv channels pruned, served by fw.inference: the pruned stem
(1 -> 3 channels, channel-last after the Predictor's layout pass) runs fw-core's
small-channel direct convolution (csrc/nn_conv_small.cpp, which oneDNN's kernels, padded
to 16 channels, do not speed up), the dense model's 1 -> 6 stem stays on oneDNN, and
both Predictors give the eager model's values; with the kernel switched off the pruned
Predictor gives the same values (float rounding)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import fw
import fw.slim as slim

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
import zoo  # noqa: E402


def _predictor(model, prefix):
    infer = pytest.importorskip("fw.inference")
    spec = [fw.static.InputSpec([None, 1, 28, 28], "float32")]
    fw.jit.save(model, str(prefix), input_spec=spec)
    cfg = infer.Config(str(prefix))
    cfg.disable_glog_info()
    return infer.create_predictor(cfg)


def test_pruned_lenet_stem_runs_direct_kernel(tmp_path):
    from fw.core import _native

    if not _native.available:
        pytest.skip("needs fw-core's native kernels")
    C = _native.C
    fw.seed(0)
    dense = zoo.build(fw, "lenet")
    x = zoo.example_input(fw, "lenet", batch=8)
    pruned = zoo.build(fw, "lenet")
    pruned.set_state_dict(dense.state_dict())
    slim.L1NormFilterPruner(pruned, [1, 1, 28, 28]).prune(0.5)
    assert int(pruned.features[0].weight.shape[0]) == 3
    with fw.no_grad():
        want_dense, want_pruned = dense(x).numpy(), pruned(x).numpy()
    pd, pp = _predictor(dense, tmp_path / "dense"), _predictor(pruned, tmp_path / "pruned")
    before = C.conv_small_calls()
    (got_dense,) = pd.run([x.numpy()])
    assert C.conv_small_calls() == before  # 6 output channels: oneDNN
    (got_pruned,) = pp.run([x.numpy()])
    assert C.conv_small_calls() == before + 1  # the 1 -> 3 stem, once per run
    np.testing.assert_allclose(got_dense, want_dense, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_pruned, want_pruned, rtol=1e-4, atol=1e-4)
    C.conv_small_set_enabled(False)
    try:
        (off,) = pp.run([x.numpy()])
    finally:
        C.conv_small_set_enabled(True)
    np.testing.assert_allclose(got_pruned, off, rtol=1e-5, atol=1e-5)
