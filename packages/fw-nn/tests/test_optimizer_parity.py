"""NAdam, RAdam, Rprop and LBFGS: trajectories against PyTorch's (a committed fixture,
fixtures/optimizer_torch.json, made by gen_optimizer_fixture.py), the update ops against
Paddle's formulas written out here, state_dict names, and argument errors."""

import json
import math
import pathlib

import numpy as np
import pytest

import fw

FIX = json.loads((pathlib.Path(__file__).parent / "fixtures" / "optimizer_torch.json")
                 .read_text())


def _params(prob):
    w = fw.create_parameter([5], "float64")
    b = fw.create_parameter([1], "float64")
    w.set_value(np.array(prob["w0"]))
    b.set_value(np.array(prob["b0"]))
    return w, b


def _fw_opt(name, cfg, params):
    if name == "nadam":
        b1, b2 = cfg.get("betas", (0.9, 0.999))
        return fw.optimizer.NAdam(learning_rate=cfg["lr"], beta1=b1, beta2=b2,
                                  epsilon=cfg.get("eps", 1e-8),
                                  momentum_decay=cfg.get("momentum_decay", 0.004),
                                  parameters=params)
    if name == "radam":
        b1, b2 = cfg.get("betas", (0.9, 0.999))
        return fw.optimizer.RAdam(learning_rate=cfg["lr"], beta1=b1, beta2=b2,
                                  epsilon=cfg.get("eps", 1e-8), parameters=params)
    return fw.optimizer.Rprop(learning_rate=cfg["lr"],
                              learning_rate_range=tuple(cfg.get("step_sizes", (1e-6, 50))),
                              etas=tuple(cfg.get("etas", (0.5, 1.2))), parameters=params)


RUNS = [r for r in FIX["runs"] if r["opt"] != "lbfgs"]


