"""Run on 2 ranks: the Paddle 3.3 names of fw.distributed added by names2 —
send/recv_object_list, wait, shutdown/restart_process_group, the gloo barrier
context, split (against dense NumPy), and flex checkpoints: the 2 ranks write one
(argv[1], read back by the test in one process) and load, sharded, one written by
one process (argv[2]). Prints ``NAMES2 <rank> ok <checks>``."""
import socket
import sys

import numpy as np
from _emit import emit

import fw
import fw.distributed as dist
from fw.distributed import fleet

out_dir, one_proc_ckpt = sys.argv[1], sys.argv[2]
strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 2, "pp_degree": 1}
fleet.init(is_collective=True, strategy=strategy)
R, N = dist.get_rank(), dist.get_world_size()
assert N == 2, N
checks = 0

# -- send/recv_object_list: global dst, then dst_in_group in a reversed group
if R == 0:
    dist.send_object_list([{"lr": 0.1}, "done", np.arange(3)], dst=1)
else:
    got = [None, None, None]
    dist.recv_object_list(got, src=0)
    assert got[0] == {"lr": 0.1} and got[1] == "done" and got[2].tolist() == [0, 1, 2], got
rev = dist.new_group([1, 0])               # group rank 0 is global rank 1
if R == 1:
    dist.send_object_list([("back", 7)], group=rev, dst_in_group=1)
else:
    got = [None]
    dist.recv_object_list(got, group=rev, src_in_group=0)
    assert got == [("back", 7)], got
checks += 1

# -- wait: an async all_reduce's result is in the tensor once wait returns
x = fw.to_tensor(np.full(1000, R + 1.0, np.float32))
task = dist.all_reduce(x, sync_op=False)
dist.wait(x)
assert task.is_completed() and (x.numpy() == 3.0).all(), x.numpy()[:3]
checks += 1

# -- shutdown / restart: ops refused meanwhile, the same Group works again after
pair = dist.new_group([0, 1])
dist.shutdown_process_group(pair)
try:
    dist.all_reduce(fw.ones([2]), group=pair)
    raise AssertionError("an op on a shut-down group ran")
except ValueError as e:
    assert "shut down" in str(e), e
dist.restart_process_group(pair)
y = fw.to_tensor(np.array([R + 1.0, 5.0], np.float32))
dist.all_reduce(y, group=pair)
assert y.numpy().tolist() == [3.0, 10.0], y.numpy()
dist.shutdown_process_group()              # None: every group but the world
dist.restart_process_group()
z = fw.to_tensor(np.array([float(R)], np.float32))
dist.all_reduce(z, group=rev)
assert z.numpy().tolist() == [1.0]
checks += 1

# -- gloo: rank 0 picks a free port and tells rank 1 (over MPI), both barrier
port = [None]
if R == 0:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port[0] = s.getsockname()[1]
dist.broadcast_object_list(port, src=0)
dist.gloo_init_parallel_env(R, 2, f"127.0.0.1:{port[0]}")
for _ in range(3):
    dist.gloo_barrier()
dist.gloo_release()
checks += 1

# -- split against dense NumPy: the same full weights on both ranks (Assign)
rng = np.random.default_rng(11)
W = rng.standard_normal((4, 6)).astype(np.float32)
B = rng.standard_normal(6).astype(np.float32)
xs = rng.standard_normal((3, 4)).astype(np.float32)
wa = fw.ParamAttr(initializer=fw.nn.initializer.Assign(W))
ba = fw.ParamAttr(initializer=fw.nn.initializer.Assign(B))
ref = xs @ W + B
col = dist.split(fw.to_tensor(xs), (4, 6), "linear", axis=1, num_partitions=2,
                 weight_attr=wa, bias_attr=ba)
np.testing.assert_allclose(col.numpy(), ref, rtol=1e-5, atol=1e-5)
part = dist.split(fw.to_tensor(xs), (4, 6), "linear", axis=1, num_partitions=2,
                  gather_out=False, weight_attr=wa, bias_attr=ba)
np.testing.assert_allclose(part.numpy(), ref[:, 3 * R:3 * R + 3], rtol=1e-5, atol=1e-5)
row = dist.split(fw.to_tensor(xs), (4, 6), "linear", axis=0, num_partitions=2,
                 weight_attr=wa, bias_attr=ba)
np.testing.assert_allclose(row.numpy(), ref, rtol=1e-5, atol=1e-5)
row_in = dist.split(fw.to_tensor(xs[:, 2 * R:2 * R + 2]), (4, 6), "linear", axis=0,
                    num_partitions=2, weight_attr=wa, bias_attr=ba)   # input already split
np.testing.assert_allclose(row_in.numpy(), ref, rtol=1e-5, atol=1e-5)
E = rng.standard_normal((10, 3)).astype(np.float32)
ids = np.array([[0, 9, 4], [5, 5, 1]])
emb = dist.split(fw.to_tensor(ids), (10, 3), "embedding", num_partitions=2,
                 weight_attr=fw.ParamAttr(initializer=fw.nn.initializer.Assign(E)))
np.testing.assert_allclose(emb.numpy(), E[ids], rtol=1e-6)
checks += 1

# -- flex checkpoint: rank r holds columns [3r, 3r+3) of a [4, 6] weight, the bias whole
full = np.arange(24, dtype=np.float32).reshape(4, 6)
local = {"w": fw.to_tensor(full[:, 3 * R:3 * R + 3].copy()), "b": fw.to_tensor(B)}
sd = dist.build_sharded_state_dict(local, shard_rules={"w": 1}, prefix="m.")
assert sd["m.w"].global_shape == [4, 6] and sd["m.w"].global_offset == [0, 3 * R], sd["m.w"]
assert sd["m.b"].global_offset == [0], sd["m.b"]
dist.save_state_dict(sd, out_dir)
# the 1-process checkpoint (key "w2", a [6, 4] tensor) loads as row halves here
piece = fw.zeros([3, 4])
dist.load_state_dict({"w2": dist.ShardedWeight("w2", piece, (3, 4), (6, 4), (3 * R, 0))},
                     one_proc_ckpt)
np.testing.assert_array_equal(piece.numpy(), (np.arange(24, dtype=np.float32).reshape(6, 4)
                                              * 2)[3 * R:3 * R + 3])
merged = dist.load_merged_state_dict(out_dir, prefix="m.w")
assert list(merged) == ["m.w"]
np.testing.assert_array_equal(merged["m.w"].numpy(), full)
checks += 1

# -- InMemoryDataset.global_shuffle: rank r loads ids [10r, 10r+10); afterwards every
# id is on exactly one rank and the fleet-wide size is 20
import os  # noqa: E402

part = os.path.join(out_dir + f".data{R}")
with open(part, "w") as f:
    f.write("".join(f"1 {10 * R + i}\n" for i in range(10)))
ds = dist.InMemoryDataset()
ds.init(batch_size=100, use_var=[("ids", "int64")])
ds.set_filelist([part])
ds.load_into_memory()
ds.global_shuffle()
mine = sorted(int(v) for b in ds for v in b["ids"].numpy().ravel())
every = []
dist.all_gather_object(every, mine)
assert sorted(every[0] + every[1]) == list(range(20)), every
assert ds.get_memory_data_size(fleet=fleet) == 20
assert every[0] != list(range(10)) or every[1] != list(range(10, 20)), every   # moved
checks += 1

emit("NAMES2", R, f"ok {checks}")
