"""dist.to_static on real ranks (fw's launcher, MPI): the char-level GPT of
examples/char_gpt.py, annotated on its input and first/last weights only, trains
10 static steps with the losses of single-process training — mesh [2, 2]
(dp x mp) on 4 ranks, [2] dp-only and [2] mp-only on 2 ranks, where eager
auto-parallel training of the same sharded GPT gives the same losses — and gradient
merge (k_steps=2) equals dense gradient accumulation, ZeRO stages 1 and 2
(strategy.sharding over dp) and recompute change nothing, a weight left dense is
inferred row-split, pp = 2 (1F1B, FThenB) equals dense gradient accumulation, and
Strategy.amp (bfloat16, O1 on dp, O2 on mp) trains like eager auto-parallel under
fw.amp.auto_cast; a loss with ignore_index >= 0 trains on dp like single process.

Run as a script by the launcher, this file is also the ranks' program
(``python test_dist_static_ranks.py <check,...>``); each rank trains the dense
model in its own process first and emits ``OK <check>`` when they agree."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "..", "examples")
STEPS = 10


# ====================================================================== the ranks
def _emit(tag, rank, text):
    sys.path.insert(0, os.path.join(HERE, "comm_scripts"))
    from _emit import emit

    emit(tag, rank, text)


def _gpt(fw, tied=False):
    sys.path.insert(0, EXAMPLES)
    from char_gpt import DATA, CharGPT, CharVocab

    with open(DATA) as f:
        text = f.read()
    vocab = CharVocab(text)
    fw.seed(11)
    model = CharGPT(len(vocab), 16, n_layer=1, d_model=32, n_head=4, tied=tied)
    return model, vocab.encode(text)


def _batches(data, n, batch=4, block=16):
    rng = np.random.default_rng(5)
    out = []
    for _ in range(n):
        start = rng.integers(0, len(data) - block - 1, batch)
        idx = start[:, None] + np.arange(block)[None, :]
        out.append((data[idx], data[idx + 1]))
    return out


def _loss_fn(fw, ignore_index=-100):
    import fw.nn.functional as F

    def loss(logits, label):
        return F.cross_entropy(logits.reshape([-1, logits.shape[-1]]), label.reshape([-1]),
                               ignore_index=ignore_index)
    return loss


def _dense_losses(fw, batches, k=1, tied=False, ignore_index=-100):
    model, _ = _gpt(fw, tied)
    opt = fw.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters())
    loss_fn = _loss_fn(fw, ignore_index)
    losses = []
    for i, (x, y) in enumerate(batches):
        loss = loss_fn(model(fw.to_tensor(x)), fw.to_tensor(y))
        (loss * (1.0 / k)).backward()
        if (i + 1) % k == 0:
            opt.step()
            opt.clear_grad()
        losses.append(float(loss))
    return losses, model


def check_gpt(rank, mesh_kind, k=1, zero=0, recompute=False, tied=False, ignore=False,
              steps=STEPS):
    import fw
    import fw.distributed as dist

    R, S1 = dist.Replicate(), dist.Shard(1)
    if mesh_kind == "2x2":
        mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
        w_pl, shard_dims = [R, S1], "dp"
    elif mesh_kind == "dp":
        mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])
        w_pl, shard_dims = None, "dp"
    else:
        mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
        w_pl, shard_dims = [S1], None
    model, data = _gpt(fw, tied)
    batches = _batches(data, steps)
    # ignore: the most frequent label is ignore_index (the mean divides by the count of
    # the others, which depends on both ranks' labels: its rule gathers only labels)
    ig = int(np.bincount(np.concatenate([b[1].ravel() for b in batches])).argmax()) \
        if ignore else -100
    want, dense_model = _dense_losses(fw, batches, k, tied, ig)

    def shard_fn(name, layer, m):
        if w_pl is not None and name in ("tok", "head"):   # the first and the last weight
            layer.weight = dist.shard_tensor(layer.weight, m, w_pl)

    model = dist.shard_layer(model, mesh, shard_fn)
    opt = fw.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters())
    strategy = dist.Strategy()
    if k > 1:
        strategy.gradient_merge.enable = True
        strategy.gradient_merge.k_steps = k
        strategy.gradient_merge.avg = True
    if recompute:
        strategy.recompute.enable = True
    if zero:
        strategy.sharding.enable = True
        strategy.sharding.stage = zero
        strategy.sharding.degree = 2
    loader = dist.shard_dataloader([(fw.to_tensor(x), fw.to_tensor(y)) for x, y in batches],
                                   mesh, shard_dims=shard_dims)
    dm = dist.to_static(model, loader, _loss_fn(fw, ig), opt, strategy)
    got = [float(dm(x, y)) for x, y in loader]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5,
                               err_msg=f"{mesh_kind} k={k} losses")
    sd = dm.state_dict("param")
    for name, q in dense_model.state_dict().items():
        p = dist.unshard_dtensor(sd[name]) if dist.auto_parallel.is_dist_tensor(sd[name]) \
            else sd[name]
        # loose: the key bias's gradient is rounding noise (softmax ignores a shift
        # shared by all keys), which AdamW turns into steps of up to lr each
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-3, atol=1e-2,
                                   err_msg=f"{mesh_kind}: trained {name}")
    rep = dm.report()
    assert "communication on this rank" in rep and "embedding" in rep, rep
    tag = f"gpt-{mesh_kind}" + (f"-k{k}" if k > 1 else "") + (f"-zero{zero}" if zero else "") \
        + ("-recompute" if recompute else "") + ("-tied" if tied else "") \
        + ("-ignore" if ignore else "")
    if ignore:    # the cross entropy followed its rule: no replicate fallback
        assert "replicate fallback: none" in rep and "replicate fallback (" not in rep, rep
    if recompute:
        assert "forward op(s) recomputed in the backward" in rep, rep
    if zero:
        assert f"sharding stage {zero} over mesh axis dp" in rep, rep
        assert "[ZeRO block] -> [whole]" in rep, rep     # the updated blocks gathered
        opt_sd = dm.state_dict("opt")
        m1 = [v for n, v in opt_sd.items() if n.endswith("moment1_0")]
        assert m1 and sum(v.numpy().size for v in m1) < sum(
            p.numpy().size for p in model.parameters()), "ZeRO states are not blocks"
    _emit("LOSSES", rank, json.dumps({"check": tag, "losses": got, "dense": want}))
    _emit("REPORT", rank, json.dumps({"check": tag, "text": rep}))
    _emit("OK", rank, tag)


def check_zero2_mlp(rank):
    """An MLP on dp with ZeRO stage 2: the gradients are Partial, so each rank's
    block arrives by reduce-scatter; Adam over 5 steps == the dense model."""
    import fw
    import fw.distributed as dist

    def mlp():
        fw.seed(7)
        return fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 4))

    rng = np.random.default_rng(3)
    data = [(rng.standard_normal([6, 8]).astype("float32"),
             rng.standard_normal([6, 4]).astype("float32")) for _ in range(5)]
    ref = mlp()
    opt = fw.optimizer.Adam(learning_rate=0.01, parameters=ref.parameters())
    want = []
    for x, y in data:
        loss = fw.nn.MSELoss()(ref(fw.to_tensor(x)), fw.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        want.append(float(loss))
    mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])
    model = dist.shard_layer(mlp(), mesh)
    strategy = dist.Strategy({"sharding": {"enable": True, "stage": 2, "degree": 2}})
    dm = dist.to_static(model, None, fw.nn.MSELoss(),
                        fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters()),
                        strategy)
    S0 = dist.Shard(0)
    got = [float(dm(dist.shard_tensor(fw.to_tensor(x), mesh, [S0]),
                    dist.shard_tensor(fw.to_tensor(y), mesh, [S0]))) for x, y in data]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg="ZeRO-2 MLP")
    rep = dm.report()
    assert "reduce_scatter" in rep and "[ZeRO block] -> [whole]" in rep, rep
    assert rep.count("all_reduce axis") == 1, rep   # the loss's; no gradient is all-reduced
    _emit("OK", rank, "zero2-mlp")


def check_pipeline(rank, mode, mp=False):
    """pp=2 (mesh [[0], [1]]: pp x dp), 2 micro-batches per step: the losses and
    trained weights of dense training with gradient accumulation."""
    import fw
    import fw.distributed as dist

    model, data = _gpt(fw)
    batches = _batches(data, 6)
    dense, _ = _gpt(fw)
    opt = fw.optimizer.AdamW(learning_rate=3e-3, parameters=dense.parameters())
    loss_fn = _loss_fn(fw)
    want = []
    for x, y in batches:
        ls = []
        for h in (slice(0, 2), slice(2, 4)):
            loss = loss_fn(dense(fw.to_tensor(x[h])), fw.to_tensor(y[h]))
            (loss * 0.5).backward()
            ls.append(float(loss))
        opt.step()
        opt.clear_grad()
        want.append(float(np.mean(ls)))
    if mp:      # 4 ranks: 2 stages, each split over mp (first/last weights annotated)
        mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["pp", "mp"])

        def shard_fn(name, layer, m):
            if name in ("tok", "head"):
                layer.weight = dist.shard_tensor(layer.weight, m,
                                                 [dist.Replicate(), dist.Shard(1)])
    else:
        mesh = dist.ProcessMesh([[0], [1]], dim_names=["pp", "dp"])
        shard_fn = None
    model = dist.shard_layer(model, mesh, shard_fn)
    strategy = dist.Strategy({"pipeline": {"enable": True, "pp_degree": 2,
                                           "accumulate_steps": 2, "schedule_mode": mode}})
    dm = dist.to_static(model, None, loss_fn,
                        fw.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters()),
                        strategy)
    got = [float(dm(fw.to_tensor(x), fw.to_tensor(y))) for x, y in batches]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=f"pp {mode} losses")
    rep = dm.report()
    assert f"pipeline of 2 stages ({mode}, 2 micro-batches)" in rep, rep
    assert f"stage {rank // 2 if mp else rank}" in rep and "sent to other stages" in rep, rep
    _emit("OK", rank, f"pp-{mode}" + ("-mp" if mp else ""))


def check_inferred_row_split(rank):
    """Only the first Linear annotated (column split on mp, as Megatron): the
    second weight, left dense, is inferred row-split by the backward sweep; the
    MLP trains like the dense one with one all-reduce of activations per forward."""
    import fw
    import fw.distributed as dist

    def mlp():
        fw.seed(7)
        return fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 4))

    rng = np.random.default_rng(3)
    data = [(rng.standard_normal([6, 8]).astype("float32"),
             rng.standard_normal([6, 4]).astype("float32")) for _ in range(4)]
    ref = mlp()
    opt = fw.optimizer.SGD(0.1, parameters=ref.parameters())
    want = []
    for x, y in data:
        loss = fw.nn.MSELoss()(ref(fw.to_tensor(x)), fw.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        want.append(float(loss))
    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    model = mlp()
    model[0].weight = dist.shard_tensor(model[0].weight, mesh, [dist.Shard(1)])
    model[0].bias = dist.shard_tensor(model[0].bias, mesh, [dist.Shard(0)])
    dm = dist.to_static(model, None, fw.nn.MSELoss(),
                        fw.optimizer.SGD(0.1, parameters=model.parameters()))
    got = [float(dm(fw.to_tensor(x), fw.to_tensor(y))) for x, y in data]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg="inferred row split")
    assert model[2].weight.placements == [dist.Shard(0)], model[2].weight.placements
    assert model[2].weight.local_value().shape == [8, 4]
    rep = dm.report()
    assert "linear_" in rep and "(inferred)" in rep, rep
    np.testing.assert_allclose(dist.unshard_dtensor(model[2].weight).numpy(),
                               ref[2].weight.numpy(), rtol=1e-5, atol=1e-6)
    _emit("OK", rank, "inferred-row-split")


def check_gpt_eager(rank, mesh_kind):
    """Eager auto-parallel: the same GPT, sharded the same way, trained step by step
    on DistTensors (each op SPMD through its rule) — losses == single process, and
    == dist.to_static's (the check of the same mesh, run before in this job)."""
    import fw
    import fw.distributed as dist
    from fw.distributed import auto_parallel as ap

    R, S0, S1 = dist.Replicate(), dist.Shard(0), dist.Shard(1)
    mesh = dist.ProcessMesh([0, 1], dim_names=[mesh_kind])
    model, data = _gpt(fw)
    batches = _batches(data, STEPS)
    want, _ = _dense_losses(fw, batches)

    def shard_fn(name, layer, m):
        if mesh_kind == "mp" and name in ("tok", "head"):
            layer.weight = dist.shard_tensor(layer.weight, m, [S1])

    model = dist.shard_layer(model, mesh, shard_fn)
    opt = dist.shard_optimizer(fw.optimizer.AdamW(learning_rate=3e-3,
                                                  parameters=model.parameters()))
    loss_fn = _loss_fn(fw)
    x_pl = [S0] if mesh_kind == "dp" else [R]
    ap.reset_fallback_report()
    got = []
    for x, y in batches:
        xd = dist.shard_tensor(fw.to_tensor(x), mesh, x_pl)
        yd = dist.shard_tensor(fw.to_tensor(y), mesh, x_pl)
        loss = loss_fn(model(xd), yd)
        loss.backward()
        opt.step()
        opt.clear_grad()
        got.append(float(dist.unshard_dtensor(loss)) if ap.is_dist_tensor(loss)
                   else float(loss))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5,
                               err_msg=f"eager {mesh_kind} losses")
    tag = f"gpt-eager-{mesh_kind}"
    _emit("LOSSES", rank, json.dumps({"check": tag, "losses": got, "dense": want,
                                      "fallbacks": ap.fallback_report()}))
    _emit("OK", rank, tag)


