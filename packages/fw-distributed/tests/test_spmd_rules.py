"""The SPMD rules of every op of fw-core's table, checked on simulated ranks.

For each op with test records (fw.core.testing.records), hypothesis draws a
sample call, a mesh ([2] or [2, 2]) and random input placements (Shard of any
dim, Replicate, sum-Partial); the rule's plan is run on every simulated rank
(`spmd_rules._simulate`: blocks cut per the plan, the op on the blocks, outputs
reassembled per the output placements) and compared with the dense op."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
import fw.distributed as dist
from fw.core import dtypes as _dt
from fw.core.internal import OPS
from fw.core.testing import assert_close, load_all, to_args
from fw.distributed.auto_parallel import rules_report
from fw.distributed.auto_parallel.spmd_rules import REPLICATE_ONLY, RULES, register
from fw.distributed.auto_parallel.spmd_rules._simulate import simulate

RECORDS = load_all()
MESHES = {(2,): dist.ProcessMesh([0, 1], ["x"]),
          (2, 2): dist.ProcessMesh([[0, 1], [2, 3]], ["dp", "mp"])}
LOW = {"float16", "bfloat16"}


def _testable():
    """Every op with records and tensor inputs (ops without any never meet a
    distributed tensor)."""
    return [n for n, op in OPS.items() if n in RECORDS and op.input_names]


def test_every_op_of_the_table_has_an_entry():
    missing = sorted(n for n in OPS if n not in RULES)
    assert missing == [], f"ops without an SPMD rule or replicate_only entry: {missing}"
    for n, reason in REPLICATE_ONLY.items():
        assert n in OPS and len(reason) > 20, (n, reason)


def test_rules_report_counts():
    r = rules_report()
    c = r["counts"]
    assert c["ops"] == len(OPS) and c["missing"] == 0 and r["missing"] == []
    assert c["rules"] + c["replicate_only"] == len(OPS)
    assert set(r["replicate_only"]) == set(REPLICATE_ONLY)
    assert "matmul" in r["rules"] and "matmul" not in r["replicate_only"]
    assert "c_allreduce" in r["replicate_only"]
    # sharding rules are the rule, replicate-only the exception
    assert c["rules"] > 3 * c["replicate_only"], c


def _finite(args):
    for a in args:
        for x in (a if isinstance(a, list) else [a]):
            if isinstance(x, np.ndarray) and x.dtype.kind in "fc" and not np.isfinite(x).all():
                return False
            if isinstance(x, float) and not np.isfinite(x):
                return False
    return True


def _placements(draw, arr, mesh_nd, partial_ok=True):
    if not isinstance(arr, np.ndarray):
        return None
    kinds = ["R", "S", "S"]
    # Partial addends meeting an Inf/NaN anywhere in the op are undefined (inf - inf):
    # Partial inputs only for calls on finite values
    if partial_ok and arr.dtype.kind in "fciu":
        kinds.append("P")
    out = []
    for _ in range(mesh_nd):
        k = draw(st.sampled_from(kinds))
        if k == "S" and arr.ndim:
            out.append(dist.Shard(draw(st.integers(0, arr.ndim - 1))))
        elif k == "P":
            out.append(dist.Partial())
        else:
            out.append(dist.Replicate())
    return out


def _tol(dtype):
    name = _dt.convert_dtype(dtype).name if dtype is not None else ""
    if name in ("float64", "complex128"):
        return 1e-7, 1e-7
    return 2e-4, 2e-4


def check_op(name, data):
    op = OPS[name]
    rec = data.draw(st.sampled_from(RECORDS[name]), label="record")
    dtypes = [d for d in rec.dtypes if _dt.convert_dtype(d).name not in LOW] or list(rec.dtypes)
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    sample = rec.sample(data.draw, dtype)
    mesh = MESHES[data.draw(st.sampled_from(sorted(MESHES)), label="mesh")]
    pls = []
    fin = _finite(sample.args)
    for i, a in enumerate(sample.args):
        if i == op.variadic and isinstance(a, list):
            pls.append([_placements(data.draw, x, mesh.ndim, fin) for x in a])
        else:
            pls.append(_placements(data.draw, a, mesh.ndim, fin))
    args = to_args(sample.args)
    dense = fw.core.dispatch.invoke(op, args, dict(sample.attrs))
    dense = dense if isinstance(dense, tuple) else (dense,)
    res = simulate(op, args, dict(sample.attrs), mesh, pls,
                   seed=data.draw(st.integers(0, 2**16), label="seed"))
    assert len(res.outputs) == len(dense)
    for k, (got, want) in enumerate(zip(res.outputs, dense)):
        want = np.asarray(want.numpy())
        what = f"{name} output {k}, inputs {pls}, plan {res.plan.inputs} -> {res.plan.outputs}"
        if rec.nondeterministic:
            assert got.shape == want.shape and got.dtype == want.dtype, what
            continue
        assert res.replica_error is None, res.replica_error
        rtol, atol = _tol(want.dtype)
        scale = float(np.nanmax(np.abs(want[np.isfinite(want)]), initial=1.0)) \
            if want.dtype.kind in "fc" else 1.0
        assert_close(got, want, want.dtype, rtol=rtol, atol=atol * max(scale, 1.0), what=what)


@pytest.mark.parametrize("name", _testable())
@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_rule_gives_the_dense_result(name, data):
    check_op(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", _testable())
@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_rule_gives_the_dense_result_more_draws(name, data):
    check_op(name, data)


# ------------------------------------------------------------ known plans
M2 = MESHES[(2,)]
S, Rp, P = dist.Shard, dist.Replicate, dist.Partial


def _plan(name, arrays, pls, attrs=None):
    args = [fw.to_tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    return simulate(OPS[name], args, dict(OPS[name].attrs, **(attrs or {})), M2, pls)


def test_known_plans_match_megatron_style_sharding():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype("float32")
    w = rng.standard_normal((6, 8)).astype("float32")
    r = _plan("matmul", [x, w], [[S(1)], [S(0)]])
    assert r.plan.outputs == [[P()]]
    np.testing.assert_allclose(r.outputs[0], x @ w, rtol=1e-5, atol=1e-5)
    # embedding: a column-split table shards the hidden dim (a row-split one is
    # gathered: see the report)
    ids = np.array([[0, 5, 7], [3, 3, 1]], "int64")
    tab = rng.standard_normal((8, 4)).astype("float32")
    r = _plan("embedding", [ids, tab], [[Rp()], [S(1)]], {"padding_idx": None})
    assert r.plan.outputs == [[S(2)]]
    np.testing.assert_allclose(r.outputs[0], tab[ids], rtol=1e-6)
    # channel-sharded conv (x split on C_in, weight on its input channels) -> Partial
    xc = rng.standard_normal((2, 4, 5, 5)).astype("float32")
    wc = rng.standard_normal((3, 4, 3, 3)).astype("float32")
    b = rng.standard_normal(3).astype("float32")
    r = _plan("conv", [xc, wc, b], [[S(1)], [S(1)], [Rp()]])
    assert r.plan.outputs == [[P()]] and r.plan.inputs[2] == [P()]
    dense = fw.nn.functional.conv2d(fw.to_tensor(xc), fw.to_tensor(wc), fw.to_tensor(b))
    np.testing.assert_allclose(r.outputs[0], dense.numpy(), rtol=1e-4, atol=1e-4)
    # a sum over the sharded dim is Partial; a max over it gathers the dim
    assert _plan("sum", [x], [[S(0)]], {"axis": 0}).plan.outputs == [[P()]]
    assert _plan("max", [x], [[S(0)]], {"axis": 0}).plan.inputs == [[Rp()]]
    assert _plan("max", [x], [[S(0)]], {"axis": 1}).plan.outputs == [[S(0)]]


def test_known_plans_of_shape_optimizer_and_gradient_ops():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 2)).astype("float32")
    # reshape merging a leading dim that splits evenly keeps it sharded; an odd one
    # (3 over 2 ranks) cannot
    r = _plan("reshape", [x], [[S(0)]], {"shape": [12, 2]})
    assert r.plan.outputs == [[S(0)]]
    np.testing.assert_array_equal(r.outputs[0], x.reshape(12, 2))
    assert _plan("reshape", [x], [[S(1)]], {"shape": [4, 6]}).plan.outputs == [[Rp()]]
    # a split whose leading new dim splits evenly: [12, 2] -> [4, 3, 2]
    y = x.reshape(12, 2)
    r = _plan("reshape", [y], [[S(0)]], {"shape": [4, 3, 2]})
    assert r.plan.outputs == [[S(0)]]
    np.testing.assert_array_equal(r.outputs[0], x)
    r = _plan("flatten", [x], [[S(0)]], {"start_axis": 0, "stop_axis": 1})
    assert r.plan.outputs == [[S(0)]]
    np.testing.assert_array_equal(r.outputs[0], x.reshape(12, 2))
    # an optimizer step on a sharded parameter: moments follow it, beta powers whole
    p = rng.standard_normal((4, 3))
    g = rng.standard_normal((4, 3))
    lr, b1, b2 = np.array([0.1]), np.array([0.9]), np.array([0.999])
    m1, m2 = np.zeros((4, 3)), np.zeros((4, 3))
    r = _plan("adam", [p, g, lr, m1, m2, b1, b2, None], [[S(0)], [S(0)], [Rp()], [Rp()],
                                                         [Rp()], [Rp()], [Rp()], None])
    assert r.plan.inputs[:5] == [[S(0)], [S(0)], [Rp()], [S(0)], [S(0)]]
    assert r.plan.outputs[:3] == [[S(0)]] * 3 and r.plan.outputs[3] == [Rp()]
    # Adam's first step from zero moments: p - lr * g / (|g| + eps') (bias-corrected)
    np.testing.assert_allclose(r.outputs[0], p - 0.1 * np.sign(g), rtol=1e-4, atol=1e-4)
    # the weight gradient of a batch-sharded conv is a sum over the batch: Partial
    xc = rng.standard_normal((4, 2, 5, 5))
    go = rng.standard_normal((4, 3, 3, 3))
    r = _plan("conv_grad_weight", [xc, go], [[S(0)], [S(0)]], {"kernel_size": [3, 3]})
    assert r.plan.outputs == [[P()], [P()]]
    np.testing.assert_allclose(r.outputs[1], go.sum((0, 2, 3)), rtol=1e-10)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_reshape_merges_and_splits_on_meshes(data):
    """reshape/flatten targets built by merging neighbouring dims and splitting a
    dim into two factors, with random placements on [2] and [2, 2] meshes."""
    shape = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=4), label="shape")
    out = list(shape)
    for _ in range(data.draw(st.integers(1, 3), label="steps")):
        if len(out) > 1 and data.draw(st.booleans()):
            i = data.draw(st.integers(0, len(out) - 2))
            out[i:i + 2] = [out[i] * out[i + 1]]
        else:
            i = data.draw(st.integers(0, len(out) - 1))
            fs = [f for f in range(1, out[i] + 1) if out[i] % f == 0]
            f = data.draw(st.sampled_from(fs))
            out[i:i + 1] = [f, out[i] // f]
    mesh = MESHES[data.draw(st.sampled_from(sorted(MESHES)), label="mesh")]
    x = np.arange(int(np.prod(shape)), dtype="float64").reshape(shape)
    pl = [[data.draw(st.sampled_from([Rp(), P()] + [S(d) for d in range(len(shape))] * 2))
           for _ in range(mesh.ndim)]]
    r = simulate(OPS["reshape"], [fw.to_tensor(x)], {"shape": out}, mesh, pl, seed=1)
    np.testing.assert_allclose(r.outputs[0], x.reshape(out), atol=1e-9,
                               err_msg=f"{shape}->{out} {pl} plan {r.plan.outputs}")


def test_known_plans_along_an_axis_and_batched_matrices():
    """Ops the random draws rarely shard (records mostly use axis=None or no batch)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6))
    r = _plan("cumsum", [x], [[S(1)]], {"axis": 0})
    assert r.plan.outputs == [[S(1)]]
    np.testing.assert_allclose(r.outputs[0], np.cumsum(x, 0), rtol=1e-12)
    assert _plan("cumsum", [x], [[S(0)]], {"axis": 0}).plan.inputs == [[Rp()]]
    r = _plan("median", [x], [[S(0)]], {"axis": 1})
    assert r.plan.outputs[0] == [S(0)]
    np.testing.assert_allclose(r.outputs[0], np.median(x, 1), rtol=1e-12)
    a = rng.standard_normal((4, 3, 3))
    r = _plan("det", [a], [[S(0)]])
    assert r.plan.outputs == [[S(0)]]
    np.testing.assert_allclose(r.outputs[0], np.linalg.det(a), rtol=1e-10)
    assert _plan("inv", [a], [[S(1)]]).plan.inputs == [[Rp()]]   # a matrix dim: whole


