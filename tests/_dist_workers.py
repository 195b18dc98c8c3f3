"""Multi-rank workers of tests/test_dist_equivalence.py, run as
``mpiexec -n N python tests/_dist_workers.py CASE...``.

Every rank computes the single-process reference itself (the dense model on the
full batch, same seed), trains the parallel model on its part, and compares; a
mismatch raises (non-zero exit). Each case prints ``OK <case> rank <r>``.
"""

from __future__ import annotations

import sys

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.distributed import _fleet_comm as comm
from fw.distributed import fleet
from fw.distributed.fleet.meta_parallel import (
    ColumnParallelLinear,
    LayerDesc,
    ParallelCrossEntropy,
    PipelineLayer,
    RowParallelLinear,
    VocabParallelEmbedding,
)
from fw.distributed.fleet.meta_parallel.mp_layers import split_bias, split_weight
from fw.distributed.parallel import DataParallel
from fw.distributed.sharding import group_sharded_parallel

B, DIN, H, DOUT, STEPS, LR = 16, 8, 16, 4, 3, 0.01
TOL = 2e-5


def data():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((B, DIN)).astype("float32"),
            rng.standard_normal((B, DOUT)).astype("float32"))


def dense():
    fw.seed(0)
    return nn.Sequential(nn.Linear(DIN, H), nn.Tanh(), nn.Linear(H, H), nn.Tanh(),
                         nn.Linear(H, DOUT))


def mse(out, y):
    return ((out - fw.to_tensor(y)) ** 2).mean()


def train(model, X, Y, steps=STEPS, opt=None):
    opt = opt or fw.optimizer.Adam(learning_rate=LR, parameters=model.parameters())
    for _ in range(steps):
        loss = mse(model(fw.to_tensor(X)), Y)
        loss.backward()
        opt.step()
        opt.clear_grad()
    return model


def reference(steps=STEPS, sgd=False):
    X, Y = data()
    m = dense()
    opt = fw.optimizer.SGD(learning_rate=0.1, parameters=m.parameters()) if sgd else None
    return {k: v.numpy() for k, v in train(m, X, Y, steps, opt).state_dict().items()}


def sgd(model):
    """SGD as well as Adam: Adam is invariant to the gradients' scale, so only SGD
    catches a sum in place of a mean."""
    return fw.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())


def close(got, want, what):
    d = float(np.abs(np.asarray(got) - np.asarray(want)).max())
    if not d <= TOL:
        raise AssertionError(f"{what}: max |diff| {d} > {TOL}")


