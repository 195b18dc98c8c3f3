"""dist.to_static's passes in one process: sharding propagation (the eager rule
registry over IR values, the backward sweep, fallbacks listed), reshard
insertion (every transition, against NumPy), partition + execution of random
programs of table ops with random placements on [2] and [2, 2] meshes (ranks
simulated as threads: `auto_parallel.static.sim`), and the DistModel / Strategy
/ shard_dataloader API on a one-rank mesh. The launched multi-rank runs are in
test_dist_static_ranks.py."""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
import fw.distributed as dist
from fw.core.internal import OPS
from fw.core.ir import TensorType, run
from fw.core.ir.builder import Builder
from fw.distributed.auto_parallel._layout import local_box
from fw.distributed.auto_parallel.static import propagate
from fw.distributed.auto_parallel.static.reshard import ReshardEmitter
from fw.distributed.auto_parallel.static.sim import SimulatedRanks, simulate

R, S0, S1, P = dist.Replicate(), dist.Shard(0), dist.Shard(1), dist.Partial()
CODES = {"R": R, "S0": S0, "S1": S1, "P": P}
MESH1 = dist.ProcessMesh([0, 1], dim_names=["x"])
MESH2 = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])


def _block(arr, pl, mesh, coord):
    box = local_box(arr.shape, pl, mesh, coord)
    return arr[tuple(slice(s, s + n) for s, n in box)]


def _param(arr, name):
    p = fw.create_parameter(list(arr.shape), "float32", name=name)
    p.set_value(arr)
    return p


def _mlp_program(w2_dense=True):
    rng = np.random.default_rng(0)
    w1 = _param(rng.standard_normal((6, 8)).astype("float32"), "st_w1")
    w2 = _param(rng.standard_normal((8, 3)).astype("float32"), "st_w2")
    b = Builder()
    with b:
        x = b.add_input(TensorType([4, 6], "float32"), "x")
        h = fw.nn.functional.relu(fw.matmul(x, w1))
        y = fw.matmul(h, w2)
        b.set_outputs([y, y.sum()])
    prog = b.program
    args = {a.label: a for a in prog.block.args}
    return prog, args, rng.standard_normal((4, 6)).astype("float32")


# ------------------------------------------------------------ propagation
def test_propagation_follows_the_rules_and_adopts_free_weights_backwards():
    """x replicated, W1 column-split: the rules make h column-split; the free W2
    adopts the row split its matmul wants (no gather), giving a Partial y."""
    prog, args, _ = _mlp_program()
    prop = propagate(prog, MESH1, {args["x"]: [R], args["st_w1"]: [S1]})
    ops = prog.block.ops
    assert prop.placements[ops[0].results[0]] == [S1]            # x @ W1
    assert prop.placements[ops[1].results[0]] == [S1]            # relu
    assert prop.adopted == {args["st_w2"]: [S0]}
    assert prop.placements[ops[2].results[0]] == [P]             # h @ W2: row-parallel
    assert prop.placements[ops[3].results[0]] == [P]             # sum of a Partial
    assert not prop.fallbacks
    assert prop.sweeps == 2                                      # one adoption, one check


def test_annotated_values_never_change_and_batch_sharding_flows_through():
    prog, args, _ = _mlp_program()
    prop = propagate(prog, MESH2, {args["x"]: [S0, R], args["st_w1"]: [R, R],
                                   args["st_w2"]: [R, R]})
    assert prop.placements[args["st_w1"]] == [R, R] and not prop.adopted
    y = prog.block.ops[2].results[0]
    assert prop.placements[y] == [S0, R]
    assert prop.placements[prog.block.ops[3].results[0]] == [P, R]


def test_an_op_without_a_rule_falls_back_to_replicate_and_is_listed(monkeypatch):
    from fw.distributed.auto_parallel.spmd_rules import RULES

    monkeypatch.delitem(RULES, "cumsum", raising=False)   # (whatever the registry has)
    b = Builder()
    with b:
        x = b.add_input(TensorType([4, 6], "float32"), "x")
        b.set_outputs([fw.cumsum(fw.tanh(x), axis=1)])
    prog = b.program
    x = np.random.default_rng(1).standard_normal((4, 6)).astype("float32")
    prop = propagate(prog, MESH1, {prog.inputs()[0]: [S0]})
    assert dict(prop.fallbacks) == {"cumsum": 1}
    assert [op.name for op in prop.fallback_ops] == ["cumsum"]
    outs, rps, _ = simulate(prog, MESH1, {prog.inputs()[0]: [S0]}, [x])
    want = np.cumsum(np.tanh(x), axis=1)
    for o in outs:
        np.testing.assert_allclose(o[0], want, rtol=1e-5, atol=1e-6)
    assert [c.kind for c in rps[0].comms] == ["all_gather"]       # the fallback's gather


def test_control_flow_is_refused_with_a_clear_error():
    from fw.core.errors import UnsupportedError

    b = Builder()
    with b:
        x = b.add_input(TensorType([2], "float32"), "x")
        b.set_outputs([fw.static.nn.cond(x.sum() > 0, lambda: x * 2.0, lambda: x - 1.0)])
    with pytest.raises(UnsupportedError, match="control flow is not supported by "
                                               "dist.to_static yet"):
        propagate(b.program, MESH1, {})


