"""The intermediate auto-parallel API in one process (1-rank meshes): the placements
each plan puts, plan-key matching, tied weights, config validation and errors,
ZeRO's pieces and gradient accumulation, local_map/LocalLayer/DistAttr/shard_scaler
edge cases, and the signatures and enum values of real Paddle 3.3.1 (a committed
fixture, tools/gen_intermediate_signatures.py). Multi-rank behaviour:
test_intermediate_ranks.py."""

from __future__ import annotations

import inspect
import json
import os
import warnings

import numpy as np
import pytest

import fw
import fw.distributed as dist
from fw.distributed.auto_parallel import intermediate as inter

HERE = os.path.dirname(os.path.abspath(__file__))
R, S0, S1 = dist.Replicate(), dist.Shard(0), dist.Shard(1)


@pytest.fixture(autouse=True)
def _no_global_mesh():
    dist.set_mesh(None)
    yield
    dist.set_mesh(None)


def _mesh(*names):
    return dist.ProcessMesh(np.zeros([1] * len(names), dtype=int).tolist(), dim_names=list(names))


class Block(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = fw.nn.Linear(4, 8)
        self.fc2 = fw.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc2(fw.nn.functional.relu(self.fc(x)))


class Net(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = fw.nn.Embedding(10, 4)
        self.layers = fw.nn.LayerList([Block(), Block()])
        self.head = fw.nn.Linear(4, 10, bias_attr=False)

    def forward(self, ids):
        h = self.emb(ids)
        for b in self.layers:
            h = b(h)
        return self.head(h)


# ------------------------------------------------------------------ Paddle parity
def _fixture():
    with open(os.path.join(HERE, "fixtures", "paddle_intermediate_signatures.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("name", sorted(_fixture()["signatures"]))
def test_signature_matches_paddle(name):
    want = _fixture()["signatures"][name]
    got = [[p.name, p.kind.name, None if p.default is inspect.Parameter.empty
            else repr(p.default)] for p in inspect.signature(getattr(dist, name)).parameters
           .values()]
    assert got == want


def test_enum_values_match_paddle():
    enums = _fixture()["enums"]
    assert {m.name: m.value for m in dist.SplitPoint} == enums["SplitPoint"]
    assert {k: v for k, v in vars(dist.ParallelMode).items() if k.isupper()} == \
        enums["ParallelMode"]


# ------------------------------------------------------------------ plans
def test_plans_put_the_documented_placements():
    mesh = _mesh("dp", "mp")
    net = Net()
    plan = {"emb": dist.ColWiseParallel(), r"layers\.\d+\.fc": dist.ColWiseParallel(),
            r"layers\.\d+\.fc2": dist.RowWiseParallel(), "head.weight": dist.ColWiseParallel()}
    net, _ = dist.parallelize(net, None, mesh, {"mp_config": {"parallelize_plan": plan}})
    assert net.emb.weight.placements == [R, S1]
    for b in net.layers:
        assert b.fc.weight.placements == [R, S1] and b.fc.bias.placements == [R, S0]
        assert b.fc2.weight.placements == [R, S0] and b.fc2.bias.placements == [R, R]
    assert net.head.weight.placements == [R, S1]
    out = net(fw.zeros([2, 3], dtype="int64"))
    assert out.shape == [2, 3, 10]
    assert dist.get_mesh() is mesh


def test_keys_match_whole_names_only():
    mesh = _mesh("mp")
    net = Net()
    with pytest.warns(UserWarning, match="matched no sublayer"):
        dist.parallelize(net, None, mesh, {"mp_config": {"parallelize_plan": {
            r"layers\.\d+\.f": dist.ColWiseParallel(), "nothing": dist.RowWiseParallel()}}})
    assert all(b.fc.weight.placements == [R] for b in net.layers)


def test_param_key_shards_one_parameter():
    mesh = _mesh("mp")
    lin = fw.nn.Sequential(fw.nn.Linear(4, 6))
    dist.parallelize(lin, None, mesh, {"mp_config": {"parallelize_plan": {
        "0.weight": dist.ColWiseParallel()}}})
    assert lin[0].weight.placements == [S1] and lin[0].bias.placements == [R]


def test_tied_weights_stay_one_parameter():
    mesh = _mesh("mp")
    a, b = fw.nn.Linear(4, 4), fw.nn.Linear(4, 4)
    b.weight = a.weight
    net = fw.nn.Sequential(a, b)
    opt = fw.optimizer.SGD(parameters=net.parameters())
    net, opt = dist.parallelize(net, opt, mesh, {"mp_config": {"parallelize_plan": {
        "0": dist.ColWiseParallel()}}})
    assert net[1].weight is net[0].weight and net[0].weight.placements == [S1]
    assert len(opt._parameter_list) == len({id(p) for p in opt._parameter_list}) == 3


def test_plan_errors_name_the_plan():
    with pytest.raises(ValueError, match="ColWiseParallel.*'mp'"):
        dist.ColWiseParallel().apply(fw.nn.Linear(2, 2), _mesh("dp"), [])
    conv = fw.nn.Conv2D(1, 1, 3)
    with pytest.raises(ValueError, match=r"ColWiseParallel.*\[1, 1, 3, 3\]"), \
            pytest.warns(UserWarning, match="Linear and Embedding"):
        dist.ColWiseParallel().apply(conv, _mesh("mp"), [])
    with pytest.raises(TypeError, match="PrepareLayerInput"):
        dist.PrepareLayerInput(None)
    with pytest.raises(ValueError, match="3-D"):
        relu = fw.nn.ReLU()
        dist.SequenceParallelBegin().apply(relu, _mesh("mp"), [])
        relu(fw.ones([2, 3]))


def test_sequence_parallel_plans_on_one_rank():
    mesh = _mesh("dp", "mp")
    x = dist.shard_tensor(fw.to_tensor(np.arange(24.0, dtype="float32").reshape(2, 3, 4)),
                          mesh, [S0, R])
    relu = fw.nn.ReLU()
    dist.SequenceParallelBegin().apply(relu, mesh, [])
    y = relu(x)
    # batch on dp (dim 1 after the transpose), sequence on mp (dim 0)
    assert y.shape == [3, 2, 4] and y.placements == [S1, S0]
    np.testing.assert_array_equal(y.numpy(), x.numpy().transpose(1, 0, 2))
    idn = fw.nn.Identity()
    dist.SequenceParallelEnd().apply(idn, mesh, [])
    z = idn(y)
    assert z.shape == [2, 3, 4] and z.placements == [S0, R]
    np.testing.assert_array_equal(z.numpy(), x.numpy())


# ------------------------------------------------------------------ parallelize config
def _par(*args):
    dist.set_mesh(None)       # each call brings its own mesh
    return dist.parallelize(*args)


def test_config_validation():
    net = Net()
    with pytest.warns(UserWarning, match="unchanged"):
        assert _par(net, None, _mesh("mp"), None) == (net, None)
    with pytest.raises(ValueError, match="no mesh"):
        _par(net, None, None, {"mp_config": {"parallelize_plan": {}}})
    with pytest.raises(ValueError, match="unknown config keys"):
        _par(net, None, _mesh("mp"), {"tp_config": {}})
    with pytest.raises(TypeError, match="'emb'"):
        _par(net, None, _mesh("mp"), {"mp_config": {"parallelize_plan": {
            "emb": "col"}}})
    with pytest.raises(ValueError, match="sharding_level"):
        _par(net, None, _mesh("dp"), {"dp_config": {"sharding_level": 4}})
    with pytest.raises(ValueError, match="'dp'"):
        _par(net, None, _mesh("mp"), {"dp_config": {"sharding_level": 1}})


def test_pp_config_checked_and_multi_stage_refused():
    net = Net()
    with pytest.raises(ValueError, match="matches no sublayer"):
        _par(net, None, _mesh("pp", "mp"),
                         {"pp_config": {"split_spec": {"blocks.0": dist.SplitPoint.END}}})
    two = dist.ProcessMesh([[0], [1]], dim_names=["pp", "mp"])
    with pytest.raises(NotImplementedError, match="sub-mesh"):
        _par(net, None, two, {"pp_config": {"split_spec": "layers"}})
    # one stage: nothing to split, the rest of the config applies
    net, _ = _par(net, None, _mesh("pp", "mp"), {
        "pp_config": {"split_spec": {r"layers\.0": dist.SplitPoint.END}},
        "mp_config": {"parallelize_plan": {"head": dist.ColWiseParallel()}}})
    assert net.head.weight.placements == [R, S1]


def test_context_parallel_p2p_is_refused_with_the_reason():
    with pytest.raises(NotImplementedError, match="ring"):
        dist.ContextParallel().apply(fw.nn.Identity(), _mesh("sep"), [])
    with pytest.raises(ValueError, match="backend"):
        dist.ContextParallel("ring")
    with pytest.raises(ValueError, match="'sep'"):
        dist.PrepareContextParallel("all2all").apply(fw.nn.Identity(), _mesh("mp"), [])


# ------------------------------------------------------------------ ZeRO
def _train(model, opt, steps=3, acc=1):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        for _ in range(acc):
            x = fw.to_tensor(rng.standard_normal([5, 4]).astype("float32"))
            loss = (model(x) ** 2).mean()
            loss.backward()
        opt.step()
        opt.clear_grad()
        out.append(float(loss))
    return out


def _lin():
    fw.seed(2)
    return fw.nn.Linear(4, 3)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_zero_stage_on_one_rank_trains_like_dense(level):
    dense = _lin()
    want = _train(dense, fw.optimizer.Adam(0.05, parameters=dense.parameters()))
    m = _lin()
    opt = fw.optimizer.Adam(0.05, parameters=m.parameters())
    m, opt = dist.parallelize(m, opt, _mesh("dp"), {"dp_config": {"sharding_level": level}})
    assert isinstance(opt, inter.ShardedOptimizer) and opt.sharding_stage == level
    np.testing.assert_allclose(_train(m, opt), want, rtol=1e-6)
    np.testing.assert_allclose(m.weight.numpy(), dense.weight.numpy(), rtol=1e-6)


def test_gradient_accumulation_divides_the_summed_gradient():
    """Two backward passes of one batch, then a step with
    gradient_accumulation_steps=2: the dense step of that batch."""
    m = dist.shard_layer(_lin(), _mesh("dp"))
    opt = dist.shard_optimizer(fw.optimizer.SGD(0.1, parameters=m.parameters()),
                               gradient_accumulation_steps=2)
    x = fw.to_tensor(np.random.default_rng(4).standard_normal([5, 4]).astype("float32"))
    for _ in range(2):
        (m(x) ** 2).mean().backward()
    opt.step()
    d = _lin()
    (d(x) ** 2).mean().backward()
    fw.optimizer.SGD(0.1, parameters=d.parameters()).step()
    np.testing.assert_allclose(m.weight.numpy(), d.weight.numpy(), rtol=1e-6)
    np.testing.assert_allclose(m.bias.numpy(), d.bias.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        dist.shard_optimizer(fw.optimizer.SGD(0.1, parameters=_lin().parameters()),
                             gradient_accumulation_steps=0)


def test_zero_refusals():
    m = dist.shard_layer(_lin(), _mesh("dp"))
    with pytest.raises(NotImplementedError, match="custom per-accumulator"):
        dist.shard_optimizer(fw.optimizer.SGD(parameters=m.parameters()),
                             lambda key, p, t: t)
    with pytest.raises(NotImplementedError, match="shard_optimizer"):
        dist.ShardingStage1("dp")("moment1", None, None)
    clip = fw.nn.ClipGradByGlobalNorm(1.0)
    with pytest.raises(NotImplementedError, match="global-norm"):
        dist.shard_optimizer(fw.optimizer.SGD(parameters=m.parameters(), grad_clip=clip),
                             dist.ShardingStage1("dp"))
    with pytest.raises(ValueError, match="'mp'"):
        dist.shard_optimizer(fw.optimizer.SGD(parameters=m.parameters()),
                             dist.ShardingStage2("mp"))
    with pytest.raises(TypeError, match="sharding_mesh_dim"):
        dist.ShardingStage3(1.5)


# ------------------------------------------------------------------ local_map, LocalLayer
def test_local_map_checks_and_reshards_inputs():
    mesh = _mesh("x")
    x = dist.shard_tensor(fw.ones([4, 2]), mesh, [S0])
    f = dist.local_map(lambda t: t * 2, [[S0]], in_placements=[[R]])
    with pytest.raises(ValueError, match="reshard_inputs"):
        f(x)
    g = dist.local_map(lambda t: t * 2, [[R]], in_placements=[[R]], reshard_inputs=True)
    y = g(x)
    assert y.placements == [R]
    np.testing.assert_array_equal(y.numpy(), np.full([4, 2], 2.0))
    with pytest.raises(ValueError, match="returned 2 values"):
        dist.local_map(lambda t: (t, t), [[S0]])(x)
    with pytest.raises(ValueError, match="process_mesh"):
        dist.local_map(lambda t: t, [[R]])(fw.ones([2]))
    h = dist.local_map(lambda t: (t + 1, "tag"), [[R], None], process_mesh=mesh)
    out, tag = h(fw.ones([2]))
    assert out.placements == [R] and tag == "tag"


def test_local_layer_validates():
    mesh = _mesh("x")
    with pytest.raises(TypeError, match="out_dist_attrs"):
        dist.LocalLayer([mesh], [])
    lay = dist.LocalLayer([(mesh, [R])], [None, None])
    with pytest.raises(ValueError, match="2 entries"):
        lay(fw.ones([1]))


# ------------------------------------------------------------------ small names
def test_dist_attr():
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
    a = dist.DistAttr(mesh, [None, "y", "x"])
    assert a.dims_mapping == [-1, 1, 0] and a.placements == [dist.Shard(2), S1]
    assert a.sharding_specs == [None, "y", "x"] and a.process_mesh is mesh
    with pytest.raises(ValueError, match="'z'"):
        dist.DistAttr(mesh, ["z"])
    with pytest.raises(ValueError, match="twice"):
        dist.DistAttr(mesh, ["x", "x"])
    with pytest.raises(ValueError, match="list"):
        dist.DistAttr(mesh, ("x",))


def test_mesh_helpers_and_scaler_types():
    with pytest.raises(TypeError, match="set_mesh"):
        dist.set_mesh([0, 1])
    m = _mesh("dp")
    dist.set_mesh(m)
    assert dist.get_mesh() is m and dist.auto_parallel.get_mesh() is m
    with pytest.raises(TypeError, match="GradScaler"):
        dist.shard_scaler(object())
    s = fw.amp.GradScaler()
    assert dist.shard_scaler(dist.shard_scaler(s)) is s


def test_shard_scaler_skips_an_overflowing_step_on_one_rank():
    mesh = _mesh("dp")
    lin = dist.shard_layer(_lin(), mesh)
    w = lin.weight.numpy().copy()
    opt = dist.shard_optimizer(fw.optimizer.SGD(0.1, parameters=lin.parameters()))
    scaler = dist.shard_scaler(fw.amp.GradScaler(init_loss_scaling=4.0))
    scaler.scale(lin(fw.ones([2, 4])).sum()).backward()
    g = lin.weight.local_value().grad
    g.set_value(np.full(g.shape, np.nan, dtype="float32"))
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(lin.weight.numpy(), w)
    assert float(scaler._scale) == 2.0


def test_to_distributed_checks_the_world():
    m = _lin()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="2 but the job has 1"):
            dist.to_distributed(m, fw.optimizer.SGD(parameters=m.parameters()), [],
                                device_num=2)
    cfg = inter.ToDistributedConfig()
    cfg.sequence_parallel = True
    with pytest.raises(NotImplementedError, match="sequence_parallel"):
        dist.to_distributed(m, fw.optimizer.SGD(parameters=m.parameters()), [], 1, config=cfg)


def test_conv_parallel_on_one_rank_and_unsupported_configs():
    mesh = _mesh("mp")
    fw.seed(1)
    dense = fw.nn.Conv2D(2, 3, 3, padding=1)
    x = fw.to_tensor(np.random.default_rng(0).standard_normal([1, 2, 4, 6]).astype("float32"))
    fw.seed(1)
    conv = fw.nn.Conv2D(2, 3, 3, padding=1)
    dist.ConvParallel().apply(conv, mesh, [])
    y = conv(x)
    assert y.placements == [dist.Shard(3)]
    np.testing.assert_allclose(y.numpy(), dense(x).numpy(), rtol=1e-5, atol=1e-6)
    fw.seed(1)
    odd = fw.nn.Conv2D(2, 3, 3, stride=2)          # overlapping windows: unsupported
    dist.ConvParallel().apply(odd, mesh, [])
    with pytest.warns(UserWarning, match="runs unsharded"):
        out = odd(x)
    assert not out.is_dist() or out.placements != [dist.Shard(3)]
    with pytest.raises(TypeError, match="Conv2D"):
        dist.ConvParallel().apply(fw.nn.Linear(2, 2), mesh, [])
