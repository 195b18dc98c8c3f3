"""``Strategy(auto_mode="full")`` in dist.to_static (auto_parallel/static/auto_mode.py):
the cost model's search over the strategies of a [2] mesh picks one, dist.to_static
applies it (mesh axes, parameter and batch placements, sharding stage, pipeline),
and the MLP trains with the losses of single-process training; a small memory
budget turns the choice into a sharded one (tensor parallel, or ZeRO when tensor
parallelism is capped off).

The decision and its application are checked in this process (a [2] mesh needs no
ranks to be searched); training runs on 2 real ranks under fw's launcher (this
file is also the ranks' program: ``python test_auto_mode.py``)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (32, 256, 256, 8)
BATCH = 8
STEPS = 4


def _cluster():
    """A fixed 2-core description, so the choice does not depend on a profile."""
    from fw.distributed.auto import Cluster, Device, Link

    dev = Device("test cpu", {"float32": 2e10}, 5e9, 8e9, op_overhead=1e-5)
    return Cluster(dev, devices_per_node=2, intra=Link(1e10, 4e-4), topology="ring",
                   comm_overlap=0.0, oversubscribe=True, name="test cluster")


def _mlp(fw):
    fw.seed(7)
    a, b, c, d = SIZES
    return fw.nn.Sequential(fw.nn.Linear(a, b), fw.nn.ReLU(), fw.nn.Linear(b, c), fw.nn.ReLU(),
                            fw.nn.Linear(c, d))


def _data():
    rng = np.random.default_rng(3)
    return [(rng.standard_normal([BATCH, SIZES[0]]).astype("float32"),
             rng.standard_normal([BATCH, SIZES[-1]]).astype("float32")) for _ in range(STEPS)]


def _dense_losses(fw):
    model = _mlp(fw)
    opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    out = []
    for x, y in _data():
        loss = fw.nn.MSELoss()(model(fw.to_tensor(x)), fw.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        out.append(float(loss))
    return out


def _memories(fw):
    """Peak bytes per rank the cost model gives the MLP's candidates on 2 ranks."""
    from fw.distributed.auto import search

    spec = [([BATCH, SIZES[0]], "float32"), ([BATCH, SIZES[-1]], "float32")]
    res = search(_mlp(fw), _cluster(), 2, input_spec=spec,
                 loss_fn=lambda m, x, y: fw.nn.MSELoss()(m(x), y), micro_batches=(1,),
                 recompute=(False,), sharding_stages=(1, 2))
    return {c.config.label(): c.estimate.memory for c in res}


def _budgets(fw):
    """(limit that only tensor parallelism fits, limit that ZeRO-2 fits but not dp)."""
    mem = _memories(fw)
    return (mem["mp2"] + mem["zero2x2"]) / 2, (mem["zero2x2"] + mem["zero1x2"]) / 2


# ====================================================================== the ranks
def _train(fw, dist, tag, rank, **opts):
    from fw.distributed.auto_parallel.static.auto_mode import search_options

    model = _mlp(fw)
    opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    with search_options(cluster=_cluster(), **opts):
        dm = dist.to_static(model, None, fw.nn.MSELoss(), opt,
                            dist.Strategy({"auto_mode": "full"}))
    got = [float(dm(fw.to_tensor(x), fw.to_tensor(y))) for x, y in _data()]
    chosen = dm._auto.config.label()
    report = dm.report()
    sys.path.insert(0, os.path.join(HERE, "comm_scripts"))
    from _emit import emit

    emit("RESULT", rank, json.dumps({"tag": tag, "losses": got, "chosen": chosen,
                                     "report_head": report.splitlines()[0],
                                     "ranked": "ranking (fastest first)" in report}))


def _worker():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import fw
    import fw.distributed as dist

    dist.init_parallel_env()
    rank = dist.get_rank()
    tight_mp, tight_zero = _budgets(fw)
    _train(fw, dist, "free", rank, max_pp=1)
    _train(fw, dist, "tight", rank, memory_limit=tight_mp, max_pp=1)
    _train(fw, dist, "tight-nomp", rank, memory_limit=tight_zero, max_mp=1, max_pp=1)


if __name__ == "__main__":
    _worker()
    sys.exit(0)


# ====================================================================== the tests
import pytest  # noqa: E402

