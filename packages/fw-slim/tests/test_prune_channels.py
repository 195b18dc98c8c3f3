"""Structured channel pruning: the pruned model equals the original with the
pruned channels zeroed by hand (per criterion and dependency pattern), the
criteria against NumPy loops, the layers really shrink, errors name the group."""

import numpy as np
import pytest

import fw
import fw.jit
import fw.nn as nn
import fw.slim as slim
from fw.slim.criteria import fpgm, l1_norm, l2_norm

CRITERIA = ["l1", "l2", "fpgm"]


def _randomize(model, seed):
    """Non-trivial BN statistics and biases, so that a wrongly kept/dropped
    channel shows in the outputs."""
    rng = np.random.default_rng(seed)
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        a = rng.standard_normal(t.shape).astype(np.float32)
        if name.endswith("_variance"):
            a = np.abs(a) + 0.5
        t.set_value(a * (0.5 if len(t.shape) > 1 else 1.0))
    return model


# -------------------------------------------------------------- the patterns
class Chain(nn.Layer):
    def __init__(self):
        super().__init__()
        self.c0 = nn.Conv2D(3, 8, 3, padding=1)
        self.c1 = nn.Conv2D(8, 12, 3)
        self.c2 = nn.Conv2D(12, 4, 1)

    def forward(self, x):
        return self.c2(fw.nn.functional.relu(self.c1(fw.nn.functional.relu(self.c0(x)))))

    @staticmethod
    def zero(m, plan):
        (a, b) = plan["c0.weight"], plan["c1.weight"]
        _z(m.c0.weight, a, 0), _z(m.c0.bias, a, 0), _z(m.c1.weight, a, 1)
        _z(m.c1.weight, b, 0), _z(m.c1.bias, b, 0), _z(m.c2.weight, b, 1)

    shapes = {"c0.weight": [4, 3, 3, 3], "c1.weight": [6, 4, 3, 3], "c2.weight": [4, 6, 1, 1]}


