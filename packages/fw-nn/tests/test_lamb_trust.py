"""LAMB's trust ratio (You et al., 2019, "Large Batch Optimization for Deep Learning"):
||w|| / ||r|| per parameter, and 1 where either norm is 0 (a parameter still at zero,
or an update of zero). fw's Lamb updates all parameters of a group in one flat
buffer, one segment each: checked here against the formula written out per
parameter, with zero parameters first, in the middle and last of the buffer."""

import numpy as np
import pytest

import fw


def _lamb_step(p, g, m, v, t, lr, beta1, beta2, eps, wd):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    r = (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps) + wd * p
    pn, rn = np.linalg.norm(p), np.linalg.norm(r)
    trust = pn / rn if pn > 0 and rn > 0 else 1.0
    return p - lr * trust * r, m, v


@pytest.mark.parametrize("zero_at", [0, 1, 2, None])
@pytest.mark.parametrize("wd,always_adapt", [(0.01, False), (0.0, True), (0.0, False)])
def test_lamb_trust_ratio_per_parameter(zero_at, wd, always_adapt):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,), (2, 2)]
    init = [rng.standard_normal(s).astype(np.float64) for s in shapes]
    if zero_at is not None:
        init[zero_at][...] = 0.0
    params = [fw.create_parameter(list(s), "float64") for s in shapes]
    for prm, a in zip(params, init):
        prm.set_value(fw.to_tensor(a))
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-6
    opt = fw.optimizer.Lamb(lr, lamb_weight_decay=wd, beta1=b1, beta2=b2, epsilon=eps,
                            parameters=params, always_adapt=always_adapt)
    want = [a.copy() for a in init]
    ms = [np.zeros_like(a) for a in init]
    vs = [np.zeros_like(a) for a in init]
    for t in range(1, 4):
        grads = [rng.standard_normal(a.shape) for a in init]
        if t == 2 and zero_at is not None:
            grads[zero_at][...] = 0.0  # a zero update too (rn may be 0 without decay)
        for prm, gr in zip(params, grads):
            prm.grad = fw.to_tensor(gr)
        opt.step()
        opt.clear_grad()
        for k in range(len(init)):
            adapt = wd > 0 or always_adapt
            w, ms[k], vs[k] = _lamb_step(want[k], grads[k], ms[k], vs[k], t, lr, b1, b2, eps,
                                         wd)
            if not adapt:  # no trust ratio at all: the plain Adam-like step with decay
                m_hat = ms[k] / (1 - b1 ** t)
                v_hat = vs[k] / (1 - b2 ** t)
                w = want[k] - lr * (m_hat / (np.sqrt(v_hat) + eps) + wd * want[k])
            want[k] = w
        for k, prm in enumerate(params):
            np.testing.assert_allclose(prm.numpy(), want[k], rtol=1e-10, atol=1e-12,
                                       err_msg=f"parameter {k} after step {t}")
