"""Layer mechanics: registration, traversal, state dicts, hooks, modes, dtype/device
moves, repr, containers, Parameter/ParamAttr and tracing a layer into a program."""

import copy
from collections import OrderedDict

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.core.ir import TensorType, trace
from fw.nn import initializer as I


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 2)
        self.register_buffer("steps", fw.zeros([1]))
        self.register_buffer("scratch", fw.zeros([3]), persistable=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_registration_by_assignment():
    m = MLP()
    assert list(m._sub_layers) == ["fc1", "act", "fc2"]
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                     "fc2.bias"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert len(m.parameters()) == 4 and len(m.buffers()) == 2
    assert m.parameters(include_sublayers=False) == []
    assert [n for n, _ in m.named_sublayers()] == ["fc1", "act", "fc2"]
    assert m.sublayers(include_self=True)[0] is m
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "fc2"]
    assert "fc1" in dir(m) and "steps" in dir(m)
    # a parameter assigned to a new attribute is registered; a plain tensor is not
    m.extra = fw.create_parameter([2], "float32")
    m.plain = fw.ones([2])
    assert "extra" in m._parameters and "plain" not in m._parameters
    del m.extra
    assert "extra" not in m._parameters
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        m.missing  # noqa: B018


def test_registration_rules_errors():
    m = MLP()
    with pytest.raises(TypeError, match="is a parameter"):
        m.fc1.weight = fw.ones([4, 8])
    m.fc1.bias = None  # allowed: removes the bias
    assert m.fc1.bias is None and len(m.fc1.parameters()) == 1
    with pytest.raises(TypeError, match="is a buffer"):
        m.steps = 3
    m.steps = fw.ones([1])  # replaces the buffer
    assert m.state_dict()["steps"].tolist() == [1.0]
    with pytest.raises(TypeError, match="must be a Parameter"):
        m.add_parameter("p", fw.ones([1]))
    with pytest.raises(KeyError):
        m.register_buffer("a.b", fw.ones([1]))

    class Bad(nn.Layer):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(RuntimeError, match="super"):
        Bad()

    class BadParam(nn.Layer):  # a parameter (not a sublayer) before super().__init__()
        def __init__(self):
            self.w = nn.Parameter(fw.ones([1]))

    with pytest.raises(RuntimeError, match="super"):
        BadParam()


def test_parameter_attributes_and_repr():
    p = fw.create_parameter([2, 3], "float32", attr=fw.ParamAttr(
        name="w", learning_rate=0.5, trainable=False, need_clip=False))
    assert isinstance(p, nn.Parameter) and isinstance(p, fw.Tensor)
    assert p.name == "w" and p.persistable and p.optimize_attr == {"learning_rate": 0.5}
    assert not p.trainable and p.stop_gradient and not p.need_clip
    p.trainable = True
    assert not p.stop_gradient
    assert repr(p).startswith("Parameter containing:\nTensor(shape=[2, 3], dtype=float32")
    q = nn.Parameter(fw.ones([2]))
    assert q.trainable and q.tolist() == [1.0, 1.0]
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c.name == "w" and c._data is not p._data


def test_parameter_names_are_unique_and_stable():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    names = [p.name for p in a.parameters() + b.parameters()]
    assert len(set(names)) == 4
    assert a.weight.name.startswith(a.full_name() + ".w_")
    assert a.bias.name.startswith(a.full_name() + ".b_")
    assert a.full_name().startswith("linear_")
    named = nn.Linear(2, 2, weight_attr=fw.ParamAttr(name="my_w"))
    assert named.weight.name == "my_w"


def test_state_dict_structured_names_and_persistable_buffers():
    m = MLP()
    sd = m.state_dict()
    # own parameters, own persistable buffers, then each sublayer's (Paddle's order)
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert sd["fc1.weight"] is m.fc1.weight
    assert list(m.state_dict(structured_name_prefix="net.")) == ["net." + k for k in sd]
    assert list(m.state_dict(include_sublayers=False)) == ["steps"]