import fw  # noqa: E402
import fw.distributed as dist  # noqa: E402
from fw.distributed.auto import ParallelConfig  # noqa: E402
from fw.distributed.auto_parallel.static.auto_mode import (  # noqa: E402
    AutoMode,
    runnable,
    search_options,
)

sys.path.insert(0, HERE)
from comm_testutil import clean_env, explain, run_cmd  # noqa: E402


def _fake_dm(model, opt):
    """What AutoMode reads of a DistModel, on a [2] mesh (no ranks are needed to
    decide and apply)."""
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    return types.SimpleNamespace(_layer=model, _loss=fw.nn.MSELoss(), _opt=opt, _mesh=mesh,
                                 _strategy=dist.Strategy())


def _decide(**opts):
    model = _mlp(fw)
    opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    dm = _fake_dm(model, opt)
    with search_options(cluster=_cluster(), **opts):
        am = AutoMode(dm, dist.Strategy({"auto_mode": "full"}))
    x, y = _data()[0]
    am.prepare([fw.to_tensor(x), fw.to_tensor(y)])
    return am, dm, model, opt


def test_the_choice_is_the_fastest_runnable_candidate_and_is_applied():
    am, dm, model, opt = _decide(max_pp=1)
    assert am.config.world == 2
    times = [c.estimate.step_time for c in am.ranking]
    assert times == sorted(times) and am.ranking[0].config == am.config
    assert all(runnable(c.config, 1) is None for c in am.ranking)
    assert am.excluded and all(why for _, why in am.excluded)
    assert dm._mesh.shape == [2] or dm._mesh.shape == [2, 1]
    # the optimizer now updates the layer's (distributed) parameters
    ids = {id(p) for g in opt.get_param_groups() for p in g["params"]}
    assert ids == {id(p) for p in model.parameters()}
    text = am.describe()
    assert text.startswith(f'auto_mode="full": {am.config.label()} on 2 rank(s)')
    assert "ranking (fastest first)" in text and "step ms" in text


