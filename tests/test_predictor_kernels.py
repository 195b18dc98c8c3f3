"""What a Predictor runs for the deployment zoo (tests/zoo.py): every oneDNN primitive
it creates has an optimized implementation, its weights are prepacked once, and its
outputs equal eager's.

Why this test exists: the fused conv (+bias +ReLU +residual add) primitives that the
inference passes created once fell back to oneDNN's reference implementation
("ref:any", 100x slower: ResNet-18 took 6 s per image) and value-only tests passed.
A timing is not asserted here (never in tests); the *cause* of that slowness is.
"""

import os
import sys

import numpy as np
import pytest

import fw
import fw.inference as infer
from fw.core import _native

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

pytestmark = pytest.mark.skipif(not _native.available, reason="needs fw-core's native kernels")

# small spatial sizes keep the test fast; the layers (and their primitive kinds) are
# those of the full-size models
CASES = [("lenet", 2, None), ("resnet18", 1, 32), ("mobilenet_v2", 1, 32),
         ("bert_encoder", 1, None)]


def _predictor(tmp_path, name, x):
    fw.seed(0)
    model = zoo.build(fw, name)
    spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
    prefix = str(tmp_path / name)
    fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    config = infer.Config(prefix)
    config.disable_glog_info()
    with fw.no_grad():
        expected = model(x).numpy()
    return infer.create_predictor(config), expected


@pytest.mark.parametrize("name,batch,hw", CASES, ids=[c[0] for c in CASES])
def test_zoo_predictor_uses_no_reference_kernel(tmp_path, name, batch, hw):
    x = zoo.example_input(fw, name, batch=batch, hw=hw)
    predictor, expected = _predictor(tmp_path, name, x)
    _native.C.nn_clear_cache()
    _native.clear_cache()
    (out,) = predictor.run([x.numpy()])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    impls = _native.primitive_impls()
    assert sum(len(v) for v in impls.values()) > 0, "the predictor ran no oneDNN primitive"
    ref = {k: [i for i in v if i.startswith("ref")] for k, v in impls.items()}
    ref = {k: v for k, v in ref.items() if v}
    assert not ref, f"{name}: oneDNN reference (slow) implementations in use: {ref}"


def test_predictor_prepacks_conv_weights_once(tmp_path):
    x = zoo.example_input(fw, "resnet18", batch=1, hw=32)
    predictor, expected = _predictor(tmp_path, "resnet18", x)
    _native.C.nn_clear_cache()
    predictor.run([x.numpy()])
    packed = _native.C.nn_packed_constants()
    # every convolution whose weights the primitive wants in another layout holds them
    # reordered; a second run reuses them (no new packing) and gives the same result
    assert packed > 0
    (out,) = predictor.run([x.numpy()])
    assert _native.C.nn_packed_constants() == packed
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_frozen_stamp_follows_the_array_not_its_address():
    from fw.core.internal import freeze
    from fw.core.kernels.frozen import stamp

    a = np.arange(6, dtype=np.float32)
    s = freeze(a)
    assert s and stamp(a) == s and not a.flags.writeable
    assert freeze(a) == s  # idempotent
    # a view of a writeable array can still change through its base: not frozen
    base = np.zeros(4, np.float32)
    assert freeze(base[:2]) == 0
    # writing re-enabled by the owner: the promise is void
    b = np.ones(3, np.float32)
    freeze(b)
    b.flags.writeable = True
    assert stamp(b) == 0
    # a collected array's stamp is never reused by a new one
    del a
    c = np.arange(6, dtype=np.float32)
    assert stamp(c) == 0 and freeze(c) != s


def test_eager_weight_changes_are_seen(tmp_path):
    """Unfrozen weights (training) are reordered on every call: an in-place update
    shows up in the next result."""
    import fw.nn.functional as F

    x = fw.randn([1, 16, 8, 8])
    w = fw.randn([16, 16, 3, 3])
    with fw.no_grad():
        y1 = F.conv2d(x, w, padding=1).numpy()
        w.set_value(w.numpy() * 2)
        y2 = F.conv2d(x, w, padding=1).numpy()
    np.testing.assert_allclose(y2, 2 * y1, rtol=1e-4, atol=1e-4)


