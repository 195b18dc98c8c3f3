"""Helpers of the fw-onnx tests: export a function, run the file on onnxruntime
(CPUExecutionProvider), compare with fw."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

import fw  # noqa: E402
import fw.onnx  # noqa: E402
from fw.jit import InputSpec  # noqa: E402


def session(path, fuse=True):
    """An onnxruntime CPU session. ``fuse=False`` keeps onnxruntime's optimizer to its
    basic, ONNX-only rewrites: its extended fusions (com.microsoft ops such as
    QuickGelu) have float32 kernels only and fail on float64 graphs."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1  # the test machine's cores are shared
    so.log_severity_level = 3
    if not fuse:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def specs_for(arrays, dynamic_batch=False):
    out = []
    for i, a in enumerate(arrays):
        shape = list(a.shape)
        if dynamic_batch and shape:
            shape[0] = None
        out.append(InputSpec(shape, str(a.dtype), f"in{i}"))
    return out


def export_run(fn, arrays, specs=None, opset=17, tmpdir=None, fuse=None, **kw):
    """Export `fn` for `specs` (default: the arrays' exact shapes), run the file on
    `arrays`; returns (onnx outputs, the file's path)."""
    specs = specs if specs is not None else specs_for(arrays)
    d = tmpdir or tempfile.mkdtemp(prefix="fw-onnx-")
    path = fw.onnx.export(fn, os.path.join(d, "m"), specs, opset_version=opset, **kw)
    if fuse is None:  # see `session`
        fuse = all(a.dtype != np.float64 for a in arrays)
    sess = session(path, fuse)
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), arrays)}
    return sess.run(None, feeds), path


def fw_outputs(fn, arrays):
    out = fn(*[fw.to_tensor(a) for a in arrays])
    out = out if isinstance(out, (list, tuple)) else [out]
    return [o.numpy() for o in out]


def assert_same(onnx_outs, fw_outs, atol=1e-5, rtol=1e-5):
    assert len(onnx_outs) == len(fw_outs)
    for got, want in zip(onnx_outs, fw_outs):
        got = np.asarray(got)
        assert got.shape == want.shape, (got.shape, want.shape)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, atol=atol, rtol=rtol)
        else:
            np.testing.assert_array_equal(got, want)


def check(fn, arrays, specs=None, opset=17, atol=1e-5, rtol=1e-5):
    """fn's fw result on `arrays` == the exported file's onnxruntime result."""
    got, path = export_run(fn, arrays, specs, opset)
    assert_same(got, fw_outputs(fn, arrays), atol, rtol)
    return path