def test_a_small_memory_budget_chooses_tensor_parallel_placements():
    tight_mp, _ = _budgets(fw)
    free, _, _, _ = _decide(max_pp=1)
    assert free.ranking[0].estimate.memory > tight_mp     # the free choice does not fit
    am, dm, model, _ = _decide(max_pp=1, memory_limit=tight_mp)
    assert am.config.label() == "mp2"
    assert am.ranking[0].estimate.memory <= tight_mp
    assert list(dm._mesh.dim_names) == ["mp"]
    S0, S1, R = dist.Shard(0), dist.Shard(1), dist.Replicate()
    # Megatron's split of the first pair; the last linear stays whole
    assert model[0].weight.placements == [S1] and model[0].bias.placements == [S0]
    assert model[2].weight.placements == [S0] and model[2].bias.placements == [R]
    assert model[4].weight.placements == [R]
    assert model[0].weight.local_value().shape == [SIZES[0], SIZES[1] // 2]
    assert am.input_placements == [R]


def test_a_small_memory_budget_without_tensor_parallel_chooses_zero():
    _, tight_zero = _budgets(fw)
    am, dm, _, _ = _decide(max_pp=1, max_mp=1, memory_limit=tight_zero)
    assert am.config.label() == "zero2x2"
    s = dm._strategy
    assert s.sharding.enable and s.sharding.stage == 2 and s.sharding.degree == 2
    assert s.auto_mode == "semi"      # the applied strategy: the placements decide now
    assert am.input_placements == [dist.Shard(0)]
    assert all(c.estimate.memory <= tight_zero for c in am.ranking)
    assert {"dp2", "zero1x2"} <= {cfg.label() for cfg, _ in am.ranking.pruned}


def test_a_pipeline_the_pipeline_pass_cannot_cut_is_not_chosen():
    """Only pipelines on offer: the MLP's are refused by the stage check (its pass
    puts a bias on two stages), named, and no strategy is left."""
    with pytest.raises(RuntimeError, match="found no strategy"):
        _decide(max_mp=1, micro_batches=(2,), recompute=(False,))
    model = _mlp(fw)
    am = AutoMode(_fake_dm(model, None), dist.Strategy({"auto_mode": "full"}))
    x, y = _data()[0]
    why = am._pipeline_problem([fw.to_tensor(x), fw.to_tensor(y)], [0, 1], 2, 2)
    assert why is not None and "on several of 2 stages" in why
    assert am._pipeline_problem([fw.to_tensor(x), fw.to_tensor(y)], [0, 1], 2, 3) == \
        "the batch is not divisible into 3 micro-batches"


def test_nothing_fits_names_the_function_and_the_budget():
    with pytest.raises(RuntimeError, match=r"dist.to_static: auto_mode='full' found no "
                                           r"strategy for 2 rank\(s\).*memory_limit"):
        _decide(memory_limit=1000.0)


def test_unrunnable_candidates_are_named():
    assert runnable(ParallelConfig(sharding=2, sharding_stage=3), 0) == \
        "ZeRO stage 3 is not run by dist.to_static"
    assert runnable(ParallelConfig(pp=2, dp=2, micro_batches=2), 0).startswith("a pipeline")
    assert runnable(ParallelConfig(mp=2), 0) == "no column/row linear pair to split"
    assert runnable(ParallelConfig(mp=2), 1) is None
    assert runnable(ParallelConfig(pp=2, micro_batches=2), 0) is None


def test_search_options_are_checked():
    with pytest.raises(ValueError, match="search_options: sharding_stages"):
        with search_options(sharding_stages=(3,)):
            pass
    with pytest.raises(ValueError, match="search_options: memory_limit"):
        with search_options(memory_limit=-1):
            pass


def test_a_distributed_parameter_is_refused_in_full_mode():
    model = _mlp(fw)
    mesh = dist.ProcessMesh([0], dim_names=["dp"])
    model[0].weight = dist.shard_tensor(model[0].weight, mesh, [dist.Replicate()])
    opt = fw.optimizer.SGD(0.1, parameters=model.parameters())
    dm = dist.to_static(model, None, fw.nn.MSELoss(), opt, dist.Strategy({"auto_mode": "full"}))
    x, y = _data()[0]
    with pytest.raises(ValueError, match="auto_mode='full' decides the placements"):
        dm(fw.to_tensor(x), fw.to_tensor(y))


def test_one_rank_full_mode_trains_like_the_dense_model():
    model = _mlp(fw)
    opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    with search_options(cluster=_cluster()):
        dm = dist.to_static(model, None, fw.nn.MSELoss(), opt,
                            dist.Strategy({"auto_mode": "full"}))
    got = [float(dm(fw.to_tensor(x), fw.to_tensor(y))) for x, y in _data()]
    np.testing.assert_allclose(got, _dense_losses(fw), rtol=1e-5, atol=1e-6)
    assert dm.report().startswith('auto_mode="full": single on 1 rank(s)')


@pytest.fixture(scope="module")
def two_ranks():
    logs = tempfile.mkdtemp(prefix="fw_auto_mode_logs_")
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", "2",
           "--log_dir", logs, "--timeout", "150", os.path.abspath(__file__)]
    p = run_cmd(cmd, 200, clean_env(OMP_NUM_THREADS=1))
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            p.stderr += f"\n--- {name}\n" + f.read()[-6000:]
    shutil.rmtree(logs, ignore_errors=True)
    return p


def _results(p):
    out = {}
    for line in p.reports.splitlines():
        if line.startswith("RESULT "):
            _, r, text = line.split(" ", 2)
            d = json.loads(text)
            out.setdefault(d["tag"], {})[int(r)] = d
    return out


@pytest.mark.parametrize("tag,want", [("free", "dp2"), ("tight", "mp2"),
                                      ("tight-nomp", "zero2x2")])
def test_the_chosen_strategy_trains_like_single_process_on_2_ranks(two_ranks, tag, want):
    assert two_ranks.returncode == 0, explain(two_ranks)
    got = _results(two_ranks).get(tag, {})
    assert set(got) == {0, 1}, explain(two_ranks)
    dense = _dense_losses(fw)
    for r in (0, 1):
        np.testing.assert_allclose(got[r]["losses"], dense, rtol=2e-5, atol=2e-6,
                                   err_msg=f"{tag} on rank {r}: {got[r]['chosen']}")
        assert got[r]["ranked"] and got[r]["report_head"].startswith('auto_mode="full": ')
    assert got[0]["chosen"] == got[1]["chosen"]
    if want is not None:
        assert got[0]["chosen"] == want


def test_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest

    from fw.distributed.auto_parallel.static import auto_mode

    tests = doctest.DocTestFinder().find(auto_mode)
    assert sum(len(t.examples) for t in tests) > 0
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} failing examples in auto_mode"
