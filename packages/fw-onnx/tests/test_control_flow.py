"""Tensor-dependent control flow: fw.jit's ``cond`` becomes ONNX If and ``while``
becomes ONNX Loop; both branches and several trip counts run on onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_testutil import assert_same, export_run, fw_outputs, session

import fw
from fw.jit import InputSpec, to_static


def branchy(x):
    if x.sum() > 0:
        y = fw.tanh(x) * 2.0
    else:
        y = x - 1.0
    return y


def loop(x, n):
    i = fw.zeros([], "int64")
    acc = x
    while i < n:
        acc = acc * 0.5 + x
        i = i + 1
    return acc, i


def nested(x, n):
    i = fw.zeros([], "int64")
    while i < n:
        if x.mean() > 0:
            x = x - 0.25
        else:
            x = x + 1.0
        i = i + 1
    return x


def loop_growing(x, n):
    # the carried value changes shape every iteration (a -1 dim in the IR)
    i = fw.zeros([], "int64")
    while i < n:
        x = fw.concat([x, x[:, :1]], axis=1)
        i = i + 1
    return x


def _graph_ops(path):
    import onnx

    return [n.op_type for n in onnx.load(path).graph.node]


@pytest.fixture(scope="module")
def branchy_file(tmp_path_factory):
    spec = [InputSpec([None, 3], "float32", "x")]
    _, path = export_run(to_static(branchy, input_spec=spec), [np.ones((2, 3), np.float32)],
                         spec, tmpdir=str(tmp_path_factory.mktemp("cf")))
    return path


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
@pytest.mark.parametrize("batch", [1, 4])
def test_cond_is_an_if_with_both_branches(branchy_file, sign, batch):
    assert "If" in _graph_ops(branchy_file)
    x = (sign * (np.abs(np.random.default_rng(batch).standard_normal((batch, 3))) + 0.1)
         ).astype(np.float32)
    got = session(branchy_file).run(None, {"x": x})
    assert_same(got, fw_outputs(branchy, [x]))


@pytest.fixture(scope="module")
def loop_file(tmp_path_factory):
    spec = [InputSpec([None, 2], "float32", "x"), InputSpec([], "int64", "n")]
    arrays = [np.ones((1, 2), np.float32), np.array(3, np.int64)]
    _, path = export_run(to_static(loop, input_spec=spec), arrays, spec,
                         tmpdir=str(tmp_path_factory.mktemp("cf")))
    return path


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_while_is_a_loop_for_each_trip_count(loop_file, n):
    assert "Loop" in _graph_ops(loop_file)
    x = np.random.default_rng(n).standard_normal((3, 2)).astype(np.float32)
    arrays = [x, np.array(n, np.int64)]
    got = session(loop_file).run(None, {"x": x, "n": arrays[1]})
    want = fw_outputs(loop, arrays)
    assert_same(got, want)
    assert int(got[1]) == n


@pytest.mark.parametrize("n,start", [(0, 1.0), (3, 1.0), (3, -1.0), (5, -0.5)])
def test_if_inside_loop(n, start):
    spec = [InputSpec([2, 2], "float32", "x"), InputSpec([], "int64", "n")]
    arrays = [np.full((2, 2), start, np.float32), np.array(n, np.int64)]
    got, _ = export_run(to_static(nested, input_spec=spec), arrays, spec)
    assert_same(got, fw_outputs(nested, arrays))


@pytest.mark.parametrize("n", [0, 2, 3])
def test_loop_carrying_a_growing_shape(n):
    spec = [InputSpec([2, 1], "float32", "x"), InputSpec([], "int64", "n")]
    arrays = [np.arange(2, dtype=np.float32).reshape(2, 1), np.array(n, np.int64)]
    got, _ = export_run(to_static(loop_growing, input_spec=spec), arrays, spec)
    assert got[0].shape == (2, 1 + n)
    assert_same(got, fw_outputs(loop_growing, arrays))