def test_set_state_dict_report():
    m = MLP()
    src = MLP()
    sd = OrderedDict((k, v.numpy().copy()) for k, v in src.state_dict().items())
    del sd["fc2.bias"]
    sd["unknown"] = np.zeros(3, np.float32)
    sd["fc2.weight"] = np.zeros([3, 3], np.float32)  # shape mismatch
    sd["steps"] = np.zeros([1], np.float64)  # dtype mismatch
    before = m.fc2.weight.numpy().copy()
    with pytest.warns(UserWarning, match="not loaded"):
        report = m.set_state_dict(sd)
    missing, unexpected = report  # Paddle's return value
    assert missing == ["fc2.bias"] and unexpected == ["unknown"]
    assert report.matched_keys == ["fc1.weight", "fc1.bias"]
    assert [mm.key for mm in report.mismatched_keys] == ["steps", "fc2.weight"]
    assert report.mismatched_keys[1].expected_shape == [8, 2]
    assert report.mismatched_keys[1].got_shape == [3, 3]
    assert report.mismatched_keys[0].got_dtype == "float64"
    assert not report.ok
    np.testing.assert_array_equal(m.fc2.weight.numpy(), before)  # not loaded
    np.testing.assert_array_equal(m.fc1.weight.numpy(), sd["fc1.weight"])
    # loading keeps the parameter objects (optimizers hold references)
    w = m.fc1.weight
    m.set_state_dict(src.state_dict())
    assert m.fc1.weight is w
    assert m.load_dict is not None


def test_load_report_ok_needs_every_key_loaded():
    # each kind of failure alone makes the load not ok
    full = {k: v.numpy() for k, v in nn.Linear(2, 3).state_dict().items()}
    assert nn.Linear(2, 3).set_state_dict(full).ok
    with pytest.warns(UserWarning):
        cases = [
            {"weight": full["weight"]},  # bias missing
            dict(full, extra=np.zeros(1, np.float32)),  # an unexpected key
            dict(full, bias=np.zeros(4, np.float32)),  # a shape mismatch
        ]
        reports = [nn.Linear(2, 3).set_state_dict(sd) for sd in cases]
    assert [r.ok for r in reports] == [False, False, False]


def test_set_state_dict_by_parameter_name():
    m = nn.Linear(2, 2)
    vals = {m.weight.name: np.ones([2, 2], np.float32), m.bias.name: np.ones([2], np.float32)}
    report = m.set_state_dict(vals, use_structured_name=False)
    assert report.ok and m.weight.numpy().sum() == 4


def test_hooks_modify_and_remove():
    m = nn.Linear(2, 2, weight_attr=I.Constant(1.0), bias_attr=False)
    calls = []
    pre = m.register_forward_pre_hook(lambda layer, inp: (inp[0] * 2,))
    post = m.register_forward_post_hook(lambda layer, inp, out: calls.append(out) or out + 1)
    out = m(fw.ones([1, 2]))
    assert out.tolist() == [[5.0, 5.0]] and calls[0].tolist() == [[4.0, 4.0]]
    pre.remove()
    post.remove()
    assert m(fw.ones([1, 2])).tolist() == [[2.0, 2.0]]
    post.remove()  # removing twice is harmless


def test_train_eval_dropout_and_batch_norm():
    net = nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1D(3, momentum=0.5))
    assert net.training and net[0].training
    fw.seed(0)
    x = fw.randn([64, 3]) + 3.0
    net(x)
    bn = net[1]
    # training: dropout zeroes about half, running stats move towards the batch stats
    dropped = net[0](x)
    assert 0.3 < float((dropped == 0).astype("float32").mean()) < 0.7
    assert np.all(bn._mean.numpy() > 0.5)
    net.eval()
    assert not net.training and not net[0].training and not bn.training
    m_before = bn._mean.numpy().copy()
    out = net(x)
    np.testing.assert_array_equal(bn._mean.numpy(), m_before)  # eval leaves stats alone
    expect = (x.numpy() - m_before) / np.sqrt(bn._variance.numpy() + 1e-5)
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-5, atol=1e-5)
    net.train()
    assert bn.training


