"""Run on N ranks (mpiexec -n N): every collective x reduce op x dtype against a
NumPy reference computed from every rank's input.

Inputs are drawn from a generator seeded by (seed, case, rank), so each rank can
make every other rank's input and compute the expected result locally. Shapes are
drawn too (0-d, empty, up to 3-D), non-contiguous tensors included. Prints
``CHECKS <rank> <count>`` at the end; any mismatch raises (exit code != 0)."""
import sys

import ml_dtypes
import numpy as np
from _emit import emit

import fw
import fw.distributed as dist
from fw.core.internal import make_tensor, version_of

SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 0
dist.init_parallel_env(timeout=60)
R, N = dist.get_rank(), dist.get_world_size()
OP = dist.ReduceOp
BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = ["float32", "float64", "int32", "int64", "bfloat16", "float16", "bool", "int8",
          "uint8", "complex64"]
count = [0]
case = [0]


def npdt(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def shape_of(rng):
    nd = int(rng.integers(0, 4))
    return tuple(int(d) for d in rng.integers(0, 4 if nd == 3 else 6, size=nd))


def make(name, shape, rank, small=False):
    """The input of `rank` for the current case (the same on every rank)."""
    rng = np.random.default_rng((SEED, case[0], rank))
    dt = npdt(name)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        lo, hi = (1, 3) if small else (0 if dt.kind == "u" else -50, 50)
        return rng.integers(lo, hi, size=shape).astype(dt)
    if dt.kind == "c":
        v = rng.uniform(-2, 2, size=shape) + 1j * rng.uniform(-2, 2, size=shape)
        return (v * (0.5 if small else 1)).astype(dt)
    v = rng.uniform(0.5, 1.5, size=shape) if small else rng.uniform(-2, 2, size=shape)
    return v.astype(dt)


def reference(arrs, op, name):
    dt = npdt(name)
    work = [a.astype(np.float32) if name in ("bfloat16", "float16") else a for a in arrs]
    if dt == np.bool_:
        stack = np.stack(work)
        out = stack.any(0) if op in (OP.SUM, OP.MAX) else stack.all(0)
        return out
    stack = np.stack(work)
    if op in (OP.SUM, OP.AVG):
        out = stack.sum(0, dtype=stack.dtype)
        if op == OP.AVG:
            out = out / N
    elif op == OP.MAX:
        out = stack.max(0)
    elif op == OP.MIN:
        out = stack.min(0)
    else:
        out = stack.prod(0, dtype=stack.dtype)
    return np.asarray(out).astype(dt)


def close(got, want, name, what):
    count[0] += 1
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if name in ("bfloat16", "float16"):
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=1e-2, atol=1e-2, err_msg=what)
    elif name in ("float32", "complex64"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)
    elif name == "float64":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def ops_for(name):
    dt = npdt(name)
    ops = [OP.SUM, OP.MAX, OP.MIN, OP.PROD]
    if dt.kind == "c":
        ops = [OP.SUM, OP.PROD, OP.AVG]
    elif dt.kind == "f" or name in ("bfloat16", "float16"):
        ops.append(OP.AVG)
    return ops


def T(a):
    return fw.to_tensor(a) if a.dtype != BF16 else make_tensor(a.copy())


# ---------------------------------------------------------------- all_reduce, reduce
for name in DTYPES:
    for op in ops_for(name):
        case[0] += 1
        shape = shape_of(np.random.default_rng((SEED, case[0])))
        small = op == OP.PROD
        ins = [make(name, shape, r, small) for r in range(N)]
        want = reference(ins, op, name)
        t = T(ins[R])
        v0 = version_of(t)
        dist.all_reduce(t, op=op)
        close(t.numpy(), want, name, f"all_reduce {name}{list(shape)} {OP.name_of(op)}")
        assert version_of(t) > v0, "all_reduce must bump the tensor's version"
        for dst in range(N):
            t = T(ins[R])
            dist.reduce(t, dst=dst, op=op)
            close(t.numpy(), want if R == dst else ins[R], name,
                  f"reduce {name} {OP.name_of(op)} dst={dst}")

