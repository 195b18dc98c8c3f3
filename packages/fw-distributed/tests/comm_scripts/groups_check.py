"""Run on 4 ranks: groups of subsets of the world (MPI communicators), in the
order the ranks were listed, with global src/dst; non-members do nothing.
Prints ``GROUPS <rank> ok <checks>``."""
import numpy as np
from _emit import emit

import fw
import fw.distributed as dist

dist.init_parallel_env(timeout=60)
R, N = dist.get_rank(), dist.get_world_size()
assert N == 4, N
checks = 0

world = dist.get_group(0)
assert world.id == 0 and world.nranks == 4 and world.rank == R and world.ranks == [0, 1, 2, 3]
even = dist.new_group([0, 2])
odd = dist.new_group([3, 1], timeout=30)          # group rank 0 is global rank 3
trio = dist.new_group([2, 0, 1])
assert (even.id, odd.id, trio.id) == (1, 2, 3)
assert odd.timeout == 30.0 and even.timeout == 60.0
assert dist.get_group(2) is odd
assert odd.get_group_rank(3) == 0 and odd.get_group_rank(1) == 1 and odd.get_group_rank(0) == -1
assert even.rank == {0: 0, 2: 1}.get(R, -1)
assert odd.rank == {3: 0, 1: 1}.get(R, -1)
assert trio.rank == {2: 0, 0: 1, 1: 2}.get(R, -1)
assert dist.get_rank(odd) == odd.rank and dist.get_world_size(trio) == 3
checks += 1

# all_reduce inside each pair: member sums only; non-members' tensors unchanged
x = fw.to_tensor(np.array([R + 1.0, 10.0 * (R + 1)], np.float32))
for g, members in ((even, [0, 2]), (odd, [3, 1])):
    t = fw.to_tensor(x.numpy().copy())
    task = dist.all_reduce(t, group=g)
    want = sum(np.array([m + 1.0, 10.0 * (m + 1)], np.float32) for m in members) \
        if R in members else x.numpy()
    np.testing.assert_array_equal(t.numpy(), want)
    assert task.wait()
    checks += 1

# broadcast with a global src inside the trio (src 1 is the trio's group rank 2)
t = fw.to_tensor(np.array([R], np.int64))
dist.broadcast(t, src=1, group=trio)
assert t.numpy().tolist() == ([1] if R in (0, 1, 2) else [3]), t.numpy()
checks += 1

# all_gather in group-rank order: [2, 0, 1]
lst = []
dist.all_gather(lst, fw.to_tensor(np.array([R * 1.5], np.float64)), group=trio)
if R in (0, 1, 2):
    assert [v.numpy().tolist() for v in lst] == [[3.0], [0.0], [1.5]], lst
else:
    assert lst == []
checks += 1

# reduce to global rank 1 in the odd pair, MAX
t = fw.to_tensor(np.array([R * 7 % 5], np.int32))
dist.reduce(t, dst=1, op=dist.ReduceOp.MAX, group=odd)
if R == 1:
    assert t.numpy().tolist() == [max(1 * 7 % 5, 3 * 7 % 5)], t.numpy()
checks += 1

# objects and p2p inside a group
objs = []
dist.all_gather_object(objs, ("r", R), group=even)
assert objs == ([("r", 0), ("r", 2)] if R in (0, 2) else []), objs
if R == 3:
    dist.send(fw.to_tensor([42.0]), dst=1, group=odd)
elif R == 1:
    got = fw.zeros([1])
    dist.recv(got, src=3, group=odd)
    assert got.numpy().tolist() == [42.0]
checks += 2

# errors naming the argument: src outside the group
if R in (0, 2):
    try:
        dist.broadcast(fw.zeros([1]), src=1, group=even)
        raise AssertionError("src outside the group must raise")
    except ValueError as e:
        assert "src=1" in str(e) and "group 1" in str(e), e
        checks += 1

# the world still works after the groups, and groups are destroyed one by one
dist.barrier(group=trio)
dist.destroy_process_group(odd)
try:
    dist.get_group(2)
    raise AssertionError("a destroyed group must be gone")
except ValueError:
    checks += 1
t = fw.ones([3])
dist.all_reduce(t)
np.testing.assert_array_equal(t.numpy(), np.full(3, 4.0, np.float32))
dist.barrier()
emit("GROUPS", R, f"ok {checks}")
