"""Every Config switch: where the model is found, the IR passes, debugging dumps,
memory optimisation, threads, logging, the GPU switch, summary."""

import logging
import os

import numpy as np
import pytest
from safetensors.numpy import save_file

import fw.inference as infer
from fw.core.errors import InvalidArgumentError, UnsupportedError
from fw.core.ir import load, run, save
from fw.core.ir.passes import PIPELINES

X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)


def _predict(pred, x=X):
    return pred.run([x])[0].numpy()


# ---------------------------------------------------------------- the model's location
def test_model_path_forms(mlp_file, tmp_path):
    p, path = mlp_file
    want = run(p, X).numpy()
    prefix = str(path)[: -len(infer.MODEL_SUFFIX)]
    for spelling in (str(path), prefix, str(tmp_path), path):
        config = infer.Config(spelling)
        assert config.prog_file() == str(path)
        assert config.model_dir() == str(tmp_path)
        np.testing.assert_array_equal(_predict(infer.create_predictor(config)), want)
    config = infer.Config()
    assert config.prog_file() == "" and config.model_dir() == "" and config.params_file() == ""
    config.set_model(path)
    assert config.prog_file() == str(path)
    config = infer.Config()
    config.set_prog_file(prefix)
    assert config.prog_file() == str(path)
    config.set_model_dir(tmp_path)
    assert config.model_file() == str(path)