# AVG of an integer tensor: a clear error on every rank, before anything is sent
try:
    dist.all_reduce(fw.to_tensor(np.arange(3, dtype=np.int32)), op=OP.AVG)
    raise AssertionError("AVG on int32 must raise")
except TypeError as e:
    assert "AVG" in str(e) and "int32" in str(e), e
    count[0] += 1

# a non-contiguous tensor is written back in place
case[0] += 1
base = [make("float32", (4, 6), r) for r in range(N)]
want = reference([b[:, ::2] for b in base], OP.SUM, "float32")
view = base[R][:, ::2]
t = make_tensor(view)
dist.all_reduce(t)
close(view, want, "float32", "all_reduce of a strided view")
assert (base[R][:, 1::2] == make("float32", (4, 6), R)[:, 1::2]).all(), \
    "the gaps of a strided view must stay untouched"

# ---------------------------------------------------------------- async, several in flight
case[0] += 1
ins = [[make("float32", (5,), r) for _ in range(3)] for r in range(N)]
case[0] += 3
tensors = [T(a.copy()) for a in ins[R]]
tasks = [dist.all_reduce(tt, sync_op=False) for tt in tensors]
for k, task in enumerate(tasks):
    assert task.wait() is True
    close(tensors[k].numpy(), reference([ins[r][k] for r in range(N)], OP.SUM, "float32"),
          "float32", f"async all_reduce {k}")
    assert task.is_completed()

# an async bfloat16 AVG whose handle is dropped: its buffers stay alive and a later
# op finishes it (the float32 result is copied back into the tensor)
case[0] += 1
ins = [make("bfloat16", (6,), r) for r in range(N)]
dropped = T(ins[R].copy())
dist.all_reduce(dropped, op=OP.AVG, sync_op=False)
want = reference(ins, OP.AVG, "bfloat16")
for _ in range(100):     # when exactly it lands is up to MPI's progress: bounded retries
    landed = fw.to_tensor(np.array(
        [np.array_equal(dropped.numpy().astype(np.float32), want.astype(np.float32))]))
    dist.all_reduce(landed, op=OP.MIN)      # every rank leaves the loop together
    if landed.numpy()[0]:
        break
close(dropped.numpy(), want, "bfloat16", "dropped async all_reduce")

# ---------------------------------------------------------------- broadcast, scatter, gather
for name in DTYPES:
    case[0] += 1
    shape = shape_of(np.random.default_rng((SEED, case[0])))
    ins = [make(name, shape, r) for r in range(N)]
    for src in range(N):
        t = T(ins[R].copy())
        dist.broadcast(t, src=src)
        close(t.numpy(), ins[src], name, f"broadcast {name} src={src}")
    # all_gather into an empty list and into a full one
    lst = []
    dist.all_gather(lst, T(ins[R]))
    assert len(lst) == N
    for r in range(N):
        close(lst[r].numpy(), ins[r], name, f"all_gather {name} [{r}]")
    full = [T(np.zeros_like(ins[0])) for _ in range(N)]
    dist.all_gather(full, T(ins[R]))
    for r in range(N):
        close(full[r].numpy(), ins[r], name, f"all_gather into a full list {name} [{r}]")
    # scatter / gather for every root
    chunks = {r: [make(name, shape, 100 + r * N + j) for j in range(N)] for r in range(N)}
    for root in range(N):
        out = T(np.zeros_like(ins[0]))
        dist.scatter(out, [T(c) for c in chunks[root]] if R == root else None, src=root)
        close(out.numpy(), chunks[root][R], name, f"scatter {name} src={root}")
        got = [] if R == root else None
        dist.gather(T(ins[R]), got, dst=root)
        if R == root:
            for r in range(N):
                close(got[r].numpy(), ins[r], name, f"gather {name} dst={root} [{r}]")
    # alltoall: rank i's j-th chunk goes to rank j
    outs = []
    dist.alltoall(outs, [T(chunks[R][j]) for j in range(N)])
    for i in range(N):
        close(outs[i].numpy(), chunks[i][R], name, f"alltoall {name} from {i}")