# ------------------------------------------------------------ reshard insertion
def _reshard_on_ranks(mesh, dense, src, dst):
    """Every rank's block of `dense` under `src` resharded to `dst` by the emitted ops."""
    world = int(np.asarray(mesh.mesh).size)
    sim = SimulatedRanks(world, timeout=30)
    progs = []
    for r in range(world):
        coord = mesh.coordinate(r)
        blk = _block(dense, [p if not isinstance(p, dist.Partial) else R for p in src],
                     mesh, coord)
        for a, p in enumerate(src):
            if isinstance(p, dist.Partial) and coord[a] != 0:
                blk = np.zeros_like(blk)
        b = Builder()
        with b:
            x = b.add_input(TensorType(list(blk.shape), "float32"), "x")
            em = ReshardEmitter(mesh, coord, sim.group_of(mesh, coord), [])
            b.set_outputs([em.reshard(x, list(dense.shape), src, dst)])
        progs.append((b.program, np.ascontiguousarray(blk)))
    return sim.run([lambda p=p, x=x: run(p, x).numpy() for p, x in progs])


@pytest.mark.parametrize("shape", [[4, 6], [5, 3]])
def test_every_reshard_transition_on_2_ranks_gives_the_numpy_block(shape):
    dense = np.arange(np.prod(shape), dtype="float32").reshape(shape) - 3.0
    n = 0
    for s in CODES:
        for d in CODES:
            outs = _reshard_on_ranks(MESH1, dense, [CODES[s]], [CODES[d]])
            if d == "P":
                np.testing.assert_allclose(sum(outs), dense, err_msg=f"{s}->{d}")
            else:
                for r, o in enumerate(outs):
                    np.testing.assert_array_equal(o, _block(dense, [CODES[d]], MESH1, [r]),
                                                  err_msg=f"{s}->{d} rank {r}")
            n += 1
    assert n == 16


def _comms(mesh, shape, src, dst):
    log = []
    b = Builder()
    with b:
        blk = local_box(shape, src, mesh, mesh.coordinate(0))
        x = b.add_input(TensorType([n for _, n in blk], "float32"), "x")
        em = ReshardEmitter(mesh, mesh.coordinate(0), lambda a: (0, [0, 1]), log)
        em.reshard(x, list(shape), src, dst)
    return [(c.kind, c.nbytes) for c in log], b.program


@pytest.mark.parametrize("shape,i,j", [([6, 4, 5], 0, 2), ([7, 5, 3], 2, 0), ([5, 7, 2], 1, 0),
                                       ([4, 3, 7], 0, 1)])
def test_shard_to_shard_is_one_all_to_all_on_3_ranks(shape, i, j):
    """Shard(i) -> Shard(j) on one axis: one all_to_all (uneven blocks travel
    padded), every rank's block equal to NumPy's."""
    mesh = dist.ProcessMesh([0, 1, 2], dim_names=["x"])
    dense = np.arange(np.prod(shape), dtype="float32").reshape(shape) - 11.0
    for src, dst in (([dist.Shard(i)], [dist.Shard(j)]), ([dist.Shard(j)], [dist.Shard(i)])):
        outs = _reshard_on_ranks(mesh, dense, src, dst)
        for r, o in enumerate(outs):
            np.testing.assert_array_equal(o, _block(dense, dst, mesh, [r]),
                                          err_msg=f"{src}->{dst} rank {r}")
        kinds, prog = _comms(mesh, shape, src, dst)
        assert [k for k, _ in kinds] == ["all_to_all"]
        assert "all_to_all(" in str(prog) and "c_allgather" not in str(prog)


def test_all_to_all_moves_1_over_n_of_what_gather_and_slice_moved():
    # [4, 6] float32 on 2 ranks, S0 -> S1: a block is [2, 6] = 48 B; the all-to-all
    # sends the half of it the peer needs (24 B), the gather sent the whole block (48 B)
    kinds, _ = _comms(MESH1, [4, 6], [S0], [S1])
    assert kinds == [("all_to_all", 24)]
    # on a [2, 2] mesh, S0 on "mp" -> S1 on "mp" is the same lone exchange on that axis
    # (block [4, 6] = 96 B, half of it sent); dim 0 sharded on both axes is not lone:
    # it is gathered along both axes, then sliced
    kinds, _ = _comms(MESH2, [8, 6], [R, S0], [R, S1])
    assert kinds == [("all_to_all", 48)]
    kinds, _ = _comms(MESH2, [8, 6], [S0, S0], [S0, S1])
    assert [k for k, _ in kinds] == ["all_gather", "all_gather"]


def test_random_reshards_on_a_2x2_mesh_give_the_numpy_block():
    rng = np.random.default_rng(3)
    dense = np.arange(30, dtype="float32").reshape(5, 6) - 7.0
    for _ in range(12):
        src = [CODES[c] for c in rng.choice(list(CODES), 2)]
        dst = [CODES[c] for c in rng.choice(["R", "S0", "S1"], 2)]
        outs = _reshard_on_ranks(MESH2, dense, src, dst)
        for r, o in enumerate(outs):
            np.testing.assert_array_equal(o, _block(dense, dst, MESH2, MESH2.coordinate(r)),
                                          err_msg=f"{src}->{dst} rank {r}")


