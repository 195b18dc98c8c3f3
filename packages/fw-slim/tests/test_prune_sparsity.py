"""Unstructured magnitude pruning and N:M (2:4) masks: which weights go, the
masks survive optimizer steps (SGD with momentum, Adam), the 2:4 pattern holds."""

import itertools

import numpy as np
import pytest

import fw
import fw.nn as nn
import fw.slim as slim


def _net(seed=0):
    fw.seed(seed)
    return nn.Sequential(nn.Conv2D(4, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 4 * 4, 16),
                         nn.ReLU(), nn.Linear(16, 4))


def _train(model, opt, steps=5, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = fw.to_tensor(rng.standard_normal((4, 4, 6, 6)).astype("float32"))
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.clear_grad()


def test_unstructured_global_ratio_prunes_smallest():
    model = _net()
    ws = {k: p.numpy().copy() for k, p in model.named_parameters() if k.endswith("weight")}
    bs = {k: p.numpy().copy() for k, p in model.named_parameters() if k.endswith("bias")}
    pruner = slim.UnstructuredPruner(model, ratio=0.6)
    assert set(pruner.masks) == set(ws)
    allw = np.concatenate([np.abs(a).ravel() for a in ws.values()])
    thr = np.sort(allw)[int(round(0.6 * allw.size)) - 1]
    for k, a in ws.items():
        got = dict(model.named_parameters())[k].numpy()
        np.testing.assert_array_equal(got, np.where(np.abs(a) > thr, a, 0))
    assert pruner.total_sparsity() == pytest.approx(0.6, abs=1e-3)
    # biases are not touched
    for k, p in model.named_parameters():
        if k.endswith("bias"):
            np.testing.assert_array_equal(p.numpy(), bs[k])


def test_unstructured_local_and_threshold():
    model = _net(1)
    pruner = slim.UnstructuredPruner(model, ratio=0.25, local_sparsity=True, skip=["5.weight"])
    for k, s in pruner.sparsity().items():
        assert s == pytest.approx(0.25, abs=0.01), k
    assert "5.weight" not in pruner.masks
    model2 = _net(2)
    slim.UnstructuredPruner(model2, mode="threshold", threshold=0.05)
    for k, p in model2.named_parameters():
        if k.endswith("weight"):
            a = p.numpy()
            assert np.all((a == 0) | (np.abs(a) > 0.05))
    with pytest.raises(ValueError, match="'mode' must be"):
        slim.UnstructuredPruner(model2, mode="nope")
    with pytest.raises(KeyError, match="no parameter 'x.weight'"):
        slim.UnstructuredPruner(model2, params=["x.weight"])


@pytest.mark.parametrize("opt_name", ["momentum", "adam"])
def test_masks_survive_optimizer_steps(opt_name):
    model = _net(3)
    pruner = slim.UnstructuredPruner(model, ratio=0.5)
    masks = {k: m.copy() for k, m in pruner.masks.items()}
    params = dict(model.named_parameters())
    before = {k: params[k].numpy().copy() for k in masks}
    opt = (fw.optimizer.Momentum(learning_rate=0.1, momentum=0.9,
                                 parameters=model.parameters())
           if opt_name == "momentum" else
           fw.optimizer.Adam(learning_rate=0.05, parameters=model.parameters()))
    pruner.decorate(opt)
    _train(model, opt)
    for k, m in masks.items():
        a = params[k].numpy()
        assert np.all(a[m == 0] == 0), k
        assert not np.array_equal(a[m == 1], before[k][m == 1])  # the rest trains
    # without the decoration the zeros come back (the test can fail)
    model2 = _net(3)
    slim.UnstructuredPruner(model2, ratio=0.5)
    opt2 = fw.optimizer.Adam(learning_rate=0.05, parameters=model2.parameters())
    _train(model2, opt2)
    assert slim.calculate_density(dict(model2.named_parameters())["3.weight"]) > 0.75


def test_nm_mask_reference():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 3)).astype("float32")  # Linear [in, out]
    m = slim.nm_mask(w, 2, 4)
    for j in range(3):
        for g in range(2):
            col = np.abs(w[g * 4:(g + 1) * 4, j])
            keep = set(np.argsort(-col, kind="stable")[:2])
            assert {i for i in range(4) if m[g * 4 + i, j]} == keep
    wc = rng.standard_normal((2, 2, 2, 2)).astype("float32")  # conv: groups over in*kh*kw
    mc = slim.nm_mask(wc, 2, 4, layout="conv")
    for o, g in itertools.product(range(2), range(2)):
        row = np.abs(wc[o].ravel()[g * 4:(g + 1) * 4])
        assert set(np.flatnonzero(mc[o].ravel()[g * 4:(g + 1) * 4])) == \
            set(np.argsort(-row, kind="stable")[:2])
    with pytest.raises(ValueError, match="not a multiple of m=4"):
        slim.nm_mask(np.ones((6, 2)), 2, 4)