def test_the_simulator_catches_a_wrong_rule():
    """A rule that lets a Partial through exp (not linear) must fail the check."""
    from fw.distributed.auto_parallel.spmd import Plan

    old = RULES["exp"]
    try:
        register("exp")(lambda ctx: Plan([[P()]], [[P()]]))
        x = fw.to_tensor(np.linspace(-1, 1, 6).astype("float64"))
        r = simulate(OPS["exp"], [x], {}, M2, [[P()]], seed=3)
        assert not np.allclose(r.outputs[0], np.exp(x.numpy()))
        register("exp")(lambda ctx: Plan([[S(0)]], [[Rp()]]))   # claims a whole output
        with pytest.raises(AssertionError, match="need"):
            simulate(OPS["exp"], [x], {}, M2, [[S(0)]])
    finally:
        RULES["exp"] = old


def test_cross_entropy_mean_over_a_sharded_batch_is_partial_not_gathered():
    """'mean' with a static divisor (no weights, ignore_index < 0 or soft labels):
    a local sum over the rank's rows divided by the global count, a Partial loss;
    its gradient stays batch-sharded. Uneven blocks (5 rows on 2 ranks) included.
    (Class weights and ignore_index >= 0: the next test.)"""
    from fw.core.ops.loss import _ce_ref
    from fw.core.ops.nn_grad import _ceg_ref

    rng = np.random.default_rng(3)
    for rows in (4, 5):
        x = rng.standard_normal((rows, 7)).astype("float32")
        lab = rng.integers(0, 7, (rows, 1)).astype("int64")
        attrs = {"reduction": "mean"}
        r = _plan("cross_entropy_with_softmax", [x, lab, None], [[S(0)], [S(0)], None], attrs)
        assert not r.fell_back
        assert r.plan.inputs[0] == [S(0)] and r.plan.outputs == [[P()], [S(0)]]
        want_loss, want_sm = _ce_ref(x, lab)
        np.testing.assert_allclose(r.outputs[0], want_loss, rtol=1e-5)
        np.testing.assert_allclose(r.outputs[1], want_sm, rtol=1e-5)
        g = np.asarray(1.5, "float32")
        r = _plan("cross_entropy_with_softmax_grad", [want_sm, lab, None, g],
                  [[S(0)], [S(0)], None, [Rp()]], attrs)
        assert not r.fell_back and r.plan.outputs == [[S(0)]]
        np.testing.assert_allclose(r.outputs[0], _ceg_ref(want_sm, lab, None, g), rtol=1e-5,
                                   atol=1e-7)
        soft = rng.dirichlet(np.ones(7), rows).astype("float32")
        r = _plan("cross_entropy_with_softmax", [x, soft, None], [[S(0)], [S(0)], None],
                  {"reduction": "mean", "soft_label": True})
        assert r.plan.outputs[0] == [P()]
        np.testing.assert_allclose(r.outputs[0], _ce_ref(x, soft, soft_label=True)[0],
                                   rtol=1e-5)