# ------------------------------------------------------------ random programs
_OPS = ["add_p", "mul_row", "tanh", "relu", "matmul", "matmul_t", "transpose", "center",
        "reshape", "softmax", "sum0"]


def _random_program(seed, ops, shape):
    """A chain of table ops on x with random parameters; outputs the result, a
    scalar loss and the parameters' gradients (the backward is in the program)."""
    from fw.autograd import gradients

    rng = np.random.default_rng(seed)
    params = []

    def param(shp):
        p = _param(rng.standard_normal(shp).astype("float32"), f"rp{seed}_{len(params)}")
        params.append(p)
        return p

    b = Builder()
    with b:
        x = b.add_input(TensorType(list(shape), "float32"), "x")
        h = x
        for op in ops:
            a, c = h.shape
            if op == "add_p":
                h = h + param((a, c))
            elif op == "mul_row":
                h = h * param((c,))
            elif op == "tanh":
                h = fw.tanh(h)
            elif op == "relu":
                h = fw.nn.functional.relu(h)
            elif op == "matmul":
                h = fw.matmul(h, param((c, int(rng.integers(2, 6)))))
            elif op == "matmul_t":
                h = fw.matmul(h, param((int(rng.integers(2, 6)), c)), transpose_y=True)
            elif op == "transpose":
                h = fw.transpose(h, [1, 0])
            elif op == "center":
                h = h - h.mean(axis=1, keepdim=True)
            elif op == "reshape":
                h = h.reshape([c, a])
            elif op == "softmax":
                h = fw.nn.functional.softmax(h, axis=-1)
            elif op == "sum0":
                h = h.sum(axis=0, keepdim=True) + h
        loss = (h * h).sum()
        vals = [b.current_value(p) for p in params]
        grads = gradients([loss], vals, None, allow_unused=True) if vals else []
        b.set_outputs([h, loss] + [g for g in grads if g is not None])
    return b.program, params


_case = st.fixed_dictionaries({
    "seed": st.integers(0, 2**16),
    "shape": st.sampled_from([[4, 6], [5, 3], [4, 4]]),
    "ops": st.lists(st.sampled_from(_OPS), min_size=1, max_size=5),
    "places": st.lists(st.sampled_from(["R", "S0", "S1"]), min_size=14, max_size=14),
})


def _check_random_program(case, mesh):
    prog, _ = _random_program(case["seed"], case["ops"], case["shape"])
    x = np.random.default_rng(case["seed"]).standard_normal(case["shape"]).astype("float32")
    dense = run(prog, x)
    dense = [d.numpy() for d in (dense if isinstance(dense, tuple) else (dense,))]
    places = iter(case["places"])
    ann = {}
    for a in prog.block.args:     # the input and every parameter get random placements
        ann[a] = [CODES[next(places)] for _ in range(mesh.ndim)]
        ann[a] = [p if not isinstance(p, dist.Shard) or p.dim < len(a.type.shape) else R
                  for p in ann[a]]
    outs, _, _ = simulate(prog, mesh, ann, [x], timeout=30)
    for r, got in enumerate(outs):
        for k, (g, d) in enumerate(zip(got, dense)):
            np.testing.assert_allclose(g, d, rtol=2e-4, atol=2e-5,
                                       err_msg=f"{case} rank {r} output {k}")


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(case=_case)
def test_random_programs_with_random_placements_on_2_ranks_equal_dense(case):
    _check_random_program(case, MESH1)


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(case=_case)
def test_random_programs_with_random_placements_on_a_2x2_mesh_equal_dense(case):
    _check_random_program(case, MESH2)