def local(X, group=None):
    g = group or comm.world()
    n, r = g.nranks, g.rank
    return X[r * len(X) // n:(r + 1) * len(X) // n]


def case_dp():
    X, Y = data()
    m = dense()
    if comm.world_rank():  # the broadcast at wrap time must repair this
        for p in m.parameters():
            p.set_value(np.zeros(p.shape, "float32"))
    dp = DataParallel(m, comm_buffer_size=0.0005, last_comm_buffer_size=0.0002)
    assert len(dp._reducer.buckets) > 1, "the test wants several buckets"
    train(dp, local(X), local(Y))
    for k, v in reference().items():
        close(dp.state_dict()[k].numpy(), v, f"dp {k}")
    dp = DataParallel(dense(), comm_buffer_size=0.0005, last_comm_buffer_size=0.0002)
    train(dp, local(X), local(Y), opt=sgd(dp))
    for k, v in reference(sgd=True).items():
        close(dp.state_dict()[k].numpy(), v, f"dp (SGD) {k}")


def case_recompute():
    """recompute == no recompute, under DataParallel."""
    X, Y = data()

    class Blocky(nn.Layer):
        def __init__(self):
            super().__init__()
            self.net = dense()

        def forward(self, x):
            h = fleet.utils.recompute(lambda t: self.net[1](self.net[0](t)), x)
            for i in range(2, 5):
                h = self.net[i](h)
            return h

    m = DataParallel(Blocky())
    train(m, local(X), local(Y))
    for k, v in reference().items():
        close(m.state_dict()["net." + k].numpy(), v, f"recompute {k}")


def case_zero():
    X, Y = data()
    for level, use_sgd in [(lv, u) for lv in ("os", "os_g", "p_g_os") for u in (False, True)]:
        ref = reference(sgd=use_sgd)
        m = dense()
        opt = sgd(m) if use_sgd else fw.optimizer.Adam(learning_rate=LR,
                                                        parameters=m.parameters())
        m2, opt2, _ = group_sharded_parallel(m, opt, level)
        train(m2, local(X), local(Y), opt=opt2)
        if level == "p_g_os":  # between steps a rank holds only its slices
            assert all(p._data.size == 0 for p in m2._layers.parameters())
            held = sum(s.shard._data.size for s in m2._slots)
            assert held * comm.world_size() < sum(s.numel for s in m2._slots) + 64, held
        sd = m2.state_dict()
        for k, v in ref.items():
            close(sd[k].numpy(), v, f"zero {level} {'SGD' if use_sgd else 'Adam'} {k}")
        if level != "os":  # the optimizer state is partitioned: fewer moments here
            n_local = sum(int(np.prod(p.shape)) for p in opt2._inner._parameter_list)
            n_all = sum(int(np.prod(p.shape)) for p in dense().parameters())
            assert n_local < n_all, (level, n_local, n_all)


def case_fleet_sharding():
    """fleet with sharding_degree = world size, stages 1 and 2 == dense; under stage 2
    a rank holds gradients only for what it owns after backward."""
    X, Y = data()
    ref = reference()
    for stage in (1, 2):
        s = fleet.DistributedStrategy()
        s.hybrid_configs = {"sharding_degree": comm.world_size()}
        s.sharding_configs = {"stage": stage}
        fleet.init(is_collective=True, strategy=s)
        m = fleet.distributed_model(dense())
        opt = fleet.distributed_optimizer(fw.optimizer.Adam(learning_rate=LR,
                                                            parameters=m.parameters()))
        for _ in range(STEPS):
            loss = mse(m(fw.to_tensor(local(X))), local(Y))
            loss.backward()
            if stage == 2:
                owned = {id(p) for p in opt._inner_opt._parameter_list}
                held = [p for p in m.parameters() if p.grad is not None and
                        np.abs(p.grad.numpy()).sum() > 0]
                assert {id(p) for p in held} <= owned, "stage 2 kept non-owned gradients"
                assert 0 < len(owned) < len(m.parameters()), "the partition is not split"
            opt.step()
            opt.clear_grad()
        for k, v in ref.items():
            close(m.state_dict()[k].numpy(), v, f"fleet sharding stage {stage} {k}")


def case_zero3_tied():
    """ZeRO-3 with a tied embedding/output head (read outside its layer) == DP."""

    class Tied(nn.Layer):
        def __init__(self):
            super().__init__()
            fw.seed(1)
            self.emb = nn.Embedding(7, 4)
            self.mix = nn.Linear(4, 4)

        def forward(self, ids):
            return fw.matmul(self.mix(self.emb(ids)), self.emb.weight, transpose_y=True)

    ids = np.random.default_rng(2).integers(0, 7, (4, 3))
    ref = Tied()
    opt = fw.optimizer.Adam(learning_rate=LR, parameters=ref.parameters())
    for _ in range(STEPS):
        (ref(fw.to_tensor(ids)) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    m = Tied()
    m2, opt2, _ = group_sharded_parallel(
        m, fw.optimizer.Adam(learning_rate=LR, parameters=m.parameters()), "p_g_os")
    for _ in range(STEPS):
        (m2(fw.to_tensor(local(ids))) ** 2).mean().backward()
        opt2.step()
        opt2.clear_grad()
    for (k, a), b in zip(m2.state_dict().items(), ref.state_dict().values()):
        close(a.numpy(), b.numpy(), f"zero3 tied {k}")


def case_zero3_memory():
    """ZeRO-3 gathers layer by layer: trained like DataParallel (a batch-norm layer
    included: its running statistics too, updated once per step), and the peak of full parameters
    alive on a rank stays far below the whole model (one layer at a time)."""
    width, depth = 64, 6

    def deep():
        fw.seed(4)
        layers = [nn.Linear(DIN, width), nn.BatchNorm1D(width), nn.Tanh()]
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.Tanh()]
        return nn.Sequential(*layers, nn.Linear(width, DOUT))

    X, Y = data()
    # batch norm uses each rank's batch statistics, so the reference is DataParallel
    # on the same local batches (not the dense model on the full batch)
    ref = DataParallel(deep())
    train(ref, local(X), local(Y))
    layer = (width * width + width) * 4
    for sync_comm in (True, False):
        m = deep()
        m2, opt2, _ = group_sharded_parallel(
            m, fw.optimizer.Adam(learning_rate=LR, parameters=m.parameters()), "p_g_os",
            sync_comm=sync_comm)
        train(m2, local(X), local(Y), opt=opt2)
        st = m2.memory_stats()
        # shards: 1/N of the model; gathered: at most a couple of layers at once (the
        # layer running and, across a layer boundary, the batch-norm's small vectors);
        # with prefetch: the layer running, the next one's receive buffer and the
        # batch-norm vectors (kept from forward to backward)
        assert st["gathered_peak"] <= 2 * layer + (0 if sync_comm else 2 * width * 4), \
            (sync_comm, st)
        assert st["peak"] < (0.75 if sync_comm else 1.0) * st["full_model"], (sync_comm, st)
        assert st["gathered_now"] == 0, st       # nothing gathered is left between steps
        for k, v in ref.state_dict().items():
            close(m2.state_dict()[k].numpy(), v.numpy(), f"zero3 layerwise {k}")
        print(f"zero3 memory rank {comm.world_rank()} sync_comm={sync_comm}: {st}",
              flush=True)


def case_zero3_buckets():
    """ZeRO-3's bucketed reduce-scatter and prefetch == the dense model, whatever
    the bucket size (one gradient per bucket, a few, one for the whole model), with
    and without prefetch, with Adam and SGD; the counts show the buckets (fewer
    messages than gradients, sent while backward still runs) and the prefetches
    (every one taken by its layer). Gradient accumulation (two backwards, one step)
    == the dense model on the doubled batch's summed gradients."""
    X, Y = data()
    layer_bytes = (H * H + H) * 4
    steps_nparams = STEPS * len(list(dense().parameters()))
    for bucket, sync_comm, use_sgd in [(1, False, False), (layer_bytes, False, True),
                                       (layer_bytes, True, False), (2 ** 23, False, False)]:
        ref = reference(sgd=use_sgd)
        m = dense()
        opt = sgd(m) if use_sgd else fw.optimizer.Adam(learning_rate=LR,
                                                        parameters=m.parameters())
        m2, opt2, _ = group_sharded_parallel(m, opt, "p_g_os", buffer_max_size=bucket,
                                             sync_comm=sync_comm)
        train(m2, local(X), local(Y), opt=opt2)
        st = m2.comm_stats()
        what = f"zero3 bucket {bucket} B, sync_comm={sync_comm}"
        assert st["gradients"] == steps_nparams, (what, st)
        if bucket == 1:  # every gradient its own message, all but the last sent early
            assert st["reduce_scatters"] == steps_nparams, (what, st)
            assert st["early"] == steps_nparams, (what, st)
        elif bucket == 2 ** 23:  # one message per step, at the end of backward
            assert st["reduce_scatters"] == STEPS and st["early"] == 0, (what, st)
        else:  # a few buckets per step, some sent while backward ran
            assert STEPS < st["reduce_scatters"] < steps_nparams, (what, st)
            assert st["early"] >= STEPS, (what, st)
        if sync_comm:
            assert st["prefetched"] == 0, (what, st)
        else:  # 2 layers per backward (of 3), 2 per forward from the second on (it
            # follows the last forward's order); a layer is 2 gathers (weight, bias)
            assert st["prefetched"] == st["prefetch_used"] == 8 * STEPS - 4, (what, st)
        sd = m2.state_dict()
        for k, v in ref.items():
            close(sd[k].numpy(), v, f"{what} {'SGD' if use_sgd else 'Adam'} {k}")
    # two backwards, one step: the slices' gradients accumulate like .grad does
    Xb, Yb = local(X), local(Y)
    ref = dense()
    ropt = sgd(ref)
    m = dense()
    m2, opt2, _ = group_sharded_parallel(m, sgd(m), "p_g_os", buffer_max_size=layer_bytes)
    for _ in range(2):
        for _ in range(2):
            mse(ref(fw.to_tensor(X)), Y).backward()
            mse(m2(fw.to_tensor(Xb)), Yb).backward()
        ropt.step()
        ropt.clear_grad()
        opt2.step()
        opt2.clear_grad()
    sd = m2.state_dict()
    for k, v in ref.state_dict().items():
        close(sd[k].numpy(), v.numpy(), f"zero3 accumulation {k}")

    # a layer that runs but does not reach the loss: its slices get no gradient, so
    # the hooks never complete the backward; the optimizer's step finishes it, and
    # the unused layer stays as it was (as in the dense model, whose grad is None)
    class Side(nn.Layer):
        def __init__(self):
            super().__init__()
            fw.seed(3)
            self.a = nn.Linear(DIN, DOUT)
            self.b = nn.Linear(DIN, DOUT)

        def forward(self, x, use_b):
            h = self.b(x)
            return self.a(x) + h if use_b else self.a(x)

    ref = Side()
    ropt = sgd(ref)
    m = Side()
    m2, opt2, _ = group_sharded_parallel(m, sgd(m), "p_g_os", buffer_max_size=1)
    for use_b in (True, False, True):
        mse(ref(fw.to_tensor(X), use_b), Y).backward()
        ropt.step()
        ropt.clear_grad(set_to_zero=False)
        mse(m2(fw.to_tensor(Xb), use_b), Yb).backward()
        opt2.step()
        opt2.clear_grad(set_to_zero=False)
    sd = m2.state_dict()
    for k, v in ref.state_dict().items():
        close(sd[k].numpy(), v.numpy(), f"zero3 unused layer {k}")


def tp_model(mp, rank, n):
    ref = dense()
    sd = {k: v.numpy() for k, v in ref.state_dict().items()}
    m = nn.Sequential(ColumnParallelLinear(DIN, H, gather_output=False, mp_group=mp), nn.Tanh(),
                      RowParallelLinear(H, H, input_is_parallel=True, mp_group=mp), nn.Tanh(),
                      nn.Linear(H, DOUT))
    m[0].weight.set_value(split_weight(sd["0.weight"], "column", rank, n))
    m[0].bias.set_value(split_bias(sd["0.bias"], "column", rank, n))
    m[2].weight.set_value(split_weight(sd["2.weight"], "row", rank, n))
    m[2].bias.set_value(sd["2.bias"])
    m[4].weight.set_value(sd["4.weight"])
    m[4].bias.set_value(sd["4.bias"])
    return m


def check_tp(m, mp, ref, what):
    n = mp.nranks
    w0 = comm.all_gather(np.ascontiguousarray(m[0].weight.numpy()), group=mp)
    close(np.concatenate(list(w0), axis=1), ref["0.weight"], f"{what} column weight")
    w2 = comm.all_gather(np.ascontiguousarray(m[2].weight.numpy()), group=mp)
    close(np.concatenate(list(w2), axis=0), ref["2.weight"], f"{what} row weight")
    close(m[4].weight.numpy(), ref["4.weight"], f"{what} replicated weight")
    assert n > 1


def case_tp():
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"mp_degree": comm.world_size()}
    fleet.init(is_collective=True, strategy=s)
    hcg = fleet.get_hybrid_communicate_group()
    mp = hcg.get_model_parallel_group()
    X, Y = data()
    m = fleet.distributed_model(tp_model(mp, mp.rank, mp.nranks))
    train(m, X, Y)
    check_tp(m, mp, reference(), "tp")
    m = fleet.distributed_model(tp_model(mp, mp.rank, mp.nranks))
    train(m, X, Y, opt=sgd(m))
    check_tp(m, mp, reference(sgd=True), "tp (SGD)")
    # the same seed gives the dense model's initial weights, block by block
    fw.seed(0)
    fresh = nn.Sequential(ColumnParallelLinear(DIN, H, gather_output=False), nn.Tanh(),
                          RowParallelLinear(H, H, input_is_parallel=True), nn.Tanh(),
                          nn.Linear(H, DOUT))
    init = {k: v.numpy() for k, v in dense().state_dict().items()}
    check_tp(fresh, mp, init, "tp initialisation")
    # a row-parallel layer that splits its (replicated) input itself, and a
    # column-parallel one that gathers its output: outputs and upstream grads == dense
    rng = np.random.default_rng(4)
    W1 = rng.standard_normal((DIN, H)).astype("float32")
    W2 = rng.standard_normal((H, H)).astype("float32")
    W3 = rng.standard_normal((H, DOUT)).astype("float32")
    xin = fw.to_tensor(X)
    w1 = fw.to_tensor(W1, stop_gradient=False)
    ref_out = F.linear(F.linear(F.linear(xin, w1), fw.to_tensor(W2)), fw.to_tensor(W3))
    (ref_out ** 2).sum().backward()
    w1p = fw.to_tensor(W1, stop_gradient=False)
    row = RowParallelLinear(H, H, has_bias=False, input_is_parallel=False, mp_group=mp)
    row.weight.set_value(split_weight(W2, "row", mp.rank, mp.nranks))
    col = ColumnParallelLinear(H, DOUT, has_bias=False, gather_output=True, mp_group=mp)
    col.weight.set_value(split_weight(W3, "column", mp.rank, mp.nranks))
    out = col(row(F.linear(xin, w1p)))
    scale = float(np.abs(ref_out.numpy()).max())
    close(out.numpy() / scale, ref_out.numpy() / scale,
          "row(split input) + column(gathered output), relative")
    (out ** 2).sum().backward()
    gscale = float(np.abs(w1.grad.numpy()).max())
    close(w1p.grad.numpy() / gscale, w1.grad.numpy() / gscale,
          "gradient upstream of the row/column pair, relative")
    # vocabulary-parallel embedding + parallel cross-entropy == dense, loss and grads
    V, D = 8, 6
    rng = np.random.default_rng(3)
    E = rng.standard_normal((V, D)).astype("float32")
    Wd = rng.standard_normal((D, V)).astype("float32")
    ids = rng.integers(0, V, (5, 3))
    lab = rng.integers(0, V, (5, 3, 1))
    lab[0, 0, 0] = -100  # ignored
    e = fw.to_tensor(E, stop_gradient=False)
    w = fw.to_tensor(Wd, stop_gradient=False)
    logits = F.linear(F.embedding(fw.to_tensor(ids), e), w)
    ref_loss = F.cross_entropy(logits, fw.to_tensor(lab), reduction="none", ignore_index=-100)
    ref_loss.sum().backward()
    emb = VocabParallelEmbedding(V, D, mp_group=mp)
    emb.weight.set_value(split_weight(E, "vocab", mp.rank, mp.nranks))
    head = ColumnParallelLinear(D, V, has_bias=False, gather_output=False, mp_group=mp)
    head.weight.set_value(split_weight(Wd, "column", mp.rank, mp.nranks))
    loss = ParallelCrossEntropy(mp_group=mp)(head(emb(fw.to_tensor(ids))), fw.to_tensor(lab))
    close(loss.numpy(), ref_loss.numpy(), "parallel cross-entropy loss")
    loss.sum().backward()
    close(emb.weight.grad.numpy(), split_weight(e.grad.numpy(), "vocab", mp.rank, mp.nranks),
          "vocab-parallel embedding grad")
    close(head.weight.grad.numpy(), split_weight(w.grad.numpy(), "column", mp.rank, mp.nranks),
          "column head grad")


