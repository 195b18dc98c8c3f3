"""fw.optimizer: every optimizer against a NumPy textbook implementation over several
steps, and the machinery around the fused flat-buffer update (groups, multipliers,
regularizers, clipping, master weights, missing gradients, state dicts, repacking)."""

import math

import numpy as np
import pytest

import fw
from fw.nn import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue, Parameter
from fw.optimizer import lr as lrs
from fw.regularizer import L1Decay, L2Decay

SHAPES = [(3, 4), (4,), (2, 2, 2)]


def make_params(seed=0, shapes=SHAPES, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [Parameter(rng.standard_normal(s).astype(dtype), name=f"p{seed}_{i}")
            for i, s in enumerate(shapes)]


def grads_for(step, shapes=SHAPES, seed=100):
    rng = np.random.default_rng(seed + step)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def run(opt, params, steps=5, shapes=SHAPES, skip=None):
    for t in range(steps):
        for i, (p, g) in enumerate(zip(params, grads_for(t, shapes))):
            p.grad = None if skip and (t, i) in skip else fw.to_tensor(g)
        opt.step()
        opt.clear_grad(set_to_zero=False)
    return [p.numpy().astype(np.float64) for p in params]


# ---------------------------------------------------------------- textbook updates
def tb_sgd(ps, gs_steps, lr=0.1, wd=0.0):
    ps = [p.copy() for p in ps]
    for gs in gs_steps:
        for p, g in zip(ps, gs):
            p -= lr * (g + wd * p)
    return ps


def tb_momentum(ps, gs_steps, lr=0.1, mu=0.9, nesterov=False, wd=0.0):
    ps = [p.copy() for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    for gs in gs_steps:
        for i, g in enumerate(gs):
            g = g + wd * ps[i]
            vs[i] = mu * vs[i] + g
            ps[i] -= lr * (g + mu * vs[i] if nesterov else vs[i])
    return ps


def tb_adam(ps, gs_steps, lr=0.01, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=0.0,
            amsgrad=False):
    ps = [p.copy() for p in ps]
    ms = [np.zeros_like(p) for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    vm = [np.zeros_like(p) for p in ps]
    for t, gs in enumerate(gs_steps, 1):
        for i, g in enumerate(gs):
            ps[i] = ps[i] * (1 - lr * decoupled)
            g = g + wd * ps[i]
            ms[i] = b1 * ms[i] + (1 - b1) * g
            vs[i] = b2 * vs[i] + (1 - b2) * g * g
            vm[i] = np.maximum(vm[i], vs[i])
            v = vm[i] if amsgrad else vs[i]
            ps[i] -= lr * (ms[i] / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return ps


def tb_adamax(ps, gs_steps, lr=0.01, b1=0.9, b2=0.999, eps=1e-8):
    ps = [p.copy() for p in ps]
    ms = [np.zeros_like(p) for p in ps]
    us = [np.zeros_like(p) for p in ps]
    for t, gs in enumerate(gs_steps, 1):
        for i, g in enumerate(gs):
            ms[i] = b1 * ms[i] + (1 - b1) * g
            us[i] = np.maximum(b2 * us[i] + eps, np.abs(g))
            ps[i] -= lr / (1 - b1 ** t) * ms[i] / us[i]
    return ps


def tb_adagrad(ps, gs_steps, lr=0.1, eps=1e-6, init=0.0):
    ps = [p.copy() for p in ps]
    Gs = [np.full_like(p, init) for p in ps]
    for gs in gs_steps:
        for i, g in enumerate(gs):
            Gs[i] += g * g
            ps[i] -= lr * g / (np.sqrt(Gs[i]) + eps)
    return ps


def tb_adadelta(ps, gs_steps, lr=1.0, rho=0.95, eps=1e-6):
    ps = [p.copy() for p in ps]
    eg = [np.zeros_like(p) for p in ps]
    ed = [np.zeros_like(p) for p in ps]
    for gs in gs_steps:
        for i, g in enumerate(gs):
            eg[i] = rho * eg[i] + (1 - rho) * g * g
            d = -np.sqrt(ed[i] + eps) / np.sqrt(eg[i] + eps) * g
            ed[i] = rho * ed[i] + (1 - rho) * d * d
            ps[i] += lr * d
    return ps


def tb_rmsprop(ps, gs_steps, lr=0.01, rho=0.95, eps=1e-6, mom=0.0, centered=False):
    ps = [p.copy() for p in ps]
    ms = [np.zeros_like(p) for p in ps]
    mg = [np.zeros_like(p) for p in ps]
    mo = [np.zeros_like(p) for p in ps]
    for gs in gs_steps:
        for i, g in enumerate(gs):
            ms[i] = rho * ms[i] + (1 - rho) * g * g
            mg[i] = rho * mg[i] + (1 - rho) * g
            var = ms[i] - mg[i] ** 2 if centered else ms[i]
            mo[i] = mom * mo[i] + lr * g / np.sqrt(var + eps)
            ps[i] -= mo[i]
    return ps


def tb_lamb(ps, gs_steps, lr=0.01, wd=0.01, b1=0.9, b2=0.999, eps=1e-6, excluded=()):
    ps = [p.copy() for p in ps]
    ms = [np.zeros_like(p) for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    for t, gs in enumerate(gs_steps, 1):
        for i, g in enumerate(gs):
            w = 0.0 if i in excluded else wd
            ms[i] = b1 * ms[i] + (1 - b1) * g
            vs[i] = b2 * vs[i] + (1 - b2) * g * g
            r = (ms[i] / (1 - b1 ** t)) / (np.sqrt(vs[i] / (1 - b2 ** t)) + eps) + w * ps[i]
            pn, rn = np.linalg.norm(ps[i]), np.linalg.norm(r)
            trust = pn / rn if w > 0 and pn > 0 and rn > 0 else 1.0
            ps[i] -= lr * trust * r
    return ps


def tb_asgd(ps, gs_steps, lr=0.1, n=3):
    ps = [p.copy() for p in ps]
    hist = [[] for _ in ps]
    for m, gs in enumerate(gs_steps):
        for i, g in enumerate(gs):
            hist[i].append(g)
            window = hist[i][-n:]
            ps[i] -= lr * np.sum(window, axis=0) / min(m + 1, n)
    return ps


CASES = {
    "sgd": (lambda ps: fw.optimizer.SGD(0.1, parameters=ps), lambda p, g: tb_sgd(p, g)),
    "sgd_wd": (lambda ps: fw.optimizer.SGD(0.1, parameters=ps, weight_decay=0.05),
               lambda p, g: tb_sgd(p, g, wd=0.05)),
    "momentum": (lambda ps: fw.optimizer.Momentum(0.1, 0.9, parameters=ps),
                 lambda p, g: tb_momentum(p, g)),
    "nesterov_l2": (lambda ps: fw.optimizer.Momentum(0.1, 0.8, parameters=ps, use_nesterov=True,
                                                     weight_decay=0.01),
                    lambda p, g: tb_momentum(p, g, mu=0.8, nesterov=True, wd=0.01)),
    "adam": (lambda ps: fw.optimizer.Adam(0.01, parameters=ps), lambda p, g: tb_adam(p, g)),
    "adam_l2": (lambda ps: fw.optimizer.Adam(0.01, parameters=ps, weight_decay=L2Decay(0.1)),
                lambda p, g: tb_adam(p, g, wd=0.1)),
    "amsgrad": (lambda ps: fw.optimizer.Adam(0.01, 0.8, 0.9, parameters=ps, amsgrad=True),
                lambda p, g: tb_adam(p, g, b1=0.8, b2=0.9, amsgrad=True)),
    "adamw": (lambda ps: fw.optimizer.AdamW(0.01, parameters=ps, weight_decay=0.1),
              lambda p, g: tb_adam(p, g, decoupled=0.1)),
    "adamax": (lambda ps: fw.optimizer.Adamax(0.01, parameters=ps), lambda p, g: tb_adamax(p, g)),
    "adagrad": (lambda ps: fw.optimizer.Adagrad(0.1, parameters=ps,
                                                initial_accumulator_value=0.1),
                lambda p, g: tb_adagrad(p, g, init=0.1)),
    "adadelta": (lambda ps: fw.optimizer.Adadelta(1.0, parameters=ps),
                 lambda p, g: tb_adadelta(p, g)),
    "rmsprop": (lambda ps: fw.optimizer.RMSProp(0.01, parameters=ps, momentum=0.5),
                lambda p, g: tb_rmsprop(p, g, mom=0.5)),
    "rmsprop_centered": (lambda ps: fw.optimizer.RMSProp(0.01, parameters=ps, centered=True),
                         lambda p, g: tb_rmsprop(p, g, centered=True)),
    "lamb": (lambda ps: fw.optimizer.Lamb(0.01, parameters=ps), lambda p, g: tb_lamb(p, g)),
    "asgd": (lambda ps: fw.optimizer.ASGD(0.1, batch_num=3, parameters=ps),
             lambda p, g: tb_asgd(p, g)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_optimizer_matches_textbook_over_steps(case):
    make, textbook = CASES[case]
    ps = make_params()
    start = [p.numpy().astype(np.float64) for p in ps]
    got = run(make(ps), ps, steps=5)
    want = textbook(start, [[g.astype(np.float64) for g in grads_for(t)] for t in range(5)])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6, err_msg=case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_update_equals_per_parameter_op_calls(case):
    """The flat-buffer update equals calling the update op on each parameter."""
    make, _ = CASES[case]
    ps = make_params(1)
    ref = make_params(1)
    opt = make(ps)
    ref_opt = make(ref)
    states = [ref_opt._init_state(p) for p in ref]
    for t in range(3):
        gs = grads_for(t)
        for p, g in zip(ps, gs):
            p.grad = fw.to_tensor(g)
        opt.step()
        for i, (p, g) in enumerate(zip(ref, gs)):
            g = fw.to_tensor(g)
            reg = ref_opt._param_reg(p, ref_opt._hp(0), ref_opt._param_groups[0])
            if reg is not None:
                g = reg(p, g)
            st = {k: fw.to_tensor(v) for k, v in states[i].items()}
            new_p, new_st = ref_opt._functional_update(p, g, st, ref_opt.get_lr())
            p.set_value(new_p)
            states[i] = {k: v.numpy() for k, v in new_st.items()}
    for a, b in zip(ps, ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=case)


def test_params_are_packed_into_one_buffer_and_grads_adopted():
    lin = fw.nn.Linear(5, 3)
    opt = fw.optimizer.Adam(0.1, parameters=lin.parameters())
    for _ in range(2):
        lin(fw.ones([2, 5])).sum().backward()
        opt.step()
        opt.clear_grad()
    fg = opt._flat[0]
    assert len(opt._flat) == 1
    for p in lin.parameters():
        assert np.shares_memory(p.numpy(), fg.flat)
        assert np.shares_memory(p.grad.numpy(), fg.gflat)
        assert not p.grad.numpy().any()  # cleared in place
    # the next backward accumulates straight into the flat gradient buffer
    lin(fw.ones([2, 5])).sum().backward()
    assert np.allclose(fg.gflat[fg.offsets[1]:], 2.0)


def test_param_groups_scale_lr_and_set_weight_decay():
    a, b = make_params(2)[:2], make_params(3)[:2]
    opt = fw.optimizer.SGD(0.1, parameters=[{"params": a}, {"params": b, "learning_rate": 0.5,
                                                            "weight_decay": 0.2}])
    sa, sb = [p.numpy().copy() for p in a], [p.numpy().copy() for p in b]
    for p in a + b:
        p.grad = fw.ones(p.shape)
    opt.step()
    for p, s in zip(a, sa):
        np.testing.assert_allclose(p.numpy(), s - 0.1, rtol=1e-6)
    for p, s in zip(b, sb):
        np.testing.assert_allclose(p.numpy(), s - 0.05 * (1 + 0.2 * s), rtol=1e-5)
    assert len(opt._flat) == 2


def test_param_attr_learning_rate_and_regularizer():
    attr = fw.ParamAttr(learning_rate=0.5, regularizer=L1Decay(0.1))
    w = fw.create_parameter([3], "float32", attr=attr,
                            default_initializer=fw.nn.initializer.Constant(2.0))
    v = fw.create_parameter([3], "float32", default_initializer=fw.nn.initializer.Constant(2.0))
    opt = fw.optimizer.SGD(1.0, parameters=[w, v], weight_decay=0.01)
    w.grad = fw.ones([3])
    v.grad = fw.ones([3])
    opt.step()
    # w: its own L1 (0.1 * sign) and half the rate; v: the optimizer's L2
    np.testing.assert_allclose(w.numpy(), 2.0 - 0.5 * (1 + 0.1), rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), 2.0 - (1 + 0.01 * 2.0), rtol=1e-6)


def test_momentum_l2_decay_is_added_after_rescale_grad():
    # Paddle's momentum op with regularization_method="l2_decay" (what Momentum uses
    # for an L2 weight decay): grad = rescale_grad * grad + coeff * param, then
    # v = mu * v + grad, param -= lr * v. The decay itself is not rescaled.
    p0 = np.array([1.0, -2.0, 0.5])
    gs = [np.array([0.3, 0.1, -0.2]), np.array([-0.1, 0.4, 0.2])]
    for wd in (L2Decay(0.1), 0.1):
        p = Parameter(p0.astype(np.float32))
        opt = fw.optimizer.Momentum(0.5, 0.9, parameters=[p], weight_decay=wd,
                                    rescale_grad=0.25)
        want, v = p0.copy(), np.zeros(3)
        for g in gs:
            p.grad = fw.to_tensor(g.astype(np.float32))
            opt.step()
            v = 0.9 * v + 0.25 * g + 0.1 * want
            want = want - 0.5 * v
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-6)


def test_an_empty_parameter_does_not_stop_the_others():
    # a parameter with no elements is set aside; the ones after it are still updated
    empty = Parameter(np.zeros((0, 3), np.float32), name="empty")
    p = Parameter(np.ones(3, np.float32), name="after_empty")
    opt = fw.optimizer.SGD(0.5, parameters=[empty, p])
    empty.grad = fw.zeros([0, 3])
    p.grad = fw.ones([3])
    opt.step()
    np.testing.assert_allclose(p.numpy(), 0.5)


def test_master_weights_load_from_plain_arrays():
    # a state dict whose master weights are NumPy arrays (loaded from elsewhere)
    p = Parameter(np.ones(4, fw.bfloat16.np), name="mw_src")
    opt = fw.optimizer.SGD(0.5, parameters=[p], multi_precision=True)
    p.grad = fw.ones([4]).astype("bfloat16")
    opt.step()
    sd = opt.state_dict()
    sd["master_weights"] = {k: v.numpy() + 1.0 for k, v in sd["master_weights"].items()}
    q = Parameter(np.ones(4, fw.bfloat16.np), name="mw_src")
    opt2 = fw.optimizer.SGD(0.5, parameters=[q], multi_precision=True)
    opt2.set_state_dict(sd)
    q.grad = fw.zeros([4]).astype("bfloat16")
    opt2.step()
    np.testing.assert_allclose(opt2.state_dict()["master_weights"][q.name].numpy(), 1.5)


def test_l1_decay_adds_nothing_at_zero():
    # L1Decay adds coeff * sign(param): nothing where the parameter is 0
    p = Parameter(np.array([0.0, 1.0, -2.0], np.float32))
    opt = fw.optimizer.SGD(0.5, parameters=[p], weight_decay=L1Decay(0.1))
    p.grad = fw.zeros([3])
    opt.step()
    np.testing.assert_allclose(p.numpy(), [0.0, 1.0 - 0.05, -2.0 + 0.05], rtol=1e-6)


def test_custom_regularizer_sees_only_parameters_with_a_gradient():
    # a callable weight_decay(param, grad) -> grad; a parameter without a gradient
    # this step is neither regularized nor moved
    seen = []

    def reg(param, grad):
        seen.append(param.name)
        return grad + 0.5 * param

    a = Parameter(np.array([1.0, 2.0], np.float32), name="reg_a")
    b = Parameter(np.array([3.0, 4.0], np.float32), name="reg_b")
    opt = fw.optimizer.SGD(0.1, parameters=[a, b], weight_decay=reg)
    a.grad = fw.to_tensor(np.array([1.0, -1.0], np.float32))
    opt.step()
    assert seen == ["reg_a"]
    np.testing.assert_allclose(a.numpy(), [1.0 - 0.1 * 1.5, 2.0 - 0.1 * 0.0], rtol=1e-6)
    np.testing.assert_array_equal(b.numpy(), [3.0, 4.0])


@pytest.mark.parametrize("clip", ["value", "norm", "global"])
def test_gradient_clipping_matches_fw_nn_clip_and_leaves_grads(clip):
    ps = make_params(4)
    ps[2].need_clip = False
    c = {"value": ClipGradByValue(0.3), "norm": ClipGradByNorm(0.5),
         "global": ClipGradByGlobalNorm(0.7)}[clip]
    opt = fw.optimizer.SGD(1.0, parameters=ps, grad_clip=c)
    gs = [g * 3 for g in grads_for(0)]
    start = [p.numpy().copy() for p in ps]
    for p, g in zip(ps, gs):
        p.grad = fw.to_tensor(g)
    want = c([(p, fw.to_tensor(g)) for p, g in zip(ps, gs)])
    opt.step()
    for p, s, (_, g), raw in zip(ps, start, want, gs):
        np.testing.assert_allclose(p.numpy(), s - g.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p.grad.numpy(), raw)  # .grad itself is not clipped
    np.testing.assert_allclose(ps[2].numpy(), start[2] - gs[2], rtol=1e-6)


def test_global_norm_clip_skips_parameters_that_opt_out():
    # need_clip=False on every parameter: nothing is clipped, even with clip_norm 0
    # (which would zero any gradient that took part)
    ps = make_params(4)
    for p in ps:
        p.need_clip = False
    opt = fw.optimizer.SGD(1.0, parameters=ps, grad_clip=ClipGradByGlobalNorm(0.0))
    start = [p.numpy().copy() for p in ps]
    for p, g in zip(ps, grads_for(0)):
        p.grad = fw.to_tensor(g)
    opt.step()
    for p, s, g in zip(ps, start, grads_for(0)):
        np.testing.assert_allclose(p.numpy(), s - g, rtol=1e-6)


def test_multi_precision_keeps_float32_master_weights():
    ps = make_params(5, dtype="float32")
    low = [Parameter(p.numpy().astype(fw.bfloat16.np), name=f"low{i}") for i, p in enumerate(ps)]
    opt32 = fw.optimizer.Adam(0.01, parameters=ps)
    opt16 = fw.optimizer.Adam(0.01, parameters=low, multi_precision=True)
    for t in range(4):
        for a, b, g in zip(ps, low, grads_for(t)):
            a.grad = fw.to_tensor(g)
            b.grad = fw.to_tensor(g.astype(fw.bfloat16.np))
        opt32.step()
        opt16.step()
    sd = opt16.state_dict()
    assert set(sd["master_weights"]) == {p.name for p in low}
    for a, b in zip(ps, low):
        assert b.dtype == fw.bfloat16
        m = sd["master_weights"][b.name].numpy()
        assert m.dtype == np.float32
        np.testing.assert_allclose(m, a.numpy(), rtol=2e-2, atol=2e-2)
        np.testing.assert_array_equal(b.numpy(), m.astype(fw.bfloat16.np))


def test_low_precision_without_master_weights_warns():
    p = Parameter(np.ones(3, fw.bfloat16.np))
    opt = fw.optimizer.SGD(0.5, parameters=[p])
    p.grad = fw.ones([3]).astype("bfloat16")
    with pytest.warns(UserWarning, match="multi_precision=True"):
        opt.step()
    np.testing.assert_allclose(p.numpy().astype(np.float32), 0.5)


def test_parameters_without_grad_are_skipped_with_their_own_step_count():
    ps = make_params(6)
    start = [p.numpy().astype(np.float64) for p in ps]
    skip = {(0, 1), (1, 1), (2, 0)}  # p1 misses steps 0 and 1, p0 misses step 2
    got = run(fw.optimizer.Adam(0.01, parameters=ps), ps, steps=4, skip=skip)
    for i in range(3):
        seq = [[grads_for(t)[i].astype(np.float64)] for t in range(4) if (t, i) not in skip]
        want = tb_adam([start[i]], seq)[0]
        np.testing.assert_allclose(got[i], want, rtol=2e-5, atol=2e-6)


def test_state_dict_round_trips_through_save_and_load(tmp_path):
    sched = lrs.StepDecay(0.01, step_size=2, gamma=0.5)
    ps = make_params(7)
    opt = fw.optimizer.Adam(sched, parameters=ps, amsgrad=True)
    run(opt, ps, steps=3)
    sched.step()
    path = str(tmp_path / "opt.pdopt")
    fw.save(opt.state_dict(), path)
    keys = set(opt.state_dict())
    assert f"{ps[0].name}_moment1_0" in keys and f"{ps[0].name}_beta1_pow_acc_0" in keys
    assert "LR_Scheduler" in keys
    # a fresh optimizer over parameters with the same names and values
    ps2 = make_params(7)
    for a, b in zip(ps2, ps):
        a.set_value(b.numpy())
    sched2 = lrs.StepDecay(0.01, step_size=2, gamma=0.5)
    opt2 = fw.optimizer.Adam(sched2, parameters=ps2, amsgrad=True)
    opt2.set_state_dict(fw.load(path))
    assert sched2.last_epoch == sched.last_epoch and sched2() == sched()
    for t in range(3, 5):
        for a, b, g in zip(ps, ps2, grads_for(t)):
            a.grad = fw.to_tensor(g)
            b.grad = fw.to_tensor(g)
        opt.step()
        opt2.step()
    for a, b in zip(ps, ps2):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_repacking_after_storage_is_replaced():
    lin = fw.nn.Linear(3, 2)
    opt = fw.optimizer.Momentum(0.1, parameters=lin.parameters())
    lin(fw.ones([1, 3])).sum().backward()
    opt.step()
    # the same dtype: the new array is adopted into the flat buffer
    w = lin.weight
    w._replace_data(np.full(w.shape, 5.0, np.float32))
    w.grad = fw.ones(w.shape)
    lin.bias.grad = fw.ones([2])
    opt.step()
    assert np.shares_memory(w.numpy(), opt._flat[0].flat)
    v = opt._flat[0].param_state(0, "velocity")
    np.testing.assert_allclose(w.numpy(), 5.0 - 0.1 * v, rtol=1e-6)
    # a dtype change rebuilds the groups and keeps the moments
    lin.to(dtype="float64")
    for p in lin.parameters():
        p.grad = fw.ones(p.shape, dtype="float64")
    before = {p.name: opt.state_dict()[f"{p.name}_velocity_0"].numpy().copy()
              for p in lin.parameters()}
    opt.step()
    assert opt._flat[0].dtype == np.float64
    for p in lin.parameters():
        np.testing.assert_allclose(opt.state_dict()[f"{p.name}_velocity_0"].numpy(),
                                   0.9 * before[p.name] + 1.0, rtol=1e-6)


def test_parameters_sharing_storage_stay_shared():
    a = Parameter(np.ones(3, np.float32), name="shared_a")
    b = Parameter(a, name="shared_b")  # same storage
    opt = fw.optimizer.SGD(0.1, parameters=[a, b])
    a.grad = fw.ones([3])
    b.grad = fw.ones([3])
    opt.step()
    assert np.shares_memory(a.numpy(), b.numpy())


def test_lamb_trust_ratio_is_per_parameter_and_respects_exclusion():
    ps = make_params(8)
    start = [p.numpy().astype(np.float64) for p in ps]
    opt = fw.optimizer.Lamb(0.01, lamb_weight_decay=0.1, parameters=ps,
                            exclude_from_weight_decay_fn=lambda p: p.name.endswith("_1"))
    got = run(opt, ps, steps=3)
    want = tb_lamb(start, [[g.astype(np.float64) for g in grads_for(t)] for t in range(3)],
                   wd=0.1, excluded=(1,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def test_adamw_lr_ratio_and_apply_decay_param_fun():
    ps = make_params(9)
    start = [p.numpy().astype(np.float64) for p in ps]
    opt = fw.optimizer.AdamW(0.01, parameters=ps, weight_decay=0.5,
                             lr_ratio=lambda p: 0.5 if p.name.endswith("_0") else 1.0,
                             apply_decay_param_fun=lambda n: not n.endswith("_2"))
    got = run(opt, ps, steps=2)
    seq = [[g.astype(np.float64) for g in grads_for(t)] for t in range(2)]
    for i in range(3):
        lr = 0.005 if i == 0 else 0.01
        dec = 0.0 if i == 2 else 0.5
        want = tb_adam([start[i]], [[s[i]] for s in seq], lr=lr, decoupled=dec)[0]
        np.testing.assert_allclose(got[i], want, rtol=2e-5, atol=2e-6)


def test_learning_rate_api():
    ps = make_params(10)
    opt = fw.optimizer.SGD(0.1, parameters=ps)
    assert opt.get_lr() == 0.1
    opt.set_lr(0.2)
    assert opt.get_lr() == 0.2
    sched = lrs.ExponentialDecay(0.5, gamma=0.5)
    opt.set_lr_scheduler(sched)
    sched.step()
    assert opt.get_lr() == 0.25
    with pytest.raises(RuntimeError, match="LRScheduler"):
        opt.set_lr(0.1)
    with pytest.raises(TypeError, match="LRScheduler"):
        opt.set_lr_scheduler(0.1)


def test_minimize_and_clear_grad():
    lin = fw.nn.Linear(2, 1)
    opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
    w0, b0 = lin.weight.numpy().copy(), lin.bias.numpy().copy()
    loss = lin(fw.ones([4, 2])).mean()
    loss.backward()
    _, pg = opt.minimize(loss, no_grad_set={lin.bias.name})
    assert [p.name for p, _ in pg] == [lin.weight.name]
    np.testing.assert_allclose(lin.bias.numpy(), b0)
    assert not np.allclose(lin.weight.numpy(), w0)
    opt.clear_grad(set_to_zero=False)
    assert lin.weight.grad is None


def test_clear_grad_zeroes_every_gradient_tensor():
    # set_to_zero=True zeroes each gradient in place, also one the user replaced after a
    # step (not a view of the optimizer's flat buffer); a missing gradient stays missing
    ps = make_params(3)
    opt = fw.optimizer.SGD(0.1, parameters=ps)
    for p, g in zip(ps, grads_for(0)):
        p.grad = fw.to_tensor(g)
    opt.step()
    ps[0].grad = None  # first: the parameters after it are still zeroed
    ps[1].grad = fw.ones(list(ps[1].shape))
    kept = ps[1].grad
    opt.clear_grad()
    assert ps[1].grad is kept and not ps[1].grad.numpy().any()
    assert not ps[2].grad.numpy().any()
    assert ps[0].grad is None


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="no parameters"):
        fw.optimizer.SGD(0.1).step()
    with pytest.raises(ValueError, match="beta1"):
        fw.optimizer.Adam(0.1, beta1=1.5, parameters=make_params(11))
    with pytest.raises(TypeError, match="single Tensor"):
        fw.optimizer.SGD(0.1, parameters=make_params(12)[0])
    p = make_params(13)[0]
    with pytest.raises(ValueError, match="more than one parameter group"):
        fw.optimizer.SGD(0.1, parameters=[{"params": [p]}, {"params": [p]}])


def test_scheduler_drives_the_optimizer_each_step():
    p = Parameter(np.zeros(1, np.float32))
    sched = lrs.PiecewiseDecay([2], [1.0, 0.1])
    opt = fw.optimizer.SGD(sched, parameters=[p])
    for _ in range(4):
        p.grad = fw.ones([1])
        opt.step()
        sched.step()
    np.testing.assert_allclose(p.numpy(), [-(1 + 1 + 0.1 + 0.1)], rtol=1e-6)


def test_a_training_loop_lowers_the_loss():
    fw.seed(0)
    rng = np.random.default_rng(0)
    x = fw.to_tensor(rng.standard_normal([64, 8]).astype(np.float32))
    y = fw.to_tensor((x.numpy() @ rng.standard_normal(8) > 0).astype(np.int64))
    net = fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 2))
    opt = fw.optimizer.AdamW(0.05, parameters=net.parameters(),
                             grad_clip=ClipGradByGlobalNorm(1.0))
    losses = []
    for _ in range(30):
        loss = fw.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert math.isfinite(losses[-1])


def test_functional_update_builds_ir_that_runs_like_eager():
    from fw.core.ir import TensorType, run, trace

    p = Parameter(np.ones((2, 3), np.float32))
    opt = fw.optimizer.Adam(0.1, parameters=[p], amsgrad=True)
    state = opt._init_state(p)
    names = list(state)

    def update(param, grad, lr, *states):
        new_p, new_st = opt._functional_update(param, grad, dict(zip(names, states)), lr)
        return (new_p,) + tuple(new_st[n] for n in names)

    types = [TensorType([2, 3], fw.float32)] * 2 + [TensorType([1], fw.float32)] + \
        [TensorType(list(v.shape), fw.core.dtypes.from_numpy(v.dtype)) for v in state.values()]
    prog = trace(update, types)
    assert "adam(" in str(prog) and "amsgrad=true" in str(prog)
    g = fw.to_tensor(np.full((2, 3), 0.5, np.float32))
    args = [fw.ones([2, 3]), g, fw.to_tensor([0.1])] + [fw.to_tensor(v) for v in state.values()]
    got = run(prog, *args)
    want = update(*args)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    p.grad = g
    opt.step()  # the fused eager update agrees with the program
    np.testing.assert_allclose(p.numpy(), got[0].numpy(), rtol=1e-6)


def test_master_weights_follow_values_written_in_place():
    p = Parameter(np.ones(4, fw.bfloat16.np))
    opt = fw.optimizer.SGD(0.5, parameters=[p], multi_precision=True)
    p.grad = fw.ones([4]).astype("bfloat16")
    opt.step()
    np.testing.assert_allclose(p.numpy().astype(np.float32), 0.5)
    p.set_value(np.full(4, 3.0, np.float32))  # e.g. set_state_dict
    opt.step()
    np.testing.assert_allclose(p.numpy().astype(np.float32), 2.5)
    np.testing.assert_allclose(opt.state_dict()["master_weights"][p.name].numpy(), 2.5)
    # the same when the parameter's storage is replaced by a new array
    p._replace_data(np.full(4, 7.0, fw.bfloat16.np))
    p.grad = fw.ones([4]).astype("bfloat16")
    opt.step()
    np.testing.assert_allclose(p.numpy().astype(np.float32), 6.5)
    np.testing.assert_allclose(opt.state_dict()["master_weights"][p.name].numpy(), 6.5)


def test_global_norm_of_low_precision_gradients_is_summed_in_float32():
    # 257 bfloat16 ones: the squared norm is 257, which bfloat16 (8 significant bits)
    # would round to 256
    p = Parameter(np.zeros(257, fw.bfloat16.np))
    opt = fw.optimizer.SGD(1.0, parameters=[p], multi_precision=True,
                           grad_clip=ClipGradByGlobalNorm(1.0))
    p.grad = fw.ones([257]).astype("bfloat16")
    opt.step()
    np.testing.assert_allclose(opt.state_dict()["master_weights"][p.name].numpy(),
                               -1.0 / math.sqrt(257.0), rtol=1e-6)


# ---------------------------------------------------------------- update_plan (fw-jit's contract)
def test_update_plan_by_hand_equals_step_and_writes_the_live_state():
    fw.seed(0)
    ps = [Parameter(np.random.RandomState(i).randn(3, 2).astype(np.float32)) for i in range(2)]
    ref = [Parameter(p.numpy().copy()) for p in ps]
    clip = ClipGradByGlobalNorm(0.5)
    opt = fw.optimizer.Adam(0.1, parameters=ps, weight_decay=L1Decay(0.01), grad_clip=clip)
    ref_opt = fw.optimizer.Adam(0.1, parameters=ref, weight_decay=L1Decay(0.01), grad_clip=clip)
    grads = [fw.to_tensor(np.full((3, 2), 2.0 + i, np.float32)) for i in range(2)]
    for q, g in zip(ref, grads):
        q.grad = g
    ref_opt.step()

    plan = opt.update_plan()
    assert plan.op == "adam" and plan.name == "adam" and plan.clip is clip
    assert plan.clip_traceable and plan.generation == opt.state_generation
    [grp] = plan.groups
    assert grp.params == ps and not grp.multi_precision and grp.scalar_state
    assert set(grp.states) == {"moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc"}
    clipped = plan.clip_grads(list(zip(ps, grads)))
    lr = fw.to_tensor(np.array([opt.get_lr() * grp.lr_mult]))
    for i, (p, g) in enumerate(zip(ps, clipped)):
        views = {n: grp.state_view(i, n) for n in grp.states}
        new_p, new_st = grp.update(p, grp.regularize(p, g), lr,
                                   {n: fw.core.tensor.wrap(v) for n, v in views.items()})
        p.set_value(new_p)
        for n, v in new_st.items():
            views[n][...] = v.numpy()  # the views are the optimizer's own state
    got, want = opt.state_dict(), ref_opt.state_dict()
    assert len(got) == len(want) == len(ps) * len(grp.states)
    for p, q in zip(ps, ref):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-6)
        for n in grp.states:
            np.testing.assert_allclose(got[f"{p.name}_{n}_0"].numpy(),
                                       want[f"{q.name}_{n}_0"].numpy(), rtol=1e-6, err_msg=n)


def test_state_generation_changes_when_the_flat_state_is_rebuilt():
    p, q = Parameter(np.ones(2, np.float32)), Parameter(np.ones(3, np.float32))
    opt = fw.optimizer.SGD(0.1, parameters=[p])
    plan = opt.update_plan()
    assert opt.update_plan().generation == plan.generation  # nothing changed
    opt.add_param_group({"params": [q]})
    assert opt.state_generation != plan.generation
    assert [g.params for g in opt.update_plan().groups] == [[p], [q]]


def test_update_plan_refuses_to_trace_a_custom_clip():
    p = Parameter(np.ones(2, np.float32))
    opt = fw.optimizer.SGD(0.1, parameters=[p], grad_clip=lambda pg: pg)
    plan = opt.update_plan()
    assert not plan.clip_traceable
    with pytest.raises(fw.core.errors.UnsupportedError, match="no static form"):
        plan.clip_grads([(p, fw.ones([2]))])


@pytest.mark.parametrize("clip", [ClipGradByGlobalNorm(0.5), ClipGradByNorm(0.5),
                                  ClipGradByValue(0.2)], ids=repr)
def test_clip_strategies_build_ir_that_runs_like_eager(clip):
    """The one implementation of clipping: fw ops, eager on tensors, IR on values."""
    from fw.core.ir import TensorType, run, trace

    ps = [Parameter(np.zeros(n, np.float32)) for n in (3, 2, 2)]
    ps[1].need_clip = False

    def clip_fn(*gs):
        return tuple(g for _, g in clip(list(zip(ps, gs))))

    prog = trace(clip_fn, [TensorType([3], fw.float32), TensorType([2], fw.float32),
                           TensorType([2], fw.float32)])
    gs = [fw.to_tensor([1.0, -2.0, 0.5]), fw.to_tensor([3.0, 4.0]), fw.to_tensor([-0.1, 0.3])]
    for a, b in zip(run(prog, *gs), clip_fn(*gs)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(clip_fn(*gs)[1].numpy(), [3.0, 4.0])  # need_clip=False