# ------------------------------------------------------------ list-input / list-output ops
@pytest.mark.parametrize("place", [S0, S1])
def test_ops_with_list_inputs_and_outputs_follow_their_rules_on_2_ranks(place):
    """concat, stack, einsum, meshgrid, broadcast_tensors, multiplex and unbind get
    their rules (one Spec per list element), not the replicate fallback, and the
    partitioned program gives the dense result on every rank."""
    b = Builder()
    with b:
        x = b.add_input(TensorType([4, 6], "float32"), "x")
        y = b.add_input(TensorType([4, 6], "float32"), "y")
        v = b.add_input(TensorType([4], "float32"), "v")
        idx = b.add_input(TensorType([4, 1], "int32"), "idx")
        s = fw.stack([x, y], axis=0)
        g1, g2 = fw.meshgrid(v, v)
        bx, by = fw.broadcast_tensors([x, v.reshape([4, 1])])
        u = fw.unbind(s, axis=0)
        b.set_outputs([fw.concat([x, y], axis=1), s, fw.einsum("ij,kj->ik", x, y), g1, g2,
                       bx, by, u[0] - u[1],
                       # the table's multiplex op itself (fw.multiplex is a composite)
                       b.emit(OPS["multiplex"], [[x, y], idx], {})])
    prog = b.program
    args = {a.label: a for a in prog.block.args}
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 6)).astype("float32"),
          rng.standard_normal((4, 6)).astype("float32"),
          rng.standard_normal(4).astype("float32"), np.array([[0], [1], [1], [0]], "int32")]
    dense = [o.numpy() for o in run(prog, *xs)]
    ann = {args["x"]: [place], args["y"]: [place], args["v"]: [S0], args["idx"]: [S0]}
    prop = propagate(prog, MESH1, ann)
    assert not prop.fallbacks, prop.fallbacks
    by_name = {op.name: op for op in prog.block.ops}
    out = prop.placements
    if place == S0:
        assert out[by_name["concat"].results[0]] == [S0]
        assert out[by_name["stack"].results[0]] == [S1]
        assert out[by_name["einsum"].results[0]] == [S0]
        assert out[by_name["multiplex"].results[0]] == [S0]
    else:   # the joined / contracted dim 1: concat gathers, einsum gives a Partial sum
        assert out[by_name["concat"].results[0]] == [R]
        assert out[by_name["stack"].results[0]] == [dist.Shard(2)]
        assert out[by_name["einsum"].results[0]] == [P]
    assert all(out[r] == [S0] for r in by_name["meshgrid"].results)
    outs, rps, _ = simulate(prog, MESH1, ann, xs, timeout=30)
    for r in range(2):
        for k, (o, d) in enumerate(zip(outs[r], dense)):
            np.testing.assert_allclose(o, d, rtol=1e-5, atol=1e-5, err_msg=f"rank {r} out {k}")


def test_row_split_embedding_is_vocab_parallel_with_its_gradient_on_2_ranks():
    """A row-split table: each rank looks up its own rows (masked), the lookup is
    Partial(sum) — no gather of the table — and the table's gradient is the rank's
    block of the dense gradient."""
    from fw.autograd import gradients

    rng = np.random.default_rng(7)
    w = _param(rng.standard_normal((7, 4)).astype("float32"), "vp_table")
    coef = rng.standard_normal((3, 5, 4)).astype("float32")
    b = Builder()
    with b:
        ids = b.add_input(TensorType([3, 5], "int64"), "ids")
        out = fw.nn.functional.embedding(ids, w)
        loss = (out * fw.to_tensor(coef)).sum()
        (gw,) = gradients([loss], [b.current_value(w)])
        b.set_outputs([out, loss, gw])
    prog = b.program
    args = {a.label: a for a in prog.block.args}
    x = rng.integers(0, 7, (3, 5)).astype("int64")
    dense = [o.numpy() for o in run(prog, x)]
    ann = {args["vp_table"]: [S0], args["ids"]: [R]}
    prop = propagate(prog, MESH1, ann)
    emb = next(op for op in prog.block.ops if op.name == "embedding")
    assert prop.plans[emb].inputs[1] == [S0] and prop.placements[emb.results[0]] == [P]
    assert not prop.fallbacks, prop.fallbacks
    outs, rps, _ = simulate(prog, MESH1, ann, [x], [[R], [R], [S0]], timeout=30)
    for r in range(2):
        for k, (o, d) in enumerate(zip(outs[r], dense)):
            want = _block(d, [S0], MESH1, [r]) if k == 2 else d
            np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-5, err_msg=f"rank {r} {k}")
        # only the lookup's Partial -> Replicate all-reduce, no gather of the table
        assert rps[r].comms and all(str(c).startswith("Comm(all_reduce")
                                    for c in rps[r].comms), rps[r].comms


