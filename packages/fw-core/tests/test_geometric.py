"""fw.geometric against real Paddle 3.3.1 (fixtures/paddle_geometric.json, written by
fixtures/gen_paddle_geometric.py: outputs, gradients, dtypes, reindexing), NumPy
oracles (random graphs, every reduce/message op), finite-difference gradients,
sampling invariants and argument errors."""

import json
import pathlib

import numpy as np
import pytest

import fw
import fw.geometric as G
from fw.core.errors import InvalidArgumentError, InvalidTypeError

CASES = json.loads((pathlib.Path(__file__).parent / "fixtures" /
                    "paddle_geometric.json").read_text())["cases"]


def _t(a, dtype=None, grad=False):
    t = fw.to_tensor(np.asarray(a, dtype=dtype))
    t.stop_gradient = not grad
    return t


def _run(c):
    """Replays one fixture case: (output, gradients of sum(out * w))."""
    op = c["op"]
    if op.startswith("segment_"):
        ins = [_t(c["data"], "float32", True)]
        out = getattr(G, op)(ins[0], _t(c["ids"], "int64"))
    elif op == "send_u_recv":
        ins = [_t(c["x"], "float32", True)]
        out = G.send_u_recv(ins[0], _t(c["src"], "int64"), _t(c["dst"], "int64"),
                            c["reduce_op"], c["out_size"])
    elif op == "send_ue_recv":
        ins = [_t(c["x"], "float32", True), _t(c["y"], "float32", True)]
        out = G.send_ue_recv(*ins, _t(c["src"], "int64"), _t(c["dst"], "int64"),
                             c["message_op"], c["reduce_op"])
    else:
        ins = [_t(c["x"], "float32", True), _t(c["y"], "float32", True)]
        out = G.send_uv(*ins, _t(c["src"], "int64"), _t(c["dst"], "int64"), c["message_op"])
    (out * _t(c["w"], "float32")).sum().backward()
    return out, [t.grad for t in ins]


GRAD_CASES = [c for c in CASES if "grads" in c]


@pytest.mark.parametrize("c", GRAD_CASES, ids=[
    "-".join(str(c.get(k)) for k in ("op", "message_op", "reduce_op", "out_size"))
    + f"-{i}" for i, c in enumerate(GRAD_CASES)])
def test_matches_paddle_values_and_gradients(c):
    out, grads = _run(c)
    np.testing.assert_allclose(out.numpy(), np.array(c["out"], "float32"), rtol=1e-5, atol=1e-6)
    for g, ref in zip(grads, c["grads"]):
        np.testing.assert_allclose(g.numpy(), np.array(ref, "float32"), rtol=1e-5, atol=1e-6)


def test_reindex_matches_paddle():
    c = next(c for c in CASES if c["op"] == "reindex_graph")
    r = G.reindex_graph(_t(c["x"], "int64"), _t(c["neighbors"], "int64"),
                        _t(c["count"], "int32"))
    assert [t.tolist() for t in r] == c["out"]
    assert all(t.dtype == fw.int64 for t in r)
    c = next(c for c in CASES if c["op"] == "reindex_heter_graph")
    r = G.reindex_heter_graph(_t(c["x"], "int64"), [_t(n, "int64") for n in c["neighbors"]],
                              [_t(n, "int32") for n in c["count"]])
    assert [t.tolist() for t in r] == c["out"]


def test_dtypes_match_paddle():
    c = next(c for c in CASES if c["op"] == "dtypes")
    ids = _t([0, 0, 1, 1, 1, 3, 3], "int32")
    d = G.segment_sum(_t(np.ones((7, 3)), "float64"), ids)
    assert "paddle." + d.dtype.name == c["segment_sum_f64"]
    m = G.segment_max(_t(np.arange(7).reshape(7, 1), "int32"), _t([0, 0, 1, 1, 1, 3, 3], "int64"))
    assert "paddle." + m.dtype.name == c["segment_max_i32"]
    assert m.tolist() == c["segment_max_i32_out"]


