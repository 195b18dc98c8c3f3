"""``Config.enable_memory_optim()`` on the deployment zoo (tests/zoo.py), the setting
asv_bench/deploy_side_by_side.py measures the Predictor with: outputs bit for bit those of
the predictor without it, at several batch sizes; an output a caller holds is never a
buffer a later run writes into; clones run from threads with the right answers."""

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import fw
import fw.inference as infer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

# small spatial sizes keep it fast; the layers are those of the full-size models
CASES = [("lenet", None), ("resnet18", 32), ("mobilenet_v2", 32), ("bert_encoder", None)]


def _predictors(tmp_path, name, x):
    fw.seed(0)
    model = zoo.build(fw, name)
    spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
    prefix = str(tmp_path / name)
    fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    out = []
    for memory_optim in (False, True):
        config = infer.Config(prefix)
        config.disable_glog_info()
        config.set_cpu_math_library_num_threads(1)
        config.enable_memory_optim(memory_optim)
        out.append(infer.create_predictor(config))
    return out


@pytest.mark.parametrize("name,hw", CASES, ids=[c[0] for c in CASES])
def test_memory_optim_predictor_equals_plain_and_keeps_held_outputs(tmp_path, name, hw):
    plain, lean = _predictors(tmp_path, name, zoo.example_input(fw, name, batch=1, hw=hw))
    assert lean._s.compiled.memory_optimize and not plain._s.compiled.memory_optimize
    held = []
    for batch in (1, 3, 1, 2):
        x = zoo.example_input(fw, name, batch=batch, hw=hw, seed=batch).numpy()
        (a,) = plain.run([x])
        (b,) = lean.run([x])
        np.testing.assert_array_equal(b.numpy(), a.numpy())
        held.append((b, a.numpy().copy()))
    # the later runs reused dead intermediates, never an output handed out before
    for b, want in held:
        np.testing.assert_array_equal(b.numpy(), want)


def test_memory_optim_clones_run_from_threads(tmp_path):
    x = zoo.example_input(fw, "mobilenet_v2", batch=1, hw=32)
    plain, lean = _predictors(tmp_path, "mobilenet_v2", x)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((b, 3, 32, 32)).astype(np.float32) for b in (1, 2, 1, 3)]
    want = [plain.run([v])[0].numpy() for v in xs]

    def work(i):
        c = lean.clone()
        return [c.run([v])[0].numpy() for v in xs[i:] + xs[:i]]

    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(work, range(3), timeout=120))
    for i, got in enumerate(results):
        for g, w in zip(got, want[i:] + want[:i]):
            np.testing.assert_array_equal(g, w)