def check_gpt_amp(rank, mesh_kind, level):
    """Strategy.amp (bfloat16) on a [2] mesh: dist.to_static trains the GPT with the
    losses of eager auto-parallel under fw.amp.auto_cast (same level; float32 master
    weights), within bfloat16 rounding, and not with the float32 losses."""
    import fw
    import fw.distributed as dist

    R, S0, S1 = dist.Replicate(), dist.Shard(0), dist.Shard(1)
    steps = 5
    mesh = dist.ProcessMesh([0, 1], dim_names=[mesh_kind])
    x_pl = [S0] if mesh_kind == "dp" else [R]

    def shard_fn(name, layer, m):
        if mesh_kind == "mp" and name in ("tok", "head"):
            layer.weight = dist.shard_tensor(layer.weight, m, [S1])

    model, data = _gpt(fw)
    batches = _batches(data, steps)
    fp32, _ = _dense_losses(fw, batches)
    model = dist.shard_layer(model, mesh, shard_fn)
    opt = dist.shard_optimizer(fw.optimizer.AdamW(learning_rate=3e-3,
                                                  parameters=model.parameters()))
    loss_fn = _loss_fn(fw)
    eager = []
    for x, y in batches:
        xd = dist.shard_tensor(fw.to_tensor(x), mesh, x_pl)
        yd = dist.shard_tensor(fw.to_tensor(y), mesh, x_pl)
        with fw.amp.auto_cast(level=level, dtype="bfloat16"):
            loss = loss_fn(model(xd), yd)
        loss.backward()
        opt.step()
        opt.clear_grad()
        eager.append(float(dist.unshard_dtensor(loss)) if dist.auto_parallel.is_dist_tensor(
            loss) else float(loss))
    model, _ = _gpt(fw)
    model = dist.shard_layer(model, mesh, shard_fn)
    opt = fw.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters())
    strategy = dist.Strategy({"amp": {"enable": True, "dtype": "bfloat16",
                                      "level": level.lower()}})
    loader = dist.shard_dataloader([(fw.to_tensor(x), fw.to_tensor(y)) for x, y in batches],
                                   mesh, shard_dims="dp" if mesh_kind == "dp" else None)
    dm = dist.to_static(model, loader, loss_fn, opt, strategy)
    got = [float(dm(x, y)) for x, y in loader]
    tag = f"gpt-amp-{mesh_kind}-{level}"
    # measured: |static - eager| <= 1.4e-3 over 5 steps (bfloat16 rounding in another
    # order of the backward sums); amp vs float32 differ by ~2.5e-3
    np.testing.assert_allclose(got, eager, rtol=1e-3, atol=1e-3, err_msg=tag)
    assert np.abs(np.array(got) - np.array(fp32)).max() > 1e-4, (got, fp32)
    assert all(p.dtype == fw.float32 for p in model.parameters())
    _emit("LOSSES", rank, json.dumps({"check": tag, "losses": got, "eager": eager,
                                      "dense": fp32}))
    _emit("OK", rank, tag)


