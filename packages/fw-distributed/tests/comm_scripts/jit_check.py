"""Run on 2 ranks: collectives inside fw.jit.to_static programs.

1. a step with all_reduce (sum, max), broadcast, all_gather and reduce_scatter:
   the converted program equals the eager step (first call traces, second runs the
   cached program) and holds the collective ops; also in a group listed in reverse
   order (ring_id = the group's id, the broadcast root a group rank);
2. gradients through c_allreduce (eager autograd and a to_static backward),
   c_broadcast, c_allgather and all_to_all equal the NumPy values of the documented convention
   (the loss is the sum of the ranks' losses);
3. fw.jit.save of a layer with an all_reduce: the saved program holds c_allreduce and
   the loaded program, run on both ranks, gives the eager output;
4. a data-parallel training step under to_static (backward, all_reduce AVG of each
   ``p.grad``, Adam step) matches fw.DataParallel eagerly, step after step, with its
   gradient all-reduces fused into one bucket (``fuse_all_reduce_ops``); fused and
   unfused steps of a wider model give equal parameters, and their times are printed.
Prints ``JIT <rank> ok <checks>``."""
import os
import sys
import tempfile
import time

import numpy as np
from _emit import emit

import fw
import fw.distributed as dist
import fw.nn as nn
from fw.core.ir import load as load_model_file
from fw.core.ops import call

dist.init_parallel_env(timeout=60)
R, N = dist.get_rank(), dist.get_world_size()
assert N == 2, N
checks = 0


def close(got, want, what, tol=1e-5):
    got = got.numpy() if isinstance(got, fw.Tensor) else np.asarray(got)
    want = want.numpy() if isinstance(want, fw.Tensor) else np.asarray(want)
    assert got.shape == want.shape, f"rank {R} {what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"rank {R} {what}")


def inputs(rank):
    return np.arange(4, dtype=np.float32) * (rank + 1) - rank


# ---------------------------------------------------------------- 1. collectives
def step(x):
    y = x * 2.0
    dist.all_reduce(y)
    z = x - 1.0
    dist.all_reduce(z, op=dist.ReduceOp.MAX)
    b = x + float(R)
    dist.broadcast(b, src=1)
    parts = []
    dist.all_gather(parts, x * float(R + 1))
    g = fw.concat(parts)
    s = fw.zeros([2], "float32")
    dist.reduce_scatter(s, [x[:2] * 3.0, x[2:]])
    return y, z, b, g, s


x = fw.to_tensor(inputs(R))
eager = step(fw.to_tensor(inputs(R)))
xs = [inputs(r) for r in range(N)]
want = (sum(2 * a for a in xs), np.maximum(xs[0] - 1, xs[1] - 1), xs[1] + 1.0,
        np.concatenate([xs[r] * (r + 1) for r in range(N)]),
        sum(a[:2] * 3 for a in xs) if R == 0 else sum(a[2:] for a in xs))
for k, (e, w) in enumerate(zip(eager, want)):
    close(e, w, f"eager output {k}")
static = fw.jit.to_static(step)
for run in range(2):        # the first call traces, the second runs the cached program
    out = static(fw.to_tensor(inputs(R)))
    for k, (o, e) in enumerate(zip(out, eager)):
        close(o, e, f"to_static output {k} (call {run})")
text = str(static.concrete_program.main_program)
for op in ("c_allreduce", "c_broadcast", "c_allgather", "c_reducescatter"):
    assert op in text, f"rank {R}: {op} not in the traced program:\n{text}"
assert 'reduce_op="max"' in text, text

# a group in reverse order: its id is the ops' ring_id, src a global rank (group rank 1)
rev = dist.new_group([1, 0])


def in_group(x):
    b = x * 1.0
    dist.broadcast(b, src=0, group=rev)
    parts = []
    dist.all_gather(parts, x, group=rev)
    return b, fw.concat(parts)


gs = fw.jit.to_static(in_group)
for run in range(2):
    b, cat = gs(fw.to_tensor(inputs(R)))
    close(b, xs[0], f"broadcast in a group (call {run})")
    close(cat, np.concatenate([xs[1], xs[0]]), f"all_gather in a group (call {run})")
gtext = str(gs.concrete_program.main_program)
assert f"root=1, ring_id={rev.id}" in gtext and f"nranks=2, ring_id={rev.id}" in gtext, gtext
checks += 1

# ---------------------------------------------------------------- 2. gradients
# L = sum over ranks of sum(c_allreduce(x_r * w_r)); dL/dw_r = x_r * N (each rank's
# cotangent of ones, all-reduced)
w = fw.to_tensor(np.full(4, 0.5, np.float32))
w.stop_gradient = False
call("c_allreduce", x * w).sum().backward()
close(w.grad, inputs(R) * N, "eager gradient through c_allreduce")
checks += 1

# the other rules on 2 ranks: c_broadcast's gradient is a reduce to the root (zeros
# elsewhere); c_allgather's a reduce-scatter of the cotangents
xg = fw.to_tensor(inputs(R))
xg.stop_gradient = False
(call("c_broadcast", xg, root=1) * float(R + 1)).sum().backward()
close(xg.grad, np.full(4, 3.0 if R == 1 else 0.0, np.float32), "gradient of c_broadcast")
xg.clear_gradient()
cot = np.arange(8, dtype=np.float32)
(call("c_allgather", xg, nranks=N) * fw.to_tensor(cot * (R + 1))).sum().backward()
close(xg.grad, 3.0 * cot[4 * R:4 * R + 4], "gradient of c_allgather")
# all_to_all (lowered to alltoall_single): rank R gets chunk R of every rank, in rank
# order; its gradient is the inverse exchange: chunk k of dL/dx_R is chunk R of g_k
xg.clear_gradient()
ya = call("all_to_all", xg, nranks=N)
close(ya, np.concatenate([xs[0][2 * R:2 * R + 2], xs[1][2 * R:2 * R + 2]]), "all_to_all")
cot4 = np.arange(4, dtype=np.float32)
(ya * fw.to_tensor(cot4 * (R + 1))).sum().backward()
close(xg.grad, np.concatenate([cot4[2 * R:2 * R + 2] * (k + 1) for k in range(N)]),
      "gradient of all_to_all")