def test_missing_and_ambiguous_models(mlp_file, tmp_path):
    _, path = mlp_file
    with pytest.raises(InvalidArgumentError, match="no model is set"):
        infer.create_predictor(infer.Config())
    with pytest.raises(FileNotFoundError, match=r"no model file at .*nope.*nope\.fwmodel"):
        infer.create_predictor(infer.Config(tmp_path / "nope"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"has no '\*\.fwmodel' file"):
        infer.create_predictor(infer.Config(empty))
    save(load(path)[0], tmp_path / "other.fwmodel")
    with pytest.raises(InvalidArgumentError, match=r"several model files \['mlp.fwmodel', "
                                                   r"'other.fwmodel'\]"):
        infer.create_predictor(infer.Config(tmp_path))
    with pytest.raises(TypeError, match="takes a fw.inference.Config"):
        infer.create_predictor(str(path))


def test_params_file_replaces_weights_by_label(mlp_file, tmp_path):
    p, path = mlp_file
    q, params = load(path)
    new = {k: (v.numpy() * 2).astype(np.float32) for k, v in params.items()
           if k.startswith("fc1.")}
    save_file(new, tmp_path / "new.safetensors")
    config = infer.Config(path, tmp_path / "new.safetensors")
    assert config.params_file() == str(tmp_path / "new.safetensors")
    got = _predict(infer.create_predictor(config))
    for k, v in new.items():
        q.captured[k] = v
    np.testing.assert_allclose(got, run(q, X).numpy(), rtol=1e-6)
    # the model file itself as params file: its own weights
    same = infer.Config(path, path)
    np.testing.assert_array_equal(_predict(infer.create_predictor(same)), run(p, X).numpy())
    save_file({"nope": np.ones(2, np.float32)}, tmp_path / "bad.safetensors")
    from fw.core.ir.serialize import ModelFormatError

    with pytest.raises(ModelFormatError, match=r"bad.safetensors: tensors \['nope'\] are not "
                                               r"parameters"):
        infer.create_predictor(infer.Config(path, tmp_path / "bad.safetensors"))
    save_file({"fc0.bias": np.ones(3, np.float32)}, tmp_path / "shape.safetensors")
    with pytest.raises(ModelFormatError, match=r"'fc0.bias' is float32\[3\], the model needs "
                                               r"f32\[16\]"):
        infer.create_predictor(infer.Config(path, tmp_path / "shape.safetensors"))


def test_config_copy_is_independent(mlp_file):
    _, path = mlp_file
    a = infer.Config(path)
    a.switch_ir_optim(False)
    b = infer.Config(a)
    b.switch_ir_optim(True)
    b.delete_pass("dce")
    assert not a.ir_optim() and "dce" in a.pass_builder().all_passes()
    assert b.ir_optim() and "dce" not in b.pass_builder().all_passes()
    with pytest.raises(InvalidArgumentError, match="takes no params_path"):
        infer.Config(a, "x")


# ---------------------------------------------------------------- passes
def test_switch_ir_optim(mlp_file):
    p, path = mlp_file
    config = infer.Config(path)
    assert config.ir_optim()
    on = infer.create_predictor(config)
    assert "fused_matmul" in str(on.program) and "linear" not in str(on.program)
    config.switch_ir_optim(False)
    off = infer.create_predictor(config)
    assert str(off.program) == str(p)
    np.testing.assert_array_equal(_predict(on), _predict(off))


def test_delete_pass_and_pass_builder(mlp_file):
    _, path = mlp_file
    config = infer.Config(path)
    pb = config.pass_builder()
    assert pb.all_passes() == list(PIPELINES["inference"])
    config.delete_pass("fuse_matmul_bias_act")
    config.delete_pass("not_a_pass")  # ignored, as in Paddle
    assert "fuse_matmul_bias_act" not in pb.all_passes()
    pred = infer.create_predictor(config)
    assert "fused_matmul" not in str(pred.program) and "linear(" in str(pred.program)
    pb.clear_passes()
    pb.append_pass("fuse_matmul_bias_act")
    pb.insert_pass(0, "cse")
    assert pb.all_passes() == ["cse", "fuse_matmul_bias_act"]
    assert pb.debug_string() == "cse -> fuse_matmul_bias_act"
    pb.delete_pass(0)
    assert pb.all_passes() == ["fuse_matmul_bias_act"]
    with pytest.raises(InvalidArgumentError, match="no IR pass named 'fc_fuse_pass'"):
        pb.append_pass("fc_fuse_pass")


def test_switch_ir_debug_dumps_every_pass(mlp_file, tmp_path):
    _, path = mlp_file
    config = infer.Config(path)
    config.switch_ir_debug(True, dump_dir=tmp_path / "dump")
    infer.create_predictor(config)
    names = sorted(os.listdir(tmp_path / "dump"))
    want = ["00-input.fw"] + [f"{i + 1:02d}-{n}.fw" for i, n in
                              enumerate(PIPELINES["inference"])]
    assert names == want
    text = (tmp_path / "dump" / names[1 + PIPELINES["inference"].index(
        "fuse_matmul_bias_act")]).read_text()
    assert "fused_matmul" in text  # after fuse_matmul_bias_act
    config = infer.Config(path)
    config.set_optim_cache_dir(tmp_path / "cache")
    config.switch_ir_debug()
    assert config.ir_debug_dir() == str(tmp_path / "cache" / "ir_debug")
    infer.create_predictor(config)
    assert len(os.listdir(tmp_path / "cache" / "ir_debug")) == len(want)


def test_save_optim_model(mlp_file, tmp_path):
    _, path = mlp_file
    config = infer.Config(path)
    config.set_optim_cache_dir(tmp_path / "opt")
    config.enable_save_optim_model(True)
    pred = infer.create_predictor(config)
    q, _ = load(tmp_path / "opt" / "_optimized.fwmodel")
    assert str(q) == str(pred.program)
    np.testing.assert_array_equal(run(q, X).numpy(), _predict(pred))


def test_folded_weights_are_dropped(convbn_file):
    _, path = convbn_file
    pred = infer.create_predictor(infer.Config(path))
    labels = [a.label for a in pred.program.params()]
    assert labels == ["fc.weight", "fc.bias", "conv.weight.bn_folded",
                      "conv.weight.bn_folded_bias"]


def test_enable_memory_optim(convbn_file):
    p, path = convbn_file
    config = infer.Config(path)
    assert not config.memory_optim_enabled()
    plain = infer.create_predictor(config)
    config.enable_memory_optim()
    assert config.memory_optim_enabled()
    lean = infer.create_predictor(config)
    assert lean._s.compiled.memory_optimize and not plain._s.compiled.memory_optimize
    assert "del v" in lean._s.compiled.source and "del v" not in plain._s.compiled.source
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    s = np.array([0.5, -1.0, 2.0], np.float32)
    for a, b in zip(plain.run([x, s]), lean.run([x, s])):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# ---------------------------------------------------------------- devices, threads, logs
def test_cpu_threads_apply_while_the_predictor_runs(mlp_file, monkeypatch):
    _native = pytest.importorskip("fw.core._native")
    if not _native.available:
        pytest.skip("native kernels are off")
    _, path = mlp_file
    config = infer.Config(path)
    assert config.cpu_math_library_num_threads() == 1
    with pytest.raises(InvalidArgumentError, match="must be >= 1"):
        config.set_cpu_math_library_num_threads(0)
    before = _native.get_num_threads()
    want = 1 if before != 1 else 2
    config.set_cpu_math_library_num_threads(want)
    assert config.cpu_math_library_num_threads() == want
    seen = []
    real = _native.set_num_threads
    monkeypatch.setattr(_native, "set_num_threads", lambda n: (seen.append(n), real(n)))
    predictor = infer.create_predictor(config)
    assert _native.get_num_threads() == before and not seen  # nothing global changed
    predictor.run([np.ones((2, 8), np.float32)])
    assert seen == [want, before]  # set for the run, restored after it
    assert _native.get_num_threads() == before


def test_mkldnn_switches_and_gpu(mlp_file):
    _, path = mlp_file
    config = infer.Config(path)
    config.enable_mkldnn()
    assert config.mkldnn_enabled()
    config.set_mkldnn_cache_capacity(10)
    with pytest.raises(InvalidArgumentError, match="capacity must be >= 0"):
        config.set_mkldnn_cache_capacity(-1)
    config.disable_mkldnn()
    assert not config.mkldnn_enabled()
    config.enable_mkldnn()
    with pytest.raises(UnsupportedError, match="enable_use_gpu"):
        config.enable_use_gpu(100, 0)
    assert not config.use_gpu() and config.gpu_device_id() == -1
    config.disable_gpu()
    infer.create_predictor(config)


def test_disable_glog_info(mlp_file, caplog):
    _, path = mlp_file
    config = infer.Config(path)
    with caplog.at_level(logging.INFO, logger="fw.inference"):
        infer.create_predictor(config)
    assert any("Running IR pass [fuse_matmul_bias_act]" in r.getMessage()
               for r in caplog.records)
    caplog.clear()
    config.disable_glog_info()
    assert config.glog_info_disabled()
    with caplog.at_level(logging.INFO, logger="fw.inference"):
        infer.create_predictor(config)
    assert not caplog.records


def test_summary(mlp_file):
    _, path = mlp_file
    config = infer.Config(path)
    config.enable_memory_optim()
    config.delete_pass("cse")
    text = config.summary()
    lines = text.splitlines()
    assert lines[0].startswith("+--") and len({len(ln) for ln in lines}) == 1
    assert f"| model_file            | {path}" in text
    assert "| memory_optim          | true" in text
    assert "| ir_passes             | fold_qdq" in text and "| constant_folding" in text \
        and "cse " not in text
    assert repr(config).startswith("Config(model=")
