"""The intermediate auto-parallel API (auto_parallel/intermediate/) on 2 ranks under
fw's launcher: models parallelized with `dist.parallelize` plans train like the
dense model (an MLP, the example char GPT, a sequence-parallel net), ZeRO stages 1/2/3
over "dp" equal dense training with 1/n of the state, `local_map`/`LocalLayer`
values and gradients, `shard_scaler` skipping a step on every rank when one rank's
block overflows, Ulysses context parallelism, width-parallel convolution
(`ConvParallel`), `to_distributed`. A 4-rank [2, 2]
dp x mp job (slow) runs parallelize with a plan and ZeRO-1, then ZeRO-3, together.

Run by the launcher, this file is also the ranks' program
(``python test_intermediate_ranks.py <check,check,...>``); each rank compares with
the dense computation done in its own process and emits ``OK <check>``."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "examples")
STEPS = 4


# ====================================================================== the ranks
def _emit(tag, rank, text):
    sys.path.insert(0, os.path.join(HERE, "comm_scripts"))
    from _emit import emit

    emit(tag, rank, text)


def _close(a, b, what, rtol=2e-5, atol=2e-6):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
        raise AssertionError(f"{what}: got {a.tolist()} want {b.tolist()}")


def _val(t):
    import fw.distributed as dist

    return float(np.asarray(dist.unshard_dtensor(t).numpy()))


def _mlp(fw):
    fw.seed(7)
    return fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 4))


def _data(steps=STEPS, batch=6):
    rng = np.random.default_rng(3)
    return [(rng.standard_normal([batch, 8]).astype("float32"),
             rng.standard_normal([batch, 4]).astype("float32")) for _ in range(steps)]


def _train(fw, model, opt, data, x_fn=None, scaler=None):
    losses = []
    for x, y in data:
        xt, yt = fw.to_tensor(x), fw.to_tensor(y)
        if x_fn is not None:
            xt, yt = x_fn(xt), x_fn(yt)
        loss = ((model(xt) - yt) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(_val(loss) if hasattr(loss, "placements") else float(loss))
    return losses


def _dense_mlp_losses(fw, data):
    m = _mlp(fw)
    return _train(fw, m, fw.optimizer.AdamW(learning_rate=0.01, parameters=m.parameters()),
                  data), m


def check_mp_mlp(rank):
    """parallelize with a column/row plan on a [2] "mp" mesh == the dense MLP."""
    import fw
    import fw.distributed as dist

    data = _data()
    want, dense = _dense_mlp_losses(fw, data)
    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    model = _mlp(fw)
    opt = fw.optimizer.AdamW(learning_rate=0.01, parameters=model.parameters())
    model, opt = dist.parallelize(model, opt, mesh, {"mp_config": {"parallelize_plan": {
        "0": dist.ColWiseParallel(), "2": dist.RowWiseParallel()}}})
    assert model[0].weight.local_value().shape == [8, 8], model[0].weight.local_value().shape
    assert model[0].bias.local_value().shape == [8]
    assert model[2].weight.local_value().shape == [8, 4]
    assert model[2].bias.placements == [dist.Replicate()]
    dist.auto_parallel.reset_fallback_report()
    got = _train(fw, model, opt, data)
    _close(got, want, "mp MLP losses")
    for p, q in zip(model.parameters(), dense.parameters()):
        _close(dist.unshard_dtensor(p).numpy(), q.numpy(), f"trained {p.name}", 1e-4, 1e-5)
    assert not dist.auto_parallel.fallback_report(), dist.auto_parallel.fallback_report()
    dist.set_mesh(None)
    _emit("OK", rank, "mp_mlp")


def _gpt(fw):
    sys.path.insert(0, EXAMPLES)
    from char_gpt import DATA, CharGPT, CharVocab

    with open(DATA) as f:
        text = f.read()
    vocab = CharVocab(text)
    fw.seed(11)
    return CharGPT(len(vocab), 16, n_layer=1, d_model=32, n_head=4, tied=False), \
        vocab.encode(text)


def _gpt_train(fw, model, opt, data, wrap=lambda t: t):
    import fw.nn.functional as F

    rng = np.random.default_rng(5)
    losses = []
    for _ in range(3):
        start = rng.integers(0, len(data) - 17, 4)
        idx = start[:, None] + np.arange(16)[None, :]
        x, y = wrap(fw.to_tensor(data[idx])), wrap(fw.to_tensor(data[idx + 1]))
        logits = model(x)
        loss = F.cross_entropy(logits.reshape([-1, logits.shape[-1]]), y.reshape([-1]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(_val(loss) if hasattr(loss, "placements") else float(loss))
    return losses


def check_gpt_mp(rank):
    """The example char GPT with Megatron's plan (embedding, qkv, mlp-up, head
    column-split; proj, mlp-down row-split) == single-process training."""
    import fw
    import fw.distributed as dist

    model, data = _gpt(fw)
    want = _gpt_train(fw, model, fw.optimizer.AdamW(learning_rate=3e-3,
                                                    parameters=model.parameters()), data)
    model, _ = _gpt(fw)
    opt = fw.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters())
    plan = {"tok": dist.ColWiseParallel(),
            r"blocks\.\d+\.attn\.qkv": dist.ColWiseParallel(),
            r"blocks\.\d+\.attn\.proj": dist.RowWiseParallel(),
            r"blocks\.\d+\.mlp\.0": dist.ColWiseParallel(),
            r"blocks\.\d+\.mlp\.2": dist.RowWiseParallel(),
            "head.weight": dist.ColWiseParallel()}
    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    dist.auto_parallel.reset_fallback_report()
    model, opt = dist.parallelize(model, opt, mesh, {"mp_config": {"parallelize_plan": plan}})
    assert model.blocks[0].attn.proj.weight.placements == [dist.Shard(0)]
    assert model.head.weight.placements == [dist.Shard(1)]
    got = _gpt_train(fw, model, opt, data)
    _close(got, want, "GPT mp losses", 5e-5, 5e-5)
    _emit("FALLBACKS", rank, json.dumps(dist.auto_parallel.fallback_report()))
    dist.set_mesh(None)
    _emit("OK", rank, "gpt_mp")


def _sp_net(fw):
    class SPNet(fw.nn.Layer):
        """[b, s] ids -> [b, s, V] logits; the norm + MLP region works on whatever
        layout the plans give it (so the dense and sequence-parallel runs share it)."""

        def __init__(self):
            super().__init__()
            self.emb = fw.nn.Embedding(11, 8)
            self.norm = fw.nn.LayerNorm(8)
            self.mlp = fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.GELU(), fw.nn.Linear(16, 8))
            self.head = fw.nn.Linear(8, 11)

        def forward(self, ids):
            h = self.norm(self.emb(ids))
            return self.head(h + self.mlp(h))

    fw.seed(5)
    return SPNet()


def _sp_train(fw, model, opt, wrap=lambda t: t):
    import fw.nn.functional as F

    rng = np.random.default_rng(9)
    losses = []
    for _ in range(3):
        ids = fw.to_tensor(rng.integers(0, 11, [2, 6]).astype("int64"))
        lab = fw.to_tensor(rng.integers(0, 11, [2, 6]).astype("int64"))
        logits = model(wrap(ids))
        loss = F.cross_entropy(logits.reshape([-1, 11]), wrap(lab).reshape([-1]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(_val(loss) if hasattr(loss, "placements") else float(loss))
    return losses


def check_sp(rank):
    """Megatron sequence parallelism by plan: the embedding output becomes [s, b, h]
    split on s (SequenceParallelBegin), the norm runs on sequence blocks, the MLP on
    whole sequences (SequenceParallelDisable(need_transpose=False): gather in,
    reduce-scatter of the row-parallel Partial out), the head gathers and transposes
    back (SequenceParallelEnd) — losses == dense."""
    import fw
    import fw.distributed as dist

    m = _sp_net(fw)
    want = _sp_train(fw, m, fw.optimizer.SGD(learning_rate=0.5, parameters=m.parameters()))
    m = _sp_net(fw)
    opt = fw.optimizer.SGD(learning_rate=0.5, parameters=m.parameters())
    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    seen = {}

    def spy(process_mesh):
        def hook(layer, inputs):
            seen["norm_in"] = (inputs[0].shape, inputs[0].placements)
        return hook

    plan = {"emb": dist.SequenceParallelBegin(),
            "norm": dist.PrepareLayerInput(spy),
            "mlp": dist.SequenceParallelDisable(need_transpose=False),
            "mlp.0": dist.ColWiseParallel(), "mlp.2": dist.RowWiseParallel(),
            "head": [dist.SequenceParallelEnd(), dist.ColWiseParallel(gather_output=True)]}
    m, opt = dist.parallelize(m, opt, mesh, {"mp_config": {"parallelize_plan": plan}})
    got = _sp_train(fw, m, opt)
    assert seen["norm_in"] == ([6, 2, 8], [dist.Shard(0)]), seen
    _close(got, want, "sequence-parallel losses", 5e-5, 5e-5)
    dist.set_mesh(None)
    _emit("OK", rank, "sp")


def check_zero(rank, level):
    """dp_config sharding_level 1/2/3 on a [2] "dp" mesh, the batch split on dp:
    losses and parameters == dense AdamW; each rank keeps half of the moments (and
    for stage 3, half of each parameter)."""
    import fw
    import fw.distributed as dist

    data = _data(batch=6)
    want, dense = _dense_mlp_losses(fw, data)
    mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])
    model = _mlp(fw)
    opt = fw.optimizer.AdamW(learning_rate=0.01, parameters=model.parameters())
    model, opt = dist.parallelize(model, opt, mesh, {"dp_config": {"sharding_level": level}})
    assert opt.sharding_stage == level
    if level == 3:
        assert model[0].weight.placements == [dist.Shard(0)], model[0].weight.placements
        assert model[0].weight.local_value().shape == [4, 16]
    else:
        assert model[0].weight.placements == [dist.Replicate()]
    got = _train(fw, model, opt, data,
                 x_fn=lambda t: dist.shard_tensor(t, mesh, [dist.Shard(0)]))
    _close(got, want, f"ZeRO-{level} losses")
    for p, q in zip(model.parameters(), dense.parameters()):
        _close(dist.unshard_dtensor(p).numpy(), q.numpy(), f"ZeRO-{level} {p.name}", 1e-4, 1e-5)
    # the optimizer state is per piece: the [8, 16] weight's moments are [4, 16]
    sd = opt.state_dict()
    shapes = sorted({tuple(v.shape) for k, v in sd.items() if hasattr(v, "shape")
                     and "moment1" in k})
    assert (4, 16) in shapes and (8, 16) not in shapes, shapes
    if level == 2:
        x = dist.shard_tensor(fw.ones([2, 8]), mesh, [dist.Shard(0)])
        model(x).sum().backward()
        opt.step()
        assert model[0].weight.grad is None      # the whole gradient was released
        opt.clear_grad()
    _emit("OK", rank, f"zero{level}")


def check_local_map(rank):
    """local_map: a per-rank sum as Partial == the global sum; the gradient of a
    replicated weight used on sharded rows is summed over the ranks; LocalLayer the
    same; dtensor_from_local refuses blocks that are not fw's balanced split."""
    import fw
    import fw.distributed as dist

    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    xa = np.arange(12, dtype="float32").reshape(6, 2) / 7.0
    wa = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], dtype="float32")
    x = dist.shard_tensor(fw.to_tensor(xa), mesh, [dist.Shard(0)])
    w = dist.shard_tensor(fw.to_tensor(wa), mesh, [dist.Replicate()])
    w.stop_gradient = False
    f = dist.local_map(lambda a, b: fw.tanh(a @ b), [[dist.Shard(0)]])
    y = f(x, w)
    assert y.placements == [dist.Shard(0)] and y.shape == [6, 3]
    _close(y.numpy(), np.tanh(xa @ wa), "local_map value")
    loss = dist.local_map(lambda t: (t * t).sum(), [[dist.Partial()]])(y)
    assert loss.placements == [dist.Partial()]
    _close(_val(loss), float((np.tanh(xa @ wa) ** 2).sum()), "Partial sum")
    loss.backward()
    t = np.tanh(xa @ wa)
    _close(w.grad.numpy(), xa.T @ (2 * t * (1 - t * t)), "replicated weight gradient", 1e-4,
           1e-5)

    class LocalMean(dist.LocalLayer):
        def forward(self, a):
            return a.sum() / 6.0

    lm = LocalMean([(mesh, [dist.Partial()])], [None])
    z = dist.shard_tensor(fw.to_tensor(xa), mesh, [dist.Shard(0)])
    z.stop_gradient = False
    out = lm(z)
    _close(_val(out), float(xa.sum() / 6.0), "LocalLayer value")
    out.backward()
    _close(z.grad.numpy(), np.full_like(xa, 1 / 6.0), "LocalLayer gradient")
    # uneven blocks that are not the balanced split (rank 0: 1 row, rank 1: 3 rows)
    from fw.distributed.auto_parallel.intermediate.local_map import dtensor_from_local

    try:
        dtensor_from_local(fw.ones([1 + 2 * rank, 2]), mesh, [dist.Shard(0)])
    except ValueError as e:
        assert "balanced" in str(e), e
    else:
        raise AssertionError("unbalanced blocks were accepted")
    _emit("OK", rank, "local_map")