@pytest.mark.parametrize("mesh_shape", [(2,), (2, 2)])
@pytest.mark.parametrize("case", ["weight", "ignore", "weight+ignore", "soft+weight",
                                  "all-ignored"])
def test_cross_entropy_weighted_or_ignoring_mean_over_a_sharded_batch(mesh_shape, case):
    """'mean' with class weights (sum(w*l) / sum(w)) or ignore_index >= 0 (ignored
    labels count for neither sum): the logits stay batch-sharded and the loss is
    Partial (each rank: its block's weighted sum / the divisor of the whole
    labels, which come whole); the gradient stays batch-sharded. Uneven blocks,
    two batch dims split on a [2, 2] mesh, and a batch whose labels are all ignored
    (divisor 0 -> 1, as the reference) included; forward and gradient == fw-core's
    NumPy references."""
    from fw.core.ops.loss import _ce_ref
    from fw.core.ops.nn_grad import _ceg_ref

    mesh = MESHES[mesh_shape]
    rng = np.random.default_rng(7)
    rows, c = 7, 5
    x = rng.standard_normal((rows, 3, c)).astype("float32")
    lab = rng.integers(0, c, (rows, 3)).astype("int64")
    w = rng.uniform(0.5, 2, c).astype("float32") if "weight" in case else None
    attrs = {"reduction": "mean"}
    soft = case.startswith("soft")
    if "ignore" in case:
        attrs["ignore_index"] = 2
        if case == "all-ignored":
            lab[:] = 2
    if soft:
        lab = rng.dirichlet(np.ones(c), (rows, 3)).astype("float32")
        attrs["soft_label"] = True
    bs = [S(0)] if mesh_shape == (2,) else [S(0), S(1)]      # both batch dims on [2, 2]
    lab_pl = bs
    w_pl = None if w is None else [Rp()] * len(mesh_shape)
    args = [fw.to_tensor(a) if isinstance(a, np.ndarray) else a for a in (x, lab, w)]
    full = dict(OPS["cross_entropy_with_softmax"].attrs, **attrs)
    r = simulate(OPS["cross_entropy_with_softmax"], args, full, mesh, [bs, lab_pl, w_pl])
    assert not r.fell_back
    assert r.plan.inputs[0] == bs and r.plan.inputs[1] == [Rp()] * len(mesh_shape)
    assert r.plan.outputs == [[P()] * len(mesh_shape), bs]
    want_loss, want_sm = _ce_ref(x, lab, w, **attrs)
    np.testing.assert_allclose(r.outputs[0], want_loss, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(r.outputs[1], want_sm, rtol=1e-5)
    g = np.asarray(1.5, "float32")
    gattrs = dict(OPS["cross_entropy_with_softmax_grad"].attrs, **attrs)
    gargs = [fw.to_tensor(a) if isinstance(a, np.ndarray) else a for a in (want_sm, lab, w, g)]
    r = simulate(OPS["cross_entropy_with_softmax_grad"], gargs, gattrs, mesh,
                 [bs, lab_pl, w_pl, [Rp()] * len(mesh_shape)])
    assert not r.fell_back and r.plan.outputs == [bs]
    np.testing.assert_allclose(r.outputs[0], _ceg_ref(want_sm, lab, w, g, **attrs),
                               rtol=1e-5, atol=1e-7)


def test_index_add_of_batch_sharded_rows_is_partial():
    """The embedding gradient (index_add of the rows of a batch-sharded lookup into
    a zero table) stays local: Partial(sum), x added once."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 3)).astype("float32")
    idx = np.array([0, 5, 5, 2, 1], "int64")
    v = rng.standard_normal((5, 3)).astype("float32")
    r = _plan("index_add", [x, idx, v], [[Rp()], [S(0)], [S(0)]], {"axis": 0})
    assert not r.fell_back
    assert r.plan.outputs == [[P()]] and r.plan.inputs[0] == [P()]
    want = x.copy()
    np.add.at(want, idx, v)
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=1e-6)
    # a column-sharded value keeps the columns sharded
    r = _plan("index_add", [x, idx, v], [[S(1)], [Rp()], [S(1)]], {"axis": 0})
    assert r.plan.outputs == [[S(1)]]
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("padding_idx", [None, 2, 5, -1])
def test_row_split_embedding_is_a_masked_local_lookup_with_a_partial_result(padding_idx):
    """Vocabulary-parallel embedding (Paddle's c_embedding): a row-split table is
    not gathered; each rank looks up its rows, the result is Partial(sum). 7 rows
    on 2 ranks (uneven), padding_idx on either rank's block or negative."""
    rng = np.random.default_rng(6)
    ids = np.array([[0, 6, 3], [2, 5, 4], [1, 1, 6]], "int64")
    tab = rng.standard_normal((7, 4)).astype("float32")
    r = _plan("embedding", [ids, tab], [[Rp()], [S(0)]], {"padding_idx": padding_idx})
    assert not r.fell_back
    assert r.plan.inputs == [[Rp()], [S(0)]] and r.plan.outputs == [[P()]]
    want = fw.nn.functional.embedding(fw.to_tensor(ids), fw.to_tensor(tab),
                                      padding_idx=padding_idx).numpy()
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-6)
    # ids sharded on the same axis are gathered (small) rather than the table (large)
    r = _plan("embedding", [ids, tab], [[S(0)], [S(0)]], {"padding_idx": None})
    assert r.plan.inputs == [[Rp()], [S(0)]] and r.plan.outputs == [[P()]]


def test_fallback_of_a_list_output_op_gives_every_output(monkeypatch):
    """Without its rule, unbind (a variable number of outputs) falls back and still
    returns every output, Replicate (the eager fallback used to return none)."""
    from fw.distributed.auto_parallel import spmd_rules

    monkeypatch.delitem(spmd_rules.RULES, "unbind")
    x = np.arange(12, dtype="float32").reshape(4, 3)
    r = _plan("unbind", [x], [[S(0)]], {"axis": 1})
    assert r.fell_back and r.plan.outputs == [[Rp()]] * 3
    for k in range(3):
        np.testing.assert_array_equal(r.outputs[k], x[:, k])
