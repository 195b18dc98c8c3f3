"""Paddle Inference's bf16 switch on fw's Predictor: ``Config.enable_mkldnn_bfloat16()``
(and ``enable_onednn_bfloat16``), ``mkldnn_bfloat16_enabled()``, ``set_bfloat16_op``.

Off by default; on a native-bf16 CPU it inserts the ``cpu_bfloat16`` pass and the zoo's
BERT-style encoder and ResNet-18 run their products in bf16 (the per-op error bound is
checked in packages/fw-core/tests/test_cpu_bfloat16.py; here: whole networks within a
bf16-sized relative error of float32, everything else untouched); on a CPU without it
(simulated, and for real with oneDNN capped by ``ONEDNN_MAX_CPU_ISA``) it warns and stays
float32."""

import os
import subprocess
import sys

import numpy as np
import pytest

import fw
import fw.inference as infer
from fw.core import _native
from fw.core.ir.passes.cpu_bfloat16 import native_bf16

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

NATIVE = native_bf16()
needs_native = pytest.mark.skipif(not NATIVE, reason="this CPU has no native bf16 (AVX512_BF16 "
                                  "or AMX): the switch stays off, tested below")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    fw.seed(0)
    model = zoo.build(fw, "bert_encoder", layers=2, seq=32)
    spec = [fw.static.InputSpec([None, 32], "int64")]
    prefix = str(tmp_path_factory.mktemp("bert") / "bert")
    fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    return model, prefix


def _config(prefix, bf16, ops=None):
    config = infer.Config(prefix)
    config.disable_glog_info()
    config.set_cpu_math_library_num_threads(1)
    if ops is not None:
        config.set_bfloat16_op(ops)
    if bf16:
        config.enable_mkldnn_bfloat16()
    return config


def _types(predictor, name):
    return [str(op.results[0].type) for op in predictor.program.walk() if op.name == name]


def test_switch_off_by_default(encoder):
    config = infer.Config(encoder[1])
    assert config.mkldnn_bfloat16_enabled() is False
    assert "cpu_bfloat16" not in config.pass_builder().all_passes()
    p = infer.create_predictor(config)
    assert not any("bf16" in str(v.type) for op in p.program.walk() for v in op.results)
    assert "| mkldnn_bfloat16       | false" in config.summary()


@needs_native
def test_encoder_bf16_close_to_float32_and_only_products_converted(encoder):
    _, prefix = encoder
    config = _config(prefix, True)
    assert config.mkldnn_bfloat16_enabled()
    passes = config.pass_builder().all_passes()
    assert passes.count("cpu_bfloat16") == 1
    assert passes.index("cpu_bfloat16") == passes.index("fuse_elementwise") - 1
    config.enable_onednn_bfloat16()  # Paddle 3's name; inserting twice changes nothing
    assert config.pass_builder().all_passes() == passes
    p16 = infer.create_predictor(config)
    p32 = infer.create_predictor(_config(prefix, False))
    mm = _types(p16, "fused_matmul")
    assert len(mm) == 8 and all(t.startswith("bf16") for t in mm)
    # outside the set: attention, layer norm, softmax (fused), embedding stay float32
    for name in ("fused_attention", "layer_norm", "embedding"):
        assert _types(p16, name) and all(t.startswith("f32") for t in _types(p16, name))
    ids = np.random.default_rng(0).integers(0, zoo.BERT_VOCAB, (3, 32)).astype("int64")
    want = p32.run([ids])[0].numpy()
    _native.C.nn_clear_cache()  # conv/norm caches too: primitives of earlier tests
    _native.clear_cache()
    got = p16.run([ids])[0].numpy()
    assert got.dtype == np.float32 and got.shape == want.shape
    err = np.abs(got - want)
    # layer-normed outputs (|y| ~ 1): 2 layers of bf16 products (8 significant bits)
    assert 0 < err.max() < 0.1 and err.mean() < 0.01, (err.max(), err.mean())
    # the bf16 primitives are oneDNN's jit kernels, never its reference fallback
    impls = _native.primitive_impls()
    assert any("bf16" in i for i in impls["matmul"]), impls
    assert not [i for v in impls.values() for i in v if i.startswith("ref")], impls
    # clones share the converted weights and give the same answers
    np.testing.assert_array_equal(p16.clone().run([ids])[0].numpy(), got)


