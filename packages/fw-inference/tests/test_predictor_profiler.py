"""fw.profiler sees a Predictor's ops: the predictor runs its program through
``Compiled.bind_params`` (weights bound once), which ran around the profiler's recorder
before, so a profile of a deployment showed one ProfileStep and no op at all."""

import numpy as np

import fw
import fw.inference as infer
import fw.profiler as profiler
from fw.static import InputSpec


def test_profiler_records_a_predictors_ops(tmp_path):
    fw.seed(0)
    net = fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 4))
    path = fw.jit.save(net, str(tmp_path / "mlp"), input_spec=[InputSpec([None, 8], "float32")])
    config = infer.Config(path)
    config.disable_glog_info()
    p = infer.create_predictor(config)
    x = np.random.default_rng(0).standard_normal((3, 8)).astype("float32")
    want = p.run([x])[0].numpy()
    with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                           on_trace_ready=lambda prof: None) as prof:
        got = [p.run([x])[0].numpy() for _ in range(2)]
    ops = [e.name for e in prof.events if e.kind == "Operator"]
    names = [op.name for op in p.program.walk()]
    assert ops == names * 2, (ops, names)
    for g in got:
        np.testing.assert_array_equal(g, want)
    # and without a profiler the bound path answers as before
    np.testing.assert_array_equal(p.run([x])[0].numpy(), want)
