"""Run on 2 ranks sharing one GPU (fw's launcher): all_reduce, broadcast and all_gather
of GPU tensors through NCCL, each checked against NumPy. Prints ``NCCL_OK <rank>``;
when NCCL refuses two ranks on one device it prints ``NCCL_REFUSED <message>`` and
exits 0 (the device machine of ci/gpu/run.sh has a single GPU)."""
import numpy as np

import fw
import fw.distributed as dist

dist.init_parallel_env(timeout=60)
R, N = dist.get_rank(), dist.get_world_size()
x = fw.to_tensor(np.full((3, 4), R + 1.0, np.float32), place="gpu")
try:
    dist.all_reduce(x)
except Exception as e:  # noqa: BLE001 - report NCCL's reason, then stop cleanly
    msg = f"{type(e).__name__}: {e}".replace("\n", " ")
    print(f"NCCL_REFUSED {msg[:300]}", flush=True)
    raise SystemExit(3) from None  # a failed rank makes the launcher stop the job
np.testing.assert_array_equal(x.numpy(), np.full((3, 4), N * (N + 1) / 2, np.float32))
y = fw.to_tensor(np.arange(5, dtype=np.float64) * (R + 1), place="gpu")
dist.broadcast(y, src=1)
np.testing.assert_array_equal(y.numpy(), np.arange(5) * 2.0)
out = []
dist.all_gather(out, fw.to_tensor(np.array([R], np.int64), place="gpu"))
assert [int(o.numpy()[0]) for o in out] == list(range(N))
print(f"NCCL_OK {R}", flush=True)
dist.destroy_process_group()