# ------------------------------------------------------------ the GPT, simulated
def test_char_gpt_forward_and_backward_partitioned_on_2x2_equals_dense():
    """The examples' char GPT, annotated on its input (dp) and first/last weights
    (mp) only: each rank's loss and gradient blocks equal the dense program's."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    from char_gpt import CharGPT

    from fw.distributed.auto_parallel.static.tracing import trace_step

    fw.seed(0)
    model = CharGPT(20, 8, n_layer=1, d_model=16, n_head=2, tied=False)
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 20, (4, 8)), rng.integers(0, 20, (4, 8))

    def loss_fn(logits, label):
        return fw.nn.functional.cross_entropy(logits.reshape([-1, 20]), label.reshape([-1]))

    tr = trace_step(model, loss_fn, [fw.to_tensor(x), fw.to_tensor(y)], "train", MESH2)
    prog = tr.program
    dense = [o.numpy() for o in run(prog, x, y)]
    ann = {}
    for a in prog.block.args:
        if a.role == "input":
            ann[a] = [S0, R]
        elif a.label in (model.tok.weight.name, model.head.weight.name):
            ann[a] = [R, S1]
    prop = propagate(prog, MESH2, ann)
    labels = {a.label: a for a in prog.block.args}
    outs_pl = [[R, R]] + [prop.placements[labels[lab]] for lab in tr.grads]
    outs, rps, _ = simulate(prog, MESH2, ann, [x, y], outs_pl)
    assert prop.placements[labels[model.tok.weight.name]] == [R, S1]
    # the mean cross entropy over the dp-sharded batch is a Partial loss: the logits
    # are not gathered over dp (its rule used to decline)
    ce = next(op for op in prog.block.ops if op.name == "cross_entropy_with_softmax")
    assert "cross_entropy_with_softmax" not in prop.fallbacks, prop.fallbacks
    assert "cross_entropy_with_softmax_grad" not in prop.fallbacks, prop.fallbacks
    assert prop.placements[ce.results[0]][0] == P
    assert prop.plans[ce].inputs[0][0] == S0
    for r in range(4):
        for k, (o, d) in enumerate(zip(outs[r], dense)):
            np.testing.assert_allclose(o, _block(d, outs_pl[k], MESH2, MESH2.coordinate(r)),
                                       rtol=1e-4, atol=1e-5, err_msg=f"rank {r} output {k}")
    assert all(rp.comms for rp in rps.values())


@pytest.mark.parametrize("weighted", [False, True])
def test_char_gpt_with_ignore_index_on_dp_keeps_the_logits_sharded(weighted):
    """Data parallel GPT whose loss has ignore_index >= 0 (and class weights): the
    mean cross entropy and its gradient follow their rules (no fallback, the logits
    stay batch-sharded, a Partial loss); only the labels travel whole (an all-gather
    of integers); every rank's loss and gradient blocks equal the dense program's."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    from char_gpt import CharGPT

    from fw.distributed.auto_parallel.static.tracing import trace_step

    fw.seed(0)
    model = CharGPT(20, 8, n_layer=1, d_model=16, n_head=2, tied=False)
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 20, (4, 8)), rng.integers(0, 20, (4, 8))
    y[:, :3] = 0                        # padding: ignored, unevenly over the two blocks
    y[0] = 0
    cw = fw.to_tensor(rng.uniform(0.5, 2, 20).astype("float32")) if weighted else None

    def loss_fn(logits, label):
        return fw.nn.functional.cross_entropy(logits.reshape([-1, 20]), label.reshape([-1]),
                                              weight=cw, ignore_index=0)

    tr = trace_step(model, loss_fn, [fw.to_tensor(x), fw.to_tensor(y)], "train", MESH1)
    prog = tr.program
    dense = [o.numpy() for o in run(prog, x, y)]
    ann = {a: [S0] for a in prog.block.args if a.role == "input"}
    prop = propagate(prog, MESH1, ann)
    labels = {a.label: a for a in prog.block.args}
    outs_pl = [[R]] + [prop.placements[labels[lab]] for lab in tr.grads]
    outs, rps, _ = simulate(prog, MESH1, ann, [x, y], outs_pl)
    assert not prop.fallbacks, prop.fallbacks
    ce = next(op for op in prog.block.ops if op.name == "cross_entropy_with_softmax")
    assert prop.placements[ce.results[0]] == [P] and prop.plans[ce].inputs[0] == [S0]
    assert prop.plans[ce].inputs[1] == [R]                 # the labels, whole
    gathered = [c for c in rps[0].comms if c.kind == "all_gather"]
    assert gathered and all(c.nbytes <= y.size * 8 for c in gathered), rps[0].comms
    for r in range(2):
        for k, (o, d) in enumerate(zip(outs[r], dense)):
            np.testing.assert_allclose(o, _block(d, outs_pl[k], MESH1, [r]),
                                       rtol=1e-4, atol=1e-5, err_msg=f"rank {r} output {k}")


# ------------------------------------------------------------ DistModel on one rank
MESH0 = dist.ProcessMesh([0], dim_names=["dp"])