def test_two_four_pattern_holds_through_training():
    model = nn.Sequential(nn.Conv2D(4, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 4 * 4, 16),
                          nn.ReLU(), nn.Linear(16, 3))
    pruner = slim.prune_model(model, n=2, m=4)
    assert set(pruner.masks) == {"0.weight", "3.weight", "5.weight"}
    assert pruner.check()
    for k in pruner.masks:
        assert slim.calculate_density(pruner.params[k]) == pytest.approx(0.5)
    opt = slim.decorate(fw.optimizer.Adam(learning_rate=0.05, parameters=model.parameters()),
                        pruner)
    _train(model, opt, steps=4)
    assert pruner.check()
    lin = model[3].weight.numpy()
    assert slim.check_sparsity(lin, 2, 4)
    assert not slim.check_sparsity(np.ones((8, 2)), 2, 4)
    # a layer whose reduction axis is not a multiple of 4 is skipped, with the reason
    odd = nn.Sequential(nn.Linear(6, 4), nn.Linear(4, 2))
    p2 = slim.NMPruner(odd)
    assert "0.weight" in p2.skipped and "multiple of m=4" in p2.skipped["0.weight"]
    assert set(p2.masks) == {"1.weight"}
    with pytest.raises(ValueError, match="parameter '0.weight'.*multiple of m=4"):
        slim.NMPruner(odd, params=["0.weight"])


def test_asp_order_decorate_then_prune_model():
    """Paddle's ASP order: decorate(optimizer) first, prune_model(model) after; the
    optimizer finds the masks at each step, for its own parameters only."""
    model = nn.Sequential(nn.Conv2D(4, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 4 * 4, 16),
                          nn.ReLU(), nn.Linear(16, 4))
    opt = slim.decorate(fw.optimizer.SGD(learning_rate=0.5, parameters=model.parameters()))
    pruner = slim.prune_model(model, n=2, m=4)
    other = nn.Sequential(nn.Linear(8, 4))
    slim.prune_model(other)  # masks of a model this optimizer does not train
    _train(model, opt, steps=3)
    assert pruner.check()
    for k in pruner.masks:
        assert slim.calculate_density(pruner.params[k]) == pytest.approx(0.5)
    # without masks (with_mask=False) nothing is kept through steps
    model2 = nn.Sequential(nn.Conv2D(4, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(128, 16),
                           nn.ReLU(), nn.Linear(16, 4))
    opt2 = slim.decorate(fw.optimizer.SGD(learning_rate=0.5, parameters=model2.parameters()))
    p2 = slim.prune_model(model2, with_mask=False)
    assert slim.check_sparsity(model2[3].weight, 2, 4)
    _train(model2, opt2, steps=3)
    assert not slim.check_sparsity(model2[3].weight, 2, 4) and not p2.masks


def test_skip_params_func():
    model = _net(4)
    pruner = slim.UnstructuredPruner(model, "ratio", ratio=0.5,
                                     skip_params_func=lambda m: ["0.weight"])
    assert set(pruner.masks) == {"3.weight", "5.weight"}
    assert slim.calculate_density(model[0].weight) == 1.0


def test_masks_in_a_to_static_training_step():
    """A whole training step converted by fw.jit.to_static: the mask multiply is
    part of the program and reads the current mask at every run."""
    model = _net(6)
    pruner = slim.UnstructuredPruner(model, ratio=0.5)
    opt = pruner.decorate(fw.optimizer.Adam(learning_rate=0.05,
                                            parameters=model.parameters()))

    @fw.jit.to_static
    def step(x):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    rng = np.random.default_rng(1)
    xs = [fw.to_tensor(rng.standard_normal((4, 4, 6, 6)).astype("float32")) for _ in range(4)]
    params = dict(model.named_parameters())
    w0 = params["3.weight"].numpy().copy()
    for x in xs[:3]:
        step(x)
    traced = len(step.program_cache)  # (fw.jit may trace the first call apart)
    m = pruner.masks["3.weight"]
    w1 = params["3.weight"].numpy()
    assert np.all(w1[m == 0] == 0) and not np.array_equal(w1[m == 1], w0[m == 1])
    # a stricter mask, set eagerly between runs, is applied by the same program
    pruner.ratio = 0.75
    pruner.step()
    for x in xs[3:]:
        step(x)
    assert len(step.program_cache) == traced  # no new trace: the program read the new mask
    for k, mk in pruner.masks.items():
        assert np.all(params[k].numpy()[mk == 0] == 0), k
    assert pruner.total_sparsity() >= 0.75 - 1e-3
