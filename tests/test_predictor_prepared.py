"""The Predictor's steady path on the deployment zoo (tests/zoo.py): prepared kernels
(``Config.switch_prepared_kernels``, on by default) with the NaN/Inf checks on the inputs
(``switch_nonfinite_checks(False)``, the default) give the outputs of the op table's
kernels bit for bit, at two batch sizes and on non-finite input (but for a batch-1
classifier's one-row product: NumPy's GEMV there, equal within 1e-5), and both equal
eager."""

import os
import sys

import numpy as np
import pytest

import fw
import fw.inference as infer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

# small spatial sizes keep it fast; the layers are those of the full-size models
CASES = [("lenet", None), ("resnet18", 32), ("mobilenet_v2", 32), ("bert_encoder", None)]
#: models whose batch-1 classifier is a one-row product above the NumPy/oneDNN crossover
GEMV_CLASSIFIER = {"resnet18", "mobilenet_v2"}


def _predictors(tmp_path, name, x):
    fw.seed(0)
    model = zoo.build(fw, name)
    spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
    prefix = str(tmp_path / name)
    fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    out = []
    for prepared in (False, True):
        config = infer.Config(prefix)
        config.disable_glog_info()
        config.set_cpu_math_library_num_threads(1)
        config.switch_prepared_kernels(prepared)
        assert config.prepared_kernels_enabled() is prepared
        out.append(infer.create_predictor(config))
    return model, out


@pytest.mark.parametrize("name,hw", CASES, ids=[c[0] for c in CASES])
def test_prepared_predictor_equals_table_kernels_and_eager(tmp_path, name, hw):
    x1 = zoo.example_input(fw, name, batch=1, hw=hw)
    model, (plain, prep) = _predictors(tmp_path, name, x1)
    assert prep._s.compiled.source != plain._s.compiled.source
    # the zoo is finite-preserving ops throughout: its fused ops run without per-call
    # NaN/Inf scans (the inputs are checked instead; see the non-finite test below)
    assert prep._s.compiled._unchecked and not plain._s.compiled._unchecked
    for batch in (1, 3, 1):
        x = zoo.example_input(fw, name, batch=batch, hw=hw, seed=batch)
        (a,) = plain.run([x.numpy()])
        (b,) = prep.run([x.numpy()])
        if batch == 1 and name in GEMV_CLASSIFIER:
            # one row against the classifier's large weight: the prepared kernel runs
            # NumPy's GEMV, the table kernel oneDNN's matmul (prepared.py says why);
            # the sums differ in order only
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(b.numpy(), a.numpy())
        with fw.no_grad():
            expected = model(x).numpy()
        np.testing.assert_allclose(b.numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,hw", CASES[:3], ids=[c[0] for c in CASES[:3]])
def test_prepared_predictor_keeps_the_nonfinite_rule(tmp_path, name, hw):
    x = zoo.example_input(fw, name, batch=2, hw=hw).numpy().copy()
    _, (plain, prep) = _predictors(tmp_path, name, fw.to_tensor(x))
    x[0, 0, 1, 1], x[1, -1, 2, 3] = np.nan, np.inf
    (a,) = plain.run([x])
    (b,) = prep.run([x])
    assert not np.isfinite(a.numpy()).all()
    np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_prepared_predictor_clones_run_from_threads(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    x = zoo.example_input(fw, "lenet", batch=2)
    _, (plain, prep) = _predictors(tmp_path, "lenet", x)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((b, 1, 28, 28)).astype(np.float32) for b in (1, 2, 5, 1, 3, 2)]
    want = [plain.run([v])[0].numpy() for v in xs]

    def work(i):
        c = prep.clone()
        return [c.run([v])[0].numpy() for v in xs[i:] + xs[:i]]

    with ThreadPoolExecutor(3) as ex:
        got = list(ex.map(work, range(3), timeout=120))
    for i, outs in enumerate(got):
        for o, w in zip(outs, want[i:] + want[:i]):
            np.testing.assert_array_equal(o, w)


def test_one_row_products_take_numpy_gemv_on_the_unchecked_path():
    """The prepared fused_matmul of a one-row input against a large constant weight
    computes NumPy's ``x @ W + b`` (bit for bit); with per-op checks (``checked``) it
    keeps the table kernel's oneDNN call."""
    from fw.core.ir import TensorType, trace
    from fw.core.ir.passes import PassManager
    from fw.core.kernels.cpu.prepared import prepare
    from fw.core.ops import call

    rng = np.random.default_rng(0)
    w = fw.to_tensor(rng.standard_normal((640, 500)).astype("float32"))
    b = fw.to_tensor(rng.standard_normal(500).astype("float32"))
    for t in (w, b):
        t.persistable = True
    p = trace(lambda x: call("linear", x, w, b), [TensorType([-1, 640], "float32")], ["x"])
    PassManager(["fuse_matmul_bias_act"]).run(p)
    (op,) = [o for o in p.walk() if o.name == "fused_matmul"]
    kernel = op.opdef.kernels["cpu"]
    x = rng.standard_normal((1, 640)).astype("float32")
    wn, bn = w.numpy(), b.numpy()
    fast = prepare(op, kernel, checked=False)
    np.testing.assert_array_equal(fast(x, wn, bn), np.matmul(x, wn) + bn)
    table = kernel(x, wn, bn, None, **dict(op.attrs))
    checked = prepare(op, kernel, checked=True)
    if checked is not None:
        np.testing.assert_array_equal(checked(x, wn, bn), table)
    # 640 terms of magnitude ~1 per output: float32 rounding of either sum order is
    # ~640 * 6e-8 * (sum of |terms|) ~ 1e-3 at worst; they agree far better
    np.testing.assert_allclose(fast(x, wn, bn), table, rtol=1e-5, atol=2e-4)
    x3 = rng.standard_normal((3, 640)).astype("float32")  # more rows: the table's call
    np.testing.assert_array_equal(fast(x3, wn, bn), kernel(x3, wn, bn, None, **dict(op.attrs)))
