"""convert_to_mixed_precision on real Paddle models (the LeNet and BERT-style
fixtures exported by Paddle 3.3.1, with Paddle Inference's float32 outputs): the
converted model computes in float16/bfloat16, loads into a Predictor and matches
the float32 reference within the low precision's tolerance; black_list,
white_list and keep_io_types change the program as stated. Also the XPU/TensorRT
names of a CPU build."""
from __future__ import annotations

import os

import numpy as np
import pytest

import fw.inference as infer
from fw.core.ir import load

PIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "paddle", "pir")
HALF, BF16 = infer.PrecisionType.Half, infer.PrecisionType.Bfloat16
# float16 keeps 11 significant bits, bfloat16 8: errors relative to the output's scale
TOL = {HALF: 1e-2, BF16: 6e-2}


def _convert(tmp_path, name, prec, **kw):
    out = str(tmp_path / f"{name}.fwmodel")
    params = str(tmp_path / f"{name}.safetensors")
    infer.convert_to_mixed_precision(os.path.join(PIR, name + ".json"),
                                     os.path.join(PIR, name + ".pdiparams"), out, params, prec,
                                     infer.PlaceType.CPU, **kw)
    return out, params


def _dtypes(path):
    program, _ = load(path)
    return program, {op.name for op in program.walk()}, str(program)


@pytest.mark.parametrize("prec", [HALF, BF16])
@pytest.mark.parametrize("name", ["lenet", "bert_mini"])
def test_converted_paddle_model_matches_paddle_inference(tmp_path, name, prec):
    io = np.load(os.path.join(PIR, name + ".npz"))
    out, params = _convert(tmp_path, name, prec)
    program, ops, text = _dtypes(out)
    low = "f16" if prec is HALF else "bf16"
    assert "cast" in ops and f": {low}[" in text
    # every weight the low ops read is stored low: the file's weights shrink
    dt = {a.label: a.type.dtype.name for a in program.params()}
    assert sum(v in ("float16", "bfloat16") for v in dt.values()) >= len(dt) // 2, dt
    for cfg in (infer.Config(out), infer.Config(out, params)):
        pred = infer.create_predictor(cfg)
        y = pred.run([io["x"]])[0].numpy()
        assert y.dtype == np.float32                      # keep_io_types: f32 at the edges
        ref = io["out"]
        err = np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-6)
        assert err < TOL[prec], (name, prec, err)
        assert err > 0       # it did compute in low precision


def test_black_white_lists_and_io_types(tmp_path):
    out, _ = _convert(tmp_path, "lenet", HALF, black_list={"conv2d"})   # a Paddle name: fw's conv
    program, _, _ = _dtypes(out)
    convs = [op for op in program.walk() if op.name == "conv"]
    assert convs and all(op.results[0].type.dtype.name == "float32" for op in convs)
    out, _ = _convert(tmp_path, "lenet", HALF, keep_io_types=False)
    program, _, _ = _dtypes(out)
    assert program.inputs()[0].type.dtype.name == "float16"
    assert program.outputs[0].type.dtype.name == "float16"
    io = np.load(os.path.join(PIR, "lenet.npz"))
    y = infer.create_predictor(infer.Config(out)).run([io["x"].astype(np.float16)])[0].numpy()
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), io["out"],
                               atol=1e-2 * np.abs(io["out"]).max())
    with pytest.raises(ValueError, match=r"both black_list and white_list"):
        _convert(tmp_path, "lenet", HALF, black_list={"relu"}, white_list={"relu"})


def test_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="PrecisionType.Half or PrecisionType.Bfloat16"):
        _convert(tmp_path, "lenet", infer.PrecisionType.Float32)
    with pytest.raises(ValueError, match="backend must be PlaceType.CPU or PlaceType.GPU"):
        infer.convert_to_mixed_precision(os.path.join(PIR, "lenet.json"),
                                         os.path.join(PIR, "lenet.pdiparams"),
                                         str(tmp_path / "o.fwmodel"), "", HALF,
                                         infer.PlaceType.XPU)
    with pytest.raises(ValueError, match="'conv3x3', which is neither an fw op"):
        _convert(tmp_path, "lenet", HALF, black_list={"conv3x3"})
    with pytest.raises(TypeError, match="unknown arguments"):
        _convert(tmp_path, "lenet", HALF, gray_list={"x"})


def test_xpu_and_tensorrt_names_of_a_cpu_build():
    # Paddle 3.3.1's CPU build: both versions (0, 0, 0); XpuConfig's defaults
    assert infer.get_trt_compile_version() == (0, 0, 0)
    assert infer.get_trt_runtime_version() == (0, 0, 0)
    x = infer.XpuConfig()
    assert (x.device_id, x.l3_size, x.gemm_compute_precision, x.quant_post_dynamic_op_types,
            x.transformer_encoder_adaptive_seqlen) == (0, 0, 1, [], True)
    with pytest.raises(AttributeError):
        x.not_a_field = 1