def check_scaler(rank):
    """An inf in rank 1's block of a column-split weight's gradient: with
    shard_scaler both ranks skip the step and halve the scale."""
    import fw
    import fw.distributed as dist

    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    fw.seed(1)
    lin = fw.nn.Linear(2, 4)
    w0 = lin.weight.numpy().copy()
    lin.weight = dist.shard_tensor(lin.weight, mesh, [dist.Shard(1)])
    lin = dist.shard_layer(lin, mesh)
    opt = dist.shard_optimizer(fw.optimizer.SGD(learning_rate=0.1,
                                                parameters=lin.parameters()))
    scaler = dist.shard_scaler(fw.amp.GradScaler(init_loss_scaling=16.0))
    loss = lin(fw.ones([3, 2])).sum()
    scaler.scale(loss).backward()
    if rank == 1:
        g = lin.weight.local_value().grad
        g.set_value(np.full(g.shape, np.inf, dtype="float32"))
    scaler.step(opt)
    scaler.update()
    _close(dist.unshard_dtensor(lin.weight).numpy(), w0, "skipped step left the weight")
    assert float(scaler._scale) == 8.0, scaler._scale
    _emit("OK", rank, "scaler")


def check_cp(rank):
    """Ulysses context parallelism: ids split on the sequence, q/k/v resharded from
    sequence- to head-split around causal attention and back: output and gradients
    == dense."""
    import fw
    import fw.distributed as dist
    import fw.nn.functional as F

    class Attn(fw.nn.Layer):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    class Net(fw.nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = fw.nn.Embedding(13, 8)
            self.attn = Attn()

        def forward(self, ids):
            h = self.emb(ids).reshape([ids.shape[0], ids.shape[1], 2, 4])
            return self.attn(h, h * 0.5, h)

    fw.seed(3)
    dense = Net()
    ids = np.random.default_rng(1).integers(0, 13, [2, 8]).astype("int64")
    out_d = dense(fw.to_tensor(ids))
    (out_d * out_d).sum().backward()
    fw.seed(3)
    net = Net()
    mesh = dist.ProcessMesh([0, 1], dim_names=["sep"])
    net, _ = dist.parallelize(net, None, mesh, {"cp_config": {"parallelize_plan": {
        "emb": dist.PrepareContextParallel("all2all"),
        "attn": dist.ContextParallel("all2all")}}})
    out = net(dist.shard_tensor(fw.to_tensor(ids), mesh, [dist.Replicate()]))
    assert out.placements == [dist.Shard(1)], out.placements
    _close(out.numpy(), out_d.numpy(), "context-parallel attention", 1e-5, 1e-6)
    (out * out).sum().backward()
    _close(dist.unshard_dtensor(net.emb.weight.grad).numpy(), dense.emb.weight.grad.numpy(),
           "context-parallel embedding gradient", 1e-4, 1e-5)
    dist.set_mesh(None)
    _emit("OK", rank, "cp")


def check_conv(rank):
    """ConvParallel: width-split Conv2D with "same" padding (a halo exchange; widths 8
    and 7, even and uneven blocks) and with stride = kernel (no halo): outputs split
    on the width, values and input/weight/bias gradients == dense."""
    import fw
    import fw.distributed as dist

    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    rng = np.random.default_rng(2)
    for kw, width, fmt in ((dict(kernel_size=3, padding=1), 8, "NCHW"),
                           (dict(kernel_size=3, padding=1), 7, "NHWC"),
                           (dict(kernel_size=2, stride=2), 8, "NCHW")):
        shape = [2, 3, 5, width] if fmt == "NCHW" else [2, 5, width, 3]
        xa = rng.standard_normal(shape).astype("float32")
        fw.seed(4)
        dense = fw.nn.Conv2D(3, 4, data_format=fmt, **kw)
        xd = fw.to_tensor(xa, stop_gradient=False)
        yd = dense(xd)
        (yd * yd).sum().backward()
        fw.seed(4)
        conv = fw.nn.Conv2D(3, 4, data_format=fmt, **kw)
        dist.ConvParallel().apply(conv, mesh, [])
        conv = dist.shard_layer(conv, mesh)
        x = dist.shard_tensor(fw.to_tensor(xa), mesh, [dist.Replicate()])
        x.stop_gradient = False
        y = conv(x)
        wd = 3 if fmt == "NCHW" else 2
        assert y.placements == [dist.Shard(wd)], y.placements
        _close(y.numpy(), yd.numpy(), f"ConvParallel {kw} {fmt} output", 1e-5, 1e-5)
        (y * y).sum().backward()
        _close(x.grad.numpy(), xd.grad.numpy(), f"ConvParallel {kw} input grad", 1e-4, 1e-4)
        _close(conv.weight.grad.numpy(), dense.weight.grad.numpy(),
               f"ConvParallel {kw} weight grad", 1e-4, 1e-4)
        _close(conv.bias.grad.numpy(), dense.bias.grad.numpy(), f"ConvParallel {kw} bias grad",
               1e-4, 1e-4)
    _emit("OK", rank, "conv")


def check_to_distributed(rank):
    """to_distributed on 2 ranks: a dp mesh, batches split on dim 0, training ==
    dense."""
    import fw
    import fw.distributed as dist
    from fw.io import DataLoader, TensorDataset

    data = _data(steps=1, batch=8)[0]
    ds = TensorDataset([fw.to_tensor(data[0]), fw.to_tensor(data[1])])
    m = _mlp(fw)
    want = _train(fw, m, fw.optimizer.SGD(learning_rate=0.1, parameters=m.parameters()),
                  [(b[0].numpy(), b[1].numpy()) for b in DataLoader(ds, batch_size=4)])
    m = _mlp(fw)
    opt = fw.optimizer.SGD(learning_rate=0.1, parameters=m.parameters())
    m, opt, loader = dist.to_distributed(m, opt, DataLoader(ds, batch_size=4), device_num=2)
    got = []
    for x, y in loader:
        assert x.placements == [dist.Shard(0)] and x.local_value().shape == [2, 8]
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        got.append(_val(loss))
    _close(got, want, "to_distributed losses")
    dist.set_mesh(None)
    _emit("OK", rank, "to_distributed")


def check_dp_mp(rank, level=1):
    """4 ranks, mesh [2, 2] (dp x mp): a column/row plan on mp, ZeRO (stage `level`)
    on dp, the batch split on dp: losses == dense."""
    import fw
    import fw.distributed as dist

    data = _data(batch=8)
    want, _ = _dense_mlp_losses(fw, data)
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    model = _mlp(fw)
    opt = fw.optimizer.AdamW(learning_rate=0.01, parameters=model.parameters())
    model, opt = dist.parallelize(model, opt, mesh, {
        "mp_config": {"parallelize_plan": {"0": dist.ColWiseParallel(),
                                           "2": dist.RowWiseParallel()}},
        "dp_config": {"sharding_level": level}})
    if level == 3:      # the column-split weight [8, 16]: rows on dp, columns on mp
        assert model[0].weight.placements == [dist.Shard(0), dist.Shard(1)]
        assert model[0].weight.local_value().shape == [4, 8]
    got = _train(fw, model, opt, data, x_fn=lambda t: dist.shard_tensor(
        t, mesh, [dist.Shard(0), dist.Replicate()]))
    _close(got, want, f"dp x mp ZeRO-{level} losses")
    dist.set_mesh(None)
    _emit("OK", rank, f"dp_mp{level}")


def _worker(argv):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import fw.distributed as dist

    dist.init_parallel_env()
    rank = dist.get_rank()
    for check in argv[0].split(","):
        if check.startswith("zero"):
            check_zero(rank, int(check[-1]))
        elif check.startswith("dp_mp"):
            check_dp_mp(rank, int(check[-1]))
        else:
            globals()[f"check_{check}"](rank)


if __name__ == "__main__":
    _worker(sys.argv[1:])
    sys.exit(0)


# ====================================================================== the tests
import pytest  # noqa: E402

sys.path.insert(0, HERE)
from comm_testutil import clean_env, explain, rank_lines, run_cmd  # noqa: E402

CHECKS = ["mp_mlp", "gpt_mp", "sp", "zero1", "zero2", "zero3", "local_map", "scaler", "cp",
          "conv", "to_distributed"]


def _launch(args, timeout=300, nproc=2):
    logs = tempfile.mkdtemp(prefix="fw_inter_logs_")
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", str(nproc),
           "--log_dir", logs, "--timeout", "120", os.path.abspath(__file__), *args]
    p = run_cmd(cmd, timeout, clean_env(OMP_NUM_THREADS=1))
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            p.stderr += f"\n--- {name}\n" + f.read()[-6000:]
    shutil.rmtree(logs, ignore_errors=True)
    return p