# ------------------------------------------------------------------ NumPy oracle
def np_reduce(msgs, idx, n, how):
    out = np.zeros((n,) + msgs.shape[1:], msgs.dtype)
    for i in range(n):
        rows = msgs[idx == i]
        if len(rows):
            out[i] = {"sum": np.sum, "mean": np.mean, "max": np.max,
                      "min": np.min}[how](rows, axis=0)
    return out


NP_MSG = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("seed", [0, 1])
def test_random_graphs_against_numpy(how, seed):
    rng = np.random.default_rng(seed)
    n, e = 9, 30
    x = rng.standard_normal((n, 4)).astype("float64")
    y = rng.standard_normal((e, 4)).astype("float64") + 3.0
    src, dst = rng.integers(0, n, e), rng.integers(0, n - 2, e)
    np.testing.assert_allclose(
        G.send_u_recv(_t(x), _t(src), _t(dst), how, n + 1).numpy(),
        np_reduce(x[src], dst, n + 1, how))
    for mop, f in NP_MSG.items():
        np.testing.assert_allclose(
            G.send_ue_recv(_t(x), _t(y), _t(src), _t(dst), mop, how).numpy(),
            np_reduce(f(x[src], y), dst, n, how))
    ids = np.sort(rng.integers(0, 6, e))
    np.testing.assert_allclose(getattr(G, "segment_" + how)(_t(y), _t(ids)).numpy(),
                               np_reduce(y, ids, ids[-1] + 1, how))


def test_send_uv_against_numpy():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((5, 2, 3)), rng.standard_normal((4, 3)) + 3.0
    src, dst = rng.integers(0, 5, 11), rng.integers(0, 4, 11)
    for mop, f in NP_MSG.items():
        np.testing.assert_allclose(G.send_uv(_t(x), _t(y), _t(src), _t(dst), mop).numpy(),
                                   f(x[src], y[dst][:, None, :]))


# ------------------------------------------------------------------ gradients
def _fd_check(fn, arrays, eps=1e-6):
    """fw's gradient of sum(fn(*arrays) * w) against central differences (float64)."""
    ts = [_t(a, "float64", True) for a in arrays]
    out = fn(*ts)
    w = np.random.default_rng(5).standard_normal(out.shape)
    (out * _t(w)).sum().backward()
    for k, (a, t) in enumerate(zip(arrays, ts)):
        num = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            hi, lo = [b.copy() for b in arrays], [b.copy() for b in arrays]
            hi[k][i] += eps
            lo[k][i] -= eps
            num[i] = ((fn(*map(_t, hi)).numpy() - fn(*map(_t, lo)).numpy()) * w).sum() / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min"])
def test_gradients_finite_differences(how):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((6, 3)) + 3.0
    src, dst = _t([0, 1, 2, 3, 0, 2]), _t([1, 1, 0, 3, 3, 1])
    _fd_check(lambda a: G.send_u_recv(a, src, dst, how), [x])
    _fd_check(lambda a, b: G.send_ue_recv(a, b, src, dst, "mul", how), [x, y])
    _fd_check(lambda a: getattr(G, "segment_" + how)(a, _t([0, 0, 1, 3, 3, 3])), [y])
    _fd_check(lambda a, b: G.send_uv(a, b, src, dst, "div"), [x, x + 3.0])


def test_max_passes_whole_gradient_to_ties():
    x = _t([[2.0], [2.0], [1.0]], "float32", True)
    G.segment_max(x, _t([0, 0, 0])).sum().backward()
    assert x.grad.tolist() == [[1.0], [1.0], [0.0]]  # Paddle's rule (the fixture has a tie too)


# ------------------------------------------------------------------ sampling
ROW = [3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7]
COLPTR = [0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13]


