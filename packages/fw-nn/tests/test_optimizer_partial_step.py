"""`Optimizer.step(parameters=...)`: partial steps completed by `step()` equal one
whole step bit for bit (the contract fw.DataParallel's overlap_optimizer relies on)."""

import numpy as np
import pytest

import fw
from fw.core.errors import UnsupportedError

WIDE = {"in": 6}  # the model's input width (a wide one spans many SIMD blocks, threads)


def _model(seed=0):
    fw.seed(seed)
    return fw.nn.Sequential(fw.nn.Linear(WIDE["in"], 8), fw.nn.ReLU(), fw.nn.Linear(8, 5),
                            fw.nn.ReLU(), fw.nn.Linear(5, 3))


def _batch(k):
    rng = np.random.default_rng(k)
    return (fw.to_tensor(rng.standard_normal((4, WIDE["in"])).astype("float32")),
            fw.to_tensor(rng.integers(0, 3, 4)))


OPTS = {
    "sgd": lambda ps, lr: fw.optimizer.SGD(lr, parameters=ps),
    "momentum": lambda ps, lr: fw.optimizer.Momentum(lr, momentum=0.9, parameters=ps,
                                                     use_nesterov=True),
    "adam": lambda ps, lr: fw.optimizer.Adam(lr, parameters=ps),
    "adamw": lambda ps, lr: fw.optimizer.AdamW(lr, parameters=ps, weight_decay=0.1),
    "adam_l2_value_clip": lambda ps, lr: fw.optimizer.Adam(
        lr, parameters=ps, weight_decay=0.01, grad_clip=fw.nn.ClipGradByValue(0.05)),
    "momentum_norm_clip": lambda ps, lr: fw.optimizer.Momentum(
        lr, parameters=ps, grad_clip=fw.nn.ClipGradByNorm(0.1)),
    "adam_groups": lambda ps, lr: fw.optimizer.Adam(lr, parameters=[
        {"params": ps[:3]}, {"params": ps[3:], "learning_rate": 0.5}]),
}


def _train(kind, split, steps=4, sched=False):
    """`split`: None (whole steps) or lists of parameter indices stepped in turn."""
    net = _model()
    ps = net.parameters()
    lr = fw.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.7) if sched else 0.05
    opt = OPTS[kind](ps, lr)
    for k in range(steps):
        x, y = _batch(k)
        fw.nn.functional.cross_entropy(net(x), y).backward()
        if split is None:
            opt.step()
        else:
            for idx in split:
                opt.step(parameters=[ps[i] for i in idx])
            opt.step()
        opt.clear_grad()
        if sched:
            lr.step()
    state = {}  # keyed by parameter index (names differ between model instances)
    for k, v in opt.state_dict().items():
        for i, p in enumerate(ps):
            if k.startswith(p.name + "_"):
                state[(i, k[len(p.name):])] = v.numpy().copy()
    return [p.numpy().copy() for p in ps], state


@pytest.mark.parametrize("kind", sorted(OPTS))
@pytest.mark.parametrize("split", [[[5, 4], [3, 2]], [[0], [2, 3, 4, 5], [1]],
                                   [[0, 1, 2, 3, 4, 5]]])
def test_partial_steps_equal_whole_step(kind, split):
    want_p, want_s = _train(kind, None)
    got_p, got_s = _train(kind, split)
    for a, b in zip(want_p, got_p):
        np.testing.assert_array_equal(a, b)
    assert want_s.keys() == got_s.keys()
    for k in want_s:
        np.testing.assert_array_equal(want_s[k], got_s[k], err_msg=str(k))


@pytest.mark.parametrize("kind", ["adam", "adamw", "momentum"])
def test_partial_steps_equal_whole_step_wide(kind, monkeypatch):
    # 4,723 x 8 weights: ~38k elements, two threads in the native kernels, runs
    # starting and ending inside SIMD blocks
    monkeypatch.setitem(WIDE, "in", 4723)
    want, _ = _train(kind, None, steps=2)
    got, _ = _train(kind, [[5, 4, 3], [2], [1]], steps=2)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_partial_step_refuses_non_elementwise_updates():
    net = _model()
    net(_batch(0)[0]).sum().backward()
    for opt in (fw.optimizer.Lamb(0.1, parameters=net.parameters()),
                fw.optimizer.ASGD(0.1, batch_num=2, parameters=net.parameters())):
        with pytest.raises(UnsupportedError, match="not elementwise per parameter"):
            opt.step(parameters=net.parameters()[:1])


def test_partial_steps_with_lr_scheduler():
    want, _ = _train("adam", None, sched=True)
    got, _ = _train("adam", [[4, 5], [0, 1, 2, 3]], sched=True)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_partial_step_moves_only_its_parameters():
    net = _model()
    ps = net.parameters()
    opt = fw.optimizer.Adam(0.1, parameters=ps)
    x, y = _batch(0)
    fw.nn.functional.cross_entropy(net(x), y).backward()
    before = [p.numpy().copy() for p in ps]
    opt.step(parameters=[ps[2]])
    moved = [not np.array_equal(b, p.numpy()) for b, p in zip(before, ps)]
    assert moved == [False, False, True, False, False, False]
    with pytest.raises(ValueError, match="already updated by a partial step"):
        opt.step(parameters=[ps[2]])
    opt.step()
    assert all(not np.array_equal(b, p.numpy()) for b, p in zip(before, ps))
    opt.step(parameters=[ps[2]])  # a new round


def test_partial_step_errors():
    net = _model()
    opt = fw.optimizer.SGD(0.1, parameters=net.parameters()[:2])
    with pytest.raises(ValueError, match="not one of this optimizer's parameters"):
        opt.step(parameters=[net.parameters()[3]])
    with pytest.raises(TypeError, match="must hold Tensors"):
        opt.step(parameters=[3])
    clipped = fw.optimizer.SGD(0.1, parameters=net.parameters(),
                               grad_clip=fw.nn.ClipGradByGlobalNorm(1.0))
    with pytest.raises(UnsupportedError, match="ClipGradByGlobalNorm needs every gradient"):
        clipped.step(parameters=net.parameters()[:1])


def test_grad_scaler_refuses_an_open_round():
    net = _model()
    opt = fw.optimizer.Adam(0.1, parameters=net.parameters())
    x, y = _batch(0)
    scaler = fw.amp.GradScaler(init_loss_scaling=8.0)
    scaler.scale(fw.nn.functional.cross_entropy(net(x), y)).backward()
    opt.step(parameters=net.parameters()[:2])
    with pytest.raises(RuntimeError, match="loss scaling needs every gradient"):
        scaler.step(opt)
