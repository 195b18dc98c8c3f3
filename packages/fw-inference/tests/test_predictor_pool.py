"""PredictorPool: members share the weights, each has its own I/O, bad arguments named."""

import threading

import numpy as np
import pytest

import fw.inference as infer
from fw.core.errors import InvalidArgumentError, InvalidTypeError


def _run(pred, x):
    h = pred.get_input_handle(pred.get_input_names()[0])
    h.copy_from_cpu(x)
    pred.run()
    return pred.get_output_handle(pred.get_output_names()[0]).copy_to_cpu()


def test_pool_members_agree_and_run_concurrently(mlp_file):
    _, path = mlp_file
    pool = infer.PredictorPool(infer.Config(str(path)), 3)
    assert len(pool) == 3
    members = [pool.retrieve(i) for i in range(3)]
    assert len({id(m) for m in members}) == 3
    ref = infer.create_predictor(infer.Config(str(path)))
    shape = [2 if d == -1 else d for d in ref.get_input_handle(
        ref.get_input_names()[0]).shape()]
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(shape).astype("float32") for _ in range(3)]
    want = [_run(ref, x) for x in xs]
    got, errors = [None] * 3, []

    def work(i):
        try:
            for _ in range(20):
                got[i] = _run(members[i], xs[i])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in threads)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_pool_arguments_are_checked(mlp_file):
    _, path = mlp_file
    with pytest.raises(InvalidTypeError, match="PredictorPool: 'config'"):
        infer.PredictorPool(str(path), 2)
    with pytest.raises(InvalidArgumentError, match="'size'"):
        infer.PredictorPool(infer.Config(str(path)), 0)
    pool = infer.PredictorPool(infer.Config(str(path)), 2)
    with pytest.raises(InvalidArgumentError, match=r"retrieve: 'idx' must be an int in \[0, 2\)"):
        pool.retrieve(2)