def test_sample_neighbors_invariants_and_seed():
    row, colptr = _t(ROW, "int64"), _t(COLPTR, "int64")
    nodes = _t([0, 8, 1, 2, 5, 6], "int64")
    eids = _t(np.arange(13) * 10, "int64")
    fw.seed(3)
    nb, cnt, e = G.sample_neighbors(row, colptr, nodes, 1, eids=eids, return_eids=True)
    assert cnt.dtype == fw.int32 and nb.dtype == fw.int64
    assert cnt.tolist() == [1, 1, 1, 1, 1, 1]
    off = 0
    for v, c in zip(nodes.tolist(), cnt.tolist()):
        lo, hi = COLPTR[v], COLPTR[v + 1]
        for k in range(c):
            eid = e.tolist()[off + k] // 10
            assert lo <= eid < hi and ROW[eid] == nb.tolist()[off + k]
        off += c
    fw.seed(3)
    again = G.sample_neighbors(row, colptr, nodes, 1, eids=eids, return_eids=True)
    assert [t.tolist() for t in again] == [nb.tolist(), cnt.tolist(), e.tolist()]
    all_nb, all_cnt = G.sample_neighbors(row, colptr, nodes)
    assert all_cnt.tolist() == [2, 2, 2, 1, 2, 2]
    assert all_nb.tolist() == [3, 7, 9, 7, 0, 9, 1, 9, 3, 9, 1]


def test_sample_neighbors_is_uniform():
    row, colptr = _t([0, 1, 2, 3], "int64"), _t([0, 4], "int64")
    fw.seed(0)
    hits = np.zeros(4)
    for _ in range(400):
        hits[G.sample_neighbors(row, colptr, _t([0], "int64"), 2)[0].numpy()] += 1
    assert hits.sum() == 800 and hits.min() > 150  # expected 200 each


def test_weighted_sampling_follows_weights():
    row, colptr = _t([0, 1, 2], "int64"), _t([0, 3], "int64")
    w = _t([1.0, 0.0, 4.0], "float32")
    fw.seed(1)
    picks = [G.weighted_sample_neighbors(row, colptr, w, _t([0], "int64"), 1)[0].item()
             for _ in range(300)]
    assert 1 not in picks and 200 < picks.count(2) < 280  # P(2) = 0.8
    nb, cnt = G.weighted_sample_neighbors(row, colptr, w, _t([0], "int64"), 2)
    assert sorted(nb.tolist()) == [0, 2]  # the zero-weight edge only when nothing else is left


# ------------------------------------------------------------------ errors
def test_errors_name_function_and_argument():
    x = _t(np.ones((3, 2)), "float32")
    with pytest.raises(InvalidArgumentError, match="segment_sum: 'segment_ids' must be sorted"):
        G.segment_sum(x, _t([1, 0, 0]))
    with pytest.raises(InvalidArgumentError, match="segment_mean: 'segment_ids' has 2 entries"):
        G.segment_mean(x, _t([0, 0]))
    with pytest.raises(InvalidTypeError, match="segment_max: 'segment_ids' must have dtype"):
        G.segment_max(x, _t([0.0, 0, 1]))
    with pytest.raises(InvalidArgumentError, match="send_u_recv: 'reduce_op'"):
        G.send_u_recv(x, _t([0]), _t([1]), "prod")
    with pytest.raises(InvalidArgumentError, match="send_u_recv: 'dst_index' holds index 5"):
        G.send_u_recv(x, _t([0]), _t([5]))
    with pytest.raises(InvalidArgumentError, match="send_ue_recv: 'message_op'"):
        G.send_ue_recv(x, _t(np.ones((1, 2)), "float32"), _t([0]), _t([1]), "pow")
    with pytest.raises(InvalidTypeError, match="send_uv: 'y' must have dtype float32"):
        G.send_uv(x, _t(np.ones((3, 2))), _t([0]), _t([1]))
    with pytest.raises(InvalidArgumentError, match="reindex_graph: 'count' must be >= 0 and sum"):
        G.reindex_graph(_t([0, 1]), _t([2, 3, 4]), _t([1, 1], "int32"))
    with pytest.raises(InvalidArgumentError, match="sample_neighbors: 'eids' must be given"):
        G.sample_neighbors(_t(ROW), _t(COLPTR), _t([0]), return_eids=True)
    with pytest.raises(InvalidArgumentError, match="sample_neighbors: 'input_nodes'"):
        G.sample_neighbors(_t(ROW), _t(COLPTR), _t([10]))