def test_mobilenet_v2_relu6_is_fused_into_its_convolutions(tmp_path):
    """ReLU6 is a row of the epilogue table (oneDNN eltwise_clip post-op): every
    conv + batch-norm + ReLU6 of MobileNetV2 is one fused_conv, and no ReLU6 runs as a
    standalone (NumPy) op, which took ~20% of a run before."""
    x = zoo.example_input(fw, "mobilenet_v2", batch=1, hw=32)
    predictor, expected = _predictor(tmp_path, "mobilenet_v2", x)
    names = [op.name for op in predictor.program.walk()]
    assert "relu6" not in names
    acts = [op.attrs["activation"] for op in predictor.program.walk() if op.name == "fused_conv"]
    assert acts.count("relu6") == 35
    (out,) = predictor.run([x.numpy()])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_mobilenet_v2_depthwise_convolutions_take_jit_dw(tmp_path):
    """oneDNN 3.2 lists brdgmm_dw first for a channel-last depthwise convolution; its
    jit_dw kernel for the same ISA was faster on every 3x3 shape measured (fw-core
    csrc/nn_conv.cpp, `prefer_jit_dw`), so the predictor's depthwise convolutions run
    jit_dw wherever the machine's oneDNN offers it (AVX-512: the reference VM), with the
    eager model's outputs; ``conv_set_prefer_jit_dw(False)`` gives oneDNN's first choice
    back (the asv with/without switch), with outputs equal within float rounding.
    (Run with fw's own depthwise kernel switched off: with it, oneDNN runs none of them;
    see the next test.)"""
    x = zoo.example_input(fw, "mobilenet_v2", batch=1, hw=32)
    predictor, expected = _predictor(tmp_path, "mobilenet_v2", x)
    assert _native.C.conv_prefer_jit_dw()
    outs, dws = [], []
    _native.C.conv_set_native_dw(False)
    try:
        for on in (True, False):
            _native.C.conv_set_prefer_jit_dw(on)
            _native.C.nn_clear_cache()
            _native.clear_cache()
            (out,) = predictor.run([x.numpy()])
            np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
            convs = _native.primitive_impls()["conv_fwd"]
            dw = [i for i in convs if "dw" in i]
            assert dw, f"no depthwise primitive among {convs}"
            outs.append(out.numpy())
            dws.append((dw, convs))
    finally:
        _native.C.conv_set_prefer_jit_dw(True)
        _native.C.conv_set_native_dw(True)
        _native.C.nn_clear_cache()
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    (dw_on, convs), (dw_off, _) = dws
    if any(i.endswith(":avx512_core") for i in convs):  # jit_dw:avx512_core exists there
        assert all(i == "jit_dw:avx512_core" for i in dw_on), dw_on
        assert any(i.startswith("brdgmm_dw") for i in dw_off), dw_off


