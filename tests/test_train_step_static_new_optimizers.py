"""Cross-package property for NAdam, RAdam and Rprop: a training step converted with
fw.jit.to_static (the update ops built as IR through `Optimizer.update_plan`) gives
the eager step's loss and parameters (test_train_step_static.py does the same for
SGD/Momentum/Adam/AdamW on drawn models)."""

import copy

import numpy as np
import pytest

import fw

OPTIMIZERS = {
    "nadam": lambda ps: fw.optimizer.NAdam(0.01, parameters=ps),
    "radam": lambda ps: fw.optimizer.RAdam(0.01, parameters=ps),
    "rprop": lambda ps: fw.optimizer.Rprop(0.01, parameters=ps),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_static_train_step_equals_eager(name):
    fw.seed(0)
    a = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 3))
    b = copy.deepcopy(a)
    oa, ob = OPTIMIZERS[name](a.parameters()), OPTIMIZERS[name](b.parameters())

    def step(m, o):
        def f(x, y):
            loss = fw.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            o.clear_grad()
            return loss
        return f

    eager, static = step(a, oa), fw.jit.to_static(step(b, ob))
    rng = np.random.RandomState(0)
    for k in range(8):  # RAdam's rectified branch starts at step 6
        x = fw.to_tensor(rng.randn(5, 4).astype("float32"))
        y = fw.to_tensor(rng.randint(0, 3, 5))
        np.testing.assert_allclose(float(static(x, y)), float(eager(x, y)), rtol=1e-6)
        for (n, p), q in zip(a.named_parameters(), b.parameters()):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-6, atol=1e-7,
                                       err_msg=f"{name}: {n} after step {k}")