def test_out_size_rules():
    x = _t(np.arange(6).reshape(3, 2), "float32")
    assert G.send_u_recv(x, _t([0]), _t([1]), out_size=0).shape == [3, 2]
    assert G.send_u_recv(x, _t([0]), _t([1]), out_size=_t([5])).shape == [5, 2]
    assert G.send_u_recv(x, _t([0, 2]), _t([1, 1]), "mean", 2).tolist() == [[0, 0], [2, 3]]


def test_paddle_layouts_of_older_examples():
    # graph_reindex's documentation passes two edge types' counts concatenated
    x = _t([0, 1, 2])
    nb = _t([8, 9, 0, 4, 7, 6, 7, 0, 2, 3, 5, 1])
    cnt = _t([2, 3, 2, 1, 3, 1], "int32")
    src, dst, nodes = G.reindex_graph(x, nb, cnt)
    assert src.tolist() == [3, 4, 0, 5, 6, 7, 6, 0, 2, 8, 9, 1]
    assert dst.tolist() == [0, 0, 1, 1, 1, 2, 2, 0, 1, 1, 1, 2]
    assert nodes.tolist() == [0, 1, 2, 8, 9, 4, 7, 6, 3, 5]
    with pytest.raises(InvalidArgumentError, match="reindex_graph: 'count' must have one entry"):
        G.reindex_graph(x, nb, _t([2, 3, 2, 5], "int32"))
    # weighted_sample_neighbors' documentation passes one weight too many: unread
    w = _t(np.ones(14), "float32")
    nb, cnt = G.weighted_sample_neighbors(_t(ROW), _t(COLPTR), w, _t([0, 8]), 5)
    assert nb.tolist() == [3, 7, 9, 7]
    with pytest.raises(InvalidArgumentError, match="'edge_weight' must be >= 0 with one entry"):
        G.weighted_sample_neighbors(_t(ROW), _t(COLPTR), _t(np.ones(12), "float32"), _t([0]))


@pytest.mark.parametrize("name", ["fw.geometric", "fw.geometric.math",
                                  "fw.geometric.message_passing", "fw.geometric.reindex",
                                  "fw.geometric.sampling"])
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(name),
                          optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


def test_put_along_axis_path_matches_paddle(monkeypatch):
    # the path other devices take (put_along_axis amax/amin) gives the same values
    from fw.geometric import _scatter

    monkeypatch.setattr(_scatter, "_on_cpu", lambda t: False)
    for c in GRAD_CASES:
        if c.get("reduce_op") in ("max", "min") or c["op"] in ("segment_max", "segment_min"):
            out, grads = _run(c)
            np.testing.assert_allclose(out.numpy(), np.array(c["out"], "float32"), rtol=1e-5,
                                       atol=1e-6)
            for g, ref in zip(grads, c["grads"]):
                np.testing.assert_allclose(g.numpy(), np.array(ref, "float32"), rtol=1e-5,
                                           atol=1e-6)


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min"])
def test_message_passing_traces_under_to_static(how):
    jit = pytest.importorskip("fw.jit")
    x = _t(np.arange(8).reshape(4, 2), "float32")
    y = _t([1.0, -2.0, 3.0], "float32")

    def f(x, s, d, y):
        return (G.send_ue_recv(x, y, s, d, "mul", how) * 2
                + G.send_uv(x, x, s, d, "sub").sum() + G.send_u_recv(x, s, d, how))

    g = jit.to_static(f, full_graph=True)
    for s, d in (([0, 1, 3], [1, 1, 0]), ([2, 2, 2], [3, 0, 3])):  # one program, new indices
        np.testing.assert_allclose(g(x, _t(s), _t(d), y).numpy(),
                                   f(x, _t(s), _t(d), y).numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64", "int32", "int64"])
def test_dtypes_are_kept(dtype):
    x = fw.to_tensor([[1.0], [4.0], [2.0]]).astype(dtype)
    ids = _t([0, 0, 1])
    want = {"sum": [[5], [2]], "mean": [[2], [2]] if "int" in dtype else [[2.5], [2]],
            "max": [[4], [2]], "min": [[1], [2]]}
    for how, ref in want.items():
        out = getattr(G, "segment_" + how)(x, ids)
        assert out.dtype == x.dtype and out.astype("float32").tolist() == ref, how
