"""Eager auto-parallel on 2 ranks under fw's launcher: every reshard transition,
the SPMD rules (values, gradients and the placements they choose), random chains
of table ops with random placements (hypothesis), and an MLP with column/row
sharded weights training like the dense model; on 4 ranks, a [2, 2] mesh.

Run as a script by the launcher, this file is also the ranks' program
(``python test_auto_parallel_ranks.py <check> [file]``); each rank compares with
the dense computation done in its own process and emits ``OK <check>``."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


# ====================================================================== the ranks
def _emit(tag, rank, text):
    sys.path.insert(0, os.path.join(HERE, "comm_scripts"))
    from _emit import emit

    emit(tag, rank, text)


def _close(a, b, what, rtol=1e-5, atol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
        raise AssertionError(f"{what}: got {a.tolist()} want {b.tolist()}")


def _placements(code):
    import fw.distributed as dist

    return {"R": dist.Replicate(), "P": dist.Partial(), "S0": dist.Shard(0),
            "S1": dist.Shard(1)}[code]


def check_reshard(rank):
    """Every transition of R, S0, S1, P on a [2] mesh, even and uneven shapes, with
    the local block checked and the gradient flowing back through it."""
    import fw
    import fw.distributed as dist
    from fw.distributed.auto_parallel._layout import local_box

    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    codes = ["R", "S0", "S1", "P"]
    n = 0
    for shape in ([4, 6], [5, 3]):
        dense = np.arange(np.prod(shape), dtype="float32").reshape(shape) - 3.0
        coef = np.random.default_rng(1).standard_normal(shape).astype("float32")
        for s in codes:
            for d in codes:
                leaf = fw.to_tensor(dense, stop_gradient=False)
                t = dist.shard_tensor(leaf * 1.0, mesh, [_placements(s)])
                r = dist.reshard(t, mesh, [_placements(d)])
                assert r.placements == [_placements(d)], (s, d, r.placements)
                loc = r.local_value().numpy()
                if d == "P":
                    want = dense if rank == 0 else np.zeros_like(dense)
                else:
                    box = local_box(shape, [_placements(d)], mesh, [rank])
                    want = dense[tuple(slice(a, a + k) for a, k in box)]
                _close(loc, want, f"{s}->{d} {shape} local block")
                full = dist.unshard_dtensor(r)
                _close(full.numpy(), dense, f"{s}->{d} {shape} unshard")
                _close(r.numpy(), dense, f"{s}->{d} {shape} numpy() is the whole tensor")
                (full * fw.to_tensor(coef)).sum().backward()
                _close(leaf.grad.numpy(), coef, f"{s}->{d} {shape} gradient")
                n += 1
    _emit("OK", rank, f"reshard {n}")


def _dense_and_dist(mesh, arr, code, grad=True):
    import fw
    import fw.distributed as dist

    d = fw.to_tensor(arr, stop_gradient=not grad)
    leaf = fw.to_tensor(arr, stop_gradient=not grad)
    t = dist.shard_tensor(leaf, mesh, [_placements(code)])
    return d, t


def check_rules(rank):
    """Each rule: the placements it chooses, values and gradients == dense, and no
    fallback for ops that have rules."""
    import fw
    import fw.distributed as dist
    import fw.nn.functional as F
    from fw.distributed import auto_parallel as ap

    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    rng = np.random.default_rng(0)
    R, P, S0, S1 = (_placements(c) for c in ("R", "P", "S0", "S1"))
    ap.reset_fallback_report()
    cases = []

    def case(name, fn, specs, want_pl):
        arrays = [rng.standard_normal(s).astype("float32") if isinstance(s, list) else s
                  for s, _ in specs]
        dense = [fw.to_tensor(a, stop_gradient=not isinstance(s, list))
                 if isinstance(a, np.ndarray) else a for a, (s, _) in zip(arrays, specs)]
        dist_in = []
        for a, (_s, c) in zip(arrays, specs):
            if c is None:
                dist_in.append(fw.to_tensor(a) if isinstance(a, np.ndarray) else a)
            else:
                leaf = fw.to_tensor(a, stop_gradient=False)
                dist_in.append(dist.shard_tensor(leaf, mesh, [_placements(c)]))
        got = fn(*dist_in)
        want = fn(*dense)
        if isinstance(got, (tuple, list)):   # every output of a list-output op
            assert len(got) == len(want), (name, len(got), len(want))
            for k, (g, w) in enumerate(zip(got[1:], want[1:])):
                _close(dist.unshard_dtensor(g).numpy(), w.numpy(), f"{name} output {k + 1}",
                       rtol=1e-4, atol=1e-5)
        got0 = got[0] if isinstance(got, (tuple, list)) else got
        want0 = want[0] if isinstance(want, (tuple, list)) else want
        if want_pl is not None:
            assert got0.placements == [want_pl], (name, got0.placements, want_pl)
        _close(dist.unshard_dtensor(got0).numpy(), want0.numpy(), name, rtol=1e-4, atol=1e-5)
        if want0.dtype.name.startswith("float"):
            w = rng.standard_normal(want0.shape).astype("float32")
            (want0 * fw.to_tensor(w)).sum().backward()
            (dist.unshard_dtensor(got0) * fw.to_tensor(w)).sum().backward()
            for a, b, (s, c) in zip(dist_in, dense, specs):
                if c is not None and isinstance(s, list):
                    g = dist.unshard_dtensor(a.grad)
                    _close(g.numpy(), b.grad.numpy(), f"{name} grad", rtol=1e-4, atol=1e-5)
        cases.append(name)

    case("matmul S1@S0 -> Partial", lambda x, w: x @ w, [([4, 6], "S1"), ([6, 3], "S0")], P)
    case("matmul S0@R -> S0", lambda x, w: x @ w, [([5, 6], "S0"), ([6, 3], "R")], S0)
    case("matmul R@S1 -> S1", lambda x, w: x @ w, [([4, 6], "R"), ([6, 3], "S1")], S1)
    case("matmul S1@R -> Partial", lambda x, w: x @ w, [([4, 6], "S1"), ([6, 3], "R")], P)
    case("batched matmul S0", lambda x, w: fw.matmul(x, w, transpose_y=True),
         [([2, 3, 4], "S0"), ([2, 5, 4], "S0")], S0)
    case("add broadcast S0+R", lambda x, b: x + b, [([5, 3], "S0"), ([3], "R")], S0)
    case("add S1+dense", lambda x, b: x + b, [([4, 3], "S1"), ([4, 3], None)], S1)
    case("P+P stays Partial", lambda x, y: x + y, [([4, 3], "P"), ([4, 3], "P")], P)
    case("P*R stays Partial", lambda x, y: x * y, [([4, 3], "P"), ([4, 3], "R")], P)
    case("P+scalar is reduced", lambda x: x + 1.0, [([4, 3], "P")], R)
    case("tanh S1", lambda x: fw.tanh(x), [([4, 3], "S1")], S1)
    case("relu P reduced", lambda x: F.relu(x), [([4, 3], "P")], R)
    case("sum over sharded axis", lambda x: x.sum(axis=0), [([5, 3], "S0")], P)
    case("sum keeps other axis", lambda x: x.sum(axis=0), [([4, 3], "S1")], S0)
    case("mean over all (uneven)", lambda x: x.mean(), [([5, 3], "S0")], P)
    case("mean keepdim S1", lambda x: x.mean(axis=1, keepdim=True), [([4, 5], "S1")], P)
    case("reshape keeps S0", lambda x: x.reshape([4, 3, 2]), [([4, 6], "S0")], S0)
    case("reshape merges S1", lambda x: x.reshape([24]), [([4, 6], "S1")], R)
    case("transpose S0 -> S1", lambda x: x.transpose([1, 0]), [([4, 6], "S0")], S1)
    case("softmax on other axis", lambda x: F.softmax(x, axis=1), [([4, 6], "S0")], S0)
    case("softmax on sharded axis", lambda x: F.softmax(x, axis=1), [([4, 6], "S1")], R)
    ids = np.array([[1, 7], [0, 3], [9, 2]], dtype="int64")
    case("embedding ids S0", lambda i, w: F.embedding(i, w), [(ids, "S0"), ([10, 4], "R")], S0)
    case("embedding column table", lambda i, w: F.embedding(i, w), [(ids, "R"), ([10, 4], "S1")],
         dist.Shard(2))
    case("layer_norm batch sharded", lambda x, w, b: F.layer_norm(x, [6], w, b),
         [([5, 6], "S0"), ([6], "R"), ([6], "R")], S0)
    case("embedding row-split table (vocab parallel)", lambda i, w: F.embedding(i, w),
         [(ids, "R"), ([10, 4], "S0")], P)
    case("embedding row-split table, padding_idx", lambda i, w: F.embedding(i, w, padding_idx=7),
         [(ids, "R"), ([10, 4], "S0")], P)
    lab = np.array([[1], [0], [3], [2], [1]], dtype="int64")
    case("cross_entropy none S0", lambda x, y: F.cross_entropy(x, y, reduction="none"),
         [([5, 4], "S0"), (lab, "S0")], S0)
    case("cross_entropy sum S0", lambda x, y: F.cross_entropy(x, y, reduction="sum"),
         [([5, 4], "S0"), (lab, "S0")], P)
    case("linear column", lambda x, w, b: F.linear(x, w, b),
         [([3, 4], "R"), ([4, 6], "S1"), ([6], "S0")], S1)
    case("linear row", lambda x, w, b: F.linear(x, w, b),
         [([3, 4], "S1"), ([4, 6], "S0"), ([6], "R")], P)
    # ops with a list input (their rules get one Spec per element) or a list output
    case("concat S0 along dim 1", lambda x, y: fw.concat([x, y], axis=1),
         [([4, 6], "S0"), ([4, 3], "S0")], S0)
    case("concat S1 along dim 1 gathers", lambda x, y: fw.concat([x, y], axis=1),
         [([4, 6], "S1"), ([4, 3], "R")], R)
    case("stack S1 -> Shard(2)", lambda x, y: fw.stack([x, y], axis=0),
         [([4, 6], "S1"), ([4, 6], "R")], dist.Shard(2))
    case("einsum contracted S1 -> Partial", lambda x, y: fw.einsum("ij,kj->ik", x, y),
         [([4, 6], "S1"), ([3, 6], "S1")], P)
    case("einsum batch S0", lambda x, y: fw.einsum("bij,bjk->bik", x, y),
         [([4, 2, 3], "S0"), ([4, 3, 5], "R")], S0)
    case("broadcast_tensors S0", lambda x, y: fw.broadcast_tensors([x, y]),
         [([5, 3], "S0"), ([1, 3], "R")], S0)
    case("meshgrid shards dim 0", lambda x, y: fw.meshgrid(x, y),
         [([5], "S0"), ([3], "R")], S0)
    case("multiplex rows S0", lambda x, y, i: fw.multiplex([x, y], i),
         [([4, 3], "S0"), ([4, 3], "S0"),
          (np.array([[0], [1], [1], [0]], dtype="int32"), "S0")], S0)
    case("unbind keeps S1", lambda x: fw.unbind(x, axis=0), [([3, 4], "S1")], S0)
    # data-dependent output sizes: Replicate, the size known once the op ran
    case("masked_select replicate", lambda x: fw.masked_select(x, x > 0), [([5, 3], "S0")], R)
    ruled = ap.fallback_report()
    for name in ("concat", "stack", "einsum", "broadcast_tensors", "meshgrid", "multiplex",
                 "unbind", "masked_select"):
        assert name not in ruled, (name, ruled)
    for name in ("matmul", "add", "sum", "mean", "reshape", "transpose", "softmax", "embedding",
                 "layer_norm", "linear", "tanh"):
        assert name not in ruled, (name, ruled)
    # an op without a rule (every op of the table has one now: cumsum's is taken away
    # here): the fallback runs, is counted and warns once
    import warnings

    from fw.distributed.auto_parallel import spmd

    x = dist.shard_tensor(fw.to_tensor(rng.standard_normal([4, 3]).astype("float32")), mesh, [S0])
    cumsum_rule = ap.RULES.pop("cumsum")
    spmd._PLANS.clear()
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = fw.cumsum(x, axis=0)
    finally:
        ap.RULES["cumsum"] = cumsum_rule
        spmd._PLANS.clear()
    assert ap.fallback_report().get("cumsum") == 1, ap.fallback_report()
    assert any("cumsum" in str(m.message) for m in w), [str(m.message) for m in w]
    assert y.placements == [R]
    _close(y.numpy(), np.cumsum(dist.unshard_dtensor(x).numpy(), axis=0), "cumsum fallback")
    # the fallback of a list-output op returns every output (it used to return none)
    unbind_rule = ap.RULES.pop("unbind")
    spmd._PLANS.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = fw.unbind(x, axis=1)
    finally:
        ap.RULES["unbind"] = unbind_rule
        spmd._PLANS.clear()
    assert len(parts) == 3 and all(p.placements == [R] for p in parts), parts
    for k, p in enumerate(parts):
        _close(p.numpy(), dist.unshard_dtensor(x).numpy()[:, k], "unbind fallback")
    _emit("OK", rank, f"rules {len(cases)}")


_CHAIN_OPS = ("add", "mul", "matmul", "tanh", "sum0", "sum1", "mean", "softmax", "transpose",
              "reshape", "reshard", "exp_neg")


def run_chain(fw, dist, mesh, chain, distributed):
    """Apply a chain of ops to x (and operands drawn from its seed); dense or
    distributed. Returns the final tensor and the leaves."""
    rng = np.random.default_rng(chain["seed"])
    shape = chain["shape"]
    leaves = []

    def make(arr, code):
        leaf = fw.to_tensor(arr, stop_gradient=False)
        if distributed:   # a distributed leaf of its own (like a sharded parameter)
            leaf = dist.shard_tensor(leaf, mesh, [_placements(code)])
        leaves.append(leaf)
        return leaf

    x = make(rng.standard_normal(shape).astype("float32"), chain["place"])
    for op, code in chain["ops"]:
        cur = x.shape
        if op in ("add", "mul"):
            y = make(rng.standard_normal(cur).astype("float32"), code)
            x = x + y if op == "add" else x * y
        elif op == "matmul" and len(cur) == 2:
            w = make(rng.standard_normal([cur[1], 3]).astype("float32") * 0.5, code)
            x = x @ w
        elif op == "tanh":
            x = fw.tanh(x)
        elif op == "exp_neg":
            x = fw.exp(-x * x)
        elif op == "sum0" and len(cur) == 2:
            x = x.sum(axis=0, keepdim=True)
        elif op == "sum1" and len(cur) == 2:
            x = x.sum(axis=1, keepdim=True)
        elif op == "mean" and len(cur) == 2:
            x = x.mean(axis=0, keepdim=True) + x
        elif op == "softmax":
            x = fw.nn.functional.softmax(x, axis=-1)
        elif op == "transpose" and len(cur) == 2:
            x = x.transpose([1, 0])
        elif op == "reshape" and len(cur) == 2:
            x = x.reshape([cur[0], cur[1], 1]).reshape(cur)
        elif op == "reshard" and distributed:
            x = dist.reshard(x, mesh, [_placements(code)])
    return x, leaves


def check_chains(rank, path):
    import fw
    import fw.distributed as dist

    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    with open(path) as f:
        chains = json.load(f)
    for k, chain in enumerate(chains):
        want, dl = run_chain(fw, dist, mesh, chain, False)
        got, gl = run_chain(fw, dist, mesh, chain, True)
        full = dist.unshard_dtensor(got)
        _close(full.numpy(), want.numpy(), f"chain {k} {chain}", rtol=1e-4, atol=1e-5)
        wt = np.random.default_rng(k).standard_normal(want.shape).astype("float32")
        (want * fw.to_tensor(wt)).sum().backward()
        (full * fw.to_tensor(wt)).sum().backward()
        for a, b in zip(gl, dl):
            assert (a.grad is None) == (b.grad is None), (k, chain)
            if b.grad is not None:
                _close(dist.unshard_dtensor(a.grad).numpy(), b.grad.numpy(),
                       f"chain {k} grad {chain}", rtol=1e-4, atol=1e-5)
    _emit("OK", rank, f"chains {len(chains)}")


def _mlp(fw):
    fw.seed(7)
    return fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 4))


def train(fw, model, opt, steps=5):
    rng = np.random.default_rng(3)
    losses = []
    for _ in range(steps):
        x = fw.to_tensor(rng.standard_normal([6, 8]).astype("float32"))
        y = fw.to_tensor(rng.standard_normal([6, 4]).astype("float32"))
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(np.asarray(loss.numpy())))
    return losses


def check_mlp(rank):
    """Column-parallel first Linear (weight Shard(1), bias Shard(0)), row-parallel
    second (weight Shard(0)); Adam; 5 steps == the dense model."""
    import fw
    import fw.distributed as dist

    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    dist.auto_parallel.reset_fallback_report()
    dense = _mlp(fw)
    want = train(fw, dense, fw.optimizer.Adam(learning_rate=0.01,
                                              parameters=dense.parameters()))

    def shard_fn(name, layer, m):
        if name == "0":
            layer.weight = dist.shard_tensor(layer.weight, m, [dist.Shard(1)])
            layer.bias = dist.shard_tensor(layer.bias, m, [dist.Shard(0)])
        elif name == "2":
            layer.weight = dist.shard_tensor(layer.weight, m, [dist.Shard(0)])

    model = dist.shard_layer(_mlp(fw), mesh, shard_fn)
    assert model[0].weight.local_value().shape == [8, 8]
    assert model[2].bias.placements == [dist.Replicate()]
    opt = dist.shard_optimizer(fw.optimizer.Adam(learning_rate=0.01,
                                                 parameters=model.parameters()))
    got = train(fw, model, opt)
    _close(got, want, "MLP losses", rtol=1e-5, atol=1e-6)
    for p, q in zip(model.parameters(), dense.parameters()):
        _close(dist.unshard_dtensor(p).numpy(), q.numpy(), f"trained {p.name}", rtol=1e-4,
               atol=1e-5)
    assert not dist.auto_parallel.fallback_report(), dist.auto_parallel.fallback_report()
    _emit("LOSSES", rank, json.dumps(got))
    _emit("DENSE", rank, json.dumps(want))
    _emit("OK", rank, "mlp")


def check_mesh2d(rank):
    """4 ranks, mesh [2, 2] (dp x mp): random pairs of placement lists (nested
    sharding of one dim included) reshard exactly, and a dp x mp MLP (batch on dp,
    column/row weights on mp) trains 3 SGD steps like the dense model."""
    import fw
    import fw.distributed as dist
    from fw.distributed.auto_parallel._layout import local_box

    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    coord = mesh.coordinate(rank)
    codes = ["R", "S0", "S1", "P"]
    rng = np.random.default_rng(0)
    dense = np.arange(30, dtype="float32").reshape(5, 6) - 7.0
    n = 0
    for _ in range(24):
        src = [_placements(c) for c in rng.choice(codes, 2)]
        dst = [_placements(c) for c in rng.choice(codes, 2)]
        leaf = fw.to_tensor(dense, stop_gradient=False)
        r = dist.reshard(dist.shard_tensor(leaf * 1.0, mesh, src), mesh, dst)
        if not any(isinstance(p, dist.Partial) for p in dst):
            box = local_box([5, 6], dst, mesh, coord)
            _close(r.local_value().numpy(), dense[tuple(slice(a, a + k) for a, k in box)],
                   f"{src}->{dst} block")
        full = dist.unshard_dtensor(r)
        _close(full.numpy(), dense, f"{src}->{dst}")
        (full * 2.0).sum().backward()
        _close(leaf.grad.numpy(), np.full_like(dense, 2.0), f"{src}->{dst} grad")
        n += 1
    dist.auto_parallel.reset_fallback_report()
    ref = _mlp(fw)
    want = train(fw, ref, fw.optimizer.SGD(0.1, parameters=ref.parameters()), steps=3)
    R, S0, S1 = dist.Replicate(), dist.Shard(0), dist.Shard(1)

    def shard_fn(name, layer, m):
        if name == "0":
            layer.weight = dist.shard_tensor(layer.weight, m, [R, S1])
            layer.bias = dist.shard_tensor(layer.bias, m, [R, S0])
        elif name == "2":
            layer.weight = dist.shard_tensor(layer.weight, m, [R, S0])

    model = dist.shard_layer(_mlp(fw), mesh, shard_fn,
                             input_fn=lambda ins, m: tuple(
                                 dist.shard_tensor(x, m, [S0, R]) for x in ins))
    got = train(fw, model, dist.shard_optimizer(fw.optimizer.SGD(0.1,
                                                                 parameters=model.parameters())),
                steps=3)
    _close(got, want, "dp x mp MLP losses", rtol=1e-5, atol=1e-6)
    assert not dist.auto_parallel.fallback_report(), dist.auto_parallel.fallback_report()
    _emit("OK", rank, f"mesh2d {n}")


def _worker(argv):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import fw.distributed as dist

    dist.init_parallel_env()
    rank = dist.get_rank()
    for check in argv[0].split(","):
        if check == "reshard":
            check_reshard(rank)
        elif check == "rules":
            check_rules(rank)
        elif check == "mlp":
            check_mlp(rank)
        elif check == "mesh2d":
            check_mesh2d(rank)
        elif check == "chains":
            check_chains(rank, argv[1])


if __name__ == "__main__":
    _worker(sys.argv[1:])
    sys.exit(0)


# ====================================================================== the tests
import pytest  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, HERE)
from comm_testutil import clean_env, explain, rank_lines, run_cmd  # noqa: E402


def _launch(args, timeout=150, nproc=2):
    logs = tempfile.mkdtemp(prefix="fw_ap_logs_")
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", str(nproc),
           "--log_dir", logs, "--timeout", "60", os.path.abspath(__file__), *args]
    p = run_cmd(cmd, timeout, clean_env(OMP_NUM_THREADS=1))
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            p.stderr += f"\n--- {name}\n" + f.read()[-6000:]
    shutil.rmtree(logs, ignore_errors=True)
    return p


@pytest.fixture(scope="module")
def ranks_run():
    """One 2-rank job for the reshard, rules and MLP checks (the launch dominates)."""
    return _launch(["reshard,rules,mlp"])


def test_every_reshard_transition_equals_the_dense_tensor(ranks_run):
    oks = rank_lines(ranks_run.reports, "OK")
    assert ranks_run.returncode == 0, explain(ranks_run)
    assert "reshard 32" in ranks_run.reports, explain(ranks_run)
    assert set(oks) == {0, 1}


def test_spmd_rules_match_dense_with_their_placements(ranks_run):
    assert ranks_run.returncode == 0, explain(ranks_run)
    for r in (0, 1):
        assert f"OK {r} rules 40" in ranks_run.reports, explain(ranks_run)


def test_sharded_mlp_trains_like_the_dense_model(ranks_run):
    assert ranks_run.returncode == 0, explain(ranks_run)
    losses = rank_lines(ranks_run.reports, "LOSSES")
    assert set(losses) == {0, 1}, explain(ranks_run)
    dense = rank_lines(ranks_run.reports, "DENSE")
    a, b = json.loads(losses[0]), json.loads(losses[1])
    assert a == b and len(a) == 5
    np.testing.assert_allclose(a, json.loads(dense[0]), rtol=1e-5, atol=1e-6)


_placement = st.sampled_from(["R", "S0", "S1", "P"])
_chain = st.fixed_dictionaries({
    "seed": st.integers(0, 2**16),
    "shape": st.sampled_from([[4, 6], [5, 3], [3, 2]]),
    "place": _placement,
    "ops": st.lists(st.tuples(st.sampled_from(_CHAIN_OPS), _placement), min_size=1,
                    max_size=5),
})


@settings(max_examples=2, deadline=None, derandomize=True,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(chains=st.lists(_chain, min_size=10, max_size=10))
def test_random_op_chains_with_random_placements_equal_dense(chains):
    """Each example is one 2-rank job running 10 chains (no shrinking: a failure
    prints the chain)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(chains, f)
    try:
        p = _launch(["chains", f.name])
    finally:
        os.unlink(f.name)
    assert p.returncode == 0, explain(p)
    for r in (0, 1):
        assert f"OK {r} chains 10" in p.reports, explain(p)


def test_mesh_2x2_reshard_and_dp_mp_mlp_on_4_ranks():
    """4 ranks, mesh [2, 2]: 8 s on the loaded 2-core machine, so it stays in CI."""
    p = _launch(["mesh2d"], timeout=300, nproc=4)
    assert p.returncode == 0, explain(p)
    for r in range(4):
        assert f"OK {r} mesh2d 24" in p.reports, explain(p)