def _dense_sgd(steps, xs, ys):
    fw.seed(3)
    lin = fw.nn.Linear(4, 2)
    opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
    out = []
    for x, y in zip(xs, ys):
        loss = fw.nn.MSELoss()(lin(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        out.append(float(loss))
    return out, lin


def _data(n=4):
    rng = np.random.default_rng(2)
    xs = [fw.to_tensor(rng.standard_normal((3, 4)).astype("float32")) for _ in range(n)]
    ys = [fw.to_tensor(rng.standard_normal((3, 2)).astype("float32")) for _ in range(n)]
    return xs, ys


def test_dist_model_trains_evaluates_and_predicts_like_the_dense_layer():
    xs, ys = _data()
    want, dense = _dense_sgd(4, xs, ys)
    fw.seed(3)
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    dm = dist.to_static(lin, None, fw.nn.MSELoss(),
                        fw.optimizer.SGD(0.1, parameters=lin.parameters()))
    got = [float(dm(x, y)) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    sd = dm.state_dict("param")
    np.testing.assert_allclose(sd["weight"].numpy(), dense.weight.numpy(), rtol=1e-6)
    dm.eval()
    np.testing.assert_allclose(float(dm(xs[0], ys[0])),
                               float(fw.nn.MSELoss()(dense(xs[0]), ys[0])), rtol=1e-6)
    np.testing.assert_allclose(float(dm([xs[0], ys[0]])), float(dm(xs[0], ys[0])))
    dm.predict()
    np.testing.assert_allclose(dm(xs[0]).numpy(), dense(xs[0]).numpy(), rtol=1e-6)
    text = repr(dm)
    assert "[train]" in text and "[eval]" in text and "[predict]" in text
    assert "(annotated)" in text and "linear: " in text
    assert "communication on this rank: 0 collective(s)" in text


def test_a_new_batch_shape_builds_again_and_keeps_the_optimizer_state():
    """Adam over batches of 3 and 5 rows: a second program is built for the new
    shape, and the moments the first one accumulated carry over."""
    rng = np.random.default_rng(4)
    data = [(fw.to_tensor(rng.standard_normal((b, 4)).astype("float32")),
             fw.to_tensor(rng.standard_normal((b, 2)).astype("float32"))) for b in (3, 5, 3, 5)]
    fw.seed(3)
    ref = fw.nn.Linear(4, 2)
    opt = fw.optimizer.Adam(0.05, parameters=ref.parameters())
    want = []
    for x, y in data:
        loss = fw.nn.MSELoss()(ref(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        want.append(float(loss))
    fw.seed(3)
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    dm = dist.to_static(lin, None, fw.nn.MSELoss(),
                        fw.optimizer.Adam(0.05, parameters=lin.parameters()))
    got = [float(dm(x, y)) for x, y in data]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert len(dm._built) == 2


def test_dense_parameters_get_the_placements_propagation_chose():
    """No parameter annotated, the input split on its feature dim: the first
    weight adopts a row split (backward sweep), becomes a distributed parameter
    of the layer, and training equals the dense model."""
    xs, ys = _data(3)

    def mlp():
        fw.seed(5)
        return fw.nn.Sequential(fw.nn.Linear(4, 6), fw.nn.Tanh(), fw.nn.Linear(6, 2))

    ref = mlp()
    opt = fw.optimizer.SGD(0.1, parameters=ref.parameters())
    want = []
    for x, y in zip(xs, ys):
        loss = fw.nn.MSELoss()(ref(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        want.append(float(loss))
    model = mlp()
    dm = dist.to_static(model, None, fw.nn.MSELoss(),
                        fw.optimizer.SGD(0.1, parameters=model.parameters()))
    got = [float(dm(dist.shard_tensor(x, MESH0, [S1]), y)) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert dist.auto_parallel.is_dist_tensor(model[0].weight)
    assert model[0].weight.placements == [S0]
    assert "(inferred)" in dm.report()
    np.testing.assert_allclose(model[2].weight.numpy(), ref[2].weight.numpy(), rtol=1e-6)


def test_gradient_merge_steps_every_k_calls_with_the_average_gradient():
    xs, ys = _data(4)
    fw.seed(3)
    ref = fw.nn.Linear(4, 2)
    opt = fw.optimizer.SGD(0.1, parameters=ref.parameters())
    want = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        loss = fw.nn.MSELoss()(ref(x), y)
        (loss * 0.5).backward()
        if i % 2 == 1:
            opt.step()
            opt.clear_grad()
        want.append(float(loss))
    fw.seed(3)
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    strategy = dist.Strategy({"gradient_merge": {"enable": True, "k_steps": 2, "avg": True}})
    dm = dist.to_static(lin, None, fw.nn.MSELoss(),
                        fw.optimizer.SGD(0.1, parameters=lin.parameters()), strategy)
    got = [float(dm(x, y)) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(lin.weight.numpy(), ref.weight.numpy(), rtol=1e-6)


def test_recompute_clones_cheap_forward_ops_into_the_backward_and_trains_alike():
    """strategy.recompute: the backward reads recomputed copies of the forward's
    elementwise results (checkpoints: the results of ops reading a parameter);
    same losses, and those activations are no longer read after the forward."""
    from fw.distributed.auto_parallel.static.recompute import apply_recompute

    xs, ys = _data(3)

    def mlp():
        fw.seed(5)
        return fw.nn.Sequential(fw.nn.Linear(4, 6), fw.nn.Tanh(), fw.nn.Linear(6, 6),
                                fw.nn.GELU(), fw.nn.Linear(6, 2))

    losses = []
    for on in (False, True):
        model = dist.shard_layer(mlp(), MESH0)
        strategy = dist.Strategy({"recompute": {"enable": on}})
        dm = dist.to_static(model, None, fw.nn.MSELoss(),
                            fw.optimizer.Adam(0.05, parameters=model.parameters()), strategy)
        losses.append([float(dm(x, y)) for x, y in zip(xs, ys)])
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-6)
    assert "forward op(s) recomputed in the backward" in dm.report()
    # on the program itself: tanh/gelu results are read only by the forward now
    from fw.distributed.auto_parallel.static.tracing import trace_step

    model = mlp()
    tr = trace_step(model, fw.nn.MSELoss(), [xs[0], ys[0]], "train", MESH0)
    prog = tr.program
    loss = prog.block.outputs[0]
    n_fwd = next(i for i, op in enumerate(prog.block.ops) if op.results[0] is loss) + 1
    acts = [op.results[0] for op in prog.block.ops[:n_fwd] if op.name in ("tanh", "gelu")]
    assert len(acts) == 2
    dense = run(prog, xs[0], ys[0])
    n = apply_recompute(prog, loss)
    assert n >= 2
    for op in prog.block.ops[n_fwd:]:
        assert not any(v is a for v in op.operands for a in acts), op.name
    again = run(prog, xs[0], ys[0])
    for a, b in zip(again, dense):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


class _AmpNet(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = fw.nn.Linear(8, 16)
        self.norm = fw.nn.LayerNorm(16)
        self.fc2 = fw.nn.Linear(16, 5)

    def forward(self, x):
        h = fw.nn.functional.gelu(self.fc1(x))
        return self.fc2(self.norm(h) + fw.tanh(h))


def _ce(logits, label):
    return fw.nn.functional.cross_entropy(logits, label)


@pytest.mark.parametrize("level,dtype,white", [("o1", "bfloat16", None), ("o2", "bfloat16", None),
                                               ("o1", "float16", None),
                                               ("o2", "bfloat16", ["gelu"])])
def test_amp_trains_like_eager_auto_cast(level, dtype, white):
    """Strategy.amp: the program computes what eager auto_cast computes (float32
    master weights at O2; float16 with its fixed loss scale): 4 AdamW steps, losses
    equal within low-precision rounding, and not the float32 losses."""
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((6, 8)).astype("float32"),
             rng.integers(0, 5, (6,)).astype("int64")) for _ in range(4)]
    amp = {"enable": True, "level": level, "dtype": dtype,
           "custom_white_list": white or [], "use_dynamic_loss_scaling": False,
           "init_loss_scaling": 1024.0}

    def eager(use_amp):
        fw.seed(5)
        net = _AmpNet()
        opt = fw.optimizer.AdamW(learning_rate=0.01, parameters=net.parameters())
        out = []
        for x, y in data:
            with fw.amp.auto_cast(enable=use_amp, level=level.upper(), dtype=dtype,
                                  custom_white_list=white):
                loss = _ce(net(fw.to_tensor(x)), fw.to_tensor(y))
            (loss * 1024.0 if dtype == "float16" else loss).backward()
            if dtype == "float16":
                for p in net.parameters():
                    p.grad.set_value(p.grad.numpy() / 1024.0)
            opt.step()
            opt.clear_grad()
            out.append(float(loss))
        return out

    want, fp32 = eager(True), eager(False)
    fw.seed(5)
    net = dist.shard_layer(_AmpNet(), MESH0)
    dm = dist.to_static(net, None, _ce,
                        fw.optimizer.AdamW(learning_rate=0.01, parameters=net.parameters()),
                        dist.Strategy({"amp": amp}))
    got = [float(dm(fw.to_tensor(x), fw.to_tensor(y))) for x, y in data]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    assert np.abs(np.array(got) - np.array(fp32)).max() > 1e-5    # amp really ran
    assert all(p.dtype == fw.float32 for p in net.parameters())   # the master weights
    text = str(next(iter(dm._built.values())).rank_prog.program)
    short = {"bfloat16": "bf16", "float16": "f16"}[dtype]
    assert f"cast(%input_0) {{dtype={short}}}" in text, text      # the input is cast too


@pytest.mark.parametrize("amp,what", [
    ({"level": "o3"}, "level='o3'"),
    ({"custom_black_varnames": ["x"]}, "custom_black_varnames"),
    ({"use_bf16_guard": True}, "use_fp16_guard / use_bf16_guard"),
    ({"use_promote": False}, "use_promote=False"),
    ({"dtype": "float16"}, "use_dynamic_loss_scaling=True with dtype='float16'"),
])
def test_amp_settings_dist_to_static_cannot_honour_are_refused(amp, what):
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    strategy = dist.Strategy({"amp": {"enable": True, "dtype": "bfloat16", **amp}})
    with pytest.raises(NotImplementedError, match=f"strategy.amp.{re.escape(what)}.*not "
                                                  f"supported by dist.to_static yet"):
        dist.to_static(lin, None, fw.nn.MSELoss(), None, strategy)


@pytest.mark.parametrize("sub", ["fused_passes"])
def test_every_unsupported_strategy_field_is_refused_not_ignored(sub):
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    strategy = dist.Strategy({sub: {"enable": True}})
    with pytest.raises(NotImplementedError, match=f"strategy.{sub}.*not supported by "
                                                  f"dist.to_static yet"):
        dist.to_static(lin, None, fw.nn.MSELoss(), None, strategy)


def test_pipeline_needs_a_pp_axis_and_a_pp_axis_needs_the_pipeline():
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    with pytest.raises(ValueError, match="strategy.pipeline is enabled but .* no 'pp' axis"):
        dist.to_static(lin, None, fw.nn.MSELoss(), None,
                       dist.Strategy({"pipeline": {"enable": True}}))
    mesh = dist.ProcessMesh([[0]], dim_names=["pp", "dp"])
    lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
    dm = dist.to_static(lin, None, fw.nn.MSELoss(),
                        fw.optimizer.SGD(0.1, parameters=lin.parameters()))
    with pytest.raises(ValueError, match="enable strategy.pipeline"):
        dm(fw.ones([4, 4]), fw.ones([4, 2]))


def test_one_stage_pipeline_with_micro_batches_equals_dense_gradient_accumulation():
    xs, ys = _data(3)
    xs = [fw.concat([x, x * 0.5]) for x in xs]
    ys = [fw.concat([y, y - 1.0]) for y in ys]
    fw.seed(3)
    ref = fw.nn.Linear(4, 2)
    opt = fw.optimizer.SGD(0.1, parameters=ref.parameters())
    want = []
    for x, y in zip(xs, ys):
        ls = []
        for h in (slice(0, 3), slice(3, 6)):
            loss = fw.nn.MSELoss()(ref(x[h]), y[h])
            (loss * 0.5).backward()
            ls.append(float(loss))
        opt.step()
        opt.clear_grad()
        want.append(np.mean(ls))
    fw.seed(3)
    mesh = dist.ProcessMesh([[0]], dim_names=["pp", "dp"])
    lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
    strategy = dist.Strategy({"pipeline": {"enable": True, "pp_degree": 1,
                                           "accumulate_steps": 2}})
    dm = dist.to_static(lin, None, fw.nn.MSELoss(),
                        fw.optimizer.SGD(0.1, parameters=lin.parameters()), strategy)
    got = [float(dm(x, y)) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert "pipeline of 1 stages (1F1B, 2 micro-batches)" in dm.report()
    with pytest.raises(ValueError, match="multiple of strategy.pipeline.accumulate_steps=2"):
        dm(fw.ones([3, 4]), fw.ones([3, 2]))


def test_sharding_stage_3_and_a_wrong_degree_are_refused():
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    with pytest.raises(NotImplementedError, match="sharding.stage=3.*not supported by "
                                                  "dist.to_static yet"):
        dist.to_static(lin, None, fw.nn.MSELoss(), None,
                       dist.Strategy({"sharding": {"enable": True, "stage": 3, "degree": 1}}))
    with pytest.raises(ValueError, match="sharding.degree=8 but the 'dp' axis"):
        dist.to_static(lin, None, fw.nn.MSELoss(), None,
                       dist.Strategy({"sharding": {"enable": True, "stage": 2}}))


def test_bad_arguments_name_the_function_and_argument():
    lin = dist.shard_layer(fw.nn.Linear(4, 2), MESH0)
    with pytest.raises(TypeError, match="dist.to_static: layer must be a fw.nn.Layer"):
        dist.to_static(lambda x: x)
    with pytest.raises(TypeError, match="dist.to_static: optimizer must be"):
        dist.to_static(lin, None, fw.nn.MSELoss(), object())
    with pytest.raises(ValueError, match="train\\(\\) needs both a loss and an optimizer"):
        dist.to_static(lin).train()
    with pytest.raises(TypeError, match="DistModel: the inputs should be tensors"):
        dist.to_static(lin, None, fw.nn.MSELoss())(np.ones((3, 4)), fw.ones([3, 2]))
    opt = fw.optimizer.SGD(0.1, parameters=lin.parameters(),
                           grad_clip=fw.nn.ClipGradByGlobalNorm(1.0))
    dm = dist.to_static(lin, None, fw.nn.MSELoss(), opt)
    with pytest.raises(NotImplementedError, match="ClipGradByGlobalNorm"):
        dm(fw.ones([3, 4]), fw.ones([3, 2]))


def test_shard_dataloader_gives_batch_sharded_dist_tensors():
    data = [(fw.ones([4, 3]), fw.zeros([4]))]
    x, y = next(iter(dist.shard_dataloader(data, MESH0, shard_dims="dp")))
    assert x.placements == [S0] and y.placements == [S0] and x.shape == [4, 3]
    x, _ = next(iter(dist.shard_dataloader(data, MESH0)))
    assert x.placements == [R]
    batch = next(iter(dist.shard_dataloader([{"a": fw.ones([2]), "b": fw.ones([2])}], MESH0,
                                            input_keys=["a"], shard_dims=0)))
    assert dist.auto_parallel.is_dist_tensor(batch["a"])
    assert not dist.auto_parallel.is_dist_tensor(batch["b"])
    with pytest.raises(ValueError, match="shard_dataloader: shard_dims 'mp' is not an axis"):
        dist.shard_dataloader(data, MESH0, shard_dims="mp")
    with pytest.raises(NotImplementedError, match="several meshes"):
        dist.shard_dataloader(data, [MESH0, MESH0])


@pytest.mark.parametrize("module", ["dist_model", "loader", "sim"])
def test_docstring_examples_run(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    mod = importlib.import_module(f"fw.distributed.auto_parallel.static.{module}")
    tests = doctest.DocTestFinder().find(mod)
    assert sum(len(t.examples) for t in tests) > 0
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} failing examples in {module}"


def test_simulated_ranks_leave_no_backend_registered():
    """After a simulated run the collectives run their one-rank references again
    (the simulator's backend once stayed registered and broke later tests)."""
    from fw.core.internal import collectives

    before = collectives.backend
    sim = SimulatedRanks(2, timeout=30)
    sim.run([lambda: 1, lambda: 2])
    assert collectives.backend is before