def _worker(argv):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import fw.distributed as dist

    dist.init_parallel_env()
    rank = dist.get_rank()
    for check in argv[0].split(","):
        if check == "gpt2x2":
            check_gpt(rank, "2x2")
        elif check == "gpt2x2tied":      # the example's default: head = tok.weight^T
            check_gpt(rank, "2x2", tied=True)
        elif check == "gptdp":
            check_gpt(rank, "dp")
        elif check == "gptdpignore":
            check_gpt(rank, "dp", ignore=True, steps=6)
        elif check == "gptmp":
            check_gpt(rank, "mp")
        elif check in ("eagerdp", "eagermp"):
            check_gpt_eager(rank, check[5:])
        elif check == "gm":
            check_gpt(rank, "dp", k=2)
        elif check in ("pp1F1B", "ppFThenB"):
            check_pipeline(rank, check[2:])
        elif check == "ppmp":
            check_pipeline(rank, "1F1B", mp=True)
        elif check == "rc":
            check_gpt(rank, "mp", recompute=True)
        elif check == "infer":
            check_inferred_row_split(rank)
        elif check == "zero2mlp":
            check_zero2_mlp(rank)
        elif check in ("ampdp", "ampmp"):     # O1 on dp, O2 on mp
            check_gpt_amp(rank, check[3:], "O1" if check == "ampdp" else "O2")
        elif check in ("zero1", "zero2"):
            check_gpt(rank, "dp", zero=int(check[-1]))