def test_mobilenet_v2_stride_2_depthwise_convolutions_run_fws_own_kernel(tmp_path):
    """MobileNetV2's four stride-2 depthwise convolutions (3x3, pad 1, bias + ReLU6) run
    fw's own channel-last kernel (fw-core csrc/nn_dwconv.cpp) on this CPU's best ISA
    path, the 13 stride-1 ones oneDNN's (faster there); no oneDNN reference kernel
    either way. The outputs equal eager's, and oneDNN's for all 17 within float rounding
    (``conv_set_native_dw(False)``, the asv with/without switch)."""
    from fw.core.kernels.cpu import prepared

    x = zoo.example_input(fw, "mobilenet_v2", batch=1, hw=32)
    predictor, expected = _predictor(tmp_path, "mobilenet_v2", x)
    assert _native.C.conv_native_dw()
    dw_ops = [op for op in predictor.program.walk()
              if op.name == "fused_conv" and op.attrs["groups"] > 1]
    assert len(dw_ops) == 17
    _native.C.nn_clear_cache()
    _native.clear_cache()
    (out,) = predictor.run([x.numpy()])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    convs = _native.primitive_impls()["conv_fwd"]
    assert not [i for i in convs if i.startswith("ref")], convs
    # the prepared kernels' bound convolutions report the kernel they run
    best = _native.C.dwconv3x3_isas()[-1]
    impls = prepared.conv_plan_impls(predictor._s.compiled)
    assert len(impls) == 52 and all(not i.startswith("ref") for i in impls), impls
    assert impls.count(f"fw_dw3x3_nhwc:{best}") == 4, impls
    assert sum("dw" in i and not i.startswith("fw_") for i in impls) == 13, impls
    _native.C.conv_set_native_dw(False)
    try:
        (theirs,) = predictor.run([x.numpy()])
    finally:
        _native.C.conv_set_native_dw(True)
    np.testing.assert_allclose(out.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


_COUNT_REORDERS = r"""
import os, sys, tempfile
sys.path.insert(0, {tests!r})
import fw, fw.inference as infer, zoo
fw.seed(0)
model = zoo.build(fw, {name!r})
x = zoo.example_input(fw, {name!r}, batch=1, hw=32)
prefix = os.path.join(tempfile.mkdtemp(), "m")
fw.jit.save(fw.jit.to_static(model, input_spec=[fw.static.InputSpec([None, 3, 32, 32])]), prefix)
config = infer.Config(prefix)
config.disable_glog_info()
if {without!r}:
    config.pass_builder().delete_pass({without!r})
p = infer.create_predictor(config)
p.run([x.numpy()])
print("=== STEADY", flush=True)
p.run([x.numpy()])
print("=== END", flush=True)
"""


def _steady_reorders(name, without=None):
    """oneDNN reorder executions in a predictor's second run (ONEDNN_VERBOSE is read
    once per process, hence the subprocess; stdbuf keeps oneDNN's printf in order with
    the markers)."""
    import shutil
    import subprocess

    code = _COUNT_REORDERS.format(tests=os.path.dirname(os.path.abspath(__file__)),
                                  name=name, without=without)
    cmd = [sys.executable, "-c", code]
    if shutil.which("stdbuf"):
        cmd = ["stdbuf", "-oL", *cmd]
    env = {**os.environ, "ONEDNN_VERBOSE": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    steady = out.split("=== STEADY", 1)[1].split("=== END", 1)[0]
    execs = [ln for ln in steady.splitlines() if ln.startswith("onednn_verbose,exec,")]
    assert execs, "no oneDNN primitive ran"
    return sum(",reorder," in ln for ln in execs)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_activations_stay_channel_last_between_convolutions(name):
    """layout_nhwc: the convolutions read and write NHWC as it is, so a run reorders
    no activation (before the pass: one src and one dst reorder around every conv,
    ~110 per MobileNetV2 run); weights were prepacked in the first run."""
    assert _steady_reorders(name) == 0
    assert _steady_reorders(name, without="layout_nhwc") > 20


def test_clones_share_weights_and_prepacked_primitives(tmp_path):
    """clone() shares the weights (memory does not grow per clone: Python allocations
    per clone are a tiny fraction of the weight bytes) and the weights prepacked for
    the oneDNN primitives (clones running in threads pack nothing new), and clones
    give the eager result concurrently."""
    import threading
    import tracemalloc

    x = zoo.example_input(fw, "resnet18", batch=2, hw=32)
    base, expected = _predictor(tmp_path, "resnet18", x)
    weight_bytes = sum(v.type.numel() * 4 for v in base.program.block.args
                       if v.role != "input")
    assert weight_bytes > 10_000_000  # ResNet-18: ~11M float32 parameters
    base.run([np.ascontiguousarray(x.numpy()[:1])])  # the clones' shape: primitives made
    packed = _native.C.nn_packed_constants()
    tracemalloc.start()
    clones = [base.clone() for _ in range(8)]
    grown, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert grown < weight_bytes / 100, (grown, weight_bytes)
    errors, start = [], threading.Barrier(len(clones))

    def work(pr, k):
        xk = np.ascontiguousarray(x.numpy()[k % 2:k % 2 + 1])
        start.wait()
        try:
            for _ in range(3):
                (out,) = pr.run([xk])
                np.testing.assert_allclose(out.numpy(), expected[k % 2:k % 2 + 1],
                                           rtol=1e-4, atol=1e-4)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c, k)) for k, c in enumerate(clones)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert _native.C.nn_packed_constants() == packed


def test_disable_mkldnn_runs_the_reference_kernels(tmp_path):
    """Paddle's meaning: without MKLDNN the plain CPU kernels run (fw: the NumPy
    references), so no oneDNN primitive is created, and the result is the same."""
    x = zoo.example_input(fw, "resnet18", batch=1, hw=32)
    predictor, expected = _predictor(tmp_path, "resnet18", x)
    config = infer.Config(str(tmp_path / "resnet18"))
    config.disable_glog_info()
    config.disable_mkldnn()
    plain = infer.create_predictor(config)
    _native.C.nn_clear_cache()
    _native.clear_cache()
    (out,) = plain.run([x.numpy()])
    assert sum(len(v) for v in _native.primitive_impls().values()) == 0
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
    predictor.run([x.numpy()])
    assert sum(len(v) for v in _native.primitive_impls().values()) > 0
