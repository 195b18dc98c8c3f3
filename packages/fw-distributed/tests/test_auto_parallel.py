"""Eager auto-parallel in one process (world size 1, no launcher): meshes,
placements, the block arithmetic for bigger meshes, distributed tensors on a
1-rank mesh (every op, reshard and training equal the dense ones) and the errors.
The 2-rank behaviour is in test_auto_parallel_ranks.py."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import fw
import fw.distributed as dist
import fw.nn.functional as F
from fw.distributed import auto_parallel as ap
from fw.distributed.auto_parallel._layout import balanced, local_box

MESH1 = dist.ProcessMesh([0], dim_names=["x"])


def test_placements_repr_equality_hash():
    assert repr(dist.Shard(1)) == "Shard(dim=1)"
    assert repr(dist.Replicate()) == "Replicate()"
    assert repr(dist.Partial()) == "Partial(reduce_type=ReduceType.kRedSum)"
    assert repr(dist.Partial(dist.ReduceType.kRedMax)) == "Partial(reduce_type=ReduceType.kRedMax)"
    assert dist.Shard(0) == dist.Shard(0) and dist.Shard(0) != dist.Shard(1)
    assert dist.Replicate() == dist.Replicate() and dist.Replicate() != dist.Shard(0)
    assert dist.Partial() != dist.Partial(dist.ReduceType.kRedAvg)
    assert len({dist.Shard(0), dist.Shard(0), dist.Replicate(), dist.Partial()}) == 3
    assert dist.Shard(2).get_dim() == 2 and dist.Shard(2).is_shard() and dist.Shard(2).is_shard(2)
    assert not dist.Shard(2).is_shard(1) and dist.Replicate().is_replicated()
    assert dist.Partial().is_partial() and int(dist.ReduceType.kRedAvg) == 4
    with pytest.raises(TypeError, match="Shard: dim must be an int"):
        dist.Shard(1.5)
    with pytest.raises(ValueError, match="Partial: reduce_type"):
        dist.Partial(17)


def test_process_mesh():
    m = dist.ProcessMesh([[0, 1, 2], [3, 4, 5]], dim_names=["dp", "mp"])
    assert m.shape == [2, 3] and m.ndim == 2 and m.process_ids == [0, 1, 2, 3, 4, 5]
    assert m.dim_names == ["dp", "mp"] and m.get_dim_size("mp") == 3
    t = m.get_mesh_with_dim("mp")
    assert t.shape == [3, 2] and t.dim_names == ["mp", "dp"] and t.process_ids == [0, 3, 1, 4, 2, 5]
    assert m.get_mesh_with_dim("mp", 1).process_ids == [1, 4]
    row = m[1]
    assert row.process_ids == [3, 4, 5] and row.dim_names == ["mp"]
    col = m[:, 2]
    assert col.process_ids == [2, 5] and col.dim_names == ["dp"]
    assert m.coordinate(4) == [1, 1]
    assert m == dist.ProcessMesh([[0, 1, 2], [3, 4, 5]], ["dp", "mp"])
    assert m != dist.ProcessMesh([[0, 1, 2], [3, 4, 5]], ["a", "b"])
    assert hash(m) == hash(dist.ProcessMesh([[0, 1, 2], [3, 4, 5]], ["dp", "mp"]))
    assert dist.ProcessMesh([0, 1]).dim_names == ["d0"]
    assert "process_ids=[0, 1]" in repr(dist.ProcessMesh([0, 1], ["x"]))
    with pytest.raises(ValueError, match="distinct"):
        dist.ProcessMesh([0, 0])
    with pytest.raises(ValueError, match="dim_names must be 2"):
        dist.ProcessMesh([[0, 1]], dim_names=["x"])
    with pytest.raises(ValueError, match="no axis named 'pp'"):
        m.get_dim_size("pp")


def test_balanced_splits_are_paddles():
    assert balanced(5, 2) == [3, 2] and balanced(4, 2) == [2, 2] and balanced(1, 3) == [1, 0, 0]


@pytest.mark.parametrize("shape", [[5, 7], [4, 6], [3, 1]])
def test_blocks_of_every_rank_tile_the_tensor(shape):
    """On a [2, 2] mesh with each placement pair, the ranks' blocks (nested splits
    for one dim on both axes) cover every element exactly as often as there are
    replicas."""
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], ["a", "b"])
    kinds = [dist.Replicate(), dist.Shard(0), dist.Shard(1)]
    for pl in itertools.product(kinds, repeat=2):
        count = np.zeros(shape, int)
        for coord in itertools.product(range(2), range(2)):
            box = local_box(shape, list(pl), mesh, list(coord))
            count[tuple(slice(s, s + n) for s, n in box)] += 1
        reps = sum(1 for p in pl if isinstance(p, dist.Replicate))
        assert (count == 2 ** reps).all(), (pl, count)


def _dense(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_shard_tensor_on_one_rank():
    x = dist.shard_tensor(_dense([4, 3]), MESH1, [dist.Shard(0)])
    assert isinstance(x, fw.Tensor) and x.is_dist() and x.shape == [4, 3]
    assert x.dtype == fw.float32 and x.placements == [dist.Shard(0)]
    assert x.process_mesh == MESH1 and x.local_value().shape == [4, 3]
    assert x._local_value() is x.local_value()
    assert not isinstance(x.local_value(), ap.DistTensor)
    np.testing.assert_array_equal(x.numpy(), _dense([4, 3]))
    y = dist.shard_tensor([1, 2, 3], MESH1, [dist.Replicate()], dtype="float64")
    assert y.dtype == fw.float64 and y.stop_gradient
    z = dist.dtensor_from_fn(fw.ones, MESH1, [dist.Shard(-1)], shape=[2, 5])
    assert z.placements == [dist.Shard(1)]
    assert "DistTensor(shape=[2, 5]" in repr(z)
    np.testing.assert_array_equal(np.asarray(x), _dense([4, 3]))  # the whole tensor
    with pytest.raises(TypeError, match="unshard_dtensor"):
        np.asarray(x._data)   # the slot holds no array: fw-core's fast lanes skip it


def test_ops_on_one_rank_equal_dense_and_choose_placements():
    a, w = _dense([4, 6]), _dense([6, 3], 1)
    x = dist.shard_tensor(a, MESH1, [dist.Shard(1)])
    y = dist.shard_tensor(w, MESH1, [dist.Shard(0)])
    out = x @ y
    assert out.placements == [dist.Partial()]
    np.testing.assert_allclose(dist.unshard_dtensor(out).numpy(), a @ w, rtol=1e-5)
    s = F.softmax(dist.reshard(out, MESH1, [dist.Shard(0)]), axis=1)
    assert s.placements == [dist.Shard(0)]
    e = np.exp(a @ w - (a @ w).max(1, keepdims=True))
    np.testing.assert_allclose(s.numpy(), e / e.sum(1, keepdims=True), rtol=1e-5)
    assert (x.sum(axis=1)).placements == [dist.Partial()]
    assert x.transpose([1, 0]).placements == [dist.Shard(0)]


def test_reshard_every_transition_on_one_rank():
    a = _dense([3, 4])
    codes = [dist.Replicate(), dist.Shard(0), dist.Shard(1), dist.Partial()]
    for s, d in itertools.product(codes, codes):
        r = dist.reshard(dist.shard_tensor(a, MESH1, [s]), MESH1, [d])
        assert r.placements == [d]
        np.testing.assert_array_equal(dist.unshard_dtensor(r).numpy(), a)


def test_gradients_flow_to_distributed_leaves():
    x = dist.shard_tensor(_dense([4, 6]), MESH1, [dist.Shard(0)], stop_gradient=False)
    w = dist.shard_tensor(_dense([6, 3], 1), MESH1, [dist.Replicate()], stop_gradient=False)
    (x @ w).sum().backward()
    assert x.grad.placements == [dist.Shard(0)] and w.grad.placements == [dist.Replicate()]
    np.testing.assert_allclose(w.grad.numpy(), _dense([4, 6]).sum(0)[:, None].repeat(3, 1),
                               rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), np.tile(_dense([6, 3], 1).sum(1), (4, 1)),
                               rtol=1e-5)


def _mlp():
    fw.seed(11)
    return fw.nn.Sequential(fw.nn.Linear(5, 8), fw.nn.Tanh(), fw.nn.Linear(8, 2))


def _train(model, opt):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(3):
        x = fw.to_tensor(rng.standard_normal([4, 5]).astype("float32"))
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        out.append(float(loss.numpy()))
    return out


def test_shard_layer_and_optimizer_train_like_dense_on_one_rank():
    dense = _mlp()
    want = _train(dense, fw.optimizer.SGD(0.1, parameters=dense.parameters()))

    def shard_fn(name, layer, mesh):
        if isinstance(layer, fw.nn.Linear):
            layer.weight = dist.shard_tensor(layer.weight, mesh, [dist.Shard(1)])

    model = dist.shard_layer(_mlp(), MESH1, shard_fn)
    assert all(p.is_dist() for p in model.parameters())
    assert isinstance(model[0].weight, fw.nn.Parameter) and model[0].weight.trainable
    opt = dist.shard_optimizer(fw.optimizer.SGD(0.1, parameters=model.parameters()))
    got = _train(model, opt)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for p, q in zip(model.parameters(), dense.parameters()):
        np.testing.assert_allclose(dist.unshard_dtensor(p).numpy(), q.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="shard_fn"):
        dist.shard_optimizer(opt, shard_fn=object())


def test_fallback_is_counted_and_warned(monkeypatch):
    # every op of the table has a rule now: take cumsum's away for this test
    from fw.distributed.auto_parallel import spmd

    monkeypatch.delitem(ap.RULES, "cumsum")
    monkeypatch.setattr(spmd, "_PLANS", {})
    ap.reset_fallback_report()
    x = dist.shard_tensor(_dense([4, 3]), MESH1, [dist.Shard(0)])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = fw.cumsum(x, axis=0)
        fw.cumsum(x, axis=0)
    assert ap.fallback_report() == {"cumsum": 2}
    assert sum("'cumsum' has no SPMD rule" in str(m.message) for m in w) == 1
    assert y.placements == [dist.Replicate()]
    np.testing.assert_allclose(y.numpy(), np.cumsum(_dense([4, 3]), 0), rtol=1e-6)
    ap.reset_fallback_report()
    assert ap.fallback_report() == {}


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="shard_tensor: placements has 2 entries but the mesh "
                                         "has 1 axes"):
        dist.shard_tensor(_dense([2, 2]), MESH1, [dist.Shard(0), dist.Shard(1)])
    with pytest.raises(ValueError, match=r"shard_tensor: Shard\(dim=2\) is out of range"):
        dist.shard_tensor(_dense([2, 2]), MESH1, [dist.Shard(2)])
    with pytest.raises(TypeError, match="shard_tensor: mesh must be a fw.distributed"):
        dist.shard_tensor(_dense([2]), [0], [dist.Replicate()])
    with pytest.raises(TypeError, match="reshard: placements must hold"):
        dist.reshard(dist.shard_tensor(_dense([2]), MESH1, [dist.Replicate()]), MESH1, ["R"])
    with pytest.raises(NotImplementedError, match="rank 0 is not in"):
        dist.shard_tensor(_dense([2]), dist.ProcessMesh([1]), [dist.Replicate()])
    other = dist.ProcessMesh([0], dim_names=["y"])
    a = dist.shard_tensor(_dense([2]), MESH1, [dist.Replicate()])
    b = dist.shard_tensor(_dense([2]), other, [dist.Replicate()])
    with pytest.raises(ValueError, match="add: distributed inputs live on different meshes"):
        a + b
    with pytest.raises(NotImplementedError, match="same-mesh only"):
        dist.reshard(a, other, [dist.Replicate()])
    with pytest.raises(TypeError, match="shard_layer: layer must be"):
        dist.shard_layer(object(), MESH1)


def test_dense_tensors_are_untouched():
    """Plain tensors never reach the SPMD engine (the hook returns at once)."""
    x = fw.to_tensor(_dense([2, 3]))
    # Paddle 3.3.1: a dense tensor answers placements / process_mesh with None
    assert x.placements is None and x.process_mesh is None and not x.is_dist()
    np.testing.assert_allclose((x @ x.T).numpy(), _dense([2, 3]) @ _dense([2, 3]).T, rtol=1e-6)


@pytest.mark.parametrize("module", ["api", "placement", "process_mesh", "spmd"])
def test_docstring_examples_run(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    mod = importlib.import_module(f"fw.distributed.auto_parallel.{module}")
    tests = doctest.DocTestFinder().find(mod)
    assert sum(len(t.examples) for t in tests) > 0
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} failing examples in {module}"