if __name__ == "__main__":
    _worker(sys.argv[1:])
    sys.exit(0)


# ====================================================================== the tests
import pytest  # noqa: E402

sys.path.insert(0, HERE)
from comm_testutil import clean_env, explain, run_cmd  # noqa: E402


def _launch(args, timeout=240, nproc=2):
    logs = tempfile.mkdtemp(prefix="fw_dist_static_logs_")
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", str(nproc),
           "--log_dir", logs, "--timeout", "120", os.path.abspath(__file__), *args]
    p = run_cmd(cmd, timeout, clean_env(OMP_NUM_THREADS=1))
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            p.stderr += f"\n--- {name}\n" + f.read()[-6000:]
    shutil.rmtree(logs, ignore_errors=True)
    return p


def _losses(p, tag):
    out = {}
    for m in re.finditer(r"^LOSSES (\d+) (.*)$", p.reports, re.M):
        d = json.loads(m.group(2))
        if d["check"] == tag:
            out[int(m.group(1))] = d
    return out


@pytest.fixture(scope="module")
def two_ranks():
    """One 2-rank job: dp-only, mp-only and gradient merge (the launch dominates)."""
    return _launch(["gptdp,gptmp,eagerdp,eagermp,gm,zero1,zero2,zero2mlp,pp1F1B,ppFThenB,infer,"
                    "rc"])