def case_hybrid():
    """dp2 x mp2 on 4 ranks == dense."""
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"dp_degree": 2, "mp_degree": 2}
    fleet.init(is_collective=True, strategy=s)
    hcg = fleet.get_hybrid_communicate_group()
    mp, dp = hcg.get_model_parallel_group(), hcg.get_data_parallel_group()
    assert mp.nranks == 2 and dp.nranks == 2
    X, Y = data()
    m = fleet.distributed_model(tp_model(mp, mp.rank, mp.nranks))
    assert isinstance(m, DataParallel)
    opt = fleet.distributed_optimizer(fw.optimizer.Adam(learning_rate=LR,
                                                        parameters=m.parameters()))
    train(m, local(X, dp), local(Y, dp), opt=opt)
    check_tp(m._layers, mp, reference(), "hybrid")


def case_pp():
    """pp=2 with 4 micro-batches == dense with gradient accumulation (= full batch)."""
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"pp_degree": comm.world_size()}
    s.pipeline_configs = {"accumulate_steps": 4, "micro_batch_size": B // 4}
    fleet.init(is_collective=True, strategy=s)
    X, Y = data()
    ref_model = dense()
    sd = {k: v.numpy() for k, v in ref_model.state_dict().items()}
    descs = [LayerDesc(nn.Linear, DIN, H), LayerDesc(nn.Tanh), LayerDesc(nn.Linear, H, H),
             LayerDesc(nn.Tanh), LayerDesc(nn.Linear, H, DOUT)]
    pl = PipelineLayer(descs, loss_fn=lambda out, y: ((out - y) ** 2).mean())
    for k, v in pl.state_dict().items():
        v.set_value(sd[k])
    model = fleet.distributed_model(pl)
    opt = fw.optimizer.Adam(learning_rate=LR, parameters=model.parameters())
    losses = [float(model.train_batch([fw.to_tensor(X), fw.to_tensor(Y)], opt).numpy())
              for _ in range(STEPS)]
    ref = reference()
    for k, v in pl.state_dict().items():
        close(v.numpy(), ref[k], f"pp {k}")
    # the reported loss is the dense model's loss before each step
    m = dense()
    opt2 = fw.optimizer.Adam(learning_rate=LR, parameters=m.parameters())
    for i in range(STEPS):
        loss = mse(m(fw.to_tensor(X)), Y)
        close(losses[i], float(loss.numpy()), f"pp loss step {i}")
        loss.backward()
        opt2.step()
        opt2.clear_grad()


def case_pp_dp():
    """pp2 x dp2 on 4 ranks (2 micro-batches of 4 per dp rank) == dense."""
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"dp_degree": 2, "pp_degree": 2}
    s.pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": B // 4}
    fleet.init(is_collective=True, strategy=s)
    hcg = fleet.get_hybrid_communicate_group()
    dp = hcg.get_data_parallel_group()
    X, Y = data()
    sd = {k: v.numpy() for k, v in dense().state_dict().items()}
    descs = [LayerDesc(nn.Linear, DIN, H), LayerDesc(nn.Tanh), LayerDesc(nn.Linear, H, H),
             LayerDesc(nn.Tanh), LayerDesc(nn.Linear, H, DOUT)]
    pl = PipelineLayer(descs, loss_fn=lambda out, y: ((out - y) ** 2).mean())
    for k, v in pl.state_dict().items():
        v.set_value(sd[k])
    model = fleet.distributed_model(pl)
    opt = fw.optimizer.Adam(learning_rate=LR, parameters=model.parameters())
    for _ in range(STEPS):
        model.train_batch([fw.to_tensor(local(X, dp)), fw.to_tensor(local(Y, dp))], opt)
    ref = reference()
    for k, v in pl.state_dict().items():
        close(v.numpy(), ref[k], f"pp x dp {k}")