@pytest.fixture(scope="module")
def ranks_run():
    """One 2-rank job for every check (the launch dominates)."""
    return _launch([",".join(CHECKS)])


@pytest.mark.parametrize("check", CHECKS)
def test_intermediate_api_on_two_ranks(ranks_run, check):
    oks = {}
    for line in ranks_run.reports.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] == "OK":
            oks.setdefault(parts[2], set()).add(int(parts[1]))
    assert oks.get(check) == {0, 1}, explain(ranks_run)


def test_gpt_plan_has_no_silent_fallback_on_rank_0(ranks_run):
    """The fallbacks of the GPT plan are reported (counted per op), never hidden."""
    fb = rank_lines(ranks_run.reports, "FALLBACKS")
    assert 0 in fb, explain(ranks_run)
    assert isinstance(json.loads(fb[0]), dict)


@pytest.mark.slow
def test_dp_x_mp_parallelize_with_zero_on_four_ranks():
    p = _launch(["dp_mp1,dp_mp3"], timeout=400, nproc=4)
    oks = {}
    for line in p.reports.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] == "OK":
            oks.setdefault(parts[2], set()).add(int(parts[1]))
    assert oks == {"dp_mp1": {0, 1, 2, 3}, "dp_mp3": {0, 1, 2, 3}}, explain(p)