def test_batch_norm_running_stat_update_formula():
    bn = nn.BatchNorm1D(2, momentum=0.9)
    x = fw.to_tensor([[1.0, 10.0], [3.0, 20.0]])
    bn(x)
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * np.array([2.0, 15.0]), rtol=1e-6)
    np.testing.assert_allclose(bn._variance.numpy(), 0.9 + 0.1 * np.array([1.0, 25.0]),
                               rtol=1e-6)
    bn2 = nn.BatchNorm1D(2, use_global_stats=True)
    bn2(x)
    assert bn2._mean.tolist() == [0.0, 0.0]


def test_apply_to_and_casts():
    m = MLP()
    seen = []
    m.apply(lambda layer: seen.append(type(layer).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "MLP"]
    w = m.fc1.weight
    m.to(dtype="float64")
    assert m.fc1.weight is w and w.dtype == fw.float64 and m.steps.dtype == fw.float64
    assert m(fw.ones([1, 4], dtype="float64")).dtype == fw.float64
    m.float()
    assert w.dtype == fw.float32
    m.bfloat16(excluded_layers=[nn.Linear])
    assert w.dtype == fw.float32 and m.steps.dtype == fw.bfloat16
    m.half()
    assert w.dtype == fw.float16
    m.double()
    assert w.dtype == fw.float64
    m.to(device="cpu")
    assert w.place.kind == "cpu"


def test_casts_set_the_dtype_of_parameters_created_later():
    # Layer.float()/double()/to(dtype): the layer itself (not only its sublayers)
    # creates its next parameters in the new dtype
    m = MLP()
    m.double()
    assert m.create_parameter([2]).dtype == fw.float64
    assert m.fc1.create_parameter([2]).dtype == fw.float64
    m.to(dtype="float16")
    assert m.create_parameter([2]).dtype == fw.float16


@pytest.mark.parametrize("args,place", [((), "gpu:0"), ((1,), "gpu:1")])
def test_cuda_moves_to_the_numbered_gpu(monkeypatch, args, place):
    # Paddle: cuda() is the current GPU (0), cuda(i) the i-th. The move is made by
    # Tensor.to, so record where each parameter is sent (no GPU needed)
    from fw.core.place import parse_place

    sent = []
    monkeypatch.setattr(fw.Tensor, "to", lambda t, device=None, **kw: sent.append(device) or t)
    m = nn.Linear(2, 3)
    assert m.cuda(*args) is m
    assert [str(parse_place(d)) for d in sent] == [place, place]  # weight and bias


def test_clear_gradients():
    m = nn.Linear(2, 1)
    m(fw.ones([3, 2])).sum().backward()
    assert m.weight.grad is not None
    m.clear_gradients()
    assert m.weight.grad.numpy().sum() == 0
    m.clear_gradients(set_to_zero=False)
    assert m.weight.grad is None


def test_repr_is_nested_and_readable():
    r = repr(MLP())
    assert r == ("MLP(\n"
                 "  (fc1): Linear(in_features=4, out_features=8, dtype=float32)\n"
                 "  (act): ReLU()\n"
                 "  (fc2): Linear(in_features=8, out_features=2, dtype=float32)\n"
                 ")")
    conv = nn.Conv2D(3, 4, 3, stride=2)
    assert repr(conv) == "Conv2D(3, 4, kernel_size=[3, 3], stride=[2, 2])"
    nested = repr(nn.Sequential(nn.Sequential(nn.ReLU())))
    assert nested == "Sequential(\n  (0): Sequential(\n    (0): ReLU()\n  )\n)"


def test_sequential_forms_and_indexing():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert s[0] is a and s[-1] is c and len(s) == 3
    assert isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    named = nn.Sequential(("first", a), ("second", c))
    assert list(named.state_dict())[0] == "first.weight"
    od = nn.Sequential(OrderedDict([("x", a), ("y", b)]))
    assert od["x"] is a
    s.append(nn.Sigmoid())
    assert len(s) == 4
    del s[3]
    assert len(s) == 3 and s(fw.ones([5, 2])).shape == [5, 1]


def test_layer_list_and_dict():
    ll = nn.LayerList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ll) == 3 and len(ll.parameters()) == 6
    ll.append(nn.ReLU())
    ll.insert(0, nn.Tanh())
    assert isinstance(ll[0], nn.Tanh) and len(ll) == 5
    assert list(ll._sub_layers) == ["0", "1", "2", "3", "4"]
    del ll[0]
    assert isinstance(ll[0], nn.Linear)
    assert isinstance(ll[1:3], nn.LayerList) and len(ll[1:3]) == 2
    pairs = nn.LayerDict()
    pairs.update([("p", nn.ReLU()), ("q", nn.Tanh())])  # (key, layer) pairs too
    assert list(pairs.keys()) == ["p", "q"]
    with pytest.raises((TypeError, ValueError)):
        pairs.update([("r", nn.ReLU(), 3)])
    d = nn.LayerDict(OrderedDict([("a", nn.ReLU()), ("b", nn.Linear(1, 1))]))
    assert list(d) == ["a", "b"] and "a" in d
    d["c"] = nn.Tanh()
    assert d.pop("a") is not None and list(d.keys()) == ["b", "c"]
    d.clear()
    assert len(d) == 0
    pl = nn.ParameterList([fw.create_parameter([2], "float32") for _ in range(2)])
    assert len(pl.parameters()) == 2 and list(pl.state_dict()) == ["0", "1"]
    pd = nn.ParameterDict({"w": fw.create_parameter([1], "float32")})
    assert list(pd.state_dict()) == ["w"]
    with pytest.raises(TypeError, match="Parameter"):
        pl.append(fw.ones([1]))