checks += 1

lin = nn.Linear(4, 1, bias_attr=False)
with fw.no_grad():
    lin.weight.set_value(np.full((4, 1), 0.25, np.float32))


@fw.jit.to_static
def grad_step(xb):
    h = lin(xb)
    dist.all_reduce(h)
    loss = h.sum()
    loss.backward()
    return loss


xb = fw.to_tensor(inputs(R).reshape(1, 4))
for run in range(2):
    lin.clear_gradients()
    loss = grad_step(xb)
    close(loss, np.array(sum(0.25 * a.sum() for a in xs), np.float32), f"loss (call {run})")
    close(lin.weight.grad, inputs(R).reshape(4, 1) * N, f"static gradient (call {run})")
gtext = str(grad_step.concrete_program.main_program)
# the forward all-reduce and, in the backward, the all-reduce of its cotangent
assert gtext.count("c_allreduce(") == 2, gtext
checks += 1


# ---------------------------------------------------------------- 3. jit.save / load
class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, inp):
        y = self.fc(inp)
        dist.all_reduce(y)
        return y


fw.seed(7)
net = Net()
xin = np.stack([inputs(R), inputs(R) + 1]).astype(np.float32)
ref = net(fw.to_tensor(xin)).numpy()
snet = fw.jit.to_static(net)
close(snet(fw.to_tensor(xin)), ref, "to_static layer")
d = tempfile.mkdtemp(prefix=f"fw_jit_rank{R}_")
path = os.path.join(d, "net")
fw.jit.save(snet, path, input_spec=[fw.static.InputSpec([None, 4], "float32")])
prog, _ = load_model_file(path + ".fwmodel")
assert "c_allreduce" in str(prog), str(prog)
loaded = fw.jit.load(path)
close(loaded(fw.to_tensor(xin)), ref, "loaded program")
checks += 1


# ---------------------------------------------------------------- 4. DP training
def mlp():
    fw.seed(3)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


model = mlp()
opt = fw.optimizer.Adam(0.05, parameters=model.parameters())
ref_model = fw.DataParallel(mlp())
ref_opt = fw.optimizer.Adam(0.05, parameters=ref_model.parameters())
params = list(model.parameters())


@fw.jit.to_static
def train_step(xb, yb):
    loss = ((model(xb) - yb) ** 2).mean()
    loss.backward()
    for p in params:
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
    opt.step()
    opt.clear_grad()
    return loss


rng = np.random.default_rng(100 + R)     # each rank its own batches
for it in range(4):
    xb = rng.standard_normal((6, 4)).astype(np.float32)
    yb = rng.standard_normal((6, 2)).astype(np.float32)
    loss = train_step(fw.to_tensor(xb), fw.to_tensor(yb))
    ref_loss = ((ref_model(fw.to_tensor(xb)) - fw.to_tensor(yb)) ** 2).mean()
    ref_loss.backward()
    ref_opt.step()
    ref_opt.clear_grad()
    close(loss, ref_loss, f"DP loss, step {it}")
    for (n, p), q in zip(model.named_parameters(), ref_model.parameters()):
        close(p, q, f"DP parameter {n} after step {it}")
ttext = str(train_step.concrete_program.main_program)
# fuse_all_reduce_ops: the 4 gradients' all-reduces are one bucket
assert ttext.count('c_allreduce(') == 1, ttext
assert ttext.count('reduce_op="avg"') == 1, ttext
checks += 1


# the same step unfused (one all-reduce per gradient): same values; and the time of
# a step of a wider model both ways (printed: JITTIME <rank> <fused> <unfused> ms)
def wide():
    fw.seed(5)
    return nn.Sequential(*[nn.Linear(64, 64) for _ in range(8)])


def dp_step_fn(m):
    o = fw.optimizer.SGD(0.01, parameters=m.parameters())
    ps = list(m.parameters())

    @fw.jit.to_static
    def st(xb):
        loss = (m(xb) ** 2).mean()
        loss.backward()
        for p in ps:
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
        o.step()
        o.clear_grad()
        return loss
    return st


xw = fw.to_tensor(np.random.default_rng(R).standard_normal((16, 64)).astype(np.float32))
times = {}
finals = {}
for mb in ("32", "0"):
    os.environ["FW_DIST_FUSE_ALLREDUCE_MB"] = mb
    m = wide()
    st = dp_step_fn(m)
    st(xw)   # traces (the pass runs now)
    text = str(st.concrete_program.main_program)
    assert text.count("c_allreduce(") == (1 if mb == "32" else 16), text
    ts = []
    for _ in range(15):
        dist.barrier()
        t0 = time.perf_counter()
        st(xw)
        ts.append(time.perf_counter() - t0)
    times[mb] = 1e3 * float(np.median(ts))
    finals[mb] = [p.numpy() for p in m.parameters()]
del os.environ["FW_DIST_FUSE_ALLREDUCE_MB"]
for a, b in zip(finals["32"], finals["0"]):
    np.testing.assert_array_equal(a, b)
emit("JITTIME", R, f"{times['32']:.2f} {times['0']:.2f}")
checks += 1

emit("JIT", R, f"ok {checks}")
sys.stdout.flush()