@needs_native
def test_set_bfloat16_op_picks_the_ops(encoder):
    _, prefix = encoder
    config = _config(prefix, True, ops={"conv2d"})  # no convolution in an encoder
    assert sorted(config.bfloat16_ops()) == ["conv", "fused_conv"]
    p = infer.create_predictor(config)
    assert all(t.startswith("f32") for t in _types(p, "fused_matmul"))
    p = infer.create_predictor(_config(prefix, True, ops=["matmul_v2"]))
    assert all(t.startswith("bf16") for t in _types(p, "fused_matmul"))
    with pytest.raises(TypeError, match="set_bfloat16_op"):
        infer.Config(prefix).set_bfloat16_op("conv2d")


@needs_native
def test_resnet_bf16_top1_and_values(tmp_path):
    fw.seed(0)
    model = zoo.build(fw, "resnet18", num_classes=10)
    prefix = str(tmp_path / "r18")
    fw.jit.save(fw.jit.to_static(model, input_spec=[fw.static.InputSpec([None, 3, 64, 64])]),
                prefix)
    p16 = infer.create_predictor(_config(prefix, True))
    p32 = infer.create_predictor(_config(prefix, False))
    convs = [op.results[0].type for op in p16.program.walk()
             if op.name in ("fused_conv", "conv")]
    # every conv, the 1x1 downsamples too (0.5M multiply-adds per image at 64x64, under
    # the pass's 2**20, but their input is bf16 already: 2**16 then)
    assert len(convs) == 20 and all(str(t).startswith("bf16") for t in convs), convs
    # one cast in (the stem's input); the block-end relus are fused cast -> relu -> cast
    # programs, the last one's result float32 for the pool and classifier
    assert _types(p16, "cast") == ["bf16[-1,64,64,3]"]
    assert _types(p16, "fused_elementwise") == ["bf16[-1,16,16,64]"] * 2 + [
        "bf16[-1,8,8,128]"] * 2 + ["bf16[-1,4,4,256]"] * 2 + ["bf16[-1,2,2,512]", "f32[-1,2,2,512]"]
    x = np.random.default_rng(1).standard_normal((2, 3, 64, 64)).astype("float32")
    want, got = p32.run([x])[0].numpy(), p16.run([x])[0].numpy()
    err = np.abs(got - want)
    assert 0 < err.max() <= 0.05 * np.abs(want).max(), (err.max(), np.abs(want).max())


def test_no_native_bf16_warns_and_stays_float32(encoder, monkeypatch):
    from fw.core.kernels.cpu import bf16

    monkeypatch.setattr(bf16, "cpu_isa", lambda: "avx512_core")
    config = infer.Config(encoder[1])
    with pytest.warns(RuntimeWarning, match="no native bfloat16"):
        config.enable_mkldnn_bfloat16()
    assert config.mkldnn_bfloat16_enabled() is False
    assert "cpu_bfloat16" not in config.pass_builder().all_passes()
    # the pass itself, named directly, checks too
    config.pass_builder().append_pass("cpu_bfloat16")
    p = infer.create_predictor(config)
    assert all(t.startswith("f32") for t in _types(p, "fused_matmul"))


@pytest.mark.skipif(_native.C is None, reason="needs the native extension")
def test_capped_onednn_isa_is_detected():
    """oneDNN's own ISA answer decides (not /proc/cpuinfo): capped at AVX2 by the
    documented ONEDNN_MAX_CPU_ISA, this CPU is not native-bf16 for the switch."""
    code = ("import warnings, fw.inference as infer\n"
            "from fw.core.ir.passes.cpu_bfloat16 import cpu_isa\n"
            "c = infer.Config()\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    c.enable_mkldnn_bfloat16()\n"
            "print(cpu_isa(), c.mkldnn_bfloat16_enabled(), len(w))\n")
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["avx2", "False", "1"], r.stdout