def test_torch_compat_aliases():
    assert nn.Module is nn.Layer and nn.ModuleList is nn.LayerList
    assert nn.ModuleDict is nn.LayerDict and nn.Conv2d is nn.Conv2D
    assert nn.AdaptiveMaxPool1d is nn.AdaptiveMaxPool1D and nn.LPPool1d is nn.LPPool1D
    assert nn.ReflectionPad3d is nn.ReflectionPad3D and nn.SiLU is nn.Silu


def test_tracing_a_layer_captures_named_parameters():
    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.BatchNorm1D(3))
    m.eval()
    prog = trace(m, [TensorType([-1, 4], "float32")])
    params = {a.label for a in prog.block.args if a.role == "param"}
    assert params == {p.name for p in m.parameters()}
    consts = {a.label for a in prog.block.args if a.role == "const"}
    assert {m[2]._mean.name, m[2]._variance.name} <= consts
    from fw.core.ir import run

    x = fw.randn([2, 4])
    np.testing.assert_allclose(run(prog, x).numpy(), m(x).numpy(), rtol=1e-6)


def test_parameters_are_initialised_eagerly_inside_a_trace():
    made = []

    def f(x):
        lin = nn.Linear(4, 2)  # created while the program is being built
        bn = nn.BatchNorm1D(2)
        bn.eval()
        made.append(lin)
        return bn(lin(x))

    prog = trace(f, [TensorType([-1, 4], "float32")])
    lin = made[0]
    assert isinstance(lin.weight._data, np.ndarray) and np.abs(lin.weight.numpy()).sum() > 0
    params = {a.label for a in prog.block.args if a.role == "param"}
    assert {lin.weight.name, lin.bias.name} <= params and len(params) == 4  # + bn's


def test_batch_norm_training_trace_records_state_updates():
    bn = nn.BatchNorm1D(3)
    before = bn._mean.numpy().copy()
    prog = trace(bn, [TensorType([-1, 3], "float32")])
    updates = dict(prog.updates)
    assert set(updates) == {bn._mean.name, bn._variance.name}
    assert list(updates[bn._mean.name].type.shape) == [3]
    np.testing.assert_array_equal(bn._mean.numpy(), before)  # nothing written while tracing


def test_traced_batch_norm_reads_the_live_running_stats_on_every_run():
    # the program must read the buffers as they are when it runs (not a copy taken
    # while tracing): two runs update the statistics as two eager training steps do
    from fw.core.ir import run

    bn, eager = nn.BatchNorm1D(3), nn.BatchNorm1D(3)
    prog = trace(bn, [TensorType([-1, 3], "float32")])
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = fw.to_tensor(rng.standard_normal((4, 3)).astype("float32"))
        np.testing.assert_allclose(run(prog, x).numpy(), eager(x).numpy(), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(bn._mean.numpy(), eager._mean.numpy(), rtol=1e-6)
        np.testing.assert_allclose(bn._variance.numpy(), eager._variance.numpy(), rtol=1e-6)