# ---------------------------------------------------------------- reduce_scatter
for name in DTYPES:
    for op in ops_for(name):
        case[0] += 1
        shape = (int(np.random.default_rng((SEED, case[0])).integers(0, 4)), 2)
        small = op == OP.PROD
        parts = {r: [make(name, shape, 10 * r + j, small) for j in range(N)] for r in range(N)}
        want = reference([parts[r][R] for r in range(N)], op, name)
        out = T(np.zeros(shape, npdt(name)))
        dist.reduce_scatter(out, [T(p) for p in parts[R]], op=op)
        close(out.numpy(), want, name, f"reduce_scatter(list) {name} {OP.name_of(op)}")
        out = T(np.zeros(shape, npdt(name)))
        dist.reduce_scatter(out, T(np.concatenate(parts[R], axis=0)), op=op)
        close(out.numpy(), want, name, f"reduce_scatter(tensor) {name} {OP.name_of(op)}")

# ---------------------------------------------------------------- alltoall_single
for uneven in (False, True):
    case[0] += 1

    def split(i, j, uneven=uneven):   # rows rank i sends to rank j
        return (i + 2 * j) % 3 if uneven else 2

    ins_rows = [sum(split(i, j) for j in range(N)) for i in range(N)]
    data = [make("float64", (ins_rows[i], 3), i) for i in range(N)]
    out_rows = sum(split(j, R) for j in range(N))
    out = T(np.zeros((out_rows, 3)))
    dist.alltoall_single(out, T(data[R]),
                         [split(R, j) for j in range(N)] if uneven else None,
                         [split(j, R) for j in range(N)] if uneven else None)
    want = []
    for j in range(N):
        off = sum(split(j, k) for k in range(R))
        want.append(data[j][off:off + split(j, R)])
    close(out.numpy(), np.concatenate(want), "float64", f"alltoall_single uneven={uneven}")

# ---------------------------------------------------------------- p2p
for name in ("float32", "int64", "bfloat16", "bool"):
    case[0] += 1
    ins = [make(name, (3, 2), r) for r in range(N)]
    nxt, prv = (R + 1) % N, (R - 1) % N
    got = T(np.zeros((3, 2), npdt(name)))
    s = dist.isend(T(ins[R]), dst=nxt)
    q = dist.irecv(got, src=prv)
    s.wait()
    q.wait()
    close(got.numpy(), ins[prv], name, f"isend/irecv ring {name}")
    if N >= 2:
        if R == 0:
            dist.send(T(ins[0]), dst=1)
        elif R == 1:
            got = T(np.zeros((3, 2), npdt(name)))
            dist.recv(got, src=0)
            close(got.numpy(), ins[0], name, f"send/recv {name}")

# ---------------------------------------------------------------- objects
objs = []
dist.all_gather_object(objs, {"rank": R, "data": list(range(R + 1))})
assert objs == [{"rank": r, "data": list(range(r + 1))} for r in range(N)], objs
count[0] += 1
for src in range(N):
    lst = [f"from {R}", R] if R == src else [None]
    dist.broadcast_object_list(lst, src=src)
    assert lst == [f"from {src}", src], lst
    count[0] += 1
out = []
dist.scatter_object_list(out, [("to", j, "x" * j) for j in range(N)] if R == 0 else None, src=0)
assert out == [("to", R, "x" * R)], out
count[0] += 1

# ---------------------------------------------------------------- stream variants
case[0] += 1
ins = [make("float32", (2, 3), r) for r in range(N)]
t = T(ins[R])
dist.stream.all_reduce(t, op=OP.MAX, use_calc_stream=True)
close(t.numpy(), reference(ins, OP.MAX, "float32"), "float32", "stream.all_reduce")
out = T(np.zeros((2 * N, 3), np.float32))
dist.stream.all_gather(out, T(ins[R]), sync_op=False).wait()
close(out.numpy(), np.concatenate(ins), "float32", "stream.all_gather into one tensor")
out = T(np.zeros((N,), np.int64))
dist.stream.all_gather(out, T(np.array(R * 10, np.int64)))
close(out.numpy(), np.arange(N) * 10, "int64", "stream.all_gather of 0-d tensors")
dist.barrier()
count[0] += 1
emit("CHECKS", R, count[0])
