"""fw.incubate: LookAhead and ModelAverage replay a training run of real Paddle 3.3.1
(fixtures/paddle_incubate.json, written by fixtures/gen_paddle_incubate.py); the old
graph names agree with fw.geometric; identity_loss against Paddle; the fused
softmaxes against NumPy; the unsupported parts raise clear errors."""

import json
import pathlib

import numpy as np
import pytest

import fw
import fw.incubate as I
from fw.core.errors import InvalidArgumentError, UnsupportedError

FIX = json.loads((pathlib.Path(__file__).parent / "fixtures" /
                  "paddle_incubate.json").read_text())


def _linear(c):
    lin = fw.nn.Linear(3, 2)
    lin.weight.set_value(np.array(c["w"], "float32"))
    lin.bias.set_value(np.array(c["b"], "float32"))
    return lin


def _loss(lin, x):
    return (lin(fw.to_tensor(np.array(x, "float32"))) ** 2).mean()


def _close(params, ref):
    for p, r in zip(params, ref):
        np.testing.assert_allclose(p, np.array(r, "float32"), rtol=1e-5, atol=1e-6)


def test_lookahead_replays_paddle():
    c = FIX["lookahead"]
    lin = _linear(c)
    opt = I.LookAhead(fw.optimizer.SGD(c["lr"], parameters=lin.parameters()),
                      alpha=c["alpha"], k=c["k"])
    for x, ref in zip(c["xs"], c["params"]):
        _loss(lin, x).backward()
        opt.step()
        opt.clear_grad()
        _close([lin.weight.numpy(), lin.bias.numpy()], ref)


def test_lookahead_state_dict_round_trip():
    c = FIX["lookahead"]
    lin = _linear(c)
    opt = I.LookAhead(fw.optimizer.SGD(c["lr"], parameters=lin.parameters()), 0.2, 3)
    for x in c["xs"][:4]:
        _loss(lin, x).backward()
        opt.step()
        opt.clear_grad()
    sd = opt.state_dict()
    lin2 = _linear(c)
    lin2.weight.set_value(lin.weight.numpy())
    lin2.bias.set_value(lin.bias.numpy())
    opt2 = I.LookAhead(fw.optimizer.SGD(c["lr"], parameters=lin2.parameters()), 0.2, 3)
    opt2.set_state_dict({k.replace(lin.weight.name, lin2.weight.name)
                         .replace(lin.bias.name, lin2.bias.name): v for k, v in sd.items()})
    for x, ref in zip(c["xs"][4:], c["params"][4:]):
        _loss(lin2, x).backward()
        opt2.step()
        opt2.clear_grad()
        _close([lin2.weight.numpy(), lin2.bias.numpy()], ref)


def test_model_average_replays_paddle():
    c = FIX["model_average"]
    lin = _linear(c)
    sgd = fw.optimizer.SGD(c["lr"], parameters=lin.parameters())
    ma = I.ModelAverage(c["average_window_rate"], parameters=lin.parameters(),
                        min_average_window=c["min_average_window"],
                        max_average_window=c["max_average_window"])
    for x, ref in zip(c["xs"], c["steps"]):
        _loss(lin, x).backward()
        sgd.step()
        ma.step()
        sgd.clear_grad()
        _close([lin.weight.numpy(), lin.bias.numpy()], ref["params"])
        with ma.apply():
            _close([lin.weight.numpy(), lin.bias.numpy()], ref["averaged"])
        _close([lin.weight.numpy(), lin.bias.numpy()], ref["params"])


def test_model_average_apply_without_restore():
    lin = fw.nn.Linear(2, 1)
    ma = I.ModelAverage(0.5, parameters=lin.parameters(), min_average_window=1,
                        max_average_window=1)
    w0 = lin.weight.numpy().copy()
    lin(fw.ones([1, 2])).sum().backward()
    ma.step()
    lin.weight.set_value(w0 + 1.0)
    with ma.apply(need_restore=False):
        pass
    np.testing.assert_allclose(lin.weight.numpy(), w0)  # the average of the one value
    ma.restore()
    np.testing.assert_allclose(lin.weight.numpy(), w0 + 1.0)


def test_identity_loss_matches_paddle():
    c = FIX["identity_loss"]
    x = fw.to_tensor(np.array(c["x"], "float32"))
    for r, ref in c["out"].items():
        red = int(r) if r.isdigit() else r
        np.testing.assert_allclose(I.identity_loss(x, red).numpy(), np.array(ref, "float32"))
    with pytest.raises(InvalidArgumentError, match="identity_loss: 'reduction'"):
        I.identity_loss(x, "max")