@pytest.fixture(scope="module")
def amp_ranks():
    """Another 2-rank job (a job of its own keeps each launch well inside its
    deadline on the loaded machine): Strategy.amp on dp and mp, ignore_index on dp."""
    return _launch(["ampdp,ampmp,gptdpignore"], timeout=300)


@pytest.mark.parametrize("tag", ["gpt-dp", "gpt-mp", "gpt-dp-k2", "gpt-dp-zero1",
                                 "gpt-dp-zero2", "gpt-mp-recompute"])
def test_static_gpt_on_2_ranks_trains_like_single_process(two_ranks, tag):
    assert two_ranks.returncode == 0, explain(two_ranks)
    for r in (0, 1):
        assert f"OK {r} {tag}" in two_ranks.reports, explain(two_ranks)
    got = _losses(two_ranks, tag)
    assert set(got) == {0, 1}
    np.testing.assert_allclose(got[0]["losses"], got[0]["dense"], rtol=2e-5, atol=2e-5)
    assert got[0]["losses"] == got[1]["losses"]        # every rank returns the same loss


@pytest.mark.parametrize("kind", ["dp", "mp"])
def test_eager_auto_parallel_gpt_equals_to_static_and_single_process(two_ranks, kind):
    """The char GPT on a [2] mesh: eager auto-parallel (DistTensors, every op
    through its SPMD rule, no replicate fallback), dist.to_static and the single
    process train to the same 10 losses."""
    assert two_ranks.returncode == 0, explain(two_ranks)
    eager, static = _losses(two_ranks, f"gpt-eager-{kind}"), _losses(two_ranks, f"gpt-{kind}")
    assert set(eager) == {0, 1} and set(static) == {0, 1}, explain(two_ranks)
    for r in (0, 1):
        assert eager[r]["fallbacks"] == {}, eager[r]["fallbacks"]
        assert len(eager[r]["losses"]) == STEPS
        np.testing.assert_allclose(eager[r]["losses"], eager[r]["dense"], rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(eager[r]["losses"], static[r]["losses"], rtol=2e-5,
                                   atol=2e-5)


@pytest.mark.parametrize("tag", ["gpt-amp-dp-O1", "gpt-amp-mp-O2"])
def test_static_amp_gpt_on_2_ranks_equals_eager_auto_parallel_amp(amp_ranks, tag):
    assert amp_ranks.returncode == 0, explain(amp_ranks)
    for r in (0, 1):
        assert f"OK {r} {tag}" in amp_ranks.reports, explain(amp_ranks)
    got = _losses(amp_ranks, tag)
    assert set(got) == {0, 1}
    np.testing.assert_allclose(got[0]["losses"], got[0]["eager"], rtol=1e-3, atol=1e-3)
    assert got[0]["losses"] == got[1]["losses"]


def test_static_gpt_with_ignore_index_on_dp_trains_like_single_process(amp_ranks):
    """A loss with ignore_index >= 0 (the most frequent label): its mean's divisor
    depends on both ranks' labels; the rule keeps the logits sharded (no fallback)
    and the losses are single-process training's."""
    assert amp_ranks.returncode == 0, explain(amp_ranks)
    for r in (0, 1):
        assert f"OK {r} gpt-dp-ignore" in amp_ranks.reports, explain(amp_ranks)
    got = _losses(amp_ranks, "gpt-dp-ignore")
    assert set(got) == {0, 1} and len(got[0]["losses"]) == 6
    np.testing.assert_allclose(got[0]["losses"], got[0]["dense"], rtol=2e-5, atol=2e-5)
    assert got[0]["losses"] == got[1]["losses"]


def test_zero2_reduce_scatters_gradients_and_trains_like_the_dense_mlp(two_ranks):
    assert two_ranks.returncode == 0, explain(two_ranks)
    for r in (0, 1):
        assert f"OK {r} zero2-mlp" in two_ranks.reports, explain(two_ranks)


def test_a_weight_left_dense_is_inferred_row_split_and_trains_like_dense(two_ranks):
    assert two_ranks.returncode == 0, explain(two_ranks)
    for r in (0, 1):
        assert f"OK {r} inferred-row-split" in two_ranks.reports, explain(two_ranks)


@pytest.mark.parametrize("mode", ["1F1B", "FThenB"])
def test_pipeline_of_2_stages_equals_dense_gradient_accumulation(two_ranks, mode):
    assert two_ranks.returncode == 0, explain(two_ranks)
    for r in (0, 1):
        assert f"OK {r} pp-{mode}" in two_ranks.reports, explain(two_ranks)


@pytest.mark.slow    # 4 ranks: about 30 s on the loaded 2-core machine
def test_static_gpt_on_mesh_2x2_trains_like_single_process():
    p = _launch(["gpt2x2,gpt2x2tied,ppmp"], timeout=300, nproc=4)
    assert p.returncode == 0, explain(p)
    for r in range(4):
        assert f"OK {r} gpt-2x2" in p.reports, explain(p)
        assert f"OK {r} gpt-2x2-tied" in p.reports, explain(p)
        assert f"OK {r} pp-1F1B-mp" in p.reports, explain(p)   # pp 2 x mp 2
    got = _losses(p, "gpt-2x2")
    assert len(got[0]["losses"]) == STEPS
    np.testing.assert_allclose(got[0]["losses"], got[0]["dense"], rtol=2e-5, atol=2e-5)
