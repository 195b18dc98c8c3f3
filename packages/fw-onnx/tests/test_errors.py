"""What export refuses, and how: every op without a lowering is named with the
user's source line, and no file (not even a temporary one) is left at the path."""

from __future__ import annotations

import os

import onnx_testutil  # noqa: F401  (skips the module without onnx/onnxruntime)
import pytest

import fw
import fw.nn.functional as F
import fw.onnx
from fw.core.atomic_io import temp_files_of
from fw.jit import InputSpec
from fw.onnx import LOWERINGS, ExportError

SPEC = [InputSpec([None, 4], "float32", "x")]
THIS = os.path.abspath(__file__)


def two_unlowered(x):
    y = fw.tanh(x)  # line A
    z = fw.sin(y)  # line B
    return fw.tanh(z) + y


def _line(text):
    with open(THIS) as f:
        return next(i for i, s in enumerate(f, 1) if text in s)


def test_ops_without_lowering_are_all_named_with_their_lines(monkeypatch, tmp_path):
    monkeypatch.delitem(LOWERINGS, "tanh")
    monkeypatch.delitem(LOWERINGS, "sin")
    target = tmp_path / "m"
    with pytest.raises(ExportError) as ei:
        fw.onnx.export(two_unlowered, target, SPEC)
    msg = str(ei.value)
    assert "'sin'" in msg and "'tanh'" in msg
    # each use is listed with its file:line and source text, in program order
    locs = [loc for _, loc, _ in ei.value.problems]
    assert [n for n, _, _ in ei.value.problems] == ["tanh", "sin", "tanh"]
    assert locs[0].startswith(f"{THIS}:{_line('# line A')}:")
    assert locs[1].startswith(f"{THIS}:{_line('# line B')}:")
    assert "z = fw.sin(y)" in msg
    assert not os.listdir(tmp_path)  # nothing written, no temporary file either


def test_an_existing_file_is_left_as_it_was(monkeypatch, tmp_path):
    target = tmp_path / "m.onnx"
    target.write_bytes(b"previous")
    monkeypatch.delitem(LOWERINGS, "tanh")
    with pytest.raises(ExportError):
        fw.onnx.export(two_unlowered, target, SPEC)
    assert target.read_bytes() == b"previous"
    assert temp_files_of(target) == []


def test_ops_inside_control_flow_are_checked(monkeypatch, tmp_path):
    from test_control_flow import branchy

    monkeypatch.delitem(LOWERINGS, "tanh")
    with pytest.raises(ExportError, match="'tanh'"):
        fw.onnx.export(fw.jit.to_static(branchy), tmp_path / "m", [InputSpec([2, 3])])
    assert not os.listdir(tmp_path)


def divisor(x):
    return F.avg_pool2d(x, 2, divisor_override=3)


def test_an_attribute_onnx_cannot_express_names_op_and_line(tmp_path):
    with pytest.raises(ExportError, match="'avg_pool'.*divisor_override") as ei:
        fw.onnx.export(divisor, tmp_path / "m", [InputSpec([1, 1, 4, 4])])
    assert f"{THIS}:{_line('divisor_override=3)')}" in str(ei.value)
    assert not os.listdir(tmp_path)


def uses_the_mask(x):
    out, mask = F.max_pool2d(x, 2, return_mask=True)
    return out + mask.astype("float32")


def test_using_a_result_that_is_not_exported(tmp_path):
    with pytest.raises(ExportError, match="mask"):
        fw.onnx.export(uses_the_mask, tmp_path / "m", [InputSpec([1, 1, 4, 4])])
    assert not os.listdir(tmp_path)


def random_in_training(x):
    return F.dropout(x, 0.5, training=True)


def test_training_mode_randomness_is_refused(tmp_path):
    with pytest.raises(ExportError, match="eval mode"):
        fw.onnx.export(random_in_training, tmp_path / "m", SPEC)


def test_a_layer_is_exported_in_eval_mode_and_left_in_its_mode(tmp_path):
    net = fw.nn.Sequential(fw.nn.Linear(4, 4), fw.nn.Dropout(0.5))
    net.train()
    path = fw.onnx.export(net, tmp_path / "m", SPEC)
    assert net.training
    assert os.path.exists(path)


@pytest.mark.parametrize("opset", [7, 12, 10_000, True, "17"])
def test_bad_opset(opset, tmp_path):
    with pytest.raises(ValueError, match="opset_version"):
        fw.onnx.export(fw.nn.Linear(4, 2), tmp_path / "m", SPEC, opset_version=opset)


def test_unknown_option(tmp_path):
    with pytest.raises(TypeError, match="unknown option"):
        fw.onnx.export(fw.nn.Linear(4, 2), tmp_path / "m", SPEC, dynamic_axes={})


def test_input_spec_is_required_for_an_uncalled_layer(tmp_path):
    with pytest.raises(ValueError, match="input_spec"):
        fw.onnx.export(fw.nn.Linear(4, 2), tmp_path / "m")


def test_not_a_layer(tmp_path):
    with pytest.raises(TypeError, match="Layer or a function"):
        fw.onnx.export(42, tmp_path / "m", SPEC)


def test_path_convention(tmp_path):
    # Paddle's: a prefix gets ".onnx"; fw also takes a path that already ends in it
    net = fw.nn.Linear(4, 2)
    assert fw.onnx.export(net, tmp_path / "a", SPEC) == str(tmp_path / "a.onnx")
    assert fw.onnx.export(net, str(tmp_path / "b.onnx"), SPEC) == str(tmp_path / "b.onnx")
    assert fw.onnx.export(net, tmp_path / "sub" / "c", SPEC) == str(tmp_path / "sub" / "c.onnx")
    assert sorted(os.listdir(tmp_path)) == ["a.onnx", "b.onnx", "sub"]


def test_input_spec_defaults_to_the_layers_to_static_spec(tmp_path):
    import onnx

    net = fw.jit.to_static(fw.nn.Linear(4, 2), input_spec=[InputSpec([None, 4], "float32", "a")])
    path = fw.onnx.export(net, tmp_path / "m")
    (inp,) = onnx.load(path).graph.input
    assert inp.name == "a"
    assert inp.type.tensor_type.shape.dim[0].dim_param  # the None dim stayed dynamic