def test_old_graph_names_wrap_geometric():
    x = fw.to_tensor(np.arange(12, dtype="float32").reshape(4, 3))
    src, dst = fw.to_tensor([0, 1, 2, 3, 0]), fw.to_tensor([1, 1, 0, 2, 2])
    for how in ("sum", "mean", "max", "min"):
        assert I.graph_send_recv(x, src, dst, how, 5).tolist() == \
            fw.geometric.send_u_recv(x, src, dst, how, 5).tolist()
    ids = fw.to_tensor([0, 0, 1, 1])
    for how in ("sum", "mean", "max", "min"):
        assert getattr(I, "segment_" + how) is getattr(fw.geometric, "segment_" + how)
    r = I.graph_reindex(fw.to_tensor([0, 1, 2]), fw.to_tensor([8, 9, 0, 4, 7, 6, 7]),
                        fw.to_tensor([2, 3, 2], dtype="int32"))
    assert r[2].tolist() == [0, 1, 2, 8, 9, 4, 7, 6]  # Paddle's example output
    assert I.segment_sum(x, ids).tolist() == [[3, 5, 7], [15, 17, 19]]


ROW = [3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7]
COLPTR = [0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13]


def test_khop_sampler_full_neighbourhood():
    row, colptr = fw.to_tensor(ROW), fw.to_tensor(COLPTR)
    src, dst, index, nodes, eids = I.graph_khop_sampler(
        row, colptr, fw.to_tensor([0, 8, 1, 2]), [-1, -1],
        sorted_eids=fw.to_tensor(np.arange(13)), return_eids=True)
    idx = index.tolist()
    assert idx == [0, 8, 1, 2, 3, 7, 9, 4] and nodes.tolist() == [0, 1, 2, 3]
    edges = {(idx[s], idx[d]) for s, d in zip(src.numpy().ravel(), dst.numpy().ravel())}
    # every edge of the 2-hop in-neighbourhood: (neighbour, center)
    want = set()
    for v in [0, 8, 1, 2, 3, 7, 9]:
        want |= {(ROW[e], v) for e in range(COLPTR[v], COLPTR[v + 1])}
    assert edges == want and src.shape[1] == 1 and eids.shape == src.shape
    assert all(ROW[e] == idx[s] for e, s in zip(eids.numpy().ravel(), src.numpy().ravel()))


def test_khop_sampler_respects_sizes():
    fw.seed(2)
    src, dst, index, nodes = I.graph_khop_sampler(fw.to_tensor(ROW), fw.to_tensor(COLPTR),
                                                  fw.to_tensor([5, 6]), [1, 1])
    assert src.shape[0] <= 4 and np.bincount(dst.numpy().ravel()).max() == 1


def test_softmax_mask_fuse_against_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 4)).astype("float32")
    m = np.where(rng.random((2, 1, 4, 4)) < 0.3, -1e4, 0.0).astype("float32")

    def sm(a):
        e = np.exp(a - a.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    np.testing.assert_allclose(I.softmax_mask_fuse(fw.to_tensor(x), fw.to_tensor(m)).numpy(),
                               sm(x + m), rtol=1e-5, atol=1e-6)
    causal = np.where(np.triu(np.ones((4, 4)), 1) > 0, -np.inf, x)
    np.testing.assert_allclose(I.softmax_mask_fuse_upper_triangle(fw.to_tensor(x)).numpy(),
                               sm(causal), rtol=1e-5, atol=1e-6)
    with pytest.raises(InvalidArgumentError, match="softmax_mask_fuse: 'mask' must be"):
        I.softmax_mask_fuse(fw.to_tensor(x), fw.to_tensor(m[:, :, :2]))


def test_unsupported_parts_raise_clearly():
    with pytest.raises(UnsupportedError, match="fw.incubate.inference"):
        I.inference(lambda x: x)
    with pytest.raises(UnsupportedError, match="fw.incubate.cc.compile"):
        I.cc.compile  # noqa: B018
    with pytest.raises(InvalidArgumentError, match="LookAhead: 'alpha'"):
        I.LookAhead(fw.optimizer.SGD(0.1, parameters=fw.nn.Linear(1, 1).parameters()), 1.5)
    with pytest.raises(InvalidArgumentError, match="ModelAverage: 'parameters'"):
        I.ModelAverage(0.1)


def test_model_average_clear_grad():
    lin = fw.nn.Linear(2, 1)
    ma = I.ModelAverage(0.5, parameters=lin.parameters())
    lin(fw.ones([1, 2])).sum().backward()
    assert lin.weight.grad.abs().sum().item() > 0
    ma.clear_grad()
    assert lin.weight.grad.abs().sum().item() == 0
    ma.clear_grad(set_to_zero=False)
    assert lin.weight.grad is None


@pytest.mark.parametrize("name", ["fw.incubate", "fw.incubate.optimizer", "fw.incubate.graph",
                                  "fw.incubate.functional"])
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(name),
                          optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


def test_lookahead_minimize_equals_step():
    c = FIX["lookahead"]
    runs = []
    for use_minimize in (False, True):
        lin = _linear(c)
        opt = I.LookAhead(fw.optimizer.SGD(c["lr"], parameters=lin.parameters()), 0.2, 3)
        for x in c["xs"]:
            loss = _loss(lin, x)
            loss.backward()
            opt.minimize(loss) if use_minimize else opt.step()
            opt.clear_grad()
        runs.append(lin.weight.numpy().copy())
    np.testing.assert_allclose(runs[1], runs[0])
    _close([runs[1]], [c["params"][-1][0]])