class ConvBNConv(nn.Layer):
    def __init__(self):
        super().__init__()
        self.c0 = nn.Conv2D(3, 10, 3, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(10)
        self.c1 = nn.Conv2D(10, 5, 3)

    def forward(self, x):
        return self.c1(fw.nn.functional.relu(self.bn(self.c0(x))))

    @staticmethod
    def zero(m, plan):
        a = plan["c0.weight"]
        _z(m.c0.weight, a, 0), _z(m.bn.weight, a, 0), _z(m.bn.bias, a, 0)
        _z(m.c1.weight, a, 1)

    shapes = {"c0.weight": [5, 3, 3, 3], "bn.weight": [5], "bn._mean": [5],
              "bn._variance": [5], "c1.weight": [5, 5, 3, 3]}


class Residual(nn.Layer):
    """stem (conv-BN) -> relu -> [conv-BN-relu-conv-BN] + identity -> relu -> head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, 8, 3, padding=1, bias_attr=False)
        self.bn0 = nn.BatchNorm2D(8)
        self.b1 = nn.Conv2D(8, 6, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(6)
        self.b2 = nn.Conv2D(6, 8, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(8)
        self.head = nn.Conv2D(8, 3, 1)

    def forward(self, x):
        h = fw.nn.functional.relu(self.bn0(self.stem(x)))
        y = self.bn2(self.b2(fw.nn.functional.relu(self.bn1(self.b1(h)))))
        return self.head(fw.nn.functional.relu(y + h))

    @staticmethod
    def zero(m, plan):
        r, b = plan["stem.weight"], plan["b1.weight"]
        for t in (m.stem.weight, m.bn0.weight, m.bn0.bias, m.b2.weight, m.bn2.weight,
                  m.bn2.bias):
            _z(t, r, 0)
        _z(m.b1.weight, r, 1), _z(m.head.weight, r, 1)
        _z(m.b1.weight, b, 0), _z(m.bn1.weight, b, 0), _z(m.bn1.bias, b, 0)
        _z(m.b2.weight, b, 1)

    shapes = {"stem.weight": [4, 3, 3, 3], "b2.weight": [4, 3, 3, 3], "b1.weight": [3, 4, 3, 3],
              "head.weight": [3, 4, 1, 1], "bn2._mean": [4]}


class ConvFlattenLinear(nn.Layer):
    def __init__(self):
        super().__init__()
        self.c0 = nn.Conv2D(3, 6, 3)
        self.pool = nn.MaxPool2D(2, 2)
        self.fc = nn.Linear(6 * 3 * 3, 5)

    def forward(self, x):
        return self.fc(fw.flatten(self.pool(fw.nn.functional.relu(self.c0(x))), 1))

    @staticmethod
    def zero(m, plan):
        a = plan["c0.weight"]
        _z(m.c0.weight, a, 0), _z(m.c0.bias, a, 0)
        rows = (np.asarray(a)[:, None] * 9 + np.arange(9)).ravel()
        _z(m.fc.weight, rows, 0)

    shapes = {"c0.weight": [3, 3, 3, 3], "fc.weight": [27, 5]}


class Depthwise(nn.Layer):
    def __init__(self):
        super().__init__()
        self.pw = nn.Conv2D(3, 8, 1, bias_attr=False)
        self.bn0 = nn.BatchNorm2D(8)
        self.dw = nn.Conv2D(8, 8, 3, padding=1, groups=8)
        self.bn1 = nn.BatchNorm2D(8)
        self.out = nn.Conv2D(8, 4, 1)

    def forward(self, x):
        h = fw.nn.functional.relu6(self.bn0(self.pw(x)))
        return self.out(fw.nn.functional.relu6(self.bn1(self.dw(h))))

    @staticmethod
    def zero(m, plan):
        a = plan["pw.weight"]
        for t in (m.pw.weight, m.bn0.weight, m.bn0.bias, m.dw.weight, m.dw.bias, m.bn1.weight,
                  m.bn1.bias):
            _z(t, a, 0)
        _z(m.out.weight, a, 1)

    shapes = {"pw.weight": [4, 3, 1, 1], "dw.weight": [4, 1, 3, 3], "out.weight": [4, 4, 1, 1]}


def _z(t, idx, axis):
    a = t.numpy().copy()
    sl = [slice(None)] * a.ndim
    sl[axis] = np.asarray(idx, np.int64)
    a[tuple(sl)] = 0
    t.set_value(a)


PATTERNS = {"chain": (Chain, 10), "conv_bn_conv": (ConvBNConv, 10), "residual": (Residual, 9),
            "flatten_linear": (ConvFlattenLinear, 8), "depthwise": (Depthwise, 9)}


def _build(cls, seed):
    fw.seed(seed)
    return _randomize(cls(), seed).eval()


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_pruned_equals_zeroed(pattern, criterion):
    cls, hw = PATTERNS[pattern]
    model, ref = _build(cls, 3), _build(cls, 3)
    x = fw.to_tensor(np.random.default_rng(1).standard_normal((2, 3, hw, hw)).astype("float32"))
    pruner = slim.ChannelPruner(model, [1, 3, hw, hw], criterion=criterion)
    before = model(x).numpy()
    plan = pruner.prune(0.5)
    for idx in plan.values():
        assert len(idx) > 0
    cls.zero(ref, plan)
    want = ref(x).numpy()
    got = model(x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert np.abs(before - want).max() > 1e-3  # pruning changed something
    params = dict(model.named_parameters())
    params.update(dict(model.named_buffers()))
    for name, shape in cls.shapes.items():
        assert list(params[name].shape) == shape, name
    # the same Layer classes, with their recorded sizes updated
    for _, layer in model.named_sublayers():
        if isinstance(layer, nn.Conv2D):
            assert layer._out_channels == layer.weight.shape[0]
            assert layer._in_channels == layer.weight.shape[1] * layer._groups
        if isinstance(layer, nn.BatchNorm2D):
            assert layer._num_features == layer.weight.shape[0]
        if isinstance(layer, nn.Linear):
            assert layer._in_features == layer.weight.shape[0]


def _filters(w, axis=0):
    a = np.moveaxis(np.asarray(w, np.float64), axis, 0)
    return a.reshape(a.shape[0], -1)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_plan_prunes_lowest_scores(criterion):
    model = _build(Residual, 4)
    pruner = slim.ChannelPruner(model, [1, 3, 9, 9], criterion=criterion)
    plan = pruner.plan({"stem": 0.5, "b1.weight": 0.34})
    # the residual group is scored on both producers' filters, concatenated
    f = np.concatenate([_filters(model.stem.weight.numpy()), _filters(model.b2.weight.numpy())],
                       axis=1)
    ref = {"l1": lambda m: np.abs(m).sum(1), "l2": lambda m: np.sqrt((m * m).sum(1)),
           "fpgm": lambda m: np.array([sum(np.linalg.norm(a - b) for b in m) for a in m])}
    s = ref[criterion](f)
    assert sorted(plan["stem.weight"]) == sorted(np.argsort(s, kind="stable")[:4])
    s1 = ref[criterion](_filters(model.b1.weight.numpy()))
    assert sorted(plan["b1.weight"]) == sorted(np.argsort(s1, kind="stable")[:2])


def test_criteria_against_loops():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((7, 5))
    np.testing.assert_allclose(l1_norm(m), [sum(abs(v) for v in r) for r in m])
    np.testing.assert_allclose(l2_norm(m), [np.sqrt(sum(v * v for v in r)) for r in m])
    d = [[np.sqrt(((a - b) ** 2).sum()) for b in m] for a in m]
    np.testing.assert_allclose(fpgm(m), np.sum(d, axis=1), rtol=1e-7)
    # FPGM ranks the filter nearest to the others' median lowest
    m2 = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    assert int(np.argmin(fpgm(m2))) == 0


def test_groups_and_fixed_reasons():
    class Grouped(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2D(3, 8, 3)
            self.g = nn.Conv2D(8, 8, 3, groups=2)
            self.c1 = nn.Conv2D(8, 4, 1)
            self.c2 = nn.Conv2D(4, 2, 1)

        def forward(self, x):
            return self.c2(self.c1(self.g(self.c0(x))))

    model = _build(Grouped, 0)
    pruner = slim.ChannelPruner(model, [1, 3, 9, 9])
    by = {g.name: g for g in pruner.groups}
    assert not by["c0.weight"].prunable and "grouped conv" in by["c0.weight"].reasons[0]
    # the grouped conv's outputs prune, as two equal blocks
    assert by["g.weight"].prunable and by["g.weight"].blocks == 2
    assert by["c1.weight"].prunable
    assert "reaches the model output" in by["c2.weight"].reasons
    assert [g.name for g in pruner.prunable_groups()] == ["g.weight", "c1.weight"]
    # keys: group, layer, structured or unique (PaddleSlim's) parameter name
    want = pruner.plan({"c1.weight": 0.5})["c1.weight"]
    for key in ("c1", "c1.bias", model.c1.weight.name):
        np.testing.assert_array_equal(pruner.plan({key: 0.5})["c1.weight"], want)
    with pytest.raises(ValueError, match="two ratios"):
        pruner.plan({"c1": 0.5, "c1.bias": 0.25})
    with pytest.raises(ValueError, match="c0.weight.*grouped conv"):
        pruner.prune({"c0": 0.5})
    with pytest.raises(KeyError, match="no channel group for 'nope'.*c1.weight"):
        pruner.prune({"nope": 0.5})
    with pytest.raises(ValueError, match=r"must be in \[0, 1\)"):
        pruner.prune({"c1": 1.0})
    with pytest.raises(ValueError, match="unknown criterion 'l3'"):
        slim.ChannelPruner(model, [1, 3, 9, 9], criterion="l3")
    with pytest.raises(TypeError, match="'model' must be a fw.nn.Layer"):
        slim.ChannelPruner(lambda x: x, [1, 3, 9, 9])
    x = fw.ones([1, 3, 9, 9])
    y = model(x).numpy()
    pruner.prune({"c1": 0.5})
    assert model.c1.weight.shape == [2, 8, 1, 1] and model.c2.weight.shape == [2, 2, 1, 1]
    assert model(x).shape == list(y.shape)


def test_linear_features_and_round_to():
    class MLP(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2D(1, 16, 3)
            self.f0 = nn.Linear(16 * 4, 32)
            self.f1 = nn.Linear(32, 3)

        def forward(self, x):
            return self.f1(fw.nn.functional.relu(self.f0(fw.flatten(self.c0(x), 1))))

    model, ref = _build(MLP, 5), _build(MLP, 5)
    x = fw.to_tensor(np.random.default_rng(2).standard_normal((3, 1, 4, 4)).astype("float32"))
    pruner = slim.ChannelPruner(model, [1, 1, 4, 4], prune_linear=True, round_to=8)
    assert {g.name for g in pruner.prunable_groups()} == {"c0.weight", "f0.weight"}
    plan = pruner.prune(0.4)  # 16 * 0.6 = 9.6 -> 8 kept; 32 * 0.6 = 19.2 -> 16 kept
    assert len(plan["c0.weight"]) == 8 and len(plan["f0.weight"]) == 16
    a, b = plan["c0.weight"], plan["f0.weight"]
    _z(ref.c0.weight, a, 0), _z(ref.c0.bias, a, 0)
    _z(ref.f0.weight, (np.asarray(a)[:, None] * 4 + np.arange(4)).ravel(), 0)
    _z(ref.f0.weight, b, 1), _z(ref.f0.bias, b, 0), _z(ref.f1.weight, b, 0)
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-5, atol=1e-5)
    assert model.f0.weight.shape == [32, 16] and model.f1.weight.shape == [16, 3]


def test_pruned_model_trains_and_keeps_param_attrs():
    model = _build(ConvBNConv, 1)
    model.c1.weight.optimize_attr = {"learning_rate": 0.5}
    slim.L1NormFilterPruner(model, [1, 3, 10, 10]).prune(0.5)
    assert model.c1.weight.optimize_attr == {"learning_rate": 0.5}
    assert isinstance(model.c1.weight, nn.Parameter) and not model.c1.weight.stop_gradient
    model.train()
    opt = fw.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    x = fw.ones([2, 3, 10, 10])
    w0 = model.c0.weight.numpy().copy()
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    assert model.c0.weight.shape == [5, 3, 3, 3]
    assert not np.array_equal(model.c0.weight.numpy(), w0)


def test_sensitivity_equals_pruned_copies():
    model = _build(Residual, 7)
    x = fw.to_tensor(np.random.default_rng(3).standard_normal((4, 3, 9, 9)).astype("float32"))
    y0 = model(x).numpy()

    def metric(m):  # higher is better
        return 10.0 - float(np.abs(m(x).numpy() - y0).mean())

    pruner = slim.FPGMFilterPruner(model, [1, 3, 9, 9])
    sens = pruner.sensitive(metric, ratios=(0.25, 0.5))
    assert set(sens) == {"stem.weight", "b1.weight"}
    np.testing.assert_array_equal(model(x).numpy(), y0)  # restored
    for name in sens:
        for r, drop in sens[name].items():
            copy = _build(Residual, 7)
            slim.FPGMFilterPruner(copy, [1, 3, 9, 9]).prune({name: r})
            assert drop == pytest.approx((10.0 - metric(copy)) / 10.0, rel=1e-4, abs=1e-6)
            assert drop > 0
    # sensitivity-driven ratios: a budget between the two measured drops of a group
    name = "stem.weight"
    budget = 0.5 * (sens[name][0.25] + sens[name][0.5])
    ratios = slim.ratios_by_sensitivity({name: sens[name]}, budget)
    assert 0.25 < ratios[name] < 0.5, (sens, ratios)
    plan = pruner.prune(ratios)
    assert len(plan[name]) == round(8 * ratios[name]) and model.stem.weight.shape[0] == \
        8 - len(plan[name])


def test_ratios_by_sensitivity():
    sens = {"a": {0.1: 0.0, 0.2: 0.01, 0.3: 0.05}, "b": {0.1: 0.2, 0.2: 0.3},
            "c": {0.1: 0.0, 0.5: 0.001}}
    r = slim.ratios_by_sensitivity(sens, 0.02)
    assert r["a"] == pytest.approx(0.2 + 0.1 * (0.02 - 0.01) / 0.04)
    assert r["b"] == pytest.approx(0.1 * 0.02 / 0.2)
    assert r["c"] == 0.5


def test_mean_head_and_unknown_ops_fix():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2D(3, 8, 3)
            self.c1 = nn.Conv2D(8, 6, 3)
            self.c2 = nn.Conv2D(3, 4, 3)
            self.fc = nn.Linear(6, 2)

        def forward(self, x):
            h = self.c1(fw.nn.functional.relu(self.c0(x))).mean(axis=[2, 3])  # [N, 6]
            side = fw.concat([self.c2(x), self.c2(x)], axis=1).sum()  # sum over all: fixes
            return self.fc(h) + side

    model, ref = _build(Net, 6), _build(Net, 6)
    pruner = slim.ChannelPruner(model, [1, 3, 7, 7])
    by = {g.name: g for g in pruner.groups}
    assert by["c0.weight"].prunable and by["c1.weight"].prunable
    assert not by["c2.weight"].prunable and "reduces every axis" in by["c2.weight"].reasons[0]
    x = fw.to_tensor(np.random.default_rng(4).standard_normal((2, 3, 7, 7)).astype("float32"))
    plan = pruner.prune(0.5)
    a, b = plan["c0.weight"], plan["c1.weight"]
    _z(ref.c0.weight, a, 0), _z(ref.c0.bias, a, 0), _z(ref.c1.weight, a, 1)
    _z(ref.c1.weight, b, 0), _z(ref.c1.bias, b, 0), _z(ref.fc.weight, b, 0)
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-4, atol=1e-4)
    assert model.fc.weight.shape == [3, 2] and model.c2.weight.shape == [4, 3, 3, 3]


def test_prune_a_converted_model():
    """A model already converted by fw.jit.to_static (and run) prunes, and its next
    call runs the pruned weights, not the program cached before pruning."""
    model, ref = _build(ConvBNConv, 8), _build(ConvBNConv, 8)
    x = fw.to_tensor(np.random.default_rng(5).standard_normal((2, 3, 10, 10)).astype("float32"))
    model = fw.jit.to_static(model)
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-5, atol=1e-5)
    plan = slim.ChannelPruner(model, [1, 3, 10, 10]).prune(0.5)
    ConvBNConv.zero(ref, plan)
    assert model.c0.weight.shape == [5, 3, 3, 3]
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-4, atol=1e-4)


def test_channel_last_conv_bn_conv():
    class NHWC(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2D(3, 8, 3, padding=1, data_format="NHWC")
            self.bn = nn.BatchNorm2D(8, data_format="NHWC")
            self.c1 = nn.Conv2D(8, 4, 3, data_format="NHWC")

        def forward(self, x):
            return self.c1(fw.nn.functional.relu(self.bn(self.c0(x))))

    model, ref = _build(NHWC, 9), _build(NHWC, 9)
    x = fw.to_tensor(np.random.default_rng(6).standard_normal((2, 7, 7, 3)).astype("float32"))
    pruner = slim.ChannelPruner(model, [1, 7, 7, 3])
    assert [g.name for g in pruner.prunable_groups()] == ["c0.weight"]
    plan = pruner.prune(0.5)
    a = plan["c0.weight"]
    _z(ref.c0.weight, a, 0), _z(ref.c0.bias, a, 0), _z(ref.bn.weight, a, 0)
    _z(ref.bn.bias, a, 0), _z(ref.c1.weight, a, 1)
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-4, atol=1e-4)
    assert model.c0.weight.shape == [4, 3, 3, 3] and model.bn._mean.shape == [4]


def test_interpolate_passes_channels():
    class Up(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2D(3, 6, 3, padding=1)
            self.c1 = nn.Conv2D(6, 2, 3)

        def forward(self, x):
            h = fw.nn.functional.interpolate(self.c0(x), scale_factor=2, mode="nearest")
            return self.c1(h)

    model, ref = _build(Up, 10), _build(Up, 10)
    x = fw.to_tensor(np.random.default_rng(7).standard_normal((2, 3, 5, 5)).astype("float32"))
    plan = slim.ChannelPruner(model, [1, 3, 5, 5]).prune(0.5)
    a = plan["c0.weight"]
    _z(ref.c0.weight, a, 0), _z(ref.c0.bias, a, 0), _z(ref.c1.weight, a, 1)
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-4, atol=1e-4)
    assert model.c1.weight.shape == [2, 3, 3, 3]


def test_reshape_and_squeeze_heads():
    class Heads(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Conv2D(3, 6, 3)
            self.fc0 = nn.Linear(6 * 9, 4)
            self.c1 = nn.Conv2D(3, 8, 3)
            self.fc1 = nn.Linear(8, 4)
            self.pool = nn.AdaptiveAvgPool2D(1)

        def forward(self, x):
            a = self.c0(x)
            a = a.reshape([0, -1])  # a flatten written as a reshape
            if self.hard_coded:
                a = a.reshape([-1, 6 * 9])  # would break once c0 shrinks
            b = self.pool(self.c1(x)).squeeze(axis=[2, 3])
            return self.fc0(a) + self.fc1(b)

    Heads.hard_coded = True
    by = {g.name: g for g in slim.ChannelPruner(_build(Heads, 11), [1, 3, 5, 5]).groups}
    assert "only reshape([0, -1])" in " ".join(by["c0.weight"].reasons)
    Heads.hard_coded = False
    model, ref = _build(Heads, 11), _build(Heads, 11)
    x = fw.to_tensor(np.random.default_rng(8).standard_normal((2, 3, 5, 5)).astype("float32"))
    pruner = slim.ChannelPruner(model, [1, 3, 5, 5])
    assert {g.name for g in pruner.prunable_groups()} == {"c0.weight", "c1.weight"}
    plan = pruner.prune(0.5)
    a, b = plan["c0.weight"], plan["c1.weight"]
    _z(ref.c0.weight, a, 0), _z(ref.c0.bias, a, 0)
    _z(ref.fc0.weight, (np.asarray(a)[:, None] * 9 + np.arange(9)).ravel(), 0)
    _z(ref.c1.weight, b, 0), _z(ref.c1.bias, b, 0), _z(ref.fc1.weight, b, 0)
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-4, atol=1e-4)
    assert model.fc0.weight.shape == [27, 4] and model.fc1.weight.shape == [4, 4]


class DenseConcat(nn.Layer):
    """DenseNet/Inception-style: two branches concatenated along the channels, a
    BatchNorm over the concat, a conv reading it, and a dense connection
    concat([x1, conv(x1)]) whose first part is a space used elsewhere too."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2D(3, 4, 3, padding=1)
        self.b = nn.Conv2D(3, 6, 1)
        self.bn = nn.BatchNorm2D(10)
        self.c = nn.Conv2D(10, 8, 3, padding=1)
        self.d = nn.Conv2D(8, 4, 1)
        self.head = nn.Conv2D(12, 2, 1)

    def forward(self, x):
        h = fw.concat([self.a(x), self.b(x)], axis=1)
        x1 = fw.nn.functional.relu(self.c(fw.nn.functional.relu(self.bn(h))))
        dense = fw.concat([x1, self.d(x1)], axis=1)
        return self.head(dense)

    @staticmethod
    def zero(m, plan):
        a, b, c, d = (np.asarray(plan[k]) for k in ("a.weight", "b.weight", "c.weight",
                                                   "d.weight"))
        _z(m.a.weight, a, 0), _z(m.a.bias, a, 0), _z(m.b.weight, b, 0), _z(m.b.bias, b, 0)
        for t in (m.bn.weight, m.bn.bias):
            _z(t, a, 0), _z(t, 4 + b, 0)
        _z(m.c.weight, a, 1), _z(m.c.weight, 4 + b, 1)
        _z(m.c.weight, c, 0), _z(m.c.bias, c, 0), _z(m.d.weight, c, 1), _z(m.head.weight, c, 1)
        _z(m.d.weight, d, 0), _z(m.d.bias, d, 0), _z(m.head.weight, 8 + d, 1)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_concat_along_channels(criterion):
    model, ref = _build(DenseConcat, 12), _build(DenseConcat, 12)
    x = fw.to_tensor(np.random.default_rng(9).standard_normal((2, 3, 6, 6)).astype("float32"))
    pruner = slim.ChannelPruner(model, [1, 3, 6, 6], criterion=criterion)
    assert {g.name for g in pruner.prunable_groups()} == {"a.weight", "b.weight", "c.weight",
                                                          "d.weight"}
    bn = [m for m in pruner.group("b").members if m.role == "norm"]
    assert {m.offset for m in bn} == {4}
    with pruner.zeroed(pruner.plan(0.5)):  # what sensitive() measures, offsets included
        zeroed = model(x).numpy()
    plan = pruner.prune(0.5)
    DenseConcat.zero(ref, plan)
    np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(zeroed, ref(x).numpy(), rtol=1e-4, atol=1e-4)
    assert model.bn.weight.shape == [5] and model.c.weight.shape == [4, 5, 3, 3]
    assert model.head.weight.shape == [2, 6, 1, 1] and model.bn._num_features == 5


class _ResNeXtish(nn.Layer):
    """1x1 -> grouped 3x3 (4 groups) -> BN -> relu -> 1x1, the ResNeXt bottleneck."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2D(3, 16, 1)
        self.g = nn.Conv2D(16, 16, 3, padding=1, groups=4)
        self.bn = nn.BatchNorm2D(16)
        self.b = nn.Conv2D(16, 8, 1)
        self.head = nn.Conv2D(8, 2, 1)

    def forward(self, x):
        h = fw.nn.functional.relu(self.bn(self.g(fw.nn.functional.relu(self.a(x)))))
        return self.head(fw.nn.functional.relu(self.b(h)))


@pytest.mark.parametrize("criterion", ["l1", "fpgm"])
def test_grouped_conv_outputs_prune_per_group(tmp_path, criterion):
    """A grouped conv keeps its groups: each of its 4 groups loses the same number of
    filters (the lowest scores within the group), BN and the next 1x1 conv lose the
    matching rows; the result equals the original with those channels zeroed, and it
    saves and serves. Its input channels (the first conv's outputs) stay fixed."""
    infer = pytest.importorskip("fw.inference")
    from fw.jit import InputSpec, save

    model = _build(_ResNeXtish, 7)
    for bn_param in (model.bn._mean, model.bn._variance):  # non-trivial statistics
        bn_param.set_value(fw.to_tensor(np.random.default_rng(3).uniform(
            0.5, 1.5, 16).astype("float32")))
    pruner = slim.ChannelPruner(model, [1, 3, 6, 6], criterion=criterion)
    g = pruner.group("g")
    assert g.prunable and g.blocks == 4 and g.channels == 16
    assert not pruner.group("a").prunable and "grouped conv" in pruner.group("a").reasons[0]
    plan = pruner.plan({"g": 0.5})
    pruned = plan[g.name]
    # two of the four filters of every group, the lowest-scored within it
    assert [int(np.sum(pruned // 4 == k)) for k in range(4)] == [2, 2, 2, 2]
    scores = pruner.scores(g)
    for k in range(4):
        block = np.arange(4 * k, 4 * k + 4)
        gone = [c for c in block if c in pruned]
        kept = [c for c in block if c not in pruned]
        assert max(scores[gone]) <= min(scores[kept])
    x = fw.to_tensor(np.random.default_rng(8).standard_normal((2, 3, 6, 6)).astype("float32"))
    with pruner.zeroed(plan):
        want = model(x).numpy()
    pruner.prune({"g": 0.5})
    assert model.g.weight.shape == [8, 4, 3, 3] and model.g._groups == 4
    assert model.g._out_channels == 8 and model.g._in_channels == 16
    assert model.bn._mean.shape == [8] and model.b.weight.shape == [8, 8, 1, 1]
    got = model(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    path = save(model, str(tmp_path / "m"), input_spec=[InputSpec([-1, 3, 6, 6], "float32")])
    (served,) = infer.create_predictor(infer.Config(path)).run([x.numpy()])
    np.testing.assert_allclose(np.asarray(served), got, rtol=1e-4, atol=1e-4)
    # and again: the pruned grouped conv (2 filters per group) prunes to 1 per group
    assert pruner.group("g").blocks == 4
    assert [int(np.sum(p // 2 == k)) for k in range(4)
            for p in [pruner.plan({"g": 0.5})[pruner.group("g").name]]] == [1, 1, 1, 1]