@pytest.mark.parametrize("run", RUNS, ids=[f"{r['opt']}-{i}" for i, r in enumerate(RUNS)])
def test_matches_torch_trajectory(run):
    prob = FIX["problem"]
    A, y = fw.to_tensor(np.array(prob["A"])), fw.to_tensor(np.array(prob["y"]))
    w, b = _params(prob)
    opt = _fw_opt(run["opt"], run["cfg"], [w, b])
    for k, want in enumerate(run["trajectory"]):
        loss = ((fw.matmul(A, w) + b - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        got = np.concatenate([w.numpy(), b.numpy()])
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11,
                                   err_msg=f"{run['opt']} step {k + 1}")


LB = [r for r in FIX["runs"] if r["opt"] == "lbfgs"]


@pytest.mark.parametrize("run", LB, ids=[f"lbfgs-{i}" for i in range(len(LB))])
def test_lbfgs_matches_torch(run):
    x = fw.create_parameter([2], "float64")
    x.set_value(np.array([-1.2, 1.0]))
    cfg = run["cfg"]
    opt = fw.optimizer.LBFGS(learning_rate=cfg["lr"], max_iter=cfg["max_iter"],
                             history_size=cfg["history_size"],
                             line_search_fn=cfg.get("line_search_fn"), parameters=[x])

    def closure():
        opt.clear_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    for k, (want_x, want_loss) in enumerate(zip(run["trajectory"], run["losses"])):
        got_loss = float(opt.step(closure))
        assert got_loss == pytest.approx(want_loss, rel=1e-8, abs=1e-12), f"step {k + 1}"
        np.testing.assert_allclose(x.numpy(), want_x, rtol=1e-7, atol=1e-10,
                                   err_msg=f"step {k + 1}")
    assert opt.state["func_evals"] == run["func_evals"]
    assert opt.state["n_iter"] == run["n_iter"]


def test_lbfgs_float32_quadratic_converges():
    w = fw.create_parameter([3], "float32")
    target = fw.to_tensor([1.0, -2.0, 0.5])
    opt = fw.optimizer.LBFGS(parameters=[w], line_search_fn="strong_wolfe")

    def closure():
        opt.clear_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(w.numpy(), target.numpy(), atol=1e-5)
    sd = opt.state_dict()["state"]
    assert sd["n_iter"] >= 1 and isinstance(sd["d"], fw.Tensor)


def test_lbfgs_errors():
    w = fw.create_parameter([2], "float32")
    with pytest.raises(ValueError, match="line_search_fn"):
        fw.optimizer.LBFGS(parameters=[w], line_search_fn="armijo")
    opt = fw.optimizer.LBFGS(parameters=[w])
    with pytest.raises(TypeError, match="closure"):
        opt.step(None)
    with pytest.raises(NotImplementedError, match="closure"):
        opt.minimize(w.sum())


# ---------------------------------------------------------------- Paddle's formulas
def _nadam_paddle(p, g, m, v, t, lr, b1=0.9, b2=0.999, eps=1e-8, psi=0.004):
    """Paddle's NAdam docstring, with an explicit step count t (1-based)."""
    mu = lambda k: b1 * (1 - 0.5 * 0.96 ** (k * psi))  # noqa: E731
    prod_t = math.prod(mu(k) for k in range(1, t + 1))
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = mu(t + 1) * m / (1 - prod_t * mu(t + 1)) + (1 - mu(t)) * g / (1 - prod_t)
    v_hat = v / (1 - b2 ** t)
    return p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def _radam_paddle(p, g, m, v, t, lr, b1=0.9, b2=0.999, eps=1e-8):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = m / (1 - b1 ** t)
    rinf = 2 / (1 - b2) - 1
    rho = rinf - 2 * t * b2 ** t / (1 - b2 ** t)
    if rho > 5:
        lt = math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        rt = math.sqrt((rho - 4) * (rho - 2) * rinf / ((rinf - 4) * (rinf - 2) * rho))
        return p - lr * m_hat * rt * lt, m, v
    return p - lr * m_hat, m, v


@pytest.mark.parametrize("name", ["nadam", "radam"])
def test_update_matches_paddle_formula(name):
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(7)
    w = fw.create_parameter([7], "float64")
    w.set_value(p0)
    cls = fw.optimizer.NAdam if name == "nadam" else fw.optimizer.RAdam
    opt = cls(learning_rate=0.01, parameters=[w])
    ref = _nadam_paddle if name == "nadam" else _radam_paddle
    p, m, v = p0.copy(), np.zeros(7), np.zeros(7)
    for t in range(1, 9):  # RAdam switches to the rectified step at t = 6 (rho_t > 5)
        g = rng.standard_normal(7)
        w.grad = fw.to_tensor(g)
        opt.step()
        p, m, v = ref(p, g, m, v, t, 0.01)
        np.testing.assert_allclose(w.numpy(), p, rtol=1e-12, atol=1e-14, err_msg=f"t={t}")


def test_state_dict_names_follow_paddle():
    lin = fw.nn.Linear(2, 2)
    for cls, names in ((fw.optimizer.NAdam, ["momentum_decay_pow", "beta2_pow", "mu_product",
                                             "moment1", "moment2"]),
                       (fw.optimizer.RAdam, ["beta1_pow", "beta2_pow", "rho", "moment1",
                                             "moment2"]),
                       (fw.optimizer.Rprop, ["prevs", "learning_rates"])):
        opt = cls(parameters=lin.parameters())
        lin(fw.ones([1, 2])).sum().backward()
        opt.step()
        keys = opt.state_dict().keys()
        for n in names:
            assert f"{lin.weight.name}_{n}_0" in keys, (cls.__name__, n, list(keys))
        opt.clear_grad()


def test_radam_rho_accumulator_matches_paddle():
    # Paddle 3.3.1 after 1 and 2 steps (beta2=0.999): rho = t b2^t / (1 - b2^t)
    w = fw.create_parameter([1], "float64")
    opt = fw.optimizer.RAdam(parameters=[w])
    for _t, want in ((1, 999.0), (2, 2 * 0.999 ** 2 / (1 - 0.999 ** 2))):
        w.grad = fw.to_tensor([0.5])
        opt.step()
        rho = opt.state_dict()[f"{w.name}_rho_0"]
        assert float(rho) == pytest.approx(want, rel=1e-9)


def test_rprop_learning_rates_bounded_and_sign_flip_skips():
    w = fw.create_parameter([2], "float64")
    w.set_value(np.zeros(2))
    opt = fw.optimizer.Rprop(learning_rate=0.1, learning_rate_range=(0.01, 0.15),
                             parameters=[w])
    for g, want in (([1.0, -1.0], [-0.1, 0.1]),      # first step: -sign(g) * 0.1
                    ([1.0, 1.0], [-0.22, 0.1]),       # same sign: 0.12; flip: rate 0.05, skip
                    ([1.0, 1.0], [-0.364, 0.05]),     # 0.144; after a skip: plain step
                    ([1.0, 1.0], [-0.514, -0.01])):   # 0.1728 capped at 0.15; 0.06
        w.grad = fw.to_tensor(np.array(g))
        opt.step()
        np.testing.assert_allclose(w.numpy(), want, atol=1e-12)


@pytest.mark.parametrize("bad, match", [
    (lambda ps: fw.optimizer.NAdam(beta1=1.0, parameters=ps), "beta1"),
    (lambda ps: fw.optimizer.NAdam(momentum_decay=-1.0, parameters=ps), "momentum_decay"),
    (lambda ps: fw.optimizer.RAdam(epsilon=-1.0, parameters=ps), "epsilon"),
    (lambda ps: fw.optimizer.Rprop(learning_rate=100.0, parameters=ps), "learning_rate"),
    (lambda ps: fw.optimizer.Rprop(etas=(1.5, 1.2), parameters=ps), "etas"),
])
def test_bad_arguments(bad, match):
    with pytest.raises(ValueError, match=match):
        bad([fw.create_parameter([2], "float32")])