def case_pp_mp():
    """pp2 x mp2 on 4 ranks: tensor-parallel layers inside pipeline stages (the
    column-parallel block travels between the stages) == dense."""
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"pp_degree": 2, "mp_degree": 2}
    s.pipeline_configs = {"accumulate_steps": 4, "micro_batch_size": B // 4}
    fleet.init(is_collective=True, strategy=s)
    hcg = fleet.get_hybrid_communicate_group()
    mp = hcg.get_model_parallel_group()
    X, Y = data()
    sd = {k: v.numpy() for k, v in dense().state_dict().items()}
    descs = [LayerDesc(ColumnParallelLinear, DIN, H, gather_output=False), LayerDesc(nn.Tanh),
             LayerDesc(RowParallelLinear, H, H, input_is_parallel=True), LayerDesc(nn.Tanh),
             LayerDesc(nn.Linear, H, DOUT)]
    pl = PipelineLayer(descs, loss_fn=lambda out, y: ((out - y) ** 2).mean())
    kinds = {"0.weight": "column", "0.bias": "column", "2.weight": "row"}
    for k, v in pl.state_dict().items():
        kind = kinds.get(k)
        if kind is None:
            v.set_value(sd[k])
        elif k.endswith("bias"):
            v.set_value(split_bias(sd[k], kind, mp.rank, mp.nranks))
        else:
            v.set_value(split_weight(sd[k], kind, mp.rank, mp.nranks))
    model = fleet.distributed_model(pl)
    opt = fw.optimizer.Adam(learning_rate=LR, parameters=model.parameters())
    for _ in range(STEPS):
        model.train_batch([fw.to_tensor(X), fw.to_tensor(Y)], opt)
    ref = reference()
    for k, v in pl.state_dict().items():
        kind = kinds.get(k)
        want = ref[k] if kind is None else (
            split_bias(ref[k], kind, mp.rank, mp.nranks) if k.endswith("bias")
            else split_weight(ref[k], kind, mp.rank, mp.nranks))
        close(v.numpy(), want, f"pp x mp {k}")


def case_gradient_merge():
    """gradient merge k=4 (dp over the world, micro-batches of 2) == batch x 4."""
    s = fleet.DistributedStrategy()
    s.gradient_merge = True
    s.gradient_merge_configs = {"k_steps": 4, "avg": True}
    fleet.init(is_collective=True, strategy=s)
    X, Y = data()
    for use_sgd in (False, True):
        _merge(s, X, Y, use_sgd)


def _merge(s, X, Y, use_sgd):
    fleet.init(is_collective=True, strategy=s)
    m = fleet.distributed_model(dense())
    inner = sgd(m) if use_sgd else fw.optimizer.Adam(learning_rate=LR,
                                                      parameters=m.parameters())
    opt = fleet.distributed_optimizer(inner)
    n, r = comm.world_size(), comm.world_rank()
    mb = B // (4 * n)
    for _ in range(2):  # two merged steps
        for k in range(4):
            lo = k * mb * n + r * mb
            loss = mse(m(fw.to_tensor(X[lo:lo + mb])), Y[lo:lo + mb])
            loss.backward()
            # only the 4th backward of a merge all-reduces (the others accumulate)
            g = comm.all_gather(np.ascontiguousarray(m._layers[0].weight.grad.numpy()))
            synced = float(np.abs(g[0] - g[-1]).max()) == 0.0
            assert synced == (k == 3), (k, synced)
            opt.step()
            opt.clear_grad()
    for k, v in reference(steps=2, sgd=use_sgd).items():
        close(m.state_dict()[k].numpy(), v, f"gradient merge {'SGD' if use_sgd else 'Adam'} {k}")


if __name__ == "__main__":
    for case in sys.argv[1:]:
        globals()["case_" + case]()
        print(f"OK {case} rank {comm.world_rank()}", flush=True)
